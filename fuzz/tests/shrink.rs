//! Shrinking reduces a failing program while the same check still fails:
//! roots, operations, variables, constants and bounds all get smaller, and
//! the budget is respected.

use engine::ir::Op;
use engine::parse::{parse_program, Program};
use engine::print;
use engine::rewrite::Simplifier;
use engine::rules::builtin;
use fuzz::checks::{check, CheckConfig, Kind};
use fuzz::shrink::{shrink, size};
use fuzz::subject::Engine;

fn text(p: &Program) -> String {
    print::program(&p.graph, &p.outputs)
}

fn has_mod_by_4(p: &Program) -> bool {
    let g = &p.graph;
    g.reachable(&p.outputs).into_iter().any(|id| {
        let n = g.node(id);
        n.op == Op::Mod && g.node(n.src()[1]).as_const() == Some(4)
    })
}

#[test]
fn shrinking_drops_roots_variables_and_operations_that_do_not_matter() {
    let p = parse_program(
        "var r0 in [0, 7]\nvar r1 in [0, 3]\nvar r2 in [-5, 5]\n\
         expr (r0 * 4 + r1) // 8 * 8 + (r0 * 4 + r1) mod 4\n\
         expr r2 * 3 - r1\n\
         expr min(r0, r2) + 17\n",
    )
    .unwrap();
    let (s, stats) = shrink(&p, has_mod_by_4, 1000);
    assert_eq!(text(&s), "expr 0 mod 4\n");
    assert!(!stats.exhausted);
    assert!(stats.accepted >= 3, "{stats:?}");
}

#[test]
fn shrinking_narrows_bounds_and_moves_them_toward_zero() {
    let p = parse_program("var x in [100, 200]\nexpr x * 3 + 1\n").unwrap();
    // Fails while x is a variable with at least two values.
    let fails = |p: &Program| {
        p.graph
            .reachable(&p.outputs)
            .into_iter()
            .any(|id| match p.graph.node(id).op {
                Op::Var(v) => p.graph.var(v).lo < p.graph.var(v).hi,
                _ => false,
            })
    };
    let (s, _) = shrink(&p, fails, 1000);
    assert_eq!(text(&s), "var x in [0, 1]\nexpr x\n");
}

#[test]
fn shrinking_keeps_constants_the_failure_needs_and_shrinks_the_others() {
    let p = parse_program("var x in [0, 9]\nexpr (x + 1000) mod 4 + 77\n").unwrap();
    let (s, _) = shrink(&p, has_mod_by_4, 1000);
    assert_eq!(text(&s), "expr 0 mod 4\n");
    assert!(size(&s) < size(&p));
}

#[test]
fn shrinking_stops_at_its_step_budget() {
    let p =
        parse_program("var a in [0, 9]\nvar b in [0, 9]\nexpr (a + b) mod 4 * (a - b) + a * b\n")
            .unwrap();
    let mut calls = 0;
    let (s, stats) = shrink(
        &p,
        |q| {
            calls += 1;
            has_mod_by_4(q)
        },
        3,
    );
    assert_eq!(calls, 3);
    assert_eq!(stats.steps, 3);
    assert!(stats.exhausted);
    assert!(has_mod_by_4(&s));
}

#[test]
fn a_real_counterexample_shrinks_to_the_lines_that_show_it() {
    let broken = engine::rules::RuleSet::with_file(builtin(),
        "broken.rules",
        "group range_divmod\n\
         rule rem_drop_multiple: (a * C + b) % N => b % N if divides(N, C) && valid(a) && vmin(b) >= 0\n",
    )
    .unwrap();
    let simp = Engine::new(Simplifier::new(&broken), Vec::new());
    let p = parse_program(
        "var r0 in [-4, 3]\nvar r1 in [0, 3]\nvar r2 in [0, 15]\n\
         expr ((r0 * 4 + r1) % 4 + r2 * 16) / 3 + (r0 * 4 + r1) / 4 * 64\n\
         expr r2 * 2\n",
    )
    .unwrap();
    let fails = |q: &Program| {
        check(&q.graph, &q.outputs, &simp, &CheckConfig::default(), None).failed(Kind::Oracle)
    };
    assert!(fails(&p));
    let (s, stats) = shrink(&p, fails, 2000);
    assert!(fails(&s));
    let t = text(&s);
    assert!(t.lines().count() <= 3, "{t}\n{stats:?}");
    assert!(t.contains('%'), "{t}");
    assert!(check(
        &s.graph,
        &s.outputs,
        &Engine::new(Simplifier::new(builtin()), Vec::new()),
        &CheckConfig::default(),
        None
    )
    .ok());
}
