//! `tileproof fuzz`: a fuzz campaign of generated cases (see
//! `fuzz::campaign`) against tileproof's engine or a peer's simplifier
//! (`--simplifier CMD`), with the validator (`tileproof::decide`) plugged
//! into the campaign's hook, a progress display, and a summary.
//!
//! Also the helpers the other fuzzing subcommands (`replay`, `import`,
//! `bench`, `gate`) share: the summary, the progress display, output that
//! survives a closed pipe.

use super::output::say;
use super::summary::{print_summary, summary_json, Display};
use super::{exit, parse_timeout, parse_width, peer_dir_name, SubjectArgs, Under};
use engine::dtype::Width;
use engine::print::count;
use fuzz::campaign::{self, CampaignConfig, GeneratorChoice, Hooks, Progress, Shard};
use fuzz::checks::{CheckConfig, KindSet, Validator};
use fuzz::missed::Hunter;
use fuzz::propose::Language;
use fuzz::subject::Subject;
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(clap::Args)]
#[command(
    after_help = "Exit status: 0 no finding; 2 findings (written to the corpus), or arguments clap rejects; 1 other errors.\n\n\
Examples:\n  tileproof fuzz --time 60\n  tileproof fuzz --seed 7 --cases 2000 --generator expr --corpus /tmp/c\n  \
tileproof fuzz --seed 7 --shard 0/4 --time 600      # one of four CI jobs\n  \
tileproof fuzz --simplifier 'python3 adapters/tinygrad_adapter.py' --time 600   # test a peer"
)]
pub struct Args {
    /// Time budget in seconds (default 60; with --cases alone, no limit).
    #[arg(long, value_name = "SECONDS")]
    pub time: Option<f64>,
    /// Stop after this many cases: the same seed and shard then check
    /// exactly the same cases.
    #[arg(long, value_name = "N")]
    pub cases: Option<u64>,
    /// Campaign seed (default: from the clock, printed). Case k of seed S
    /// is the same case in every run.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Worker threads (default: one per core).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Which generator: tiled (tensor views), expr (expression trees),
    /// splitsum (comparisons, min/max, where over split sums of both
    /// division families), seeded (the peers' own test cases, edited past
    /// their rules' conditions), hlo (XLA indexing maps of fused HLO op
    /// chains, composed), both (tiled and expr) or all.
    #[arg(long, default_value = "all", value_name = "GEN")]
    pub generator: GeneratorChoice,
    /// Against a peer that lists its own rules (`prove --simplifier`):
    /// instances of each of its rules the seeded generator starts from, half
    /// of its cases, beside the suites' (0: the suites only).
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub rule_seeds: usize,
    /// Where findings are written (default: corpus/, or corpus/peers/NAME
    /// for a peer).
    #[arg(long, value_name = "DIR")]
    pub corpus: Option<PathBuf>,
    /// Run shard I of N: case numbers I, I+N, I+2N, ... (needs --seed).
    #[arg(long, value_name = "I/N")]
    pub shard: Option<Shard>,
    /// Width of `index` the engine simplifies at and the oracle checks at
    /// (a peer is checked at its profile's width).
    #[arg(long, default_value_t = 64)]
    pub width: u32,
    /// Validate every K-th case with Z3 as well (0: never).
    #[arg(long, default_value_t = 256, value_name = "K")]
    pub validate_every: u64,
    /// Z3 timeout per query of a validation, in seconds.
    #[arg(long, default_value_t = 2.0, value_name = "SECONDS")]
    pub validate_timeout: f64,
    /// Write at most this many findings of one cause (a bucket: the shrunk
    /// case with names and constants abstracted, the failure and its
    /// class); the others are counted in their bucket.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub max_findings: usize,
    /// Stop once this many distinct causes were found (at the end of the
    /// batch; default: run the whole budget).
    #[arg(long, value_name = "N")]
    pub max_causes: Option<usize>,
    /// Checks a shrink may run per finding (0: do not shrink); a peer's finding
    /// shrunk through its backend runs at most 150 (each is a compile).
    #[arg(long, default_value_t = 2000, value_name = "N")]
    pub shrink_steps: usize,
    /// Check only the generated cases, not also a variant of each.
    #[arg(long)]
    pub no_variants: bool,
    /// Against a peer: do not look for missed simplifications (answers of
    /// the peer that tileproof's engine, under the peer's semantics,
    /// provably makes cheaper; written to the corpus's `missed/`, never
    /// counted as findings).
    #[arg(long, requires = "simplifier")]
    pub no_missed: bool,
    #[command(flatten)]
    pub subject: SubjectArgs,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

fn clock_seed() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    // Small enough to type back in.
    (t.as_nanos() as u64) % 1_000_000_007
}

pub fn run(a: Args) -> ExitCode {
    exit("fuzz", run_campaign(a))
}

fn run_campaign(a: Args) -> anyhow::Result<ExitCode> {
    let width = parse_width(a.width)?;
    let timeout = parse_timeout(a.validate_timeout)?;
    let time = a
        .time
        .map(|t| super::parse_seconds("--time", t))
        .transpose()?;
    anyhow::ensure!(a.cases != Some(0), "--cases must be at least 1");
    anyhow::ensure!(a.jobs != Some(0), "--jobs must be at least 1");
    anyhow::ensure!(
        !(a.shard.is_some_and(|s| s.count > 1) && a.seed.is_none()),
        "--shard needs --seed: every shard of a campaign must use the same seed"
    );
    anyhow::ensure!(
        a.subject.peer_rule.is_none(),
        "--peer-rule is for `replay` and `check` (a campaign's cases seldom match one rule's pattern: `prove --simplifier` builds its instances)"
    );
    anyhow::ensure!(
        a.subject.peer_stage.is_none(),
        "--peer-stage is for `replay` and `check`: a campaign tests the peer's whole entry point"
    );
    let under = a.subject.load()?;
    let engine = under.engine(width);
    let subject: &dyn Subject = match (&under, &engine) {
        (Under::Peer(p), _) => p,
        (_, Some(e)) => e,
        (Under::Engine(..), None) => unreachable!("an engine subject for the engine"),
    };
    // A peer is judged at its own width, by the checks that concern it.
    let model = under.model(width);
    let check_width = model.width;
    let corpus_dir = a.corpus.clone().unwrap_or_else(|| match &under {
        Under::Peer(p) => PathBuf::from("corpus")
            .join("peers")
            .join(peer_dir_name(&p.name())),
        Under::Engine(..) => PathBuf::from("corpus"),
    });
    let seed = a.seed.unwrap_or_else(clock_seed);
    let time = match (time, a.cases) {
        (Some(t), _) => Some(t),
        (None, Some(_)) => None,
        (None, None) => Some(Duration::from_secs(60)),
    };
    let mut jobs = fuzz::campaign::workers(a.jobs);
    if let Under::Peer(p) = &under {
        // Each worker waits on its adapter: as many workers as adapters.
        jobs = jobs.max(p.processes());
    }
    let rule_seeds = rule_seeds(&a, &under, seed)?;
    let cfg = CampaignConfig {
        rule_seeds: std::sync::Arc::new(rule_seeds),
        seed,
        shard: a.shard.unwrap_or(Shard::WHOLE),
        generator: a.generator,
        cases: a.cases,
        time,
        jobs: Some(jobs),
        simplify_width: width,
        check: CheckConfig {
            width: check_width,
            kinds: KindSet::ALL,
            ..CheckConfig::default()
        },
        confirm: under.confirm(a.subject.no_confirm),
        validate_every: a.validate_every,
        corpus: Some(corpus_dir.clone()),
        shrink_steps: a.shrink_steps,
        max_findings: Some(a.max_findings),
        max_causes: a.max_causes,
        variants: !a.no_variants,
        ..CampaignConfig::default()
    };
    eprintln!(
        "tileproof fuzz: {}; seed {seed}, shard {}, generator {}, width {check_width}, {}, {}, corpus {}",
        subject.name(),
        cfg.shard,
        cfg.generator,
        count(jobs, "job"),
        match (time, a.cases) {
            (Some(t), Some(n)) => format!("{:.0} s or {}", t.as_secs_f64(), count(n, "case")),
            (Some(t), None) => format!("{:.0} s", t.as_secs_f64()),
            (None, Some(n)) => count(n, "case"),
            (None, None) => unreachable!(),
        },
        corpus_dir.display()
    );

    let display = Display::new(time, a.cases);
    let progress = |p: &Progress| display.update(p);
    let validator = tileproof::decide::validator(model, timeout);
    let missed_rules = match &under {
        Under::Peer(_) if !a.no_missed => Some(super::rules_over_builtin(&a.subject.rules)?),
        _ => None,
    };
    let prover = tileproof::decide::smt_validator(
        Hunter::model_of(subject.profile()),
        fuzz::missed::SOLVER_TIMEOUT.min(timeout),
    );
    let hunter = missed_rules.as_ref().map(|rules| {
        Hunter::new(rules, subject.profile().clone(), Some(&prover))
            .proposing(Language::of_peer(&subject.name()))
    });
    let hooks = Hooks {
        validator: (a.validate_every > 0).then_some(&validator as &Validator<'_>),
        progress: Some(&progress),
        missed: hunter.as_ref(),
    };
    let s = campaign::run_subject(&cfg, subject, &hooks)?;
    display.finish();
    if let Under::Peer(p) = &under {
        let restarts = p.started.load(std::sync::atomic::Ordering::Relaxed);
        let (busy, requests) = p.busy();
        eprintln!(
            "tileproof fuzz: {restarts} adapter process(es) started after the first; the peer's share: {:.0}% of the {jobs} workers' time waiting for {} answers ({:.1} ms per answer; at most {} adapter processes)",
            100.0 * busy / (s.elapsed.as_secs_f64() * jobs as f64).max(1e-9),
            requests,
            1e3 * busy / (requests.max(1) as f64),
            p.processes()
        );
    }

    report(&a, &under, &cfg, &s, check_width);
    // A finding that could not be written is printed whole, on stdout, and
    // the campaign fails: it must not be lost.
    let unwritten: Vec<&(String, String)> = s
        .findings
        .iter()
        .filter_map(|f| f.unwritten.as_ref())
        .collect();
    for (error, text) in &unwritten {
        eprintln!("tileproof fuzz: error: {error}; the finding follows on stdout");
        say!("{text}");
    }
    if !unwritten.is_empty() {
        return Ok(ExitCode::from(1));
    }
    Ok(if s.total_findings() > 0 {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}

/// The peer's own rules, instantiated, that seed the seeded generator
/// (none for the engine, a peer without rules, or another generator).
fn rule_seeds(a: &Args, under: &Under, seed: u64) -> anyhow::Result<Vec<fuzz::generate::RuleSeed>> {
    let seeded = matches!(
        a.generator,
        GeneratorChoice::All | GeneratorChoice::One(fuzz::generate::Generator::Seeded)
    );
    Ok(match under {
        Under::Peer(p) if p.has_rules() && seeded && a.rule_seeds > 0 => {
            let rules = fuzz::peer_rules::list(p)?;
            let seeds = fuzz::peer_rules::rule_seeds(p, &rules, a.rule_seeds, seed)?;
            eprintln!(
                "tileproof fuzz: {} of the peer's rules seed the seeded generator ({})",
                seeds
                    .iter()
                    .map(|s| &s.rule)
                    .collect::<std::collections::BTreeSet<_>>()
                    .len(),
                count(seeds.len(), "instance")
            );
            seeds
        }
        _ => Vec::new(),
    })
}

/// The campaign's summary on stdout (JSON with `--json`), with which of a
/// peer's reachable rules fired.
fn report(
    a: &Args,
    under: &Under,
    cfg: &CampaignConfig,
    s: &campaign::Summary,
    check_width: Width,
) {
    let reachable: Option<Vec<bool>> = match under {
        Under::Peer(p) if !cfg.rule_seeds.is_empty() => Some(fuzz::peer_rules::reachable(
            p.rule_names(),
            &s.rule_counts,
            &cfg.rule_seeds,
            p.profile(),
        )),
        Under::Peer(p) if !p.rule_reachable().is_empty() => Some(p.rule_reachable().to_vec()),
        _ => None,
    };
    if a.json {
        let mut j = summary_json(s, check_width);
        if let Some(r) = &reachable {
            j["rules_reachable"] = json!(r.iter().filter(|&&x| x).count());
            j["rules_reachable_covered"] = json!(reachable_fired(s, r));
            j["rules_reachable_never_fired"] = json!(reachable_never_fired(s, r));
        }
        say!("{j}");
    } else {
        print_summary(s, check_width);
        if let Some(r) = &reachable {
            say!(
                "  of the {} rules an input tileproof can express can match (one of their instances is in the peer's input language; `tileproof prove --simplifier` lists the others and why): {} fired",
                r.iter().filter(|&&x| x).count(),
                reachable_fired(s, r)
            );
            let never = reachable_never_fired(s, r);
            if !never.is_empty() {
                say!("  of those, never fired: {}", never.join(", "));
            }
        }
    }
}

/// How many of the rules marked reachable fired.
fn reachable_fired(s: &campaign::Summary, reachable: &[bool]) -> usize {
    s.rule_counts
        .iter()
        .zip(reachable)
        .filter(|&(&c, &r)| r && c > 0)
        .count()
}

/// The rules marked reachable that never fired, by name.
fn reachable_never_fired(s: &campaign::Summary, reachable: &[bool]) -> Vec<String> {
    (s.rule_names.iter().zip(&s.rule_counts).zip(reachable))
        .filter(|&((_, &c), &r)| r && c == 0)
        .map(|((n, _), _)| n.clone())
        .collect()
}
