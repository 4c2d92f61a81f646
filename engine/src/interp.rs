//! The reference interpreter: the definition of the semantics.
//!
//! Written for clarity, exact (all arithmetic in `i128`, overflow detected,
//! never wrapped by accident). The SMT encoding and the JIT are tested
//! against this module, op by op.
//!
//! An evaluation at width W yields, for every node, a [`Val`]: a defined
//! integer or bool, `Invalid` (a masked lane), or `Unconstrained` (a value
//! computed from an invalid operand that is only ever used under its gate).
//! Undefined behaviour is whole-evaluation: if any reachable node is
//! undefined, the evaluation as a whole is [`Undefined`], whichever arm of a
//! `where` it sits in, because hardware evaluates both arms.

use crate::ir::{DType, Graph, NodeId, Op};
use std::fmt;

/// The width `index` is checked at: 8, 16, 32 or 64 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Width(pub u32);

impl Width {
    pub const ALL: [Width; 4] = [Width(8), Width(16), Width(32), Width(64)];
    pub const W64: Width = Width(64);

    /// The smallest W-bit value (saturating at 128 bits, for the wide
    /// arithmetic the verifier's guards use).
    pub fn min(self) -> i128 {
        if self.0 >= 128 {
            i128::MIN
        } else {
            -(1i128 << (self.0 - 1))
        }
    }

    pub fn max(self) -> i128 {
        if self.0 >= 128 {
            i128::MAX
        } else {
            (1i128 << (self.0 - 1)) - 1
        }
    }

    pub fn fits(self, v: i128) -> bool {
        self.min() <= v && v <= self.max()
    }

    /// Inclusive bounds of values of `dtype` at this width: `index` is W bits,
    /// the concrete types are their own width whatever W is.
    pub fn dtype_bounds(self, dtype: DType) -> (i128, i128) {
        match dtype {
            DType::Index => (self.min(), self.max()),
            DType::I32 => (i32::MIN as i128, i32::MAX as i128),
            DType::I64 => (i64::MIN as i128, i64::MAX as i128),
            DType::Bool => (0, 1),
        }
    }
}

impl fmt::Display for Width {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

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

/// Why an evaluation is undefined.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ub {
    /// Division or remainder by zero.
    DivByZero,
    /// `MIN / -1` in a concrete dtype (the quotient does not fit).
    DivOverflow,
    /// An `index` value outside the signed W-bit range.
    IndexOverflow,
}

impl fmt::Display for Ub {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Ub::DivByZero => "division by zero",
            Ub::DivOverflow => "MIN / -1 overflows",
            Ub::IndexOverflow => "index overflow",
        })
    }
}

/// An undefined evaluation: the first node (in topological order) that is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Undefined {
    pub node: NodeId,
    pub reason: Ub,
}

// ---- exact integer division, both families --------------------------------

/// Truncating division (toward zero). `None` for a zero divisor.
pub fn div_trunc(a: i128, b: i128) -> Option<i128> {
    if b == 0 {
        None
    } else {
        Some(a / b)
    }
}

/// Truncating remainder: `a - b * div_trunc(a, b)`, sign of the dividend.
pub fn rem_trunc(a: i128, b: i128) -> Option<i128> {
    if b == 0 {
        None
    } else {
        Some(a % b)
    }
}

/// Floor division (toward negative infinity).
pub fn div_floor(a: i128, b: i128) -> Option<i128> {
    let q = div_trunc(a, b)?;
    Some(if (a % b != 0) && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    })
}

/// Floor remainder: `a - b * div_floor(a, b)`, sign of the divisor.
pub fn mod_floor(a: i128, b: i128) -> Option<i128> {
    Some(a - b * div_floor(a, b)?)
}

/// Ceiling division (toward positive infinity).
pub fn div_ceil(a: i128, b: i128) -> Option<i128> {
    let q = div_trunc(a, b)?;
    Some(if (a % b != 0) && ((a < 0) == (b < 0)) {
        q + 1
    } else {
        q
    })
}

/// Greatest common divisor, non-negative; `gcd(0, 0) == 0`.
pub fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a as i128
}

/// Two's complement wrap of `v` to `bits` bits.
pub fn wrap(v: i128, bits: u32) -> i128 {
    let shift = 128 - bits;
    (v << shift) >> shift
}

/// The exact integer result of an integer operation on defined operands
/// (before the result dtype's overflow rule is applied). `None` for a zero
/// divisor.
pub fn int_op(op: Op, a: i128, b: i128) -> Option<i128> {
    Some(match op {
        Op::Neg => -a,
        Op::Cast => a,
        Op::Add => a + b,
        Op::Sub => a - b,
        Op::Mul => a * b,
        Op::Min => a.min(b),
        Op::Max => a.max(b),
        Op::Div => div_trunc(a, b)?,
        Op::Rem => rem_trunc(a, b)?,
        Op::FloorDiv => div_floor(a, b)?,
        Op::Mod => mod_floor(a, b)?,
        Op::CeilDiv => div_ceil(a, b)?,
        _ => unreachable!("{op:?} is not an integer operation"),
    })
}

/// Applies one operation to operand values at width `w`. `dtype` is the
/// result dtype, `arg_dts` the operands' dtypes.
///
/// - Constants: an `index` constant outside W bits is an overflow.
/// - Division and remainder (both families): a divisor that is the valid
///   value 0 is undefined, whatever the dividend (even invalid). The quotient
///   `MIN / -1` (`/`, `//`, `ceildiv`) is undefined: an `index` overflow or,
///   in `i32`/`i64`, [`Ub::DivOverflow`]. `MIN % -1` and `MIN mod -1` are 0.
/// - Unconstrained operands: an op is undefined if it is undefined for some
///   value the unconstrained operand could take (so a division by an
///   unconstrained divisor is undefined: it could be 0), and otherwise its
///   result is unconstrained. This keeps every op monotone under
///   refinement, so that replacing an unconstrained value by any value (as
///   `x < x -> false` does where `x` is invalid) can never make a defined
///   program undefined: rules proved one at a time compose.
/// - Integer ops: an invalid operand makes the result invalid; otherwise an
///   unconstrained operand makes it unconstrained (or undefined, above);
///   otherwise the exact result, which for `index` must fit W bits (else
///   overflow) and for `i32`/`i64` wraps. A cast to `i32`/`i64` wraps; a
///   cast to `index` must fit W bits.
/// - Comparisons: an invalid or unconstrained operand gives unconstrained.
/// - `! && || ^`: an unconstrained operand gives unconstrained.
/// - `where(c, a, b)`: unconstrained if `c` is, else the selected arm.
pub fn apply(op: Op, dtype: DType, args: &[Val], arg_dts: &[DType], w: Width) -> Result<Val, Ub> {
    use Val::*;
    match op {
        Op::Const(c) => {
            if dtype == DType::Bool {
                Ok(Bool(c != 0))
            } else if dtype == DType::Index && !w.fits(c as i128) {
                Err(Ub::IndexOverflow)
            } else {
                Ok(Int(c as i128))
            }
        }
        Op::Var(_) => unreachable!("variables are read from the environment"),
        Op::Invalid => Ok(Invalid),
        _ if op.is_int_alu() => {
            if let Some(ub) = division_ub(op, dtype, args, w) {
                return Err(ub);
            }
            if args.contains(&Invalid) {
                return Ok(Invalid);
            }
            if args.contains(&Unconstrained) {
                return match unconstrained_overflow(op, dtype, args, arg_dts, w) {
                    true => Err(Ub::IndexOverflow),
                    false => Ok(Unconstrained),
                };
            }
            let a = int_of(args[0]);
            let b = args.get(1).map_or(0, |&v| int_of(v));
            let exact = int_op(op, a, b).expect("zero divisors are handled above");
            match dtype {
                DType::Index if w.fits(exact) => Ok(Int(exact)),
                DType::Index => Err(Ub::IndexOverflow),
                DType::I32 => Ok(Int(wrap(exact, 32))),
                DType::I64 => Ok(Int(wrap(exact, 64))),
                DType::Bool => unreachable!("integer op with bool result"),
            }
        }
        Op::Lt | Op::Le | Op::Eq | Op::Ne => {
            if args.iter().any(|v| matches!(v, Invalid | Unconstrained)) {
                return Ok(Unconstrained);
            }
            let (a, b) = (int_of(args[0]), int_of(args[1]));
            Ok(Bool(match op {
                Op::Lt => a < b,
                Op::Le => a <= b,
                Op::Eq => a == b,
                _ => a != b,
            }))
        }
        Op::Not | Op::And | Op::Or | Op::Xor => {
            if args.contains(&Unconstrained) {
                return Ok(Unconstrained);
            }
            let a = bool_of(args[0]);
            Ok(Bool(match op {
                Op::Not => !a,
                Op::And => a && bool_of(args[1]),
                Op::Or => a || bool_of(args[1]),
                _ => a != bool_of(args[1]),
            }))
        }
        Op::Where => match args[0] {
            Unconstrained => Ok(Unconstrained),
            Bool(true) => Ok(args[1]),
            Bool(false) => Ok(args[2]),
            other => unreachable!("where condition {other:?}"),
        },
        _ => unreachable!("unhandled op {op:?}"),
    }
}

/// Undefined behaviour of a division or remainder that depends on the
/// divisor alone, or on `MIN / -1`: checked before validity, because a
/// zero divisor traps whatever the dividend is.
fn division_ub(op: Op, dtype: DType, args: &[Val], w: Width) -> Option<Ub> {
    if !op.is_divmod() {
        return None;
    }
    use Val::*;
    match args[1] {
        // An unconstrained divisor could be 0.
        Int(0) | Unconstrained => return Some(Ub::DivByZero),
        _ => {}
    }
    let quotient = matches!(op, Op::Div | Op::FloorDiv | Op::CeilDiv);
    let min = w.dtype_bounds(dtype).0;
    // MIN / -1, or an unconstrained dividend that could be MIN.
    if quotient && args[1] == Int(-1) && (args[0] == Unconstrained || args[0] == Int(min)) {
        return Some(if dtype == DType::Index {
            Ub::IndexOverflow
        } else {
            Ub::DivOverflow
        });
    }
    None
}

/// Whether some value of the unconstrained operand(s) of an arithmetic op
/// (no operand invalid) makes it overflow `index`. Wrapping dtypes never
/// overflow; min and max never do; division is handled by [`division_ub`].
fn unconstrained_overflow(op: Op, dtype: DType, args: &[Val], arg_dts: &[DType], w: Width) -> bool {
    let val = |i: usize| match args[i] {
        Val::Int(v) => Some(v),
        _ => None,
    };
    if dtype != DType::Index {
        return false;
    }
    match op {
        Op::Neg => true,
        // U + b overflows for some U unless b == 0 (and U + U always can).
        Op::Add => val(0).or(val(1)) != Some(0),
        // U - b unless b == 0; b - U unless b == -1 (b - U spans [b - MAX, b + MAX + 1]).
        Op::Sub => match (val(0), val(1)) {
            (None, Some(b)) => b != 0,
            (Some(a), None) => a != -1,
            _ => true,
        },
        // U * b unless b is 0 or 1 (-1 overflows at MIN; U * U always can).
        Op::Mul => !matches!(val(0).or(val(1)), Some(0 | 1)),
        // A cast into index from a type wider than W bits may not fit.
        Op::Cast => {
            let (lo, hi) = w.dtype_bounds(arg_dts[0]);
            let (ilo, ihi) = w.dtype_bounds(DType::Index);
            lo < ilo || hi > ihi
        }
        _ => false,
    }
}

fn int_of(v: Val) -> i128 {
    match v {
        Val::Int(i) => i,
        other => unreachable!("expected an integer, got {other:?}"),
    }
}

fn bool_of(v: Val) -> bool {
    match v {
        Val::Bool(b) => b,
        other => unreachable!("expected a bool, got {other:?}"),
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

/// Evaluates every node reachable from `roots`; returns the value of each
/// node (indexed by node id; unreachable nodes hold `Unconstrained`).
pub fn eval_all(g: &Graph, roots: &[NodeId], env: &Env, w: Width) -> Result<Vec<Val>, Undefined> {
    let order = g.reachable(roots);
    let mut vals = vec![Val::Unconstrained; order.last().map_or(0, |l| l.index() + 1)];
    let mut args = Vec::with_capacity(3);
    let mut dts = Vec::with_capacity(3);
    for id in order {
        let n = g.node(id);
        let r = match n.op {
            Op::Var(v) => read_var(g, v, env, w),
            _ => {
                args.clear();
                args.extend(n.src().iter().map(|s| vals[s.index()]));
                dts.clear();
                dts.extend(n.src().iter().map(|&s| g.node(s).dtype));
                apply(n.op, n.dtype, &args, &dts, w)
            }
        };
        vals[id.index()] = r.map_err(|reason| Undefined { node: id, reason })?;
    }
    Ok(vals)
}

/// Evaluates `roots` at one point: their values, or why the evaluation is
/// undefined.
pub fn eval(g: &Graph, roots: &[NodeId], env: &Env, w: Width) -> Result<Vec<Val>, Undefined> {
    let vals = eval_all(g, roots, env, w)?;
    Ok(roots.iter().map(|r| vals[r.index()]).collect())
}

/// How a target result relates to a source result under refinement (see
/// DESIGN.md): wherever the source is defined, the target must be defined,
/// invalid exactly where the source is, and equal where the source is a
/// value; an unconstrained source allows anything.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// The target refines the source at this point.
    Refines,
    /// The target is undefined where the source is defined.
    TargetUndefined,
    /// One is invalid where the other is not.
    ValidityDiffers,
    /// Both valid, different values (or the target unconstrained).
    ValueDiffers,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Refines => "refines",
            Verdict::TargetUndefined => "target-undefined",
            Verdict::ValidityDiffers => "validity-differs",
            Verdict::ValueDiffers => "value-differs",
        }
    }
}

/// Compares one source result with one target result at a point where the
/// source evaluation is defined.
pub fn refines(src: Val, tgt: Val) -> Verdict {
    match (src, tgt) {
        (Val::Unconstrained, _) => Verdict::Refines,
        (Val::Invalid, Val::Invalid) => Verdict::Refines,
        (Val::Invalid, _) | (_, Val::Invalid) => Verdict::ValidityDiffers,
        (s, t) if s == t => Verdict::Refines,
        _ => Verdict::ValueDiffers,
    }
}

/// Checks refinement of whole evaluations at one point: `None` when the
/// source is undefined there (no obligation).
pub fn check_point(
    src: Result<Vec<Val>, Undefined>,
    tgt: Result<Vec<Val>, Undefined>,
) -> Option<Verdict> {
    let s = src.ok()?;
    let Ok(t) = tgt else {
        return Some(Verdict::TargetUndefined);
    };
    Some(
        s.iter()
            .zip(&t)
            .map(|(&a, &b)| refines(a, b))
            .find(|v| *v != Verdict::Refines)
            .unwrap_or(Verdict::Refines),
    )
}

/// The first point of the variables' domain (every combination of their
/// bounds, in order) where `tgt` does not refine `src`, with its verdict;
/// `None` when it refines everywhere. Exhaustive, so for small domains only.
pub fn first_failure(
    g: &Graph,
    src: &[NodeId],
    tgt: &[NodeId],
    w: Width,
) -> Option<(Vec<i128>, Verdict)> {
    let bounds: Vec<(i128, i128)> = g
        .vars()
        .iter()
        .map(|d| (d.lo as i128, d.hi as i128))
        .collect();
    let mut env: Vec<i128> = bounds.iter().map(|b| b.0).collect();
    loop {
        match check_point(eval(g, src, &env, w), eval(g, tgt, &env, w)) {
            Some(Verdict::Refines) | None => {}
            Some(v) => return Some((env, v)),
        }
        // The next point, like an odometer; done when every digit wraps.
        let j = (0..env.len()).rev().find(|&j| env[j] < bounds[j].1)?;
        env[j] += 1;
        for (k, b) in bounds.iter().enumerate().skip(j + 1) {
            env[k] = b.0;
        }
    }
}
