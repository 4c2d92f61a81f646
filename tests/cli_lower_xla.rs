//! `tileproof lower` prints each lowered node with its dtype and the gate,
//! and checks the lowered program with the JIT; `tileproof simplify` reads
//! and writes XLA indexing maps, and every command that reads a program
//! tells the two formats apart with one detector (`--input-format` forces
//! one); errors name line and column.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn tileproof(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tileproof"))
        .args(args)
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

#[test]
fn lower_prints_dtypes_and_the_gate_and_checks_with_the_jit() {
    let src = "var r in [0, 4000]\nvar c in [0, 9]\nexpr where(c < 8, (r * 1000000 + c) // 1000000, invalid)\n";
    let out = tileproof(&["lower", "--raw", "-"], src);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // r fits i32 (its leaf is i32); the product does not, so it is computed
    // in i64 on the widened leaf, and so is everything above it.
    assert!(
        text.contains("#   i64   i64(i32(r)) * i64(1000000)\n"),
        "{text}"
    );
    assert!(text.contains("gate i32(c) < i32(8)\n"), "{text}");
    assert!(
        text.contains("# checked by the JIT against the source: refines"),
        "{text}"
    );
}

#[test]
fn lower_reports_an_invalid_below_a_root_as_an_error() {
    let out = tileproof(
        &["lower", "--raw", "-"],
        "var r in [0, 9]\nexpr where(r < 8, r, invalid) * 2\n",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid"));
}

#[test]
fn simplify_reads_an_xla_map_and_prints_one() {
    let map =
        "(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16),\ndomain:\nd0 in [0, 6],\nd1 in [0, 14]\n";
    let out = tileproof(&["simplify", "-"], map);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "(d0, d1) -> (d0, d1),\ndomain:\nd0 in [0, 6],\nd1 in [0, 14]\n"
    );
    let out = tileproof(&["simplify", "--format", "text", "-"], map);
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "expr d0\nexpr d1\n");
}

#[test]
fn an_xla_map_error_names_line_and_column() {
    let out = tileproof(
        &["simplify", "-"],
        "(d0, d1) -> (d0 floordiv 2)\ndomain:\nd0 in [0, 3],\nd0 mod 2 in [0, 0],\nd1 in [0, 1]\n",
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("-:4:1: a constraint comes after the variables' bounds"),
        "{err}"
    );
}

#[test]
fn every_command_reads_an_indexing_map_with_the_same_detector_and_a_flag_forces_the_syntax() {
    let map = "(d0, d1) -> (d0 * 4 + d1 + 0)\ndomain:\nd0 in [0, 3]\nd1 in [0, 3]\n";
    let simplify = tileproof(&["simplify", "-"], map);
    assert!(simplify.status.success());
    assert!(String::from_utf8_lossy(&simplify.stdout).starts_with("(d0, d1) -> (d0 * 4 + d1)"));
    let lower = tileproof(&["lower", "-"], map);
    assert!(lower.status.success(), "{lower:?}");
    // `check` on a map alone checks the engine's simplification of it.
    let check = tileproof(&["check", "-"], map);
    let out = String::from_utf8_lossy(&check.stdout).to_string();
    assert_eq!(check.status.code(), Some(0), "{out}");
    assert!(out.ends_with("verdict: proved\n"), "{out}");
    // `replay` simplifies the map's expression and checks the answer.
    let replay = tileproof(&["replay", "-"], map);
    let out = String::from_utf8_lossy(&replay.stdout).to_string();
    assert_eq!(replay.status.code(), Some(0), "{out}");
    assert!(
        out.starts_with("ok   - at width 64 (JIT: exhaustive, 16 points"),
        "{out}"
    );
    for cmd in ["simplify", "check", "lower", "replay"] {
        let forced = tileproof(&[cmd, "--input-format", "text", "-"], map);
        let out = String::from_utf8_lossy(&forced.stdout).to_string()
            + &String::from_utf8_lossy(&forced.stderr);
        assert_ne!(forced.status.code(), Some(0), "{cmd}: {out}");
        assert!(out.contains("-:1:1: expected `var`"), "{cmd}: {out}");
    }
    // Forcing the syntax the detector picks changes nothing: the same exit
    // status and output as detected.
    for cmd in ["simplify", "check", "lower", "replay"] {
        let detected = tileproof(&[cmd, "-"], map);
        let forced = tileproof(&[cmd, "--input-format", "xla", "-"], map);
        assert_eq!(forced.status.code(), detected.status.code(), "{cmd}");
        assert_eq!(forced.stdout, detected.stdout, "{cmd}");
        assert_eq!(forced.stderr, detected.stderr, "{cmd}");
    }
    // A text program forced as a map is a parse error at its first token,
    // not a panic: exit 1 (replay names the case as failed: exit 2).
    let program = "var x in [0, 9]\nexpr x + 0\n";
    for (cmd, status) in [("simplify", 1), ("check", 1), ("lower", 1), ("replay", 2)] {
        let forced = tileproof(&[cmd, "--input-format", "xla", "-"], program);
        let out = String::from_utf8_lossy(&forced.stdout).to_string()
            + &String::from_utf8_lossy(&forced.stderr);
        assert_eq!(forced.status.code(), Some(status), "{cmd}: {out}");
        assert!(
            out.contains("-:1:1: expected `(`, found `var`"),
            "{cmd}: {out}"
        );
        assert!(!out.contains("panicked"), "{cmd}: {out}");
    }
    // A parenthesized expression is not a map: every command reads it as
    // the text format (and says what it expected).
    for cmd in ["simplify", "check", "lower", "replay"] {
        let bare = tileproof(&[cmd, "-"], "(x + 1) // 2\n");
        let out = String::from_utf8_lossy(&bare.stdout).to_string()
            + &String::from_utf8_lossy(&bare.stderr);
        assert_ne!(bare.status.code(), Some(0), "{cmd}: {out}");
        assert!(
            out.contains("-:1:1: expected `var`, `constraint`, `expr` or `expect`"),
            "{cmd}: {out}"
        );
    }
}
