//! Proving a pattern before merging includes proving that rewriting with
//! it stops: `prove --rules FILE` fails, naming the rules, a candidate that
//! does not decrease the reduction order, one that undoes a built-in rule
//! (with the term they cycle on), and one whose right side contains its
//! left side; a rule whose file says why it stops passes with that reason
//! in the report.

use std::path::PathBuf;
use std::process::Command;

fn prove(name: &str, rules: &str, extra: &[&str]) -> (i32, String) {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("termination");
    std::fs::create_dir_all(&d).unwrap();
    let file = d.join(format!("{name}.rules"));
    std::fs::write(&file, rules).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tileproof"))
        .args(["prove", "--no-cache", "--width", "8", "--rules"])
        .arg(&file)
        .args(extra)
        .output()
        .expect("tileproof runs");
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn a_sound_rule_that_undoes_a_builtin_one_fails_naming_both_and_the_term() {
    let (code, out) = prove(
        "double",
        "group combine\n# a * 2 == a + a\nrule double: a * 2 => a + a\n",
        &[],
    );
    assert_eq!(code, 2, "{out}");
    // Sound: proved at its width; it does not stop.
    assert!(out.contains("width  8: 1/1 proved"), "{out}");
    assert!(
        out.contains(
            "DOES NOT DECREASE double: size: `a` occurs twice on the right and once on the left"
        ),
        "{out}"
    );
    assert!(
        out.contains("CYCLE: double -> add_self -> double on `a * 2` (loops on var v0 in [0, 7]; expr v0 * 2)"),
        "{out}"
    );
    assert!(
        out.contains("termination: 0 of 1 rule decrease the order, 1 do not"),
        "{out}"
    );
}

#[test]
fn a_rule_whose_right_side_contains_its_left_side_fails_as_a_cycle_of_its_own() {
    let (code, out) = prove(
        "grow",
        "# x * y == (x * y) * 1\nrule grow: x * y => (x * y) * 1\n",
        &[],
    );
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("DOES NOT DECREASE grow: size: the right side is larger by 2"),
        "{out}"
    );
    assert!(out.contains("CYCLE: grow -> grow on `x * y`"), "{out}");
}

#[test]
fn a_justified_rule_passes_with_its_justification_in_the_report() {
    let (code, out) = prove(
        "justified",
        "# (x + C) + y == (x + y) + C\n\
         rule push_again: (x + C) + y => (x + y) + C if constrained(y) && !is_const(y) && fits(x + y)\n    \
         terminates: a constant moves toward the root of its sum\n",
        &[],
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("JUSTIFIED push_again: ops: `x + C + y` is not above `x + y + C` in the path order; terminates: a constant moves toward the root of its sum"),
        "{out}"
    );
    assert!(
        out.contains("termination: 0 of 1 rule decrease the order, 1 justified"),
        "{out}"
    );
}

#[test]
fn prove_json_carries_each_rules_termination() {
    let (code, out) = prove(
        "json",
        "# x % -3 == x % 3\nrule rem_minus_three: x % -3 => x % 3\n\
         # a * 2 == a + a\nrule double: a * 2 => a + a\n",
        &["--json"],
    );
    assert_eq!(code, 2, "{out}");
    let json = &out[out.find('[').unwrap()..=out.rfind(']').unwrap()];
    let rows: Vec<serde_json::Value> = serde_json::from_str(json).unwrap();
    let of = |name: &str| rows.iter().find(|r| r["rule"] == name).unwrap().clone();
    let t = of("rem_minus_three")["termination"].clone();
    assert_eq!(t["verdict"], "terminates", "{t}");
    assert_eq!(t["component"], "constants", "{t}");
    let d = of("double");
    assert_eq!(d["termination"]["verdict"], "does-not-decrease", "{d}");
    assert!(
        d["cycles"][0]
            .as_str()
            .unwrap()
            .starts_with("double -> add_self"),
        "{d}"
    );
}

#[test]
fn an_empty_justification_is_an_error_at_its_line() {
    let (code, out) = prove(
        "empty",
        "# x * 2 == x + x\nrule twice: x * 2 => x + x\n    terminates:\n",
        &[],
    );
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("empty.rules:3:5"), "{out}");
    assert!(out.contains("`terminates:` needs a justification"), "{out}");
}
