//! The index under its gate (tinygrad's valid-index simplification).
//!
//! In `where(c, idx, invalid)` the value of `idx` only matters where `c`
//! holds, so `idx` may be simplified with what `c` says: each comparison
//! conjunct of `c` bounds a linear key (`x < 4 && 0 <= x` puts `x` in
//! `[0, 3]`), the bounds are carried through `idx` by the range transfer
//! functions, and a subterm whose narrowed range settles it is rewritten:
//! a point becomes a constant, `a mod C` with `a` in one period
//! `[m*C, m*C + C)` becomes `a - m*C` (`a` for `m = 0`), `a % C` with
//! `|a| < C` becomes `a`, a `min`/`max` whose arms do not overlap becomes
//! the smaller/larger arm; and `(a // C) * (C*m)` where the gate pins `a
//! mod C` to `k` becomes `(a - k) * m` (an XLA map's constraint `(d1 - 3)
//! mod 7 in [0, 0]` makes `((d1 - 3) // 7) * 7 + 3` be `d1`). Each conjunct
//! of `c` is narrowed the same way
//! under the other conjuncts (tinygrad's `simplify_valid`); one that
//! becomes `true` is dropped. A conjunct is never dropped for what `idx`
//! implies: that would change which lanes are invalid.
//!
//! **Lemma** (why this refines, docs/semantics.md). Let `s = where(c, i,
//! invalid)` and `t = where(c', i', invalid)`, where `c` and `i` are never
//! invalid nor unconstrained, `c'` equals `c` at every point, and `i'`
//! equals `i` at every point where `c` holds. Where `c` is
//! false both are invalid; where it is true both are `i`'s value. Neither
//! is ever unconstrained. What is left is definedness: the hardware
//! evaluates `i'` at every point, also where `c` is false and the narrowed
//! bounds do not hold, so every node `t` adds must be defined wherever `s`
//! is: [`fits_new`] checks it against the *global* ranges (a rewritten
//! subterm is a subterm of `i` or a constant, so only rebuilt parents and
//! `a - m*C` are new). The conjuncts are narrowed one at a time, each
//! under the others as they are by then: `p'` equals `p` wherever the
//! others hold, and where one of them fails both chains are false, so the
//! chain keeps its value at every point after every step.
//!
//! Algorithmic: every firing is recorded under [`RULES`] and validated by
//! the gate like the linear form's.

use crate::algebra::defined::{fits_new, rng};
use crate::algebra::linear;
use crate::algebra::relation::{read_rel, relation, Read};
use crate::ir::dtype::Width;
use crate::ir::ranges::{clamp, transfer, Range};
use crate::ir::{DType, Graph, NodeId, Op};
use rustc_hash::FxHashMap;

/// The sub-rule names, in the order [`rewrite`] returns indices into.
pub const RULES: [&str; 3] = [
    "gate_narrow_index",
    "gate_narrow_condition",
    "gate_narrow_arms",
];

const NARROW: usize = 0;
const CONDITION: usize = 1;
const ARMS: usize = 2;

/// Bounds on nodes that hold wherever the gate holds.
type Bounds = FxHashMap<NodeId, Range>;

/// Conjunct chains longer than this are left to [`crate::passes::facts`]: each
/// conjunct is narrowed by all the others, which is quadratic.
const MAX_CONJUNCTS: usize = 16;

/// Arms of a select larger than this are not narrowed ([`arms`]).
const MAX_ARM: usize = 256;

/// Tries the gate rewrites at `n`, a `where(c, idx, invalid)`.
pub fn rewrite(g: &mut Graph, n: NodeId, w: Width) -> Option<(usize, NodeId)> {
    let node = *g.node(n);
    if node.op != Op::Where || node.dtype != DType::Index {
        return None;
    }
    let (c, idx, f) = (node.src()[0], node.src()[1], node.src()[2]);
    if g.node(f).op != Op::Invalid {
        return arms(g, n, w);
    }
    let (cn, ix) = (*g.node(c), *g.node(idx));
    // Facts from a comparison of an invalid value are no facts, and an
    // unconstrained gate makes the source unconstrained: leave both alone.
    if cn.maybe_invalid || cn.maybe_unconstrained || ix.maybe_invalid || ix.maybe_unconstrained {
        return None;
    }
    let (mut parts, whole) = g.chain_operands(c, Op::And, MAX_CONJUNCTS);
    if !whole {
        return None;
    }
    // Each conjunct under the others (as they are by then): the chain
    // keeps its value at every point (the lemma above).
    let mut c_changed = false;
    let mut i = 0;
    while parts.len() > 1 && i < parts.len() {
        let others: Vec<NodeId> = parts
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != i)
            .map(|(_, &p)| p)
            .collect();
        let b = bounds(g, &others, w);
        if let Some(np) = narrow(g, parts[i], &b, w).filter(|&np| np != parts[i]) {
            c_changed = true;
            if g.node(np).op == Op::Const(1) {
                parts.remove(i);
                continue;
            }
            parts[i] = np;
        }
        i += 1;
    }
    let b = bounds(g, &parts, w);
    let new_idx = narrow(g, idx, &b, w).unwrap_or(idx);
    if !c_changed && new_idx == idx {
        return None;
    }
    let new_c = if c_changed {
        let first = parts[0];
        parts[1..]
            .iter()
            .fold(first, |acc, &p| g.mk(Op::And, &[acc, p]))
    } else {
        c
    };
    let inv = g.invalid();
    let out = g.mk(Op::Where, &[new_c, new_idx, inv]);
    if out == n || !fits_new(g, n, out, w) {
        return None;
    }
    Some((if new_idx != idx { NARROW } else { CONDITION }, out))
}

/// `where(c, t, f)` with both arms values: `t` narrowed by the conjuncts
/// of `c`, `f` by the negation of `c` when `c` is one `<` or `<=`.
///
/// **Lemma.** With `c` never invalid nor unconstrained, `t'` equal to `t`
/// wherever `c` holds and `f'` equal to `f` wherever it fails, the `where`
/// selects the same value at every point; `t` and `f` are never invalid
/// nor unconstrained (the narrowing's own premise), and every node the
/// rewrite adds is checked defined everywhere ([`fits_new`]), since both
/// arms are evaluated at every point.
fn arms(g: &mut Graph, n: NodeId, w: Width) -> Option<(usize, NodeId)> {
    let node = *g.node(n);
    let (c, t, f) = (node.src()[0], node.src()[1], node.src()[2]);
    let clean = |g: &Graph, x: NodeId| {
        let xn = g.node(x);
        !xn.maybe_invalid && !xn.maybe_unconstrained
    };
    if !clean(g, c) || !clean(g, t) || !clean(g, f) {
        return None;
    }
    // Each arm is walked: a large one is left alone, so that a deep chain
    // of selects costs linear time.
    if g.post_order_within(t, MAX_ARM, |_| false).is_none()
        || g.post_order_within(f, MAX_ARM, |_| false).is_none()
    {
        return None;
    }
    let (parts, whole) = g.chain_operands(c, Op::And, MAX_CONJUNCTS);
    if !whole {
        return None;
    }
    let bt = bounds(g, &parts, w);
    let nt = narrow(g, t, &bt, w).unwrap_or(t);
    // !(a < b) is b <= a, !(a <= b) is b < a.
    let cn = *g.node(c);
    let negated = match cn.op {
        Op::Lt => Some(g.mk(Op::Le, &[cn.src()[1], cn.src()[0]])),
        Op::Le => Some(g.mk(Op::Lt, &[cn.src()[1], cn.src()[0]])),
        _ => None,
    };
    let nf = match negated {
        Some(nc) => {
            let bf = bounds(g, &[nc], w);
            narrow(g, f, &bf, w).unwrap_or(f)
        }
        None => f,
    };
    if nt == t && nf == f {
        return None;
    }
    let out = g.mk(Op::Where, &[c, nt, nf]);
    if out == n || !fits_new(g, n, out, w) {
        return None;
    }
    Some((ARMS, out))
}

/// The bounds the comparisons `parts` put on atoms where all hold,
/// intersected per atom and with the atom's own range.
fn bounds(g: &mut Graph, parts: &[NodeId], w: Width) -> Bounds {
    let mut b = Bounds::default();
    for &p in parts {
        for (a, r) in bounds_of(g, p, w) {
            let own = rng(g, a, w);
            let cur = b.entry(a).or_insert(own);
            *cur = Range::new(cur.lo.max(r.lo), cur.hi.min(r.hi));
        }
    }
    b
}

/// The bounds a comparison `p` puts on atoms where it holds: `lo <= sum
/// c_i a_i <= hi` bounds each atom `a_j` by the interval of the rest.
fn bounds_of(g: &mut Graph, p: NodeId, w: Width) -> Vec<(NodeId, Range)> {
    let Some((rel, poly)) = relation(g, p) else {
        return Vec::new();
    };
    let Some(Read::In(key, lo, hi)) = read_rel(rel, &poly) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if key.len() > 1 {
        // The key itself, as the linear form builds it: the node a
        // normalized sum in `idx` is.
        let poly = linear::Poly {
            terms: key.iter().cloned().collect(),
            k: 0,
        };
        if let Some(kn) = linear::build(g, &poly) {
            out.push((kn, Range::new(lo, hi)));
        }
    }
    let ranges: Vec<Option<Range>> = key
        .iter()
        .map(|(m, c)| {
            let r = linear::mono_range(g, m, w)?;
            let (a, b) = (r.lo.checked_mul(*c)?, r.hi.checked_mul(*c)?);
            Some(Range::new(a.min(b), a.max(b)))
        })
        .collect();
    for (j, (m, c)) in key.iter().enumerate() {
        if m.len() != 1 {
            continue;
        }
        // The rest of the key, by interval arithmetic.
        let mut rest = Some(Range::point(0));
        for (i, r) in ranges.iter().enumerate() {
            if i != j {
                rest = match (rest, r) {
                    (Some(a), Some(r)) => Some(Range::new(
                        a.lo.checked_add(r.lo).unwrap_or(i128::MIN / 4),
                        a.hi.checked_add(r.hi).unwrap_or(i128::MAX / 4),
                    )),
                    _ => None,
                };
            }
        }
        let Some(rest) = rest else { continue };
        // lo - rest.hi <= c * a <= hi - rest.lo.
        let (tlo, thi) = (lo.saturating_sub(rest.hi), hi.saturating_sub(rest.lo));
        let (alo, ahi) = if *c > 0 {
            (ceil_div(tlo, *c), floor_div(thi, *c))
        } else {
            (ceil_div(thi, *c), floor_div(tlo, *c))
        };
        out.push((m[0], Range::new(alo, ahi)));
    }
    out
}

fn floor_div(a: i128, b: i128) -> i128 {
    crate::ir::arith::div_floor(a, b).unwrap_or(if (a < 0) != (b < 0) {
        i128::MIN / 4
    } else {
        i128::MAX / 4
    })
}

fn ceil_div(a: i128, b: i128) -> i128 {
    -floor_div(-a, b)
}

/// The ranges of the nodes of `root` where the bounds hold: the transfer
/// functions over the narrowed operands, intersected with each node's own
/// range (both hold there). Post-order, so no recursion on depth.
fn ranges_under(g: &Graph, root: NodeId, b: &Bounds, w: Width) -> FxHashMap<NodeId, Range> {
    let mut out: FxHashMap<NodeId, Range> = FxHashMap::default();
    for id in g.post_order(root, |_| false) {
        let node = g.node(id);
        let own = rng(g, id, w);
        let mut r = match node.op {
            Op::Const(_) | Op::Var(_) | Op::Invalid => own,
            op => {
                let args: Vec<Range> = node.src().iter().map(|s| out[s]).collect();
                let t = clamp(&transfer(op, &args), node.dtype);
                if t.lo > t.hi {
                    own
                } else {
                    Range::new(own.lo.max(t.lo), own.hi.min(t.hi))
                }
            }
        };
        if let Some(br) = b.get(&id) {
            r = Range::new(r.lo.max(br.lo), r.hi.min(br.hi));
        }
        out.insert(id, r);
    }
    out
}

/// `idx` rewritten where its narrowed ranges settle a subterm; `None` when
/// there are no bounds, or they are contradictory (the gate never holds:
/// other rules decide it).
fn narrow(g: &mut Graph, idx: NodeId, b: &Bounds, w: Width) -> Option<NodeId> {
    if b.is_empty() {
        return None;
    }
    let r = ranges_under(g, idx, b, w);
    if r.values().any(|x| x.lo > x.hi) {
        return None;
    }
    let mut new: FxHashMap<NodeId, NodeId> = FxHashMap::default();
    for id in g.post_order(idx, |_| false) {
        let node = *g.node(id);
        let nr = r[&id];
        let src: Vec<NodeId> = node.src().iter().map(|s| new[s]).collect();
        let rebuilt = g.with_src(id, &src);
        let out = if matches!(node.op, Op::Const(_)) {
            rebuilt
        } else if nr.lo == nr.hi && node.dtype == DType::Index {
            g.cnst(i64::try_from(nr.lo).ok()?, DType::Index)
        } else if nr.lo == nr.hi && node.dtype == DType::Bool {
            g.bool_const(nr.lo == 1)
        } else {
            settle(g, &node, &src, &r)
                .or_else(|| divisible(g, &node, &src, b))
                .unwrap_or(rebuilt)
        };
        new.insert(id, out);
    }
    Some(new[&idx])
}

/// A division or `min`/`max` the narrowed ranges of its operands settle.
fn settle(
    g: &mut Graph,
    node: &crate::ir::Node,
    src: &[NodeId],
    r: &FxHashMap<NodeId, Range>,
) -> Option<NodeId> {
    if node.dtype != DType::Index || node.src().len() != 2 {
        return None;
    }
    let old = node.src();
    let a = r[&old[0]];
    match node.op {
        Op::Mod => {
            let c = g.node(old[1]).as_const().filter(|&c| c > 0)? as i128;
            let m = crate::ir::arith::div_floor(a.lo, c)?;
            if crate::ir::arith::div_floor(a.hi, c)? != m {
                return None;
            }
            if m == 0 {
                return Some(src[0]);
            }
            let k = g.cnst(i64::try_from(-m * c).ok()?, DType::Index);
            Some(g.mk(Op::Add, &[src[0], k]))
        }
        Op::Rem => {
            let c = g.node(old[1]).as_const().filter(|&c| c > 0)? as i128;
            (-c < a.lo && a.hi < c).then_some(src[0])
        }
        Op::Min | Op::Max => {
            let b = r[&old[1]];
            let first_smaller = if a.hi <= b.lo {
                true
            } else if b.hi <= a.lo {
                false
            } else {
                return None;
            };
            Some(if first_smaller == (node.op == Op::Min) {
                src[0]
            } else {
                src[1]
            })
        }
        _ => None,
    }
}

/// `(a // C) * (C*m)` where the bounds pin `a mod C` to `k`: `(a - k) *
/// m` (`a - k` for `m = 1`), since `a = C*(a // C) + a mod C`. The pinned
/// remainder is the node the gate compares (`(d1 - 3) mod 7 == 0`, an XLA
/// map's constraint): it is looked up among the bounds, not built.
fn divisible(g: &mut Graph, node: &crate::ir::Node, src: &[NodeId], b: &Bounds) -> Option<NodeId> {
    if node.op != Op::Mul || node.dtype != DType::Index {
        return None;
    }
    let old = node.src();
    let (q, cm) = (*g.node(old[0]), g.node(old[1]).as_const()? as i128);
    if q.op != Op::FloorDiv {
        return None;
    }
    let (a, c) = (
        q.src()[0],
        g.node(q.src()[1]).as_const().filter(|&c| c > 0)? as i128,
    );
    if cm % c != 0 {
        return None;
    }
    let k = b.iter().find_map(|(&n, r)| {
        let nn = g.node(n);
        (nn.op == Op::Mod
            && nn.src()[0] == a
            && g.node(nn.src()[1]).as_const() == Some(c as i64)
            && r.lo == r.hi)
            .then_some(r.lo)
    })?;
    // The rebuilt dividend: `src[0]` is the rebuilt quotient.
    let a_new = g
        .node(src[0])
        .src()
        .first()
        .copied()
        .filter(|_| g.node(src[0]).op == Op::FloorDiv)?;
    let base = if k == 0 {
        a_new
    } else {
        let nk = g.cnst(i64::try_from(-k).ok()?, DType::Index);
        g.mk(Op::Add, &[a_new, nk])
    };
    let m = cm / c;
    if m == 1 {
        return Some(base);
    }
    let mc = g.cnst(i64::try_from(m).ok()?, DType::Index);
    Some(g.mk(Op::Mul, &[base, mc]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::simp;

    #[test]
    fn a_remainder_under_a_gate_that_bounds_its_dividend_is_the_dividend() {
        let v = "var x in [-10, 10]";
        assert_eq!(
            simp(v, "where(x < 4 && 0 <= x, x mod 8, invalid)"),
            "where(x < 4 && -1 < x, x, invalid)"
        );
        // Without the lower bound, x mod 8 is not x.
        assert_eq!(
            simp(v, "where(x < 4, x mod 8, invalid)"),
            "where(x < 4, x mod 8, invalid)"
        );
    }

    #[test]
    fn a_quotient_times_its_divisor_under_a_pinned_remainder_is_the_dividend_less_it() {
        // An XLA map's constraint `(d1 - 3) mod 7 in [0, 0]` as a gate.
        let v = "var d1 in [3, 17]";
        assert_eq!(
            simp(
                v,
                "where((d1 - 3) mod 7 == 0, ((d1 - 3) // 7) * 7 + 3, invalid)"
            ),
            "where(d1 mod 7 == 3, d1, invalid)"
        );
        // A multiple of the divisor: (x // 4) * 8 is (x - 2) * 2.
        let v = "var x in [0, 63]";
        assert_eq!(
            simp(v, "where(x mod 4 == 2, (x // 4) * 8 + 1, invalid)"),
            "where(x mod 4 == 2, x * 2 + -3, invalid)"
        );
        // Not a multiple of the divisor, or the remainder not pinned: as is.
        assert_eq!(
            simp(v, "where(x mod 4 == 2, (x // 4) * 6, invalid)"),
            "where(x mod 4 == 2, x // 4 * 6, invalid)"
        );
        assert_eq!(
            simp(v, "where(x mod 4 < 2, (x // 4) * 4, invalid)"),
            "where(x mod 4 < 2, x // 4 * 4, invalid)"
        );
    }

    // The cases below are tinygrad's (test/unit/test_simplify_valid_idx.py),
    // with `Special(n)`/`Range(n)` as variables in [0, n-1].

    #[test]
    fn an_index_pinned_by_its_gate_is_a_constant() {
        // test_cumsum: under the gate 4*g + l is 19, its largest value.
        let v = "var g in [0, 4]\nvar l in [0, 3]";
        assert_eq!(
            simp(v, "where(!(g*4 + l < 19), g*4 + l - 19, invalid)"),
            "where(18 < g * 4 + l, 0, invalid)"
        );
    }

    #[test]
    fn a_remainder_within_one_period_under_the_gate_is_a_difference() {
        // test_simplify1: gidx in [480, 487] under the gate.
        let v = "var gidx in [0, 511]";
        let gate = "gidx < 488 && !(gidx < 480)";
        assert_eq!(
            simp(v, &format!("where({gate}, (gidx*3 + 18) mod 26, invalid)")),
            "where(gidx < 488 && 479 < gidx, gidx * 3 + -1438, invalid)"
        );
        assert_eq!(
            simp(
                v,
                &format!("where({gate}, (gidx*3 + 18) // 26 - 56, invalid)")
            ),
            "where(gidx < 488 && 479 < gidx, 0, invalid)"
        );
        // test_simplify2 and test_simplify3.
        let v = "var lidx in [0, 3]";
        assert_eq!(
            simp(
                v,
                "where(lidx < 3 && !(lidx < 1), (lidx + 1) mod 2, invalid)"
            ),
            "where(lidx < 3 && 0 < lidx, lidx + -1, invalid)"
        );
        assert_eq!(
            simp(
                v,
                "where(lidx < 3 && !(lidx < 1), (lidx + 1) // 2 - 1, invalid)"
            ),
            "where(lidx < 3 && 0 < lidx, 0, invalid)"
        );
        let v = "var idx0 in [0, 264]";
        assert_eq!(
            simp(v, "where(!(idx0 < 201), (idx0 + 55) mod 64, invalid)"),
            "where(200 < idx0, idx0 + -201, invalid)"
        );
        assert_eq!(
            simp(v, "where(!(idx0 < 201), (idx0 + 55) // 64 - 4, invalid)"),
            "where(200 < idx0, 0, invalid)"
        );
    }

    #[test]
    fn a_conjunct_is_narrowed_under_the_others() {
        // test_simplify_within_valid1: (r0*3 + r1) // 8 is 0 under the first.
        let v = "var r0 in [0, 3]\nvar r1 in [0, 3]\nvar r2 in [0, 3]\nvar r3 in [0, 3]";
        assert_eq!(
            simp(v, "where(r0*3 + r1 < 8 && ((r0*3 + r1) // 8 + r2*3 + r3) mod 4 < 2, r0 + r1 + r2 + r3, invalid)"),
            "where(r0 * 3 + r1 < 8 && (r2 * 3 + r3) mod 4 < 2, r0 + r1 + r2 + r3, invalid)"
        );
        // test_valid_order_matters1, in both orders: the second is implied.
        let v = "var r0 in [0, 1]";
        assert_eq!(
            simp(v, "where(r0 < 1 && (r0*5 + 1) mod 6 < 5, r0 + 7, invalid)"),
            "where(r0 < 1, 7, invalid)"
        );
        assert_eq!(
            simp(v, "where((r0*5 + 1) mod 6 < 5 && r0 < 1, r0 + 7, invalid)"),
            "where(r0 < 1, 7, invalid)"
        );
        // test_valid_order_matters2: the gate never holds.
        let v = "var g0 in [0, 12]\nvar g1 in [0, 12]\nvar r0 in [0, 3]";
        assert_eq!(
            simp(v, "where((g0 + 11) mod 14 < 11 && (g1 + r0*13 + (g0 + 39) // 42) mod 14 < 11 && g0 < 3 && g1 + r0*13 < 42, g0 + g1, invalid)"),
            "invalid"
        );
        // test_simplify_within_valid2: nothing to narrow.
        let v = "var g in [0, 55]\nvar r in [0, 2]";
        assert_eq!(
            simp(v, "where(g + r < 57 && g + r >= 1, g * 3 + r, invalid)"),
            "where(g + r < 57 && 0 < g + r, g * 3 + r, invalid)"
        );
    }

    #[test]
    fn each_arm_of_a_select_is_narrowed_by_its_side_of_the_condition() {
        // Halide's check_algebra: -1 // (x*2 + 1) is -1 for x >= 0, and
        // the then-arm's divisor is at least 1 for x < 0.
        let v = "var x in [-16, 16]";
        assert_eq!(
            simp(
                v,
                "where(x * 2 + 1 < 0, -(-1 // -(x * 2 + 1)), -1 // (x * 2 + 1))"
            ),
            "where(x < 0, 1, -1)"
        );
        // An equality says nothing about the else arm's bounds.
        let out = simp(v, "where(x == 0, 5, -1 // (x * 2 + 1))");
        assert!(out.contains("//"), "{out}");
    }

    #[test]
    fn a_new_node_must_be_defined_where_the_gate_fails() {
        use crate::ir::dtype::Width;
        use crate::text::parse::parse_program;
        // Under the gate x mod 8 is x - 8; but x - 8 at x = MIN (a lane the
        // gate masks, still evaluated) would overflow: left alone.
        let src = "var x in [-9223372036854775808, 15]\nexpr where(8 <= x, x mod 8, invalid)\n";
        let mut p = parse_program(src).unwrap();
        assert_eq!(rewrite(&mut p.graph, p.outputs[0], Width::W64), None);
        let src = "var x in [-100, 15]\nexpr where(8 <= x, x mod 8, invalid)\n";
        let mut p = parse_program(src).unwrap();
        let (rule, out) = rewrite(&mut p.graph, p.outputs[0], Width::W64).unwrap();
        assert_eq!(super::RULES[rule], "gate_narrow_index");
        assert_eq!(
            crate::text::print::expr(&p.graph, out),
            "where(8 <= x, x + -8, invalid)"
        );
    }
}
