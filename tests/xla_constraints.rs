//! Constraints cut a map's domain (docs/semantics.md, "Domains"): the
//! indexing documentation's slice, pad, reduce-window and concatenate maps
//! (docs/examples/xla-*.map) read, simplify and print back with their
//! constraints, and `replay` proves each result equal to its input on
//! exactly the same domain; `check` refutes a target whose domain drops a
//! point of the source's, or adds one, with that point, under both SMT
//! encodings.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn tileproof(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tileproof"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr)
}

/// Each example and the map `simplify` prints for it.
const EXAMPLES: [(&str, &str); 4] = [
    (
        "docs/examples/xla-slice.map",
        "(d0, d1, d2) -> (d0 - 5, d1 floordiv 7, d2 floordiv 2),\ndomain:\nd0 in [5, 9],\nd1 in [3, 17],\nd2 in [0, 48],\nd2 mod 2 in [0, 0],\nd1 mod 7 in [3, 3]\n",
    ),
    (
        "docs/examples/xla-pad.map",
        "(d0, d1) -> (d0 floordiv 2, d1 - 4),\ndomain:\nd0 in [1, 7],\nd1 in [4, 7],\nd0 mod 2 in [1, 1]\n",
    ),
    (
        "docs/examples/xla-reduce-window.map",
        "(d0, d1)[s0] -> (d0, d1 + s0 - 1),\ndomain:\nd0 in [0, 1023],\nd1 in [0, 4],\ns0 in [0, 511],\nd1 + s0 in [1, 514]\n",
    ),
    (
        // The split domain of the concatenation is a variable's bounds.
        "docs/examples/xla-concatenate.map",
        "(d0, d1, d2) -> (d0, d1 - 5, d2),\ndomain:\nd0 in [0, 1],\nd1 in [5, 15],\nd2 in [0, 6]\n",
    ),
];

#[test]
fn the_documentation_maps_simplify_and_print_back_with_their_constraints() {
    for (file, want) in EXAMPLES {
        let out = tileproof(&["simplify", file], "");
        assert!(out.status.success(), "{file}: {}", stdout(&out));
        let text = String::from_utf8(out.stdout).unwrap();
        assert_eq!(text, want, "{file}");
        // What it prints reads back, and is already simplified.
        let again = tileproof(&["simplify", "-"], &text);
        assert_eq!(stdout(&again), want, "{file}: printed again");
    }
}

#[test]
fn replay_proves_each_simplified_map_equal_to_its_input_on_the_same_domain() {
    for (file, _) in EXAMPLES {
        let out = tileproof(&["replay", file], "");
        let text = stdout(&out);
        assert_eq!(out.status.code(), Some(0), "{file}: {text}");
        assert!(
            text.starts_with(&format!("ok   {file} at width 64 (JIT: exhaustive")),
            "{text}"
        );
        assert!(text.contains("SMT: equivalent"), "{text}");
    }
}

#[test]
fn check_on_a_map_alone_proves_the_engines_simplification_of_it() {
    for (file, _) in EXAMPLES {
        let out = tileproof(&["check", file], "");
        let text = stdout(&out);
        assert_eq!(out.status.code(), Some(0), "{file}: {text}");
        assert!(text.contains("(JIT: exhaustive"), "{text}");
        assert!(text.ends_with("verdict: proved\n"), "{text}");
    }
    // With a wrong rule laid over the built-ins, the same command refutes.
    let out = tileproof(
        &["check", "--rules", "docs/examples/broken.rules", "-"],
        "(d0) -> ((d0 floordiv 3) mod 4)\ndomain:\nd0 in [0, 20]\n",
    );
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
}

/// The pad map as a text file: the source's domain is `d0` odd; the target
/// is `d0 // 2` on the domain the `expect constraint` lines give.
fn pad_with_target_domain(target: &str) -> String {
    format!(
        "var d0 in [1, 7]\nvar d1 in [4, 7]\nconstraint (d0 - 1) mod 2 in [0, 0]\nexpr (d0 - 1) // 2\nexpr d1 - 4\n{target}expect d0 // 2\nexpect d1 - 4\n"
    )
}

#[test]
fn check_compares_the_domains_exactly_and_names_the_point_that_differs() {
    for width in ["16", "64"] {
        // The same points, said otherwise: proved.
        let same = pad_with_target_domain("expect constraint d0 mod 2 in [1, 1]\n");
        let out = tileproof(&["check", "--width", width, "-"], &same);
        assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
        // A tightening that drops a point of the domain (d0 = 7).
        let dropped = pad_with_target_domain(
            "expect constraint d0 mod 2 in [1, 1]\nexpect constraint d0 in [1, 6]\n",
        );
        let out = tileproof(&["check", "--width", width, "-"], &dropped);
        let text = stdout(&out);
        assert_eq!(out.status.code(), Some(2), "{text}");
        assert!(text.contains("validity-differs"), "{text}");
        assert!(text.contains("\n  point: d0 = 7, d1 = "), "{text}");
        // One that keeps a point outside it (the bound d0 <= 7 only).
        let kept = pad_with_target_domain("expect constraint d0 in [0, 7]\n");
        let out = tileproof(&["check", "--width", width, "-"], &kept);
        let text = stdout(&out);
        assert_eq!(out.status.code(), Some(2), "{text}");
        let point = text
            .lines()
            .find_map(|l| l.strip_prefix("  point: d0 = "))
            .unwrap_or_else(|| panic!("{text}"));
        let d0: i64 = point.split(',').next().unwrap().parse().unwrap();
        assert_eq!(d0 % 2, 0, "{text}");
        assert!(
            text.contains("confirmed by the interpreter: validity-differs"),
            "{text}"
        );
    }
}

#[test]
fn constraint_lines_of_the_text_format_print_back() {
    let src = "var d1 in [3, 17]\nvar s0 in [0, 3]\nconstraint (d1 - 3) mod 7 in [0, 0]\nconstraint d1 + s0 in [0, 100]\nexpr (d1 - 3) // 7 + s0\n";
    let out = tileproof(&["simplify", "-"], src);
    assert!(out.status.success(), "{}", stdout(&out));
    // The second constraint always holds and is dropped; the first is
    // said of `d1` itself.
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "constraint d1 mod 7 in [3, 3]\nexpr d1 // 7 + s0\n"
    );
    // As a map: the same domain.
    let out = tileproof(&["simplify", "--format", "xla", "-"], src);
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "(d1, s0) -> (d1 floordiv 7 + s0),\ndomain:\nd1 in [3, 17],\ns0 in [0, 3],\nd1 mod 7 in [3, 3]\n"
    );
}

#[test]
fn a_map_whose_constraints_no_point_meets_is_known_empty() {
    let map =
        "(d0, d1) -> (d0 floordiv 2)\ndomain:\nd0 in [0, 9],\nd1 in [0, 9],\nd0 + d1 in [19, 30]\n";
    // Through bounds, and through remainders no point meets together.
    let by_remainders =
        "(d0, d1) -> (d0 floordiv 2)\ndomain:\nd0 in [0, 9],\nd1 in [0, 9],\nd0 mod 2 in [0, 0],\nd0 mod 4 in [1, 1]\n";
    // A variable with no value (XLA's KnownEmpty_CreatingIndexingMapWithInfeasibleRange).
    let no_value = "(d0) -> (d0)\ndomain:\nd0 in [0, -2]\n";
    for map in [map, by_remainders, no_value] {
        // An answer, as XLA prints it, with the reason beside it.
        let out = tileproof(&["simplify", "-"], map);
        assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
        assert_eq!(String::from_utf8_lossy(&out.stdout), "KNOWN EMPTY\n");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("known empty: no point of its box"),
            "{}",
            stdout(&out)
        );
        let out = tileproof(&["check", "-"], map);
        assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
        assert!(
            stdout(&out).contains("answer KNOWN EMPTY\n"),
            "{}",
            stdout(&out)
        );
    }
}

#[test]
fn the_engine_simplifies_results_knowing_the_constraints_hold() {
    // `(d1 - 3) mod 7 == 0` makes `((d1 - 3) floordiv 7) * 7 + 3` be `d1`,
    // and `d0 mod 4 == 2` makes `(d0 floordiv 4) * 8 + d0 mod 4` be
    // `d0 * 2 - 2`; replay proves it on the same domain.
    let map = "(d0, d1) -> (((d1 - 3) floordiv 7) * 7 + 3, (d0 floordiv 4) * 8 + d0 mod 4),\ndomain:\nd0 in [0, 63],\nd1 in [3, 17],\n(d1 - 3) mod 7 in [0, 0],\nd0 mod 4 in [2, 2]\n";
    let out = tileproof(&["simplify", "-"], map);
    assert_eq!(
        stdout(&out),
        "(d0, d1) -> (d1, d0 * 2 - 2),\ndomain:\nd0 in [2, 62],\nd1 in [3, 17],\nd0 mod 4 in [2, 2],\nd1 mod 7 in [3, 3]\n"
    );
    let out = tileproof(&["replay", "-"], map);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(stdout(&out).contains("SMT: equivalent"), "{}", stdout(&out));
}

/// XLA's constraint simplifications (its indexing documentation's three
/// kinds, and an empty domain), as the engine's passes do them on the
/// gate: each map, what `simplify` prints, and `replay`'s proof that the
/// result has exactly the input's domain and results.
const CONSTRAINT_REWRITES: [(&str, &str); 6] = [
    // Bounds tightened through `floordiv`, `*` and `+` by constants: a
    // constraint on one variable is its bounds.
    (
        "(d0) -> (d0)\ndomain:\nd0 in [0, 31],\nd0 floordiv 4 in [1, 2]\n",
        "(d0) -> (d0),\ndomain:\nd0 in [4, 11]\n",
    ),
    (
        "(d0) -> (d0)\ndomain:\nd0 in [0, 31],\nd0 * 3 in [2, 10]\n",
        "(d0) -> (d0),\ndomain:\nd0 in [1, 3]\n",
    ),
    (
        "(d0, d1) -> (d0)\ndomain:\nd0 in [0, 31],\nd1 in [0, 9],\nd0 + 5 in [7, 9]\n",
        "(d0, d1) -> (d0),\ndomain:\nd0 in [2, 4],\nd1 in [0, 9]\n",
    ),
    // A constraint the bounds imply is removed (the documentation's).
    (
        "(d0)[s0] -> (d0 + s0)\ndomain:\nd0 in [0, 5],\ns0 in [1, 3],\nd0 + s0 in [0, 20]\n",
        "(d0)[s0] -> (d0 + s0),\ndomain:\nd0 in [0, 5],\ns0 in [1, 3]\n",
    ),
    // The constraint's expression simplified like a result.
    (
        "(d0, d1) -> (d0)\ndomain:\nd0 in [0, 5],\nd1 in [0, 7],\n(d0 * 8 + d1) floordiv 8 in [0, 1]\n",
        "(d0, d1) -> (d0),\ndomain:\nd0 in [0, 1],\nd1 in [0, 7]\n",
    ),
    (
        "(d0, d1) -> (d0 + d1)\ndomain:\nd0 in [0, 9],\nd1 in [0, 9],\nd0 + d1 in [3, 4],\nd0 - d1 in [6, 9]\n",
        "",
    ),
];

#[test]
fn xla_constraint_rewrites_keep_exactly_the_domain() {
    for (map, want) in CONSTRAINT_REWRITES {
        let out = tileproof(&["simplify", "-"], map);
        if want.is_empty() {
            // No point meets the constraints: XLA's known-empty map.
            assert_eq!(out.status.code(), Some(0), "{map}: {}", stdout(&out));
            assert_eq!(
                String::from_utf8_lossy(&out.stdout),
                "KNOWN EMPTY\n",
                "{map}"
            );
        } else {
            assert_eq!(stdout(&out), want, "{map}");
        }
        let out = tileproof(&["replay", "-"], map);
        assert_eq!(out.status.code(), Some(0), "{map}: {}", stdout(&out));
    }
}

/// A map's constraint `d0 floordiv 4 in [1, 2]` (`d0` in [4, 11]) against
/// a target's tightening of it.
fn tightened(target: &str) -> String {
    format!("var d0 in [0, 31]\nconstraint d0 // 4 in [1, 2]\nexpr d0 * 2\n{target}expect d0 * 2\n")
}

#[test]
fn a_wrong_constraint_rewrite_is_refuted_with_the_point_that_differs() {
    // Tightening through the floordiv: [1, 2] * 4 is [4, 11]. A rewrite
    // to [4, 10] drops the feasible 11; one to [3, 11] keeps the
    // infeasible 3.
    for (target, point, moved) in [
        (
            "expect constraint d0 in [4, 10]\n",
            "d0 = 11",
            "in the source's domain and not in the target's: dropped",
        ),
        (
            "expect constraint d0 in [3, 11]\n",
            "d0 = 3",
            "in the target's domain and not in the source's: added",
        ),
    ] {
        for width in ["16", "64"] {
            let out = tileproof(&["check", "--width", width, "-"], &tightened(target));
            let text = stdout(&out);
            assert_eq!(out.status.code(), Some(2), "{target}: {text}");
            assert!(text.contains(": validity-differs\n"), "{text}");
            assert!(
                text.contains(&format!("  point: {point}\n")),
                "{target}: {text}"
            );
            assert!(
                text.contains(&format!("  the point is {moved}\n")),
                "{text}"
            );
            assert!(
                text.contains("confirmed by the interpreter: validity-differs"),
                "{text}"
            );
        }
    }
    // The right one is proved.
    let out = tileproof(
        &["check", "-"],
        &tightened("expect constraint d0 in [4, 11]\n"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}

/// Issue 50's behaviours, each as a map and what `simplify` prints; every
/// one is also replayed (the same results on exactly the same domain).
const XLA_DOMAIN_REWRITES: [(&str, &str); 6] = [
    // A pinned quotient beside another constraint is its variable's range:
    // `d1 floordiv 4 in [0, 0]` is `d1 in [0, 3]`, and the constraint goes.
    (
        "(d0, d1) -> (d0, d1)\ndomain:\nd0 in [0, 99],\nd1 in [0, 99],\nd1 floordiv 4 in [0, 0],\nd0 + d1 in [0, 50]\n",
        "(d0, d1) -> (d0, d1),\ndomain:\nd0 in [0, 99],\nd1 in [0, 3],\nd0 + d1 in [0, 50]\n",
    ),
    // Through a negative divisor, under floor division: the variable's
    // range, no division and no constraint left.
    (
        "(d0)[s0] -> (d0)\ndomain:\nd0 in [0, 99],\ns0 in [-99, 99],\ns0 floordiv -3 in [-11, -5]\n",
        "(d0)[s0] -> (d0),\ndomain:\nd0 in [0, 99],\ns0 in [13, 33]\n",
    ),
    // A remainder constraint narrows its variable's range to values it
    // allows, and stays.
    (
        "(d0) -> (d0)\ndomain:\nd0 in [0, 9],\nd0 mod 8 in [0, 0]\n",
        "(d0) -> (d0),\ndomain:\nd0 in [0, 8],\nd0 mod 8 in [0, 0]\n",
    ),
    // Narrowed to one value, the remainder constraint is implied, and the
    // result is that value.
    (
        "(d0) -> (d0)\ndomain:\nd0 in [5, 9],\nd0 mod 8 in [0, 0]\n",
        "(d0) -> (8),\ndomain:\nd0 in [8, 8]\n",
    ),
    // A constraint the narrowed ranges imply is removed (`d0` ends at 8,
    // so `d0 + s2` is at most 12), as XLA removes it after narrowing.
    (
        "(d0)[s2] -> (d0, s2)\ndomain:\nd0 in [0, 9],\ns2 in [0, 4],\nd0 + s2 in [0, 12],\nd0 mod 8 in [0, 0]\n",
        "(d0)[s2] -> (d0, s2),\ndomain:\nd0 in [0, 8],\ns2 in [0, 4],\nd0 mod 8 in [0, 0]\n",
    ),
    // Pinned remainders merged (XLA's ConstraintMerge_Mod), each variable's
    // range narrowed by its remainder.
    (
        "(d0)[s0, s1] -> (d0, s1, s0)\ndomain:\nd0 in [0, 3],\ns0 in [-21, -2],\ns1 in [0, 10],\nd0 mod 3 in [0, 0],\ns0 mod 2 in [0, 0],\ns0 mod 3 in [0, 0],\ns1 mod 5 in [1, 1]\n",
        "(d0)[s0, s1] -> (d0, s1, s0),\ndomain:\nd0 in [0, 3],\ns0 in [-18, -6],\ns1 in [1, 6],\nd0 mod 3 in [0, 0],\ns1 mod 5 in [1, 1],\ns0 mod 6 in [0, 0]\n",
    ),
];

#[test]
fn constraints_become_variable_ranges_as_xla_rewrites_them() {
    for (map, want) in XLA_DOMAIN_REWRITES {
        let out = tileproof(&["simplify", "-"], map);
        assert_eq!(stdout(&out), want, "{map}");
        let out = tileproof(&["replay", "-"], map);
        assert_eq!(out.status.code(), Some(0), "{map}: {}", stdout(&out));
        // The printed map reads back to itself.
        let again = tileproof(&["simplify", "-"], want);
        assert_eq!(stdout(&again), want, "{want}");
    }
}

#[test]
fn composing_with_an_empty_map_is_empty() {
    let dir = std::env::temp_dir().join(format!("tileproof-empty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let full = dir.join("full.map");
    let empty = dir.join("empty.map");
    std::fs::write(
        &full,
        "(d0, d1) -> (d0 + d1)\ndomain:\nd0 in [0, 9],\nd1 in [0, 9]\n",
    )
    .unwrap();
    std::fs::write(&empty, "(d0) -> (d0, d0)\ndomain:\nd0 in [0, -1]\n").unwrap();
    let (f, e) = (full.to_str().unwrap(), empty.to_str().unwrap());
    for chain in [[f, e], [e, f]] {
        let out = tileproof(&["compose", chain[0], chain[1]], "");
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        // Either way round (the maps chain both ways: one result into one
        // dimension, two into two), as XLA's KnownEmpty_Composition.
        assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
        assert!(text.ends_with("KNOWN EMPTY\n"), "{text}");
        assert!(stdout(&out).contains("known empty"), "{}", stdout(&out));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// XLA's expectation for `s0 floordiv -3 in [-11, -5]` (`s0 in [15, 35]`,
/// ConstraintIntervalSimplification_FloorDivNegativeDivisorNegativeBounds)
/// is the domain of a truncating division: `check` refutes it with a point
/// it adds or drops.
#[test]
fn xlas_expectation_for_a_negative_divisor_is_refuted_under_floor_division() {
    let case = "var d0 in [0, 99]\nvar s0 in [-99, 99]\nconstraint s0 // -3 in [-11, -5]\nexpr d0\nexpect d0\nexpect constraint s0 in [15, 35]\n";
    let out = tileproof(&["check", "-"], case);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    let text = stdout(&out);
    assert!(
        ["s0 = 13", "s0 = 14", "s0 = 34", "s0 = 35"]
            .iter()
            .any(|p| text.contains(p)),
        "{text}"
    );
    assert!(
        text.contains(": added") || text.contains(": dropped"),
        "{text}"
    );
}
