//! `tileproof compose` composes indexing maps as XLA composes a fusion's:
//! the documentation's cancelling reshape pair becomes the identity, the
//! two transpose paths of one input become one map, a later map's bounds
//! and constraints cut the composed domain, and a wrong simplification is
//! caught by both checks (the chain applied map by map, and SMT).

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn tileproof(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tileproof"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// Writes `maps` to files of a fresh directory named for the test.
fn files(test: &str, maps: &[&str]) -> Vec<String> {
    let dir: PathBuf =
        std::env::temp_dir().join(format!("tileproof-compose-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    maps.iter()
        .enumerate()
        .map(|(i, m)| {
            let p = dir.join(format!("{i}.map"));
            std::fs::File::create(&p)
                .unwrap()
                .write_all(m.as_bytes())
                .unwrap();
            p.to_string_lossy().into_owned()
        })
        .collect()
}

/// The map of compose's output, without the comment lines of its checks.
fn map(out: &str) -> String {
    out.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect()
}

fn compose(paths: &[String]) -> (Option<i32>, String, String) {
    let mut args = vec!["compose"];
    args.extend(paths.iter().map(String::as_str));
    let o = tileproof(&args);
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn the_documentation_reshape_pair_composes_to_the_identity() {
    let (code, out, err) = compose(&[
        "docs/examples/xla-reshape2.map".into(),
        "docs/examples/xla-reshape1.map".into(),
    ]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert_eq!(
        map(&out),
        "(d0, d1, d2) -> (d0, d1, d2),\ndomain:\nd0 in [0, 9],\nd1 in [0, 9],\nd2 in [0, 9]\n"
    );
    for line in [
        "# chain: the maps applied one by one agree at every point of the box (1000 points)",
        "# simplification: proved equal to the unsimplified composition on the same domain (bounded-integer)",
        "# the composition is the identity",
    ] {
        assert!(out.lines().any(|l| l == line), "{out}");
    }
}

#[test]
fn two_transpose_paths_of_one_input_compose_to_one_map() {
    // The documentation's deduplicated map: p0 reached through transposes
    // {1,0,2} then {0,2,1}, and through {2,1,0} then {1,0,2}.
    let t = |res: &str, dims: [u32; 3]| {
        format!(
            "(d0, d1, d2) -> ({res}),\ndomain:\nd0 in [0, {}],\nd1 in [0, {}],\nd2 in [0, {}]\n",
            dims[0] - 1,
            dims[1] - 1,
            dims[2] - 1
        )
    };
    let lhs = files(
        "lhs",
        &[
            &t("d0, d2, d1", [10, 50, 20]),
            &t("d1, d0, d2", [10, 20, 50]),
        ],
    );
    let rhs = files(
        "rhs",
        &[
            &t("d1, d0, d2", [10, 50, 20]),
            &t("d2, d1, d0", [50, 10, 20]),
        ],
    );
    let want =
        "(d0, d1, d2) -> (d2, d0, d1),\ndomain:\nd0 in [0, 9],\nd1 in [0, 49],\nd2 in [0, 19]\n";
    for paths in [lhs, rhs] {
        let (code, out, err) = compose(&paths);
        assert_eq!(code, Some(0), "{out}{err}");
        assert_eq!(map(&out), want);
    }
}

#[test]
fn a_later_maps_bounds_and_constraints_cut_the_composed_domain() {
    // (d0 * 2 - 1) over [0, 5], then the pad's (d0 - 1) floordiv 2 over
    // the odd points of [1, 7]: d0 in [1, 4] remain, each mapped to d0 - 1.
    let paths = files(
        "cut",
        &[
            "(d0) -> (d0 * 2 - 1)\ndomain:\nd0 in [0, 5]\n",
            "(d0) -> ((d0 - 1) floordiv 2)\ndomain:\nd0 in [1, 7],\n(d0 - 1) mod 2 in [0, 0]\n",
        ],
    );
    let (code, out, err) = compose(&paths);
    assert_eq!(code, Some(0), "{out}{err}");
    assert_eq!(map(&out), "(d0) -> (d0 - 1),\ndomain:\nd0 in [1, 4]\n");
    // Range and runtime variables of both maps stay free, the last map's
    // first, and a constraint on a later map's dimension becomes one on
    // the earlier result.
    let paths = files(
        "vars",
        &[
            "(d0, d1)[s0] -> (d0, d1 + s0)\ndomain:\nd0 in [0, 3],\nd1 in [0, 2],\ns0 in [0, 5]\n",
            "(d0, d1)[s0]{rt0} -> (d0 + rt0, (d1 - 1) floordiv 2 + s0)\ndomain:\nd0 in [0, 3],\nd1 in [1, 7],\ns0 in [0, 1],\nrt0 in [0, 2],\n(d1 - 1) mod 2 in [0, 0]\n",
        ],
    );
    let (code, out, err) = compose(&paths);
    assert_eq!(code, Some(0), "{out}{err}");
    assert_eq!(
        map(&out),
        "(d0, d1)[s0, s1]{rt0} -> (d0 + rt0, (d1 + s1) floordiv 2 + s0),\ndomain:\nd0 in [0, 3],\nd1 in [0, 2],\ns0 in [0, 1],\ns1 in [0, 5],\nrt0 in [0, 2],\nd1 + s1 in [1, 7],\n(d1 + s1) mod 2 in [1, 1]\n"
    );
    assert!(out.contains("(432 points)"), "{out}");
}

#[test]
fn a_wrong_simplification_of_a_composition_is_caught_by_both_checks() {
    // docs/examples/broken.rules: `x mod y => x` forgetting `x < y`.
    let o = tileproof(&[
        "compose",
        "--rules",
        "docs/examples/broken.rules",
        "docs/examples/xla-reshape2.map",
        "docs/examples/xla-reshape1.map",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(
        out.contains(
            "\n# chain: the composition differs from the maps applied one by one at d0 = "
        ),
        "{out}"
    );
    assert!(out.contains("\n# simplification: refuted: "), "{out}");
}

#[test]
fn maps_that_do_not_chain_are_an_error_naming_them() {
    let paths = files("arity", &["(d0) -> (d0)\ndomain:\nd0 in [0, 5]\n"]);
    let (code, _, err) = compose(&[paths[0].clone(), "docs/examples/xla-reshape1.map".into()]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("map 2 has 2 dimensions, but map 1 has 1 result"),
        "{err}"
    );
    let (code, _, err) = compose(&[paths[0].clone(), "docs/examples/broken.rules".into()]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("broken.rules:"), "{err}");
}
