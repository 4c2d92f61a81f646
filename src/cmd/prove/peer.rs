//! `tileproof prove --simplifier CMD`: a peer's own rewrite rules, one by
//! one. The library (`fuzz::peer_rules`) builds, applies and judges; this
//! module parses the options and prints: a line per rule, each
//! counterexample, the closing notes and the summary line.

use super::super::junit::{Outcome, Suite, TestCase};
use super::super::peer_dir_name;
use engine::walk::Limits;
use fuzz::blame;
use fuzz::checks::{CheckConfig, Kind, KindSet};
use fuzz::classify::Confirm;
use fuzz::peer_rules::{self, Options, Pools, RuleReport, RuleVerdict, RulesSummary};
use fuzz::subject::Subject;
use fuzz::translation::{ConstantsSummary, ConstantsVerdict};
use rayon::prelude::*;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;
use tileproof::decide::validator;

/// Shrinking steps per kept counterexample (each asks the peer again).
const SHRINK_STEPS: usize = 300;

/// What `prove --simplifier` was asked (its flags, as `prove` parsed
/// them).
pub struct Request<'a> {
    pub simplifier: &'a str,
    /// The rules named (all when empty).
    pub names: Vec<String>,
    pub instances: usize,
    /// `--peer-timeout`, `--peer-max-line`.
    pub limits: &'a super::super::PeerLimits,
    /// The SMT timeout per query.
    pub timeout: f64,
    pub seed: u32,
    pub jobs: Option<usize>,
    pub json: bool,
    pub junit: Option<&'a String>,
    pub no_confirm: bool,
    pub corpus: Option<&'a String>,
    pub max_findings: usize,
    /// `--all-constants`: each rule's translation checked against it, then
    /// proved or refuted for every constant, each query bounded by
    /// `proof_timeout` seconds, proofs cached in `cache_dir`.
    pub all_constants: bool,
    pub proof_timeout: f64,
    pub cache_dir: &'a str,
}

pub fn run(a: &Request<'_>) -> anyhow::Result<ExitCode> {
    super::super::remove_stale_reports(a.junit.into_iter())?;
    let cmd = a.simplifier;
    anyhow::ensure!(a.instances > 0, "--instances must be at least 1");
    anyhow::ensure!(a.jobs != Some(0), "--jobs must be at least 1");
    let smt_timeout = super::super::parse_timeout(a.timeout)?;
    let start = Instant::now();
    let peer = a.limits.start(cmd)?;
    let rules = peer_rules::list(&peer)?;
    let chosen = peer_rules::select(&rules, &a.names)?;
    let profile = peer.profile();
    let confirm = if a.no_confirm || peer.backends().is_empty() {
        Confirm::Off
    } else {
        Confirm::All
    };
    eprintln!(
        "tileproof: checking {} of {} (`{cmd}`) one by one, {} instances each, judged at width {} under the strict model{}",
        engine::print::count(chosen.len(), "rule"),
        peer.name(),
        a.instances,
        profile.width(),
        confirmation(&peer, &confirm)
    );
    let (opts, seeds_dir) = rule_options(a, &peer, confirm)?;
    let prove = a
        .all_constants
        .then(|| {
            super::super::proofs::options(
                &proof_widths(profile),
                a.proof_timeout,
                false,
                a.cache_dir,
                None,
                &[],
            )
        })
        .transpose()?;
    if !opts.seeds.is_empty() {
        eprintln!(
            "tileproof: {} from campaign findings blamed on a rule, judged first ({})",
            engine::print::count(opts.seeds.len(), "seed"),
            seeds_dir.display()
        );
    }
    let smt = validator(profile.model(), smt_timeout);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(a.jobs.unwrap_or(0))
        .build()?;
    let done = AtomicUsize::new(0);
    let total = chosen.len();
    let reports: Vec<RuleReport> = pool.install(|| {
        chosen
            .par_iter()
            .map(|r| {
                let mut rep = peer_rules::check_rule(&peer, r, &opts, Some(&smt));
                if let Some(prove) = &prove {
                    let t = Instant::now();
                    super::constants::settle(&peer, r, &mut rep, &opts, prove, Some(&smt));
                    rep.seconds += t.elapsed().as_secs_f64();
                }
                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                eprintln!(
                    "[{n}/{total}] {}: {}{} ({:.1} s)",
                    r.name,
                    rep.verdict_line(),
                    rep.constants
                        .as_ref()
                        .map_or_else(String::new, |c| format!("; {}", c.line())),
                    rep.seconds
                );
                rep
            })
            .collect()
    });
    let summary = RulesSummary::of(&reports);
    let constants = a
        .all_constants
        .then(|| ConstantsSummary::of(reports.iter().filter_map(|r| r.constants.as_ref())));
    let seconds = start.elapsed().as_secs_f64();
    if let Some(path) = a.junit {
        super::super::junit::write(
            path,
            "tileproof prove --simplifier",
            &[suite(&reports)],
            seconds,
        )?;
    }
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "peer": peer.name(),
                "command": cmd,
                "summary": summary,
                "constants_summary": constants,
                "seconds": seconds,
                "rules": reports,
            }))
            .expect("serializable")
        );
    } else {
        print_report(&reports, &summary, constants.as_ref(), seconds);
    }
    // Nothing checked at all (every rule named not instantiated) is not a
    // pass either.
    let nothing = summary.instantiated == 0;
    let refuted = reports
        .iter()
        .any(|r| r.constants.as_ref().is_some_and(ConstantsVerdict::fails));
    Ok(if summary.holds() && !nothing && !refuted {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}

/// The widths a peer's rules are proved at for every constant, by its
/// profile's integers: every width for unbounded ones (tinygrad: one
/// width-generic query covers them all, and so the unbounded integers),
/// the peer's own for fixed-width ones (Morok's `Index` is 64 bits): a
/// rule sound there is sound for the peer, and a narrower width's
/// overflow is not the peer's.
fn proof_widths(profile: &fuzz::subject::Profile) -> Vec<u32> {
    match profile.integers {
        fuzz::subject::Integers::Unbounded => vec![8, 16, 32, 64],
        fuzz::subject::Integers::Fixed(w) => vec![w.0],
    }
}

/// How counterexamples will be classified, for the opening line.
fn confirmation(peer: &fuzz::peer::Peer, confirm: &Confirm) -> String {
    match confirm {
        Confirm::Off if peer.backends().is_empty() => {
            "; it offers no backend: counterexamples stay unconfirmed".to_string()
        }
        Confirm::Off => "; --no-confirm: counterexamples stay unconfirmed".to_string(),
        _ => format!(
            "; counterexamples classified on its backends: {}",
            peer.backends().join(", ")
        ),
    }
}

/// How each rule is checked, and where its blamed seeds are read from.
fn rule_options(
    a: &Request<'_>,
    peer: &fuzz::peer::Peer,
    confirm: Confirm,
) -> anyhow::Result<(Options, PathBuf)> {
    let profile = peer.profile();
    let corpus = a.corpus.map_or_else(
        || {
            PathBuf::from("corpus")
                .join("peers")
                .join(peer_dir_name(&peer.name()))
                .join("rules")
        },
        PathBuf::from,
    );
    let seeds_dir = blame::seeds_dir(&corpus);
    let opts = Options {
        instances: a.instances,
        seed: u64::from(a.seed),
        pools: Pools::default(),
        check: CheckConfig {
            width: profile.width(),
            limits: Limits::PEER_RULE,
            seed: u64::from(a.seed),
            parallel: false,
            kinds: KindSet::only(Kind::Oracle).with(Kind::Validate),
            ..CheckConfig::default()
        },
        confirm,
        max_findings: a.max_findings,
        shrink_steps: SHRINK_STEPS,
        seeds: blame::read_seeds(&seeds_dir)?,
        corpus: Some(corpus),
        translations: a.all_constants,
    };
    Ok((opts, seeds_dir))
}

/// The per-rule table, each counterexample, the closing notes and the
/// summary line (last).
fn print_report(
    reports: &[RuleReport],
    summary: &RulesSummary,
    constants: Option<&ConstantsSummary>,
    seconds: f64,
) {
    let w = reports.iter().map(|r| r.rule.name.len()).max().unwrap_or(4);
    let l = reports
        .iter()
        .map(|r| r.rule.location.len())
        .max()
        .unwrap_or(5);
    println!("{:<w$}  {:<l$}  built  judged  verdict", "rule", "where");
    for r in reports {
        println!(
            "{:<w$}  {:<l$}  {:>5}  {:>6}  {}",
            r.rule.name,
            r.rule.location,
            r.built,
            r.judged,
            r.verdict_line()
        );
    }
    for r in reports.iter().filter(|r| !r.findings.is_empty()) {
        println!();
        // A finding of the proof for every constant is headed by that
        // verdict; one of the instances by theirs.
        let heading = match &r.constants {
            Some(c) if c.fails() => c.word(),
            _ => r.verdict.word(),
        };
        println!(
            "{} {} ({}): {}",
            heading.to_uppercase(),
            r.rule.name,
            r.rule.location,
            r.rule.pattern
        );
        for f in &r.findings {
            println!(
                "  counterexample ({}{}):",
                f.kind,
                f.backend
                    .as_ref()
                    .map_or_else(String::new, |b| format!(", {b}"))
            );
            println!("    instance: {}", f.instance);
            println!(
                "    result:   {}",
                if f.result.is_empty() {
                    "(none: the rule raised)"
                } else {
                    &f.result
                }
            );
            println!("    failure:  {}", f.message);
            if let Some(x) = &f.relaxed {
                println!("    relaxed:  {x}");
            }
            if let Some(x) = &f.whole {
                println!("    whole:    {x}");
            }
            if let Some(x) = &f.file {
                println!("    written:  {x}");
            }
            if let Some(x) = &f.reproduce {
                println!("    reproduce: {x}");
            }
            if let Some(x) = &f.note {
                println!("    note: {x}");
            }
        }
        let shown = r.findings.len();
        let all = r.failing + r.crashing;
        if all > shown {
            println!(
                "  and {} more failing instance{} not shrunk or classified (--max-findings)",
                all - shown,
                if all - shown == 1 { "" } else { "s" }
            );
        }
    }
    println!();
    let unsound: Vec<String> = reports
        .iter()
        .filter_map(|r| match &r.verdict {
            RuleVerdict::Refuted { classes, .. } => Some(format!(
                "{} ({})",
                r.rule.name,
                if classes.is_empty() {
                    "unclassified".to_string()
                } else {
                    classes.names().join(", ")
                }
            )),
            _ => None,
        })
        .collect();
    if !unsound.is_empty() {
        println!("rules found unsound (class by the peer's compiled code):");
        for u in &unsound {
            println!("  {u}");
        }
    }
    let crashed: Vec<&str> = reports
        .iter()
        .filter(|r| matches!(r.verdict, RuleVerdict::Crashed { .. }))
        .map(|r| r.rule.name.as_str())
        .collect();
    if !crashed.is_empty() {
        println!(
            "rules that raise on a meaningful instance (peer-crash): {}",
            crashed.join(", ")
        );
    }
    let sampled: Vec<&str> = reports
        .iter()
        .filter(|r| matches!(r.verdict, RuleVerdict::Sampled { .. }))
        .map(|r| r.rule.name.as_str())
        .collect();
    if !sampled.is_empty() {
        println!("rules only sampled (not proved): {}", sampled.join(", "));
    }
    let not: Vec<&RuleReport> = reports
        .iter()
        .filter(|r| matches!(r.verdict, RuleVerdict::NotInstantiated { .. }))
        .collect();
    if !not.is_empty() {
        println!("rules not instantiated:");
        for r in not {
            if let RuleVerdict::NotInstantiated { why } = &r.verdict {
                println!("  {}: {why}", r.rule.name);
            }
        }
    }
    if let Some(c) = constants {
        print_constants(reports, c);
    }
    println!("{}; {seconds:.1} s", summary.line());
}

/// Each rule's verdict for every constant with its time, a refutation's
/// counterexample, and the counts.
fn print_constants(reports: &[RuleReport], summary: &ConstantsSummary) {
    println!("for all constants (time per rule: instances, translation check and proof):");
    let w = reports.iter().map(|r| r.rule.name.len()).max().unwrap_or(4);
    for r in reports {
        if let Some(c) = &r.constants {
            println!("  {:<w$}  {:>6.2} s  {}", r.rule.name, r.seconds, c.line());
            if let ConstantsVerdict::Refuted {
                counterexample,
                peer_failure,
                ..
            } = c
            {
                for line in counterexample
                    .lines()
                    .filter(|l| !l.starts_with("# reproduce"))
                {
                    println!("      {line}");
                }
                println!("      the peer's rule on it: {peer_failure}");
            }
        }
    }
    println!("{}", summary.line());
}

/// One JUnit test case per rule.
fn suite(reports: &[RuleReport]) -> Suite {
    let cases = reports
        .iter()
        .map(|r| {
            let message = format!(
                "{}: {}{}",
                r.rule.name,
                r.verdict_line(),
                r.constants
                    .as_ref()
                    .map_or_else(String::new, |c| format!("; {}", c.line()))
            );
            let text = r
                .findings
                .iter()
                .map(|f| {
                    format!(
                        "instance: {}\nresult: {}\nfailure: {}\n{}{}",
                        f.instance,
                        f.result,
                        f.message,
                        f.backend
                            .as_ref()
                            .map_or_else(String::new, |b| format!("backend: {b}\n")),
                        f.reproduce
                            .as_ref()
                            .map_or_else(String::new, |x| format!("reproduce: {x}\n"))
                    )
                })
                .collect::<Vec<_>>()
                .join("\n");
            let outcome = match (&r.verdict, &r.constants) {
                (_, Some(c)) if c.fails() => Outcome::Failure {
                    kind: c.word().into(),
                    message,
                    text,
                },
                (RuleVerdict::Refuted { .. } | RuleVerdict::Crashed { .. }, _) => {
                    Outcome::Failure {
                        kind: r.verdict.word().into(),
                        message,
                        text,
                    }
                }
                _ if r.looping > 0 => Outcome::Failure {
                    kind: "looping".into(),
                    message,
                    text,
                },
                (_, Some(ConstantsVerdict::Proved { .. })) | (RuleVerdict::Checked { .. }, _) => {
                    Outcome::Passed
                }
                (RuleVerdict::Sampled { .. }, _) => Outcome::Error {
                    kind: "sampled".into(),
                    message,
                    text,
                },
                (RuleVerdict::NotInstantiated { .. }, _) => Outcome::Skipped { message },
            };
            TestCase {
                classname: "prove.peer-rules".into(),
                name: format!("{} ({})", r.rule.name, r.rule.location),
                seconds: r.seconds,
                outcome,
            }
        })
        .collect();
    Suite {
        name: "peer-rules".into(),
        cases,
    }
}
