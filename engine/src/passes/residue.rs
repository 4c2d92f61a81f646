//! The rewrites of residues (Halide's modulus-remainder analysis,
//! [`crate::algebra::residue`]: `value ≡ r (mod m)` per `index` node).
//!
//! Three rewrites use them:
//!
//! - `residue_fold_mod`: `e mod c` with `c > 0` dividing `m` is `r mod c`.
//! - `residue_decide_compare`: a comparison of `e mod c` is decided by the
//!   values the residue leaves (`e ≡ r (mod g)`, `g = gcd(m, c)`, puts `e
//!   mod c` in `[r', c - g + r']`, `r' = r mod g`), and a divisor
//!   `max(a, -a)` is never negative where the remainder is defined.
//! - `residue_gate_index`: in `where(c, idx, invalid)`, each conjunct `a mod
//!   C == r` of `c` says `a ≡ r (mod C)` where `c` holds; under it `idx`'s
//!   remainders fold as above and `(b + k) // d` with `b ≡ r (mod m)`, `d |
//!   m`, becomes `b // d + (r mod d + k) // d` (`b = d q + r mod d`). A
//!   conjunct `a == b` gives each side the other's residue, and a node
//!   whose residue leaves one value in the interval the conjuncts `a < k`,
//!   `k <= a`, ... put it in is that constant (Halide's `y mod 17 == 4 &&
//!   10 < y && y < 30` pins `y` to 21).
//!
//! **Lemma.** The first two replace a node by a value it has wherever it is
//! a defined value, and are only taken when the node is never invalid nor
//! unconstrained (so validity is kept); the result is a constant, defined
//! everywhere. The third is gated.rs's lemma: `idx'` equals `idx` wherever
//! `c` holds (every fact it uses holds there), `c` is unchanged, and every
//! node it adds is checked defined at every point by [`fits_new`] against
//! the global ranges.
//!
//! Algorithmic: every firing is recorded under [`RULES`] and validated by
//! the gate like the linear form's.

use crate::algebra::defined::{fits_new, rng};
use crate::algebra::residue::{mod_values, residue, Res};
use crate::ir::dtype::Width;
use crate::ir::ranges::{transfer, Range};
use crate::ir::{DType, Graph, NodeId, Op};
use rustc_hash::FxHashMap;

/// The sub-rule names, in the order [`rewrite`] returns indices into.
pub const RULES: [&str; 3] = [
    "residue_fold_mod",
    "residue_decide_compare",
    "residue_gate_index",
];

const FOLD: usize = 0;
const DECIDE: usize = 1;
const GATE: usize = 2;

/// Gated indices larger than this are left alone.
const MAX_GATED: usize = 256;

/// Conjuncts read for facts, at most.
const MAX_CONJUNCTS: usize = 16;

/// Tries the residue rewrites at `n`.
pub fn rewrite(g: &mut Graph, n: NodeId, w: Width) -> Option<(usize, NodeId)> {
    let node = *g.node(n);
    match node.op {
        Op::Mod if node.dtype == DType::Index => {
            let [e, c] = [node.src()[0], node.src()[1]];
            let c = g.node(c).as_const().filter(|&c| c > 0)? as i128;
            let en = g.node(e);
            if en.maybe_invalid || en.maybe_unconstrained {
                return None;
            }
            let a = residue(g, e, &FxHashMap::default());
            let v = mod_values(a, c)?;
            if v.lo != v.hi {
                return None;
            }
            Some((FOLD, g.cnst(i64::try_from(v.lo).ok()?, DType::Index)))
        }
        Op::Lt | Op::Le | Op::Eq | Op::Ne => decide(g, n, w).map(|b| (DECIDE, g.bool_const(b))),
        Op::Where if node.dtype == DType::Index => gated(g, n, w).map(|out| (GATE, out)),
        _ => None,
    }
}

/// The range of a remainder `e mod d`, narrower than its own where the
/// residue of `e` or a never-negative divisor `max(a, -a)` says more;
/// `None` when it says nothing more.
fn mod_range(g: &Graph, n: NodeId, w: Width) -> Option<Range> {
    let node = g.node(n);
    if node.op != Op::Mod || node.dtype != DType::Index {
        return None;
    }
    let own = rng(g, n, w);
    let [e, d] = [node.src()[0], node.src()[1]];
    let mut r = own;
    if let Some(c) = g.node(d).as_const().filter(|&c| c > 0) {
        let v = mod_values(residue(g, e, &FxHashMap::default()), c as i128)?;
        r = Range::new(r.lo.max(v.lo), r.hi.min(v.hi));
    } else if is_abs(g, d) {
        // |a| is never negative, and 0 is no divisor: the remainder takes
        // the sign of a positive divisor.
        let dr = rng(g, d, w);
        let dr = Range::new(dr.lo.max(0), dr.hi);
        let t = transfer(Op::Mod, &[rng(g, e, w), dr]);
        r = Range::new(r.lo.max(t.lo), r.hi.min(t.hi));
    } else {
        return None;
    }
    (r != own).then_some(r)
}

/// `max(a, -a)` (either order).
fn is_abs(g: &Graph, d: NodeId) -> bool {
    let n = g.node(d);
    if n.op != Op::Max {
        return false;
    }
    let [a, b] = [n.src()[0], n.src()[1]];
    let neg_of = |x: NodeId, y: NodeId| {
        let xn = g.node(x);
        xn.op == Op::Neg && xn.src()[0] == y
    };
    neg_of(a, b) || neg_of(b, a)
}

/// A comparison the narrowed range of a remainder operand decides.
fn decide(g: &Graph, n: NodeId, w: Width) -> Option<bool> {
    let node = g.node(n);
    let [a, b] = [node.src()[0], node.src()[1]];
    if g.node(a).dtype != DType::Index {
        return None;
    }
    for s in [a, b] {
        let sn = g.node(s);
        if sn.maybe_invalid || sn.maybe_unconstrained {
            return None;
        }
    }
    let (na, nb) = (mod_range(g, a, w), mod_range(g, b, w));
    if na.is_none() && nb.is_none() {
        return None;
    }
    let ra = na.unwrap_or_else(|| rng(g, a, w));
    let rb = nb.unwrap_or_else(|| rng(g, b, w));
    if ra.lo > ra.hi || rb.lo > rb.hi {
        return None;
    }
    let lt = if ra.hi < rb.lo {
        Some(true)
    } else if ra.lo >= rb.hi {
        Some(false)
    } else {
        None
    };
    let le = if ra.hi <= rb.lo {
        Some(true)
    } else if ra.lo > rb.hi {
        Some(false)
    } else {
        None
    };
    let eq = if ra.hi < rb.lo || rb.hi < ra.lo {
        Some(false)
    } else if ra.lo == ra.hi && rb.lo == rb.hi {
        Some(true)
    } else {
        None
    };
    match node.op {
        Op::Lt => lt,
        Op::Le => le,
        Op::Eq => eq,
        Op::Ne => eq.map(|e| !e),
        _ => None,
    }
}

/// `a ≡ r (mod C)` from a conjunct `a mod C == r` (either side).
fn fact_of(g: &Graph, p: NodeId) -> Option<(NodeId, Res)> {
    let pn = g.node(p);
    if pn.op != Op::Eq {
        return None;
    }
    let [x, y] = [pn.src()[0], pn.src()[1]];
    let (m, k) = match (g.node(x).as_const(), g.node(y).as_const()) {
        (None, Some(k)) => (x, k),
        (Some(k), None) => (y, k),
        _ => return None,
    };
    let mn = g.node(m);
    if mn.op != Op::Mod || mn.dtype != DType::Index {
        return None;
    }
    let c = g.node(mn.src()[1]).as_const().filter(|&c| c > 0)? as i128;
    let k = k as i128;
    // A remainder outside [0, C) never equals: other rules decide it.
    if !(0..c).contains(&k) {
        return None;
    }
    Some((mn.src()[0], Res { m: c, r: k }))
}

/// The interval a conjunct `p` comparing `a` with a constant puts `a` in.
fn interval_of(g: &Graph, p: NodeId, a: NodeId) -> Option<(i128, i128)> {
    let pn = g.node(p);
    let strict = match pn.op {
        Op::Lt => 1,
        Op::Le => 0,
        _ => return None,
    };
    let [x, y] = [pn.src()[0], pn.src()[1]];
    if x == a {
        let k = g.node(y).as_const()? as i128;
        Some((i128::MIN, k - strict))
    } else if y == a {
        let k = g.node(x).as_const()? as i128;
        Some((k + strict, i128::MAX))
    } else {
        None
    }
}

/// `where(c, idx, invalid)` with `idx` rewritten under the residue facts of
/// `c`'s conjuncts.
fn gated(g: &mut Graph, n: NodeId, w: Width) -> Option<NodeId> {
    let node = *g.node(n);
    let (c, idx, f) = (node.src()[0], node.src()[1], node.src()[2]);
    if g.node(f).op != Op::Invalid {
        return None;
    }
    let (cn, ix) = (*g.node(c), *g.node(idx));
    if cn.maybe_invalid || cn.maybe_unconstrained || ix.maybe_invalid || ix.maybe_unconstrained {
        return None;
    }
    let (parts, whole) = g.chain_operands(c, Op::And, MAX_CONJUNCTS);
    if !whole {
        return None;
    }
    let mut facts: FxHashMap<NodeId, Res> = FxHashMap::default();
    for &p in &parts {
        if let Some((a, r)) = fact_of(g, p) {
            // Two facts on one node: keep the finer when one refines the
            // other, else the first.
            let keep = match facts.get(&a) {
                Some(old) => r.m % old.m == 0 && r.r.rem_euclid(old.m) == old.r,
                None => true,
            };
            if keep {
                facts.insert(a, r);
            }
        }
    }
    if facts.is_empty() {
        return None;
    }
    // An equality `a == b` gives each side the other's residue (under the
    // remainder facts): both are the same value where the gate holds.
    for &p in &parts {
        let pn = *g.node(p);
        if pn.op != Op::Eq || g.node(pn.src()[0]).dtype != DType::Index {
            continue;
        }
        let [a, b] = [pn.src()[0], pn.src()[1]];
        for (x, y) in [(a, b), (b, a)] {
            if facts.contains_key(&x) || g.node(x).as_const().is_some() {
                continue;
            }
            let ry = residue(g, y, &facts);
            if ry.m != 1 {
                facts.insert(x, ry);
            }
        }
    }
    // A residue and the interval the gate puts a node in can leave one
    // value: the node is that constant where the gate holds.
    let mut pins: FxHashMap<NodeId, i128> = FxHashMap::default();
    for (&a, &res) in &facts {
        if res.m == 0 {
            pins.insert(a, res.r);
            continue;
        }
        let own = rng(g, a, w);
        let (mut lo, mut hi) = (own.lo, own.hi);
        for &p in &parts {
            if let Some((l, h)) = interval_of(g, p, a) {
                (lo, hi) = (lo.max(l), hi.min(h));
            }
        }
        let v = lo + (res.r - lo).rem_euclid(res.m);
        if v <= hi && hi - v < res.m {
            pins.insert(a, v);
        }
    }
    let order = g.post_order_within(idx, MAX_GATED, |_| false)?;
    let mut new: FxHashMap<NodeId, NodeId> = FxHashMap::default();
    for id in order {
        let node = *g.node(id);
        let src: Vec<NodeId> = node.src().iter().map(|s| new[s]).collect();
        let rebuilt = g.with_src(id, &src);
        let pinned = match pins.get(&id) {
            Some(&v) if node.dtype == DType::Index => {
                Some(g.cnst(i64::try_from(v).ok()?, DType::Index))
            }
            _ => None,
        };
        let out = pinned
            .or_else(|| settle(g, id, &facts, &new))
            .unwrap_or(rebuilt);
        new.insert(id, out);
    }
    let new_idx = new[&idx];
    if new_idx == idx {
        return None;
    }
    let inv = g.invalid();
    let out = g.mk(Op::Where, &[c, new_idx, inv]);
    (out != n && fits_new(g, n, out, w)).then_some(out)
}

/// A remainder or floor quotient of the source node `id` that the facts
/// settle (its operands as in the source: the facts name source nodes).
fn settle(
    g: &mut Graph,
    id: NodeId,
    facts: &FxHashMap<NodeId, Res>,
    new: &FxHashMap<NodeId, NodeId>,
) -> Option<NodeId> {
    let node = *g.node(id);
    if node.dtype != DType::Index || node.src().len() != 2 {
        return None;
    }
    let [e, d] = [node.src()[0], node.src()[1]];
    let d = g.node(d).as_const().filter(|&d| d > 0)? as i128;
    match node.op {
        Op::Mod => {
            let v = mod_values(residue(g, e, facts), d)?;
            (v.lo == v.hi).then(|| g.cnst(v.lo as i64, DType::Index))
        }
        Op::FloorDiv => {
            let en = *g.node(e);
            let (b, k) = match en.op {
                Op::Add => match (
                    g.node(en.src()[0]).as_const(),
                    g.node(en.src()[1]).as_const(),
                ) {
                    (None, Some(k)) => (en.src()[0], k as i128),
                    (Some(k), None) => (en.src()[1], k as i128),
                    _ => return None,
                },
                Op::Sub => (en.src()[0], -(g.node(en.src()[1]).as_const()? as i128)),
                _ => return None,
            };
            let rb = residue(g, b, facts);
            if rb.m == 0 || rb.m % d != 0 {
                return None;
            }
            let kk = crate::ir::arith::div_floor(rb.r.rem_euclid(d) + k, d)?;
            let dn = g.cnst(i64::try_from(d).ok()?, DType::Index);
            let q = g.mk(Op::FloorDiv, &[new[&b], dn]);
            if kk == 0 {
                return Some(q);
            }
            let kn = g.cnst(i64::try_from(kk).ok()?, DType::Index);
            Some(g.mk(Op::Add, &[q, kn]))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::simp;

    #[test]
    fn a_remainder_by_a_divisor_of_the_modulus_is_a_constant() {
        let v = "var x in [-20, 20]\nvar y in [-20, 20]";
        assert_eq!(simp(v, "max(min(x * 8, 32), y * 16) mod 4 == 0"), "true");
        assert_eq!(
            simp(v, "where(4 < x, x * 9 + 1, y * 6 - 2) mod 3 == 1"),
            "true"
        );
        // The residues differ by 1: nothing is known mod 3.
        assert_eq!(
            simp(v, "where(4 < x, x * 9 + 1, y * 9) mod 3"),
            "where(4 < x, x * 9 + 1, y * 9) mod 3"
        );
    }

    #[test]
    fn a_comparison_of_a_remainder_is_decided_by_the_values_it_can_take() {
        let v = "var x in [-20, 20]";
        // Multiples of 4 mod 16 are at most 12.
        assert_eq!(simp(v, "max(x * 4, 32) mod 16 < 13"), "true");
        assert_eq!(
            simp(v, "max(x * 4, 32) mod 16 < 12"),
            "max(x * 4, 32) mod 16 < 12"
        );
        // A remainder by |x| is never negative where it is defined.
        assert_eq!(simp(v, "0 <= 5 mod max(x, -x)"), "true");
    }

    #[test]
    fn a_remainder_fact_of_the_gate_settles_the_index() {
        let v = "var x in [-30, 30]";
        assert_eq!(
            simp(v, "where(x mod 2 == 0, (x + 1) // 2, invalid)"),
            "where(x mod 2 == 0, x // 2, invalid)"
        );
        assert_eq!(
            simp(v, "where(x mod 3 == 1, (x + 2) // 3, invalid)"),
            "where(x mod 3 == 1, x // 3 + 1, invalid)"
        );
        assert_eq!(
            simp(v, "where(x mod 4 == 1, (x + 3) // 2, invalid)"),
            "where(x mod 4 == 1, x // 2 + 2, invalid)"
        );
        assert_eq!(
            simp(v, "where(x mod 4 == 3, x mod 2, invalid)"),
            "where(x mod 4 == 3, 1, invalid)"
        );
        // A remainder and an interval pin y (to 21: the gate says so too,
        // the interval ending where the remainder allows); x = y * 16 + 3
        // is odd.
        let v = "var x in [-600, 600]\nvar y in [-40, 40]";
        assert_eq!(
            simp(v, "where(y * 16 + 3 == x && y < 30 && y mod 17 == 4 && 10 < y, where(x mod 2 == 0, 1237, y), invalid)"),
            "where(x == 339 && y == 21, 21, invalid)"
        );
        // Several values of the residue in the interval (-13, 4, 21): y
        // stays, its interval cut to them.
        assert_eq!(
            simp(v, "where(y mod 17 == 4 && -20 < y && y < 30, y, invalid)"),
            "where(y < 22 && -14 < y && y mod 17 == 4, y, invalid)"
        );
        // Outside the gate the residue says nothing.
        assert_eq!(simp(v, "(x + 1) // 2"), "(x + 1) // 2");
    }
}
