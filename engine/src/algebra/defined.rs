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
use rustc_hash::{FxHashMap, FxHashSet};

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
    let mut old: Option<FxHashSet<NodeId>> = None;
    let extra = divisors;
    let mut divisors: Option<FxHashSet<NodeId>> = None;
    // The nodes of the result above the source's: found top-down.
    let mut new_nodes: Vec<NodeId> = Vec::new();
    let mut seen: FxHashSet<NodeId> = FxHashSet::default();
    let mut stack = vec![result];
    let is_old = |id: NodeId, old: &mut Option<FxHashSet<NodeId>>| -> bool {
        if id == source {
            return true;
        }
        if id > source {
            // Built after the source: not a node of it.
            return false;
        }
        old.get_or_insert_with(|| g.reachable(&[source]).into_iter().collect())
            .contains(&id)
    };
    while let Some(id) = stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        let n = g.node(id);
        if matches!(n.op, Op::Const(_)) {
            new_nodes.push(id);
            continue;
        }
        if is_old(id, &mut old) {
            continue;
        }
        if matches!(n.op, Op::Var(_) | Op::Invalid) {
            return false;
        }
        new_nodes.push(id);
        stack.extend_from_slice(n.src());
    }
    new_nodes.sort_unstable();
    let mut exact: FxHashMap<NodeId, Range> = FxHashMap::default();
    for id in new_nodes {
        let n = g.node(id);
        let r = match n.op {
            Op::Const(c) => Range::point(c as i128),
            op => {
                let args: Vec<Range> = n
                    .src()
                    .iter()
                    .map(|s| exact.get(s).copied().unwrap_or_else(|| rng(g, *s, w)))
                    .collect();
                if op.is_divmod() && args[1].contains(0) {
                    let d = n.src()[1];
                    let divs = divisors.get_or_insert_with(|| {
                        g.reachable(&[source])
                            .into_iter()
                            .filter(|&x| g.node(x).op.is_divmod())
                            .map(|x| g.node(x).src()[1])
                            .collect()
                    });
                    if !divs.contains(&d) && !extra.contains(&d) {
                        return false;
                    }
                }
                if op.is_shift() {
                    return false;
                }
                transfer(op, &args)
            }
        };
        if n.dtype == DType::Index && !r.is_empty() {
            let (lo, hi) = w.dtype_bounds(DType::Index);
            if r.lo < lo || r.hi > hi {
                return false;
            }
        }
        exact.insert(id, r);
    }
    true
}
