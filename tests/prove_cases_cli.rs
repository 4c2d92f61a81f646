//! Every case `tileproof prove --cases` writes reproduces under
//! `tileproof check`: the deliberately wrong rules of
//! `verify/tests/wrong_rules_many.rules` are proved (at 8 and 64 bits, with
//! a non-default `--seed`), each is refuted with no internal error, and
//! each written case file fails `tileproof check` as it is, and fails with
//! the failure its header names at exactly its `# point:` (the file with
//! every variable pinned to the point, on standard input). The library
//! test `verify/tests/wrong_rules_many.rs` does the same at every width with
//! several seeds.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `tileproof check` on a file, or on `stdin` text with `-`.
fn check(arg: &str, stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tileproof"))
        .args(["check", arg])
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tileproof runs");
    if let Some(t) = stdin {
        child
            .stdin
            .take()
            .expect("piped")
            .write_all(t.as_bytes())
            .expect("writes");
    }
    child.wait_with_output().expect("tileproof finishes")
}

/// The case with every variable's bounds pinned to its `# point:`.
fn pinned(case: &str) -> String {
    let p = engine::parse::parse_program(case).expect("the case parses");
    let env = verify::counterexample::case_point(&p).expect("the case has a point");
    let mut decls = p.graph.vars().iter().zip(&env).map(|(d, &v)| {
        engine::print::var_decl(&engine::ir::VarDecl {
            lo: v as i64,
            hi: v as i64,
            ..d.clone()
        })
    });
    let lines: Vec<String> = case
        .lines()
        .map(|l| match l.starts_with("var ") {
            true => decls.next().expect("a declaration per var line"),
            false => l.to_string(),
        })
        .collect();
    lines.join("\n") + "\n"
}

/// What is wrong with one case file under `tileproof check`.
fn audit(path: &Path) -> Vec<String> {
    let case = std::fs::read_to_string(path).expect("readable");
    let kind = case
        .lines()
        .next()
        .and_then(|l| l.rsplit_once('('))
        .and_then(|(_, k)| k.strip_suffix(')'))
        .expect("a `# counterexample to rule NAME (KIND)` first line")
        .to_string();
    let mut bad = Vec::new();
    let out = check(path.to_str().expect("utf-8 path"), None);
    let t = text(&out);
    if out.status.code() != Some(2) || !t.contains("counterexample at width") {
        bad.push(format!("tileproof check on the file:\n{t}"));
    }
    let out = check("-", Some(&pinned(&case)));
    let t = text(&out);
    let at_point = t
        .lines()
        .find(|l| l.starts_with("counterexample at width"))
        .is_some_and(|l| l.ends_with(&format!(": {kind}")));
    let confirmed = t.contains(&format!("confirmed by the interpreter: {kind}"));
    if out.status.code() != Some(2) || !at_point || !confirmed {
        bad.push(format!(
            "tileproof check at the point ({kind} expected):\n{t}"
        ));
    }
    bad.into_iter()
        .map(|b| format!("{}: {b}\n{case}", path.display()))
        .collect()
}

#[test]
fn every_case_prove_writes_fails_tileproof_check_at_its_point() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("prove-cases");
    let _ = std::fs::remove_dir_all(&dir);
    let rules = root().join("verify/tests/wrong_rules_many.rules");
    let n_rules = std::fs::read_to_string(&rules)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("rule "))
        .count();
    let out = Command::new(env!("CARGO_BIN_EXE_tileproof"))
        .current_dir(root())
        .arg("prove")
        .arg("--rules")
        .arg(&rules)
        .arg("--cases")
        .arg(&dir)
        .args([
            "--no-cache",
            "--width",
            "8,64",
            "--seed",
            "5",
            "--timeout",
            "20",
        ])
        .output()
        .expect("tileproof runs");
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert!(!t.contains("INTERNAL ERROR"), "{t}");
    for w in [" 8", "64"] {
        let line = format!("width {w}: 0/{n_rules} proved, {n_rules} failed\n");
        assert!(t.contains(&line), "`{line}` missing:\n{t}");
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the cases directory")
        .map(|e| e.expect("an entry").path())
        .collect();
    files.sort();
    assert_eq!(files.len(), 2 * n_rules, "{files:?}");
    // Two checkers at a time: the machine is small.
    let (a, b) = files.split_at(files.len() / 2);
    let bad: Vec<String> = std::thread::scope(|s| {
        let h = s.spawn(|| a.iter().flat_map(|f| audit(f)).collect::<Vec<_>>());
        let mut bad: Vec<String> = b.iter().flat_map(|f| audit(f)).collect();
        bad.extend(h.join().expect("no panic"));
        bad
    });
    assert!(bad.is_empty(), "{}", bad.join("\n\n"));
}
