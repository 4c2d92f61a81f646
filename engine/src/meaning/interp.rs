//! The reference interpreter: the definition of the semantics.
//!
//! It implements [`crate::meaning::semantics`]'s primitives on exact integers (all
//! arithmetic in `i128` with [`crate::ir::arith`], overflow detected, never
//! wrapped by accident) and plain `bool`s; the SMT encodings and the JIT
//! implement the same primitives and are tested against this module, op by
//! op.
//!
//! An evaluation runs under a [`Model`]: the width W of `index` (a bare
//! [`Width`] converts into the contract's model at that width) and what
//! partial ops do. It yields, for every node, a [`Val`]: a defined
//! integer or bool, `Invalid` (a masked lane), or `Unconstrained` (a value
//! computed from an invalid operand that is only ever used under its gate).
//! Undefined behaviour is whole-evaluation: if any reachable node is
//! undefined, the evaluation as a whole is [`Undefined`], whichever arm of a
//! `where` it sits in, because hardware evaluates both arms.

use crate::ir::arith::{exact, wrap};
use crate::ir::dtype::{DType, Width};
use crate::ir::op::Op;
use crate::ir::{Graph, NodeId};
use crate::meaning::semantics::{self, Failure, Model, Prims, Sem, Ub, Value};
use std::fmt;

/// The value of one node in one evaluation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Val {
    Int(i128),
    Bool(bool),
    /// A masked lane (dtype `index` only).
    Invalid,
    /// Computed from an invalid operand; any value is acceptable in its place.
    Unconstrained,
}

impl fmt::Display for Val {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Val::Int(v) => write!(f, "{v}"),
            Val::Bool(b) => write!(f, "{b}"),
            Val::Invalid => f.write_str("invalid"),
            Val::Unconstrained => f.write_str("unconstrained"),
        }
    }
}

/// An undefined evaluation: the first node (in topological order) that is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Undefined {
    pub node: NodeId,
    pub reason: Ub,
}

/// The primitives on exact values; remembers the first undefined reason.
struct Exact {
    m: Model,
    ub: Option<Ub>,
}

impl Exact {
    fn new(m: Model) -> Exact {
        Exact { m, ub: None }
    }
}

impl Prims for Exact {
    type I = i128;
    type B = bool;

    fn model(&self) -> Model {
        self.m
    }
    fn bool_lit(&mut self, b: bool) -> bool {
        b
    }
    fn int_lit(&mut self, v: i128, _: DType) -> i128 {
        v
    }
    fn not(&mut self, a: &bool) -> bool {
        !a
    }
    fn and(&mut self, a: &bool, b: &bool) -> bool {
        *a && *b
    }
    fn or(&mut self, a: &bool, b: &bool) -> bool {
        *a || *b
    }
    fn xor(&mut self, a: &bool, b: &bool) -> bool {
        a != b
    }
    fn select_int(&mut self, c: &bool, a: &i128, b: &i128) -> i128 {
        if *c {
            *a
        } else {
            *b
        }
    }
    fn select_bool(&mut self, c: &bool, a: &bool, b: &bool) -> bool {
        if *c {
            *a
        } else {
            *b
        }
    }
    fn lt(&mut self, a: &i128, b: &i128, _: DType) -> bool {
        a < b
    }
    fn le(&mut self, a: &i128, b: &i128, _: DType) -> bool {
        a <= b
    }
    fn eq(&mut self, a: &i128, b: &i128, _: DType) -> bool {
        a == b
    }
    fn arith(&mut self, op: Op, dt: DType, _: DType, args: &[i128]) -> (i128, bool) {
        let b = args.get(1).copied().unwrap_or(0);
        // `None`: no mathematical result (a zero divisor or bad shift
        // amount, which `apply` marks undefined, or beyond i128).
        let Some(v) = exact(op, args[0], b) else {
            return (0, op.is_quotient() || op == Op::Shl);
        };
        match dt {
            DType::Index => (v, !self.m.width.fits(v)),
            DType::I32 | DType::I64 => {
                let bits = self.m.width.bits(dt);
                // MIN / -1 has no result in a concrete dtype either.
                (wrap(v, bits), op.is_quotient() && !Width(bits).fits(v))
            }
            DType::Bool => unreachable!("integer op with a bool result"),
        }
    }
    fn undefined(&mut self, cond: bool, reason: Ub) {
        if cond && self.ub.is_none() {
            self.ub = Some(reason);
        }
    }
}

fn to_sem(v: Val, dt: DType) -> Sem<i128, bool> {
    let zero = if dt == DType::Bool {
        Value::Bool(false)
    } else {
        Value::Int(0)
    };
    match v {
        Val::Int(i) => Sem {
            inv: false,
            unc: false,
            val: Value::Int(i),
        },
        Val::Bool(b) => Sem {
            inv: false,
            unc: false,
            val: Value::Bool(b),
        },
        Val::Invalid => Sem {
            inv: true,
            unc: false,
            val: zero,
        },
        Val::Unconstrained => Sem {
            inv: false,
            unc: true,
            val: zero,
        },
    }
}

fn from_sem(s: Sem<i128, bool>) -> Val {
    match (s.inv, s.unc, s.val) {
        (true, _, _) => Val::Invalid,
        (_, true, _) => Val::Unconstrained,
        (_, _, Value::Int(i)) => Val::Int(i),
        (_, _, Value::Bool(b)) => Val::Bool(b),
    }
}

/// Applies one non-leaf operation to operand values under model `m` (or a
/// width), by [`crate::meaning::semantics::apply`]. `dtype` is the result dtype,
/// `arg_dts` the operands' dtypes.
pub fn apply(
    op: Op,
    dtype: DType,
    args: &[Val],
    arg_dts: &[DType],
    m: impl Into<Model>,
) -> Result<Val, Ub> {
    let mut p = Exact::new(m.into());
    // On the stack: this runs once per node and point.
    let sems: [Sem<i128, bool>; 3] = std::array::from_fn(|i| match args.get(i) {
        Some(&v) => to_sem(v, arg_dts[i]),
        None => to_sem(Val::Int(0), DType::Index),
    });
    let r = semantics::apply(&mut p, op, dtype, &sems[..args.len()], arg_dts);
    match p.ub {
        Some(ub) => Err(ub),
        None => Ok(from_sem(r)),
    }
}

/// A constant leaf at width `w`.
pub fn constant(v: i128, dtype: DType, w: Width) -> Result<Val, Ub> {
    let mut p = Exact::new(w.into());
    let r = semantics::constant(&mut p, v, dtype);
    match p.ub {
        Some(ub) => Err(ub),
        None => Ok(from_sem(r)),
    }
}

/// Variable values of one evaluation point, indexed like the graph's
/// variable table.
pub type Env = [i128];

/// The value of a variable at width `w`: an `index` variable outside W bits
/// is an overflow (the point is outside the width's domain).
fn read_var(g: &Graph, v: u32, env: &Env, w: Width) -> Result<Val, Ub> {
    let d = g.var(v);
    let x = env[v as usize];
    match d.dtype {
        DType::Bool => Ok(Val::Bool(x != 0)),
        DType::Index if !w.fits(x) => Err(Ub::IndexOverflow),
        _ => Ok(Val::Int(x)),
    }
}

/// The value of node `id` at a point, from its operands' values `args`.
pub fn eval_node(
    g: &Graph,
    id: NodeId,
    args: &[Val],
    env: &Env,
    m: impl Into<Model>,
) -> Result<Val, Ub> {
    let m = m.into();
    let w = m.width;
    let n = g.node(id);
    match n.op {
        Op::Var(v) => read_var(g, v, env, w),
        Op::Const(c) => constant(c as i128, n.dtype, w),
        Op::Invalid => Ok(Val::Invalid),
        _ => {
            let mut dts = [DType::Index; 3];
            for (d, &s) in dts.iter_mut().zip(n.src()) {
                *d = g.node(s).dtype;
            }
            apply(n.op, n.dtype, args, &dts[..args.len()], m)
        }
    }
}

/// Evaluates fixed roots at many points: the nodes they reach are found
/// once, not per point (that walk cost as much as the evaluation), and one
/// buffer holds every node's value.
pub struct Evaluator<'g> {
    g: &'g Graph,
    m: Model,
    roots: Vec<NodeId>,
    order: Vec<NodeId>,
    vals: Vec<Val>,
}

impl<'g> Evaluator<'g> {
    pub fn new(g: &'g Graph, roots: &[NodeId], m: impl Into<Model>) -> Evaluator<'g> {
        let order = g.reachable(roots);
        let vals = vec![Val::Unconstrained; order.last().map_or(0, |l| l.index() + 1)];
        Evaluator {
            g,
            m: m.into(),
            roots: roots.to_vec(),
            order,
            vals,
        }
    }

    /// Every node's value at `env`, indexed by node id (nodes the roots do
    /// not reach hold `Unconstrained`), or why the evaluation is undefined.
    pub fn eval_all(&mut self, env: &Env) -> Result<&[Val], Undefined> {
        let mut args = [Val::Unconstrained; 3];
        for &id in &self.order {
            let src = self.g.node(id).src();
            for (a, s) in args.iter_mut().zip(src) {
                *a = self.vals[s.index()];
            }
            self.vals[id.index()] = eval_node(self.g, id, &args[..src.len()], env, self.m)
                .map_err(|reason| Undefined { node: id, reason })?;
        }
        Ok(&self.vals)
    }

    /// The roots' values at `env`, or why the evaluation is undefined.
    pub fn eval(&mut self, env: &Env) -> Result<Vec<Val>, Undefined> {
        self.eval_all(env)?;
        Ok(self.roots.iter().map(|r| self.vals[r.index()]).collect())
    }
}

/// Evaluates every node reachable from `roots` at one point; returns the
/// value of each node (indexed by node id; unreachable nodes hold
/// `Unconstrained`).
pub fn eval_all(
    g: &Graph,
    roots: &[NodeId],
    env: &Env,
    m: impl Into<Model>,
) -> Result<Vec<Val>, Undefined> {
    Evaluator::new(g, roots, m)
        .eval_all(env)
        .map(<[Val]>::to_vec)
}

/// Evaluates `roots` at one point: their values, or why the evaluation is
/// undefined.
pub fn eval(
    g: &Graph,
    roots: &[NodeId],
    env: &Env,
    m: impl Into<Model>,
) -> Result<Vec<Val>, Undefined> {
    Evaluator::new(g, roots, m).eval(env)
}

/// Compares one source result with one target result at a point where both
/// evaluations are defined ([`semantics::refinement`]): `None` when the
/// target refines the source.
pub fn refines(src: Val, tgt: Val) -> Option<Failure> {
    let dt = match src {
        Val::Bool(_) => DType::Bool,
        _ => DType::Index,
    };
    let t_dt = match tgt {
        Val::Bool(_) => DType::Bool,
        _ => dt,
    };
    let mut p = Exact::new(Width::W64.into());
    let (validity, value) = semantics::refinement(&mut p, &to_sem(src, dt), &to_sem(tgt, t_dt), dt);
    if validity {
        Some(Failure::ValidityDiffers)
    } else if value {
        Some(Failure::ValueDiffers)
    } else {
        None
    }
}

/// What refinement says at one point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PointCheck {
    /// The source is undefined here: no obligation.
    SourceUndefined,
    /// The target refines the source here.
    Refines,
    /// An obligation fails here.
    Fails(Failure),
}

impl PointCheck {
    /// The failure, if any.
    pub fn failure(self) -> Option<Failure> {
        match self {
            PointCheck::Fails(f) => Some(f),
            _ => None,
        }
    }
}

/// Checks refinement of whole evaluations at one point.
pub fn check_point(
    src: Result<Vec<Val>, Undefined>,
    tgt: Result<Vec<Val>, Undefined>,
) -> PointCheck {
    let Ok(s) = src else {
        return PointCheck::SourceUndefined;
    };
    let Ok(t) = tgt else {
        return PointCheck::Fails(Failure::TargetUndefined);
    };
    match first_differing(&s, &t) {
        Some((_, f)) => PointCheck::Fails(f),
        None => PointCheck::Refines,
    }
}

/// The first root whose target value does not refine its source value,
/// with the failure (both evaluations defined).
pub fn first_differing(src: &[Val], tgt: &[Val]) -> Option<(usize, Failure)> {
    src.iter()
        .zip(tgt)
        .enumerate()
        .find_map(|(i, (&a, &b))| refines(a, b).map(|f| (i, f)))
}

/// Every point of the variables' domain (every combination of their
/// bounds), in order, as environments for [`eval`]. Exhaustive, so for
/// small domains only.
pub fn points(g: &Graph) -> impl Iterator<Item = Vec<i128>> {
    let bounds: Vec<(i128, i128)> = g
        .vars()
        .iter()
        .map(|d| (d.lo as i128, d.hi as i128))
        .collect();
    let mut next: Option<Vec<i128>> = Some(bounds.iter().map(|b| b.0).collect());
    std::iter::from_fn(move || {
        let env = next.take()?;
        // The next point, like an odometer; done when every digit wraps.
        if let Some(j) = (0..env.len()).rev().find(|&j| env[j] < bounds[j].1) {
            let mut n = env.clone();
            n[j] += 1;
            for (k, b) in bounds.iter().enumerate().skip(j + 1) {
                n[k] = b.0;
            }
            next = Some(n);
        }
        Some(env)
    })
}

/// The first point of [`points`] where `tgt` does not refine `src`, with
/// the failure; `None` when it refines everywhere.
pub fn first_failure(
    g: &Graph,
    src: &[NodeId],
    tgt: &[NodeId],
    m: impl Into<Model>,
) -> Option<(Vec<i128>, Failure)> {
    let m = m.into();
    let (mut s, mut t) = (Evaluator::new(g, src, m), Evaluator::new(g, tgt, m));
    points(g).find_map(|env| match check_point(s.eval(&env), t.eval(&env)) {
        PointCheck::Fails(f) => Some((env, f)),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::parse::parse_program;

    #[test]
    fn an_evaluator_reused_across_points_gives_what_a_fresh_evaluation_gives() {
        // Points where the division is undefined (y = 0) sit between defined
        // ones: a value left in the buffer by one point must not leak into
        // the next.
        let p = parse_program(
            "var x in [-3, 3]\nvar y in [-2, 2]\nvar c: bool\n\
             expr where(c, x // y, invalid) + x\nexpr x * y < 2 && c\n",
        )
        .unwrap();
        let mut e = Evaluator::new(&p.graph, &p.outputs, Width(8));
        let mut undefined = 0;
        for env in points(&p.graph) {
            let fresh = eval(&p.graph, &p.outputs, &env, Width(8));
            undefined += fresh.is_err() as usize;
            assert_eq!(e.eval(&env), fresh, "at {env:?}");
        }
        assert!(undefined > 0, "the test must cover undefined points");
    }
}
