//! The reference interpreter: the definition of the semantics.
//!
//! It implements [`crate::semantics`]'s primitives on exact integers (all
//! arithmetic in `i128` with [`crate::arith`], overflow detected, never
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

use crate::arith::{exact, wrap};
use crate::dtype::{DType, Width};
use crate::ir::{Graph, NodeId};
use crate::op::Op;
use crate::semantics::{self, Failure, Model, Prims, Sem, Ub, Value};
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
/// width), by [`crate::semantics::apply`]. `dtype` is the result dtype,
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

/// Evaluates every node reachable from `roots`; returns the value of each
/// node (indexed by node id; unreachable nodes hold `Unconstrained`).
pub fn eval_all(
    g: &Graph,
    roots: &[NodeId],
    env: &Env,
    m: impl Into<Model>,
) -> Result<Vec<Val>, Undefined> {
    let m = m.into();
    let order = g.reachable(roots);
    let mut vals = vec![Val::Unconstrained; order.last().map_or(0, |l| l.index() + 1)];
    let mut args = Vec::with_capacity(3);
    for id in order {
        args.clear();
        args.extend(g.node(id).src().iter().map(|s| vals[s.index()]));
        vals[id.index()] =
            eval_node(g, id, &args, env, m).map_err(|reason| Undefined { node: id, reason })?;
    }
    Ok(vals)
}

/// Evaluates `roots` at one point: their values, or why the evaluation is
/// undefined.
pub fn eval(
    g: &Graph,
    roots: &[NodeId],
    env: &Env,
    m: impl Into<Model>,
) -> Result<Vec<Val>, Undefined> {
    let vals = eval_all(g, roots, env, m)?;
    Ok(roots.iter().map(|r| vals[r.index()]).collect())
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
    match s.iter().zip(&t).find_map(|(&a, &b)| refines(a, b)) {
        Some(f) => PointCheck::Fails(f),
        None => PointCheck::Refines,
    }
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
    points(g).find_map(
        |env| match check_point(eval(g, src, &env, m), eval(g, tgt, &env, m)) {
            PointCheck::Fails(f) => Some((env, f)),
            _ => None,
        },
    )
}
