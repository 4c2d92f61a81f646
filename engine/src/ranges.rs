//! Value-range analysis: `vmin`/`vmax` for every node, computed when the node
//! is built.
//!
//! The range of a node bounds every value it takes where it is a valid value
//! (invalid and unconstrained lanes have no value). A range with
//! `vmin > vmax` is empty: the node never has a value (it is always invalid,
//! or always undefined). Bools are 0/1.
//!
//! Transfer functions work on exact `i128` bounds, then clamp to the dtype:
//! `index` to 64 bits (a defined `index` value fits the width being checked,
//! and no width exceeds 64), `i32`/`i64` to the full type when the exact
//! range would wrap. Every transfer function is proved sound by the
//! verifier; a property test checks it against the interpreter.

use crate::interp::{div_ceil, div_floor, div_trunc, mod_floor, rem_trunc};
use crate::ir::{DType, Graph, NodeId, Op};

/// An inclusive interval over exact integers; empty when `lo > hi`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    pub lo: i128,
    pub hi: i128,
}

impl Range {
    pub const EMPTY: Range = Range { lo: 1, hi: 0 };
    pub const BOOL: Range = Range { lo: 0, hi: 1 };

    pub fn new(lo: i128, hi: i128) -> Range {
        Range { lo, hi }
    }

    pub fn point(v: i128) -> Range {
        Range { lo: v, hi: v }
    }

    pub fn is_empty(self) -> bool {
        self.lo > self.hi
    }

    pub fn contains(self, v: i128) -> bool {
        self.lo <= v && v <= self.hi
    }

    pub fn union(self, o: Range) -> Range {
        if self.is_empty() {
            o
        } else if o.is_empty() {
            self
        } else {
            Range::new(self.lo.min(o.lo), self.hi.max(o.hi))
        }
    }

    fn from_points(points: impl IntoIterator<Item = i128>) -> Range {
        points
            .into_iter()
            .fold(Range::EMPTY, |r, p| r.union(Range::point(p)))
    }

    /// The parts of a divisor interval with 0 removed.
    fn nonzero_parts(self) -> impl Iterator<Item = Range> {
        [
            Range::new(self.lo, self.hi.min(-1)),
            Range::new(self.lo.max(1), self.hi),
        ]
        .into_iter()
        .filter(|p| !p.is_empty())
    }
}

/// The range of a node of `op` over operands `src` (already in `g`).
pub(crate) fn node_range(g: &Graph, op: Op, dtype: DType, src: &[NodeId]) -> (i64, i64) {
    let args: Vec<Range> = src
        .iter()
        .map(|&s| {
            let n = g.node(s);
            Range::new(n.vmin as i128, n.vmax as i128)
        })
        .collect();
    let leaf = match op {
        Op::Const(c) => Some(Range::point(c as i128)),
        Op::Var(v) => {
            let d = g.var(v);
            Some(Range::new(d.lo as i128, d.hi as i128))
        }
        Op::Invalid => Some(Range::EMPTY),
        _ => None,
    };
    let r = leaf.unwrap_or_else(|| transfer(op, &args));
    clamp(r, dtype)
}

/// Clamps an exact range to what the dtype can hold.
fn clamp(r: Range, dtype: DType) -> (i64, i64) {
    if r.is_empty() {
        return (1, 0);
    }
    let (lo, hi) = dtype.bounds();
    let (lo, hi) = (lo as i128, hi as i128);
    match dtype {
        // A defined index value fits 64 bits, so clamping loses nothing.
        DType::Index | DType::Bool => (r.lo.max(lo) as i64, r.hi.min(hi) as i64),
        // Concrete types wrap: a range that leaves the type covers all of it.
        DType::I32 | DType::I64 => {
            if r.lo < lo || r.hi > hi {
                (lo as i64, hi as i64)
            } else {
                (r.lo as i64, r.hi as i64)
            }
        }
    }
}

/// The exact (unclamped) transfer function of a non-leaf operation; the
/// caller clamps to the result dtype (which is what a cast does).
pub fn transfer(op: Op, a: &[Range]) -> Range {
    let int_operands = op.is_int_alu() || op.is_comparison();
    if int_operands && a.iter().any(|r| r.is_empty()) {
        // An operand that never has a value: the result never has one
        // either (integer ops), or is unconstrained (comparisons).
        return if op.is_comparison() {
            Range::BOOL
        } else {
            Range::EMPTY
        };
    }
    match op {
        Op::Neg => Range::new(-a[0].hi, -a[0].lo),
        Op::Cast => a[0],
        Op::Add => Range::new(a[0].lo + a[1].lo, a[0].hi + a[1].hi),
        Op::Sub => Range::new(a[0].lo - a[1].hi, a[0].hi - a[1].lo),
        Op::Mul => Range::from_points([
            a[0].lo * a[1].lo,
            a[0].lo * a[1].hi,
            a[0].hi * a[1].lo,
            a[0].hi * a[1].hi,
        ]),
        Op::Min => Range::new(a[0].lo.min(a[1].lo), a[0].hi.min(a[1].hi)),
        Op::Max => Range::new(a[0].lo.max(a[1].lo), a[0].hi.max(a[1].hi)),
        Op::Div => quotient(a[0], a[1], div_trunc),
        Op::FloorDiv => quotient(a[0], a[1], div_floor),
        Op::CeilDiv => quotient(a[0], a[1], div_ceil),
        Op::Rem => rem_range(a[0], a[1]),
        Op::Mod => mod_range(a[0], a[1]),
        Op::Lt => decide(a[0].hi < a[1].lo, a[0].lo >= a[1].hi),
        Op::Le => decide(a[0].hi <= a[1].lo, a[0].lo > a[1].hi),
        Op::Eq => decide(
            a[0].lo == a[0].hi && a[1].lo == a[1].hi && a[0].lo == a[1].lo,
            a[0].hi < a[1].lo || a[1].hi < a[0].lo,
        ),
        Op::Ne => decide(
            a[0].hi < a[1].lo || a[1].hi < a[0].lo,
            a[0].lo == a[0].hi && a[1].lo == a[1].hi && a[0].lo == a[1].lo,
        ),
        Op::Not => Range::new(1 - a[0].hi, 1 - a[0].lo),
        Op::And => Range::new(a[0].lo.min(a[1].lo), a[0].hi.min(a[1].hi)),
        Op::Or => Range::new(a[0].lo.max(a[1].lo), a[0].hi.max(a[1].hi)),
        Op::Xor => {
            if a[0].lo == a[0].hi && a[1].lo == a[1].hi {
                Range::point(a[0].lo ^ a[1].lo)
            } else {
                Range::BOOL
            }
        }
        Op::Where => match (a[0].lo, a[0].hi) {
            (1, 1) => a[1],
            (0, 0) => a[2],
            _ => a[1].union(a[2]),
        },
        Op::Const(_) | Op::Var(_) | Op::Invalid => unreachable!("leaves have no transfer function"),
    }
}

/// A bool range from "always true" / "always false" facts.
fn decide(always: bool, never: bool) -> Range {
    if always {
        Range::point(1)
    } else if never {
        Range::point(0)
    } else {
        Range::BOOL
    }
}

/// Range of a quotient. On each sign-constant part of the divisor, every
/// quotient function here is monotone in each argument, so the extremes lie
/// at the corners. A divisor that can only be 0 leaves no value (empty).
fn quotient(a: Range, b: Range, q: fn(i128, i128) -> Option<i128>) -> Range {
    Range::from_points(b.nonzero_parts().flat_map(|p| {
        [(a.lo, p.lo), (a.lo, p.hi), (a.hi, p.lo), (a.hi, p.hi)]
            .into_iter()
            .filter_map(|(x, y)| q(x, y))
            .collect::<Vec<_>>()
    }))
}

/// The largest `|b| - 1` over non-zero divisors in `b`.
fn max_abs_rem(b: Range) -> Option<i128> {
    b.nonzero_parts()
        .map(|p| p.lo.abs().max(p.hi.abs()) - 1)
        .max()
}

/// When the divisor is a single constant `c` and the quotient is the same at
/// both ends of the dividend (it is monotone, so constant in between), the
/// remainder `a - c*q` is increasing in `a` and exact at both ends.
fn one_period(
    a: Range,
    b: Range,
    q: fn(i128, i128) -> Option<i128>,
    r: fn(i128, i128) -> Option<i128>,
) -> Option<Range> {
    if b.lo != b.hi || b.lo == 0 {
        return None;
    }
    let c = b.lo;
    (q(a.lo, c)? == q(a.hi, c)?).then(|| Range::new(r(a.lo, c).unwrap(), r(a.hi, c).unwrap()))
}

/// Truncating remainder: sign of the dividend, magnitude below `|b|` and at
/// most `|a|`.
fn rem_range(a: Range, b: Range) -> Range {
    let Some(m) = max_abs_rem(b) else {
        return Range::EMPTY;
    };
    if let Some(r) = one_period(a, b, div_trunc, rem_trunc) {
        return r;
    }
    let lo = if a.lo >= 0 { 0 } else { a.lo.max(-m) };
    let hi = if a.hi <= 0 { 0 } else { a.hi.min(m) };
    Range::new(lo, hi)
}

/// Floor remainder: sign of the divisor, magnitude below `|b|`.
fn mod_range(a: Range, b: Range) -> Range {
    if b.nonzero_parts().next().is_none() {
        return Range::EMPTY;
    }
    if let Some(r) = one_period(a, b, div_floor, mod_floor) {
        return r;
    }
    let mut r = Range::EMPTY;
    if b.hi >= 1 {
        // Positive divisors give [0, b - 1]; a non-negative dividend also
        // bounds the result by itself.
        let hi = (b.hi - 1).min(if a.lo >= 0 { a.hi } else { i128::MAX });
        r = r.union(Range::new(0, hi));
    }
    if b.lo <= -1 {
        let lo = (b.lo + 1).max(if a.hi <= 0 { a.lo } else { i128::MIN });
        r = r.union(Range::new(lo, 0));
    }
    r
}
