//! The engine-power issue's examples, through the whole rewriter: each
//! input must come out exactly in the peer's form (tinygrad's or TVM's),
//! and equal to the input at every point of the domain.

use engine::dtype::Width;
use engine::interp::first_failure;
use engine::parse::parse_program;
use engine::print;
use engine::rewrite::Simplifier;
use engine::rules::builtin;

fn simp(vars: &str, src: &str) -> String {
    let mut p = parse_program(&format!("{vars}\nexpr {src}\n")).unwrap();
    let root = p.outputs[0];
    let out = Simplifier::new(builtin())
        .simplify(&mut p.graph, &[root], false)
        .unwrap()
        .roots[0];
    if let Some((point, v)) = first_failure(&p.graph, &[root], &[out], Width::W64) {
        panic!("{src} fails at {point:?}: {v:?}");
    }
    print::expr(&p.graph, out)
}

const V: &str = "var x in [-20, 20]\nvar y in [-9, 9]\nvar z in [-9, 9]";

#[test]
fn a_sum_of_two_wheres_on_one_condition_is_one_where() {
    // TVM's TestSelect, tinygrad's test_where_combine.
    assert_eq!(
        simp(V, "where(x < 0, y, 0) + where(x < 0, 1, z)"),
        "where(x < 0, y + 1, z)"
    );
    assert_eq!(
        simp(V, "max(where(x < 2, y, 0), where(x < 2, z, 1))"),
        "where(x < 2, max(y, z), 1)"
    );
    assert_eq!(
        simp(V, "x + where(y < 2, y, 0) + where(y < 2, z, 1)"),
        "x + where(y < 2, y + z, 1)"
    );
    // Different conditions stay apart.
    assert_eq!(
        simp(V, "where(x < 0, y, 0) + where(x < 1, 1, z)"),
        "where(x < 0, y, 0) + where(x < 1, 1, z)"
    );
}

#[test]
fn a_where_of_constants_compared_with_a_constant_is_its_condition() {
    // tinygrad's test_cast_bool_to_int_ne_const.
    assert_eq!(simp(V, "where(x < 2, 1, 0) != 0"), "x < 2");
    assert_eq!(simp(V, "where(x < 2, 1, 0) != 1"), "1 < x");
    assert_eq!(simp(V, "where(x < 2, i32(1), i32(0)) != i32(0)"), "x < 2");
    assert_eq!(simp(V, "where(x < 2, 3, 5) + 1"), "where(x < 2, 4, 6)");
}

#[test]
fn a_half_and_its_remainder_are_a_rounded_up_half() {
    assert_eq!(simp(V, "x // 2 + x mod 2"), "(x + 1) // 2");
    // Truncating: only for a non-negative x (at x = -1 it is -1, not 0).
    assert_eq!(simp("var x in [0, 40]", "x / 2 + x % 2"), "(x + 1) / 2");
    // For any sign it still shares one division: x == (x / 2) * 2 + x % 2.
    assert_eq!(simp(V, "x / 2 + x % 2"), "x - x / 2");
}

#[test]
fn tvm_floor_mod_identities() {
    // TestFloorModTwo and TestFloordivIndex.
    assert_eq!(simp(V, "x mod 2 + (x + 1) mod 2"), "1");
    assert_eq!(simp(V, "(x - x mod 21) // 21"), "x // 21");
    assert_eq!(simp(V, "(x + 1) // 2 - x // 2"), "x mod 2");
    assert_eq!(simp(V, "(x + 1) // 2 - x mod 2"), "x // 2");
    assert_eq!(simp(V, "(x + 5) // 2 - (x - 2) // 2"), "x mod 2 + 3");
}
