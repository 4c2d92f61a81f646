//! `tileproof report`: one upstream-ready issue per defect of a corpus.

use super::exit;
use super::output::say;
use fuzz::report::{self, Defect};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
#[command(
    after_help = "Each kept finding's file names its cause (`# cause:`, written by `fuzz` \
and by `replay --reclassify`). A defect is a cause of one peer release; its report names the \
code that is wrong, the smallest input, expected and actual, and the reproducer kept beside \
the finding (which needs only the peer). Findings the peer's compiled code does not show \
wrong (model-only) are listed, not reported.\n\n\
Exit status: 0 reports written (or printed); 2 some kept finding has no `# cause:` line \
(run `replay --reclassify` on it); 1 other errors.\n\n\
Examples:\n  tileproof report                                  # corpus/peers, printed\n  \
tileproof report corpus/peers --out corpus/peers/reports  # one file each, the table printed\n  \
tileproof report corpus/peers/morok.symbolic --table"
)]
pub struct Args {
    /// Corpus directories (a peer's, or `corpus/peers` holding one per
    /// peer entry) or case files (default: corpus/peers).
    pub paths: Vec<PathBuf>,
    /// Write each report to DIR (named after its peer and cause) and print
    /// the table of them, linked, instead of printing the reports.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print only the table of defects (Markdown; links into --out's
    /// directory, else into corpus/peers/reports).
    #[arg(long)]
    pub table: bool,
}

pub fn run(a: Args) -> ExitCode {
    exit("report", report_all(a))
}

fn report_all(a: Args) -> anyhow::Result<ExitCode> {
    let paths = if a.paths.is_empty() {
        vec![PathBuf::from("corpus/peers")]
    } else {
        a.paths.clone()
    };
    for p in &paths {
        anyhow::ensure!(p.exists(), "{}: no such file or directory", p.display());
    }
    let (defects, left) = report::gather(&paths)?;
    let dir = a
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("corpus/peers/reports"));
    let link = dir.display().to_string();
    if let Some(out) = &a.out {
        std::fs::create_dir_all(out)
            .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", out.display()))?;
        write_reports(out, &defects)?;
    }
    if a.table || a.out.is_some() {
        say!("{}", report::table(&defects, &link).trim_end());
    } else {
        for d in &defects {
            say!("{}", report::render(d));
        }
    }
    for (peer, cause, class) in &left.not_bugs {
        eprintln!("tileproof report: {peer}: {cause}: {class} only, not reported");
    }
    for f in &left.without_cause {
        eprintln!(
            "tileproof report: {}: no `# cause:` line (run `tileproof replay --reclassify --simplifier ...` on it)",
            f.display()
        );
    }
    eprintln!(
        "tileproof report: {} ({} kept findings)",
        engine::print::count(defects.len(), "defect"),
        defects.iter().map(|d| d.kept.len()).sum::<usize>()
    );
    Ok(if left.without_cause.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}

/// Writes each defect's report into `dir`, and removes the reports there
/// that no defect has any more (a fixed bug, a cause merged).
fn write_reports(dir: &Path, defects: &[Defect]) -> anyhow::Result<()> {
    let names: Vec<String> = defects.iter().map(report::file_name).collect();
    for (d, name) in defects.iter().zip(&names) {
        let path = dir.join(name);
        fuzz::corpus::write_atomic(&path, &report::render(d))
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    }
    for e in std::fs::read_dir(dir)?.flatten() {
        let p = e.path();
        let stale = p.extension().is_some_and(|x| x == "md")
            && p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| !names.iter().any(|m| m == n));
        if stale {
            std::fs::remove_file(&p)?;
        }
    }
    Ok(())
}
