//! Canonical operand order: commutative ops (`+ * min max == != && || ^`)
//! store their operands in one order, whatever built them, so that the
//! same expression written two ways is one node.

use engine::ir::Op;
use engine::parse::parse_program;
use engine::print;
use engine::rewrite::Simplifier;
use engine::rules::builtin;

const VARS: &str = "var r1 in [0, 7]\nvar r2 in [0, 3]\nvar p: bool\nvar q: bool\n";

fn two(a: &str, b: &str) -> (engine::ir::Graph, engine::ir::NodeId, engine::ir::NodeId) {
    let p = parse_program(&format!("{VARS}expr {a}\nexpr {b}\n")).unwrap();
    (p.graph, p.outputs[0], p.outputs[1])
}

#[test]
fn swapped_operands_of_every_commutative_op_are_one_node() {
    for (a, b) in [
        ("r1*8000 + r2*16", "r2*16 + r1*8000"),
        ("r1 * r2", "r2 * r1"),
        ("min(r1, r2 + 1)", "min(r2 + 1, r1)"),
        ("max(r1 // 2, r2)", "max(r2, r1 // 2)"),
        ("r1 == r2 * 2", "r2 * 2 == r1"),
        ("r1 != 3", "3 != r1"),
        ("p && r1 < 2", "r1 < 2 && p"),
        ("p || q", "q || p"),
        ("p ^ q", "q ^ p"),
    ] {
        let (g, x, y) = two(a, b);
        assert!(g.node(x).op.is_commutative());
        assert_eq!(x, y, "`{a}` and `{b}` are different nodes");
    }
}

#[test]
fn non_commutative_operands_keep_their_order() {
    for (a, b) in [
        ("r1 - r2", "r2 - r1"),
        ("r1 // r2", "r2 // r1"),
        ("r1 < r2", "r2 < r1"),
    ] {
        let (_, x, y) = two(a, b);
        assert_ne!(x, y, "`{a}` and `{b}` must stay different");
    }
}

#[test]
fn canonical_order_puts_constants_last_and_follows_variable_order() {
    let p = parse_program(&format!(
        "{VARS}expr 5 + r1\nexpr r2*16 + r1*8000\nexpr r1*4 + r1\nexpr 3 * (r2 + 1)\n"
    ))
    .unwrap();
    let shown: Vec<String> = p
        .outputs
        .iter()
        .map(|&o| print::expr(&p.graph, o))
        .collect();
    assert_eq!(
        shown,
        [
            "r1 + 5",
            "r1 * 8000 + r2 * 16",
            "r1 + r1 * 4",
            "(r2 + 1) * 3"
        ]
    );
}

#[test]
fn the_order_does_not_depend_on_which_operand_was_built_first() {
    // Same expression, operands created in opposite orders in two graphs.
    let p1 = parse_program(&format!(
        "{VARS}expr r2*16\nexpr r1*8000\nexpr r2*16 + r1*8000\n"
    ))
    .unwrap();
    let p2 = parse_program(&format!(
        "{VARS}expr r1*8000\nexpr r2*16\nexpr r1*8000 + r2*16\n"
    ))
    .unwrap();
    assert_eq!(
        print::expr(&p1.graph, p1.outputs[2]),
        print::expr(&p2.graph, p2.outputs[2])
    );
}

#[test]
fn simplified_results_are_in_canonical_order() {
    // A rule whose right side is written `x + y` may build it in either
    // order; the graph stores one.
    let mut p = parse_program(&format!("{VARS}expr (r2 + 3) + r1\nexpr r1 + (r2 + 3)\n")).unwrap();
    let out = Simplifier::new(builtin())
        .simplify(&mut p.graph, &p.outputs, false)
        .unwrap();
    assert_eq!(out.roots[0], out.roots[1]);
    let g = &p.graph;
    for id in g.reachable(&out.roots) {
        let n = g.node(id);
        if n.op.is_commutative() {
            let s = n.src();
            assert_ne!(
                g.canonical_cmp(s[1], s[0]),
                std::cmp::Ordering::Less,
                "{}",
                print::expr(g, id)
            );
        }
    }
    assert!(matches!(g.node(out.roots[0]).op, Op::Add));
}
