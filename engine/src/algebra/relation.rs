//! Comparisons of `index` operands as linear relations, and the facts they
//! state: `a < b`, `a <= b`, `a == b` and `a != b` read as one linear form
//! `e = a - b` compared with 0 ([`relation`]), written back with the
//! positive terms on one side and the negative on the other ([`write`]),
//! and read as a fact about a linear key ([`read_rel`]). The comparison,
//! fact and gate passes all read relations here.

use crate::algebra::digits::fuse;
use crate::algebra::linear::{self, read_acc, Mono, Poly};
use crate::ir::arith::{div_floor, gcd};
use crate::ir::{DType, Graph, NodeId, Op};
use smallvec::SmallVec;

/// What is compared with 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rel {
    /// `e < 0`.
    Lt,
    /// `e == 0`.
    Eq,
    /// `e != 0`.
    Ne,
}

/// A comparison of two `index` operands that cannot be invalid, as `e REL
/// 0` with `e` normalized (`a <= b` as `a - b - 1 < 0`).
pub fn relation(g: &mut Graph, n: NodeId) -> Option<(Rel, Poly)> {
    let node = *g.node(n);
    if !node.op.is_comparison() || node.maybe_invalid {
        return None;
    }
    let (a, b) = (node.src()[0], node.src()[1]);
    if g.node(a).dtype != DType::Index {
        return None;
    }
    let mut e = read_acc(g, a)?;
    let rb = linear::read(g, b)?;
    e.add_poly(&rb, -1)?;
    let rel = match node.op {
        Op::Lt => Rel::Lt,
        Op::Le => {
            e.k = e.k.checked_sub(1)?;
            Rel::Lt
        }
        Op::Eq => Rel::Eq,
        Op::Ne => Rel::Ne,
        _ => return None,
    };
    fuse(g, &mut e)?;
    Some((rel, e.finish(g)?))
}

/// Writes `e REL 0` back as a comparison of two sums with positive
/// coefficients: of the equivalent forms (`P < N + 3` or `P <= N + 2`, the
/// constant on either side), the one with the fewest nodes (a constant the
/// sides already hold costs none), the first on a tie.
pub fn write(g: &mut Graph, rel: Rel, p: &Poly) -> Option<NodeId> {
    let mut pos = Poly {
        terms: p.terms.iter().filter(|t| t.1 > 0).cloned().collect(),
        k: 0,
    };
    let mut neg = Poly {
        terms: p
            .terms
            .iter()
            .filter(|t| t.1 < 0)
            .map(|(m, c)| (m.clone(), -c))
            .collect(),
        k: 0,
    };
    let (pos_empty, neg_empty) = (pos.terms.is_empty(), neg.terms.is_empty());
    // Each side with each constant is built once: the forms share them.
    let mut built: SmallVec<[(bool, i128, NodeId); 4]> = SmallVec::new();
    let mut side = |g: &mut Graph, positive: bool, k: i128| -> Option<NodeId> {
        if let Some(&(_, _, n)) = built.iter().find(|t| t.0 == positive && t.1 == k) {
            return Some(n);
        }
        // One side's terms, with each constant in turn (set, not copied).
        let s = if positive { &mut pos } else { &mut neg };
        s.k = k;
        let n = linear::build(g, s)?;
        built.push((positive, k, n));
        Some(n)
    };
    // (op, constant of `P - N + k OP 0`): `<` with k, or `<=` with k + 1.
    let (forms, count) = match rel {
        Rel::Lt => ([(Op::Lt, p.k), (Op::Le, p.k.checked_add(1)?)], 2),
        Rel::Eq => ([(Op::Eq, p.k); 2], 1),
        Rel::Ne => ([(Op::Ne, p.k); 2], 1),
    };
    let mut best: Option<(usize, (Op, NodeId, NodeId))> = None;
    for &(op, k) in &forms[..count] {
        // The constant on the side where it is positive (the usual way),
        // then on the other.
        let first = if k > 0 { (k, 0) } else { (0, k.checked_neg()?) };
        // A constant alone on a side with no terms costs one node; on the
        // other side it costs at least that side's sum node, so the second
        // placement can only tie, and a tie keeps the first: not built.
        let alone = if k > 0 { pos_empty } else { neg_empty };
        let second = if k != 0 && !alone {
            Some((first.1.checked_neg()?, first.0.checked_neg()?))
        } else {
            None
        };
        for (lk, rk) in std::iter::once(first).chain(second) {
            let l = side(g, true, lk)?;
            let r = side(g, false, rk)?;
            // The comparison's size, without building the forms that lose.
            let cost = 1 + g.size_of(&[l, r]);
            if best.is_none_or(|b| cost < b.0) {
                best = Some((cost, (op, l, r)));
            }
        }
    }
    best.map(|(_, (op, l, r))| g.mk(op, &[l, r]))
}

/// `e REL 0` as (key, interval of the key where it holds, or the point it
/// excludes). `None` for a relation with no terms.
pub enum Read {
    /// `lo <= key <= hi`.
    In(Vec<(Mono, i128)>, i128, i128),
    /// `key != v`.
    Not(Vec<(Mono, i128)>, i128),
    /// Never or always.
    Const(bool),
}

/// Reads `e REL 0`: `e = G*s*key + k` with `key` the terms divided by their
/// gcd `G > 0` and signed `s` so that the first coefficient is positive.
pub fn read_rel(rel: Rel, p: &Poly) -> Option<Read> {
    if p.terms.is_empty() {
        return None;
    }
    let gg = p.terms.iter().fold(0, |a, t| gcd(a, t.1));
    let s = if p.terms[0].1 < 0 { -1 } else { 1 };
    let key: Vec<(Mono, i128)> = p
        .terms
        .iter()
        .map(|(m, c)| (m.clone(), c / gg * s))
        .collect();
    let k = p.k;
    const INF: i128 = i128::MAX / 4;
    Some(match rel {
        // s*G*key + k < 0.
        Rel::Lt if s > 0 => Read::In(key, -INF, div_floor(-k - 1, gg)?),
        Rel::Lt => Read::In(key, div_floor(k, gg)? + 1, INF),
        Rel::Eq | Rel::Ne => {
            // s*G*key == -k.
            if k % gg != 0 {
                return Some(Read::Const(rel == Rel::Ne));
            }
            let v = -k / gg * s;
            if rel == Rel::Eq {
                Read::In(key, v, v)
            } else {
                Read::Not(key, v)
            }
        }
    })
}
