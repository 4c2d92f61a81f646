//! `tileproof replay`: re-check corpus cases with the current engine.
//!
//! Each case's `expr` lines are simplified again and checked by the JIT
//! oracle, the interpreter-based range and idempotence checks, and (through
//! the campaign's validator hook) `verify::check` at the case's width. This
//! is what CI runs over `corpus/` forever after a finding.

use super::fuzz::{load_rules, parse_timeout, parse_width, say, smt_failure};
use engine::dtype::Width;
use fuzz::corpus;
use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;
use verify::check::{check, CheckResult};

#[derive(clap::Args)]
#[command(
    after_help = "Exit status: 0 every case passes; 2 some case fails (named), or arguments clap rejects; 1 other errors.\n\n\
Examples:\n  tileproof replay                       # every corpus/*.txt\n  \
tileproof replay corpus/oracle-5f0c8e2a91.txt\n  tileproof replay --rules candidate.rules corpus/"
)]
pub struct Args {
    /// Case files, or directories whose `*.txt` files are replayed
    /// (default: corpus/).
    pub paths: Vec<PathBuf>,
    /// Width of `index` to check at (default: each file's `# width:` line,
    /// else 64).
    #[arg(long)]
    pub width: Option<u32>,
    /// Z3 timeout per query, in seconds.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    pub timeout: f64,
    /// Skip the SMT validation (JIT and interpreter checks only).
    #[arg(long)]
    pub no_smt: bool,
    /// A rule file laid over the built-in rules (repeatable), as for
    /// `tileproof fuzz`.
    #[arg(long = "rules", value_name = "FILE")]
    pub rules: Vec<String>,
}

pub fn run(a: Args) -> ExitCode {
    match replay_all(a) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("tileproof replay: {e}");
            ExitCode::from(1)
        }
    }
}

fn replay_all(a: Args) -> Result<ExitCode, String> {
    let width = a.width.map(parse_width).transpose()?;
    let timeout = parse_timeout(a.timeout)?;
    let rules = load_rules(&a.rules)?;
    let paths = if a.paths.is_empty() {
        let dir = PathBuf::from("corpus");
        if !dir.is_dir() {
            return Err("no paths given and there is no corpus/ directory here".into());
        }
        vec![dir]
    } else {
        a.paths.clone()
    };
    let files = case_files(&paths)?;
    if files.is_empty() {
        say!("no case files (*.txt) in {}", show_paths(&paths));
        return Ok(ExitCode::SUCCESS);
    }
    let mut failed = Vec::new();
    for f in &files {
        let r = replay_case(f, &rules, width, (!a.no_smt).then_some(timeout));
        say!("{}", r.line);
        let _ = write!(std::io::stdout(), "{}", r.detail);
        if !r.ok {
            failed.push(r.path);
        }
    }
    say!(
        "replayed {} case(s): {} ok, {} failed{}",
        files.len(),
        files.len() - failed.len(),
        failed.len(),
        if failed.is_empty() {
            String::new()
        } else {
            format!(": {}", failed.join(", "))
        }
    );
    Ok(if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}

/// The case files under `paths` (files as given, `*.txt` of directories).
pub fn case_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    for p in paths {
        files.extend(corpus::files(p).map_err(|e| format!("{}: {e}", p.display()))?);
    }
    Ok(files)
}

fn show_paths(p: &[PathBuf]) -> String {
    p.iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// What replaying one case found (shared by `replay` and `gate`).
#[derive(Clone, Debug, serde::Serialize)]
pub struct CaseReport {
    pub path: String,
    /// The width it was checked at (`None`: the file could not be read).
    pub width: Option<u32>,
    pub ok: bool,
    /// The SMT validation's verdict (`equivalent`, `counterexample`,
    /// `unknown`, ...), when it ran.
    pub smt: Option<String>,
    /// The one-line summary: `ok   FILE at width W (smt: ...)` or
    /// `FAIL FILE ...`.
    pub line: String,
    /// For a failure: the failed checks, the point, and every node's value
    /// there in both forms (newline-terminated lines; empty when ok).
    pub detail: String,
    pub seconds: f64,
}

/// Replays one file: simplified again with `rules`, checked by the JIT
/// oracle and the interpreter checks, and validated with Z3 when `smt`
/// gives a timeout.
pub fn replay_case(
    path: &std::path::Path,
    rules: &engine::rules::RuleSet,
    width: Option<Width>,
    smt: Option<std::time::Duration>,
) -> CaseReport {
    let start = std::time::Instant::now();
    let mut rep = CaseReport {
        path: path.display().to_string(),
        width: None,
        ok: false,
        smt: None,
        line: String::new(),
        detail: String::new(),
        seconds: 0.0,
    };
    let finish = |mut rep: CaseReport| {
        rep.seconds = start.elapsed().as_secs_f64();
        rep
    };
    let prog = match corpus::read(path) {
        Ok(p) => p,
        Err(e) => {
            rep.line = format!("FAIL {e}");
            return finish(rep);
        }
    };
    let w = match width {
        Some(w) => w,
        None => match corpus::case_width(&prog) {
            Ok(w) => w.unwrap_or(Width::W64),
            Err(e) => {
                rep.line = format!("FAIL {}: {e}", path.display());
                return finish(rep);
            }
        },
    };
    rep.width = Some(w.0);
    // The hook reports a one-line failure; keep the whole result for the
    // point and for an `unknown` note.
    let smt_result: Mutex<Option<CheckResult>> = Mutex::new(None);
    let hook = |g: &engine::ir::Graph, src: &[engine::ir::NodeId], tgt: &[engine::ir::NodeId]| {
        let timeout = smt?;
        let r = check(g, src, tgt, w.0, timeout);
        let msg = smt_failure(&r);
        *smt_result.lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
        msg
    };
    let r = corpus::replay(&prog, rules, w, Some(&hook));
    let smt_result = smt_result.into_inner().unwrap_or_else(|e| e.into_inner());
    rep.smt = smt_result.as_ref().map(|r| r.name().to_string());
    let smt_note = match &smt_result {
        None if smt.is_some() => " (no SMT: simplification failed)".to_string(),
        None => String::new(),
        Some(CheckResult::Unknown { reason }) => format!(" (smt unknown: {reason})"),
        Some(r) => format!(" (smt: {})", r.name()),
    };
    if r.ok() {
        rep.ok = true;
        rep.line = format!("ok   {} at width {w}{smt_note}", path.display());
        return finish(rep);
    }
    rep.line = format!("FAIL {} at width {w}{smt_note}", path.display());
    let d = &mut rep.detail;
    for f in &r.checked.failures {
        let _ = writeln!(d, "  {f}");
    }
    // The failing point: from the JIT/interpreter checks, else from Z3.
    let env: Option<Vec<i128>> = r
        .checked
        .failures
        .iter()
        .find_map(|f| f.env.as_ref())
        .map(|e| e.iter().map(|&v| v as i128).collect())
        .or_else(|| match &smt_result {
            Some(CheckResult::Counterexample { point, .. }) => {
                Some(point.iter().map(|p| p.1).collect())
            }
            _ => None,
        });
    if let Some(env) = env {
        let p = r.program();
        let named: Vec<String> = p
            .graph
            .vars()
            .iter()
            .zip(&env)
            .map(|(d, v)| format!("{} = {v}", d.name))
            .collect();
        let _ = writeln!(d, "  point: {}", named.join(", "));
        let show =
            |roots: &[engine::ir::NodeId]| match engine::interp::eval(&p.graph, roots, &env, w) {
                Ok(v) => format!(
                    "({})",
                    v.iter()
                        .map(|x| x.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                Err(u) => format!("undefined ({})", u.reason),
            };
        let _ = writeln!(
            d,
            "  results: source {}, target {}",
            show(&p.outputs),
            show(&p.expects)
        );
        let _ = writeln!(
            d,
            "  every node at that point (source: the `expr` lines, target: the engine's result):"
        );
        d.push_str(&super::node_values(&p, &env, w));
    }
    finish(rep)
}
