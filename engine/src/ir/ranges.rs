//! Value-range analysis: `vmin`/`vmax` for every node, computed when the node
//! is built.
//!
//! The range of a node bounds every value it takes where it is a valid value
//! (invalid and unconstrained lanes have no value). A range with
//! `vmin > vmax` is empty: the node never has a value (it is always invalid,
//! or always undefined). Bools are 0/1.
//!
//! Transfer functions work on exact bounds, then clamp to the dtype:
//! `index` to 64 bits (a defined `index` value fits the width being checked,
//! and no width exceeds 64), `i32`/`i64` to the full type when the exact
//! range would wrap. They are written once, over the [`Arith`] trait: the
//! engine runs them on `i128`, and the verifier runs the same code on Z3
//! terms to prove each one sound (`verify::ranges`). A property test also
//! checks them against the interpreter.

use crate::ir::arith::{div_ceil, div_floor, div_trunc, mod_floor, pow2, rem_trunc};
use crate::ir::dtype::DType;
use crate::ir::op::Op;

/// The arithmetic the transfer functions are written in. `Cond` is what a
/// comparison gives; [`Arith::select`] is the only branch, so that a
/// symbolic instance can follow every path at once.
pub trait Arith: Clone {
    type Cond: Clone;
    fn lit(v: i128) -> Self;
    fn add(&self, o: &Self) -> Self;
    fn sub(&self, o: &Self) -> Self;
    fn mul(&self, o: &Self) -> Self;
    fn lt(&self, o: &Self) -> Self::Cond;
    fn eq(&self, o: &Self) -> Self::Cond;
    fn and(a: &Self::Cond, b: &Self::Cond) -> Self::Cond;
    fn or(a: &Self::Cond, b: &Self::Cond) -> Self::Cond;
    fn not(a: &Self::Cond) -> Self::Cond;
    fn select(c: &Self::Cond, a: &Self, b: &Self) -> Self;
    /// The exact quotient or remainder of `op` (a division-family op) for
    /// a non-zero `b`; any value for `b == 0` (callers discard it).
    fn divmod(op: Op, a: &Self, b: &Self) -> Self;
    /// `2^self` for `0 <= self <= MAX_SHIFT`; any value elsewhere
    /// (callers clamp the exponent first).
    fn pow2(&self) -> Self;

    fn le(&self, o: &Self) -> Self::Cond {
        Self::not(&o.lt(self))
    }
    fn neg(&self) -> Self {
        Self::lit(0).sub(self)
    }
    fn min(&self, o: &Self) -> Self {
        Self::select(&self.le(o), self, o)
    }
    fn max(&self, o: &Self) -> Self {
        Self::select(&self.le(o), o, self)
    }
    fn abs(&self) -> Self {
        self.max(&self.neg())
    }
}

impl Arith for i128 {
    type Cond = bool;
    fn lit(v: i128) -> i128 {
        v
    }
    fn add(&self, o: &i128) -> i128 {
        self + o
    }
    fn sub(&self, o: &i128) -> i128 {
        self - o
    }
    fn mul(&self, o: &i128) -> i128 {
        self * o
    }
    fn lt(&self, o: &i128) -> bool {
        self < o
    }
    fn eq(&self, o: &i128) -> bool {
        self == o
    }
    fn and(a: &bool, b: &bool) -> bool {
        *a && *b
    }
    fn or(a: &bool, b: &bool) -> bool {
        *a || *b
    }
    fn not(a: &bool) -> bool {
        !a
    }
    fn select(c: &bool, a: &i128, b: &i128) -> i128 {
        if *c {
            *a
        } else {
            *b
        }
    }
    fn divmod(op: Op, a: &i128, b: &i128) -> i128 {
        let f = match op {
            Op::Div => div_trunc,
            Op::FloorDiv => div_floor,
            Op::CeilDiv => div_ceil,
            Op::Rem => rem_trunc,
            Op::Mod => mod_floor,
            _ => unreachable!("{op:?} is not a division"),
        };
        f(*a, *b).unwrap_or(0)
    }
    fn pow2(&self) -> i128 {
        pow2(*self).unwrap_or(0)
    }
}

/// The largest shift amount any dtype allows (`i64`, and `index` at 64
/// bits, have 64 bits).
pub const MAX_SHIFT: i128 = 63;

/// An inclusive interval; empty when `lo > hi`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range<T = i128> {
    pub lo: T,
    pub hi: T,
}

impl Range<i128> {
    pub fn contains(&self, v: i128) -> bool {
        self.lo <= v && v <= self.hi
    }
}

impl<T: Arith> Range<T> {
    pub fn new(lo: T, hi: T) -> Range<T> {
        Range { lo, hi }
    }

    pub fn empty() -> Range<T> {
        Range::new(T::lit(1), T::lit(0))
    }

    pub fn bool() -> Range<T> {
        Range::new(T::lit(0), T::lit(1))
    }

    pub fn point(v: T) -> Range<T> {
        Range::new(v.clone(), v)
    }

    pub fn is_empty(&self) -> T::Cond {
        self.hi.lt(&self.lo)
    }

    /// The hull of both (an empty side contributes nothing).
    pub fn union(&self, o: &Range<T>) -> Range<T> {
        let (e1, e2) = (self.is_empty(), o.is_empty());
        let pick = |a: &T, b: &T, hull: T| T::select(&e1, b, &T::select(&e2, a, &hull));
        Range::new(
            pick(&self.lo, &o.lo, self.lo.min(&o.lo)),
            pick(&self.hi, &o.hi, self.hi.max(&o.hi)),
        )
    }

    /// `r` where `c` holds, else empty.
    fn only_if(c: &T::Cond, r: Range<T>) -> Range<T> {
        let e = Range::empty();
        Range::new(T::select(c, &r.lo, &e.lo), T::select(c, &r.hi, &e.hi))
    }

    fn choose(c: &T::Cond, a: &Range<T>, b: &Range<T>) -> Range<T> {
        Range::new(T::select(c, &a.lo, &b.lo), T::select(c, &a.hi, &b.hi))
    }

    fn hull_of(points: &[T]) -> Range<T> {
        let lo = points[1..].iter().fold(points[0].clone(), |m, p| m.min(p));
        let hi = points[1..].iter().fold(points[0].clone(), |m, p| m.max(p));
        Range::new(lo, hi)
    }

    /// The parts of a divisor interval with 0 removed (either may be empty).
    fn nonzero_parts(&self) -> [Range<T>; 2] {
        [
            Range::new(self.lo.clone(), self.hi.min(&T::lit(-1))),
            Range::new(self.lo.max(&T::lit(1)), self.hi.clone()),
        ]
    }

    fn is_point(&self) -> T::Cond {
        self.lo.eq(&self.hi)
    }
}

/// Clamps an exact range to what the dtype can hold.
pub fn clamp<T: Arith>(r: &Range<T>, dtype: DType) -> Range<T> {
    let (lo, hi) = dtype.bounds();
    let (lo, hi) = (T::lit(lo as i128), T::lit(hi as i128));
    let clamped = match dtype {
        // A defined index value fits 64 bits, so clamping loses nothing.
        DType::Index | DType::Bool => Range::new(r.lo.max(&lo), r.hi.min(&hi)),
        // Concrete types wrap: a range that leaves the type covers all of it.
        DType::I32 | DType::I64 => {
            let leaves = T::or(&r.lo.lt(&lo), &hi.lt(&r.hi));
            Range::choose(&leaves, &Range::new(lo, hi), r)
        }
    };
    Range::choose(&r.is_empty(), &Range::empty(), &clamped)
}

/// The exact (unclamped) transfer function of a non-leaf operation; the
/// caller clamps to the result dtype (which is what a cast does).
pub fn transfer<T: Arith>(op: Op, a: &[Range<T>]) -> Range<T> {
    let r = match op {
        Op::Neg => Range::new(a[0].hi.neg(), a[0].lo.neg()),
        Op::Cast => a[0].clone(),
        Op::Add => Range::new(a[0].lo.add(&a[1].lo), a[0].hi.add(&a[1].hi)),
        Op::Sub => Range::new(a[0].lo.sub(&a[1].hi), a[0].hi.sub(&a[1].lo)),
        Op::Mul => mul_range(&a[0], &a[1]),
        Op::Min => Range::new(a[0].lo.min(&a[1].lo), a[0].hi.min(&a[1].hi)),
        Op::Max => Range::new(a[0].lo.max(&a[1].lo), a[0].hi.max(&a[1].hi)),
        Op::Div | Op::FloorDiv | Op::CeilDiv => quotient(op, &a[0], &a[1]),
        Op::Rem => rem_range(&a[0], &a[1]),
        Op::Mod => mod_range(&a[0], &a[1]),
        Op::Shl | Op::Shr => shift_range(op, &a[0], &a[1]),
        Op::BitAnd => bitand_range(&a[0], &a[1]),
        Op::Lt => decide(a[0].hi.lt(&a[1].lo), a[1].hi.le(&a[0].lo)),
        Op::Le => decide(a[0].hi.le(&a[1].lo), a[1].hi.lt(&a[0].lo)),
        Op::Eq => decide(same_point(&a[0], &a[1]), disjoint(&a[0], &a[1])),
        Op::Ne => decide(disjoint(&a[0], &a[1]), same_point(&a[0], &a[1])),
        Op::Not => Range::new(T::lit(1).sub(&a[0].hi), T::lit(1).sub(&a[0].lo)),
        Op::And => Range::new(a[0].lo.min(&a[1].lo), a[0].hi.min(&a[1].hi)),
        Op::Or => Range::new(a[0].lo.max(&a[1].lo), a[0].hi.max(&a[1].hi)),
        Op::Xor => {
            // For 0/1 points, x ^ y == x + y - 2xy.
            let (x, y) = (&a[0].lo, &a[1].lo);
            let v = x.add(y).sub(&T::lit(2).mul(&x.mul(y)));
            let points = T::and(&a[0].is_point(), &a[1].is_point());
            Range::choose(&points, &Range::point(v), &Range::bool())
        }
        Op::Where => {
            let (c, one, zero) = (&a[0], T::lit(1), T::lit(0));
            let always = T::and(&c.lo.eq(&one), &c.hi.eq(&one));
            let never = T::and(&c.lo.eq(&zero), &c.hi.eq(&zero));
            let either = a[1].union(&a[2]);
            Range::choose(&always, &a[1], &Range::choose(&never, &a[2], &either))
        }
        Op::Const(_) | Op::Var(_) | Op::Invalid => unreachable!("leaves have no transfer function"),
    };
    if !(op.is_int_alu() || op.is_comparison()) {
        return r;
    }
    // An integer operand that never has a value: the result never has one
    // either (integer ops), or is unconstrained (comparisons).
    let any_empty = a[1..]
        .iter()
        .fold(a[0].is_empty(), |e, r| T::or(&e, &r.is_empty()));
    let none = if op.is_comparison() {
        Range::bool()
    } else {
        Range::empty()
    };
    Range::choose(&any_empty, &none, &r)
}

fn same_point<T: Arith>(a: &Range<T>, b: &Range<T>) -> T::Cond {
    T::and(&T::and(&a.is_point(), &b.is_point()), &a.lo.eq(&b.lo))
}

fn disjoint<T: Arith>(a: &Range<T>, b: &Range<T>) -> T::Cond {
    T::or(&a.hi.lt(&b.lo), &b.hi.lt(&a.lo))
}

/// A bool range from "always true" / "always false" facts.
fn decide<T: Arith>(always: T::Cond, never: T::Cond) -> Range<T> {
    let r = Range::choose(&never, &Range::point(T::lit(0)), &Range::bool());
    Range::choose(&always, &Range::point(T::lit(1)), &r)
}

/// Range of a quotient. On each sign-constant part of the divisor, every
/// quotient function here is monotone in each argument, so the extremes lie
/// at the corners. A divisor that can only be 0 leaves no value (empty).
fn quotient<T: Arith>(op: Op, a: &Range<T>, b: &Range<T>) -> Range<T> {
    b.nonzero_parts().iter().fold(Range::empty(), |acc, p| {
        let q = |x: &T, y: &T| T::divmod(op, x, y);
        let corners = Range::hull_of(&[
            q(&a.lo, &p.lo),
            q(&a.lo, &p.hi),
            q(&a.hi, &p.lo),
            q(&a.hi, &p.hi),
        ]);
        acc.union(&Range::only_if(&T::not(&p.is_empty()), corners))
    })
}

/// When the divisor is a single non-zero constant `c` and the quotient is
/// the same at both ends of the dividend (it is monotone, so constant in
/// between), the remainder `a - c*q` is increasing in `a` and exact at
/// both ends. Returns the condition and that range.
fn one_period<T: Arith>(a: &Range<T>, b: &Range<T>, q: Op, r: Op) -> (T::Cond, Range<T>) {
    let c = &b.lo;
    let applies = T::and(
        &T::and(&b.is_point(), &T::not(&c.eq(&T::lit(0)))),
        &T::divmod(q, &a.lo, c).eq(&T::divmod(q, &a.hi, c)),
    );
    (
        applies,
        Range::new(T::divmod(r, &a.lo, c), T::divmod(r, &a.hi, c)),
    )
}

/// Truncating remainder: sign of the dividend, magnitude below `|b|` and at
/// most `|a|`.
fn rem_range<T: Arith>(a: &Range<T>, b: &Range<T>) -> Range<T> {
    let [neg, pos] = b.nonzero_parts();
    // The largest |b| - 1 over the non-zero divisors in b.
    let m_of = |p: &Range<T>| p.lo.abs().max(&p.hi.abs()).sub(&T::lit(1));
    let (ne, pe) = (neg.is_empty(), pos.is_empty());
    let m = T::select(
        &ne,
        &m_of(&pos),
        &T::select(&pe, &m_of(&neg), &m_of(&neg).max(&m_of(&pos))),
    );
    let zero = T::lit(0);
    let lo = T::select(&zero.le(&a.lo), &zero, &a.lo.max(&m.neg()));
    let hi = T::select(&a.hi.le(&zero), &zero, &a.hi.min(&m));
    let (period, exact) = one_period(a, b, Op::Div, Op::Rem);
    let r = Range::choose(&period, &exact, &Range::new(lo, hi));
    Range::choose(&T::and(&ne, &pe), &Range::empty(), &r)
}

/// Floor remainder: sign of the divisor, magnitude below `|b|`.
fn mod_range<T: Arith>(a: &Range<T>, b: &Range<T>) -> Range<T> {
    let [neg, pos] = b.nonzero_parts();
    let (zero, one) = (T::lit(0), T::lit(1));
    // Positive divisors give [0, b - 1]; a non-negative dividend also bounds
    // the result by itself.
    let cap = T::select(&zero.le(&a.lo), &a.hi, &T::lit(i128::MAX));
    let up = Range::only_if(
        &one.le(&b.hi),
        Range::new(zero.clone(), b.hi.sub(&one).min(&cap)),
    );
    let floor = T::select(&a.hi.le(&zero), &a.lo, &T::lit(i128::MIN));
    let down = Range::only_if(
        &b.lo.le(&one.neg()),
        Range::new(b.lo.add(&one).max(&floor), zero),
    );
    let (period, exact) = one_period(a, b, Op::FloorDiv, Op::Mod);
    let r = Range::choose(&period, &exact, &up.union(&down));
    Range::choose(
        &T::and(&neg.is_empty(), &pos.is_empty()),
        &Range::empty(),
        &r,
    )
}

/// Range of a shift: `a << k = a * 2^k`, `a >> k = floor(a / 2^k)`.
/// Amounts outside `[0, MAX_SHIFT]` are undefined in every dtype, so only
/// the amounts inside count; on them `2^k` grows with `k`, so the product
/// or quotient by `2^k` is the product or quotient by the range
/// `[2^klo, 2^khi]`.
fn shift_range<T: Arith>(op: Op, a: &Range<T>, k: &Range<T>) -> Range<T> {
    let k = Range::new(k.lo.max(&T::lit(0)), k.hi.min(&T::lit(MAX_SHIFT)));
    let p = pow2_range(&k);
    let r = match op {
        Op::Shl => mul_range(a, &p),
        _ => quotient(Op::FloorDiv, a, &p),
    };
    Range::only_if(&T::not(&k.is_empty()), r)
}

/// `[2^lo, 2^hi]` for a range of shift amounts inside `[0, MAX_SHIFT]`.
pub fn pow2_range<T: Arith>(k: &Range<T>) -> Range<T> {
    Range::new(k.lo.pow2(), k.hi.pow2())
}

/// Range of a product: the product is monotone in each factor (one way or
/// the other by the other's sign), so the extremes lie at the corners.
fn mul_range<T: Arith>(a: &Range<T>, b: &Range<T>) -> Range<T> {
    Range::hull_of(&[
        a.lo.mul(&b.lo),
        a.lo.mul(&b.hi),
        a.hi.mul(&b.lo),
        a.hi.mul(&b.hi),
    ])
}

/// Range of `x & y` (two's complement): with a non-negative operand the
/// result lies between 0 and that operand; with both negative it is
/// negative, at most the smaller operand and at least twice it (the and
/// keeps the sign and clears bits, and the next power of two below the
/// smaller operand is at least twice it).
fn bitand_range<T: Arith>(x: &Range<T>, y: &Range<T>) -> Range<T> {
    let zero = T::lit(0);
    let (xp, yp) = (zero.le(&x.lo), zero.le(&y.lo));
    let hi = T::select(
        &xp,
        &T::select(&yp, &x.hi.min(&y.hi), &x.hi),
        &T::select(&yp, &y.hi, &x.hi.max(&y.hi)),
    );
    let lo = T::select(&T::or(&xp, &yp), &zero, &T::lit(2).mul(&x.lo.min(&y.lo)));
    Range::new(lo, hi)
}
