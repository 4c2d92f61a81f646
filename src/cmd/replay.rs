//! `tileproof replay`: re-check corpus cases with the current engine.
//!
//! Each case's `expr` lines are simplified again and checked by the JIT
//! oracle, the interpreter-based range and idempotence checks, and (through
//! the campaign's validator hook) `verify::check` at the case's width. This
//! is what CI runs over `corpus/` forever after a finding.

use super::cases::{case_check_width, case_files, print_report, show_paths};
use super::output::say;
use super::{exit, parse_timeout, parse_width, SubjectArgs, Under};
use fuzz::checks::Validator;
use fuzz::corpus::{replay_case, Replayer};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use tileproof::decide::validator;

#[derive(clap::Args)]
#[command(
    after_help = "Exit status: 0 every case passes; 2 some case fails (named; with --require-proof also a case that was only sampled and not proved), or arguments clap rejects; 1 other errors.\n\n\
Examples:\n  tileproof replay                       # every corpus/*.txt\n  \
tileproof replay corpus/oracle-5f0c8e2a91.txt\n  tileproof replay --rules candidate.rules corpus/\n  \
tileproof replay --simplifier 'python3 adapters/tinygrad_adapter.py' corpus/peers/tinygrad.sym\n  \
tileproof replay - < case.txt"
)]
pub struct Args {
    /// Case files, or directories whose `*.txt` files are replayed, or `-`
    /// for one case on standard input (default: corpus/). A case may also
    /// be an XLA indexing map (its expressions are the source).
    pub paths: Vec<PathBuf>,
    /// The cases' syntax (default: detected per file; a file whose first
    /// line is `(dims)[symbols] -> (...)` is an XLA indexing map).
    #[arg(long, value_enum, value_name = "SYNTAX")]
    pub input_format: Option<super::Syntax>,
    /// Width of `index` to check at (default: each file's `# width:` line,
    /// else 64, or the peer's width).
    #[arg(long)]
    pub width: Option<u32>,
    /// Z3 timeout per query, in seconds.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    pub timeout: f64,
    /// Skip the SMT validation (JIT and interpreter checks only).
    #[arg(long)]
    pub no_smt: bool,
    /// The cases are known findings against a pinned simplifier: each must
    /// still fail the check its header names (`# tileproof finding: KIND`),
    /// with the class and the cause it records. A case that now passes,
    /// fails only some other way, or is filed under another cause fails the
    /// replay (the bug was fixed, or the case no longer shows it).
    #[arg(long)]
    pub expect_findings: bool,
    /// A case passes only when every point of its domain was shown to
    /// refine: the JIT oracle walked the whole domain, or Z3 proved it. A
    /// sampled case whose SMT check is unknown (or off: `--no-smt` then
    /// asks for a proof by enumeration) fails.
    #[arg(long, conflicts_with = "expect_findings")]
    pub require_proof: bool,
    /// Re-classify kept findings against a peer by its compiled code, in
    /// place: each file's `# backend:`, `# relaxed:` and `# cause:` lines
    /// rewritten,
    /// the file moved into its class's subdirectory (`model-only/`,
    /// `outside-input-language/`) or out of it, and its reproducer script
    /// written beside it. Needs --simplifier (and its backends).
    #[arg(long, requires = "simplifier", conflicts_with_all = ["require_proof", "no_confirm"])]
    pub reclassify: bool,
    /// Print one JSON line per case (`file`, `verdict`, and the `report`
    /// `check --json` prints) and no summary: for a program that judges
    /// many cases against one simplifier (adapters/test_adapters.py).
    #[arg(long, conflicts_with_all = ["expect_findings", "reclassify"])]
    pub json: bool,
    #[command(flatten)]
    pub subject: SubjectArgs,
}

pub fn run(a: Args) -> ExitCode {
    exit("replay", replay_all(a))
}

fn replay_all(a: Args) -> anyhow::Result<ExitCode> {
    let width = a.width.map(parse_width).transpose()?;
    let timeout = parse_timeout(a.timeout)?;
    anyhow::ensure!(
        a.subject.simplifier.is_none() || a.subject.rules.is_empty(),
        "--rules with --simplifier is for `fuzz` and `check` (the engine that looks for a peer's missed simplifications)"
    );
    let under = a.subject.load()?;
    let paths = if a.paths.is_empty() {
        let dir = PathBuf::from("corpus");
        anyhow::ensure!(
            dir.is_dir(),
            "no paths given and there is no corpus/ directory here"
        );
        vec![dir]
    } else {
        a.paths.clone()
    };
    let files = case_files(&paths)?;
    if files.is_empty() {
        say!("no case files (*.txt) in {}", show_paths(&paths));
        return Ok(ExitCode::SUCCESS);
    }
    let rule = under.rule_subject(a.subject.peer_rule.as_deref())?;
    let stage = under.stage_subject(a.subject.peer_stage.as_deref())?;
    let who = match &under {
        Under::Engine(rules, files) => Replayer::Engine {
            rules,
            rule_files: files,
        },
        Under::Peer(p) => Replayer::Subject {
            missed: None,
            subject: match (&rule, &stage) {
                (Some(r), _) => r as &dyn fuzz::subject::Subject,
                (None, Some(s)) => s.as_ref(),
                (None, None) => p,
            },
            confirm: !a.subject.no_confirm,
        },
    };
    let mut failed = Vec::new();
    for f in &files {
        // The validator checks at the width the case is replayed at, which
        // only the case knows: one validator per case.
        let syntax = a.input_format.map(Into::into);
        let w = case_check_width(f, syntax, width, &who);
        let smt = validator(who.model(w), timeout);
        let validator = (!a.no_smt).then_some(&smt as &Validator<'_>);
        // The width as given, so that a bad `# width:` header is reported.
        let r = replay_case(f, syntax, who, width, validator);
        if a.reclassify && f.as_os_str() != "-" {
            let now = fuzz::corpus::reclassify(f, &r)
                .map_err(|e| anyhow::anyhow!("{}: {e}", f.display()))?;
            say!(
                "classified {} as {}{}",
                now.display(),
                r.class.map_or("nothing (no finding)", |c| c.name()),
                if r.reproducer.is_some() {
                    ", reproducer beside it"
                } else {
                    ""
                }
            );
        }
        let passed = if a.json {
            say!(
                "{}",
                serde_json::json!({ "file": r.path, "verdict": r.verdict(), "report": r })
            );
            // --require-proof: a case only sampled is no pass.
            r.ok && (r.proved || !a.require_proof)
        } else if a.expect_findings {
            let (still, line) = still_found(&r, &who.name());
            say!("{line}");
            still
        } else if a.require_proof && r.ok && !r.proved {
            say!(
                "{}: not proved (--require-proof: the JIT sampled, and Z3 did not prove it)",
                r.line.replacen("ok  ", "FAIL", 1)
            );
            false
        } else {
            print_report(&r);
            r.ok
        };
        if !passed {
            failed.push(r.path);
        }
    }
    let (what, passed) = if a.expect_findings {
        ("known finding", "still found")
    } else {
        ("case", "ok")
    };
    // With --json every case was printed, and the exit status says the rest.
    if !a.json {
        say!(
            "replayed {}: {} {passed}, {} failed{}",
            engine::print::count(files.len(), what),
            files.len() - failed.len(),
            failed.len(),
            if failed.is_empty() {
                String::new()
            } else {
                format!(": {}", failed.join(", "))
            }
        );
    }
    Ok(if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}

/// The cause a known finding is filed under now, when its header records
/// another one (a peer or tileproof changed what is to blame).
fn cause_moved(r: &fuzz::corpus::CaseReport) -> Option<String> {
    let (was, now) = (r.recorded_cause.as_ref()?, r.cause.as_ref()?);
    (*was != now.cause).then(|| now.cause.key())
}

/// For `--expect-findings`: whether the case still fails the check its
/// header records (and, where the header records a class, still shows
/// that class on the peer's backends), and the line that says so
/// (starting `still` when it does, `FAIL` when not).
fn still_found(r: &fuzz::corpus::CaseReport, now_under: &str) -> (bool, String) {
    let now = if r.found.is_empty() {
        "passes".to_string()
    } else {
        let found: Vec<&str> = r.found.iter().map(|k| k.name()).collect();
        format!("fails {}", found.join(", "))
    };
    match &r.recorded {
        _ if r.width.is_none() => (false, r.line.clone()),
        // A known finding says something about the simplifier it was found
        // in: replayed against another one, it proves nothing either way.
        Some(_)
            if r.recorded_subject
                .as_deref()
                .is_some_and(|s| s != now_under) =>
        {
            let line = format!(
                "FAIL {}: recorded against {}, replayed against {now_under}",
                r.path,
                r.recorded_subject.as_deref().unwrap_or_default()
            );
            (false, line)
        }
        None => (
            false,
            format!(
                "FAIL {}: no `# tileproof finding:` header to expect (it {now})",
                r.path
            ),
        ),
        Some(k) if r.found.contains(k) && cause_moved(r).is_some() => (
            false,
            format!(
                "FAIL {}: recorded under `{}`, but its cause is now `{}`",
                r.path,
                r.recorded_cause
                    .as_ref()
                    .map(|c| c.key())
                    .unwrap_or_default(),
                cause_moved(r).unwrap_or_default()
            ),
        ),
        Some(k) if r.found.contains(k) => match (&r.recorded_class, &r.class) {
            (Some(was), Some(now)) if was != now => (
                false,
                format!(
                    "FAIL {}: recorded {k} {was}, but the peer's compiled code now says {now}: {}",
                    r.path,
                    r.backend.as_deref().unwrap_or_default()
                ),
            ),
            (Some(was), _) => (true, format!("still {k:<11} {was:<14} {}", r.path)),
            (None, _) => (true, format!("still {k:<11} {}", r.path)),
        },
        Some(k) => (
            false,
            format!("FAIL {}: recorded {k}, but it {now} now", r.path),
        ),
    }
}
