//! A kept finding against a peer rewritten with the class its peer's
//! compiled code gives it now.

use super::format::{replay_line, Header};
use super::replay::CaseReport;
use super::store::{reproducers_of, write_atomic, write_script};
use crate::confirm::Class;
use std::fs;
use std::io::{self};
use std::path::{Path, PathBuf};

/// Rewrites a kept finding against a peer with its class as `rep` (a
/// [`judge`] of it) found it: its `# backend:` and `# relaxed:` lines
/// replaced, the file moved into its class's subdirectory of the peer's
/// corpus (or out of it), its reproducer written beside it (or a stale one
/// removed). Returns where the file is now.
pub fn reclassify(path: &Path, rep: &CaseReport) -> io::Result<PathBuf> {
    let text = fs::read_to_string(path)?;
    let lines: Vec<String> = text
        .lines()
        .take_while(|l| l.starts_with('#'))
        .map(|l| {
            let c = &l[1..];
            c.strip_prefix(' ').unwrap_or(c).to_string()
        })
        .collect();
    let body: String = text
        .lines()
        .skip(lines.len())
        .map(|l| format!("{l}\n"))
        .collect();
    let mut header = Header::parse(&lines);
    header.backend = rep.backend.clone();
    header.backends = rep.backends.clone();
    header.relaxed = rep.relaxed.clone();
    if let Some(found) = &rep.cause {
        header.cause = Some(found.cause.clone());
        // A cause line this tileproof cannot read (an older key) is the one
        // replaced, not a comment kept beside the new.
        header.other.retain(|l| !l.starts_with("cause:"));
        header.blame = found.blame.as_ref().and(found.detail());
        header.bound = found.wrong_bound.as_ref().map(|b| b.line());
        header.how = found.how.clone();
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    let in_subdir = dir
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| Class::ALL.iter().any(|c| c.subdir() == Some(n)));
    let base = if in_subdir {
        dir.parent().unwrap_or(Path::new("."))
    } else {
        dir
    };
    let new_dir = match rep.class.and_then(Class::subdir) {
        Some(sub) => base.join(sub),
        None => base.to_path_buf(),
    };
    fs::create_dir_all(&new_dir)?;
    let new_path = new_dir.join(path.file_name().unwrap_or_default());
    // The reproduce line names the file where it now is.
    let old = crate::subject::shell_quote(&path.display().to_string());
    header.reproduce = header.reproduce.map(|r| {
        match r
            .strip_prefix("tileproof replay ")
            .and_then(|args| args.strip_suffix(old.as_str()))
        {
            Some(args) => replay_line(args, &new_path),
            None => r,
        }
    });
    write_atomic(&new_path, &format!("{}{body}", header.render()))?;
    let old_scripts = reproducers_of(path);
    for old in reproducers_of(&new_path) {
        let _ = fs::remove_file(old);
    }
    if let Some(script) = &rep.reproducer {
        write_script(&new_path, script)?;
    }
    if new_path != path {
        fs::remove_file(path)?;
        for old in old_scripts {
            let _ = fs::remove_file(old);
        }
    }
    Ok(new_path)
}
