//! `tileproof gate`: the soundness gate, the one job CI runs.
//!
//! Four stages, each one line with counts and time, then a verdict (the
//! policy, why the gate fails, is `tileproof::gate`):
//!
//! 1. **prove**: every rule (built-in, with `--rules` files laid over them)
//!    at each width, through the proof cache (`tileproof prove`'s code);
//!    then **termination**: every rule proved decreases the reduction
//!    order or its file justifies it, and no rules undo each other
//!    (`verify::termination`);
//! 2. **corpus**: every corpus case replayed (`tileproof replay`'s code);
//! 3. **firings**: every recorded firing of an algorithmic rule (a rule of
//!    the engine's pass registry), on every rule's fire cases and then over
//!    a fixed-seed run of both generators, validated with `verify::check`;
//!    a rule with no validated firing fails the stage; declarative rules
//!    need no per-firing check, stage 1 proved them;
//! 4. **campaigns**: a fixed-seed smoke campaign of each generator
//!    (`fuzz::campaign`, as `tileproof fuzz` runs it).
//!
//! Exit 0 only when every rule is proved at every width (unknown and
//! vacuous count against it) and terminates, every case replays clean, every firing
//! validates and the campaigns find nothing.

use super::cases::{case_check_width, case_files};
use super::junit::{self, Outcome, Suite, TestCase};
use super::output::say;
use super::summary::{summary_json, Display};
use super::{exit, load_rule_files, parse_timeout};
use engine::dtype::Width;
use engine::ir::{Graph, NodeId};
use engine::print::count;
use engine::rewrite::Simplifier;
use engine::rules::{Rule, RuleSet};
use fuzz::campaign::{self, CampaignConfig, GeneratorChoice, Hooks, Progress, Shard, Summary};
use fuzz::checks::{CheckConfig, Validation, Validator};
use fuzz::corpus::{replay_case, CaseReport, Replayer};
use fuzz::firings::{validate_firings, Firings, ValidatedFiring};
use fuzz::generate::Generator;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};
use tileproof::decide::validator;
use tileproof::gate::{with_verdict, Problem, Report, RunBudget};
use verify::prove::{ProofVerdict, RuleResult};
use verify::verdict::VerdictKind;

#[derive(clap::Args)]
#[command(
    after_help = "Exit status: 0 everything holds; 2 something does not (a rule failed, unknown or \
vacuous at some width, a rule not shown to terminate or rules that loop, a corpus case failed, an \
algorithmic firing did not validate or decrease what its rule states, or a campaign found something); 1 other errors (bad arguments, unreadable files).\n\n\
Examples:\n  tileproof gate                                   # the whole gate, as CI runs it\n  \
tileproof gate --time 20 --widths 8,16             # a quicker gate\n  \
tileproof gate --rules candidate.rules --junit gate.xml --json gate.json\n  \
tileproof gate --rules candidate.rules --candidates-only --widths 8 --time 5"
)]
pub struct Args {
    /// Widths to prove every rule at.
    #[arg(
        long,
        visible_alias = "width",
        value_delimiter = ',',
        default_value = "8,16,32,64",
        value_name = "W,..."
    )]
    pub widths: Vec<u32>,
    /// Wall-clock bound of each proof query, in seconds (a rule's
    /// width-generic query, or the rule at one width, building included);
    /// a proof's solver calls first get a tenth each, and calls cut short
    /// are tried again at twice the share, up to what is left; each call
    /// of the corpus and firing validation gets a tenth. A proof that runs
    /// out of it is `unknown`, which fails the gate.
    #[arg(long, default_value_t = 100.0, value_name = "SECONDS")]
    pub timeout: f64,
    /// Wall-clock bound of the whole gate, in seconds: what is not reached
    /// by then (a rule not proved, a corpus case not replayed, a stage not
    /// run) is unknown, which fails the gate; a solver call running then
    /// is cut short.
    #[arg(long, value_name = "SECONDS")]
    pub budget: Option<f64>,
    /// Time budget of the campaign part (the algorithmic-firing run and the
    /// smoke campaigns of both generators, shared between them).
    #[arg(long, default_value_t = 30.0, value_name = "SECONDS")]
    pub time: f64,
    /// Worker threads for proofs, validation and campaigns (default: one
    /// per core).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Prove everything again instead of reading and writing the proof
    /// cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Where proofs are cached (shared with `tileproof prove`).
    #[arg(long, default_value = ".tileproof-cache/proofs", value_name = "DIR")]
    pub cache_dir: String,
    /// The corpus to replay: a directory of `*.txt` cases, or one file.
    #[arg(long, default_value = "corpus", value_name = "DIR")]
    pub corpus: PathBuf,
    /// A rule file laid over the built-in rules (repeatable): a rule named
    /// like a built-in one replaces it, others join their group (a group
    /// the engine does not have is tried after the built-in ones). Every
    /// stage then runs with the combined set, so an unsound candidate fails
    /// the gate.
    #[arg(long = "rules", value_name = "FILE")]
    pub rules: Vec<String>,
    /// A lemma file laid over the built-in lemmas (repeatable): lemmas the
    /// candidate rules cite (`using`), each proved before it is assumed.
    #[arg(long = "lemmas", value_name = "FILE")]
    pub lemmas: Vec<String>,
    /// Prove only the rules the `--rules` files define (the other stages
    /// still use the whole set): a quick check of a candidate.
    #[arg(long, requires = "rules", conflicts_with = "rule")]
    pub candidates_only: bool,
    /// Prove only these rules (repeatable, or comma-separated); the other
    /// stages still use the whole set.
    #[arg(long, value_delimiter = ',', value_name = "NAME")]
    pub rule: Vec<String>,
    /// Seed of the firing run and of the campaigns (fixed, so that the gate
    /// checks the same cases every time for a given time budget).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Cases per generator the algorithmic-firing stage simplifies at most
    /// (it also stops, between batches of 64, at a third of --time; every
    /// firing recorded is validated).
    #[arg(long, default_value_t = 2000, value_name = "N")]
    pub firing_cases: u64,
    /// Write at most this many findings of one cause per campaign.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub max_findings: usize,
    /// Where campaign findings are written (move the ones worth keeping
    /// into corpus/).
    #[arg(long, default_value = ".tileproof-cache/findings", value_name = "DIR")]
    pub findings: PathBuf,
    /// Write a JSON report: every rule and width with verdict, method and
    /// time, every corpus case, the firings, the campaign figures and every
    /// counterexample.
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// Write a JUnit XML report: a test case per rule and width, per corpus
    /// case, per algorithmic rule and per campaign; failures carry the
    /// counterexample.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<String>,
}

pub fn run(a: Args) -> ExitCode {
    exit(
        "gate",
        gate(a).map(|pass| {
            if pass {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(2)
            }
        }),
    )
}

fn gate(a: Args) -> anyhow::Result<bool> {
    let start = Instant::now();
    // Check every argument before the long stages start.
    parse_timeout(a.timeout)?;
    let budget = super::parse_seconds("--time", a.time)?;
    let run_deadline = a
        .budget
        .map(|b| super::parse_seconds("--budget", b).map(|b| start + b))
        .transpose()?;
    anyhow::ensure!(a.jobs != Some(0), "--jobs must be at least 1");
    let opts = verify::prove::Options {
        deadline: run_deadline,
        ..super::proofs::options(
            &a.widths,
            a.timeout,
            a.no_cache,
            &a.cache_dir,
            None,
            &a.lemmas,
        )?
    };
    // Each solver call's bound, and no call past the run's deadline.
    let timeout = opts.timeout;
    let run = RunBudget(run_deadline);
    let mut unreached: Vec<String> = Vec::new();
    super::remove_stale_reports(a.json.iter().chain(&a.junit))?;
    let loaded = load_rule_files(&a.rules)?;
    let set = loaded.engine;
    let to_prove = select(&set, &loaded.candidates, &a)?;
    anyhow::ensure!(
        a.corpus.exists(),
        "{}: no such corpus (run from the repository root, or pass --corpus DIR)",
        a.corpus.display()
    );
    let files = case_files(std::slice::from_ref(&a.corpus))?;
    let jobs = fuzz::campaign::workers(a.jobs);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .map_err(|e| anyhow::anyhow!("cannot start {jobs} worker threads: {e}"))?;
    let widths: Vec<String> = a.widths.iter().map(|w| w.to_string()).collect();
    say!(
        "tileproof gate: {}{}, proving {} at {} {}; corpus {} ({}); campaigns {} s, seed {}; {}",
        count(set.len(), "rule"),
        if a.rules.is_empty() {
            " (built-in)".to_string()
        } else {
            format!(" (built-in + {})", a.rules.join(", "))
        },
        to_prove.len(),
        if widths.len() == 1 { "width" } else { "widths" },
        widths.join(","),
        a.corpus.display(),
        count(files.len(), "case"),
        a.time,
        a.seed,
        count(jobs, "job")
    );

    // 1. Proofs.
    let t = Instant::now();
    let proofs =
        super::proofs::run_proofs(&to_prove, &opts, Some(jobs)).map_err(anyhow::Error::msg)?;
    let prove_seconds = t.elapsed().as_secs_f64();
    print_proofs(&proofs, to_prove.len(), &widths, prove_seconds);

    // 1b. Termination: every rule proved must decrease the order (or say
    // why it stops), and none may undo another.
    let t = Instant::now();
    let termination = verify::termination::check(&to_prove, &set, &opts.widths, timeout);
    let termination_seconds = t.elapsed().as_secs_f64();
    super::proofs::print_termination(&termination, false);
    say!(
        "termination {}; {:.1} s",
        termination.summary(),
        termination_seconds
    );

    // 2. Corpus.
    let t = Instant::now();
    let cases = replay_stage(&files, &set, &a.rules, timeout, run, &mut unreached);
    let corpus_seconds = t.elapsed().as_secs_f64();
    print_corpus(&cases, &a.corpus, &rules_args(&a.rules), corpus_seconds);

    // 3. Algorithmic firings: up to a third of the campaign budget.
    let firing_time = run.left().map_or(budget / 3, |l| l.min(budget / 3));
    let deadline = Instant::now() + budget;
    if firing_time.is_zero() {
        unreached.push("the firings stage did not run".into());
    }
    let firings =
        pool.install(|| firings_stage(&set, a.seed, a.firing_cases, firing_time, timeout, run))?;
    print_firings(&firings);

    // 4. Smoke campaigns.
    let campaigns = campaigns_stage(&set, &a, jobs, budget, deadline, run, &mut unreached)?;

    let report = Report {
        proofs,
        prove_seconds,
        termination,
        termination_seconds,
        cases,
        corpus_seconds,
        firings,
        campaigns,
        rules_args: rules_args(&a.rules),
    };
    finish(&report, &a, unreached, start)
}

/// The verdict line, and the JSON and JUnit reports: whether the gate
/// passed.
fn finish(
    report: &Report,
    a: &Args,
    unreached: Vec<String>,
    start: Instant,
) -> anyhow::Result<bool> {
    let mut found = report.problems();
    if !unreached.is_empty() {
        found.push(Problem::OutOfBudget(unreached));
    }
    let problems: Vec<String> = found.iter().map(ToString::to_string).collect();
    let seconds = start.elapsed().as_secs_f64();
    if problems.is_empty() {
        say!("verdict   PASS: every stage holds ({seconds:.1} s)");
    } else {
        say!("verdict   FAIL: {} ({seconds:.1} s)", problems.join("; "));
    }
    if let Some(path) = &a.json {
        let v = json_report(report, a, &problems, seconds);
        let text = serde_json::to_string_pretty(&v)?;
        super::write_atomically(path, &(text + "\n"))?;
    }
    if let Some(path) = &a.junit {
        junit::write(path, "tileproof gate", &junit_suites(report), seconds)?;
    }
    Ok(problems.is_empty())
}

/// Stage 2: every corpus case replayed with the engine, each at its width,
/// until the budget is spent.
fn replay_stage(
    files: &[std::path::PathBuf],
    set: &RuleSet,
    rule_files: &[String],
    timeout: Duration,
    run: RunBudget,
    unreached: &mut Vec<String>,
) -> Vec<CaseReport> {
    let who = Replayer::Engine {
        rules: set,
        rule_files,
    };
    let mut cases: Vec<CaseReport> = Vec::new();
    for f in files {
        if run.spent() {
            unreached.push(format!(
                "{} not replayed",
                count(files.len() - cases.len(), "corpus case")
            ));
            break;
        }
        let w = case_check_width(f, None, None, &who);
        let smt = validator(w, timeout);
        let bounded = |g: &Graph, s: &[NodeId], t: &[NodeId]| run.within(&|| smt(g, s, t));
        cases.push(replay_case(
            f,
            None,
            who,
            Some(w),
            Some(&bounded as &Validator<'_>),
        ));
    }
    cases
}

/// Stage 3: every firing of the algorithmic rules on their fire cases and
/// in a fixed-seed run of `time` (no case at all when it is zero).
fn firings_stage(
    set: &RuleSet,
    seed: u64,
    firing_cases: u64,
    time: Duration,
    timeout: Duration,
    run: RunBudget,
) -> anyhow::Result<Firings> {
    let simp = Simplifier::new(set);
    let algorithmic: Vec<bool> = (0..simp.rule_names().len())
        .map(|i| simp.is_algorithmic(i))
        .collect();
    let fire_cases = engine::passes::fire_cases()?;
    let smt = validator(Width::W64, timeout);
    let validator = |g: &Graph, s: &[NodeId], t: &[NodeId]| run.within(&|| smt(g, s, t));
    Ok(validate_firings(
        &simp,
        &algorithmic,
        &fire_cases,
        seed,
        if time.is_zero() { 0 } else { firing_cases },
        time,
        &validator,
    ))
}

/// Stage 4: a smoke campaign per generator, sharing what is left of the
/// campaign budget; each gets at least a sixth of its even share, so that
/// firings that ran long cannot leave a campaign with no case (`--budget`
/// still cuts them).
fn campaigns_stage(
    set: &RuleSet,
    a: &Args,
    jobs: usize,
    budget: Duration,
    deadline: Instant,
    run: RunBudget,
    unreached: &mut Vec<String>,
) -> anyhow::Result<Vec<(Generator, Summary)>> {
    let mut campaigns = Vec::new();
    let n = Generator::ALL.len() as u32;
    for (i, g) in Generator::ALL.iter().enumerate() {
        let left_here = deadline.saturating_duration_since(Instant::now());
        let share = (left_here / (n - i as u32)).max(budget * 2 / (3 * n * 6));
        if run.spent() {
            unreached.push(format!("the {g} campaign did not run"));
            continue;
        }
        let share = run.left().map_or(share, |l| l.min(share));
        let s = smoke_campaign(*g, set, a, jobs, share)?;
        print_campaign(*g, &s, &rules_args(&a.rules));
        campaigns.push((*g, s));
    }
    Ok(campaigns)
}

/// The rules to prove: all of the set, the named ones, or the candidates.
fn select<'s>(set: &'s RuleSet, candidates: &RuleSet, a: &Args) -> anyhow::Result<Vec<&'s Rule>> {
    if a.candidates_only {
        // clap requires `--rules`, and a file defines at least one rule.
        let names: Vec<String> = candidates.rules().map(|r| r.name.clone()).collect();
        return Ok(set.select(&names)?);
    }
    Ok(set.select(&a.rule)?)
}

fn print_proofs(results: &[RuleResult], rules: usize, widths: &[String], seconds: f64) {
    let mut accounted = Vec::new();
    for r in results {
        match &r.verdict {
            ProofVerdict::Proved => {}
            ProofVerdict::Failed { counterexample } => {
                say!("FAILED {} at width {}\n{}", r.rule, r.width, counterexample)
            }
            ProofVerdict::Vacuous => say!(
                "VACUOUS {} at width {}: its guard and bounds can never hold",
                r.rule,
                r.width
            ),
            ProofVerdict::Unknown { reason } => {
                say!("UNKNOWN {} at width {}: {}", r.rule, r.width, reason);
                for line in super::proofs::time_account(r, &mut accounted) {
                    say!("{line}");
                }
            }
            ProofVerdict::Disputed { reason } => {
                say!("DISPUTED {} at width {}: {}", r.rule, r.width, reason)
            }
            ProofVerdict::InternalError { internal_error } => {
                say!(
                    "INTERNAL ERROR {} at width {}\n{}",
                    r.rule,
                    r.width,
                    internal_error
                )
            }
        }
    }
    let per_width: Vec<String> = widths
        .iter()
        .map(|w| {
            let at: Vec<&RuleResult> = results
                .iter()
                .filter(|r| r.width.to_string() == *w)
                .collect();
            let proved = at
                .iter()
                .filter(|r| matches!(r.verdict, ProofVerdict::Proved))
                .count();
            format!("{proved}/{} at {w}", at.len())
        })
        .collect();
    let internal = match with_verdict(results, VerdictKind::InternalError) {
        0 => String::new(),
        n => format!(", {n} INTERNAL ERRORS"),
    };
    let mut generic: Vec<&str> = results
        .iter()
        .filter(|r| r.width_generic)
        .map(|r| r.rule.as_str())
        .collect();
    generic.dedup();
    say!(
        "prove     {} x {}: {} proved ({}; {} width-generic), {} failed, {} unknown, {} vacuous{}; {} from cache; {:.1} s",
        count(rules, "rule"),
        count(widths.len(), "width"),
        with_verdict(results, VerdictKind::Proved),
        per_width.join(", "),
        count(generic.len(), "rule"),
        with_verdict(results, VerdictKind::Failed),
        with_verdict(results, VerdictKind::Unknown),
        with_verdict(results, VerdictKind::Vacuous),
        internal,
        results.iter().filter(|r| r.cached).count(),
        seconds
    );
}

/// The `--rules` arguments of a command that reproduces what the gate saw
/// (each followed by a space, as [`fuzz::corpus::replay_line`] takes them).
fn rules_args(files: &[String]) -> String {
    files.iter().map(|f| format!("--rules {f} ")).collect()
}

fn print_corpus(cases: &[CaseReport], dir: &std::path::Path, rules: &str, seconds: f64) {
    for c in cases.iter().filter(|c| !c.ok) {
        say!("{}", c.line);
        let _ = write!(std::io::stdout(), "{}", c.detail);
        say!(
            "  reproduce: {}",
            fuzz::corpus::replay_line(rules, std::path::Path::new(&c.path))
        );
    }
    // An ok case the JIT only sampled and Z3 did not prove: named, since
    // "ok" alone would claim more than was checked.
    for c in cases.iter().filter(|c| c.ok && !c.proved) {
        say!("{}", c.line);
    }
    let failed = cases.iter().filter(|c| !c.ok).count();
    let proved = cases.iter().filter(|c| c.ok && c.proved).count();
    say!(
        "corpus    {} in {}: {} ok ({proved} proved, {} sampled), {} failed; {:.1} s",
        count(cases.len(), "case"),
        dir.display(),
        cases.len() - failed,
        cases.len() - failed - proved,
        failed,
        seconds
    );
}

fn print_firings(f: &Firings) {
    if f.rules.is_empty() {
        say!(
            "firings   0 algorithmic firings: every rule of the engine is declarative (proved in stage 1); {:.1} s",
            f.seconds
        );
        return;
    }
    for x in f.failed() {
        say!("FIRING {} not validated: {}", x.rule, describe_firing(x));
        for line in x.case.lines() {
            say!("  {line}");
        }
    }
    for e in &f.errors {
        say!("FIRING run error: {e}");
    }
    let tallies = f.per_rule();
    for t in tallies.iter().filter(|t| t.validated == 0) {
        say!(
            "FIRING {} not validated: {}",
            t.rule,
            if t.fired == 0 {
                "it never fired (add a fire case to engine/src/passes/fire_cases.txt)".to_string()
            } else {
                format!("none of its {} validated", count(t.fired, "firing"))
            }
        );
    }
    let counter = f.counterexamples();
    let unknown = f.unknown();
    say!(
        "firings   {} ({} distinct) of {} in {}: {} validated ({} by enumeration), {}, {} unknown, {} not decreasing what their rule states, {}; {:.1} s; {} of {} algorithmic rules validated",
        count(f.total, "algorithmic firing"),
        f.distinct.len(),
        count(f.rules.len(), "algorithmic rule"),
        count(f.cases, "case"),
        f.distinct.len() - counter - unknown,
        f.by_enumeration(),
        count(counter, "counterexample"),
        unknown,
        f.distinct.iter().filter(|x| x.undecreasing.is_some()).count(),
        count(f.errors.len(), "error"),
        f.seconds,
        tallies.iter().filter(|t| t.validated > 0).count(),
        tallies.len()
    );
}

/// A validation in one line (with the point for a counterexample).
fn describe(r: &Validation) -> String {
    match &r.detail {
        Some(d) if r.fails => d.clone(),
        Some(d) => format!("{}: {d}", r.verdict),
        None => r.verdict.to_string(),
    }
}

/// Why a firing fails: its validation, or what it does not decrease.
fn describe_firing(f: &ValidatedFiring) -> String {
    match &f.undecreasing {
        Some(why) if f.validated() => format!("does not terminate: {why}"),
        _ => describe(&f.result),
    }
}

fn smoke_campaign(
    g: Generator,
    set: &RuleSet,
    a: &Args,
    jobs: usize,
    time: Duration,
) -> anyhow::Result<Summary> {
    let cfg = CampaignConfig {
        seed: a.seed,
        shard: Shard::WHOLE,
        generator: GeneratorChoice::One(g),
        time: Some(time),
        jobs: Some(jobs),
        simplify_width: Width::W64,
        check: CheckConfig::default(),
        validate_every: 256,
        corpus: Some(a.findings.clone()),
        max_findings: Some(a.max_findings),
        ..CampaignConfig::default()
    };
    let display = Display::new(Some(time), None);
    let progress = |p: &Progress| display.update(p);
    // Validation queries are sampled: a short timeout keeps one hard query
    // from eating the smoke budget (an unknown is not a finding).
    let validator = validator(Width::W64, Duration::from_secs(2));
    let hooks = Hooks {
        validator: Some(&validator as &Validator<'_>),
        progress: Some(&progress),
        missed: None,
    };
    let mut simp = Simplifier::new(set);
    simp.width = cfg.simplify_width;
    let engine = fuzz::subject::Engine::new(simp, a.rules.clone());
    let s = campaign::run_subject(&cfg, &engine, &hooks)?;
    display.finish();
    Ok(s)
}

fn print_campaign(g: Generator, s: &Summary, rules: &str) {
    // Only the findings that were shrunk and written; the rest are counted.
    for f in s.findings.iter().filter(|f| f.path.is_some()) {
        say!(
            "FINDING {} in {} case {}{}: {}",
            f.kind,
            g.name(),
            f.case_number,
            f.path
                .as_ref()
                .map_or_else(String::new, |p| format!(" -> {}", p.display())),
            f.message
        );
        if let Some(p) = &f.path {
            say!("  reproduce: {}", fuzz::corpus::replay_line(rules, p));
        }
    }
    let written = s.findings.iter().filter(|f| f.path.is_some()).count() as u64;
    if s.total_findings() > written {
        say!(
            "  {} more not written (--max-findings, or a write error)",
            count(s.total_findings() - written, "finding")
        );
    }
    let label = format!("{}:", g.name());
    say!(
        "campaign  {label:<6} {} ({:.0}/s), {}, {}/{} rules fired, seed {}; {:.1} s",
        count(s.cases, "case"),
        s.cases_per_sec(),
        count(s.total_findings(), "finding"),
        s.rules_covered(),
        s.rule_names.len(),
        s.seed,
        s.elapsed.as_secs_f64()
    );
}

fn json_report(r: &Report, a: &Args, problems: &[String], seconds: f64) -> Value {
    let proofs: Vec<Value> = r
        .proofs
        .iter()
        .map(|p| {
            // Never a bare `null` in place of a result: a reader would
            // miss the rule and width.
            let mut v = serde_json::to_value(p).unwrap_or_else(
                |e| json!({ "rule": p.rule, "width": p.width, "unserializable": e.to_string() }),
            );
            // The printed form next to the structured one: what a bug
            // report quotes.
            if let (ProofVerdict::Failed { counterexample }, Value::Object(m)) =
                (&p.verdict, &mut v)
            {
                m.insert(
                    "counterexample_text".into(),
                    json!(counterexample.to_string()),
                );
            }
            if let (ProofVerdict::InternalError { internal_error }, Value::Object(m)) =
                (&p.verdict, &mut v)
            {
                m.insert(
                    "internal_error_text".into(),
                    json!(internal_error.to_string()),
                );
            }
            v
        })
        .collect();
    let firings: Vec<Value> = r
        .firings
        .distinct
        .iter()
        .map(|f| json!({ "rule": f.rule, "count": f.count, "case": f.case, "result": f.result, "undecreasing": f.undecreasing }))
        .collect();
    json!({
        "verdict": if problems.is_empty() { "pass" } else { "fail" },
        "problems": problems,
        "seconds": seconds,
        "seed": a.seed,
        "rule_files": a.rules,
        "prove": {
            "widths": a.widths,
            "rules": r.proofs.iter().map(|p| p.rule.as_str()).collect::<std::collections::BTreeSet<_>>().len(),
            "proved": with_verdict(&r.proofs, VerdictKind::Proved),
            "failed": with_verdict(&r.proofs, VerdictKind::Failed),
            "unknown": with_verdict(&r.proofs, VerdictKind::Unknown),
            "vacuous": with_verdict(&r.proofs, VerdictKind::Vacuous),
            "internal_errors": with_verdict(&r.proofs, VerdictKind::InternalError),
            "cached": r.proofs.iter().filter(|p| p.cached).count(),
            "seconds": r.prove_seconds,
            "results": proofs,
        },
        "termination": {
            "summary": r.termination.summary(),
            "decreasing": r.termination.decreasing(),
            "seconds": r.termination_seconds,
            "rules": r.termination.rules,
            "cycles": r.termination.cycles,
        },
        "corpus": {
            "dir": a.corpus.display().to_string(),
            "cases": r.cases.len(),
            "failed": r.cases.iter().filter(|c| !c.ok).count(),
            "seconds": r.corpus_seconds,
            "results": r.cases,
        },
        "firings": {
            "algorithmic_rules": r.firings.rules,
            "per_rule": r.firings.per_rule(),
            "cases": r.firings.cases,
            "firings": r.firings.total,
            "distinct": r.firings.distinct.len(),
            "not_validated": r.firings.failed().count(),
            "errors": r.firings.errors,
            "seconds": r.firings.seconds,
            "results": firings,
        },
        "campaigns": r.campaigns.iter().map(|(_, s)| summary_json(s, Width::W64)).collect::<Vec<_>>(),
    })
}

fn junit_suites(r: &Report) -> Vec<Suite> {
    let mut suites = vec![junit::prove_suite(&r.proofs)];
    // One case per rule's termination, and one per cycle that loops.
    let mut cases: Vec<TestCase> = r
        .termination
        .rules
        .iter()
        .map(|t| TestCase {
            classname: "termination".into(),
            name: t.rule.clone(),
            seconds: 0.0,
            outcome: if t.verdict.holds() {
                Outcome::Passed
            } else {
                Outcome::Failure {
                    kind: "termination".into(),
                    message: t.verdict.line(),
                    text: String::new(),
                }
            },
        })
        .collect();
    cases.extend(r.termination.loops().map(|c| TestCase {
        classname: "termination".into(),
        name: format!("cycle {}", c.rules.join(" -> ")),
        seconds: 0.0,
        outcome: Outcome::Failure {
            kind: "cycle".into(),
            message: c.line.clone(),
            text: String::new(),
        },
    }));
    suites.push(Suite {
        name: "termination".into(),
        cases,
    });
    suites.push(Suite {
        name: "corpus".into(),
        cases: r
            .cases
            .iter()
            .map(|c| TestCase {
                classname: "corpus".into(),
                name: c.path.clone(),
                seconds: c.seconds,
                outcome: if c.ok {
                    Outcome::Passed
                } else {
                    Outcome::Failure {
                        kind: "replay".into(),
                        message: c.line.clone(),
                        text: format!(
                            "{}\n{}  reproduce: {}\n",
                            c.line,
                            c.detail,
                            fuzz::corpus::replay_line(&r.rules_args, std::path::Path::new(&c.path))
                        ),
                    }
                },
            })
            .collect(),
    });
    // One case per algorithmic rule: its failing firings, if any; a rule
    // with no validated firing fails too (it has not been validated).
    let mut by_rule: BTreeMap<&str, Vec<&ValidatedFiring>> = r
        .firings
        .rules
        .iter()
        .map(|n| (n.as_str(), Vec::new()))
        .collect();
    for f in r.firings.failed() {
        by_rule.entry(f.rule.as_str()).or_default().push(f);
    }
    let never = r.firings.unvalidated();
    suites.push(Suite {
        name: "algorithmic-firings".into(),
        cases: by_rule
            .into_iter()
            .map(|(rule, bad)| TestCase {
                classname: "firings".into(),
                name: rule.to_string(),
                seconds: 0.0,
                outcome: if bad.is_empty() && !never.contains(&rule.to_string()) {
                    Outcome::Passed
                } else if bad.is_empty() {
                    Outcome::Failure {
                        kind: "firing".into(),
                        message: format!("{rule} never fired: no firing to validate"),
                        text: String::new(),
                    }
                } else {
                    Outcome::Failure {
                        kind: "firing".into(),
                        message: format!("{} of {rule} not validated", count(bad.len(), "firing")),
                        text: bad
                            .iter()
                            .map(|f| format!("{}\n{}", describe_firing(f), f.case))
                            .collect::<Vec<_>>()
                            .join("\n"),
                    }
                },
            })
            .collect(),
    });
    suites.push(Suite {
        name: "campaigns".into(),
        cases: r
            .campaigns
            .iter()
            .map(|(g, s)| TestCase {
                classname: "campaign".into(),
                name: format!("{} (seed {})", g.name(), s.seed),
                seconds: s.elapsed.as_secs_f64(),
                outcome: if s.total_findings() == 0 {
                    Outcome::Passed
                } else {
                    Outcome::Failure {
                        kind: "finding".into(),
                        message: count(s.total_findings(), "finding"),
                        text: s
                            .findings
                            .iter()
                            .map(|f| {
                                format!(
                                    "{} in case {}: {}{}",
                                    f.kind,
                                    f.case_number,
                                    f.message,
                                    f.path.as_ref().map_or_else(String::new, |p| {
                                        format!(
                                            "\n  reproduce: {}",
                                            fuzz::corpus::replay_line(&r.rules_args, p)
                                        )
                                    })
                                )
                            })
                            .collect::<Vec<_>>()
                            .join("\n"),
                    }
                },
            })
            .collect(),
    });
    suites
}
