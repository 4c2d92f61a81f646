//! XLA indexing maps: seed 002's four documented simplification examples
//! and the documented reshape round trip simplify to the documented maps.
//! Each expected map is parsed into the same graph, so the comparison is
//! node identity (hash-consing with canonical operand order), not text.

use engine::rewrite::Simplifier;
use engine::rules::builtin;
use engine::xla::{parse_map, print_map};

/// Simplifies `map`; asserts every result is exactly `want`'s and returns
/// the printed map.
fn assert_map(map: &str, want: &str) -> String {
    let mut m = parse_map(map).unwrap();
    let out = Simplifier::new(builtin())
        .simplify(&mut m.program.graph, &m.program.outputs, false)
        .unwrap();
    // The expected results, over the same variables.
    let w = parse_map(want).unwrap();
    let want_roots = m
        .program
        .graph
        .import(&w.program.graph, &w.program.outputs)
        .unwrap();
    let printed = print_map(&mut m, &out.roots).unwrap().text();
    assert_eq!(out.roots, want_roots, "{map}\nsimplified to\n{printed}");
    printed
}

#[test]
fn xla_example_1_add_of_a_small_floordiv_is_the_identity() {
    let dom = "domain:\nd0 in [0, 6],\nd1 in [0, 14]\n";
    let p = assert_map(
        &format!("(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16),\n{dom}"),
        &format!("(d0, d1) -> (d0, d1),\n{dom}"),
    );
    assert_eq!(
        p,
        "(d0, d1) -> (d0, d1),\ndomain:\nd0 in [0, 6],\nd1 in [0, 14]\n"
    );
}

#[test]
fn xla_example_2_delinearized_digits_are_the_identity() {
    // Written as the documentation writes it: implicit products, floorDiv.
    let dom = "domain:\nd0 in [0, 9],\nd1 in [0, 9],\nd2 in [0, 9]\n";
    assert_map(
        &format!(
            "(d0, d1, d2) -> ((100d0 + 10d1 + d2) floorDiv 100, ((100d0 + 10d1 + d2) mod 100) floordiv 10, d2 mod 10),\n{dom}"
        ),
        &format!("(d0, d1, d2) -> (d0, d1, d2),\n{dom}"),
    );
}

#[test]
fn xla_example_3_multiples_of_the_divisor_leave_the_division() {
    let dom = "domain:\nd0 in [0, 9],\nd1 in [0, 9],\nd2 in [0, 9]\n";
    let p = assert_map(
        &format!("(d0, d1, d2) -> ((16d0 + 4d1 + d2) floordiv 8, (16d0 + 4d1 + d2) mod 8),\n{dom}"),
        &format!("(d0, d1, d2) -> (2d0 + (4d1 + d2) floordiv 8, (4d1 + d2) mod 8),\n{dom}"),
    );
    assert!(
        p.starts_with("(d0, d1, d2) -> (d0 * 2 + (d1 * 4 + d2) floordiv 8, (d1 * 4 + d2) mod 8)"),
        "{p}"
    );
}

#[test]
fn xla_example_4_negated_floordiv_of_a_reversed_index_is_d0() {
    // The documentation's `-(-11d0 - d1 + 109) floordiv 11 + 9` negates the
    // quotient (the reading under which the documented result d0 holds; the
    // test file writes it with the parentheses explicit, as here).
    let dom = "domain:\nd0 in [0, 9],\nd1 in [0, 10]\n";
    assert_map(
        &format!("(d0, d1) -> (-((-11d0 - d1 + 109) floordiv 11) + 9),\n{dom}"),
        &format!("(d0, d1) -> (d0),\n{dom}"),
    );
}

#[test]
fn reshape_round_trip_10_10_10_to_50_20_and_back_is_the_identity() {
    // reshape2 output -> reshape1: (d0 * 5 + d1 floordiv 2, (d1 mod 2) * 10 + d2);
    // reshape1 output -> p0: (e0 floordiv 5, (e0 mod 5) * 2 + e1 floordiv 10, e1 mod 10);
    // composed by substituting e0 and e1.
    let e0 = "(d0 * 5 + d1 floordiv 2)";
    let e1 = "((d1 mod 2) * 10 + d2)";
    let dom = "domain:\nd0 in [0, 9],\nd1 in [0, 9],\nd2 in [0, 9]\n";
    let p = assert_map(
        &format!(
            "(d0, d1, d2) -> ({e0} floordiv 5, ({e0} mod 5) * 2 + {e1} floordiv 10, {e1} mod 10),\n{dom}"
        ),
        &format!("(d0, d1, d2) -> (d0, d1, d2),\n{dom}"),
    );
    assert!(p.starts_with("(d0, d1, d2) -> (d0, d1, d2),"));
}

/// Every case of XLA's constraint suite (tests/peers/xla_constraints.cases),
/// simplified and printed as a map, has the variable ranges XLA prints
/// (a remainder constraint narrows its variable, a constraint on one
/// variable is its range), or is `KNOWN EMPTY` where XLA's is.
#[test]
fn xlas_constraint_suite_prints_the_ranges_xla_prints() {
    use engine::xla::{Printed, XlaMap};
    let suite =
        engine::suite::read_suite(include_str!("../../tests/peers/xla_constraints.cases")).unwrap();
    let (mut checked, mut same, mut narrower) = (0, 0, Vec::new());
    for c in &suite.cases {
        let mut p = engine::parse::parse_program(&c.body).unwrap();
        let out = Simplifier::new(builtin())
            .simplify(&mut p.graph, &p.outputs, false)
            .unwrap();
        let expects = Simplifier::new(builtin())
            .simplify(&mut p.graph, &p.expects, false)
            .unwrap()
            .roots;
        let g = &p.graph;
        let empty = expects
            .iter()
            .all(|&e| g.node(e).op == engine::op::Op::Invalid);
        // XLA's ranges: its `peer constraint V in [LO, HI]` lines.
        let want: Vec<String> = p
            .expect_constraints
            .clone()
            .unwrap_or_default()
            .iter()
            .filter_map(|k| match g.node(k.expr).op {
                engine::op::Op::Var(v) => {
                    Some(format!("{} in [{}, {}]", g.var(v).name, k.lo, k.hi))
                }
                _ => None,
            })
            .collect();
        let mut m = XlaMap {
            dims: g.vars().iter().map(|d| d.name.clone()).collect(),
            syms: Vec::new(),
            rts: Vec::new(),
            program: p.clone(),
        };
        let printed = print_map(&mut m, &out.roots).unwrap();
        match printed {
            Printed::KnownEmpty => assert!(empty, "{}: KNOWN EMPTY, XLA's is not", c.name),
            Printed::Map(text) => {
                assert!(!empty, "{}: XLA's is KNOWN EMPTY:\n{text}", c.name);
                let got: Vec<String> = text
                    .lines()
                    .filter(|l| {
                        let head: Vec<&str> = l.split(' ').take(2).collect();
                        head.len() == 2
                            && head[1] == "in"
                            && want.iter().any(|w| w.split(' ').next() == Some(head[0]))
                    })
                    .map(|l| l.trim_end_matches(',').to_string())
                    .collect();
                // As narrow as XLA's, or narrower (a remainder interval
                // narrows too: `d0 mod 8 in [1, 5]` starts `d0` at 1,
                // where XLA narrows by a pinned remainder only).
                let range = |l: &str| -> (String, i64, i64) {
                    let (name, rest) = l.split_once(" in [").unwrap();
                    let (lo, hi) = rest.trim_end_matches(']').split_once(", ").unwrap();
                    (name.to_string(), lo.parse().unwrap(), hi.parse().unwrap())
                };
                assert_eq!(got.len(), want.len(), "{}:\n{text}", c.name);
                for (g, w) in got.iter().zip(&want) {
                    let (gr, wr) = (range(g), range(w));
                    assert!(
                        gr.0 == wr.0 && gr.1 >= wr.1 && gr.2 <= wr.2,
                        "{}: {g} where XLA has {w}:\n{text}",
                        c.name
                    );
                    if gr == wr {
                        same += 1;
                    } else {
                        narrower.push(format!("{}: {g}", c.name));
                    }
                }
            }
        }
        checked += 1;
    }
    assert_eq!(checked, suite.cases.len());
    assert!(checked >= 22);
    // All but where a remainder interval narrows its variable.
    assert_eq!(
        narrower,
        ["xla/indexing_map/ConstraintIntervalSimplification_Sum#1: d0 in [1, 99]"],
        "{same} ranges as XLA prints them"
    );
}
