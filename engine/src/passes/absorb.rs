//! `quotient_absorb_chain`: terms of a sum that cancel inside a `min`/`max`
//! under a quotient move into it (Halide's `min(x*12 + y, z) // 4 - x*3`
//! is `min(y, z - x*12) // 4`).
//!
//! For an integer `T` and `d > 0`, `T + n // d == (n + T*d) // d` (floor
//! division), and `min(a_i) + S == min(a_i + S)` (likewise `max`). So in a
//! sum `T + (m + r) // d` with `m` a chain, the terms of `T` whose multiple
//! by `d` cancels a term of some arm of `m` go into every arm. Taken only
//! when the result has fewer nodes (so it terminates, and the linear form
//! around it, which never grows a sum, does not undo it), only where no
//! operand can be invalid (terms move), and with every new node checked
//! defined wherever the sum is ([`fits_new`]).

use crate::algebra::defined::fits_new;
use crate::algebra::linear::{self, is_linear_op, Acc, Mono, Poly};
use crate::algebra::minmax::{build_chain, read_chain, shift};
use crate::ir::dtype::Width;
use crate::ir::{Graph, NodeId, Op};

/// The sub-rule names, in the order [`rewrite`] returns indices into.
pub const RULES: [&str; 1] = ["quotient_absorb_chain"];

/// Tries the rewrite at a sum `n` read whole.
pub fn rewrite(g: &mut Graph, n: NodeId, w: Width) -> Option<(usize, NodeId)> {
    let node = *g.node(n);
    if !is_linear_op(node.op, node.dtype) || node.maybe_invalid || !has_chain_quotient(g, n) {
        return None;
    }
    let p = linear::read(g, n)?;
    let quotients: Vec<NodeId> = p
        .terms
        .iter()
        .filter(|(m, c)| *c == 1 && m.len() == 1 && g.node(m[0]).op == Op::FloorDiv)
        .map(|(m, _)| m[0])
        .collect();
    let mut best: Option<(usize, NodeId)> = None;
    for q in quotients {
        if let Some(out) = absorbed(g, &p, q) {
            let cost = g.size(out);
            if best.is_none_or(|b| cost < b.0) {
                best = Some((cost, out));
            }
        }
    }
    let (_, best) = best?;
    if g.size(best) >= g.size(n) || !fits_new(g, n, best, w) {
        return None;
    }
    Some((0, best))
}

/// Whether the sum at `n` may have a term `(m + r) // d` with `m` a `min`
/// or `max`: a look at the sum's and its quotients' first `+ - *` nodes,
/// far cheaper than reading the linear form (no allocation), so that a sum
/// without one (nearly every sum) costs the pass little. Past [`SCAN`]
/// nodes it answers yes, and the linear form decides.
fn has_chain_quotient(g: &Graph, n: NodeId) -> bool {
    let mut budget = SCAN;
    scan(g, n, false, &mut budget)
}

/// Nodes [`has_chain_quotient`] looks at before it gives up and says yes.
/// A sum is a DAG: a walk of its paths is bounded by this, not by its size.
const SCAN: u32 = 64;

fn scan(g: &Graph, x: NodeId, in_quotient: bool, budget: &mut u32) -> bool {
    if *budget == 0 {
        return true;
    }
    *budget -= 1;
    let xn = g.node(x);
    if in_quotient && matches!(xn.op, Op::Min | Op::Max) {
        return true;
    }
    if !in_quotient && xn.op == Op::FloorDiv {
        return scan(g, xn.src()[0], true, budget);
    }
    is_linear_op(xn.op, xn.dtype) && xn.src().iter().any(|&c| scan(g, c, in_quotient, budget))
}

/// The sum `p` with the terms that cancel in a chain of quotient `q`'s
/// numerator moved into it, or `None` when none does.
fn absorbed(g: &mut Graph, p: &Poly, q: NodeId) -> Option<NodeId> {
    let [num, den] = [g.node(q).src()[0], g.node(q).src()[1]];
    let d = g.node(den).as_const().filter(|&d| d > 1)? as i128;
    let np = linear::read(g, num)?;
    let chain = np.terms.iter().find_map(|(m, c)| {
        (*c == 1 && m.len() == 1)
            .then(|| read_chain(g, m[0], false).map(|ch| (m[0], ch)))
            .flatten()
    })?;
    let (atom, ch) = chain;
    // The terms of the sum (other than the quotient) whose multiple by `d`
    // cancels a term of some arm.
    let cancels = |mono: &Mono, t: i128| -> bool {
        t.checked_mul(d).is_some_and(|td| {
            ch.arms
                .iter()
                .any(|a| a.terms.iter().any(|(am, ac)| am == mono && *ac == -td))
        })
    };
    let moved: Vec<(Mono, i128)> = p
        .terms
        .iter()
        .filter(|(m, _)| m.as_slice() != [q])
        .filter(|(m, t)| cancels(m, *t))
        .cloned()
        .collect();
    if moved.is_empty() {
        return None;
    }
    // Every arm gains `moved * d`: `shift` subtracts, so shift by the
    // negation.
    let mut by = Acc::default();
    for (m, t) in &moved {
        by.add(m.clone(), t.checked_mul(d)?.checked_neg()?)?;
    }
    let new_chain = build_chain(g, &shift(g, &ch, &by.finish(g)?)?)?;
    let mut new_num = np.acc();
    new_num.add_atom(atom, -1)?;
    new_num.add_atom(new_chain, 1)?;
    let new_num = linear::build(g, &new_num.finish(g)?)?;
    let new_q = g.mk(Op::FloorDiv, &[new_num, den]);
    let mut out = p.acc();
    for (m, t) in &moved {
        out.add(m.clone(), -t)?;
    }
    out.add_atom(q, -1)?;
    out.add_atom(new_q, 1)?;
    linear::build(g, &out.finish(g)?)
}

#[cfg(test)]
mod tests {
    use crate::testing::simp;

    #[test]
    fn terms_that_cancel_in_a_chain_under_a_quotient_move_into_it() {
        let v = "var x in [-9, 9]\nvar y in [-9, 9]\nvar z in [-9, 9]\nvar w in [-9, 9]";
        assert_eq!(
            simp(v, "min(x * 12 + y, z) // 4 - x * 3"),
            "min(y, z - x * 12) // 4"
        );
        assert_eq!(
            simp(v, "(max(x * 12 + y, z) + w) // 4 - x * 3"),
            "(max(y, z - x * 12) + w) // 4"
        );
    }

    #[test]
    fn terms_that_cancel_nowhere_stay_out_of_the_quotient() {
        let v = "var x in [-9, 9]\nvar y in [-9, 9]\nvar z in [-9, 9]";
        assert_eq!(
            simp(v, "min(x * 12 + y, z) // 4 - x * 2"),
            "min(x * 12 + y, z) // 4 - x * 2"
        );
    }
}
