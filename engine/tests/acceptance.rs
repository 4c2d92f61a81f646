//! The engine issue's acceptance examples: the seed's worked example in
//! both division families, the tiled example, the truncating mod that must
//! not be dropped for a negative `a`, and Invalid propagation.

use engine::ir::{Graph, NodeId, Op};
use engine::parse::parse_program;
use engine::print;
use engine::rewrite::Simplifier;
use engine::rules::builtin;

/// Simplifies the program's single `expr` and returns it with its `expect`
/// line (if any), simplified too: the expected form in the engine's
/// canonical operand order and association, so "any operand order" holds.
fn simplify(text: &str) -> (Graph, NodeId, Option<NodeId>) {
    let mut p = parse_program(text).expect("the example parses");
    let roots: Vec<NodeId> = p.outputs.iter().chain(&p.expects).copied().collect();
    let out = Simplifier::new(builtin())
        .simplify(&mut p.graph, &roots, false)
        .expect("the rewriter reaches a fixed point");
    (p.graph, out.roots[0], out.roots.get(1).copied())
}

/// The terms of a sum, in any association and order.
fn summands(g: &Graph, n: NodeId) -> Vec<NodeId> {
    let node = g.node(n);
    let mut out = if node.op == Op::Add {
        node.src().iter().flat_map(|&s| summands(g, s)).collect()
    } else {
        vec![n]
    };
    out.sort();
    out
}

fn divmod_ops(g: &Graph, root: NodeId) -> usize {
    g.reachable(&[root])
        .into_iter()
        .filter(|&n| g.node(n).op.is_divmod())
        .count()
}

const WORKED_VARS: &str = "var r3 in [0, 3]\nvar r4 in [0, 1]\nvar r2 in [0, 3]\n";

#[test]
fn the_worked_example_folds_to_the_flat_index_in_both_families() {
    for e in [
        "(r3*8 + r4*4 + r2) / 8 * 8 + (r3*8 + r4*4 + r2) % 8",
        "(r3*8 + r4*4 + r2) // 8 * 8 + (r3*8 + r4*4 + r2) mod 8",
    ] {
        let (g, got, want) = simplify(&format!("{WORKED_VARS}expr {e}\nexpect r3*8 + r4*4 + r2\n"));
        let want = want.expect("an expect line");
        assert_eq!(
            summands(&g, got),
            summands(&g, want),
            "`{e}` gave `{}`",
            print::expr(&g, got)
        );
        assert_eq!(divmod_ops(&g, got), 0);
    }
}

#[test]
fn a_split_tile_recombines() {
    let (g, got, want) = simplify(
        "var a in [0, 15]\nvar b in [0, 3]\nexpr ((a*4 + b) // 8) * 8 + (a*4 + b) mod 8\nexpect a*4 + b\n",
    );
    let want = want.expect("an expect line");
    assert_eq!(
        summands(&g, got),
        summands(&g, want),
        "gave `{}`",
        print::expr(&g, got)
    );
}

#[test]
fn a_truncating_remainder_keeps_its_multiple_when_a_can_be_negative() {
    let vars = "var a in [-3, 3]\nvar b in [0, 3]\n";
    let (g, got, _) = simplify(&format!("{vars}expr (a*4 + b) % 4\n"));
    let shown = print::expr(&g, got);
    assert!(
        shown.contains('a') && shown.contains('%'),
        "truncating form lost `a`: `{shown}`"
    );
    // Floor mod drops the multiple for any sign.
    let (g, got, want) = simplify(&format!("{vars}expr (a*4 + b) mod 4\nexpect b\n"));
    assert_eq!(Some(got), want, "gave `{}`", print::expr(&g, got));
}

#[test]
fn multiplication_moves_under_the_gate_and_invalid_absorbs_zero() {
    let (g, got, want) = simplify(
        "var r in [0, 9]\nexpr 10 * where(r < 5, r, invalid)\nexpect where(r < 5, r*10, invalid)\n",
    );
    assert_eq!(Some(got), want, "gave `{}`", print::expr(&g, got));
    let (g, got, want) = simplify("var r in [0, 9]\nexpr invalid * 0\nexpect invalid\n");
    assert_eq!(Some(got), want, "gave `{}`", print::expr(&g, got));
}
