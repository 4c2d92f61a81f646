//! Proving rules as `prove` and `gate` do: the options, the parallel run,
//! and the termination and time reports.

use engine::rules::Rule;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicUsize, Ordering};
use verify::cache::Cache;
use verify::prove::{Options, ProofVerdict, RuleResult};
use verify::schedule::prove_all;
use verify::termination::{Report, TerminationVerdict};

/// Prints termination: each rule that does not decrease the order (every
/// rule when `every`), justified ones with their justification, and each
/// cycle (the `K of N` line is [`Report::summary`]).
pub fn print_termination(t: &Report, every: bool) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    for r in &t.rules {
        let tag = match &r.verdict {
            TerminationVerdict::Terminates { .. } if !every => continue,
            TerminationVerdict::Terminates { .. } => "TERMINATES",
            TerminationVerdict::Justified { .. } => "JUSTIFIED",
            TerminationVerdict::DoesNotDecrease { .. } => "DOES NOT DECREASE",
            TerminationVerdict::Unknown { .. } => "UNKNOWN TERMINATION",
        };
        let _ = writeln!(out, "{tag} {}: {}", r.rule, r.verdict.detail());
    }
    for c in &t.cycles {
        let tag = if c.instance.is_some() {
            "CYCLE"
        } else {
            "possible cycle"
        };
        let _ = writeln!(out, "{tag}: {}", c.line);
    }
}

pub fn options(
    width: &[u32],
    timeout: f64,
    no_cache: bool,
    cache_dir: &str,
    smt2: Option<&str>,
    lemma_files: &[String],
) -> anyhow::Result<Options> {
    for &w in width {
        super::parse_width(w)?;
    }
    let query = super::parse_timeout(timeout)?;
    Ok(Options {
        widths: width.to_vec(),
        timeout: query / verify::solver::QUERY_FACTOR,
        query_timeout: Some(query),
        cache: (!no_cache).then(|| Cache::new(cache_dir)),
        smt2_dir: smt2.map(Into::into),
        seed: 0,
        lemmas: verify::lemma::builtin_with(&super::read_rule_files(lemma_files)?)?,
        ..Options::default()
    })
}

/// Runs the provers with a progress bar on a terminal.
pub fn run_proofs(
    rules: &[&Rule],
    opts: &Options,
    jobs: Option<usize>,
) -> anyhow::Result<Vec<RuleResult>> {
    let total = (rules.len() * opts.widths.len()) as u64;
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template("{spinner} proving [{bar:30}] {pos}/{len} {msg} ({elapsed})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let failed = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    // Off a terminal the bar is hidden; a line per tenth keeps logs alive.
    let plain = !std::io::stderr().is_terminal();
    let progress = |r: &RuleResult| {
        if !matches!(r.verdict, ProofVerdict::Proved) {
            failed.fetch_add(1, Ordering::Relaxed);
            bar.set_message(format!("{} not proved", failed.load(Ordering::Relaxed)));
        }
        bar.inc(1);
        let n = done.fetch_add(1, Ordering::Relaxed) + 1;
        if plain && (n as u64 * 10 / total.max(1)) != ((n as u64 - 1) * 10 / total.max(1)) {
            eprintln!(
                "proving: {n}/{total} ({} not proved)",
                failed.load(Ordering::Relaxed)
            );
        }
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.unwrap_or(0))
        .build()?;
    let results = pool.install(|| prove_all(rules, opts, &progress));
    bar.finish_and_clear();
    for note in opts.cache.iter().flat_map(Cache::notes) {
        eprintln!("{note}");
    }
    Ok(results)
}

/// Where an unknown row's time went, as lines to print under its
/// `UNKNOWN` line: the rule's width-generic attempt (the first time a row
/// of the rule comes up: `accounted` holds the rules already printed),
/// then the row's own query.
pub fn time_account(r: &RuleResult, accounted: &mut Vec<String>) -> Vec<String> {
    let first = !accounted.contains(&r.rule);
    if first {
        accounted.push(r.rule.clone());
    }
    let generic = r.generic_budget.as_ref().filter(|_| first);
    let parts = [
        ("the width-generic query", generic),
        ("this width's query", r.budget.as_ref()),
    ];
    let mut out = Vec::new();
    for (what, spent) in parts {
        let Some(spent) = spent else { continue };
        for (i, line) in spent.to_string().lines().enumerate() {
            out.push(if i == 0 {
                format!("  time of {what}: {line}")
            } else {
                format!("  {line}")
            });
        }
    }
    out
}
