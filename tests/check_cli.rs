//! `tileproof check` (translation validation with Z3): the seed's worked
//! example is proved equal to its simplified form, and a wrong
//! simplification is refuted with a counterexample the interpreter confirms.

use std::process::Command;

const WORKED: &str = "var r3 in [0, 3]\nvar r4 in [0, 1]\nvar r2 in [0, 3]\n\
                      expr (r3*8 + r4*4 + r2) / 8 * 8 + (r3*8 + r4*4 + r2) % 8\n";

fn check(text: &str, name: &str) -> (i32, String) {
    let dir = std::env::temp_dir().join(format!("tileproof-check-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tileproof"))
        .arg("check")
        .arg(&path)
        .output()
        .expect("tileproof runs");
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn the_seed_worked_example_refines_its_simplified_form() {
    let (code, out) = check(&format!("{WORKED}expect r3*8 + r4*4 + r2\n"), "worked.txt");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("refines"), "{out}");
}

#[test]
fn a_wrong_simplification_of_the_worked_example_gets_a_confirmed_counterexample() {
    let (code, out) = check(&format!("{WORKED}expect r3*8 + r2\n"), "wrong.txt");
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("value-differs"), "{out}");
    assert!(out.contains("confirmed by the interpreter"), "{out}");
    // The point has r4 = 1: the only way to lose r4*4.
    assert!(out.contains("r4 = 1"), "{out}");
}

#[test]
fn an_expect_of_another_type_than_its_expr_is_an_error_at_its_line() {
    let (code, out) = check("var r0 in [0, 3]\nexpr r0 < 2\nexpect r0\n", "types.txt");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains(":3:1"), "{out}");
    assert!(
        out.contains("`expect` line 1 has type index, but `expr` line 1 has type bool"),
        "{out}"
    );
    assert!(!out.contains("panicked"), "{out}");
    // `replay` reads the same file with the same parser: it fails the case
    // with the same error (it used to say ok).
    let path = std::env::temp_dir()
        .join(format!("tileproof-check-cli-{}", std::process::id()))
        .join("types.txt");
    let out = Command::new(env!("CARGO_BIN_EXE_tileproof"))
        .arg("replay")
        .arg(&path)
        .output()
        .expect("tileproof runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.starts_with(&format!(
            "FAIL {}:3:1: `expect` line 1 has type index",
            path.display()
        )),
        "{text}"
    );
}

#[test]
fn a_counterexample_names_the_output_that_differs_and_shows_bools_as_bools() {
    let (code, out) = check(
        "var x in [0, 3]\nvar b: bool\nexpr x\nexpr where(b, x, 0)\n\
         expect x\nexpect where(b, x + 1, 0)\n",
        "two-outputs.txt",
    );
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("in output 2 (`expr where(b, x, 0)`)"), "{out}");
    assert!(out.contains("point: x = 0, b = true"), "{out}");
}
