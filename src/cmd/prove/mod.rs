//! `tileproof prove`: prove declarative rules with Z3.

mod constants;
mod peer;

use super::proofs::{options, print_termination, run_proofs, time_account};
use engine::rules::{builtin, Rule, RuleSet};
use indicatif::ProgressBar;
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::{Duration, Instant};
use verify::prove::{Options, ProofVerdict, RuleResult, WidthByWidth};
use verify::termination::{Report, TerminationVerdict};
use verify::verdict::VerdictKind;

#[derive(clap::Args)]
pub struct Args {
    /// Prove only these rules (default: all).
    pub names: Vec<String>,
    /// Prove only these rules (repeatable, or comma-separated), as `gate
    /// --rule` takes them; the same as naming them.
    #[arg(long = "rule", value_delimiter = ',', value_name = "NAME")]
    pub rule: Vec<String>,
    /// Prove the rules of a candidate rule file instead of the built-in
    /// ones (repeatable): how a new pattern is proved before merging.
    #[arg(long = "rules", value_name = "FILE")]
    pub rules: Vec<String>,
    /// A lemma file laid over the built-in lemmas
    /// (verify/lemmas/nonlinear.rules; repeatable): lemmas the candidate
    /// rules cite (`using`), each proved before it is assumed.
    #[arg(long = "lemmas", value_name = "FILE")]
    pub lemmas: Vec<String>,
    /// Widths to prove at.
    #[arg(
        long,
        visible_alias = "widths",
        value_delimiter = ',',
        default_value = "8,16,32,64"
    )]
    pub width: Vec<u32>,
    /// Parallel provers (default: one per core).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Wall-clock bound of each query, in seconds: a rule's width-generic
    /// query, and each per-width proof where that one does not settle the
    /// rule (building it, its type instances, encodings, case splits and
    /// retry together), ends within this, unknown if not settled by then.
    /// Its solver calls first get a tenth each; calls cut short are tried
    /// again at twice the share, up to what is left (an unknown rule's
    /// report says where the time went). Where an instance is small
    /// enough to walk point by point, the solvers get the first half and
    /// the walk the rest. Each query runs in a worker process that is
    /// killed 0.9 s past this, whatever its solver does.
    #[arg(long, default_value_t = 100.0, value_name = "SECONDS")]
    pub timeout: f64,
    /// Wall-clock bound of the whole run, in seconds: a query not started
    /// by then is unknown without being tried, one running then is cut
    /// short (unknown).
    #[arg(long, value_name = "SECONDS")]
    pub budget: Option<f64>,
    /// Print the results as JSON.
    #[arg(long)]
    pub json: bool,
    /// Write every query as an SMT-LIB2 file into this directory.
    #[arg(long, value_name = "DIR")]
    pub smt2: Option<String>,
    /// Do not read or write the proof cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Where proofs are cached.
    #[arg(long, default_value = ".tileproof-cache/proofs", value_name = "DIR")]
    pub cache_dir: String,
    /// Write each counterexample as a `tileproof check` case into this
    /// directory.
    #[arg(long, value_name = "DIR")]
    pub cases: Option<String>,
    /// Prove the range analysis instead of rules: every op's vmin/vmax
    /// transfer function, for every operand dtype, at each width.
    #[arg(long, conflicts_with_all = ["names", "rule", "rules", "lemmas", "cases", "smt2", "junit", "budget"])]
    pub ranges: bool,
    /// Write a JUnit XML report: one test case per rule and width, failures
    /// carrying the counterexample.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<String>,
    /// Z3's random seed, which also shuffles how counterexamples are
    /// minimized: another seed may give a failing rule another
    /// counterexample (0: Z3's default).
    #[arg(long, default_value_t = 0)]
    pub seed: u32,
    /// Cross-check every rule proved at every width with cvc5 (a second
    /// solver, on the width-8 bitvector encoding), reported per rule; a
    /// disagreement makes the rule disputed. An error if cvc5 does not run
    /// (`TILEPROOF_CVC5` names another binary).
    #[arg(long, conflicts_with = "ranges")]
    pub cross_check: bool,
    /// Print every rule's time (summed over its widths, then per width),
    /// slowest first, not only the slowest ten.
    #[arg(long, conflicts_with = "ranges")]
    pub times: bool,
    /// Prove every width on its own query, never by one width-generic
    /// query for all widths >= 8 (the default where a rule allows it).
    #[arg(long, conflicts_with = "ranges")]
    pub per_width: bool,
    /// Z3 alone: do not start cvc5 beside Z3 on a bitvector query (widths
    /// 8 and 16) that Z3 did not settle in its first share. By default
    /// the first solver to answer wins and the other is stopped; the
    /// summary and the JSON (`solver`) say which one answered.
    #[arg(long, conflicts_with = "ranges")]
    pub no_portfolio: bool,
    /// The solvers alone: do not settle a rule they left unknown at a
    /// width by walking every assignment of its constants, variables and
    /// lane states (where that is at most 2^25 and the guard reads no
    /// variable's bounds; proved rows then say `exhaustive
    /// (interpreter)`).
    #[arg(long, conflicts_with = "ranges")]
    pub no_walk: bool,
    /// Check the rules of a peer's own simplifier instead of tileproof's,
    /// one by one: a command that speaks the peer protocol and lists its
    /// rules (docs/protocol.md, section 6), e.g. `.venv-peers/bin/python
    /// adapters/tinygrad_adapter.py`, or with `--module FILE.py:MATCHER`
    /// your own tinygrad patterns. Names and `--rule` pick rules by the
    /// adapter's names; `--seed` also seeds the instances.
    #[arg(long, value_name = "CMD", conflicts_with_all = ["ranges", "rules", "lemmas", "smt2", "cases", "cross_check", "per_width", "no_cache", "times", "no_portfolio", "no_walk"])]
    pub simplifier: Option<String>,
    /// With --simplifier: instances of each rule's pattern to build.
    #[arg(long, default_value_t = 32, value_name = "N", requires = "simplifier")]
    pub instances: usize,
    #[command(flatten)]
    pub limits: super::PeerLimits,
    /// With --simplifier: do not run counterexamples on the peer's
    /// backends (its own compiled code); they stay `unconfirmed`.
    #[arg(long, requires = "simplifier")]
    pub no_confirm: bool,
    /// With --simplifier: where counterexamples are written as corpus
    /// cases (default: corpus/peers/NAME/rules).
    #[arg(long, value_name = "DIR", requires = "simplifier")]
    pub corpus: Option<String>,
    /// With --simplifier: failing instances per rule that are shrunk,
    /// classified on the peer's backends and written (the others are
    /// counted).
    #[arg(long, default_value_t = 2, value_name = "N", requires = "simplifier")]
    pub max_findings: usize,
    /// With --simplifier: prove or refute each rule for every constant. The
    /// adapter translates each rule into the rule DSL (tinygrad's does); the
    /// translation must agree with the rule on every instance, then each of
    /// its DSL rules is proved at widths 8, 16, 32 and 64 (one width-generic
    /// query where it settles them all), and a counterexample is run through
    /// the peer's own rule. One verdict per rule: proved for all constants,
    /// refuted, translation disagrees, not translatable, checked on instances.
    #[arg(long, requires = "simplifier")]
    pub all_constants: bool,
    /// With --all-constants: the wall-clock bound of each proof query, in
    /// seconds (unknown past it: the rule stays checked on instances).
    #[arg(
        long,
        default_value_t = 5.0,
        value_name = "SECONDS",
        requires = "all_constants"
    )]
    pub proof_timeout: f64,
}

/// Loads the rules to prove: the candidate files (read by the same loader,
/// with the same notes, as every other command's `--rules`), or the
/// built-in set; and the set the engine would run them in (the candidates
/// laid over the built-in rules), where cycles are looked for.
pub fn load_rules(files: &[String]) -> anyhow::Result<(RuleSet, RuleSet)> {
    if files.is_empty() {
        return Ok((builtin().clone(), builtin().clone()));
    }
    let loaded = super::load_rule_files(files)?;
    Ok((loaded.candidates, loaded.engine))
}

/// Rules checked at most this many get a termination line each in text.
pub const TERMINATION_LINES: usize = 32;

/// Prints failures and a summary; returns whether everything was proved.
pub fn report(results: &[RuleResult], widths: &[u32], elapsed: Duration) -> bool {
    let mut accounted = Vec::new();
    for r in results {
        for note in &r.notes {
            println!("NOTE {} at width {}: {note}", r.rule, r.width);
        }
        match &r.verdict {
            ProofVerdict::Proved => {}
            ProofVerdict::Failed { counterexample } => {
                println!("FAILED {} at width {}\n{}", r.rule, r.width, counterexample)
            }
            ProofVerdict::Vacuous => println!(
                "VACUOUS {} at width {}: its guard and bounds can never hold",
                r.rule, r.width
            ),
            ProofVerdict::Unknown { reason } => {
                println!("UNKNOWN {} at width {}: {}", r.rule, r.width, reason);
                for line in time_account(r, &mut accounted) {
                    println!("{line}");
                }
            }
            ProofVerdict::Disputed { reason } => {
                println!("DISPUTED {} at width {}: {}", r.rule, r.width, reason)
            }
            ProofVerdict::InternalError { internal_error } => {
                println!(
                    "INTERNAL ERROR {} at width {}\n{}",
                    r.rule, r.width, internal_error
                )
            }
        }
    }
    let mut all = true;
    for &w in widths {
        let mut counts: BTreeMap<VerdictKind, usize> = BTreeMap::new();
        let mut methods: BTreeMap<String, usize> = BTreeMap::new();
        for r in results.iter().filter(|r| r.width == w) {
            *counts.entry(r.verdict.kind()).or_default() += 1;
            if matches!(r.verdict, ProofVerdict::Proved) {
                let how = if r.width_generic {
                    "width-generic bounded-integer".to_string()
                } else if r.solver == verify::portfolio::SolverKind::Z3 {
                    r.method.to_string()
                } else {
                    format!("{} ({})", r.method, r.solver.name())
                };
                *methods.entry(how).or_default() += 1;
            }
        }
        let proved = counts.get(&VerdictKind::Proved).copied().unwrap_or(0);
        let total: usize = counts.values().sum();
        all &= proved == total;
        let others: Vec<String> = counts
            .iter()
            .filter(|(k, _)| **k != VerdictKind::Proved)
            .map(|(k, v)| format!("{v} {k}"))
            .collect();
        let how: Vec<String> = methods.iter().map(|(k, v)| format!("{v} by {k}")).collect();
        println!(
            "width {w:>2}: {proved}/{total} proved{}{}",
            if how.is_empty() {
                String::new()
            } else {
                format!(" ({})", how.join(", "))
            },
            if others.is_empty() {
                String::new()
            } else {
                format!(", {}", others.join(", "))
            }
        );
    }
    print_width_generic(results);
    let mut times: Vec<(f64, &str, u32)> = results
        .iter()
        .map(|r| (r.seconds, r.rule.as_str(), r.width))
        .collect();
    times.sort_by(|a, b| a.0.total_cmp(&b.0));
    if let Some(&(max, name, w)) = times.last() {
        let median = times[times.len() / 2].0;
        let cached = results.iter().filter(|r| r.cached).count();
        println!(
            "time per rule and width: median {:.3} s, max {:.3} s ({name} at width {w}); {} of {} from the cache; total {:.1} s",
            median,
            max,
            cached,
            results.len(),
            elapsed.as_secs_f64()
        );
    }
    all
}

/// How many rules one width-generic query proved for every width of 8
/// bits and more, and why the others were proved width by width.
fn print_width_generic(results: &[RuleResult]) {
    let mut rules: Vec<&str> = results.iter().map(|r| r.rule.as_str()).collect();
    rules.dedup();
    let generic = rules
        .iter()
        .filter(|n| results.iter().any(|r| r.rule == **n && r.width_generic))
        .count();
    let mut why: BTreeMap<WidthByWidth, usize> = BTreeMap::new();
    for n in &rules {
        // The kind of reason, not each rule's detail.
        if let Some(kind) = results
            .iter()
            .filter(|r| r.rule == *n && !r.width_generic)
            .find_map(|r| r.width_by_width)
        {
            *why.entry(kind).or_default() += 1;
        }
    }
    if generic == 0 && why.is_empty() {
        return;
    }
    let why: Vec<String> = why
        .iter()
        .map(|(k, v)| format!("{v}: {}", k.describe()))
        .collect();
    println!(
        "width-generic: {generic} of {} proved for every width >= 8 by one query{}",
        engine::print::count(rules.len(), "rule"),
        if why.is_empty() {
            String::new()
        } else {
            format!("; width by width: {}", why.join(", "))
        }
    );
}

/// A rule's name, its seconds in all, and its seconds at each width.
pub type RuleTime<'a> = (&'a str, f64, Vec<(u32, f64)>);

/// Each rule's time (its width-generic query once, plus each per-width
/// proof), and each width's, slowest first.
pub fn rule_times(results: &[RuleResult]) -> Vec<RuleTime<'_>> {
    let mut by_rule: Vec<(&str, Vec<&RuleResult>)> = Vec::new();
    for r in results {
        match by_rule.iter_mut().find(|e| e.0 == r.rule) {
            Some(e) => e.1.push(r),
            None => by_rule.push((&r.rule, vec![r])),
        }
    }
    let mut out: Vec<RuleTime<'_>> = by_rule
        .into_iter()
        .map(|(name, rows)| {
            let total = verify::prove::rule_seconds(rows.iter().copied());
            let per = rows
                .iter()
                .filter(|r| !r.width_generic)
                .map(|r| (r.width, r.seconds))
                .collect();
            (name, total, per)
        })
        .collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    out
}

/// The slowest ten rules (all with `all`), one line each.
fn print_times(results: &[RuleResult], all: bool) {
    let times = rule_times(results);
    let n = if all {
        times.len()
    } else {
        times.len().min(10)
    };
    println!(
        "{} (seconds, summed over widths; each width's in parentheses):",
        if all {
            "time per rule".to_string()
        } else {
            format!("slowest {}", engine::print::count(n, "rule"))
        }
    );
    for (rule, total, widths) in &times[..n] {
        let per: Vec<String> = if widths.is_empty() {
            vec!["width-generic".to_string()]
        } else {
            widths.iter().map(|(w, s)| format!("w{w} {s:.2}")).collect()
        };
        println!("  {total:8.2}  {rule} ({})", per.join(", "));
    }
}

/// The cross-check, one line per rule, and a count.
fn print_cross_checks(rules: &[&Rule], results: &[RuleResult]) {
    use verify::crosscheck::CrossCheck;
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for rule in rules {
        let Some(r) = results.iter().find(|r| r.rule == rule.name) else {
            continue;
        };
        *counts.entry(r.cross_check.name()).or_default() += 1;
        let line = match &r.cross_check {
            CrossCheck::NotRun => "not run (not proved at every width)".to_string(),
            CrossCheck::Agrees {
                solver,
                encoding,
                seconds,
            } => format!("agrees ({solver}, {encoding}, {seconds:.2} s)"),
            CrossCheck::Disagrees {
                solver,
                encoding,
                detail,
                seconds,
            } => format!("DISAGREES ({solver}, {encoding}, {seconds:.2} s): {detail}"),
            CrossCheck::NotCrossChecked { reason, seconds } => {
                format!("not cross-checked ({reason}, {seconds:.2} s)")
            }
        };
        println!("cross-check {}: {line}", rule.name);
    }
    let summary: Vec<String> = counts.iter().map(|(k, v)| format!("{v} {k}")).collect();
    println!("cross-check (cvc5): {}", summary.join(", "));
}

/// The lemmas the rules cite, as their proofs went (each proved once).
fn print_lemmas(rules: &[&Rule], opts: &Options) {
    let mut seen: Vec<&str> = Vec::new();
    for rule in rules {
        for u in &rule.lemmas {
            if seen.contains(&u.name.as_str()) {
                continue;
            }
            seen.push(&u.name);
            let r = opts
                .lemmas
                .result(&u.name, opts.timeout, opts.cache.as_ref());
            println!(
                "lemma {}: {} ({}, {:.2} s)",
                r.lemma, r.verdict, r.detail, r.seconds
            );
        }
    }
}

pub fn run(a: Args) -> ExitCode {
    if let Some(simplifier) = &a.simplifier {
        let r = peer::Request {
            simplifier,
            names: a.names.iter().chain(&a.rule).cloned().collect(),
            instances: a.instances,
            limits: &a.limits,
            timeout: a.timeout,
            seed: a.seed,
            jobs: a.jobs,
            json: a.json,
            junit: a.junit.as_ref(),
            no_confirm: a.no_confirm,
            corpus: a.corpus.as_ref(),
            max_findings: a.max_findings,
            all_constants: a.all_constants,
            proof_timeout: a.proof_timeout,
            cache_dir: &a.cache_dir,
        };
        return super::exit("prove", peer::run(&r));
    }
    if a.ranges {
        return super::exit("prove", run_ranges(&a));
    }
    super::exit("prove", run_rules(&a))
}

fn run_rules(a: &Args) -> anyhow::Result<ExitCode> {
    let run_start = Instant::now();
    let budget = a
        .budget
        .map(|b| super::parse_seconds("the budget", b))
        .transpose()?;
    super::remove_stale_reports(a.junit.iter())?;
    let (set, engine_set) = load_rules(&a.rules)?;
    let names: Vec<String> = a.names.iter().chain(&a.rule).cloned().collect();
    let rules = set.select(&names)?;
    if a.cross_check && verify::cvc5::version().is_none() {
        anyhow::bail!(
            "--cross-check needs cvc5, and `{}` does not run (install it: apt-get install cvc5, or point TILEPROOF_CVC5 at it)",
            verify::cvc5::path()
        );
    }
    let opts = Options {
        seed: a.seed,
        cross_check: a.cross_check,
        per_width: a.per_width,
        portfolio: !a.no_portfolio,
        walk: !a.no_walk,
        deadline: budget.map(|b| run_start + b),
        ..options(
            &a.width,
            a.timeout,
            a.no_cache,
            &a.cache_dir,
            a.smt2.as_deref(),
            &a.lemmas,
        )?
    };
    let start = Instant::now();
    // Proving a pattern includes proving that rewriting with it stops:
    // checked beside the proofs, which it does not depend on.
    let (results, termination) = std::thread::scope(|s| {
        let termination =
            s.spawn(|| verify::termination::check(&rules, &engine_set, &opts.widths, opts.timeout));
        let results = run_proofs(&rules, &opts, a.jobs);
        (results, termination.join())
    });
    let results = results?;
    let termination = termination.map_err(|_| anyhow::anyhow!("the termination check panicked"))?;
    if let Some(dir) = &a.cases {
        write_cases(dir, &results);
    }
    if let Some(path) = &a.junit {
        let suites = [super::junit::prove_suite(&results)];
        super::junit::write(
            path,
            "tileproof prove",
            &suites,
            start.elapsed().as_secs_f64(),
        )?;
    }
    let ok = if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&with_termination(&results, &termination))
                .expect("serializable")
        );
        results
            .iter()
            .all(|r| matches!(r.verdict, ProofVerdict::Proved))
    } else {
        print_lemmas(&rules, &opts);
        let ok = report(&results, &a.width, start.elapsed());
        print_times(&results, a.times);
        if a.cross_check {
            print_cross_checks(&rules, &results);
        }
        print_termination(&termination, rules.len() <= TERMINATION_LINES);
        println!("termination: {}", termination.summary());
        ok
    } && termination.holds();
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}

/// One result as JSON: the proof's fields, its rule's termination verdict
/// and the cycles the rule takes part in. Serialized in one pass, as
/// typed: a counterexample's values are exact (a 64-bit product is wider
/// than 64 bits), which `serde_json::Value` cannot hold.
#[derive(serde::Serialize)]
struct JsonRow<'a> {
    #[serde(flatten)]
    result: &'a RuleResult,
    #[serde(skip_serializing_if = "Option::is_none")]
    termination: Option<&'a TerminationVerdict>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    cycles: Vec<&'a str>,
}

/// Each result with its rule's termination verdict (and the cycles it
/// takes part in) beside the proof's fields.
fn with_termination<'a>(results: &'a [RuleResult], t: &'a Report) -> Vec<JsonRow<'a>> {
    results
        .iter()
        .map(|r| JsonRow {
            result: r,
            termination: t
                .rules
                .iter()
                .find(|x| x.rule == r.rule)
                .map(|x| &x.verdict),
            cycles: t
                .cycles
                .iter()
                .filter(|c| c.rules.contains(&r.rule))
                .map(|c| c.line.as_str())
                .collect(),
        })
        .collect()
}

/// `prove --ranges`: the transfer functions, in parallel, with a summary
/// like the rules' one.
fn run_ranges(a: &Args) -> anyhow::Result<ExitCode> {
    let timeout = options(&a.width, a.timeout, true, &a.cache_dir, None, &[])?.timeout;
    let total = a.width.len() * verify::ranges::signatures().len();
    let bar = ProgressBar::new(total as u64);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(a.jobs.unwrap_or(0))
        .build()?;
    let start = Instant::now();
    let report = pool.install(|| verify::schedule::prove_ranges(&a.width, timeout, &|| bar.inc(1)));
    bar.finish_and_clear();
    let results = &report.results;
    for (op, lemma, verdict) in &report.lemmas {
        eprintln!("lemma {op} {lemma}: {verdict}");
    }
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).expect("serializable")
        );
    }
    for r in results.iter().filter(|r| r.verdict != VerdictKind::Proved) {
        eprintln!(
            "{} range of {} ({}) at width {}: {}",
            r.verdict.name().to_uppercase(),
            r.op,
            r.signature,
            r.width,
            r.detail.as_deref().unwrap_or("")
        );
    }
    for w in &a.width {
        let of_w: Vec<_> = results.iter().filter(|r| r.width == *w).collect();
        let proved = of_w
            .iter()
            .filter(|r| r.verdict == VerdictKind::Proved)
            .count();
        eprintln!(
            "width {w:2}: {proved}/{} transfer functions proved",
            of_w.len()
        );
    }
    let slowest = results
        .iter()
        .max_by(|x, y| x.seconds.total_cmp(&y.seconds));
    if let Some(s) = slowest {
        eprintln!(
            "slowest {:.2} s ({} {} at width {}); total {:.1} s",
            s.seconds,
            s.op,
            s.signature,
            s.width,
            start.elapsed().as_secs_f64()
        );
    }
    Ok(if report.all_proved() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}

/// Writes each counterexample's case file; an internal error gets a report
/// file instead (`.internal-error.txt`), never a case that looks like a
/// counterexample.
fn write_cases(dir: &str, results: &[RuleResult]) {
    let _ = std::fs::create_dir_all(dir);
    for r in results {
        let (name, text) = match &r.verdict {
            ProofVerdict::Failed { counterexample } => match &counterexample.case {
                Some(case) => (format!("{}-w{}.txt", r.rule, r.width), case.clone()),
                None => continue,
            },
            ProofVerdict::InternalError { internal_error } => (
                format!("{}-w{}.internal-error.txt", r.rule, r.width),
                internal_error.to_string(),
            ),
            _ => continue,
        };
        let path = std::path::Path::new(dir).join(name);
        match std::fs::write(&path, text) {
            Ok(()) => eprintln!("wrote {}", path.display()),
            Err(e) => eprintln!("{}: {e}", path.display()),
        }
    }
}
