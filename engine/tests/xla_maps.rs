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
    let printed = print_map(&mut m, &out.roots).unwrap();
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
