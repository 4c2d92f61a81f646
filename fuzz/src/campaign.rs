//! Fuzz campaigns: generated cases through the checks of
//! [`crate::checks`], in parallel, reproducibly.
//!
//! **Which cases.** A campaign is a seed and a shard `I/N`; its cases are
//! the case numbers `k = I, I + N, I + 2N, ...`, and case `k` is
//! `Case::from_seed(generator, mix(seed, k))`. So a case is named by
//! (generator, seed, k) whatever the shard count, the shards of a seed
//! partition its case numbers, and two runs with the same seed, shard and
//! case count check exactly the same cases. With both generators, case `k`
//! takes one or the other by a fair coin drawn from `(seed, k)`: a strict
//! alternation on `k` would give every shard of an even shard count a
//! single generator, and alternating on the shard's own count would make
//! case `k` depend on the shard layout; the coin keeps every shard of any
//! layout balanced and case `k` the same case in all of them.
//!
//! **How.** Cases run in fixed-size batches (rayon inside a batch); the
//! budget (`cases`, `time`, `max_findings`) is checked between batches,
//! and each case also checks the deadline before it starts. Results are
//! folded in case-number order, so with a case budget everything a run
//! reports is independent of the thread count. A panic anywhere in a case
//! is caught, becomes a `panic` finding, and the campaign goes on.
//!
//! **Variants.** Besides the case itself, each case number checks one
//! program derived from it (see [`crate::mutate`]: variables shifted to
//! straddle zero, or a subterm of the simplified form put where a rule may
//! discard it), because the generators alone rarely reach the guards that
//! matter most (measured there). `variants: false` turns this off.
//!
//! **Findings.** Every failed check of a case counts as a finding of its
//! kind, and its cause is found where it was found, without compiling
//! anything ([`crate::cause::triage`]: the peer's range analysis, a rule,
//! a crash site, ...). A finding of a cause already kept `max_findings`
//! times is only counted in its [`Bucket`]: never shrunk, classified or
//! compiled again, so a campaign against a peer with one systematic bug
//! runs near the rate of one against a sound peer. The others are shrunk
//! (see [`crate::shrink`]) while they fail the same way and keep their
//! cause, classified by the peer's own compiled code (for a peer with
//! backends, see [`crate::confirm`]), filed under the backend when it is
//! the backend that gets them wrong, and written to the corpus directory
//! (see [`crate::corpus`]) before they are reported.

use crate::blame;
use crate::cause::backend::LiteralCache;
use crate::cause::found::Found;
use crate::cause::triage;
use crate::cause::{site, Cause};
use crate::checks::{self, CheckConfig, Kind, Validator};
use crate::classify::Confirm;
use crate::confirm::{Class, Confirmation};
use crate::corpus;
use crate::finding::{Prepared, Preparer, Recorded, NOT_AGAIN};
use crate::generate::{Case, Generator, RuleSeed};
use crate::missed::{self, Hunt, Hunter, Missed};
use crate::mutate::{self, Rng, Variant};
use crate::oracle::Domain;
pub use crate::rng::mix;
use crate::shrink;
use crate::subject::{Engine, Subject};
use engine::dtype::Width;
use engine::ir::{Graph, NodeId};
use engine::parse::Program;
use engine::rewrite::{Simplifier, DEFAULT_CAP};
use engine::rules::RuleSet;
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Which generator(s) a campaign draws from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GeneratorChoice {
    One(Generator),
    /// Tiled or expression, one or the other per case (see the module
    /// documentation).
    Both,
    /// Any of the generators, one per case, each an equal share.
    All,
}

impl GeneratorChoice {
    /// The generator of case number `k` of a campaign seeded with `seed`.
    pub fn for_case(self, seed: u64, k: u64) -> Generator {
        match self {
            GeneratorChoice::One(g) => g,
            GeneratorChoice::Both => {
                Generator::ALL[(mix(seed ^ 0x6E4E_C01D_0000_0001, k) >> 63) as usize]
            }
            GeneratorChoice::All => {
                let x = mix(seed ^ 0x6E4E_C01D_0000_0001, k) as u128;
                Generator::ALL[((x * Generator::ALL.len() as u128) >> 64) as usize]
            }
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            GeneratorChoice::One(g) => g.name(),
            GeneratorChoice::Both => "both",
            GeneratorChoice::All => "all",
        }
    }
}

impl FromStr for GeneratorChoice {
    type Err = String;

    fn from_str(s: &str) -> Result<GeneratorChoice, String> {
        match s {
            "both" => Ok(GeneratorChoice::Both),
            "all" => Ok(GeneratorChoice::All),
            _ => Generator::by_name(s)
                .map(GeneratorChoice::One)
                .ok_or_else(|| {
                    format!(
                        "unknown generator `{s}` (use tiled, expr, splitsum, seeded, hlo, both or all)"
                    )
                }),
        }
    }
}

impl fmt::Display for GeneratorChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Shard `index` of `count`: the case numbers `index + j * count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// The `j`-th case number of this shard.
    pub fn case_number(self, j: u64) -> u64 {
        self.index + j * self.count
    }
}

impl FromStr for Shard {
    type Err = String;

    /// `I/N` with `0 <= I < N`.
    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("bad shard `{s}`: write I/N with 0 <= I < N, e.g. 0/4");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u64 = i.trim().parse().map_err(|_| bad())?;
        let count: u64 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// What a campaign does.
#[derive(Clone, Debug)]
pub struct CampaignConfig {
    pub seed: u64,
    pub shard: Shard,
    pub generator: GeneratorChoice,
    /// Stop after this many cases (exact determinism).
    pub cases: Option<u64>,
    /// Stop after this long (checked between batches and before each case).
    pub time: Option<Duration>,
    /// Worker threads (`None`: one per core).
    pub jobs: Option<usize>,
    /// The width the engine simplifies at.
    pub simplify_width: Width,
    /// The rewriter's firing cap per case.
    pub cap: usize,
    /// The checks; `check.seed` is replaced per case by the case's seed.
    pub check: CheckConfig,
    /// Which of a peer's backends classify a recorded finding.
    pub confirm: Confirm,
    /// Run the validator hook on every `validate_every`-th case of the
    /// shard (0: never).
    pub validate_every: u64,
    /// Where findings are written (`None`: not written).
    pub corpus: Option<PathBuf>,
    /// Predicate evaluations a shrink may take (0: do not shrink).
    pub shrink_steps: usize,
    /// Write at most this many findings per cause ([`Bucket`]); the rest
    /// are counted in their bucket (`None`: no limit).
    pub max_findings: Option<usize>,
    /// Stop at the end of the batch in which this many distinct causes
    /// were found (`None`: run the whole budget).
    pub max_causes: Option<usize>,
    /// Also check one variant of every case (see [`crate::mutate`]).
    pub variants: bool,
    /// Cases per batch. Fixed (not derived from the thread count) so that
    /// where a campaign stops does not depend on the machine.
    pub batch: usize,
    /// Check only cases whose domain has at most this many points (after
    /// projection); the others are generated, then skipped and counted in
    /// [`Summary::skipped`] (`tileproof bench`'s small-domain figure). A
    /// variant over the limit (an extremes variant widens ranges to the
    /// dtype's) is skipped too, counted in [`Summary::skipped_variants`]:
    /// it would be sampled, not walked.
    pub domain_limit: Option<u128>,
    /// Instances of the peer's own rules, seeds of the seeded generator
    /// beside the suites' ([`crate::generate::SeededGenome::build_with`]).
    pub rule_seeds: Arc<Vec<RuleSeed>>,
}

impl Default for CampaignConfig {
    fn default() -> CampaignConfig {
        CampaignConfig {
            seed: 0,
            shard: Shard::WHOLE,
            generator: GeneratorChoice::All,
            cases: None,
            time: None,
            jobs: None,
            simplify_width: Width::W64,
            cap: DEFAULT_CAP,
            check: CheckConfig::default(),
            confirm: Confirm::Off,
            validate_every: 0,
            corpus: None,
            shrink_steps: 2000,
            max_findings: None,
            max_causes: None,
            variants: true,
            batch: 64,
            domain_limit: None,
            rule_seeds: Arc::default(),
        }
    }
}

/// Findings a summary lists beyond the recorded ones (see
/// [`Summary::findings`]).
pub const MAX_LISTED_FINDINGS: usize = 1000;

/// Progress, reported after every batch.
#[derive(Clone, Debug)]
pub struct Progress {
    pub cases: u64,
    pub elapsed: Duration,
    pub findings: u64,
    pub rules_covered: usize,
    pub rules_total: usize,
    /// The findings of the batch just finished (already written).
    pub new_findings: Vec<Finding>,
}

impl Progress {
    pub fn cases_per_sec(&self) -> f64 {
        self.cases as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// The callbacks of a campaign.
#[derive(Clone, Copy, Default)]
pub struct Hooks<'a> {
    /// Validates a sample of cases (see [`CampaignConfig::validate_every`]).
    pub validator: Option<&'a Validator<'a>>,
    /// Called after every batch.
    pub progress: Option<&'a (dyn Fn(&Progress) + Sync)>,
    /// Looks for missed simplifications in every sound answer of a peer
    /// (see [`crate::missed`]), written to `missed/` in the corpus.
    pub missed: Option<&'a Hunter<'a>>,
}

/// One failed check of one case.
#[derive(Clone, Debug)]
pub struct Finding {
    pub kind: Kind,
    pub case_number: u64,
    pub generator: Generator,
    /// The seed the case was generated from (`mix(campaign seed, k)`).
    pub case_seed: u64,
    /// The finding is in a variant derived from the case, not the case.
    pub variant: Option<Variant>,
    /// What failed, for the reported (shrunk, when shrunk) case.
    pub message: String,
    pub point: Option<Vec<(String, i64)>>,
    /// Rules that fired on the reported case.
    pub rules: Vec<(String, usize)>,
    /// The program that failed before shrinking (the generated case, or
    /// its variant), as text.
    pub original: String,
    /// The shrunk case as text (`var`/`expr`/`expect` lines), when the
    /// finding was shrunk.
    pub shrunk: Option<String>,
    pub shrink: Option<shrink::ShrinkStats>,
    /// The corpus file, when written.
    pub path: Option<PathBuf>,
    /// The file is new (not the same case found before).
    pub new_file: bool,
    /// Time from the start of the campaign to when the finding was
    /// recorded (written, if it was).
    pub found_after: Duration,
    /// Anything that went wrong while recording it (the shrunk case no
    /// longer failing after a round trip through text).
    pub note: Option<String>,
    /// The corpus file could not be written: the error, and the whole file
    /// it would have held (so that the finding is not lost).
    pub unwritten: Option<(String, String)>,
    /// Against a peer: its class by the peer's own compiled code.
    pub class: Option<Confirmation>,
    /// Its cause (see [`Bucket`]), once recorded or counted into one.
    pub cause: Option<Cause>,
}

/// Why a campaign stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    Cases,
    Time,
    /// `max_causes` distinct causes were found.
    Causes,
}

/// The findings of one cause ([`crate::cause`]).
#[derive(Clone, Debug)]
pub struct Bucket {
    pub cause: Cause,
    /// The kind of its first finding.
    pub kind: Kind,
    /// The most severe class of its findings against a peer.
    pub class: Option<Class>,
    /// Findings of this cause: recorded into it, or counted.
    pub count: u64,
    /// Findings shrunk and recorded into it (at most `max_findings` once
    /// it is known; the others are counted).
    pub recorded: usize,
    /// Findings written to the corpus (at most `max_findings`).
    pub written: usize,
    /// The first finding's shrunk case (`var`, `expr`, `expect` lines).
    pub first_case: String,
    /// Where the first finding was written.
    pub first_path: Option<PathBuf>,
    /// What showed the cause on the first finding: the rule's step that
    /// fails alone, or the bound that is wrong (one line).
    pub detail: Option<String>,
}

/// What a campaign did.
#[derive(Clone, Debug)]
pub struct Summary {
    /// The simplifier under test (name and version).
    pub subject: String,
    /// It is a peer (its rules, when it names them, are its own).
    pub peer: bool,
    /// Distinct shapes of its answers (names and constants abstracted): how
    /// much of a peer whose rules are not listed a campaign reached.
    pub answer_shapes: u64,
    /// Programs (cases and variants) the subject answered with a
    /// simplification.
    pub answered: u64,
    /// Programs it declined, by reason (a peer's `unsupported`: never a
    /// finding).
    pub unsupported: BTreeMap<String, u64>,
    pub seed: u64,
    pub shard: Shard,
    pub generator: GeneratorChoice,
    pub cases: u64,
    /// Cases generated but not checked: their domain is over
    /// [`CampaignConfig::domain_limit`] (not in `cases`).
    pub skipped: u64,
    /// Variants of checked cases not checked: their domain is over
    /// [`CampaignConfig::domain_limit`].
    pub skipped_variants: u64,
    pub elapsed: Duration,
    pub stop: Stop,
    /// Failed checks by kind (every one, shrunk or not).
    pub by_kind: BTreeMap<Kind, u64>,
    /// Findings against a peer by class (those shrunk or matched to a
    /// bucket).
    pub by_class: BTreeMap<Class, u64>,
    /// The causes met, in the order they were first found.
    pub buckets: Vec<Bucket>,
    /// The findings, in case-number order; the first `max_findings` are
    /// shrunk and written. Beyond [`MAX_LISTED_FINDINGS`], findings that
    /// are not recorded are only counted (in `by_kind`), so that a long
    /// campaign against a systematic bug does not grow without bound.
    pub findings: Vec<Finding>,
    /// Rule names, indexed like `rule_counts`.
    pub rule_names: Vec<String>,
    /// Firings per rule over the whole campaign (first simplification of
    /// each case).
    pub rule_counts: Vec<u64>,
    /// The case numbers run, in order; kept only with a case budget
    /// (which bounds them), empty for a campaign bounded by time alone.
    pub case_numbers: Vec<u64>,
    /// A hash of every case's number and text, in order: equal digests mean
    /// the same cases.
    pub digest: u64,
    /// Why the causes' counts could not be added to the corpus's
    /// [`corpus::CAUSES_FILE`], when they could not.
    pub causes_unwritten: Option<String>,
    /// The missed simplifications, by cause (never findings).
    pub missed: missed::Tally,
}

impl Summary {
    pub fn total_findings(&self) -> u64 {
        self.by_kind.values().sum()
    }

    pub fn cases_per_sec(&self) -> f64 {
        self.cases as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// `(rule, count)` for every rule, most frequent first.
    pub fn fired(&self) -> Vec<(&str, u64)> {
        let mut v: Vec<(&str, u64)> = self
            .rule_names
            .iter()
            .map(String::as_str)
            .zip(self.rule_counts.iter().copied())
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        v
    }

    /// Rules no case fired.
    pub fn never_fired(&self) -> Vec<&str> {
        self.rule_names
            .iter()
            .zip(&self.rule_counts)
            .filter(|(_, &c)| c == 0)
            .map(|(n, _)| n.as_str())
            .collect()
    }

    pub fn rules_covered(&self) -> usize {
        self.rule_counts.iter().filter(|&&c| c > 0).count()
    }
}

/// A program a case checked: the generated case itself or a variant, what
/// its check found (each failure, with its cause in `causes`).
struct Tried {
    variant: Option<Variant>,
    /// Its check, whole: a finding's preparation takes it for the case as
    /// found ([`Preparer::prepare`]) rather than checking it again.
    checked: checks::Checked,
    causes: Vec<Found>,
    /// The integer literals of the case and its answer (those a backend
    /// compiles wrongly make a finding suspect: [`Key`]).
    literals: Vec<i64>,
}

/// What a finding is counted by before it is recorded: its cause as
/// found, and the literals it holds that a backend was seen to compile
/// wrongly (such a finding may be the backend's, which only a compile
/// tells). The cause a key's first recorded finding is filed under is the
/// key's from then on ([`Seen::filed`]): its later findings are counted
/// there.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key {
    cause: Cause,
    suspect: Vec<i64>,
}

impl Tried {
    /// A checked program that failed, each failure with its cause (found
    /// here, in the worker: it asks the peer, never its compiler).
    fn new(
        variant: Option<Variant>,
        subject: &dyn Subject,
        checked: checks::Checked,
        cfg: &CheckConfig,
    ) -> Tried {
        let causes = checked
            .failures
            .iter()
            .map(|f| {
                checks::catch(|| triage::triage(subject, &checked, f, cfg, triage::Depth::Quick))
                    .unwrap_or_else(|msg| Found::just(site::of_message(&msg)))
            })
            .collect();
        let both: Vec<NodeId> = checked
            .src
            .iter()
            .chain(checked.tgt.iter().flatten())
            .copied()
            .collect();
        Tried {
            variant,
            literals: crate::cause::backend::literals(&checked.graph, &both),
            checked,
            causes,
        }
    }

    /// tileproof panicked on the program (`roots` of `graph`, empty when
    /// generating it did).
    fn panicked(graph: Graph, roots: Vec<NodeId>, message: String) -> Tried {
        let cause = Found::just(site::of_message(&message));
        Tried {
            variant: None,
            checked: checks::Checked::panicked(graph, roots, message),
            causes: vec![cause],
            literals: Vec::new(),
        }
    }
}

/// A finding to shrink, classify and record: its index in the summary's
/// findings, the case it failed on, its cause as found, and the group of
/// findings of its key that join its bucket.
struct ToRecord {
    idx: usize,
    k: u64,
    generator: Generator,
    case_seed: u64,
    /// The validator ran on the case.
    validated: bool,
    variant: Option<Variant>,
    /// What failed when it was found.
    message: String,
    kind: Kind,
    found: Found,
    /// The case's check (the campaign's, under the check configuration
    /// the finding is prepared with): its graph holds the case.
    checked: checks::Checked,
    key: Key,
    group: usize,
}

/// The outcome of one case, before findings are shrunk. Only subjects with
/// failures are kept.
struct CaseRun {
    k: u64,
    generator: Generator,
    case_seed: u64,
    text: String,
    counts: Vec<usize>,
    subjects: Vec<Tried>,
    validated: bool,
    /// Programs the subject answered, and the reasons it declined others.
    answered: u64,
    unsupported: Vec<String>,
    /// Over the domain limit: not checked.
    skipped: bool,
    /// The variant was over the domain limit: not checked.
    skipped_variant: bool,
    /// Hashes of the shapes of a peer's answers (names and constants
    /// abstracted).
    shapes: Vec<u64>,
    /// What looking for missed simplifications found, case then variant.
    missed: Vec<Hunt>,
}

impl CaseRun {
    fn tally(&mut self, c: &checks::Checked, peer: bool) {
        match &c.unsupported {
            Some(why) => self.unsupported.push(why.clone()),
            None if c.tgt.is_some() => {
                self.answered += 1;
                if let (true, Some(t)) = (peer, &c.tgt) {
                    let shape = crate::bucket::abstract_shape(&c.graph, t);
                    self.shapes.push(corpus::fnv1a(shape.as_bytes()));
                }
            }
            None => {}
        }
    }
}

/// Why a campaign could not run (findings are in the summary, not here).
#[derive(Debug, thiserror::Error)]
pub enum CampaignError {
    #[error("a campaign needs a case count or a time budget")]
    NoBudget,
    #[error("bad shard {0}")]
    Shard(Shard),
    #[error("cannot start {jobs} worker threads: {reason}")]
    Threads { jobs: usize, reason: String },
}

/// Runs a campaign against tileproof's engine with `rules` (at
/// `cfg.simplify_width`, with `cfg.cap`).
pub fn run(
    cfg: &CampaignConfig,
    rules: &RuleSet,
    hooks: &Hooks<'_>,
) -> Result<Summary, CampaignError> {
    let mut simp = Simplifier::new(rules);
    simp.width = cfg.simplify_width;
    simp.cap = cfg.cap;
    run_subject(cfg, &Engine::new(simp, Vec::new()), hooks)
}

/// Runs a campaign against `subject`: generated cases, projected onto its
/// profile, simplified by it and checked.
pub fn run_subject(
    cfg: &CampaignConfig,
    subject: &dyn Subject,
    hooks: &Hooks<'_>,
) -> Result<Summary, CampaignError> {
    if cfg.cases.is_none() && cfg.time.is_none() {
        return Err(CampaignError::NoBudget);
    }
    if cfg.shard.count == 0 || cfg.shard.index >= cfg.shard.count {
        return Err(CampaignError::Shard(cfg.shard));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(cfg.jobs.unwrap_or(0))
        .build()
        .map_err(|e| CampaignError::Threads {
            jobs: cfg.jobs.unwrap_or(0),
            reason: e.to_string(),
        })?;
    Ok(pool.install(|| run_in_pool(cfg, subject, hooks)))
}

/// The worker threads `jobs` asks for: one per core when unset.
pub fn workers(jobs: Option<usize>) -> usize {
    jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

fn run_in_pool(cfg: &CampaignConfig, subject: &dyn Subject, hooks: &Hooks<'_>) -> Summary {
    let start = Instant::now();
    let deadline = cfg.time.map(|t| start + t);
    let names = subject.rule_names().to_vec();
    let mut s = Summary {
        subject: subject.name(),
        peer: subject.engine().is_none(),
        answer_shapes: 0,
        answered: 0,
        unsupported: BTreeMap::new(),
        seed: cfg.seed,
        shard: cfg.shard,
        generator: cfg.generator,
        cases: 0,
        skipped: 0,
        skipped_variants: 0,
        elapsed: Duration::ZERO,
        stop: Stop::Cases,
        by_kind: BTreeMap::new(),
        by_class: BTreeMap::new(),
        buckets: Vec::new(),
        findings: Vec::new(),
        rule_counts: vec![0; names.len()],
        rule_names: names,
        case_numbers: Vec::new(),
        digest: 0xcbf2_9ce4_8422_2325,
        causes_unwritten: None,
        missed: missed::Tally {
            on: hooks.missed.is_some(),
            ..missed::Tally::default()
        },
    };
    let mut budget = missed::Budget::default();
    // The last batch's missed simplifications, in case order: the prover
    // settles them while the next batch runs (a batch waiting on it would
    // leave every worker idle but one).
    let mut hunts: Vec<Hunt> = Vec::new();
    let mut seen = Seen::default();
    // Which literals the peer's backends compile wrongly, probed once.
    let literals = LiteralCache::default();
    let mut next_j = 0u64;
    let batch = cfg.batch.max(1) as u64;
    // The last batch folded, whose findings are recorded (shrunk,
    // classified, written) while the next batch runs, and settled before
    // the next batch is folded: a case budget's results do not depend on
    // the timing.
    let mut folded = Batch::default();
    loop {
        let stop = if cfg.cases.is_some_and(|n| next_j >= n) {
            Some(Stop::Cases)
        } else if deadline.is_some_and(|d| Instant::now() >= d) {
            Some(Stop::Time)
        } else if cfg.max_causes.is_some_and(|m| s.buckets.len() >= m) {
            Some(Stop::Causes)
        } else {
            None
        };
        let end = match stop {
            Some(_) => next_j,
            None => cfg.cases.map_or(next_j + batch, |n| n.min(next_j + batch)),
        };
        let last = std::mem::take(&mut hunts);
        let recording = std::mem::take(&mut folded);
        let kept = kept_causes(&s, cfg);
        // Whether the recording below runs on another worker, and whether
        // it is done: while it runs, a campaign that may run ahead keeps
        // its other workers on the next batches.
        let (started, recorded) = (AtomicBool::new(false), AtomicBool::new(false));
        let ahead = stop.is_none() && runs_ahead(cfg);
        let ((mut runs, reached), (last, done)) = rayon::join(
            || {
                let ahead = Ahead {
                    on: ahead,
                    started: &started,
                    recorded: &recorded,
                };
                run_batches(cfg, subject, hooks, next_j, end, deadline, ahead)
            },
            || {
                started.store(true, Ordering::Release);
                let r = rayon::join(
                    || settle_missed(hooks.missed, last),
                    || record_all(cfg, subject, hooks, &literals, &recording, &kept, deadline),
                );
                recorded.store(true, Ordering::Release);
                r
            },
        );
        next_j = reached;
        let new_findings = settle_all(&mut s, &mut seen, cfg, recording, done, start);
        fold_missed(&mut s, cfg, hooks.missed, last);
        if hooks.missed.is_some() {
            hunts = runs
                .iter_mut()
                .flat_map(|r| std::mem::take(&mut r.missed))
                .collect();
            budget.spend(&mut hunts);
        }
        // Fold in case order; pick the findings to shrink and record.
        for r in &runs {
            folded.fold(&mut s, &mut seen, cfg, &literals, r);
        }
        // The stopping round runs no case: it only settles the last
        // batch's findings, reported if there are any.
        if let (Some(p), false) = (hooks.progress, stop.is_some() && new_findings.is_empty()) {
            p(&Progress {
                cases: s.cases,
                elapsed: start.elapsed(),
                findings: s.total_findings(),
                rules_covered: s.rules_covered(),
                rules_total: s.rule_names.len(),
                new_findings,
            });
        }
        if let Some(stop) = stop {
            s.stop = stop;
            break;
        }
    }
    let last = settle_missed(hooks.missed, hunts);
    fold_missed(&mut s, cfg, hooks.missed, last);
    s.elapsed = start.elapsed();
    if let (Some(dir), false) = (&cfg.corpus, s.buckets.is_empty()) {
        let counts: Vec<corpus::CauseCount> = s
            .buckets
            .iter()
            .map(|b| corpus::CauseCount {
                cause: b.cause.clone(),
                count: b.count,
            })
            .collect();
        let campaign = format!(
            "{}: seed {}, shard {}, {} cases in {:.0} s",
            s.subject,
            s.seed,
            s.shard,
            s.cases,
            s.elapsed.as_secs_f64()
        );
        // The findings are on disk; a count that cannot be written costs
        // only the report's figure, and the summary says so.
        if let Err(e) = corpus::record_causes(dir, &campaign, &counts) {
            s.causes_unwritten = Some(format!(
                "the causes' counts were not written to {}: {e}",
                dir.join(corpus::CAUSES_FILE).display()
            ));
        }
    }
    s
}

/// Whether a round's workers may run past its batch, and the recording
/// they run ahead of (started on another worker, not yet done).
struct Ahead<'a> {
    on: bool,
    started: &'a AtomicBool,
    recorded: &'a AtomicBool,
}

/// Runs cases `from..end`, then, while `ahead` allows, the next batches:
/// the runs and the case number reached.
fn run_batches(
    cfg: &CampaignConfig,
    subject: &dyn Subject,
    hooks: &Hooks<'_>,
    from: u64,
    end: u64,
    deadline: Option<Instant>,
    ahead: Ahead<'_>,
) -> (Vec<CaseRun>, u64) {
    let past = || deadline.is_some_and(|d| Instant::now() >= d);
    let run_batch = |from: u64, to: u64| {
        (from..to)
            .into_par_iter()
            .filter_map(|j| (!past()).then(|| run_case(cfg, subject, hooks, j)))
            .collect::<Vec<CaseRun>>()
    };
    let batch = cfg.batch.max(1) as u64;
    let (mut runs, mut to) = (run_batch(from, end), end);
    while ahead.on
        && ahead.started.load(Ordering::Acquire)
        && !ahead.recorded.load(Ordering::Acquire)
        && !past()
        && to - end < batch * AHEAD_BATCHES
    {
        runs.extend(run_batch(to, to + batch));
        to += batch;
    }
    (runs, to)
}

/// Batches a campaign runs ahead of the recording of the last one's
/// findings, at most (the runs wait in memory until it is settled).
const AHEAD_BATCHES: u64 = 32;

/// Whether the workers run the next batches while the last batch's findings
/// are recorded (shrinking a new cause's finding and compiling it on the
/// peer's backends take seconds, a batch a fraction of one): only under a
/// time budget, whose results depend on the timing anyway. A case budget
/// folds batch by batch, so its results do not; a campaign that stops at
/// its Nth cause wants that stop, not more cases.
fn runs_ahead(cfg: &CampaignConfig) -> bool {
    cfg.cases.is_none() && cfg.max_causes.is_none()
}

/// Counts a batch's missed simplifications (settled), in case order, and
/// writes their files: the engine's cheaper answers in `missed/`, the
/// peer's in `engine-missed/`; counted, not written, without a corpus.
fn fold_missed(s: &mut Summary, cfg: &CampaignConfig, h: Option<&Hunter<'_>>, hunts: Vec<Hunt>) {
    let Some(h) = h else {
        return;
    };
    let (name, model) = (s.subject.clone(), h.describe_model());
    let max = cfg.corpus.as_ref().map_or(Some(0), |_| cfg.max_findings);
    for hunt in hunts {
        s.missed.add(hunt, max, |m: &Missed| {
            let dir = cfg
                .corpus
                .as_ref()
                .map(|c| c.join(m.direction.dir()))
                .ok_or("no corpus directory")?;
            let text = corpus::missed_file(m, &name, &model, h.width());
            let module = m
                .proposal
                .as_ref()
                .and_then(|p| p.module.as_deref().map(|t| (p.language.extension(), t)));
            corpus::save_missed(&dir, &m.key(), &text, module)
        });
    }
}

/// Across a campaign: the distinct shapes of the subject's answers, and
/// the cause each key's recorded finding was filed under.
#[derive(Default)]
struct Seen {
    answer_shapes: std::collections::HashSet<u64>,
    filed: HashMap<Key, Cause>,
}

impl Seen {
    /// The cause a finding of `key` counts under without being recorded:
    /// the one a finding of its key was filed under (a subterm found
    /// before shrinking is often a rule's instance, blamed once shrunk),
    /// else its own unless it holds a suspect literal.
    fn cause_of(&self, key: &Key) -> Option<Cause> {
        match self.filed.get(key) {
            Some(cause) => Some(cause.clone()),
            None => key.suspect.is_empty().then(|| key.cause.clone()),
        }
    }
}

/// One batch of cases folded in case order: the findings to shrink and
/// record, and the groups of findings that wait on one of them (they have
/// its shape or message, so they join its bucket once it has one).
#[derive(Default)]
struct Batch {
    todo: Vec<ToRecord>,
    /// The key of each finding to record in this batch, to its group (an
    /// index into `groups`).
    pending: HashMap<Key, usize>,
    /// Per group: the listed findings that joined it, and how many more
    /// joined past [`MAX_LISTED_FINDINGS`].
    groups: Vec<(Vec<usize>, u64)>,
}

impl Batch {
    /// Counts one case's run into the summary and queues or groups its
    /// failures: a finding of a cause kept `max_findings` times is counted
    /// there and not recorded again.
    fn fold(
        &mut self,
        s: &mut Summary,
        seen: &mut Seen,
        cfg: &CampaignConfig,
        literals: &LiteralCache,
        r: &CaseRun,
    ) {
        if r.skipped {
            s.skipped += 1;
            return;
        }
        s.cases += 1;
        s.skipped_variants += r.skipped_variant as u64;
        if cfg.cases.is_some() {
            s.case_numbers.push(r.k);
        }
        s.digest = (s.digest ^ r.k ^ corpus::fnv1a(r.text.as_bytes()).rotate_left(17))
            .wrapping_mul(0x0000_0100_0000_01b3);
        for (c, &n) in s.rule_counts.iter_mut().zip(&r.counts) {
            *c += n as u64;
        }
        s.answered += r.answered;
        seen.answer_shapes.extend(r.shapes.iter().copied());
        s.answer_shapes = seen.answer_shapes.len() as u64;
        for why in &r.unsupported {
            *s.unsupported.entry(why.clone()).or_default() += 1;
        }
        for sub in &r.subjects {
            for (f, found) in sub.checked.failures.iter().zip(&sub.causes) {
                *s.by_kind.entry(f.kind).or_default() += 1;
                // A cause already kept as often as asked: counted there,
                // not shrunk, classified or written again.
                let key = Key {
                    cause: found.cause.clone(),
                    suspect: literals.known_among(&sub.literals),
                };
                let full = seen.cause_of(&key).and_then(|cause| {
                    s.buckets.iter().position(|b| {
                        b.cause == cause && cfg.max_findings.is_some_and(|m| b.recorded >= m)
                    })
                });
                if let Some(b) = full {
                    s.buckets[b].count += 1;
                    if let Some(c) = s.buckets[b].class {
                        *s.by_class.entry(c).or_default() += 1;
                    }
                    continue;
                }
                let group = self.pending.get(&key).copied();
                let record_it = group.is_none() && !sub.checked.src.is_empty();
                let idx = s.findings.len();
                if record_it {
                    let g = self.groups.len();
                    self.groups.push((Vec::new(), 0));
                    self.pending.insert(key.clone(), g);
                    self.todo.push(ToRecord {
                        idx,
                        k: r.k,
                        generator: r.generator,
                        case_seed: r.case_seed,
                        validated: r.validated,
                        variant: sub.variant,
                        message: f.message.clone(),
                        kind: f.kind,
                        found: found.clone(),
                        checked: sub.checked.clone(),
                        key,
                        group: g,
                    });
                } else if let Some(g) = group {
                    if s.findings.len() >= MAX_LISTED_FINDINGS {
                        self.groups[g].1 += 1;
                        continue;
                    }
                    self.groups[g].0.push(idx);
                } else if s.findings.len() >= MAX_LISTED_FINDINGS {
                    continue;
                }
                s.findings.push(unshrunk_finding(r, sub, f));
            }
        }
    }
}

/// A finding as found, before shrinking.
fn unshrunk_finding(r: &CaseRun, sub: &Tried, f: &checks::CheckFailure) -> Finding {
    Finding {
        kind: f.kind,
        case_number: r.k,
        generator: r.generator,
        case_seed: r.case_seed,
        variant: sub.variant,
        message: f.message.clone(),
        point: f.point.clone(),
        rules: Vec::new(),
        original: if sub.variant.is_some() || sub.checked.src.is_empty() {
            corpus::case_body(&sub.checked.graph, &sub.checked.src, None)
        } else {
            r.text.clone()
        },
        shrunk: None,
        shrink: None,
        path: None,
        new_file: false,
        found_after: Duration::ZERO,
        note: None,
        unwritten: None,
        class: None,
        cause: None,
    }
}

/// Records (shrinks, classifies) a folded batch's findings, in parallel.
fn record_all(
    cfg: &CampaignConfig,
    subject: &dyn Subject,
    hooks: &Hooks<'_>,
    literals: &LiteralCache,
    b: &Batch,
    kept: &HashSet<Cause>,
    deadline: Option<Instant>,
) -> Vec<Recorded> {
    b.todo
        .par_iter()
        .map(|t| record(cfg, subject, hooks, literals, t, kept, deadline))
        .collect()
}

/// The causes kept as often as asked (`max_findings`): a finding shown to
/// be one of them is only counted.
fn kept_causes(s: &Summary, cfg: &CampaignConfig) -> HashSet<Cause> {
    s.buckets
        .iter()
        .filter(|b| cfg.max_findings.is_some_and(|m| b.recorded >= m))
        .map(|b| b.cause.clone())
        .collect()
}

/// Settles a batch's recorded findings in order (a finding is reported
/// only once its file is on disk), each key's filed cause remembered.
fn settle_all(
    s: &mut Summary,
    seen: &mut Seen,
    cfg: &CampaignConfig,
    mut b: Batch,
    done: Vec<Recorded>,
    start: Instant,
) -> Vec<Finding> {
    let todo = std::mem::take(&mut b.todo);
    todo.into_iter()
        .zip(done)
        .filter_map(|(t, rec)| {
            let joined = std::mem::take(&mut b.groups[t.group]);
            let f = match rec {
                Recorded::Prepared(rec) => Some(settle(s, cfg, t.idx, joined, *rec, start)),
                Recorded::Counted(cause) => {
                    count_under(s, t.idx, joined, &cause);
                    seen.filed.insert(t.key.clone(), cause);
                    None
                }
            };
            if let Some(cause) = f.as_ref().and_then(|f| f.cause.as_ref()) {
                seen.filed.insert(t.key, cause.clone());
            }
            f
        })
        .collect()
}

/// Counts a finding (`s.findings[idx]`) and its group (`joined`) in the
/// bucket of `cause`, kept already: nothing is written or reported.
fn count_under(s: &mut Summary, idx: usize, (joined, unlisted): (Vec<usize>, u64), cause: &Cause) {
    let Some(b) = s.buckets.iter_mut().find(|b| b.cause == *cause) else {
        return;
    };
    let n = 1 + joined.len() as u64 + unlisted;
    b.count += n;
    if let Some(c) = b.class {
        *s.by_class.entry(c).or_default() += n;
    }
    for j in joined.into_iter().chain([idx]) {
        s.findings[j].cause = Some(cause.clone());
    }
}

/// Puts a prepared finding (`s.findings[idx]`) into its cause's bucket,
/// new or found, with the findings of its group (`joined`), writes it to
/// the corpus while its bucket has room, and returns it as reported.
fn settle(
    s: &mut Summary,
    cfg: &CampaignConfig,
    idx: usize,
    (joined, unlisted): (Vec<usize>, u64),
    rec: Prepared,
    start: Instant,
) -> Finding {
    let cause = rec.entry.cause.cause.clone();
    let b = match s.buckets.iter().position(|b| b.cause == cause) {
        Some(b) => b,
        // A new cause beyond `max_causes` (found in the batch that
        // reached the limit) is counted by kind, not kept.
        None if cfg.max_causes.is_some_and(|m| s.buckets.len() >= m) => {
            let f = &mut s.findings[idx];
            f.note = Some("a further cause, beyond --max-causes: not written".into());
            f.found_after = start.elapsed();
            return f.clone();
        }
        None => {
            s.buckets.push(Bucket {
                cause: cause.clone(),
                kind: rec.entry.kind,
                class: None,
                count: 0,
                recorded: 0,
                written: 0,
                first_case: rec.entry.body.clone(),
                first_path: None,
                detail: rec.entry.detail.clone(),
            });
            s.buckets.len() - 1
        }
    };
    let n = 1 + joined.len() as u64 + unlisted;
    let bucket = &mut s.buckets[b];
    bucket.count += n;
    bucket.recorded += 1;
    // The bucket's class is its most severe finding's (a bug before a
    // model-only one).
    if let Some(c) = &rec.entry.class {
        *s.by_class.entry(c.class).or_default() += n;
        if bucket.class.is_none_or(|k| c.class < k) {
            bucket.class = Some(c.class);
        }
    }
    for &j in &joined {
        s.findings[j].cause = Some(cause.clone());
        s.findings[j].class = rec.entry.class.clone();
    }
    let f = &mut s.findings[idx];
    f.message = rec.entry.message.clone();
    f.point = rec.entry.point.clone();
    f.rules = rec.entry.rules.clone();
    f.shrunk = Some(rec.entry.body.clone());
    f.shrink = rec.stats;
    f.note = rec.note;
    f.class = rec.entry.class.clone();
    f.cause = Some(cause);
    let room = cfg.max_findings.is_none_or(|m| s.buckets[b].written < m);
    if let (Some(dir), true) = (&cfg.corpus, room) {
        match corpus::save(dir, &rec.entry) {
            Ok(saved) => {
                if s.buckets[b].first_path.is_none() {
                    s.buckets[b].first_path = Some(saved.path.clone());
                }
                s.buckets[b].written += 1;
                // A peer's rule blamed by a campaign is judged on this
                // instance first by `prove --simplifier`.
                if let (true, Some(blamed)) = (s.peer, &rec.entry.cause.blame) {
                    let shown = saved.path.display().to_string();
                    if let Err(e) =
                        blame::save_seed(&blame::seeds_dir(&dir.join("rules")), blamed, &shown)
                    {
                        f.note = Some(format!("the rule's seed was not written: {e}"));
                    }
                }
                f.path = Some(saved.path);
                f.new_file = saved.new;
            }
            Err(e) => {
                let text = rec.entry.render(&dir.join(rec.entry.file_name()));
                f.unwritten = Some((format!("cannot write to {}: {e}", dir.display()), text));
            }
        }
    }
    f.found_after = start.elapsed();
    f.clone()
}

/// A campaign's finding prepared ([`Preparer::prepare`]) from its cause as
/// found.
fn record(
    cfg: &CampaignConfig,
    subject: &dyn Subject,
    hooks: &Hooks<'_>,
    literals: &LiteralCache,
    t: &ToRecord,
    kept: &HashSet<Cause>,
    deadline: Option<Instant>,
) -> Recorded {
    let kind = t.kind;
    let mut ccfg = cfg.check.clone();
    ccfg.seed = t.case_seed;
    // The validator ran on this subject only if it was the sampled case.
    let validator = if t.validated && t.variant.is_none() {
        hooks.validator
    } else {
        None
    };
    let origin = format!(
        "generator {}, campaign seed {}, case {} (Case::from_seed({:?}, {:#x})){}",
        t.generator,
        cfg.seed,
        t.k,
        t.generator,
        t.case_seed,
        t.variant
            .map_or_else(String::new, |v| format!(", {v} variant"))
    );
    let program = Program {
        graph: t.checked.graph.clone(),
        outputs: t.checked.src.clone(),
        expects: Vec::new(),
        header: Vec::new(),
        constraints: Vec::new(),
        expect_constraints: None,
    };
    let preparer = Preparer {
        subject,
        check: &ccfg,
        confirm: &cfg.confirm,
        validator,
        shrink_steps: cfg.shrink_steps,
        deadline,
        literals,
    };
    let mut recorded = preparer.prepare(
        &program,
        kind,
        Some((t.found.clone(), t.checked.clone())),
        kept,
        origin,
    );
    // A failure that did not recur (a peer whose state spans requests: an
    // adapter that answers twice fails the next request) keeps what it was.
    if let Recorded::Prepared(prepared) = &mut recorded {
        if prepared.entry.message.starts_with(NOT_AGAIN) {
            prepared.entry.message = format!("{NOT_AGAIN} when found: {}", t.message);
        }
    }
    recorded
}

/// Generates and checks case `j` of the shard, and one variant of it, each
/// projected onto the subject's profile.
fn run_case(cfg: &CampaignConfig, subject: &dyn Subject, hooks: &Hooks<'_>, j: u64) -> CaseRun {
    let k = cfg.shard.case_number(j);
    let generator = cfg.generator.for_case(cfg.seed, k);
    let case_seed = mix(cfg.seed, k);
    let mut run = CaseRun {
        k,
        generator,
        case_seed,
        text: String::new(),
        counts: vec![0; subject.rule_names().len()],
        subjects: Vec::new(),
        validated: false,
        answered: 0,
        unsupported: Vec::new(),
        skipped: false,
        skipped_variant: false,
        shapes: Vec::new(),
        missed: Vec::new(),
    };
    let profile = subject.profile();
    // Whether the case as generated is one the profile covers (else it is
    // projected, and its check asks again where it needs to).
    let (case, covered) = match checks::catch(|| {
        let mut c = Case::from_seed_with(generator, case_seed, &cfg.rule_seeds);
        let covered = profile.covers(&c.graph, &c.roots);
        if !covered {
            (c.graph, c.roots) = profile.project(&c.graph, &c.roots);
        }
        (c, covered)
    }) {
        Ok(c) => c,
        Err(msg) => {
            let msg = format!("generating the case: {}", checks::one_line(&msg));
            run.subjects
                .push(Tried::panicked(Graph::new(), Vec::new(), msg));
            return run;
        }
    };
    if cfg.domain_limit.is_some_and(|m| case.domain_size() > m) {
        run.skipped = true;
        return run;
    }
    run.text = case.program();
    let validate = cfg.validate_every > 0 && j.is_multiple_of(cfg.validate_every);
    run.validated = validate && hooks.validator.is_some();
    let mut ccfg = cfg.check.clone();
    ccfg.seed = case_seed;
    // A finding is classified once, when it is recorded (the check only
    // judges).
    let mut checked = checks::check(
        &case.graph,
        &case.roots,
        subject,
        &ccfg,
        if validate { hooks.validator } else { None },
    );
    checked.covered = covered.then_some(true);
    add_counts(&mut run.counts, &checked.counts);
    run.tally(&checked, subject.engine().is_none());
    hunt(hooks, &checked, &mut run);
    let variant = if cfg.variants {
        checks::catch(|| derive(&case, &checked, case_seed, profile.width())).unwrap_or(None)
    } else {
        None
    };
    if !checked.ok() {
        run.subjects.push(Tried::new(None, subject, checked, &ccfg));
    }
    if let Some((v, graph, roots)) = variant {
        let (graph, roots) = if profile.covers(&graph, &roots) {
            (graph, roots)
        } else {
            profile.project(&graph, &roots)
        };
        if cfg
            .domain_limit
            .is_some_and(|m| Domain::new(&graph, &roots).size() > m)
        {
            run.skipped_variant = true;
            return run;
        }
        let vc = checks::check(&graph, &roots, subject, &ccfg, None);
        add_counts(&mut run.counts, &vc.counts);
        run.tally(&vc, subject.engine().is_none());
        hunt(hooks, &vc, &mut run);
        if !vc.ok() {
            run.subjects.push(Tried::new(Some(v), subject, vc, &ccfg));
        }
    }
    run
}

/// Settles the hunts the prover's budget let through
/// ([`missed::Budget::spend`]), in parallel.
fn settle_missed(h: Option<&Hunter<'_>>, mut hunts: Vec<Hunt>) -> Vec<Hunt> {
    if let Some(h) = h {
        hunts.par_iter_mut().for_each(|hunt| {
            *hunt = h.settled(std::mem::replace(hunt, Hunt::NotCheaper));
        });
    }
    hunts
}

/// Looks for a missed simplification in a sound answer, when asked to; a
/// panic while looking is a finding of the case.
fn hunt(hooks: &Hooks<'_>, checked: &checks::Checked, run: &mut CaseRun) {
    let (Some(h), Some(tgt)) = (hooks.missed, &checked.tgt) else {
        return;
    };
    if !checked.ok() {
        return;
    }
    match checks::catch(|| h.hunt(&checked.graph, &checked.src, tgt)) {
        Ok(found) => run.missed.push(found),
        Err(msg) => run.subjects.push(Tried::panicked(
            checked.graph.clone(),
            checked.src.clone(),
            format!(
                "looking for a missed simplification: {}",
                checks::one_line(&msg)
            ),
        )),
    }
}

fn add_counts(total: &mut [usize], counts: &[usize]) {
    for (t, &c) in total.iter_mut().zip(counts) {
        *t += c;
    }
}

/// The variant of a case: signed or discard, drawn from the case seed (the
/// other one when the first does not apply).
fn derive(
    case: &Case,
    checked: &checks::Checked,
    case_seed: u64,
    width: Width,
) -> Option<(Variant, Graph, Vec<NodeId>)> {
    let mut rng = Rng::new(case_seed ^ 0x005E_ED0F_7A41_A175);
    let first = rng.below(Variant::ALL.len());
    for i in 0..Variant::ALL.len() {
        let v = Variant::ALL[(first + i) % Variant::ALL.len()];
        let built = match v {
            Variant::Signed => mutate::signed(&case.graph, &case.roots, &mut rng),
            Variant::Discard => match &checked.tgt {
                Some(tgt) => mutate::discard(&checked.graph, tgt, &mut rng),
                None => None,
            },
            Variant::Extremes => mutate::extremes(&case.graph, &case.roots, &mut rng, width),
        };
        if let Some((g, roots)) = built {
            return Some((v, g, roots));
        }
    }
    None
}
