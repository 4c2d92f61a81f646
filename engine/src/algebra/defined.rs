//! Whether a rewrite's result is defined wherever its source is: the one
//! check every algorithmic pass makes before it returns a result.
//!
//! A result reuses nodes of its source (defined wherever the source is) and
//! adds new ones. A new node must have an exact range (interval arithmetic
//! from the source's nodes) inside the width's `index` range, so it cannot
//! overflow where the source does not, and a new division must divide by a
//! divisor the source divides by (or one the caller has shown non-zero), so
//! it cannot divide by zero where the source does not.

use crate::ir::dtype::Width;
use crate::ir::ranges::{transfer, Range};
use crate::ir::{DType, Graph, NodeId, Op};
use crate::smallmap::{SmallMap, SmallSet};
use smallvec::{smallvec, SmallVec};

/// A node's range at width `w` (a defined `index` value fits W bits); the
/// empty range when it never has a value.
pub fn rng(g: &Graph, id: NodeId, w: Width) -> Range {
    let n = g.node(id);
    let (tlo, thi) = w.dtype_bounds(n.dtype);
    let (lo, hi) = ((n.vmin as i128).max(tlo), (n.vmax as i128).min(thi));
    if n.range_empty() || lo > hi {
        Range::empty()
    } else {
        Range::new(lo, hi)
    }
}

/// Every node of `result` that `source` does not contain has an exact range
/// (interval arithmetic from the source's nodes, whose values are defined
/// wherever the source is) inside W-bit `index`, no new leaf but
/// constants, and every new division divides by a node the source divides
/// by (so it is not zero wherever the source is defined). Then the result
/// is defined wherever the source is.
///
/// The walk starts at the result and stops at nodes of the source, so it
/// costs the size of the new part, plus (only when the new part reaches a
/// node it cannot place) the size of the source.
pub fn fits_new(g: &Graph, source: NodeId, result: NodeId, w: Width) -> bool {
    fits_new_dividing(g, source, result, w, &[])
}

/// [`fits_new`], where a new division may also divide by one of
/// `divisors`: nodes the caller has shown to be non-zero wherever the
/// source is defined (a factor `D` of a divisor `G * D` of the source).
pub fn fits_new_dividing(
    g: &Graph,
    source: NodeId,
    result: NodeId,
    w: Width,
    divisors: &[NodeId],
) -> bool {
    let mut old = SourceNodes {
        g,
        source,
        nodes: None,
    };
    let extra = divisors;
    let mut divisors: Option<SmallSet<NodeId, 8>> = None;
    // The nodes of the result above the source's: found top-down.
    let mut new_nodes: SmallVec<[NodeId; 16]> = SmallVec::new();
    let mut seen: SmallSet<NodeId, 16> = SmallSet::new();
    let mut stack: SmallVec<[NodeId; 16]> = smallvec![result];
    while let Some(id) = stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        let n = g.node(id);
        if matches!(n.op, Op::Const(_)) {
            new_nodes.push(id);
            continue;
        }
        if old.contains(id) {
            continue;
        }
        if matches!(n.op, Op::Var(_) | Op::Invalid) {
            return false;
        }
        new_nodes.push(id);
        stack.extend_from_slice(n.src());
    }
    new_nodes.sort_unstable();
    let mut exact: SmallMap<NodeId, Range, 16> = SmallMap::new();
    for id in new_nodes {
        let n = g.node(id);
        let r = match n.op {
            Op::Const(c) => Range::point(c as i128),
            op => {
                let mut args = [Range::point(0); 3];
                for (a, s) in args.iter_mut().zip(n.src()) {
                    *a = exact.get(s).copied().unwrap_or_else(|| rng(g, *s, w));
                }
                let args = &args[..n.src().len()];
                if op.is_divmod() && args[1].contains(0) {
                    let d = n.src()[1];
                    let divs = divisors.get_or_insert_with(|| {
                        let mut divs = SmallSet::new();
                        for &x in old.nodes() {
                            if g.node(x).op.is_divmod() {
                                divs.insert(g.node(x).src()[1]);
                            }
                        }
                        divs
                    });
                    if !divs.contains(&d) && !extra.contains(&d) {
                        return false;
                    }
                }
                if op.is_shift() {
                    return false;
                }
                transfer(op, args)
            }
        };
        let mut r = r;
        if !r.is_empty() && n.dtype != DType::Bool {
            let (lo, hi) = w.dtype_bounds(n.dtype);
            if r.lo < lo || r.hi > hi {
                // `index` must not overflow; `i32`/`i64` wrap, so past its
                // bounds a value may be any of the type's (a cast of
                // 2^32 to `i32` is 0: a divisor that may be zero).
                if n.dtype == DType::Index {
                    return false;
                }
                r = Range::new(lo, hi);
            }
        }
        exact.insert(id, r);
    }
    true
}

/// The nodes of a result's source, walked once when first asked: most
/// results reuse only the source itself or build from constants, and a
/// set of the source's nodes made per result was about 3% of simplifying
/// a typical expression.
struct SourceNodes<'g> {
    g: &'g Graph,
    source: NodeId,
    /// In decreasing id order, as the walk gives them.
    nodes: Option<SmallVec<[NodeId; 32]>>,
}

impl SourceNodes<'_> {
    fn nodes(&mut self) -> &[NodeId] {
        let (g, source) = (self.g, self.source);
        self.nodes.get_or_insert_with(|| {
            let mut out = SmallVec::new();
            g.walk_down(&[source], |id| out.push(id));
            out
        })
    }

    /// Whether `id` is a node of the source.
    fn contains(&mut self, id: NodeId) -> bool {
        if id == self.source {
            return true;
        }
        if id > self.source {
            // Built after the source: not a node of it.
            return false;
        }
        self.nodes().binary_search_by(|x| id.cmp(x)).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::parse::parse_program;

    #[test]
    fn a_new_node_past_the_width_is_rejected() {
        let mut p = parse_program("var a in [0, 4611686018427387903]\nexpr a\n").unwrap();
        let (g, a) = (&mut p.graph, p.outputs[0]);
        let two = g.cnst(2, DType::Index);
        let four = g.cnst(4, DType::Index);
        let a2 = g.mk(Op::Mul, &[a, two]);
        let a4 = g.mk(Op::Mul, &[a, four]);
        // a * 2 <= 2^63 - 2 fits 64 bits; a * 4 does not (though its
        // clamped node range looks as if it did).
        assert!(fits_new(g, a, a2, Width::W64));
        assert!(!fits_new(g, a, a4, Width::W64));
        // A node the source already computes is defined wherever the
        // source is: no check.
        assert!(fits_new(g, a4, a4, Width::W64));
        // At width 8 even a * 2 overflows.
        let mut p = parse_program("var a in [0, 100]\nexpr a\n").unwrap();
        let (g, a) = (&mut p.graph, p.outputs[0]);
        let two = g.cnst(2, DType::Index);
        let a2 = g.mk(Op::Mul, &[a, two]);
        assert!(fits_new(g, a, a2, Width::W64));
        assert!(!fits_new(g, a, a2, Width(8)));
        // A new division by a divisor that may be zero is rejected.
        let b = g.declare_var("b", DType::Index, -1, 1).unwrap();
        let b = g.var_node(b);
        let q = g.mk(Op::FloorDiv, &[a, b]);
        assert!(!fits_new(g, a, q, Width::W64));
    }

    #[test]
    fn a_result_may_reuse_the_sources_nodes_and_divide_by_its_divisors_only() {
        let mut p = parse_program(
            "var x in [0, 9]\nvar y in [-1, 1]\nvar z in [0, 9]\nexpr z\nexpr x // y + 1\n",
        )
        .unwrap();
        let (g, src) = (&mut p.graph, p.outputs[1]);
        let [x, y, z] = [0, 1, 2].map(|v| g.var_node(v));
        // `z` is older than the source, and not one of its nodes.
        assert!(z < src);
        // A node of the source, however deep, is defined where it is.
        assert!(fits_new(g, src, x, Width::W64));
        // A variable the source does not read is not.
        assert!(!fits_new(g, src, z, Width::W64));
        // A new division by the source's own divisor (non-zero wherever the
        // source is defined), but not by another that may be zero.
        let one = g.cnst(1, DType::Index);
        let x1 = g.mk(Op::Add, &[x, one]);
        let by_y = g.mk(Op::FloorDiv, &[x1, y]);
        assert!(fits_new(g, src, by_y, Width::W64));
        let ym = g.mk(Op::Sub, &[y, one]);
        let by_ym = g.mk(Op::FloorDiv, &[x1, ym]);
        assert!(!fits_new(g, src, by_ym, Width::W64));
    }

    #[test]
    fn a_new_cast_past_its_type_wraps_and_may_divide_by_zero() {
        // The context pass once turned `i32(r0) / i32(r0)` under `r0 ==
        // 2^32` into `i32(2^32) / i32(2^32)`, which is `0 / 0`: undefined
        // at every point, where the source was defined at r0 = 2^32 - 1.
        let mut p =
            parse_program("var r0 in [4294967295, 4294967296]\nexpr i32(r0) / i32(r0)\n").unwrap();
        let (g, src) = (&mut p.graph, p.outputs[0]);
        let c = g.cnst(4294967296, DType::Index);
        let cast = g.cast(DType::I32, c);
        assert_eq!(g.node(cast).dtype, DType::I32);
        let q = g.mk(Op::Div, &[cast, cast]);
        assert!(!fits_new(g, src, q, Width::W64));
        // A cast of a value that fits is that value.
        let one = g.cnst(7, DType::Index);
        let seven = g.cast(DType::I32, one);
        let q = g.mk(Op::Div, &[cast, seven]);
        assert!(fits_new(g, src, q, Width::W64));
    }
}
