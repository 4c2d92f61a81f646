//! `linear_minmax`: a `min`/`max` chain root in its simplest form
//! ([`crate::algebra::minmax`]: dominated arms dropped, common factors and
//! divisors taken out, nested chains flattened where that is smaller).
//! Algorithmic, validated per firing; only where no arm can be invalid
//! (arms are dropped and duplicated).

use crate::algebra::defined::fits_new;
use crate::algebra::linear::Poly;
use crate::algebra::minmax::{read_chain, simplest};
use crate::ir::dtype::Width;
use crate::ir::{Graph, NodeId};

/// The sub-rule names, in the order [`rewrite`] returns indices into.
pub const RULES: [&str; 1] = ["linear_minmax"];

/// Tries the rewrites at a `min`/`max` chain root `n`.
pub fn rewrite(g: &mut Graph, n: NodeId, w: Width) -> Option<(usize, NodeId)> {
    let chain = read_chain(g, n, false)?;
    // The chain with its nested chains flattened, when that is smaller
    // (`min(x, min(x, y) + 1)` is `min(x, y + 1)`). Without a nested
    // chain it is the same chain, whose simplest form is the same node:
    // not computed twice (it was a third of this pass's time).
    let flat = read_chain(g, n, true).filter(|c| c.op != chain.op || c.arms != chain.arms);
    let mut out = simplest(g, chain, &Poly::constant(0), 1, w)?;
    if let Some(flat) = flat.and_then(|c| simplest(g, c, &Poly::constant(0), 1, w)) {
        if g.size(flat) < g.size(out) {
            out = flat;
        }
    }
    // Never larger than the source: a rewrite that grows could be undone
    // by the linear form around it, and the two would loop.
    if out == n || g.size(out) > g.size(n) || !fits_new(g, n, out, w) {
        return None;
    }
    Some((0, out))
}

#[cfg(test)]
mod tests {
    use crate::testing::simp;

    const V: &str = "var x in [-12, 12]\nvar y in [-12, 12]\nvar z in [-12, 12]";

    #[test]
    fn a_simplified_chain_is_a_fixed_point_no_rule_fires_on() {
        // linear_minmax and linear_normalize took turns on this one.
        use crate::rewrite::Simplifier;
        let text = "var r0 in [-2, 9]\nvar r1 in [8, 14]\nexpr max((r0 * 2 + 3) // -15 * 45 + r1 - (r0 * 2 + -12) mod -15 * 3 + -5, 0)\n";
        let mut p = crate::parse::parse_program(text).unwrap();
        let simp = Simplifier::new(crate::rules::builtin());
        let once = simp.simplify(&mut p.graph, &p.outputs, false).unwrap();
        let again = simp.simplify(&mut p.graph, &once.roots, false).unwrap();
        assert_eq!(again.total_firings(), 0, "{:?}", again.fired(&simp));
    }

    #[test]
    fn dominated_and_repeated_arms_drop_out() {
        assert_eq!(simp(V, "min(x + 1, x + 10)"), "x + 1");
        assert_eq!(simp(V, "max(1 - x, 2 - x)"), "2 - x");
        assert_eq!(simp(V, "min(min(min(x, y), z), y)"), "min(min(x, y), z)");
        assert_eq!(simp(V, "min(x, (x + 3) // 4 * 4)"), "x");
        assert_eq!(simp(V, "min(x, max(x, y))"), "x");
    }

    #[test]
    fn a_bare_constant_arm_keeps_the_constant_outside() {
        assert_eq!(simp(V, "max(y, -1) + 4"), "max(y, -1) + 4");
        assert_eq!(simp(V, "min(x + 3, 2) - 3"), "min(x, -1)");
    }

    #[test]
    fn the_constant_goes_where_the_sum_builds_smallest() {
        // -max(x - 2, 0) and min(2 - x, 0) are a node larger.
        assert_eq!(simp(V, "min(x, 2) - x"), "2 - max(x, 2)");
        assert_eq!(simp(V, "max(x, 2) - x"), "2 - min(x, 2)");
    }

    #[test]
    fn common_terms_move_to_the_smaller_side() {
        assert_eq!(simp(V, "min(x, y - z) + z"), "min(x + z, y)");
        assert_eq!(simp(V, "min(x + 2, y + 3) - 2"), "min(x, y + 1)");
        assert_eq!(simp(V, "min(x + y, x + z)"), "x + min(y, z)");
        assert_eq!(simp(V, "x - max(x + y, 0)"), "min(x, -y)");
        assert_eq!(simp(V, "min(x, y) - min(x + 10, y + 10)"), "-10");
        assert_eq!(simp(V, "max(x, y * 2) + min(x, y * 2)"), "x + y * 2");
    }

    #[test]
    fn a_nested_chain_of_the_same_op_flattens_into_its_arms() {
        assert_eq!(simp(V, "min(x, min(x, y) + 1)"), "min(x, y + 1)");
        assert_eq!(simp(V, "max(max(y, x) - 1, x)"), "max(x, y + -1)");
        assert_eq!(
            simp(V, "min(y + 3, min((y + 5) // 2, x) * 2)"),
            "min(x * 2, y + 3)"
        );
        // -max(a, b) is min(-a, -b).
        assert_eq!(simp(V, "min(x, 3 - max(3 - x, y))"), "min(x, 3 - y)");
    }

    #[test]
    fn chains_compare_arm_by_arm() {
        // A bound of a minimum is a bound of each arm; of a maximum, of one.
        let v = "var x in [1, 16]";
        assert_eq!(simp(v, "min((x + 3) // 4 * 4, max(x, 4))"), "max(x, 4)");
        assert_eq!(
            simp(V, "max(min(x, y + 1), min(x, y + 3))"),
            "min(x, y + 3)"
        );
    }

    #[test]
    fn factors_and_divisors_come_out() {
        assert_eq!(simp(V, "min(x * 4 + 8, y * 4)"), "min(x + 2, y) * 4");
        assert_eq!(simp(V, "min(x * -2, 4)"), "max(x, -2) * -2");
        assert_eq!(simp(V, "min(x // 10, y // 10)"), "min(x, y) // 10");
        assert_eq!(simp(V, "min(x // 4 + 2, y // 4)"), "min(x + 8, y) // 4");
    }
}
