//! Counterexamples: read from a model, minimized toward small magnitudes,
//! printed readably, realized as a concrete engine program, and confirmed by
//! the reference interpreter (a failure the interpreter does not reproduce
//! is reported as an encoding disagreement, never as a verdict).

use crate::encode::{model_bool, model_int, Enc, Num, SVal, Term};
use crate::query::{RuleQuery, Side};
use engine::dtype::Width;
use engine::interp::{self, PointCheck};
use engine::ir::{DType, Graph, NodeId, Op};
use engine::print;
use engine::rules::{Pat, Rule};
use serde::Serialize;
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

/// What a value is at the failing point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
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
    pub value: i128,
    pub lo: i128,
    pub hi: i128,
}

/// One subterm of either side at the point.
#[derive(Clone, Debug, Serialize)]
pub struct NodeValue {
    pub side: &'static str,
    pub text: String,
    pub state: State,
    pub value: i128,
    #[serde(serialize_with = "ser_dtype")]
    pub dtype: DType,
}

/// A concrete failing input of a rule, with every intermediate value.
#[derive(Clone, Debug, Serialize)]
pub struct Counterexample {
    pub rule: String,
    pub width: u32,
    /// The type instance (`T = i32`, ...), empty for monomorphic rules.
    pub types: Vec<String>,
    #[serde(serialize_with = "ser_failure")]
    pub failure: Failure,
    pub vars: Vec<VarValue>,
    pub nodes: Vec<NodeValue>,
    /// The case as a `tileproof check` file (when the engine could
    /// realize it).
    pub case: Option<String>,
    /// What the interpreter says at the realized point.
    pub confirmed: Result<String, String>,
}

/// Serializes a dtype by its name (the engine has no serde).
pub fn ser_dtype<S: serde::Serializer>(d: &DType, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(d.name())
}

fn fmt_val(dt: DType, v: i128) -> String {
    if dt == DType::Bool {
        (v != 0).to_string()
    } else {
        v.to_string()
    }
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
                    fmt_val(v.dtype, v.lo),
                    fmt_val(v.dtype, v.hi)
                ),
                (false, s) => format!(
                    "{} (range [{}, {}])",
                    state_name(s),
                    fmt_val(v.dtype, v.lo),
                    fmt_val(v.dtype, v.hi)
                ),
            };
            let val = if matches!(v.state, State::Valid) {
                fmt_val(v.dtype, v.value)
            } else {
                state_name(v.state).into()
            };
            writeln!(f, "  {:<6} = {:<8} {} {}", v.name, val, v.dtype, what)?;
        }
        for side in ["source", "target"] {
            writeln!(f, "  {side}:")?;
            for n in self.nodes.iter().filter(|n| n.side == side) {
                let val = if n.state == State::Valid {
                    fmt_val(n.dtype, n.value)
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

/// Constraints keeping every input of a query within `[-k, k]`.
pub fn small_inputs(q: &RuleQuery, k: i128) -> Vec<z3::ast::Bool> {
    inputs(q)
        .iter()
        .map(|(n, dt)| within(&q.enc, n, *dt, k))
        .collect()
}

/// Shrinks a satisfiable query (the failure condition already asserted)
/// toward small magnitudes: the smallest global limit that still fails,
/// then each input pinned to 0 where it can be. Returns the model.
pub fn minimize(solver: &Solver, q: &RuleQuery, timeout: std::time::Duration) -> Option<Model> {
    use crate::solver::check_within;
    let mut best = solver.get_model()?;
    let ins = inputs(q);
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
    solver.pop(1);
    Some(best)
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
/// realizes and confirms it with the engine.
pub fn extract(m: &Model, q: &RuleQuery, failure: Failure) -> Counterexample {
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
    let mut cex = Counterexample {
        rule: q.rule.name.clone(),
        width: q.enc.width,
        types: q
            .rule
            .tyvars
            .iter()
            .zip(&q.types)
            .map(|(tv, d)| format!("{} = {}", tv.name, d))
            .collect(),
        failure,
        vars,
        nodes,
        case: None,
        confirmed: Err("not yet checked".into()),
    };
    match realize(q.rule, &q.types, &cex.vars, q.enc.width) {
        Ok(r) => {
            cex.confirmed = r.confirm(q.enc.width);
            cex.case = Some(r.case_text(&cex));
        }
        Err(e) => cex.confirmed = Err(e),
    }
    cex
}

/// A counterexample as a concrete engine program: the rule's source built
/// from variables with the counterexample's bounds, the target the engine
/// itself builds from it, and the failing point.
pub struct Realized {
    pub graph: Graph,
    pub src: NodeId,
    pub tgt: NodeId,
    pub env: Vec<i128>,
}

/// Builds the engine program of a counterexample.
pub fn realize(
    rule: &Rule,
    types: &[DType],
    vars: &[VarValue],
    width: u32,
) -> Result<Realized, String> {
    let mut g = Graph::new();
    let mut env: Vec<(u32, i128)> = Vec::new();
    let mut nodes = Vec::new();
    let err = |e: engine::ir::TypeError| e.0;
    for v in vars {
        let node = if v.constant {
            if v.dtype == DType::Bool {
                g.bool_const(v.value != 0)
            } else {
                g.cnst(
                    i64::try_from(v.value).map_err(|_| "constant out of range")?,
                    v.dtype,
                )
            }
        } else if v.dtype == DType::Bool {
            let p = g
                .declare_var(&v.name, DType::Bool, v.lo as i64, v.hi as i64)
                .map_err(err)?;
            env.push((p, v.value));
            let pn = g.var_node(p);
            if v.state == State::Valid {
                pn
            } else {
                // Unconstrained with the same range: poison combined with
                // a variable that pins the range.
                let inv = g.invalid();
                let zero = g.cnst(0, DType::Index);
                let u = g.mk(Op::Lt, &[inv, zero]);
                match (v.lo, v.hi) {
                    (1, 1) => g.mk(Op::Or, &[u, pn]),
                    (0, 0) => g.mk(Op::And, &[u, pn]),
                    _ => u,
                }
            }
        } else {
            let (lo, hi) = (v.lo as i64, v.hi as i64);
            let base_dt = if v.state == State::Valid {
                v.dtype
            } else {
                DType::Index
            };
            let x = g.declare_var(&v.name, base_dt, lo, hi).map_err(err)?;
            env.push((
                x,
                if v.state == State::Valid {
                    v.value
                } else {
                    v.lo
                },
            ));
            let xn = g.var_node(x);
            match v.state {
                State::Valid => xn,
                _ => {
                    let inner = if v.state == State::Invalid {
                        let on = g
                            .declare_var(&format!("{}_on", v.name), DType::Bool, 0, 1)
                            .map_err(err)?;
                        env.push((on, 0));
                        let onn = g.var_node(on);
                        let inv = g.invalid();
                        g.mk(Op::Where, &[onn, xn, inv])
                    } else {
                        let inv = g.invalid();
                        let zero = g.cnst(0, DType::Index);
                        let u = g.mk(Op::Lt, &[inv, zero]);
                        g.mk(Op::Where, &[u, xn, xn])
                    };
                    if v.dtype == DType::Index {
                        inner
                    } else {
                        g.cast(v.dtype, inner)
                    }
                }
            }
        };
        nodes.push(node);
    }
    let src = instantiate(&mut g, rule, &rule.lhs, types, &nodes)?;
    let tgt = match rule.apply_at(&mut g, src, Width(width)) {
        Some(t) if t != src => t,
        _ => {
            return Err(
                "the engine does not fire the rule on the realized source (its ranges differ)"
                    .into(),
            )
        }
    };
    let mut values = vec![0i128; g.vars().len()];
    for (v, x) in env {
        values[v as usize] = x;
    }
    Ok(Realized {
        graph: g,
        src,
        tgt,
        env: values,
    })
}

/// Builds a left-side pattern with pattern variables replaced by nodes.
fn instantiate(
    g: &mut Graph,
    rule: &Rule,
    p: &Pat,
    types: &[DType],
    vars: &[NodeId],
) -> Result<NodeId, String> {
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
            let src: Result<Vec<NodeId>, String> = args
                .iter()
                .map(|a| instantiate(g, rule, a, types, vars))
                .collect();
            let dt = rule.pat_dtype(p, types);
            g.try_mk(*op, (*op == Op::Cast).then_some(dt), &src?)
                .map_err(|e| e.0)?
        }
        Pat::Computed(_) | Pat::Bound(..) | Pat::Helper(..) => {
            return Err("computed constants only appear on the right".into())
        }
    })
}

impl Realized {
    /// Evaluates both sides at the point with the reference interpreter.
    pub fn confirm(&self, width: u32) -> Result<String, String> {
        let w = Width(width);
        let s = interp::eval(&self.graph, &[self.src], &self.env, w);
        let t = interp::eval(&self.graph, &[self.tgt], &self.env, w);
        let show = |r: &Result<Vec<interp::Val>, interp::Undefined>| match r {
            Ok(v) => v[0].to_string(),
            Err(u) => format!("undefined ({})", u.reason),
        };
        match interp::check_point(s.clone(), t.clone()) {
            PointCheck::Fails(f) => Ok(format!(
                "{} (source {}, target {})",
                f.name(),
                show(&s),
                show(&t)
            )),
            PointCheck::Refines => Err(format!(
                "the target refines the source here (source {}, target {})",
                show(&s),
                show(&t)
            )),
            PointCheck::SourceUndefined => {
                Err(format!("the source is undefined here ({})", show(&s)))
            }
        }
    }

    /// The case as a text file that `tileproof check` replays.
    pub fn case_text(&self, cex: &Counterexample) -> String {
        let mut out = String::new();
        out.push_str(&format!(
            "# counterexample to rule {} ({})\n",
            cex.rule, cex.failure
        ));
        out.push_str(&format!("# width: {}\n", cex.width));
        let point: Vec<String> = self
            .graph
            .vars()
            .iter()
            .zip(&self.env)
            .map(|(d, v)| format!("{} = {}", d.name, fmt_val(d.dtype, *v)))
            .collect();
        out.push_str(&format!("# point: {}\n", point.join(", ")));
        for d in self.graph.vars() {
            out.push_str(&print::var_decl(d));
            out.push('\n');
        }
        out.push_str(&format!("expr {}\n", print::expr(&self.graph, self.src)));
        out.push_str(&format!("expect {}\n", print::expr(&self.graph, self.tgt)));
        out
    }
}
