//! `tileproof lower` prints each lowered node with its dtype and the gate,
//! and checks the lowered program with the JIT; `tileproof simplify` reads
//! and writes XLA indexing maps; errors name line and column.

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
        "(d0) -> (d0 floordiv 2)\ndomain:\nd0 in [0, 3],\nd0 mod 2 in [0, 0]\n",
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("-:4:1: constraints on expressions are not supported"),
        "{err}"
    );
}
