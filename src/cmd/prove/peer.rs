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
        match confirm {
            Confirm::Off if peer.backends().is_empty() =>
                "; it offers no backend: counterexamples stay unconfirmed".to_string(),
            Confirm::Off => "; --no-confirm: counterexamples stay unconfirmed".to_string(),
            _ => format!(
                "; counterexamples classified on its backends: {}",
                peer.backends().join(", ")
            ),
        }
    );
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
    };
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
                let rep = peer_rules::check_rule(&peer, r, &opts, Some(&smt));
                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                eprintln!(
                    "[{n}/{total}] {}: {} ({:.1} s)",
                    r.name,
                    rep.verdict_line(),
                    rep.seconds
                );
                rep
            })
            .collect()
    });
    let summary = RulesSummary::of(&reports);
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
                "seconds": seconds,
                "rules": reports,
            }))
            .expect("serializable")
        );
    } else {
        print_report(&reports, &summary, seconds);
    }
    // Nothing checked at all (every rule named not instantiated) is not a
    // pass either.
    let nothing = summary.instantiated == 0;
    Ok(if summary.holds() && !nothing {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}

/// The per-rule table, each counterexample, the closing notes and the
/// summary line (last).
fn print_report(reports: &[RuleReport], summary: &RulesSummary, seconds: f64) {
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
        println!(
            "{} {} ({}): {}",
            r.verdict.word().to_uppercase(),
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
    println!("{}; {seconds:.1} s", summary.line());
}

/// One JUnit test case per rule.
fn suite(reports: &[RuleReport]) -> Suite {
    let cases = reports
        .iter()
        .map(|r| {
            let message = format!("{}: {}", r.rule.name, r.verdict_line());
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
            let outcome = match &r.verdict {
                RuleVerdict::Refuted { .. } | RuleVerdict::Crashed { .. } => Outcome::Failure {
                    kind: r.verdict.word().into(),
                    message,
                    text,
                },
                _ if r.looping > 0 => Outcome::Failure {
                    kind: "looping".into(),
                    message,
                    text,
                },
                RuleVerdict::Checked { .. } => Outcome::Passed,
                RuleVerdict::Sampled { .. } => Outcome::Error {
                    kind: "sampled".into(),
                    message,
                    text,
                },
                RuleVerdict::NotInstantiated { .. } => Outcome::Skipped { message },
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
