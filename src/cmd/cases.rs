//! Case files as `replay`, `check` and `gate` read and report them: which
//! files, at which width, and one case's verdict printed.

use super::output::say;
use fuzz::corpus::{self, Replayer};
use std::io::Write;
use std::path::PathBuf;

/// A case's verdict line and, for a failure, what failed, its class and
/// every node's value at the point (what `replay` and `check
/// --simplifier` print: one judgement, [`fuzz::corpus::judge`]).
pub fn print_report(r: &fuzz::corpus::CaseReport) {
    say!("{}", r.line);
    let _ = write!(std::io::stdout(), "{}", r.detail);
}

/// The width a case is checked at: the one given, else its header's, else
/// the subject's (64 for the engine). An unreadable file gets the default
/// (replaying it reports the error).
pub fn case_check_width(
    path: &std::path::Path,
    syntax: Option<engine::input::Syntax>,
    given: Option<engine::dtype::Width>,
    who: &Replayer<'_>,
) -> engine::dtype::Width {
    let default = match who {
        Replayer::Engine { .. } => engine::dtype::Width::W64,
        Replayer::Subject { subject, .. } => subject.profile().width(),
    };
    given.unwrap_or_else(|| {
        corpus::read_as(path, syntax)
            .ok()
            .and_then(|p| corpus::case_width(&p, path).ok().flatten())
            .unwrap_or(default)
    })
}

/// The case files under `paths` (files as given, `*.txt` of directories,
/// `-` as is).
pub fn case_files(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for p in paths {
        if p.as_os_str() == "-" {
            files.push(p.clone());
            continue;
        }
        files.extend(corpus::files(p).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?);
    }
    Ok(files)
}

pub fn show_paths(p: &[PathBuf]) -> String {
    p.iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
