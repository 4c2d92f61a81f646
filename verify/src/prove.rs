//! Proving rules: for each rule, width and type instance, the premise must
//! be satisfiable (else the rule is vacuous), then three obligations are
//! checked in order, each a named failure: the target is undefined where
//! the source is defined; validity differs; values differ. A rule is proved
//! only when Z3 answers unsat to all three; a timeout is unknown.
//!
//! Widths 8 and 16 use bit-exact bitvectors; a bitvector query that times
//! out is settled by the bounded-integer encoding at the same width. Widths
//! 32 and 64 use bounded integers.

use crate::cache::Query;
use crate::counterexample::{
    extract, failure_condition, minimize, Counterexample, Failure, InternalError,
};
use crate::encode::{Enc, Mode};
use crate::query::RuleQuery;
use crate::solver::{check_within, out_of_time, unknown_reason, with_deadline};
use engine::ir::DType;
use engine::rules::Rule;
use rayon::prelude::*;
use serde::Serialize;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use z3::ast::Ast;
use z3::{SatResult, Solver};

/// How to prove.
#[derive(Clone, Debug)]
pub struct Options {
    pub widths: Vec<u32>,
    /// Per solver call; one rule at one width (all its type instances,
    /// encodings, case splits and retries together) gets at most
    /// [`QUERY_FACTOR`] times this.
    pub timeout: Duration,
    pub cache: Option<crate::cache::Cache>,
    /// Write every query as an SMT-LIB2 file here.
    pub smt2_dir: Option<PathBuf>,
    /// Z3's random seed (the solver's `random_seed` parameter), which also
    /// shuffles the order in which a counterexample is minimized; 0 is
    /// Z3's default and the plain order. Proofs do not depend on it (and
    /// the cache ignores it); which counterexample a failing rule gets
    /// does.
    pub seed: u32,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            widths: vec![8, 16, 32, 64],
            timeout: Duration::from_secs(10),
            cache: None,
            smt2_dir: None,
            seed: 0,
        }
    }
}

/// How many solver timeouts one rule at one width may take in all: the
/// wall time of a query is at most `QUERY_FACTOR * timeout` plus the time
/// to build it and read a counterexample (a fraction of a second). Not 1:
/// a query runs several checks (vacuity, three obligations, a case split,
/// a retry with another seed), and a hard built-in rule takes up to 5
/// timeouts in all at the default 10 s on a 2-core machine
/// (floor_nested_div_add at 64 bits: 41.6 s and 49.6 s), more under load: 6
/// left it unknown (60 s) in a run of the built-in set beside two other
/// builds. 10 keeps a margin of 2.
pub const QUERY_FACTOR: u32 = 10;

/// The verdict for one rule at one width (over all its type instances).
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum Verdict {
    Proved,
    /// Some obligation fails: a counterexample.
    Failed {
        counterexample: Box<Counterexample>,
    },
    /// The premise (bounds, guard, source defined) can never hold.
    Vacuous,
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

impl Verdict {
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Proved => "proved",
            Verdict::Failed { .. } => "failed",
            Verdict::Vacuous => "vacuous",
            Verdict::Unknown { .. } => "unknown",
            Verdict::InternalError { .. } => "internal-error",
        }
    }
}

/// One rule at one width.
#[derive(Clone, Debug, Serialize)]
pub struct RuleResult {
    pub rule: String,
    pub width: u32,
    #[serde(flatten)]
    pub verdict: Verdict,
    /// The encoding that settled it (the strongest any instance needed).
    pub method: &'static str,
    /// Every instance came from the cache.
    pub cached: bool,
    pub instances: usize,
    pub seconds: f64,
}

/// The outcome of one instance in one encoding.
enum Outcome {
    Proved { cached: bool },
    Failed(Box<Counterexample>),
    InternalError(Box<InternalError>),
    Vacuous,
    Unknown(String),
}

/// Proves every (rule, width) pair in parallel, calling `progress` as each
/// finishes. Results come back in (rule, width) order.
pub fn prove_all(
    rules: &[&Rule],
    opts: &Options,
    progress: &(dyn Fn(&RuleResult) + Sync),
) -> Vec<RuleResult> {
    let jobs: Vec<(&Rule, u32)> = rules
        .iter()
        .flat_map(|r| opts.widths.iter().map(move |&w| (*r, w)))
        .collect();
    jobs.par_iter()
        .map(|&(r, w)| {
            let res = prove_rule(r, w, opts);
            progress(&res);
            res
        })
        .collect()
}

/// Proves one rule at one width, over all its type instances.
pub fn prove_rule(rule: &Rule, width: u32, opts: &Options) -> RuleResult {
    let start = Instant::now();
    // A timeout too large to add is no bound.
    let deadline = opts
        .timeout
        .checked_mul(QUERY_FACTOR)
        .and_then(|b| start.checked_add(b));
    let instances = rule.instances();
    let mut method = Mode::Bv;
    let mut all_cached = true;
    let mut vacuous = 0;
    let mut verdict = Verdict::Proved;
    for types in &instances {
        let (outcome, mode) = match deadline {
            Some(d) => with_deadline(d, || prove_instance(rule, types, width, opts)),
            None => prove_instance(rule, types, width, opts),
        };
        method = method.max(mode);
        match outcome {
            Outcome::Proved { cached } => all_cached &= cached,
            Outcome::Vacuous => {
                all_cached = false;
                vacuous += 1;
            }
            Outcome::Failed(cex) => {
                verdict = Verdict::Failed {
                    counterexample: cex,
                };
                all_cached = false;
                break;
            }
            Outcome::InternalError(e) => {
                verdict = Verdict::InternalError { internal_error: e };
                all_cached = false;
                break;
            }
            Outcome::Unknown(reason) => {
                all_cached = false;
                if !matches!(verdict, Verdict::Unknown { .. }) {
                    verdict = Verdict::Unknown { reason };
                }
            }
        }
    }
    if matches!(verdict, Verdict::Proved) && vacuous == instances.len() {
        verdict = Verdict::Vacuous;
    }
    if width > 16 {
        method = Mode::Int;
    }
    RuleResult {
        rule: rule.name.clone(),
        width,
        verdict,
        method: method.name(),
        cached: all_cached,
        instances: instances.len(),
        seconds: start.elapsed().as_secs_f64(),
    }
}

/// Rules with more pattern nodes than this are not handed to Z3: building
/// and preprocessing the query is not interruptible by the timeout, and
/// grows past it (a 5,000-term chain, 10,001 nodes, takes about 25 s at
/// one width; a 15,000-term one 5 minutes). Such a rule is unknown, never
/// proved.
pub const RULE_NODES: usize = 12_000;

/// Proves one type instance: bitvectors first at widths 8 and 16, bounded
/// integers when they time out (and at 32 and 64).
fn prove_instance(rule: &Rule, types: &[DType], width: u32, opts: &Options) -> (Outcome, Mode) {
    let modes = modes(width);
    if let Some(mode) = cached_mode(rule, types, width, modes, opts) {
        return (Outcome::Proved { cached: true }, mode);
    }
    let nodes = rule.lhs.size() + rule.rhs.size();
    if nodes > RULE_NODES {
        let reason = format!(
            "the rule has {}: over the SMT limit of {RULE_NODES}",
            engine::print::count(nodes, "pattern node")
        );
        return (Outcome::Unknown(reason), Mode::Int);
    }
    let mut last = (Outcome::Unknown("no encoding tried".into()), Mode::Int);
    for &mode in modes {
        if out_of_time() {
            last = (Outcome::Unknown(out_of_time_reason()), mode);
            break;
        }
        // Bit-blasting a symbolic product or quotient is either quick or
        // hopeless, so the bitvector attempt gets a tenth of the budget when
        // the integer encoding can still settle the query at this width.
        let budget = if mode == Mode::Bv {
            opts.timeout / 10
        } else {
            opts.timeout
        };
        let opts = Options {
            timeout: budget,
            ..opts.clone()
        };
        let out = solve_query(rule, types, Enc::new(mode, width), &opts, false);
        let unknown = matches!(out, Outcome::Unknown(_));
        last = (out, mode);
        if !unknown {
            break;
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
        let out = solve_query(rule, types, Enc::new(Mode::Int, width), &retry, false);
        if !matches!(out, Outcome::Unknown(_)) {
            last = (out, Mode::Int);
        }
    }
    last
}

fn out_of_time_reason() -> String {
    format!("out of time: the query's {QUERY_FACTOR} timeouts ran out before this attempt")
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
) -> Option<Mode> {
    opts.cache.as_ref()?;
    modes.iter().copied().find(|&mode| {
        let out = solve_query(rule, types, Enc::new(mode, width), opts, true);
        matches!(out, Outcome::Proved { .. })
    })
}

fn solve_query(
    rule: &Rule,
    types: &[DType],
    enc: Enc,
    opts: &Options,
    cache_only: bool,
) -> Outcome {
    crate::poly::take_nonlinear();
    let q = RuleQuery::new(rule, types, enc);
    let conditions = conditions(&q, &enc);
    let abstraction = Abstraction::new(crate::poly::take_nonlinear());
    let key = opts
        .cache
        .as_ref()
        .map(|_| cache_query(&q, &conditions, &enc));
    if let (Some(c), Some(k)) = (&opts.cache, &key) {
        if c.is_proved(k) {
            return Outcome::Proved { cached: true };
        }
    }
    if cache_only {
        return Outcome::Unknown("not in the cache".into());
    }
    let solver = Solver::new();
    if opts.seed != 0 {
        let mut p = z3::Params::new();
        p.set_u32("random_seed", opts.seed);
        solver.set_params(&p);
    }
    solver.assert(&q.premise);
    if let Some(dir) = &opts.smt2_dir {
        write_smt2(dir, rule, types, &enc, &solver, &conditions);
    }
    // Vacuity: a witness with small inputs is usually found at once, where
    // a nonlinear premise can keep the solver searching; only if there is
    // none is the whole range tried.
    solver.push();
    for c in crate::counterexample::small_inputs(&q, 16) {
        solver.assert(&c);
    }
    let small = check_within(&solver, opts.timeout / 4);
    solver.pop(1);
    let vacuity = if small == SatResult::Sat {
        SatResult::Sat
    } else {
        check_within(&solver, opts.timeout)
    };
    match vacuity {
        SatResult::Unsat => return Outcome::Vacuous,
        SatResult::Unknown => return Outcome::Unknown(unknown_reason(&solver, "vacuity check")),
        SatResult::Sat => {}
    }
    for (failure, cond) in &conditions {
        if abstraction.refutes(&q.premise, cond, opts.timeout / 4) {
            continue;
        }
        solver.push();
        solver.assert(cond);
        match check_within(&solver, opts.timeout) {
            SatResult::Unsat => solver.pop(1),
            SatResult::Unknown if split_on_constant_signs(&solver, &q, opts.timeout) => {
                solver.pop(1)
            }
            SatResult::Unknown => return Outcome::Unknown(unknown_reason(&solver, failure.name())),
            SatResult::Sat => {
                let model = minimize(&solver, &q, opts.timeout, opts.seed)
                    .expect("a satisfiable query has a model");
                return match extract(&model, &q, *failure) {
                    Ok(cex) => Outcome::Failed(Box::new(cex)),
                    Err(e) => Outcome::InternalError(e),
                };
            }
        }
    }
    if let (Some(c), Some(k)) = (&opts.cache, &key) {
        c.record_proof(k, &rule.name);
    }
    Outcome::Proved { cached: false }
}

/// The cache's view of a query: its exact text and encoding.
fn cache_query(q: &RuleQuery, conditions: &[(Failure, z3::ast::Bool)], enc: &Enc) -> Query {
    let mut texts = vec![q.premise.to_string()];
    texts.extend(conditions.iter().map(|(_, c)| c.to_string()));
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    Query::new(&format!("{:?}/{}", enc.mode, enc.width), &texts)
}

/// The cache queries of a rule at a width, one per type instance and
/// encoding tried there: where its proofs are cached (for tests and tools
/// that inspect the cache).
pub fn cache_queries(rule: &Rule, width: u32) -> Vec<Query> {
    let mut out = Vec::new();
    for types in rule.instances() {
        for &mode in modes(width) {
            let enc = Enc::new(mode, width);
            crate::poly::take_nonlinear();
            let q = RuleQuery::new(rule, &types, enc);
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
        let v = p.to_int();
        let zero = z3::ast::Int::from_i64(0);
        let cases = [v.lt(&zero), v.eq(&zero), v.gt(&zero)];
        let all_unsat = cases.iter().all(|c| {
            solver.push();
            solver.assert(c);
            let r = check_within(solver, timeout);
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
) {
    let inst: String = types.iter().map(|d| format!("-{d}")).collect();
    let base = format!(
        "{}{}-w{}-{}",
        rule.name,
        inst,
        enc.width,
        if enc.mode == Mode::Bv { "bv" } else { "int" }
    );
    let _ = std::fs::create_dir_all(dir);
    let _ = std::fs::write(dir.join(format!("{base}-vacuity.smt2")), solver.to_smt2());
    for (f, c) in conds {
        solver.push();
        solver.assert(c);
        let _ = std::fs::write(
            dir.join(format!("{base}-{}.smt2", f.name())),
            solver.to_smt2(),
        );
        solver.pop(1);
    }
}
