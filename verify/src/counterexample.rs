//! Counterexamples: read from a model, minimized toward small magnitudes,
//! printed readably, realized as a concrete engine program, and confirmed by
//! the reference interpreter (a failure the interpreter does not reproduce
//! is an [`InternalError`], never a verdict).

use crate::encode::{model_bool, model_int, Enc, Num, SVal, Term};
use crate::query::{RuleQuery, Side};
use engine::dtype::Width;
use engine::interp::{self, PointCheck};
use engine::ir::{DType, Graph, NodeId, Op};
use engine::print;
use engine::rules::{Pat, Rule};
use engine::semantics::Model as SemModel;
use serde::{Deserialize, Serialize};
use std::fmt;
use z3::ast::Bool;
use z3::{Model, SatResult, Solver};

pub use engine::semantics::Failure;

/// The condition (beyond the premise) under which obligation `f` fails for
/// a source `s` of dtype `dt` and a target `t`: the target is undefined;
/// or, defined, it does not refine the source
/// (`engine::semantics::refinement`).
pub fn failure_condition(f: Failure, s: &SVal, t: &SVal, enc: &Enc, dt: DType) -> Bool {
    match f {
        Failure::TargetUndefined => t.def.not(),
        _ => {
            let (validity, value) = enc.refinement(s, t, dt);
            let c = if f == Failure::ValidityDiffers {
                validity
            } else {
                value
            };
            Bool::and(&[t.def.clone(), c])
        }
    }
}

/// Serializes a failure by its name (the engine has no serde).
pub fn ser_failure<S: serde::Serializer>(f: &Failure, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(f.name())
}

/// Serializes an exact value as a JSON number, or, past what a JSON
/// reader's 64-bit integers hold (an intermediate product of two 64-bit
/// values), as its decimal digits in a string: `serde_json::Value`, which
/// the gate's report is built of, holds no wider integer, and a reader
/// gets the exact value either way.
pub fn ser_wide<S: serde::Serializer>(v: &i128, s: S) -> Result<S::Ok, S::Error> {
    if let Ok(x) = i64::try_from(*v) {
        s.serialize_i64(x)
    } else if let Ok(x) = u64::try_from(*v) {
        s.serialize_u64(x)
    } else {
        s.serialize_str(&v.to_string())
    }
}

/// What a value is at the failing point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum State {
    Valid,
    Invalid,
    Unconstrained,
    Undefined,
}

/// A pattern variable's (or a program variable's) value at the point.
#[derive(Clone, Debug, Serialize)]
pub struct VarValue {
    pub name: String,
    #[serde(serialize_with = "ser_dtype")]
    pub dtype: DType,
    /// A constant variable of the rule, or a subterm that is a constant node.
    pub constant: bool,
    pub state: State,
    #[serde(serialize_with = "ser_wide")]
    pub value: i128,
    #[serde(serialize_with = "ser_wide")]
    pub lo: i128,
    #[serde(serialize_with = "ser_wide")]
    pub hi: i128,
}

/// One subterm of either side at the point.
#[derive(Clone, Debug, Serialize)]
pub struct NodeValue {
    pub side: &'static str,
    pub text: String,
    pub state: State,
    #[serde(serialize_with = "ser_wide")]
    pub value: i128,
    #[serde(serialize_with = "ser_dtype")]
    pub dtype: DType,
}

/// A concrete failing input of a rule, with every intermediate value.
#[derive(Clone, Debug, Serialize)]
pub struct Counterexample {
    pub rule: String,
    pub width: u32,
    /// Found by the unbounded-integer query ([`crate::encode::IndexRange::
    /// Unbounded`]): realized at `width` (every value fits it) and
    /// confirmed under [`Model::unbounded`], where an unconstrained operand
    /// overflows nothing.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unbounded: bool,
    /// The type instance (`T = i32`, ...), empty for monomorphic rules.
    pub types: Vec<String>,
    #[serde(serialize_with = "ser_failure")]
    pub failure: Failure,
    pub vars: Vec<VarValue>,
    pub nodes: Vec<NodeValue>,
    /// The case as a `tileproof check` file (when the engine could
    /// realize it).
    pub case: Option<String>,
    /// What the interpreter says at the realized point. A counterexample
    /// of a `Failed` verdict is always confirmed (`Ok`); one that is not is
    /// reported as an [`InternalError`].
    #[serde(serialize_with = "ser_confirmed")]
    pub confirmed: Result<String, Unconfirmed>,
}

impl Counterexample {
    /// The model it is confirmed under: the contract's at its width, or
    /// the unbounded integers' judged there.
    pub fn model(&self) -> SemModel {
        SemModel {
            unbounded: self.unbounded,
            ..SemModel::from(Width(self.width))
        }
    }
}

/// Serializes the interpreter's answer as `{"Ok": text}` or `{"Err": why}`.
pub fn ser_confirmed<S: serde::Serializer>(
    c: &Result<String, Unconfirmed>,
    s: S,
) -> Result<S::Ok, S::Error> {
    c.as_ref()
        .map(String::as_str)
        .map_err(|e| e.to_string())
        .serialize(s)
}

/// Why the interpreter finds no failure at a point.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NoFailure {
    #[error("the target refines the source here (source {src}, target {tgt})")]
    Refines { src: String, tgt: String },
    #[error("the source is undefined here ({src})")]
    SourceUndefined { src: String },
}

/// Why a counterexample is not confirmed by the interpreter.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unconfirmed {
    #[error("not yet checked")]
    NotYetChecked,
    #[error("not realized: {0}")]
    NotRealized(RealizeError),
    #[error("{0}")]
    NoFailure(NoFailure),
}

/// Why a solver's model has no engine program, or why the engine would not
/// fire the rule on the one it has.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RealizeError {
    #[error("pattern variable `{0}` is undefined")]
    UndefinedVar(String),
    #[error("{what} {value} does not fit 64 bits")]
    TooWide { what: &'static str, value: i128 },
    #[error("constant `{name}` = {value} does not fit {dtype}")]
    ConstantOutOfType {
        name: String,
        value: i64,
        dtype: DType,
    },
    #[error("bool variable `{0}` is invalid")]
    InvalidBool(String),
    #[error("bool `{name}` in [{lo}, {hi}]")]
    BoolRange { name: String, lo: i128, hi: i128 },
    #[error("the point gives `{name}` = {value}, outside its bounds [{lo}, {hi}]")]
    OutsideBounds {
        name: String,
        value: i128,
        lo: i64,
        hi: i64,
    },
    #[error("pattern variable `{name}` realized as `{shown}` has {}", .wrong.join(", "))]
    NotAsModelled {
        name: String,
        shown: String,
        wrong: Vec<String>,
    },
    #[error("computed constants only appear on the right")]
    ComputedOnLeft,
    #[error(transparent)]
    Type(#[from] engine::ir::TypeError),
    #[error("the engine would not fire the rule on the realized source: {0}")]
    WouldNotFire(#[from] engine::rules::InstantiateError),
}

/// Why a counterexample read from a model does not reproduce (the reason
/// of an [`InternalError`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotReproduced {
    #[error("the model cannot be realized: {0}")]
    NotRealized(RealizeError),
    #[error("the interpreter does not confirm it: {0}")]
    NotConfirmed(NoFailure),
    #[error("the interpreter finds {found} where the query found {query}")]
    OtherFailure { found: Failure, query: Failure },
    #[error("the case file read back gives {found} ({text}) where the query found {query}")]
    CaseOtherFailure {
        found: Failure,
        text: String,
        query: Failure,
    },
    #[error("the case file read back does not reproduce: {0}")]
    CaseNotReproduced(CaseError),
}

/// Why a case file does not replay to a failure.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CaseError {
    #[error("does not parse: {0}")]
    Parse(#[from] engine::parse::ParseError),
    #[error(transparent)]
    Point(#[from] engine::text::point::PointError),
    #[error("{0}")]
    NoFailure(#[from] NoFailure),
}

/// Serializes an error by its message.
pub fn ser_display<T: fmt::Display, S: serde::Serializer>(t: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(t)
}

/// Serializes a dtype by its name (the engine has no serde).
pub fn ser_dtype<S: serde::Serializer>(d: &DType, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(d.name())
}

impl fmt::Display for Counterexample {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inst = if self.types.is_empty() {
            String::new()
        } else {
            format!(" [{}]", self.types.join(", "))
        };
        writeln!(
            f,
            "counterexample to {} at width {}{}: {}",
            self.rule, self.width, inst, self.failure
        )?;
        for v in &self.vars {
            let what = match (v.constant, v.state) {
                (true, _) => "constant".to_string(),
                (false, State::Valid) => format!(
                    "in [{}, {}]",
                    print::value(v.dtype, v.lo),
                    print::value(v.dtype, v.hi)
                ),
                (false, s) => format!(
                    "{} (range [{}, {}])",
                    state_name(s),
                    print::value(v.dtype, v.lo),
                    print::value(v.dtype, v.hi)
                ),
            };
            let val = if matches!(v.state, State::Valid) {
                print::value(v.dtype, v.value)
            } else {
                state_name(v.state).into()
            };
            writeln!(f, "  {:<6} = {:<8} {} {}", v.name, val, v.dtype, what)?;
        }
        for side in ["source", "target"] {
            writeln!(f, "  {side}:")?;
            for n in self.nodes.iter().filter(|n| n.side == side) {
                let val = if n.state == State::Valid {
                    print::value(n.dtype, n.value)
                } else {
                    state_name(n.state).into()
                };
                writeln!(f, "    {:<40} = {}", n.text, val)?;
            }
        }
        match &self.confirmed {
            Ok(s) => writeln!(f, "  confirmed by the interpreter: {s}")?,
            Err(e) => writeln!(f, "  NOT confirmed by the interpreter: {e}")?,
        }
        Ok(())
    }
}

fn state_name(s: State) -> &'static str {
    match s {
        State::Valid => "valid",
        State::Invalid => "invalid",
        State::Unconstrained => "unconstrained",
        State::Undefined => "undefined",
    }
}

/// Magnitude limits tried while minimizing: 0, then |v| <= 15, 255, ...
const LIMITS: [i128; 7] = [0, 15, 255, 4095, 65535, (1 << 31) - 1, i64::MAX as i128];

/// The inputs of a query: every variable's value and bounds.
fn inputs(q: &RuleQuery) -> Vec<(Num, DType)> {
    let mut v = Vec::new();
    for s in &q.syms {
        if let Term::N(n) = &s.val.val {
            v.push((n.clone(), s.dtype));
        }
        if let Some((lo, hi)) = &s.bounds {
            if !s.is_const_var {
                v.push((lo.clone(), s.dtype));
                v.push((hi.clone(), s.dtype));
            }
        }
    }
    v
}

fn within(enc: &Enc, n: &Num, dt: DType, k: i128) -> z3::ast::Bool {
    let (lo, hi) = enc.bounds(dt);
    let k_hi = k.min(hi);
    let k_lo = (-k).max(lo);
    z3::ast::Bool::and(&[enc.le(&enc.lit(k_lo, dt), n), enc.le(n, &enc.lit(k_hi, dt))])
}

/// Constraints keeping every integer input and subterm of a query within
/// its dtype's bounds at the encoding's width (for the unbounded-integer
/// encoding, its nominal width: a counterexample realized as an instance
/// there).
pub fn at_nominal_width(q: &RuleQuery) -> Vec<z3::ast::Bool> {
    let nodes = q.nodes.iter().filter_map(|(_, _, v, dt)| match &v.val {
        Term::N(n) => Some((n.clone(), *dt)),
        Term::B(_) => None,
    });
    inputs(q)
        .into_iter()
        .chain(nodes)
        .map(|(n, dt)| {
            let (lo, hi) = q.enc.bounds(dt);
            z3::ast::Bool::and(&[
                q.enc.le(&q.enc.lit(lo, dt), &n),
                q.enc.le(&n, &q.enc.lit(hi, dt)),
            ])
        })
        .collect()
}

/// Constraints keeping every input of a query within `[-k, k]`.
pub fn small_inputs(q: &RuleQuery, k: i128) -> Vec<z3::ast::Bool> {
    inputs(q)
        .iter()
        .map(|(n, dt)| within(&q.enc, n, *dt, k))
        .collect()
}

/// Shrinks a satisfiable query (the failure condition already asserted)
/// toward small magnitudes: the smallest global limit that still fails,
/// then each input pinned to 0 where it can be, in order, or for a non-zero
/// `seed` in an order shuffled by it (so that different seeds reach
/// different models). Returns the model.
pub fn minimize(
    solver: &Solver,
    q: &RuleQuery,
    timeout: std::time::Duration,
    seed: u32,
) -> Option<Model> {
    use crate::solver::check_within;
    let mut best = solver.get_model()?;
    let mut ins = inputs(q);
    if seed != 0 {
        shuffle(&mut ins, seed);
    }
    solver.push();
    for k in LIMITS {
        solver.push();
        for (n, dt) in &ins {
            solver.assert(within(&q.enc, n, *dt, k));
        }
        if check_within(solver, timeout) == SatResult::Sat {
            if let Some(m) = solver.get_model() {
                best = m;
            }
            solver.pop(1);
            for (n, dt) in &ins {
                solver.assert(within(&q.enc, n, *dt, k));
            }
            break;
        }
        solver.pop(1);
    }
    for (n, dt) in &ins {
        solver.push();
        solver.assert(q.enc.eq(n, &q.enc.lit(0, *dt)));
        if check_within(solver, timeout) == SatResult::Sat {
            if let Some(m) = solver.get_model() {
                best = m;
            }
            solver.pop(1);
            solver.assert(q.enc.eq(n, &q.enc.lit(0, *dt)));
        } else {
            solver.pop(1);
        }
    }
    // Then non-negative where it can be: index arithmetic is mostly over
    // non-negative values, and a peer's rules often split on a constant's
    // sign (Morok's `% N` with N < 0 is an earlier entry's), so a sign
    // the model left to chance would make the counterexample one the
    // peer's rule under test may never see.
    for (n, dt) in &ins {
        let non_negative = q.enc.le(&q.enc.lit(0, *dt), n);
        solver.push();
        solver.assert(non_negative.clone());
        if check_within(solver, timeout) == SatResult::Sat {
            if let Some(m) = solver.get_model() {
                best = m;
            }
            solver.pop(1);
            solver.assert(non_negative);
        } else {
            solver.pop(1);
        }
    }
    solver.pop(1);
    Some(best)
}

/// A Fisher-Yates shuffle driven by splitmix64 from `seed`.
fn shuffle<T>(v: &mut [T], seed: u32) {
    let mut state = u64::from(seed);
    let mut next = || engine::splitmix::splitmix64(&mut state);
    for i in (1..v.len()).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        v.swap(i, j);
    }
}

fn sval_state(m: &Model, v: &SVal) -> State {
    if !model_bool(m, &v.def).unwrap_or(true) {
        State::Undefined
    } else if model_bool(m, &v.inv).unwrap_or(false) {
        State::Invalid
    } else if model_bool(m, &v.unc).unwrap_or(false) {
        State::Unconstrained
    } else {
        State::Valid
    }
}

fn term_value(m: &Model, t: &Term) -> i128 {
    match t {
        Term::N(n) => model_int(m, n).unwrap_or(0),
        Term::B(b) => model_bool(m, b).unwrap_or(false) as i128,
    }
}

/// A guard number's value (possibly a bitvector wider than 64 bits that
/// holds a value of at most 64).
fn gnum_value(m: &Model, n: &Num) -> i128 {
    match n {
        Num::B(b) if b.get_size() > 64 => model_int(m, &Num::B(b.extract(63, 0))).unwrap_or(0),
        _ => model_int(m, n).unwrap_or(0),
    }
}

/// Reads the counterexample of a failing rule query from a model, then
/// realizes it as an engine program and confirms it with the reference
/// interpreter, twice: on the program built here, and on the case file's
/// text read back (what `tileproof check` gets). A counterexample is only
/// returned when both reproduce exactly the failure the query found;
/// anything else is an [`InternalError`] (a bug in tileproof, not a
/// verdict on the rule).
pub fn extract(
    m: &Model,
    q: &RuleQuery,
    failure: Failure,
) -> Result<Counterexample, Box<InternalError>> {
    let vars: Vec<VarValue> = q
        .rule
        .vars
        .iter()
        .zip(&q.syms)
        .map(|(pv, s)| VarValue {
            name: pv.name.clone(),
            dtype: s.dtype,
            constant: s.is_const_var || model_bool(m, &s.is_const).unwrap_or(false),
            state: sval_state(m, &s.val),
            value: term_value(m, &s.val.val),
            lo: gnum_value(m, &s.lo),
            hi: gnum_value(m, &s.hi),
        })
        .collect();
    let nodes = q
        .nodes
        .iter()
        .map(|(side, text, v, dt)| NodeValue {
            side: if *side == Side::Source {
                "source"
            } else {
                "target"
            },
            text: text.clone(),
            state: sval_state(m, v),
            value: term_value(m, &v.val),
            dtype: *dt,
        })
        .collect();
    let cex = Counterexample {
        rule: q.rule.name.clone(),
        width: q.enc.width,
        unbounded: q.enc.is_unbounded_integers(),
        types: type_names(q.rule, &q.types),
        failure,
        vars,
        nodes,
        case: None,
        confirmed: Err(Unconfirmed::NotYetChecked),
    };
    reproduce(q.rule, &q.types, cex)
}

/// A type instance as a counterexample shows it (`T = i32`, ...).
pub fn type_names(rule: &Rule, types: &[DType]) -> Vec<String> {
    rule.tyvars
        .iter()
        .zip(types)
        .map(|(tv, d)| format!("{} = {}", tv.name, d))
        .collect()
}

/// Realizes a counterexample read from a model and requires the
/// interpreter to reproduce its failure, on the realized program and on
/// its case text read back; fills in `case` and `confirmed`.
pub fn reproduce(
    rule: &Rule,
    types: &[DType],
    mut cex: Counterexample,
) -> Result<Counterexample, Box<InternalError>> {
    let mut realized_vars = Vec::new();
    match reproduce_in(rule, types, &mut cex, &mut realized_vars) {
        Ok(()) => Ok(cex),
        Err(reason) => Err(Box::new(InternalError {
            rule_text: rule.text.clone(),
            reason,
            counterexample: cex,
            realized_vars,
        })),
    }
}

fn reproduce_in(
    rule: &Rule,
    types: &[DType],
    cex: &mut Counterexample,
    realized_vars: &mut Vec<String>,
) -> Result<(), NotReproduced> {
    let r = realize(rule, types, &cex.vars, cex.width).map_err(|e| {
        cex.confirmed = Err(Unconfirmed::NotRealized(e.clone()));
        NotReproduced::NotRealized(e)
    })?;
    for (v, &n) in cex.vars.iter().zip(&r.vars) {
        realized_vars.push(format!("{} = {}", v.name, print::expr(&r.graph, n)));
    }
    let case = r.case_text(cex);
    cex.case = Some(case.clone());
    let answer = r.confirm(cex.model());
    cex.confirmed = answer
        .clone()
        .map(|(_, text)| text)
        .map_err(Unconfirmed::NoFailure);
    match answer {
        Err(e) => return Err(NotReproduced::NotConfirmed(e)),
        Ok((f, _)) if f != cex.failure => {
            return Err(NotReproduced::OtherFailure {
                found: f,
                query: cex.failure,
            })
        }
        Ok(_) => {}
    }
    match replay_case_under(&case, cex.model()) {
        Ok((f, _)) if f == cex.failure => Ok(()),
        Ok((f, text)) => Err(NotReproduced::CaseOtherFailure {
            found: f,
            text,
            query: cex.failure,
        }),
        Err(e) => Err(NotReproduced::CaseNotReproduced(e)),
    }
}

/// A counterexample that does not reproduce: the query (or the encoding,
/// or the realization) disagrees with the reference interpreter. Never a
/// verdict on the rule: a bug in tileproof, reported with everything
/// needed to debug it.
#[derive(Clone, Debug, Serialize)]
pub struct InternalError {
    /// The rule as written.
    pub rule_text: String,
    /// What did not reproduce.
    #[serde(serialize_with = "ser_display")]
    pub reason: NotReproduced,
    /// The model's values, the realized case (when there is one) and the
    /// interpreter's answer (`confirmed`).
    pub counterexample: Counterexample,
    /// The node each pattern variable was realized as (`x = where(x_on,
    /// x, invalid)`), when the model could be realized.
    pub realized_vars: Vec<String>,
}

impl fmt::Display for InternalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.counterexample;
        let inst = if c.types.is_empty() {
            String::new()
        } else {
            format!(" [{}]", c.types.join(", "))
        };
        writeln!(
            f,
            "internal error (a bug in tileproof, not a verdict on the rule): the {} counterexample to {} at width {}{} does not reproduce",
            c.failure, c.rule, c.width, inst
        )?;
        writeln!(f, "  reason: {}", self.reason)?;
        writeln!(f, "  rule {}: {}", c.rule, self.rule_text)?;
        writeln!(f, "  the solver's model:")?;
        for line in c.to_string().lines().skip(1) {
            writeln!(f, "  {line}")?;
        }
        if !self.realized_vars.is_empty() {
            writeln!(f, "  pattern variables realized as:")?;
            for v in &self.realized_vars {
                writeln!(f, "    {v}")?;
            }
        }
        match &c.case {
            Some(case) => {
                writeln!(f, "  realized case:")?;
                for line in case.lines() {
                    writeln!(f, "    {line}")?;
                }
            }
            None => writeln!(f, "  realized case: none")?,
        }
        Ok(())
    }
}

/// A counterexample as a concrete engine program: the rule's source built
/// from variables with the counterexample's bounds, the target built from
/// the rule's right side with the same node for every pattern variable,
/// and the failing point.
pub struct Realized {
    pub graph: Graph,
    pub src: NodeId,
    pub tgt: NodeId,
    pub env: Vec<i128>,
    /// The node of each pattern variable.
    pub vars: Vec<NodeId>,
}

/// A variable name not yet declared in `g` and not a pattern variable's.
fn fresh_name(g: &Graph, vars: &[VarValue], base: &str) -> String {
    let taken = |n: &str| g.var_named(n).is_some() || vars.iter().any(|v| v.name == n);
    if !taken(base) {
        return base.to_string();
    }
    (2..)
        .map(|k| format!("{base}{k}"))
        .find(|n| !taken(n))
        .expect("some name is free")
}

/// Builds the engine program of a counterexample. Each pattern variable
/// becomes a node with exactly the model's state, range and value (checked
/// against the engine's own range analysis and the interpreter); the
/// source is the left side over those nodes, the target the right side
/// over the same nodes ([`Rule::instantiate_rhs`]: the rule is not matched
/// again, so a commutative operator cannot bind the variables another way).
/// An error says why the model has no such program, or why the engine
/// would not fire the rule on it (its guard, at the realized ranges).
pub fn realize(
    rule: &Rule,
    types: &[DType],
    vars: &[VarValue],
    width: u32,
) -> Result<Realized, RealizeError> {
    let mut g = Graph::new();
    let mut env: Vec<(u32, i128)> = Vec::new();
    let mut nodes = Vec::new();
    let small = |value: i128, what: &'static str| {
        i64::try_from(value).map_err(|_| RealizeError::TooWide { what, value })
    };
    for v in vars {
        let node = match (v.constant, v.state, v.dtype) {
            (_, State::Undefined, _) => return Err(RealizeError::UndefinedVar(v.name.clone())),
            (true, _, DType::Bool) => g.bool_const(v.value != 0),
            (true, _, dt) => {
                let c = small(v.value, "constant")?;
                let (lo, hi) = dt.bounds();
                if c < lo || c > hi {
                    return Err(RealizeError::ConstantOutOfType {
                        name: v.name.clone(),
                        value: c,
                        dtype: dt,
                    });
                }
                g.cnst(c, dt)
            }
            (false, State::Valid, dt) => {
                let x = g.declare_var(&v.name, dt, small(v.lo, "bound")?, small(v.hi, "bound")?)?;
                env.push((x, v.value));
                g.var_node(x)
            }
            (false, State::Invalid, DType::Bool) => {
                return Err(RealizeError::InvalidBool(v.name.clone()))
            }
            (false, State::Unconstrained, DType::Bool) => {
                // Unconstrained with the model's range: a comparison of
                // invalid (range [0, 1]), narrowed by a constant.
                let inv = g.invalid();
                let zero = g.cnst(0, DType::Index);
                let u = g.mk(Op::Lt, &[inv, zero]);
                match (v.lo, v.hi) {
                    (0, 1) => u,
                    (1, 1) => {
                        let t = g.bool_const(true);
                        g.mk(Op::Or, &[u, t])
                    }
                    (0, 0) => {
                        let f = g.bool_const(false);
                        g.mk(Op::And, &[u, f])
                    }
                    (lo, hi) => {
                        return Err(RealizeError::BoolRange {
                            name: v.name.clone(),
                            lo,
                            hi,
                        })
                    }
                }
            }
            (false, state, dt) => {
                // A variable of the same dtype and range, masked (invalid)
                // or behind an unconstrained condition; the variable's own
                // value is never used, so it sits at its lower bound.
                let x = g.declare_var(&v.name, dt, small(v.lo, "bound")?, small(v.hi, "bound")?)?;
                env.push((x, v.lo));
                let xn = g.var_node(x);
                let inv = g.invalid();
                if state == State::Invalid {
                    let on = g.declare_var(
                        &fresh_name(&g, vars, &format!("{}_on", v.name)),
                        DType::Bool,
                        0,
                        1,
                    )?;
                    env.push((on, 0));
                    let onn = g.var_node(on);
                    let masked = if dt == DType::Index {
                        inv
                    } else {
                        g.cast(dt, inv)
                    };
                    g.mk(Op::Where, &[onn, xn, masked])
                } else {
                    let zero = g.cnst(0, DType::Index);
                    let u = g.mk(Op::Lt, &[inv, zero]);
                    g.mk(Op::Where, &[u, xn, xn])
                }
            }
        };
        nodes.push(node);
    }
    let mut values = vec![0i128; g.vars().len()];
    for (v, x) in env {
        values[v as usize] = x;
    }
    // The point must lie in the case's domain: that is what `tileproof
    // check` searches.
    for (d, &x) in g.vars().iter().zip(&values) {
        if x < d.lo as i128 || x > d.hi as i128 {
            return Err(RealizeError::OutsideBounds {
                name: d.name.clone(),
                value: x,
                lo: d.lo,
                hi: d.hi,
            });
        }
    }
    for (v, &n) in vars.iter().zip(&nodes) {
        realized_as_modelled(&g, n, v, &values, width)?;
    }
    let src = instantiate(&mut g, rule, &rule.lhs, types, &nodes)?;
    let tgt = rule.instantiate_rhs(&mut g, &nodes, types, Width(width))?;
    Ok(Realized {
        graph: g,
        src,
        tgt,
        env: values,
        vars: nodes,
    })
}

/// Checks that a realized pattern variable is what the model says: its
/// dtype, the engine's range and flags (what the guard sees) and the
/// interpreter's value at the point.
fn realized_as_modelled(
    g: &Graph,
    n: NodeId,
    v: &VarValue,
    env: &[i128],
    width: u32,
) -> Result<(), RealizeError> {
    let node = g.node(n);
    let shown = print::expr(g, n);
    let mut wrong = Vec::new();
    if node.dtype != v.dtype {
        wrong.push(format!("dtype {} (model: {})", node.dtype, v.dtype));
    }
    if (node.vmin as i128, node.vmax as i128) != (v.lo, v.hi) {
        wrong.push(format!(
            "range [{}, {}] (model: [{}, {}])",
            node.vmin, node.vmax, v.lo, v.hi
        ));
    }
    if node.as_const().is_some() != v.constant {
        wrong.push(format!(
            "is_const {} (model: {})",
            node.as_const().is_some(),
            v.constant
        ));
    }
    if node.maybe_invalid != (v.state != State::Valid) {
        wrong.push(format!(
            "valid {} (model: {:?})",
            !node.maybe_invalid, v.state
        ));
    }
    if node.maybe_unconstrained != (v.state == State::Unconstrained) {
        wrong.push(format!(
            "constrained {} (model: {:?})",
            !node.maybe_unconstrained, v.state
        ));
    }
    let want = match v.state {
        State::Valid if v.dtype == DType::Bool => interp::Val::Bool(v.value != 0),
        State::Valid => interp::Val::Int(v.value),
        State::Invalid => interp::Val::Invalid,
        _ => interp::Val::Unconstrained,
    };
    match interp::eval(g, &[n], env, Width(width)) {
        Ok(got) if got[0] == want => {}
        Ok(got) => wrong.push(format!("value {} (model: {want})", got[0])),
        Err(u) => wrong.push(format!("undefined: {}", u.reason)),
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(RealizeError::NotAsModelled {
            name: v.name.clone(),
            shown,
            wrong,
        })
    }
}

/// Builds a left-side pattern with pattern variables replaced by nodes.
fn instantiate(
    g: &mut Graph,
    rule: &Rule,
    p: &Pat,
    types: &[DType],
    vars: &[NodeId],
) -> Result<NodeId, RealizeError> {
    // A rule's depth is not limited by the stack (see engine::deep).
    engine::deep::grow(|| {
        Ok(match p {
            Pat::Var(v) => vars[*v],
            Pat::Lit(v, _) => {
                let dt = rule.pat_dtype(p, types);
                if dt == DType::Bool {
                    g.bool_const(*v != 0)
                } else {
                    g.cnst(*v, dt)
                }
            }
            Pat::Invalid => g.invalid(),
            Pat::Op(op, _, args) => {
                let src: Result<Vec<NodeId>, RealizeError> = args
                    .iter()
                    .map(|a| instantiate(g, rule, a, types, vars))
                    .collect();
                let dt = rule.pat_dtype(p, types);
                g.try_mk(*op, (*op == Op::Cast).then_some(dt), &src?)?
            }
            Pat::Computed(_) | Pat::Bound(..) | Pat::Helper(..) => {
                return Err(RealizeError::ComputedOnLeft)
            }
        })
    })
}

/// The interpreter's verdict on a source and target at a point: the
/// failure with its description (both sides' values), or why there is none.
pub fn point_verdict(
    g: &Graph,
    src: &[NodeId],
    tgt: &[NodeId],
    env: &[i128],
    model: impl Into<engine::semantics::Model>,
) -> Result<(Failure, String), NoFailure> {
    let w = model.into();
    let s = interp::eval(g, src, env, w);
    let t = interp::eval(g, tgt, env, w);
    let show = |r: &Result<Vec<interp::Val>, interp::Undefined>| match r {
        Ok(v) => v
            .iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(", "),
        Err(u) => format!("undefined ({})", u.reason),
    };
    match interp::check_point(s.clone(), t.clone()) {
        PointCheck::Fails(f) => Ok((
            f,
            format!("{} (source {}, target {})", f.name(), show(&s), show(&t)),
        )),
        PointCheck::Refines => Err(NoFailure::Refines {
            src: show(&s),
            tgt: show(&t),
        }),
        PointCheck::SourceUndefined => Err(NoFailure::SourceUndefined { src: show(&s) }),
    }
}

impl Realized {
    /// Evaluates both sides at the point with the reference interpreter:
    /// the failure it finds and its description, or why there is none.
    pub fn confirm(&self, model: impl Into<SemModel>) -> Result<(Failure, String), NoFailure> {
        point_verdict(&self.graph, &[self.src], &[self.tgt], &self.env, model)
    }

    /// The case as a text file that `tileproof check` replays.
    pub fn case_text(&self, cex: &Counterexample) -> String {
        let mut out = String::new();
        out.push_str(&format!(
            "# counterexample to rule {} ({})\n",
            cex.rule, cex.failure
        ));
        out.push_str(&format!("# width: {}\n", cex.width));
        if cex.unbounded {
            out.push_str("# integers: unbounded (an unconstrained operand overflows nothing)\n");
        }
        let point: Vec<String> = self
            .graph
            .vars()
            .iter()
            .zip(&self.env)
            .map(|(d, v)| format!("{} = {}", d.name, print::value(d.dtype, *v)))
            .collect();
        out.push_str(&format!("# point: {}\n", point.join(", ")));
        out.push_str("# reproduce: tileproof check FILE\n");
        for d in self.graph.vars() {
            out.push_str(&print::var_decl(d));
            out.push('\n');
        }
        out.push_str(&format!("expr {}\n", print::expr(&self.graph, self.src)));
        out.push_str(&format!("expect {}\n", print::expr(&self.graph, self.tgt)));
        out
    }
}

/// The failing point a case file states in its `# point:` header, as an
/// environment of the parsed program (every variable must be given).
pub fn case_point(p: &engine::parse::Program) -> Result<Vec<i128>, CaseError> {
    Ok(engine::text::point::header_point(p)?)
}

/// Reads a case file back (as `tileproof check` does) and evaluates its
/// `expr` and `expect` lines at its `# point:` with the interpreter: the
/// failure found there, or why there is none.
pub fn replay_case(text: &str, width: u32) -> Result<(Failure, String), CaseError> {
    replay_case_under(text, Width(width))
}

/// [`replay_case`] under `model`.
pub fn replay_case_under(
    text: &str,
    model: impl Into<SemModel>,
) -> Result<(Failure, String), CaseError> {
    let p = engine::parse::parse_program(text)?;
    let env = case_point(&p)?;
    Ok(point_verdict(
        &p.graph, &p.outputs, &p.expects, &env, model,
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_wider_than_64_bits_is_kept_in_json_as_its_digits() {
        // `MIN - MAX` at 64 bits: an exact intermediate no JSON reader's
        // 64-bit integer holds. It was a `null` in place of the whole row.
        let wide = i64::MIN as i128 - i64::MAX as i128;
        let v = VarValue {
            name: "C".into(),
            dtype: DType::Index,
            constant: true,
            state: State::Valid,
            value: wide,
            lo: i64::MIN as i128,
            hi: u64::MAX as i128,
        };
        let json = serde_json::to_value(&v).expect("a wide value serializes");
        assert_eq!(json["value"], serde_json::json!(wide.to_string()));
        assert_eq!(json["lo"], serde_json::json!(i64::MIN));
        assert_eq!(json["hi"], serde_json::json!(u64::MAX));
    }
}
