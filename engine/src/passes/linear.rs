//! The linear form's rewrites: a sum normalized at its root
//! (`linear_normalize`: like terms merged, products expanded and factored,
//! digit splits fused, quotients read in their residue form, terms moved
//! between a `min`/`max` and the sum around it, the result built in its
//! cheapest shape) and a quotient of a sum with a quotient term as one
//! quotient (`linear_nested_quotient`).
//!
//! Every rewrite here is algorithmic: the rewriter records each firing
//! under the sub-rule's name ([`RULES`]) and the gate validates every one
//! (SMT over the bounds, the JIT over the domain).
//!
//! Soundness beyond the identities:
//! - a rewrite drops, duplicates and moves terms, so it applies only where
//!   no term can be invalid (nor, therefore, unconstrained);
//! - every node the result adds must have an exact range inside the
//!   width's `index` range, and a new division must divide by a divisor the
//!   source divides by ([`fits_new`]), so that the result is defined
//!   wherever the source is.

use crate::algebra::defined::fits_new;
use crate::algebra::digits::{fuse, split_of};
use crate::algebra::linear::{
    build, cnst, is_built_factored, is_built_plain, is_linear_op, read, read_acc, Acc,
};
use crate::algebra::{minmax, quotient};
use crate::ir::dtype::Width;
use crate::ir::{DType, Graph, NodeId, Op};

/// The sub-rule names, in the order [`rewrite`] returns indices into.
pub const RULES: [&str; 2] = ["linear_normalize", "linear_nested_quotient"];

/// Index of each sub-rule in [`RULES`].
const NORMALIZE: usize = 0;
const NESTED_QUOTIENT: usize = 1;

/// Tries the linear form's rewrites at `n`: `(index into RULES, result)`.
/// `root`: `n` is a linear root (the rewriter's notion: its parent is not a
/// sum, product or negation), where a sum is normalized.
pub fn rewrite(g: &mut Graph, n: NodeId, root: bool, w: Width) -> Option<(usize, NodeId)> {
    let node = *g.node(n);
    if node.maybe_invalid {
        return None;
    }
    if root && is_linear_op(node.op, node.dtype) {
        return normalize(g, n, w).map(|r| (NORMALIZE, r));
    }
    if matches!(node.op, Op::FloorDiv | Op::Div) && node.dtype == DType::Index {
        return nested_quotient(g, n, w).map(|r| (NESTED_QUOTIENT, r));
    }
    None
}

/// A quotient whose numerator holds a quotient term: for an integer `A`
/// and `d, e > 0`, `A + y // d == (A*d + y) // d`, so
/// `(A + y // d) // e == (A*d + y) // (d*e)` (`(s0*2 + s1//64)//3` is
/// `(s0*128 + s1)//192`): one division instead of two. A negated term is
/// a quotient too: `-(y // d) == (d - 1 - y) // d`, and so is a floor
/// division by a negative `e`: `n // e == (-n) // (-e)` (`s0 // 2 // -7`
/// is `(1 - s0) // 14`). Only where the
/// result would not be split back (no multiple of `d*e` in its numerator:
/// [`quotient::splits_again`]), with exactly one such term of
/// coefficient 1. `/` stays `/` where both numerators are
/// non-negative (then `/` is `//`).
fn nested_quotient(g: &mut Graph, n: NodeId, w: Width) -> Option<NodeId> {
    let node = *g.node(n);
    let mut e = g
        .node(node.src()[1])
        .as_const()
        .filter(|&e| !(-1..=1).contains(&e))? as i128;
    let x = node.src()[0];
    if node.op == Op::Div && (g.node(x).vmin < 0 || e < 0) {
        return None;
    }
    let mut p = read(g, x)?;
    // By a negative divisor: n // e == (-n) // (-e).
    if e < 0 {
        e = e.checked_neg()?;
        let mut neg = Acc::default();
        neg.add_poly(&p, -1)?;
        p = neg.finish(g)?;
    }
    let mut inner = p.terms.iter().filter(|(m, c)| {
        c.abs() == 1
            && m.len() == 1
            && split_of(g, m[0]).is_some_and(|s| s.hi.is_none() && s.lo > 1 && s.floor_exact(g))
    });
    let (q, c) = inner.next()?;
    if inner.next().is_some() {
        return None;
    }
    let s = split_of(g, q[0])?;
    let d = s.lo;
    let mut a = p.acc();
    a.add(q.clone(), -c)?;
    let a = a.finish(g)?;
    if a.terms.is_empty() && a.k == 0 && *c == 1 {
        return None;
    }
    // A negated quotient is a quotient: -(y // d) == (d - 1 - y) // d.
    let mut num = Acc::default();
    num.add_poly(&a, d)?;
    crate::algebra::linear::add_read(g, &mut num, s.base, *c)?;
    if *c == -1 {
        num.k = num.k.checked_add(d - 1)?;
    }
    let num = num.finish(g)?;
    let de = d.checked_mul(e)?;
    if quotient::splits_again(&num, de) {
        return None;
    }
    let nb = build(g, &num)?;
    let op = if node.op == Op::Div && g.node(nb).vmin >= 0 {
        Op::Div
    } else {
        Op::FloorDiv
    };
    let de = cnst(g, de)?;
    let out = g.mk(op, &[nb, de]);
    if out == n || !fits_new(g, n, out, w) {
        return None;
    }
    Some(out)
}

// ---- normalization ----------------------------------------------------------------

/// The canonical form of the sum rooted at `n`: like terms merged,
/// constants folded, splits fused, in canonical order. `None` when `n` is
/// already in it (or it cannot be built within the width).
fn normalize(g: &mut Graph, n: NodeId, w: Width) -> Option<NodeId> {
    // Most sums asked about are already built this way: told from their
    // shape, not by reading and building them again.
    if is_built_plain(g, n) || is_built_factored(g, n) {
        return None;
    }
    rebuild(g, n, w)
}

/// `n`'s linear form read and built in its cheapest shape: `None` where
/// that is `n`, or does not fit.
fn rebuild(g: &mut Graph, n: NodeId, w: Width) -> Option<NodeId> {
    let mut acc = read_acc(g, n)?;
    quotient::residues(g, &mut acc, w)?;
    fuse(g, &mut acc)?;
    // A chain with only a constant around it is `linear_minmax`'s to
    // shape: it may have made `c - min(..)` smaller than the placement
    // `in_sum` reads (`-5 - min(-e - 5, -5)` against `max(e, 0)`), and
    // undoing that would make the two take turns. Kept when smaller.
    let before = only_constant_around_one_chain(g, &acc).then(|| acc.clone());
    let moved = minmax::in_sum(g, &mut acc, w)?;
    let mut out = quotient::build(g, &acc.finish(g)?, n, w)?;
    if let Some(before) = before.filter(|_| moved) {
        if let Some(kept) = before.finish(g).and_then(|p| quotient::build(g, &p, n, w)) {
            if g.size(kept) < g.size(out) {
                out = kept;
            }
        }
    }
    if out == n || !fits_new(g, n, out, w) {
        return None;
    }
    Some(out)
}

/// The sum is one `min`/`max` term and a constant.
fn only_constant_around_one_chain(g: &Graph, acc: &Acc) -> bool {
    let mut terms = acc.terms.iter().filter(|(_, c)| **c != 0);
    matches!(
        (terms.next(), terms.next()),
        (Some((m, _)), None) if m.len() == 1 && matches!(g.node(m[0]).op, Op::Min | Op::Max)
    )
}

#[cfg(test)]
mod tests {
    use crate::algebra::linear::{is_built_factored, is_built_plain};
    use crate::testing::simp;

    #[test]
    fn a_sum_told_built_from_its_shape_is_what_reading_and_building_it_gives() {
        let text = "var x in [0, 9]\nvar y in [-9, 9]\nvar z in [1, 9]\n\
            expr y mod 4 + 1\nexpr y // 4 * 4\nexpr 3 - y mod 4\nexpr x * 2 - y % 3\n\
            expr y // z + x\nexpr x - y mod z\nexpr x / 4 * 3 + y\nexpr -(y mod 3)\n\
            expr x // 2 + 1\nexpr y - y // 2\nexpr x mod 4 + x // 4\nexpr x - x mod 4\n\
            expr x // 4 * 4 + x mod 4\nexpr (x + 4) mod 8 + y\n";
        let mut p = crate::parse::parse_program(text).unwrap();
        let told = told_built(&mut p.graph, is_built_plain).len();
        assert!(told >= 8, "{told}");
    }

    /// A sum of one to three of `atoms`, each times one of `coefs`, plus
    /// one of `ks`, as text, drawn by `pick` (a number below its argument).
    fn random_sum(
        pick: &mut impl FnMut(usize) -> usize,
        atoms: &[&str],
        coefs: &[i64],
        ks: &[i64],
    ) -> String {
        let mut e = String::new();
        for t in 0..1 + pick(3) {
            let c = coefs[pick(coefs.len())];
            let a = atoms[pick(atoms.len())];
            let sign = if t == 0 {
                ""
            } else if c < 0 {
                " - "
            } else {
                " + "
            };
            let term = match c.abs() {
                1 if t == 0 && c < 0 => format!("-({a})"),
                1 => format!("({a})"),
                m if t == 0 && c < 0 => format!("({a}) * -{m}"),
                m => format!("({a}) * {m}"),
            };
            e.push_str(sign);
            e.push_str(&term);
        }
        let k = ks[pick(ks.len())];
        if k != 0 {
            e.push_str(&format!(" + {k}"));
        }
        e
    }

    /// `exprs` over x, y, z and w, parsed, with the shape each builds to
    /// added to the graph.
    fn with_built_shapes(exprs: &str) -> crate::parse::Program {
        let text = format!(
            "var x in [0, 9]\nvar y in [-9, 9]\nvar z in [1, 9]\nvar w in [-5, 30]\n{exprs}"
        );
        let mut p = crate::parse::parse_program(&text).unwrap();
        for &o in &p.outputs {
            let _ = super::rebuild(&mut p.graph, o, crate::ir::dtype::Width::W64);
        }
        p
    }

    /// The nodes of `g` told built from their shape by `told`
    /// ([`is_built_plain`] and the like), each checked to be what reading
    /// and building it gives.
    fn told_built(
        g: &mut crate::ir::Graph,
        told: fn(&crate::ir::Graph, crate::ir::NodeId) -> bool,
    ) -> Vec<crate::ir::NodeId> {
        use crate::ir::{dtype::Width, NodeId};
        let told: Vec<NodeId> = (0..g.len())
            .map(|i| NodeId(i as u32))
            .filter(|&n| told(g, n))
            .collect();
        for &n in &told {
            let again = super::rebuild(g, n, Width::W64);
            assert_eq!(again, None, "{}", crate::print::expr(g, n));
        }
        told
    }

    #[test]
    fn a_sum_of_products_told_built_from_its_shape_is_what_reading_and_building_it_gives() {
        use crate::splitmix::splitmix64;
        let atoms = [
            "x",
            "y",
            "z",
            "w",
            "x * y",
            "y * z",
            "x * x",
            "z * w",
            "x * w",
            "w * y",
            "x // 4",
            "y mod z",
            "y // z",
            "w mod 3",
            "y // z * x",
            "z mod 5 * w",
            "max(x, y)",
        ];
        let coefs = [1, 1, 1, 2, 3, -1, -1, -2, 6, -4];
        let mut s = 52u64;
        let mut pick = |n: usize| (splitmix64(&mut s) % n as u64) as usize;
        let exprs: String = (0..3000)
            .map(|_| {
                format!(
                    "expr {}\n",
                    random_sum(&mut pick, &atoms, &coefs, &[0, 0, 5, -3])
                )
            })
            .collect();
        let mut p = with_built_shapes(&exprs);
        let g = &mut p.graph;
        let product = |g: &crate::ir::Graph, n| {
            g.reachable(&[n]).iter().any(|&m| {
                g.node(m).op == crate::ir::Op::Mul
                    && g.node(m)
                        .src()
                        .iter()
                        .all(|&s| g.node(s).as_const().is_none())
            })
        };
        let told = told_built(g, is_built_plain);
        let products = told.iter().filter(|&&n| product(g, n)).count();
        assert!(products >= 500, "{products}");
    }

    #[test]
    fn a_product_told_built_factored_is_what_reading_and_building_it_gives() {
        use crate::ir::dtype::Width;
        use crate::splitmix::splitmix64;
        let atoms = [
            "x", "y", "z", "w", "y * z", "z * w", "x * y", "x // 4", "y * 2",
        ];
        let mut s = 47u64;
        let mut pick = |n: usize| (splitmix64(&mut s) % n as u64) as usize;
        let mut exprs = String::new();
        for _ in 0..3000 {
            let e = random_sum(&mut pick, &atoms, &[1, 1, -1], &[0, 0, 10, -1, 4]);
            let f = ["x", "y", "w"][pick(3)];
            exprs.push_str(&if pick(2) == 0 {
                format!("expr {f} * ({e})\n")
            } else {
                format!("expr ({e}) * {f}\n")
            });
        }
        let mut p = with_built_shapes(&exprs);
        let g = &mut p.graph;
        let told = told_built(g, is_built_factored);
        assert!(told.len() >= 200, "{}", told.len());
        // Not told: a sum with nothing added (building changes it), the
        // factor in the sum, a coefficient past 1, a constant first.
        let v = "var x in [0, 9]\nvar y in [-9, 9]\nvar z in [1, 9]\n";
        for (e, changes) in [
            ("x * (-y - z)", true),
            ("x * (x + 1)", false),
            ("x * (y * 2 + 2)", false),
            ("x * (2 - y)", false),
        ] {
            let mut p = crate::parse::parse_program(&format!("{v}expr {e}\n")).unwrap();
            assert!(!is_built_factored(&p.graph, p.outputs[0]), "{e}");
            let again = super::rebuild(&mut p.graph, p.outputs[0], Width::W64);
            assert_eq!(again.is_some(), changes, "{e}");
        }
    }

    #[test]
    fn like_terms_cancel_across_a_difference() {
        let v = "var x in [0, 9]\nvar y in [0, 9]\nvar z in [0, 9]";
        assert_eq!(simp(v, "(x + y) - (x + z)"), "y - z");
        assert_eq!(simp(v, "(x - 10) + (10 - z)"), "x - z");
        assert_eq!(simp(v, "x - (x + y)"), "-y");
        assert_eq!(simp(v, "x * 3 - x"), "x * 2");
    }

    #[test]
    fn common_factors_come_out_of_products() {
        let v = "var x in [0, 9]\nvar y in [0, 9]\nvar z in [0, 9]";
        assert_eq!(simp(v, "x * y + x * 10"), "x * (y + 10)");
        assert_eq!(simp(v, "(x - y) * z + y * z"), "x * z");
    }

    #[test]
    fn a_sum_is_built_in_its_smallest_equivalent_shape() {
        let v = "var x in [0, 9]\nvar y in [0, 9]\nvar z in [0, 9]";
        // The terms' common factor comes out, with the cheaper sign.
        assert_eq!(simp(v, "(x - y) * -2"), "(y - x) * 2");
        assert_eq!(simp(v, "x * 3 + y * 9"), "(x + y * 3) * 3");
        assert_eq!(
            simp(v, "y * 5 - (y + z) // 2 * 10"),
            "((y + z) mod 2 - z) * 5"
        );
        // A factored atom's cofactor with the cheaper sign.
        assert_eq!(simp(v, "x - x * y"), "x * (1 - y)");
    }

    #[test]
    fn digits_fuse_at_any_depth() {
        let v = "var x in [0, 10000]";
        assert_eq!(simp(v, "x mod 4 + (x // 4 mod 3) * 4"), "x mod 12");
        assert_eq!(simp(v, "x // 4 mod 3 + (x // 12) * 3"), "x // 4");
        assert_eq!(
            simp(v, "x // 3 mod 224 * 3 + x mod 3 + x // 672 * 672"),
            "x"
        );
        assert_eq!(simp(v, "x mod 4 * 3 + x // 4 mod 2 * 12"), "x mod 8 * 3");
        assert_eq!(simp(v, "x mod 4 * -2 + x // 4 mod 2 * -8"), "x mod 8 * -2");
        let v = "var r0 in [0, 7]\nvar r1 in [0, 7]";
        assert_eq!(simp(v, "(r0*2 + r1//4)*4 + r1 mod 4"), "r0 * 8 + r1");
    }

    #[test]
    fn digits_of_bases_that_differ_by_multiples_fuse() {
        // XLA's SimplifyReshape3: d1*2 + d0 // 64 is (d1*128 + d0) // 64,
        // and d0 mod 64 is (d1*128 + d0) mod 64.
        let v = "var d1 in [0, 3071]\nvar d0 in [0, 127]";
        assert_eq!(
            simp(
                v,
                "(d1 * 2 + d0 // 64) mod 3 * 256 + d0 mod 64 * 4 + (d1 * 128 + d0) // 192 * 768"
            ),
            "d1 * 512 + d0 * 4"
        );
        // d0 // 1536 is (d0*128 + d1) // 196608 for d1 in [0, 128).
        let v = "var d0 in [0, 3071]\nvar d1 in [0, 127]";
        assert_eq!(
            simp(v, "d0 // 1536 * 786432 + (d0 * 2 + d1 // 64) // 3 mod 1024 * 768 + (d0 * 2 + d1 // 64) mod 3 * 256 + d1 mod 64 * 4"),
            "d0 * 512 + d1 * 4"
        );
    }

    #[test]
    fn a_quotient_against_more_than_its_base_is_a_remainder() {
        let v = "var d0 in [0, 1]\nvar s0 in [0, 3]";
        assert_eq!(
            simp(v, "d0 - s0 // 3 * 12 + s0 * 7"),
            "d0 + s0 * 3 + s0 mod 3 * 4"
        );
    }

    #[test]
    fn truncating_digits_fuse_for_either_sign() {
        // Truncating splits are odd in their base: the identities hold.
        let v = "var x in [-50, 50]\nvar y in [-50, 50]";
        assert_eq!(simp(v, "x - x / 3 * 3"), "x % 3");
        assert_eq!(simp(v, "x % 3 + (x / 6 * 6 + x / 3 % 2 * 3)"), "x");
        assert_eq!(simp(v, "y - (y + x) / 5 * 5"), "(x + y) % 5 - x");
        // A split written with more divisions than its digits need.
        assert_eq!(simp(v, "x % 20 / 2 % 2 * 2"), "x / 2 % 2 * 2");
        // The families do not mix on a signed base.
        assert_eq!(simp(v, "x - x // 3 * 3 + x % 3"), "x mod 3 + x % 3");
    }

    #[test]
    fn a_quotient_of_a_quotient_term_is_one_division() {
        let v = "var s0 in [0, 100]\nvar s1 in [0, 127]";
        assert_eq!(
            simp(v, "(s0 * 2 + s1 // 64) // 3"),
            "(s0 * 128 + s1) // 192"
        );
        assert_eq!(simp(v, "(s0 * 2 + s1 // 64) / 3"), "(s0 * 128 + s1) / 192");
        // A coefficient that is a multiple of the divisor comes out instead.
        let v = "var s0 in [0, 100]\nvar s1 in [0, 1000]";
        assert_eq!(simp(v, "(s0 * 3 + s1 // 64) // 3"), "s0 + s1 // 192");
        // A negated inner quotient, a negative outer divisor.
        let v = "var s0 in [0, 1233]";
        assert_eq!(simp(v, "s0 // 2 // -7"), "(1 - s0) // 14");
    }

    #[test]
    fn a_remainder_and_its_quotient_share_one_division() {
        let v = "var x in [-50, 50]";
        assert_eq!(simp(v, "x // 3 + x mod 3"), "x - x // 3 * 2");
        // By 2 it is a ceiling: the declarative `floor_half_ceil`.
        assert_eq!(simp(v, "x // 2 + x mod 2"), "(x + 1) // 2");
        assert_eq!(simp(v, "x - x // 8 * 8"), "x mod 8");
    }
}
