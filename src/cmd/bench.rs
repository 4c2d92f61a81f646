//! `tileproof bench`: throughput figures for the engine and the fuzzer, so
//! that a change that makes campaigns slower shows up as a number.
//!
//! - `simplify`: cases (and expressions) per second of the engine's
//!   `Simplifier` over a fixed set of 2,000 generated cases (1,000 of each
//!   generator), on one thread and on every core;
//! - `oracle`: points per second of the JIT oracle and of the interpreter
//!   oracle on the same case (a fixed tiled case of 2^18..2^21 points,
//!   against its simplified form), and their ratio; the JIT's compile
//!   time apart from its run, its points per second per core and the
//!   projected time of a 2^32-point sweep; the batched evaluator on the
//!   same case;
//! - `campaign`: cases per second (and per core) of a campaign of
//!   `--seconds` per generator (built-in rules, no SMT, no corpus
//!   writes), and of one over the cases whose domains have at most 4,096
//!   points;
//! - `tvm`: simplify per case, the engine against TVM's
//!   `Analyzer.simplify` on TVM's own arith tests
//!   (tests/peers/tvm_rewrite.cases and tvm_canonical.cases): the
//!   engine's `Simplifier::simplify` in process on a fresh clone of each
//!   parsed graph (parsing timed apart), TVM's from Python
//!   (bench/tvm_simplify.py with the venv of `--tvm-python`);
//! - `peers`: cases per second of one fixed campaign against the engine in
//!   process, the engine over the peer protocol (`tileproof serve`: the
//!   protocol's own cost) and every `--simplifier` given, side by side;
//!   for each peer, what looking for missed simplifications costs: the
//!   median rate with it on over the rate with it off, in alternating
//!   rounds of campaigns of at least 1,500 cases; for a Morok peer, the
//!   engine and Morok's `symbolic()` and `sym()` timed in one process on
//!   the same 2,000 generated cases (`tileproof-morok --bench`);
//! - `scaling`: time per node of simplifying N independent tiled
//!   expressions, and one sum of N tiled terms, at about 1k, 10k and 100k
//!   nodes: the engine's cost is linear when the figure stays flat;
//! - `suites`: on each of the peers' converted suites
//!   (`tests/peers/*.cases`), how far the engine goes against the peer's
//!   own expected forms: the cases where tileproof goes further (fewer
//!   div/mod in the results or constraints on the domain, no more of
//!   either) and where the peer does (the engine's missed
//!   simplifications, by name), [`engine::suite::Reach`], and time per
//!   expression.

use super::output::say;
use engine::dtype::Width;
use engine::ir::{Graph, NodeId};
use engine::rewrite::Simplifier;
use engine::rules::builtin;
use engine::walk;
use fuzz::campaign::{self, mix, CampaignConfig, GeneratorChoice, Hooks};
use fuzz::generate::{Case, Generator};
use fuzz::missed::Hunter;
use fuzz::oracle::{check_batched, check_interp, check_jit, CompiledOracle, OracleConfig};
use rayon::prelude::*;
use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum What {
    Simplify,
    Oracle,
    Campaign,
    Peers,
    Scaling,
    Suites,
    Tvm,
    All,
}

#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  tileproof bench                 # everything, 30 s campaigns\n  \
tileproof bench oracle\n  tileproof bench campaign --seconds 10 --jobs 1\n  \
tileproof bench peers --simplifier '.venv-peers/bin/python adapters/tinygrad_adapter.py'"
)]
pub struct Args {
    /// Which figures.
    #[arg(value_enum, default_value = "all")]
    pub what: What,
    /// Length of each campaign, in seconds.
    #[arg(long, default_value_t = 30.0)]
    pub seconds: f64,
    /// Worker threads for the parallel figures (default: one per core).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// A peer to measure in `bench peers` (repeatable): a command speaking
    /// the peer protocol.
    #[arg(long = "simplifier", value_name = "CMD")]
    pub simplifiers: Vec<String>,
    /// Cases of the `peers` campaign.
    #[arg(long, default_value_t = 300, value_name = "N")]
    pub peer_cases: u64,
    /// The longest line, in bytes, read from a peer's adapter in `bench
    /// peers` (see docs/protocol.md).
    #[arg(long, default_value_t = fuzz::peer::lines::DEFAULT_MAX_LINE, value_name = "BYTES")]
    pub peer_max_line: usize,
    /// The Python of the peers' venv (adapters/setup-venv.sh), for `bench
    /// tvm` (default: `.venv-peers/bin/python` in the repository).
    #[arg(long, value_name = "PATH")]
    pub tvm_python: Option<String>,
}

/// The seed every benchmark case is drawn from: fixed, so figures compare.
const BENCH_SEED: u64 = 0xBE4C;

pub fn run(a: Args) -> ExitCode {
    if !(a.seconds > 0.0 && a.seconds.is_finite()) {
        eprintln!("tileproof bench: --seconds must be a positive number");
        return ExitCode::from(1);
    }
    if a.jobs == Some(0) {
        eprintln!("tileproof bench: --jobs must be at least 1");
        return ExitCode::from(1);
    }
    let pool = match rayon::ThreadPoolBuilder::new()
        .num_threads(a.jobs.unwrap_or(0))
        .build()
    {
        Ok(p) => p,
        Err(e) => {
            eprintln!("tileproof bench: {e}");
            return ExitCode::from(1);
        }
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    say!(
        "command: {}",
        std::env::args().collect::<Vec<_>>().join(" ")
    );
    say!(
        "machine: {cores} cores; {} worker threads; {} build",
        pool.current_num_threads(),
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
    );
    pool.install(|| {
        if matches!(a.what, What::Simplify | What::All) {
            bench_simplify();
        }
        if matches!(a.what, What::Oracle | What::All) {
            bench_oracle();
        }
        if matches!(a.what, What::Campaign | What::All) {
            bench_campaign(a.seconds, a.jobs);
        }
        if matches!(a.what, What::Peers | What::All) {
            bench_peers(&a.simplifiers, a.peer_cases, a.jobs, a.peer_max_line);
        }
        if matches!(a.what, What::Scaling | What::All) {
            bench_scaling();
        }
        if matches!(a.what, What::Suites | What::All) {
            bench_suites();
        }
        if matches!(a.what, What::Tvm | What::All) {
            bench_tvm(a.tvm_python.as_deref());
        }
    });
    ExitCode::SUCCESS
}

fn cases(generator: Generator, n: u64) -> Vec<Case> {
    (0..n)
        .map(|k| Case::from_seed(generator, mix(BENCH_SEED, k)))
        .collect()
}

/// Seconds per pass of `simp` over `cases` (graphs are cloned before the
/// clock starts; at least a second of work, so the figure is stable), and
/// how many hit the cap.
fn time_simplify(simp: &Simplifier, cases: &[Case]) -> (f64, usize) {
    let mut rounds = 0u32;
    let mut elapsed = Duration::ZERO;
    let mut capped = 0;
    while elapsed < Duration::from_secs(1) {
        let mut graphs: Vec<Graph> = cases.iter().map(|c| c.graph.clone()).collect();
        let t = Instant::now();
        for (g, c) in graphs.iter_mut().zip(cases) {
            if simp.simplify(g, &c.roots, false).is_err() {
                capped += 1;
            }
        }
        elapsed += t.elapsed();
        rounds += 1;
    }
    (
        elapsed.as_secs_f64() / rounds as f64,
        capped / rounds as usize,
    )
}

fn bench_simplify() {
    let simp = Simplifier::new(builtin());
    let tiled = cases(Generator::Tiled, 1000);
    let expr = cases(Generator::Expr, 1000);
    let roots = |c: &[Case]| c.iter().map(|c| c.roots.len()).sum::<usize>();
    let (ts, tcap) = time_simplify(&simp, &tiled);
    let (es, ecap) = time_simplify(&simp, &expr);
    let total = ts + es;
    let nroots = roots(&tiled) + roots(&expr);
    say!(
        "simplify, 1 thread: {:.0} cases/s, {:.0} expressions/s over 2000 cases (1000 tiled + 1000 expr, {} expressions; {:.1} ms per pass)",
        2000.0 / total,
        nroots as f64 / total,
        nroots,
        total * 1e3
    );
    for (g, c, s, cap) in [
        (Generator::Tiled, &tiled, ts, tcap),
        (Generator::Expr, &expr, es, ecap),
    ] {
        say!(
            "  {g}: {:.0} cases/s, {:.0} expressions/s{}",
            c.len() as f64 / s,
            roots(c) as f64 / s,
            if cap > 0 {
                format!(" ({cap} hit the cap)")
            } else {
                String::new()
            }
        );
    }
    let all: Vec<&Case> = tiled.iter().chain(&expr).collect();
    let mut graphs: Vec<Graph> = all.iter().map(|c| c.graph.clone()).collect();
    let t = Instant::now();
    graphs
        .par_iter_mut()
        .zip(all.par_iter())
        .for_each(|(g, c)| {
            let _ = simp.simplify(g, &c.roots, false);
        });
    let s = t.elapsed().as_secs_f64();
    say!(
        "simplify, {}: {:.0} cases/s, {:.0} expressions/s",
        engine::print::count(rayon::current_num_threads(), "thread"),
        all.len() as f64 / s,
        nroots as f64 / s
    );
}

/// The oracle's case: the first benchmark tiled case with 2^18..2^21
/// points that the engine changes.
fn oracle_case(simp: &Simplifier) -> Option<(Case, Graph, Vec<NodeId>)> {
    (0..10_000u64).find_map(|k| {
        let c = Case::from_seed(Generator::Tiled, mix(BENCH_SEED, k));
        let d = c.domain_size();
        if !((1 << 18)..=(1 << 21)).contains(&d) {
            return None;
        }
        let mut g = c.graph.clone();
        let out = simp.simplify(&mut g, &c.roots, false).ok()?;
        (out.roots != c.roots).then_some((c, g, out.roots))
    })
}

fn bench_oracle() {
    let simp = Simplifier::new(builtin());
    let Some((case, g, tgt)) = oracle_case(&simp) else {
        say!("oracle: no suitable case among the benchmark cases");
        return;
    };
    say!(
        "oracle case: {} ({} points, {} nodes before, {} after simplification)",
        case.description,
        case.domain_size(),
        g.reachable(&case.roots).len(),
        g.reachable(&tgt).len()
    );
    for parallel in [false, true] {
        let cfg = OracleConfig {
            parallel,
            ..OracleConfig::at_width(Width::W64)
        };
        let t = Instant::now();
        let jit = check_jit(&g, &case.roots, &tgt, &cfg);
        let jit_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let int = check_interp(&g, &case.roots, &tgt, &cfg);
        let int_s = t.elapsed().as_secs_f64();
        let (Ok(jit), Ok(int)) = (jit, int) else {
            say!("oracle: the JIT or the interpreter oracle failed to run");
            return;
        };
        let agree = if jit == int { "agree" } else { "DISAGREE" };
        say!(
            "oracle, {}: JIT {:.3e} points/s ({:.1} ms incl. compiling), interpreter {:.3e} points/s ({:.0} ms); JIT/interpreter {:.0}x; both {}: {}",
            if parallel {
                engine::print::count(rayon::current_num_threads(), "thread")
            } else {
                "1 thread".to_string()
            },
            jit.points as f64 / jit_s,
            jit_s * 1e3,
            int.points as f64 / int_s,
            int_s * 1e3,
            int_s / jit_s,
            agree,
            jit
        );
        if !parallel {
            jit_per_core(&g, &case.roots, &tgt, &cfg);
        }
    }
}

/// The compiled oracle on one core, its compiling and its run timed
/// apart: points per second of the run, and what a sweep of 2^32 points
/// (one i32 variable) would take at that rate; then the batched evaluator
/// on the same case.
fn jit_per_core(g: &Graph, src: &[NodeId], tgt: &[NodeId], cfg: &OracleConfig) {
    let t = Instant::now();
    let Ok(oracle) = CompiledOracle::new(g, src, tgt, cfg) else {
        say!("oracle: the case does not compile");
        return;
    };
    let compile = t.elapsed().as_secs_f64();
    // At least half a second of running, for a stable rate.
    let (mut runs, mut elapsed, mut points) = (0u32, 0.0, 0u64);
    while elapsed < 0.5 || runs < 2 {
        let t = Instant::now();
        points += oracle.run(g).points;
        elapsed += t.elapsed().as_secs_f64();
        runs += 1;
    }
    let rate = points as f64 / elapsed;
    say!(
        "oracle JIT per core: {rate:.3e} points/s running ({:.1} ms to compile); a 2^32-point sweep: {:.1} s per core",
        compile * 1e3,
        (1u64 << 32) as f64 / rate
    );
    let t = Instant::now();
    match check_batched(g, src, tgt, cfg) {
        Ok(r) => {
            let s = t.elapsed().as_secs_f64();
            say!(
                "oracle batched evaluator per core: {:.3e} points/s (nothing compiled; {}: {})",
                r.points as f64 / s,
                if r.refines() { "agrees" } else { "reports" },
                r
            );
        }
        Err(e) => say!("oracle batched evaluator: {e}"),
    }
}

fn bench_campaign(seconds: f64, jobs: Option<usize>) {
    let threads = jobs.unwrap_or_else(rayon::current_num_threads).max(1);
    for g in Generator::ALL {
        // Beside all cases, those the oracle walks without compiling.
        for limit in [None, Some(walk::SMALL)] {
            let cfg = CampaignConfig {
                seed: BENCH_SEED,
                generator: GeneratorChoice::One(g),
                time: Some(Duration::from_secs_f64(seconds)),
                jobs,
                shrink_steps: 0,
                domain_limit: limit,
                ..CampaignConfig::default()
            };
            let label = match limit {
                None => format!("campaign {g}"),
                Some(m) => format!("campaign {g}, domains <= {m} points"),
            };
            match campaign::run(&cfg, builtin(), &Hooks::default()) {
                Ok(s) => say!(
                    "{label}: {:.0} cases/s, {:.0} per core ({} cases in {:.1} s on {}, each with a variant{}; {} of {} rules fired; {} findings)",
                    s.cases_per_sec(),
                    s.cases_per_sec() / threads as f64,
                    s.cases,
                    s.elapsed.as_secs_f64(),
                    engine::print::count(threads, "thread"),
                    match (s.skipped_variants, s.skipped) {
                        (0, 0) => String::new(),
                        (v, c) => format!(
                            " within the limit ({v} larger); {c} larger cases skipped"
                        ),
                    },
                    s.rules_covered(),
                    s.rule_names.len(),
                    s.total_findings()
                ),
                Err(e) => say!("{label}: {e}"),
            }
        }
    }
    reshape_round_trips(200);
}

/// The power figure of the hlo generator: reshapes to another shape and
/// back, composed, that the engine simplifies to the identity.
fn reshape_round_trips(n: u64) {
    let simp = Simplifier::new(builtin());
    let mut identity = 0;
    let mut missed = Vec::new();
    for k in 0..n {
        let mut c = fuzz::generate::hlo::reshape_round_trip(mix(BENCH_SEED, k));
        let out = match simp.simplify(&mut c.graph, &c.roots, false) {
            Ok(o) => o.roots,
            Err(e) => {
                say!("hlo reshape round trips: {e}");
                return;
            }
        };
        let dims: Vec<String> = (0..c.roots.len()).map(|i| format!("d{i}")).collect();
        if engine::compose::is_identity(&c.graph, &dims, &out) {
            identity += 1;
        } else if missed.len() < 3 {
            missed.push(c.description.clone());
        }
    }
    say!(
        "hlo reshape round trips: {identity} of {n} simplify to the identity (power, not soundness){}",
        if missed.is_empty() {
            String::new()
        } else {
            format!("; not: {}", missed.join("; "))
        }
    );
}

/// One fixed campaign (seed, case count, both generators, variants, the
/// JIT oracle only: what a peer is checked by; no SMT, no shrinking, no
/// corpus) against each subject.
fn bench_peers(simplifiers: &[String], cases: u64, jobs: Option<usize>, max_line: usize) {
    let cfg = CampaignConfig {
        // The tiled and expression cases, as this figure has always used:
        // comparable across versions.
        generator: fuzz::campaign::GeneratorChoice::Both,
        seed: BENCH_SEED,
        cases: Some(cases),
        jobs,
        shrink_steps: 0,
        check: fuzz::checks::CheckConfig {
            kinds: fuzz::checks::KindSet::only(fuzz::checks::Kind::Oracle),
            ..fuzz::checks::CheckConfig::default()
        },
        ..CampaignConfig::default()
    };
    let mut simp = Simplifier::new(builtin());
    simp.width = Width::W64;
    // The profile `tileproof serve` declares (index and bool only), so that
    // the in-process engine and the served one check the same cases.
    let profile = fuzz::subject::Profile {
        concrete_dtypes: false,
        ..fuzz::subject::Profile::engine(Width::W64)
    };
    let engine = fuzz::subject::Engine::new(simp, Vec::new()).with_profile(profile);
    let base = report_peer("engine, in process", &cfg, &engine, None, None);
    // The same campaign on small domains: the rate a peer's own speed
    // bounds, not the oracle's walk of large domains.
    let small = CampaignConfig {
        domain_limit: Some(walk::SMALL),
        ..cfg.clone()
    };
    let base_small = report_peer(
        &format!("engine, in process, domains <= {} points", walk::SMALL),
        &small,
        &engine,
        None,
        None,
    );
    let me =
        std::env::current_exe().map_or_else(|_| "tileproof".into(), |p| p.display().to_string());
    let mut commands = vec![format!("{} serve", fuzz::subject::shell_quote(&me))];
    commands.extend(simplifiers.iter().cloned());
    for cmd in &commands {
        match fuzz::peer::Peer::start_bounded(cmd, Duration::from_secs(10), max_line) {
            Ok(p) => {
                let label = format!("{} (`{cmd}`)", fuzz::subject::Subject::name(&p));
                let t = Instant::now();
                let off = report_peer(&label, &cfg, &p, base, None);
                // The same campaign looking for missed simplifications: its
                // cost is the ratio of the two rates, measured in one run.
                let profile = fuzz::subject::Subject::profile(&p).clone();
                let prover = tileproof::decide::smt_validator(
                    Hunter::model_of(&profile),
                    fuzz::missed::SOLVER_TIMEOUT,
                );
                let hunter = Hunter::new(builtin(), profile, Some(&prover));
                let on = report_peer(
                    &format!("{label}, missed simplifications on"),
                    &cfg,
                    &p,
                    base,
                    Some(&hunter),
                );
                if off.is_some() && on.is_some() {
                    hunt_cost(&cfg, &p, &hunter);
                }
                report_peer(
                    &format!("{label}, domains <= {} points", walk::SMALL),
                    &small,
                    &p,
                    base_small,
                    None,
                );
                let (busy, answers) = p.busy();
                let workers = fuzz::campaign::workers(cfg.jobs);
                say!(
                    "      the peer's share: {:.0}% of the {workers} workers' time waiting for its {answers} answers ({:.2} ms per answer)",
                    100.0 * busy / (t.elapsed().as_secs_f64() * workers as f64).max(1e-9),
                    1e3 * busy / answers.max(1) as f64
                );
                let name = fuzz::subject::Subject::name(&p).to_string();
                if name.starts_with("morok.") {
                    side_by_side_with_morok(
                        &label,
                        cmd,
                        &fuzz::subject::Subject::profile(&p).clone(),
                    );
                }
            }
            Err(e) => say!("peers: {e}"),
        }
    }
}

/// Cases of the side-by-side benchmark against Morok.
const SIDE_BY_SIDE_CASES: u64 = 2000;

/// tileproof's engine against Morok's `symbolic()` and `sym()` in one
/// process, the one place where the two simplifiers' own times compare
/// (through the protocol, the pipe and the JSON cost most of either's):
/// the campaign generators' cases (every generator, the seeded one's
/// examples from the peers' tests included), projected onto Morok's
/// profile, written for Morok's adapter, which links tileproof's engine
/// and times both (`tileproof-morok --bench FILE`,
/// adapters/morok/src/bench.rs).
fn side_by_side_with_morok(label: &str, cmd: &str, profile: &fuzz::subject::Profile) {
    let mut lines = String::new();
    for k in 0..SIDE_BY_SIDE_CASES {
        let generator = GeneratorChoice::All.for_case(BENCH_SEED, k);
        let Ok(c) = fuzz::checks::catch(|| {
            let mut c = Case::from_seed(generator, mix(BENCH_SEED, k));
            if !profile.covers(&c.graph, &c.roots) {
                (c.graph, c.roots) = profile.project(&c.graph, &c.roots);
            }
            c
        }) else {
            continue;
        };
        let request = fuzz::peer::request(&c.graph, &c.roots, k);
        let line = serde_json::json!({"text": c.program(), "request": request});
        lines.push_str(&line.to_string());
        lines.push('\n');
    }
    let path = std::env::temp_dir().join(format!(
        "tileproof-bench-morok-{}.jsonl",
        std::process::id()
    ));
    if let Err(e) = std::fs::write(&path, lines) {
        say!(
            "peers {label} side by side: cannot write {}: {e}",
            path.display()
        );
        return;
    }
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "{cmd} --bench {}",
            fuzz::subject::shell_quote(&path.display().to_string())
        ))
        .output();
    let _ = std::fs::remove_file(&path);
    match out {
        Ok(o) if o.status.success() => {
            let text = String::from_utf8_lossy(&o.stdout);
            let mut lines = text.lines();
            if let Some(first) = lines.next() {
                say!("peers {label} side by side, {first}");
            }
            for line in lines {
                say!("    {line}");
            }
        }
        Ok(o) => say!(
            "peers {label} side by side: not measured: `{cmd} --bench` failed: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        ),
        Err(e) => say!("peers {label} side by side: not measured: {e}"),
    }
}

/// Rounds of the campaign with and without looking for missed
/// simplifications, alternated, whose ratios' median is the hunt's cost:
/// one pair of short runs on a shared machine is noise, and a peer warms
/// up (Python's caches) over its first run.
const HUNT_ROUNDS: usize = 3;

/// The cases of each of those campaigns, at least: the prover's cost is
/// per rule (its first cases, [`fuzz::missed::Budget`]), which a campaign
/// of minutes spreads over far more cases than a run of a second.
const HUNT_CASES: u64 = 1500;

/// Prints the rate with missed simplifications on as a share of the rate
/// without, the median of [`HUNT_ROUNDS`] alternating pairs of campaigns
/// of at least [`HUNT_CASES`] cases.
fn hunt_cost(cfg: &CampaignConfig, subject: &dyn fuzz::subject::Subject, hunter: &Hunter<'_>) {
    let cases = cfg.cases.unwrap_or(0).max(HUNT_CASES);
    let cfg = CampaignConfig {
        cases: Some(cases),
        ..cfg.clone()
    };
    let rate = |missed| run_peer(&cfg, subject, missed).map(|s| s.cases_per_sec());
    let mut pairs = Vec::new();
    for round in 0..HUNT_ROUNDS {
        // Alternate which goes first, so that neither is always the warmer.
        let pair = if round % 2 == 1 {
            let on = rate(Some(hunter));
            (rate(None), on)
        } else {
            let off = rate(None);
            (off, rate(Some(hunter)))
        };
        match pair {
            (Ok(off), Ok(on)) => pairs.push((off, on)),
            (Err(e), _) | (_, Err(e)) => {
                say!("      missed simplifications on: round {round}: {e}");
                return;
            }
        }
    }
    let mut shares: Vec<f64> = pairs.iter().map(|&(off, on)| on / off.max(1e-9)).collect();
    shares.sort_by(f64::total_cmp);
    let rounds: Vec<String> = pairs
        .iter()
        .map(|(off, on)| format!("{on:.0}/{off:.0}"))
        .collect();
    say!(
        "      missed simplifications on: {:.0}% of the rate without them (median of {} alternating rounds of {cases} cases, on/off cases/s: {})",
        100.0 * shares[shares.len() / 2],
        pairs.len(),
        rounds.join(", ")
    );
}

/// The campaign `cfg` against `subject` at its width, looking for missed
/// simplifications with `missed` (counted, not written).
fn run_peer(
    cfg: &CampaignConfig,
    subject: &dyn fuzz::subject::Subject,
    missed: Option<&Hunter<'_>>,
) -> Result<campaign::Summary, campaign::CampaignError> {
    let mut cfg = cfg.clone();
    cfg.check.width = subject.profile().width();
    let hooks = Hooks {
        missed,
        ..Hooks::default()
    };
    campaign::run_subject(&cfg, subject, &hooks)
}

/// Runs the campaign against `subject` and prints its rate (and the ratio
/// to `base`, the in-process engine's), looking for missed simplifications
/// with `missed` (counted, not written). Returns the rate.
fn report_peer(
    label: &str,
    cfg: &CampaignConfig,
    subject: &dyn fuzz::subject::Subject,
    base: Option<f64>,
    missed: Option<&Hunter<'_>>,
) -> Option<f64> {
    match run_peer(cfg, subject, missed) {
        Ok(s) => {
            let rate = s.cases_per_sec();
            let declined: u64 = s.unsupported.values().sum();
            let threads = fuzz::campaign::workers(cfg.jobs);
            say!(
                "peers {label}: {rate:.0} cases/s, {:.0} per core ({} cases in {:.1} s; {} programs answered, {declined} declined; {} findings){}",
                rate / threads.max(1) as f64,
                s.cases,
                s.elapsed.as_secs_f64(),
                s.answered,
                s.total_findings(),
                base.map_or_else(String::new, |b| format!("; {:.2}x the in-process engine's time", b / rate.max(1e-9)))
            );
            if s.missed.on {
                let rejected: u64 = s.missed.rejected.values().sum();
                say!(
                    "      {} missed simplifications by {} of the engine's rules; {rejected} cheaper answers not proved equal; {} of the engine's own (the peer's answer cheaper)",
                    s.missed.cases,
                    s.missed.buckets.len(),
                    s.missed.engine_missed.cases
                );
            }
            Some(rate)
        }
        Err(e) => {
            say!("peers {label}: {e}");
            None
        }
    }
}

/// One tiled index expression over `x`, `y` (a tile of `c` columns, split
/// into digits and recombined), distinct per `i` so that hash-consing does
/// not share it with another: `((x*c + y) // 8) mod 4 * 8 + (x*c + y) mod
/// 8 + (x*c + y) // 32 * 32 + i`.
fn tiled_term(g: &mut Graph, x: NodeId, y: NodeId, i: i64) -> NodeId {
    use engine::ir::{DType, Op};
    let k = |g: &mut Graph, v: i64| g.cnst(v, DType::Index);
    let (c, c8, c4, c32, ci) = (k(g, 64 + i), k(g, 8), k(g, 4), k(g, 32), k(g, i));
    let xc = g.mk(Op::Mul, &[x, c]);
    let base = g.mk(Op::Add, &[xc, y]);
    let q = g.mk(Op::FloorDiv, &[base, c8]);
    let d1 = g.mk(Op::Mod, &[q, c4]);
    let t1 = g.mk(Op::Mul, &[d1, c8]);
    let d0 = g.mk(Op::Mod, &[base, c8]);
    let q32 = g.mk(Op::FloorDiv, &[base, c32]);
    let t2 = g.mk(Op::Mul, &[q32, c32]);
    let s = g.mk(Op::Add, &[t1, d0]);
    let s = g.mk(Op::Add, &[s, t2]);
    g.mk(Op::Add, &[s, ci])
}

/// A graph of `n` tiled terms: `n` roots, or one sum of them.
fn scaling_graph(n: usize, one_sum: bool) -> (Graph, Vec<NodeId>) {
    use engine::ir::{DType, Op};
    let mut g = Graph::new();
    let x = g.declare_var("x", DType::Index, 0, 1000).expect("x");
    let y = g.declare_var("y", DType::Index, 0, 63).expect("y");
    let (x, y) = (g.var_node(x), g.var_node(y));
    let terms: Vec<NodeId> = (0..n as i64).map(|i| tiled_term(&mut g, x, y, i)).collect();
    if one_sum {
        let sum = terms[1..]
            .iter()
            .fold(terms[0], |a, &t| g.mk(Op::Add, &[a, t]));
        (g, vec![sum])
    } else {
        (g, terms)
    }
}

fn bench_scaling() {
    let simp = Simplifier::new(builtin());
    for one_sum in [false, true] {
        let mut per_node = Vec::new();
        for target in [1_000usize, 10_000, 100_000] {
            // Each term is about 16 nodes.
            let (g0, roots) = scaling_graph(target / 16, one_sum);
            let nodes = g0.reachable(&roots).len();
            let mut rounds = 0u32;
            let mut elapsed = Duration::ZERO;
            let mut capped = false;
            while elapsed < Duration::from_millis(500) || rounds < 2 {
                let mut g = g0.clone();
                let t = Instant::now();
                capped |= simp.simplify(&mut g, &roots, false).is_err();
                elapsed += t.elapsed();
                rounds += 1;
            }
            let s = elapsed.as_secs_f64() / rounds as f64;
            per_node.push(s * 1e9 / nodes as f64);
            say!(
                "scaling, {}: {nodes} nodes in {:.2} ms, {:.0} ns per node{}",
                if one_sum {
                    "one sum of tiled terms"
                } else {
                    "independent tiled expressions"
                },
                s * 1e3,
                s * 1e9 / nodes as f64,
                if capped { " (hit the cap)" } else { "" }
            );
        }
        let lo = per_node.iter().cloned().fold(f64::INFINITY, f64::min);
        let hi = per_node.iter().cloned().fold(0.0, f64::max);
        say!(
            "  time per node varies {:.2}x from 1k to 100k nodes",
            hi / lo
        );
    }
}

/// The peers' converted suites (embedded, read by the one reader
/// [`engine::suite::read_suite`] through [`fuzz::suite`]): per suite, each
/// case's input program.
fn peer_suite_cases() -> Vec<(String, Vec<engine::parse::Program>)> {
    fuzz::suite::all()
        .iter()
        .map(|(name, suite)| {
            let progs = suite.cases.iter().filter_map(fuzz::suite::input).collect();
            (name.to_string(), progs)
        })
        .collect()
}

/// How far the engine goes on each case of a suite against the peer's
/// form: each case parsed whole (the peer's form and domain are its
/// `expect` lines), its input simplified at the suite's width (a case that
/// hits the firing cap keeps its input), the two forms' costs compared.
fn suite_power(name: &str, suite: &engine::suite::Suite) {
    use engine::suite::{cost, Reach};
    let mut simp = Simplifier::new(builtin());
    simp.width = suite.width;
    let (mut cases, mut better, mut worse) = (0, 0, Vec::new());
    for c in &suite.cases {
        let Ok(mut p) = engine::parse::parse_program(&c.body) else {
            continue;
        };
        let roots = match simp.simplify(&mut p.graph, &p.outputs, false) {
            Ok(o) => o.roots,
            Err(_) => p.outputs.clone(),
        };
        let peer_domain = p.expect_constraints.clone();
        let peer_domain = peer_domain.unwrap_or_else(|| p.constraints.clone());
        let engine = cost(&mut p.graph, &roots, &p.constraints);
        let peer = cost(&mut p.graph, &p.expects, &peer_domain);
        cases += 1;
        match Reach::of(engine, peer) {
            Reach::Better => better += 1,
            Reach::AsFar => {}
            Reach::Worse => worse.push(c.name.as_str()),
        }
    }
    // Further: fewer div/mod or constraints in the results and no more of
    // either (`Reach::Better` for tileproof, `Reach::Worse` for the peer).
    say!(
        "suite {name}: {cases} cases: tileproof further on {better}, peer further on {}{}{}, as far on {} (div/mod in the results, then constraints on the domain)",
        worse.len(),
        if worse.is_empty() { "" } else { ": " },
        worse.join(", "),
        cases - better - worse.len()
    );
}

fn bench_suites() {
    for (name, suite) in fuzz::suite::all() {
        suite_power(name, suite);
    }
    let simp = Simplifier::new(builtin());
    for (suite, progs) in peer_suite_cases() {
        let exprs: usize = progs.iter().map(|p| p.outputs.len()).sum();
        let mut rounds = 0u32;
        let mut elapsed = Duration::ZERO;
        while elapsed < Duration::from_millis(500) {
            let mut graphs: Vec<Graph> = progs.iter().map(|p| p.graph.clone()).collect();
            let t = Instant::now();
            for (g, p) in graphs.iter_mut().zip(&progs) {
                let _ = simp.simplify(g, &p.outputs, false);
            }
            elapsed += t.elapsed();
            rounds += 1;
        }
        let s = elapsed.as_secs_f64() / rounds as f64;
        say!(
            "suite {suite}: {} cases, {exprs} expressions, {:.1} us per expression",
            progs.len(),
            s * 1e6 / exprs.max(1) as f64
        );
    }
}

/// The TVM suites' cases: each input program, with the seconds its text
/// takes to parse (the median of repeated parses, like simplify's).
fn tvm_cases() -> Vec<(engine::parse::Program, f64)> {
    fuzz::suite::all()
        .iter()
        .filter(|(name, _)| name.starts_with("tvm_"))
        .flat_map(|(_, suite)| &suite.cases)
        .filter_map(|c| {
            let text = fuzz::suite::input_text(c);
            let p = engine::parse::parse_program(&text).ok()?;
            let mut runs: Vec<f64> = (0..15)
                .map(|_| {
                    let t = Instant::now();
                    let again = engine::parse::parse_program(&text);
                    let took = t.elapsed().as_secs_f64();
                    drop(again);
                    took
                })
                .collect();
            Some((p, median_p90(&mut runs).0))
        })
        .collect()
}

/// The median and 90th percentile of `v` (sorted here).
fn median_p90(v: &mut [f64]) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.9))
}

/// Simplify per case on TVM's own arith tests: the engine in process
/// (each case on a fresh clone of its parsed graph, the median of 15
/// single calls) against TVM's `Analyzer.simplify` timed the same way from
/// Python on the same cases (bench/tvm_simplify.py), side by side with the
/// ratio.
fn bench_tvm(python: Option<&str>) {
    let cases = tvm_cases();
    if cases.is_empty() {
        say!("simplify per case, engine vs TVM: no TVM suite cases read");
        return;
    }
    let simp = Simplifier::new(builtin());
    let engine: Vec<f64> = cases
        .iter()
        .map(|(p, _)| {
            let mut runs: Vec<f64> = (0..15)
                .map(|_| {
                    let mut g = p.graph.clone();
                    let t = Instant::now();
                    let _ = simp.simplify(&mut g, &p.outputs, false);
                    t.elapsed().as_secs_f64()
                })
                .collect();
            median_p90(&mut runs).0
        })
        .collect();
    let mut parse: Vec<f64> = cases.iter().map(|c| c.1).collect();
    let (pm, pp) = median_p90(&mut parse);
    let (em, ep) = median_p90(&mut engine.clone());
    say!(
        "simplify per case, engine: median {:.1} us, p90 {:.1} us over {} cases of TVM's arith tests (parsing apart: median {:.1} us, p90 {:.1} us)",
        em * 1e6,
        ep * 1e6,
        cases.len(),
        pm * 1e6,
        pp * 1e6
    );
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = python.map_or_else(|| root.join(".venv-peers/bin/python"), Into::into);
    if !python.exists() {
        say!(
            "simplify per case, TVM: not measured: {} does not exist (make the peers' venv with adapters/setup-venv.sh, or pass --tvm-python PATH)",
            python.display()
        );
        return;
    }
    match tvm_times(&python, &root.join("bench/tvm_simplify.py"), &cases) {
        Ok((times, unsupported)) => {
            let both: Vec<(f64, f64)> = times
                .iter()
                .enumerate()
                .filter_map(|(i, t)| t.map(|t| (engine[i], t)))
                .collect();
            if both.is_empty() {
                say!("simplify per case, TVM: no case answered ({unsupported} unsupported)");
                return;
            }
            let (mut e, mut t): (Vec<f64>, Vec<f64>) = both.iter().copied().unzip();
            let ((em, ep), (tm, tp)) = (median_p90(&mut e), median_p90(&mut t));
            say!(
                "simplify per case, engine vs TVM ({} cases both take; {unsupported} TVM does not): engine median {:.1} us, p90 {:.1} us; TVM Analyzer.simplify (from Python, FFI included) median {:.1} us, p90 {:.1} us; the engine takes {:.2}x TVM's time at the median, {:.2}x at p90",
                both.len(),
                em * 1e6,
                ep * 1e6,
                tm * 1e6,
                tp * 1e6,
                em / tm,
                ep / tp
            );
        }
        Err(e) => say!("simplify per case, TVM: not measured: {e}"),
    }
}

/// TVM's seconds per case (`None` where its adapter declines the case)
/// and how many it declined, from bench/tvm_simplify.py.
fn tvm_times(
    python: &std::path::Path,
    script: &std::path::Path,
    cases: &[(engine::parse::Program, f64)],
) -> Result<(Vec<Option<f64>>, usize), String> {
    let dir = std::env::temp_dir().join(format!("tileproof-bench-tvm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let requests = dir.join("requests.jsonl");
    let text: String = cases
        .iter()
        .enumerate()
        .map(|(i, (p, _))| {
            fuzz::peer::line(&fuzz::peer::request(&p.graph, &p.outputs, i as u64)) + "\n"
        })
        .collect();
    std::fs::write(&requests, text).map_err(|e| format!("{}: {e}", requests.display()))?;
    let out = std::process::Command::new(python)
        .arg(script)
        .arg(&requests)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", python.display()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = out?;
    if !out.status.success() {
        return Err(format!(
            "{} {} failed ({}): {}",
            python.display(),
            script.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        ));
    }
    let mut times = vec![None; cases.len()];
    let mut unsupported = 0;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let v: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("bad line `{line}`: {e}"))?;
        let id = v["id"].as_u64().ok_or(format!("no id in `{line}`"))? as usize;
        match v["seconds"].as_f64() {
            Some(t) if id < times.len() => times[id] = Some(t),
            _ => unsupported += 1,
        }
    }
    Ok((times, unsupported))
}
