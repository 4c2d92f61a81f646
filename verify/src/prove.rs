//! Proving rules: for each rule, width and type instance, the premise must
//! be satisfiable (else the rule is vacuous), then three obligations are
//! checked in order, each a named failure: the target is undefined where
//! the source is defined; validity differs; values differ. A rule is proved
//! only when Z3 answers unsat to all three; a timeout is unknown.
//!
//! Widths 8 and 16 use bit-exact bitvectors; a bitvector query that times
//! out is settled by the bounded-integer encoding at the same width. Widths
//! 32 and 64 use bounded integers.
//!
//! A rule may cite lemmas (`using`, see [`crate::lemma`]): each is proved
//! once, on its own, before the rule's queries, and only a proved lemma's
//! instances are assumed in its integer queries. With
//! [`Options::cross_check`] every rule proved at every width is checked
//! again by cvc5 on another encoding ([`crate::crosscheck`]); a
//! disagreement makes the rule disputed, not proved.

use crate::budget::Spent;
use crate::cache::{Cache, Query};
use crate::check::Method;
use crate::counterexample::{
    extract, failure_condition, minimize, Counterexample, Failure, InternalError,
};
use crate::crosscheck::CrossCheck;
use crate::encode::{Enc, IndexRange, Mode};
use crate::exhaustive::Walked;
use crate::lemma::Lemmas;
use crate::portfolio::{pin_model, Race, Settled, SolverKind};
use crate::query::RuleQuery;
use crate::solver::{
    check_with_hints, check_within, labelled, out_of_time, time_left, unknown_reason,
    with_deadline, with_stop, QUERY_FACTOR,
};
use crate::verdict::VerdictKind;
use engine::ir::{DType, Op};
use engine::rules::Rule;
use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use z3::ast::Ast;
use z3::{SatResult, Solver};

/// How to prove.
#[derive(Clone, Debug)]
pub struct Options {
    pub widths: Vec<u32>,
    /// The first share of each solver call of a query; a round of calls
    /// cancelled at their share is tried again at twice the share
    /// ([`crate::budget`]). One query (a rule at one width: all its type
    /// instances, encodings, case splits and retries together, or its
    /// width-generic query) gets at most [`Options::query_timeout`].
    pub timeout: Duration,
    /// The wall-clock bound of one query, its building included; `None`:
    /// [`QUERY_FACTOR`] times [`Options::timeout`]. A query that runs out
    /// of it is unknown.
    pub query_timeout: Option<Duration>,
    /// No query runs past this instant (a whole run's budget): a query
    /// that would start later is unknown without being tried, one running
    /// then is cut short, unknown.
    pub deadline: Option<Instant>,
    pub cache: Option<crate::cache::Cache>,
    /// Write every query as an SMT-LIB2 file here.
    pub smt2_dir: Option<PathBuf>,
    /// Z3's random seed (the solver's `random_seed` parameter), which also
    /// shuffles the order in which a counterexample is minimized; 0 is
    /// Z3's default and the plain order. Proofs do not depend on it (and
    /// the cache ignores it); which counterexample a failing rule gets
    /// does.
    pub seed: u32,
    /// The lemmas rules may cite (`using`).
    pub lemmas: Arc<Lemmas>,
    /// Cross-check every rule proved at every width with cvc5
    /// ([`crate::crosscheck`]); off by default (it costs a cvc5 run per
    /// rule).
    pub cross_check: bool,
    /// Prove each width on its own, never width-generically (for
    /// comparing the two, and for a width the generic proof would cover).
    pub per_width: bool,
    /// Start cvc5 beside Z3 on a bitvector query Z3 did not settle in its
    /// share ([`crate::portfolio`]); where cvc5 is not installed, Z3 alone.
    pub portfolio: bool,
    /// Walk every assignment of an instance the solvers left unknown,
    /// where it is small enough ([`crate::exhaustive`]).
    pub walk: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            widths: vec![8, 16, 32, 64],
            timeout: Duration::from_secs(10),
            query_timeout: None,
            deadline: None,
            cache: None,
            smt2_dir: None,
            seed: 0,
            lemmas: crate::lemma::builtin(),
            cross_check: false,
            per_width: false,
            portfolio: true,
            walk: true,
        }
    }
}

impl Options {
    /// When a query that starts at `start` must end: its own bound, or
    /// the run's deadline if sooner (`None`: a bound too large to add is
    /// none).
    pub fn query_deadline(&self, start: Instant) -> Option<Instant> {
        let bound = self.query_bound().and_then(|b| start.checked_add(b));
        match (bound, self.deadline) {
            (Some(b), Some(d)) => Some(b.min(d)),
            (b, d) => b.or(d),
        }
    }

    /// The wall-clock bound of one query (`None`: too large to hold).
    pub fn query_bound(&self) -> Option<Duration> {
        self.query_timeout
            .or_else(|| self.timeout.checked_mul(QUERY_FACTOR))
    }

    /// Why a query that would start now is not tried: the run's deadline
    /// has passed.
    pub fn past_deadline(&self) -> Option<String> {
        self.deadline
            .filter(|&d| Instant::now() >= d)
            .map(|_| "out of time: the run's budget ran out before this query started".to_string())
    }
}

/// The verdict for one rule at one width (over all its type instances).
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum ProofVerdict {
    Proved,
    /// Some obligation fails: a counterexample.
    Failed {
        counterexample: Box<Counterexample>,
    },
    /// The premise (bounds, guard, source defined) can never hold.
    Vacuous,
    /// Z3 proved it, but the cross-check's second solver finds a
    /// counterexample on its own encoding: a bug in one solver or one
    /// encoding, and the rule is not proved.
    Disputed {
        reason: String,
    },
    /// The solver gave up (timeout or incompleteness).
    Unknown {
        reason: String,
    },
    /// A counterexample the reference interpreter does not reproduce: a
    /// bug in tileproof (the encoding, the realization or the printer), not
    /// a verdict on the rule.
    InternalError {
        internal_error: Box<InternalError>,
    },
}

impl ProofVerdict {
    pub fn kind(&self) -> VerdictKind {
        match self {
            ProofVerdict::Proved => VerdictKind::Proved,
            ProofVerdict::Failed { .. } => VerdictKind::Failed,
            ProofVerdict::Vacuous => VerdictKind::Vacuous,
            ProofVerdict::Disputed { .. } => VerdictKind::Disputed,
            ProofVerdict::Unknown { .. } => VerdictKind::Unknown,
            ProofVerdict::InternalError { .. } => VerdictKind::InternalError,
        }
    }

    pub fn name(&self) -> &'static str {
        self.kind().name()
    }
}

/// One rule at one width.
#[derive(Clone, Debug, Serialize)]
pub struct RuleResult {
    pub rule: String,
    pub width: u32,
    #[serde(flatten)]
    pub verdict: ProofVerdict,
    /// The encoding that settled it (the strongest any instance needed),
    /// or the interpreter where some instance was walked whole
    /// ([`crate::exhaustive`]).
    pub method: Method,
    /// The solver that settled it: cvc5 where the portfolio's cvc5
    /// answered some instance first (or its cached proof is cvc5's).
    pub solver: SolverKind,
    /// Every instance came from the cache.
    pub cached: bool,
    pub instances: usize,
    /// Wall-clock seconds of this rule at this width (its lemmas' own
    /// proofs not included: they are proved once, before).
    pub seconds: f64,
    /// Lemmas the rule cites that were refused (not proved, so not
    /// assumed), and other remarks.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The second solver's opinion (the same at every width of the rule);
    /// left out of the JSON when not asked for.
    #[serde(skip_serializing_if = "CrossCheck::not_run")]
    pub cross_check: CrossCheck,
    /// Proved by one width-generic query for every width `W >= 8` at once
    /// (this row's `seconds` is then that query's, the same in every row
    /// of the rule); false where the rule was proved width by width.
    pub width_generic: bool,
    /// Seconds the rule's width-generic attempt took where it did not
    /// settle the rule (its reason is in `notes`), the same in every row
    /// of the rule; 0 where it was not tried or proved the rule.
    pub generic_attempt_seconds: f64,
    /// Where this row's query spent its time, for a row left unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<Spent>,
    /// Where the rule's width-generic attempt spent its time, for a row
    /// left unknown after that attempt was unknown too.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generic_budget: Option<Spent>,
    /// Why a row of 8 bits or more was proved width by width (its note
    /// says it in full); `None` where the generic query was not tried.
    #[serde(skip)]
    pub width_by_width: Option<WidthByWidth>,
}

/// The kind of reason a rule was proved width by width, not by one
/// width-generic query.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Deserialize, Serialize)]
pub enum WidthByWidth {
    /// An op or literal whose meaning depends on the width's bits.
    WidthDependent,
    /// The generic query has a model at some width bound (not a
    /// counterexample: a width may still be proved on its own).
    GenericModel,
    /// The generic query was not settled (unknown, over a limit, out of
    /// the run's time, or its premise unsatisfiable).
    Unsettled,
}

impl WidthByWidth {
    pub fn describe(self) -> &'static str {
        match self {
            WidthByWidth::WidthDependent => "an op or literal that depends on the width",
            WidthByWidth::GenericModel => "the generic query has a model at some MAX",
            WidthByWidth::Unsettled => "the generic query was not settled",
        }
    }
}

impl RuleResult {
    /// A row left unknown for `reason` after `seconds`, with where its
    /// time went if it is known.
    pub fn unknown(
        rule: &Rule,
        width: u32,
        reason: String,
        seconds: f64,
        budget: Option<Spent>,
    ) -> RuleResult {
        RuleResult {
            rule: rule.name.clone(),
            width,
            verdict: ProofVerdict::Unknown { reason },
            method: Method::Solver(Mode::Int),
            solver: SolverKind::Z3,
            cached: false,
            instances: rule.instances().len(),
            seconds,
            notes: Vec::new(),
            cross_check: CrossCheck::NotRun,
            width_generic: false,
            generic_attempt_seconds: 0.0,
            budget,
            generic_budget: None,
            width_by_width: None,
        }
    }

    /// Seconds this row adds to its rule's time: a width-generic proof
    /// counts once per rule (see [`rule_seconds`]).
    fn own_seconds(&self) -> f64 {
        if self.width_generic {
            0.0
        } else {
            self.seconds
        }
    }
}

/// A rule's whole proving time over the rows `rows` of it: the
/// width-generic query (proof or failed attempt) once, plus each
/// per-width proof.
pub fn rule_seconds<'a>(rows: impl IntoIterator<Item = &'a RuleResult>) -> f64 {
    let mut generic: f64 = 0.0;
    let mut own = 0.0;
    for r in rows {
        own += r.own_seconds();
        generic = generic.max(r.generic_attempt_seconds);
        if r.width_generic {
            generic = generic.max(r.seconds);
        }
    }
    generic + own
}

/// The outcome of one instance in one encoding.
#[derive(Debug)]
enum Outcome {
    Proved {
        cached: bool,
    },
    Failed(Box<Counterexample>),
    InternalError(Box<InternalError>),
    Vacuous,
    /// A width-generic obligation has a model: not a counterexample (it
    /// may be no real width), but settled, and no more time changes it.
    GenericModel(String),
    Unknown(String),
}

/// A row's instances' outcomes, folded into its verdict: the first
/// failure, else the first unknown, else proved (vacuous where every
/// instance is), and whether every instance came from the cache.
struct Tally {
    verdict: ProofVerdict,
    all_cached: bool,
    vacuous: usize,
}

impl Tally {
    fn new() -> Tally {
        Tally {
            verdict: ProofVerdict::Proved,
            all_cached: true,
            vacuous: 0,
        }
    }

    /// Counts one instance's outcome; true where it settles the row (a
    /// counterexample or an internal error: no later instance changes it).
    fn add(&mut self, out: Outcome) -> bool {
        match out {
            Outcome::Proved { cached } => self.all_cached &= cached,
            Outcome::Vacuous => {
                self.all_cached = false;
                self.vacuous += 1;
            }
            Outcome::Failed(counterexample) => {
                self.verdict = ProofVerdict::Failed { counterexample };
                self.all_cached = false;
                return true;
            }
            Outcome::InternalError(internal_error) => {
                self.verdict = ProofVerdict::InternalError { internal_error };
                self.all_cached = false;
                return true;
            }
            Outcome::Unknown(reason) | Outcome::GenericModel(reason) => {
                self.all_cached = false;
                if !matches!(self.verdict, ProofVerdict::Unknown { .. }) {
                    self.verdict = ProofVerdict::Unknown { reason };
                }
            }
        }
        false
    }

    /// The verdict over `instances` instances, and whether all were cached.
    fn verdict(self, instances: usize) -> (ProofVerdict, bool) {
        let vacuous = matches!(self.verdict, ProofVerdict::Proved) && self.vacuous == instances;
        let verdict = if vacuous {
            ProofVerdict::Vacuous
        } else {
            self.verdict
        };
        (verdict, self.all_cached)
    }
}

/// Why a rule cannot be proved width-generically, if it cannot: an op
/// whose semantics counts bits (a shift's amount, `&`'s bits, a cast's
/// ranges against `index`'s), or an `index` literal that some width of 8
/// bits or more cannot hold.
pub fn width_generic_obstacle(rule: &Rule) -> Option<String> {
    use engine::rules::{Pat, Ty};
    for p in rule.lhs.nodes().into_iter().chain(rule.rhs.nodes()) {
        match p {
            Pat::Op(op @ (Op::Shl | Op::Shr | Op::BitAnd | Op::Cast), ..) => {
                return Some(format!("its `{}` depends on the width's bits", op.name()));
            }
            Pat::Lit(v, ty) => {
                let index_typed = !matches!(ty, Ty::Fixed(DType::I32 | DType::I64 | DType::Bool));
                if index_typed && !(-128..=127).contains(v) {
                    return Some(format!("its literal {v} does not fit 8 bits"));
                }
            }
            _ => {}
        }
    }
    None
}

/// Why a rule cannot be proved over the unbounded integers, if it
/// cannot: an op whose semantics counts bits (a shift's amount, `&`'s
/// bits: an integer has no fixed number of them), or a guard that reads a
/// dtype's bounds (`fits`, `min_of`, `max_of`: `index` has none).
pub fn unbounded_obstacle(rule: &Rule) -> Option<String> {
    use engine::rules::{Guard, IExpr, Pat};
    for p in rule.lhs.nodes().into_iter().chain(rule.rhs.nodes()) {
        if let Pat::Op(op @ (Op::Shl | Op::Shr | Op::BitAnd), ..) = p {
            return Some(format!("its `{}` depends on the width's bits", op.name()));
        }
    }
    fn reads_bounds(g: &Guard) -> bool {
        fn in_iexpr(e: &IExpr) -> bool {
            match e {
                IExpr::Var(_) => false,
                IExpr::Scalar(g) => reads_bounds(g),
                IExpr::Neg(a) => in_iexpr(a),
                IExpr::Bin(_, a, b) => in_iexpr(a) || in_iexpr(b),
            }
        }
        engine::deep::grow(|| match g {
            Guard::Fits(..) | Guard::TyMin(_) | Guard::TyMax(_) => true,
            Guard::VMin(e) | Guard::VMax(e) => in_iexpr(e),
            Guard::Un(_, a) => reads_bounds(a),
            Guard::Bin(_, a, b) => reads_bounds(a) || reads_bounds(b),
            Guard::Call(_, args) => args.iter().any(reads_bounds),
            Guard::Int(_)
            | Guard::Bool(_)
            | Guard::Val(_)
            | Guard::Valid(_)
            | Guard::Constrained(_)
            | Guard::IsConst(_) => false,
        })
    }
    if rule.guard.as_ref().is_some_and(reads_bounds) {
        return Some("its guard reads a dtype's bounds".into());
    }
    None
}

/// A rule proved over the unbounded integers ([`Enc::unbounded_integers`]:
/// every type instance, one query each), for a peer whose `index` is the
/// mathematical integers: proved where every query is unsat; failed with a
/// counterexample realized at the nominal width 64 (confirmed under
/// [`engine::semantics::Model::unbounded`]); unknown otherwise (a timeout,
/// a model only past 64 bits, an obstacle). The row's width is 64, its
/// method [`Method::Unbounded`].
pub fn prove_unbounded(rule: &Rule, opts: &Options) -> RuleResult {
    within_budget(opts, || prove_unbounded_within(rule, opts))
}

fn prove_unbounded_within(rule: &Rule, opts: &Options) -> RuleResult {
    let enc = Enc::unbounded_integers();
    let unknown = |reason: String| RuleResult {
        method: Method::Unbounded,
        ..RuleResult::unknown(rule, enc.width, reason, 0.0, None)
    };
    if let Some(why) = unbounded_obstacle(rule)
        .or_else(|| over_smt_limit(rule))
        .or_else(|| opts.past_deadline())
    {
        return unknown(why);
    }
    prove_lemmas(rule, opts);
    let start = Instant::now();
    let deadline = opts.query_deadline(start);
    let mut spent = Spent::new(opts.query_bound());
    let mut notes = Vec::new();
    let instances = rule.instances();
    let mut shares = Shares {
        share: opts.timeout,
        spent: &mut spent,
        instances: instances.len(),
    };
    let mut tally = Tally::new();
    for types in &instances {
        let mut solve = || solve_query(rule, types, enc, opts, &mut shares, &mut notes);
        let out = match deadline {
            Some(d) => with_deadline(d, solve),
            None => solve(),
        };
        if tally.add(out) {
            break;
        }
    }
    let (verdict, all_cached) = tally.verdict(instances.len());
    let unsettled = matches!(verdict, ProofVerdict::Unknown { .. });
    RuleResult {
        rule: rule.name.clone(),
        width: enc.width,
        verdict,
        method: Method::Unbounded,
        solver: SolverKind::Z3,
        cached: all_cached,
        instances: instances.len(),
        seconds: start.elapsed().as_secs_f64(),
        notes,
        cross_check: CrossCheck::NotRun,
        width_generic: false,
        generic_attempt_seconds: 0.0,
        budget: unsettled.then_some(spent),
        generic_budget: None,
        width_by_width: None,
    }
}

/// Why a width-generic attempt did not settle a rule (its kind and in
/// words), its seconds, and where its time went.
pub type NotSettled = (WidthByWidth, String, f64, Spent);

/// The width-generic proof of a rule (every type instance, one bounded-
/// integer query with symbolic `index` bounds each): `Ok((cached,
/// seconds))` when every instance is proved, else why not, the seconds
/// spent and how. A satisfiable generic query is not a counterexample
/// (its model may be no real width): the per-width proofs find the real
/// one.
pub fn prove_generic(rule: &Rule, opts: &Options) -> Result<(bool, f64), NotSettled> {
    within_budget(opts, || prove_generic_within(rule, opts))
}

fn prove_generic_within(rule: &Rule, opts: &Options) -> Result<(bool, f64), NotSettled> {
    let mut spent = Spent::new(opts.query_bound());
    if let Some(why) = over_smt_limit(rule) {
        return Err((WidthByWidth::Unsettled, why, 0.0, spent));
    }
    prove_lemmas(rule, opts);
    if let Some(why) = opts.past_deadline() {
        return Err((WidthByWidth::Unsettled, why, 0.0, spent));
    }
    let start = Instant::now();
    let deadline = opts.query_deadline(start);
    let mut all_cached = true;
    let instances = rule.instances();
    let mut shares = Shares {
        share: opts.timeout,
        spent: &mut spent,
        instances: instances.len(),
    };
    for types in &instances {
        let mut solve = || {
            solve_query(
                rule,
                types,
                Enc::generic(),
                opts,
                &mut shares,
                &mut Vec::new(),
            )
        };
        let out = match deadline {
            Some(d) => with_deadline(d, solve),
            None => solve(),
        };
        let (kind, why) = match out {
            Outcome::Proved { cached } => {
                all_cached &= cached;
                continue;
            }
            Outcome::Unknown(reason) => (
                WidthByWidth::Unsettled,
                format!("the width-generic query is unknown ({reason})"),
            ),
            Outcome::GenericModel(reason) => (
                WidthByWidth::GenericModel,
                format!("the width-generic query is unknown ({reason})"),
            ),
            Outcome::Vacuous => (
                WidthByWidth::Unsettled,
                "the width-generic premise is unsatisfiable".to_string(),
            ),
            Outcome::Failed(_) | Outcome::InternalError(_) => {
                unreachable!("a width-generic query reports no counterexample")
            }
        };
        return Err((kind, why, start.elapsed().as_secs_f64(), spent));
    }
    Ok((all_cached, start.elapsed().as_secs_f64()))
}

/// The time a query's checks get ([`crate::budget`]).
struct Shares<'a> {
    /// The share of the next round's checks: the first round's, then as
    /// far as the rounds have doubled it. It carries over from one type
    /// instance and encoding to the next, so that none starts below a
    /// share already found too short.
    share: Duration,
    spent: &'a mut Spent,
    /// The rule's type instances (a round names its own where there are
    /// several).
    instances: usize,
}

impl Shares<'_> {
    /// A round's label: the encoding (and seed, if not the default), and
    /// the type instance where the rule has several.
    fn label(&self, types: &[DType], enc: &Enc, seed: u32) -> String {
        let mut what = match enc.index {
            IndexRange::Generic => "width-generic".to_string(),
            IndexRange::Unbounded => Method::Unbounded.name().to_string(),
            IndexRange::Width => format!("{} at {} bits", enc.mode.name(), enc.width),
        };
        if seed != 0 {
            what += &format!(", seed {seed}");
        }
        if self.instances > 1 {
            let types: Vec<String> = types.iter().map(ToString::to_string).collect();
            what += &format!(", {}", types.join(" "));
        }
        what
    }
}

/// Proves one rule at one width, over all its type instances.
pub fn prove_rule(rule: &Rule, width: u32, opts: &Options) -> RuleResult {
    prove_width(rule, width, opts, opts.timeout)
}

/// [`prove_rule`] with the first share of its calls (past the shares a
/// width-generic attempt already found too short).
pub fn prove_width(rule: &Rule, width: u32, opts: &Options, first: Duration) -> RuleResult {
    within_budget(opts, || prove_rule_within(rule, width, opts, first))
}

/// [`prove_rule`] with the first share of its calls.
fn prove_rule_within(rule: &Rule, width: u32, opts: &Options, first: Duration) -> RuleResult {
    prove_lemmas(rule, opts);
    let start = Instant::now();
    let mut notes = Vec::new();
    let mut spent = Spent::new(opts.query_bound());
    let deadline = opts.query_deadline(start);
    let instances = rule.instances();
    if let Some(reason) = opts.past_deadline() {
        return RuleResult::unknown(rule, width, reason, 0.0, None);
    }
    let mut method = Mode::Bv;
    let mut tally = Tally::new();
    let mut shares = Shares {
        share: first,
        spent: &mut spent,
        instances: instances.len(),
    };
    let mut solver = SolverKind::Z3;
    // Whether an instance was settled by walking every assignment.
    let mut walked = false;
    // The walks happen within the query's bound too: where an instance is
    // small enough to walk, the solvers get the first half of it and the
    // walks of what they leave unknown the rest.
    let walkable = opts.walk
        && instances
            .iter()
            .any(|t| crate::exhaustive::size(rule, t, width).is_ok());
    let walk_end = deadline.unwrap_or_else(|| start + Duration::from_secs(3600));
    let solve_by = match (walkable, opts.query_bound()) {
        (true, Some(b)) => deadline.map(|d| d.min(start + b / 2)),
        _ => deadline,
    };
    for types in &instances {
        let mut solve = || prove_instance(rule, types, width, opts, &mut shares, &mut notes);
        let (outcome, mode, by) = match solve_by {
            Some(d) => with_deadline(d, solve),
            None => solve(),
        };
        let (outcome, by) = match outcome {
            Outcome::Unknown(reason) if opts.walk => {
                match walk_unknown(rule, types, width, walk_end, reason, &mut notes) {
                    (o, true) => (o, SolverKind::Interpreter),
                    (o, false) => (o, by),
                }
            }
            settled => (settled, by),
        };
        walked |= by == SolverKind::Interpreter;
        method = method.max(mode);
        solver = solver.max(by);
        if tally.add(outcome) {
            break;
        }
    }
    let (verdict, all_cached) = tally.verdict(instances.len());
    let unknown = matches!(verdict, ProofVerdict::Unknown { .. });
    if width > 16 {
        method = Mode::Int;
    }
    RuleResult {
        rule: rule.name.clone(),
        width,
        verdict,
        method: if walked {
            Method::Interpreter
        } else {
            Method::Solver(method)
        },
        solver,
        cached: all_cached,
        instances: instances.len(),
        seconds: start.elapsed().as_secs_f64(),
        notes,
        cross_check: CrossCheck::NotRun,
        width_generic: false,
        generic_attempt_seconds: 0.0,
        budget: unknown.then_some(spent),
        generic_budget: None,
        width_by_width: None,
    }
}

/// An instance the solvers left unknown, walked where it is small enough
/// ([`crate::exhaustive`]), until `end`: the outcome, and whether the walk
/// settled it.
fn walk_unknown(
    rule: &Rule,
    types: &[DType],
    width: u32,
    end: Instant,
    reason: String,
    notes: &mut Vec<String>,
) -> (Outcome, bool) {
    match crate::exhaustive::walk(rule, types, width, end) {
        Err(e @ crate::exhaustive::NotWalked::Unrealizable(_)) => {
            notes.push(format!("not walked at {width} bits: {e}"));
            (Outcome::Unknown(reason), false)
        }
        // Too large, or a guard that reads bounds: never a walk's to settle.
        Err(_) => (Outcome::Unknown(reason), false),
        Ok(Walked::Proved { .. }) => (Outcome::Proved { cached: false }, true),
        Ok(Walked::Vacuous) => (Outcome::Vacuous, true),
        Ok(Walked::Failed(cex)) => (Outcome::Failed(cex), true),
        Ok(Walked::InternalError(e)) => (Outcome::InternalError(e), true),
        Ok(Walked::OutOfTime { points, of }) => {
            let note = format!(
                "the walk of every assignment at {width} bits ran out of time after {points} of {of}"
            );
            if !notes.contains(&note) {
                notes.push(note);
            }
            (Outcome::Unknown(reason), false)
        }
    }
}

/// Proves the lemmas `rule` cites, each once per process on its own (with
/// its own time, within the run's budget), before the rule's query time
/// starts.
pub fn prove_lemmas(rule: &Rule, opts: &Options) {
    for u in &rule.lemmas {
        prove_lemma(&u.name, opts);
    }
}

/// Proves the lemma `name` (and the lemmas it cites) once per process,
/// within the run's budget; a later call has its proof at once.
pub fn prove_lemma(name: &str, opts: &Options) {
    within_budget(opts, || {
        opts.lemmas.result(name, opts.timeout, opts.cache.as_ref());
    })
}

/// Runs `f` within the run's budget ([`Options::deadline`]), which the
/// lemmas' own time does not lift.
fn within_budget<T>(opts: &Options, f: impl FnOnce() -> T) -> T {
    match opts.deadline {
        Some(d) => crate::solver::with_budget(d, f),
        None => f(),
    }
}

/// Rules with more pattern nodes than this are not handed to Z3: building
/// and preprocessing the query is not interruptible by the timeout, and
/// grows past it (a 5,000-term chain, 10,001 nodes, takes about 25 s at
/// one width; a 15,000-term one 5 minutes). Such a rule is unknown, never
/// proved.
pub const RULE_NODES: usize = 12_000;

/// Why a rule is not handed to Z3 at all, if it has more than
/// [`RULE_NODES`] pattern nodes.
fn over_smt_limit(rule: &Rule) -> Option<String> {
    let nodes = rule.lhs.size() + rule.rhs.size();
    (nodes > RULE_NODES).then(|| {
        format!(
            "the rule has {}: over the SMT limit of {RULE_NODES}",
            engine::print::count(nodes, "pattern node")
        )
    })
}

/// Proves one type instance: bitvectors first at widths 8 and 16, bounded
/// integers when they time out (and at 32 and 64), with cvc5 on the
/// bitvector query beside them once Z3 left it unknown (the portfolio).
/// Returns the outcome, the encoding and the solver that settled it.
fn prove_instance(
    rule: &Rule,
    types: &[DType],
    width: u32,
    opts: &Options,
    shares: &mut Shares,
    notes: &mut Vec<String>,
) -> (Outcome, Mode, SolverKind) {
    let modes = modes(width);
    if let Some((mode, by)) = cached_mode(rule, types, width, modes, opts) {
        return (Outcome::Proved { cached: true }, mode, by);
    }
    if let Some(reason) = over_smt_limit(rule) {
        return (Outcome::Unknown(reason), Mode::Int, SolverKind::Z3);
    }
    let mut race: Option<Race> = None;
    // Z3's work, stopped once cvc5 has answered.
    let z3 = |race: &Option<Race>, f: &mut dyn FnMut() -> Outcome| match race {
        Some(r) => with_stop(r.answered(), f),
        None => f(),
    };
    let mut last = (Outcome::Unknown("no encoding tried".into()), Mode::Int);
    for &mode in modes {
        if out_of_time() {
            last = (Outcome::Unknown(out_of_time_reason()), mode);
            break;
        }
        let enc = Enc::new(mode, width);
        let out = z3(&race, &mut || {
            solve_query(rule, types, enc, opts, shares, notes)
        });
        let unknown = matches!(out, Outcome::Unknown(_));
        last = (out, mode);
        if !unknown {
            break;
        }
        if mode == Mode::Bv && opts.portfolio && crate::cvc5::version().is_some() {
            race = start_race(rule, types, enc, opts);
        }
    }
    // Z3 4.8.12's nonlinear arithmetic sometimes gives up ("incomplete")
    // or is cut short on a loaded machine where another random seed
    // settles the same query at once: one more try of the integer
    // encoding, so that a verdict does not hinge on one search path. Still
    // unknown after it is unknown.
    if matches!(last.0, Outcome::Unknown(_)) && !out_of_time() {
        let retry = Options {
            seed: opts.seed.wrapping_add(1),
            ..opts.clone()
        };
        let enc = Enc::new(Mode::Int, width);
        let out = z3(&race, &mut || {
            solve_query(rule, types, enc, &retry, shares, notes)
        });
        if !matches!(out, Outcome::Unknown(_)) {
            last = (out, Mode::Int);
        }
    }
    let Some(race) = race else {
        return (last.0, last.1, SolverKind::Z3);
    };
    if !matches!(last.0, Outcome::Unknown(_)) {
        race.stop();
        return (last.0, last.1, SolverKind::Z3);
    }
    let enc = Enc::new(Mode::Bv, width);
    match race.finish() {
        Settled::Unknown(why) => {
            let note = format!("portfolio at {width} bits: {why}");
            if !notes.contains(&note) {
                notes.push(note);
            }
            (last.0, last.1, SolverKind::Z3)
        }
        Settled::Vacuous => (Outcome::Vacuous, Mode::Bv, SolverKind::Cvc5),
        Settled::Proved => {
            if let Some(c) = &opts.cache {
                let built = Built::new(rule, types, enc, opts, Some(c), &mut Vec::new());
                if let Some(k) = &built.key {
                    c.record_proof(k, &rule.name, SolverKind::Cvc5);
                }
            }
            (
                Outcome::Proved { cached: false },
                Mode::Bv,
                SolverKind::Cvc5,
            )
        }
        Settled::Fails(model) => (
            cvc5_counterexample(rule, types, enc, opts, &model),
            Mode::Bv,
            SolverKind::Cvc5,
        ),
    }
}

/// Starts cvc5 on the bitvector query of one type instance, for the
/// query's time that is left (none left: no race).
fn start_race(rule: &Rule, types: &[DType], enc: Enc, opts: &Options) -> Option<Race> {
    let left = crate::solver::time_left(opts.query_bound().unwrap_or(opts.timeout))?;
    let built = Built::new(rule, types, enc, opts, None, &mut Vec::new());
    let failures: Vec<z3::ast::Bool> = built.conditions.iter().map(|(_, c)| c.clone()).collect();
    Some(Race::start(&built.q.premise, &failures, left))
}

/// The counterexample at cvc5's failing input: its model pinned on Z3's
/// own query, which then reads it the usual way (and the reference
/// interpreter confirms it).
fn cvc5_counterexample(
    rule: &Rule,
    types: &[DType],
    enc: Enc,
    opts: &Options,
    model: &str,
) -> Outcome {
    let built = Built::new(rule, types, enc, opts, None, &mut Vec::new());
    let solver = solver_for(&built, opts);
    pin_model(&solver, model);
    for (failure, cond) in &built.conditions {
        solver.push();
        solver.assert(cond);
        if check_within(&solver, opts.timeout) == SatResult::Sat {
            if let Some(m) = solver.get_model() {
                return match extract(&m, &built.q, *failure) {
                    Ok(cex) => Outcome::Failed(Box::new(cex)),
                    Err(e) => Outcome::InternalError(e),
                };
            }
        }
        solver.pop(1);
    }
    Outcome::Unknown("cvc5 found a failing input that Z3 could not read back".into())
}

fn out_of_time_reason() -> String {
    "out of time: the query's time ran out before this attempt".to_string()
}

/// Whether some encoding's query of this instance is in the proof cache:
/// checked before any solving, so that a warm run does not first retry a
/// bitvector query that timed out before the integer one was proved.
fn cached_mode(
    rule: &Rule,
    types: &[DType],
    width: u32,
    modes: &[Mode],
    opts: &Options,
) -> Option<(Mode, SolverKind)> {
    let cache = opts.cache.as_ref()?;
    modes.iter().copied().find_map(|mode| {
        let enc = Enc::new(mode, width);
        let built = Built::new(rule, types, enc, opts, Some(cache), &mut Vec::new());
        let by = cache.proved_by(built.key.as_ref()?)?;
        Some((mode, by))
    })
}

/// One instance's query in one encoding, built: its obligations, linear
/// abstraction and cache key.
struct Built<'r> {
    q: RuleQuery<'r>,
    conditions: Vec<(Failure, z3::ast::Bool)>,
    abstraction: Abstraction,
    key: Option<Query>,
}

impl<'r> Built<'r> {
    /// Builds the query, and its cache key where there is a `cache`.
    fn new(
        rule: &'r Rule,
        types: &[DType],
        enc: Enc,
        opts: &Options,
        cache: Option<&Cache>,
        notes: &mut Vec<String>,
    ) -> Built<'r> {
        crate::poly::take_nonlinear();
        let mut q = RuleQuery::new(rule, types, enc);
        assume_lemmas(&mut q, opts, notes);
        let conditions = conditions(&q, &enc);
        let abstraction = Abstraction::new(crate::poly::take_nonlinear());
        let key = cache.map(|_| cache_query(&q, &conditions, &enc));
        Built {
            q,
            conditions,
            abstraction,
            key,
        }
    }

    fn is_cached(&self, cache: Option<&Cache>) -> bool {
        matches!((cache, &self.key), (Some(c), Some(k)) if c.is_proved(k))
    }
}

fn solve_query(
    rule: &Rule,
    types: &[DType],
    enc: Enc,
    opts: &Options,
    shares: &mut Shares,
    notes: &mut Vec<String>,
) -> Outcome {
    // Bit-blasting a symbolic product or quotient is either quick or
    // hopeless, so a bitvector query (the integer encoding follows it at
    // the same width) gets a tenth of the share, and no second round.
    let bitvector = enc.mode == Mode::Bv;
    let first = if bitvector {
        shares.share / 10
    } else {
        shares.share
    };
    let what = shares.label(types, &enc, opts.seed);
    // What the first round found out once: the cache key, and how long
    // building the query took.
    let mut key = None;
    let mut building = None;
    let (out, share) = shares.spent.escalate(
        &what,
        first,
        !bitvector,
        |share| {
            // A round rebuilds the query; one that could not even do that
            // in the time left is not started (building is not
            // interruptible).
            if building.is_some_and(|b| time_left(Duration::MAX).is_none_or(|left| left < b)) {
                return Outcome::Unknown(out_of_time_reason());
            }
            let first_round = building.is_none();
            if first_round {
                // The first round looks the query up in the cache in the
                // thread's context: a context costs a few milliseconds,
                // which a warm run (one cache lookup per query) would feel.
                let start = Instant::now();
                let cache = opts.cache.as_ref();
                let built = Built::new(rule, types, enc, opts, cache, notes);
                building = Some(start.elapsed());
                if built.is_cached(cache) {
                    return Outcome::Proved { cached: true };
                }
                key = built.key.clone();
                if let Some(dir) = &opts.smt2_dir {
                    let (q, conditions) = (&built.q, &built.conditions);
                    let solver = solver_for(&built, opts);
                    write_smt2(dir, rule, types, &enc, &solver, conditions, &q.hints);
                }
            }
            // Every round solves in a Z3 context of its own, the query
            // built again there, as it would be alone: in a context other
            // queries have built terms in (a worker's, reused), or where
            // its checks were cancelled, Z3 4.8.12 goes down other paths
            // (issue 39's rule: 3.4 s in a fresh context at a share of 4
            // s, still open after 16 s in the used one; nested_div_add,
            // 1.5 s alone, cancelled at its first share of 10 s in one
            // cold run of the built-in rules in three). The first round's
            // notes came with its lookup.
            let mut scratch = Vec::new();
            let notes = if first_round {
                &mut scratch
            } else {
                &mut *notes
            };
            z3::with_z3_config(&z3::Config::new(), || {
                let built = Built::new(rule, types, enc, opts, None, notes);
                check_round(&solver_for(&built, opts), &built, opts, share)
            })
        },
        |out| !matches!(out, Outcome::Unknown(_)),
    );
    if !bitvector {
        shares.share = share;
    }
    if let (Outcome::Proved { cached: false }, Some(c), Some(k)) = (&out, &opts.cache, &key) {
        c.record_proof(k, &rule.name, SolverKind::Z3);
    }
    out
}

/// A solver with the query's premise asserted (and the run's seed).
fn solver_for(built: &Built, opts: &Options) -> Solver {
    let solver = Solver::new();
    if opts.seed != 0 {
        let mut p = z3::Params::new();
        p.set_u32("random_seed", opts.seed);
        solver.set_params(&p);
    }
    solver.assert(&built.q.premise);
    solver
}

/// One round of a query's checks on `solver` (the premise asserted),
/// each given `share` (the quick helpers a quarter of it): the premise
/// must be satisfiable, then each obligation unsatisfiable.
fn check_round(solver: &Solver, built: &Built, opts: &Options, share: Duration) -> Outcome {
    let q = &built.q;
    // Vacuity: a witness with small inputs is usually found at once, where
    // a nonlinear premise can keep the solver searching; only if there is
    // none is the whole range tried.
    solver.push();
    for c in crate::counterexample::small_inputs(q, 16) {
        solver.assert(&c);
    }
    let small = labelled("vacuity, small inputs", || check_within(solver, share / 4));
    solver.pop(1);
    let vacuity = if small == SatResult::Sat {
        SatResult::Sat
    } else {
        labelled("vacuity", || check_within(solver, share))
    };
    match vacuity {
        SatResult::Unsat => return Outcome::Vacuous,
        SatResult::Unknown => return Outcome::Unknown(unknown_reason(solver, "vacuity check")),
        SatResult::Sat => {}
    }
    for (failure, cond) in &built.conditions {
        // Past the deadline nothing more is checked: setting up the
        // helpers' solvers alone took 0.1 s past a bound of 1 s at a load
        // of 8.
        if out_of_time() {
            return Outcome::Unknown(out_of_time_reason());
        }
        let refuted = labelled(&format!("{}, linear abstraction", failure.name()), || {
            built.abstraction.refutes(&q.premise, cond, share / 4)
        });
        if refuted {
            continue;
        }
        let hints_first = *failure == Failure::TargetUndefined;
        let result = labelled(failure.name(), || {
            let r = check_with_hints(solver, cond, &q.hints, hints_first, share);
            if r == SatResult::Unknown && split_on_constant_signs(solver, q, share) {
                return SatResult::Unsat;
            }
            r
        });
        match result {
            SatResult::Unsat => solver.pop(1),
            SatResult::Unknown => return Outcome::Unknown(unknown_reason(solver, failure.name())),
            SatResult::Sat if q.enc.is_generic() => {
                let max = solver.get_model().and_then(|m| {
                    m.eval(&z3::ast::Int::new_const(crate::encode::INDEX_MAX), true)?
                        .as_i64()
                });
                let at = max.map_or(String::new(), |m| format!(" at MAX = {m}"));
                return Outcome::GenericModel(format!(
                    "its {} condition has a model{at}",
                    failure.name()
                ));
            }
            SatResult::Sat => {
                // The unbounded integers' counterexample becomes an
                // instance at the nominal width (the peer's instances are
                // judged there): a model whose values all fit it, if one
                // exists. One that needs a wider value is no instance.
                if q.enc.is_unbounded_integers() {
                    for c in crate::counterexample::at_nominal_width(q) {
                        solver.assert(&c);
                    }
                    let fits = labelled("a counterexample within 64 bits", || {
                        check_within(solver, share)
                    });
                    match fits {
                        SatResult::Sat => {}
                        SatResult::Unsat => {
                            return Outcome::Unknown(format!(
                                "its {} condition has models, each with a value past {} bits (no instance holds it)",
                                failure.name(),
                                q.enc.width
                            ))
                        }
                        SatResult::Unknown => {
                            return Outcome::Unknown(unknown_reason(solver, "a counterexample within 64 bits"))
                        }
                    }
                }
                let model = labelled("minimizing the counterexample", || {
                    minimize(solver, q, share, opts.seed)
                })
                .expect("a satisfiable query has a model");
                return match extract(&model, q, *failure) {
                    Ok(cex) => Outcome::Failed(Box::new(cex)),
                    Err(e) => Outcome::InternalError(e),
                };
            }
        }
    }
    Outcome::Proved { cached: false }
}

/// Conjoins the instances of the lemmas the rule cites to its premise
/// (integer theory; proved lemmas only: a lemma that is not proved is
/// refused, never assumed, and noted).
fn assume_lemmas(q: &mut RuleQuery, opts: &Options, notes: &mut Vec<String>) {
    if q.rule.lemmas.is_empty() {
        return;
    }
    let (facts, refused) = opts.lemmas.for_query(q, opts.timeout, opts.cache.as_ref());
    for r in refused {
        let note = format!("lemma refused, not assumed: {r}");
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
    if !facts.is_empty() {
        let mut all = vec![q.premise.clone()];
        all.extend(facts);
        q.premise = z3::ast::Bool::and(&all);
    }
}

/// The cache's view of a query: its exact text and encoding.
fn cache_query(q: &RuleQuery, conditions: &[(Failure, z3::ast::Bool)], enc: &Enc) -> Query {
    let mut texts = vec![q.premise.to_string()];
    texts.extend(conditions.iter().map(|(_, c)| c.to_string()));
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    Query::new(&enc.label(), &texts)
}

/// The cache queries of a rule at a width, one per type instance and
/// encoding tried there (the width-generic one first where the rule
/// allows it): where its proofs are cached (for tests and tools that
/// inspect the cache).
pub fn cache_queries(rule: &Rule, width: u32) -> Vec<Query> {
    let mut out = Vec::new();
    let mut encs: Vec<Enc> = Vec::new();
    if width >= 8 && width_generic_obstacle(rule).is_none() {
        encs.push(Enc::generic());
    }
    encs.extend(modes(width).iter().map(|&m| Enc::new(m, width)));
    for types in rule.instances() {
        for &enc in &encs {
            crate::poly::take_nonlinear();
            let mut q = RuleQuery::new(rule, &types, enc);
            assume_lemmas(&mut q, &Options::default(), &mut Vec::new());
            let conditions = conditions(&q, &enc);
            crate::poly::take_nonlinear();
            out.push(cache_query(&q, &conditions, &enc));
        }
    }
    out
}

/// The encodings tried at a width, in order.
fn modes(width: u32) -> &'static [Mode] {
    if width <= 16 {
        &[Mode::Bv, Mode::Int]
    } else {
        &[Mode::Int]
    }
}

/// Each failure with its condition.
fn conditions(q: &RuleQuery, enc: &Enc) -> Vec<(Failure, z3::ast::Bool)> {
    Failure::ALL
        .iter()
        .map(|&f| (f, failure_condition(f, &q.src, &q.tgt, enc, q.root_dtype)))
        .collect()
}

/// Settles an obligation the solver gave up on by a case split on the sign
/// of one rule constant (`< 0`, `= 0`, `> 0`), trying each integer
/// constant in turn: with the sign fixed, the `If`s of the division
/// encodings on that sign fold away and the cases are often easy (as for
/// `(a // C1 + C2) // C3` on the sign of `C1`). True only when every case of
/// one split is unsat; a satisfiable or unknown case gives up that split.
/// A constant whose sign the premise alone fixes (a guard `C > 0`) is not
/// split on: its one possible case is the obligation itself, the check
/// just cut short at this share.
fn split_on_constant_signs(solver: &Solver, q: &RuleQuery, timeout: Duration) -> bool {
    use crate::encode::{Num, Term};
    let constants = q
        .syms
        .iter()
        .filter(|s| s.is_const_var && s.dtype != DType::Bool);
    for s in constants {
        let Term::N(Num::I(p)) = &s.val.val else {
            continue;
        };
        if out_of_time() {
            return false;
        }
        let v = p.to_int();
        let zero = z3::ast::Int::from_i64(0);
        // The symbol's name without the suffix that keeps it unique.
        let name = s.name.split('#').next().unwrap_or(&s.name);
        let fixed = [(v.le(&zero), "<="), (v.ge(&zero), ">=")]
            .iter()
            .any(|(c, op)| {
                let alone = Solver::new();
                alone.assert(&q.premise);
                alone.assert(c);
                labelled(&format!("premise alone, if {name} {op} 0"), || {
                    check_within(&alone, timeout / 4) == SatResult::Unsat
                })
            });
        if fixed {
            continue;
        }
        let cases = [(v.lt(&zero), "<"), (v.eq(&zero), "="), (v.gt(&zero), ">")];
        let all_unsat = cases.iter().all(|(c, op)| {
            solver.push();
            solver.assert(c);
            let r = labelled(&format!("if {name} {op} 0"), || {
                check_within(solver, timeout)
            });
            solver.pop(1);
            r == SatResult::Unsat
        });
        if all_unsat {
            return true;
        }
    }
    false
}

/// The linear abstraction of a query: every nonlinear term replaced by an
/// uninterpreted function of its operands (`mul(a, mul(N, K))` for a
/// product, with the factors that are not rule constants outermost, so
/// that `a*N*K` and `lo*N*K` agree where `a == lo`; `div(x, y)`, `mod(x, y)`
/// for a division by a symbolic divisor). It only forgets facts, so when
/// it is unsatisfiable the query is: a proof. (Its models can be spurious
/// and are never reported.) Uninterpreted functions with linear integer
/// arithmetic are decided completely and fast; this settles the
/// obligations whose nonlinear parts the premise already pins down, such
/// as a product bounded by the interval facts of the guard.
pub(crate) struct Abstraction {
    pairs: Vec<(z3::ast::Int, z3::ast::Int)>,
}

impl Abstraction {
    pub(crate) fn new(nonlinear: Vec<crate::poly::Nonlinear>) -> Abstraction {
        use crate::poly::Nonlinear;
        use z3::ast::Int;
        use z3::{FuncDecl, Sort};
        let int = Sort::int();
        let binary = |name: &str| FuncDecl::new(name, &[&int, &int], &int);
        let (mul, div, rem) = (binary("mul#"), binary("div#"), binary("mod#"));
        let app = |f: &FuncDecl, a: &Int, b: &Int| -> Int {
            f.apply(&[a as &dyn Ast, b as &dyn Ast])
                .as_int()
                .expect("an integer function")
        };
        let pairs = nonlinear
            .into_iter()
            .map(|n| {
                let abstracted = match &n {
                    Nonlinear::Product(_, factors) => {
                        // Constants innermost, in their sorted order.
                        let mut fs: Vec<&(Int, bool)> = factors.iter().filter(|f| !f.1).collect();
                        fs.extend(factors.iter().filter(|f| f.1));
                        let mut it = fs.into_iter().rev();
                        let last = it.next().expect("a product has factors").0.clone();
                        it.fold(last, |acc, f| app(&mul, &f.0, &acc))
                    }
                    Nonlinear::Div(_, x, y, false) => app(&div, x, y),
                    Nonlinear::Div(_, x, y, true) => app(&rem, x, y),
                };
                (n.term().clone(), abstracted)
            })
            .collect();
        Abstraction { pairs }
    }

    /// The same abstraction of a query in which `f` replaced some terms.
    pub(crate) fn map(&self, f: impl Fn(&z3::ast::Int) -> z3::ast::Int) -> Abstraction {
        Abstraction {
            pairs: self.pairs.iter().map(|(a, b)| (f(a), f(b))).collect(),
        }
    }

    pub(crate) fn refutes(
        &self,
        premise: &z3::ast::Bool,
        cond: &z3::ast::Bool,
        timeout: Duration,
    ) -> bool {
        if self.pairs.is_empty() {
            return false;
        }
        let subs: Vec<(&z3::ast::Int, &z3::ast::Int)> =
            self.pairs.iter().map(|(a, b)| (a, b)).collect();
        let solver = Solver::new();
        solver.assert(premise.substitute(&subs));
        solver.assert(cond.substitute(&subs));
        check_within(&solver, timeout) == SatResult::Unsat
    }
}

/// Writes one SMT-LIB2 file per obligation, runnable by plain `z3` or
/// `cvc5`: sat means a counterexample.
fn write_smt2(
    dir: &std::path::Path,
    rule: &Rule,
    types: &[DType],
    enc: &Enc,
    solver: &Solver,
    conds: &[(Failure, z3::ast::Bool)],
    hints: &[z3::ast::Bool],
) {
    let inst: String = types.iter().map(|d| format!("-{d}")).collect();
    let base = format!(
        "{}{}-{}-{}",
        rule.name,
        inst,
        match enc.index {
            IndexRange::Generic => "wgeneric".to_string(),
            IndexRange::Unbounded => "unbounded".to_string(),
            IndexRange::Width => format!("w{}", enc.width),
        },
        if enc.mode == Mode::Bv { "bv" } else { "int" }
    );
    let _ = std::fs::create_dir_all(dir);
    for (what, text) in smt2_texts(solver, conds, hints) {
        let _ = std::fs::write(dir.join(format!("{base}-{what}.smt2")), text);
    }
}

/// The SMT-LIB2 texts of a query's checks, named by what they check: the
/// vacuity check (the premise alone), then each obligation, the
/// target-undefined one with the hints the prover tries first there.
fn smt2_texts(
    solver: &Solver,
    conds: &[(Failure, z3::ast::Bool)],
    hints: &[z3::ast::Bool],
) -> Vec<(&'static str, String)> {
    let mut out = vec![("vacuity", solver.to_smt2())];
    for (f, c) in conds {
        solver.push();
        solver.assert(c);
        if *f == Failure::TargetUndefined {
            hints.iter().for_each(|h| solver.assert(h));
        }
        out.push((f.name(), solver.to_smt2()));
        solver.pop(1);
    }
    out
}

/// The integer queries Z3 proves `rule` with, as SMT-LIB2 texts, one per
/// type instance and obligation: the width-generic ones where the rule
/// allows it, else width 64's, with the lemma instances the proof assumes.
/// The cross-check gives them to its second solver where the bitvector
/// query is beyond it: a check of the solver, not of the encoding.
pub fn integer_obligations(rule: &Rule, opts: &Options) -> Vec<String> {
    let enc = if width_generic_obstacle(rule).is_none() {
        Enc::generic()
    } else {
        Enc::new(Mode::Int, 64)
    };
    let mut out = Vec::new();
    for types in rule.instances() {
        crate::poly::take_nonlinear();
        let mut q = RuleQuery::new(rule, &types, enc);
        assume_lemmas(&mut q, opts, &mut Vec::new());
        let conds = conditions(&q, &enc);
        crate::poly::take_nonlinear();
        let solver = Solver::new();
        solver.assert(&q.premise);
        out.extend(
            smt2_texts(&solver, &conds, &q.hints)
                .into_iter()
                .skip(1)
                .map(|(_, text)| text),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cvc5s_failing_input_becomes_a_confirmed_counterexample() {
        if crate::cvc5::version().is_none() {
            eprintln!("cvc5 is not installed: no model to read");
            return;
        }
        let set = engine::rules::RuleSet::parse(
            "t.rules",
            "group g\n# wrong: x // 2 * 2 is not x for odd x\nrule halve_double: x // 2 * 2 => x\n",
        )
        .unwrap();
        let rule = set.rule("halve_double").unwrap();
        let types = &rule.instances()[0];
        let enc = Enc::new(Mode::Bv, 8);
        let opts = Options::default();
        let race = start_race(rule, types, enc, &opts).expect("time is left");
        let Settled::Fails(model) = race.finish() else {
            panic!("cvc5 does not refute the rule");
        };
        match cvc5_counterexample(rule, types, enc, &opts, &model) {
            Outcome::Failed(cex) => assert!(cex.confirmed.is_ok(), "{cex:?}"),
            other => panic!("not a counterexample: {other:?}"),
        }
    }
}
