//! The floor-to-truncating lowering rules are a group of their own, loaded
//! apart from the simplification rules, and they turn every floor-family op
//! into truncating ones (checked here against the interpreter on every
//! point; `verify/tests/lowering_rules.rs` proves them).

use engine::dtype::Width;
use engine::interp::{check_point, eval};
use engine::ir::Op;
use engine::parse::parse_program;
use engine::rewrite::Simplifier;
use engine::rules::{builtin, load_lowering};

#[test]
fn lowering_rules_are_not_simplification_rules() {
    let lowering = load_lowering().unwrap();
    assert!(!lowering.is_empty());
    for r in lowering.rules() {
        assert!(
            builtin().rule(&r.name).is_none(),
            "{} is also a simplification rule",
            r.name
        );
        assert_eq!(r.group, "lower_divmod");
    }
}

#[test]
fn lowering_leaves_no_floor_op_and_keeps_every_value() {
    let lowering = load_lowering().unwrap();
    let mut simp = Simplifier::new(&lowering);
    simp.algorithmic = false;
    for e in [
        "x // 4",
        "x mod 4",
        "x ceildiv 4",
        "x // y",
        "x mod y",
        "x ceildiv y",
        "(x + 3) // 8 + (x * 2) mod 3",
        "p // 4",
        "p mod y",
    ] {
        let text = format!("var x in [-20, 20]\nvar y in [-5, 5]\nvar p in [0, 20]\nexpr {e}\n");
        let mut prog = parse_program(&text).unwrap();
        let out = simp
            .simplify(&mut prog.graph, &prog.outputs, false)
            .unwrap();
        let g = &prog.graph;
        for n in g.reachable(&out.roots) {
            assert!(
                !matches!(g.node(n).op, Op::FloorDiv | Op::Mod | Op::CeilDiv),
                "{e}: {} is left",
                engine::print::expr(g, n)
            );
        }
        for x in -20..=20i128 {
            for y in -5..=5i128 {
                for p in [0i128, 7, 20] {
                    let env = [x, y, p];
                    let v = check_point(
                        eval(g, &prog.outputs, &env, Width::W64),
                        eval(g, &out.roots, &env, Width::W64),
                    );
                    assert!(v.failure().is_none(), "{e} at x={x} y={y} p={p}");
                }
            }
        }
    }
}
