//! A chain of N terms of every binary operator of the op table, fed
//! to every command (simplify, check, replay, lower, prove --rules): each
//! answers or refuses cleanly (exit 0, 1 or 2 with a message; never a
//! signal, a panic or an out-of-memory kill). N is 30,000 here (3 times
//! the SMT limit, so `check` and `replay` enumerate);
//! `TILEPROOF_CHAIN_TERMS=1000000` (the nightly workflow) runs 10^6. Each
//! run prints its time (`--nocapture`).

use engine::op::OPS;
use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

fn terms() -> usize {
    std::env::var("TILEPROOF_CHAIN_TERMS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30_000)
}

/// Every binary operator's chain of N terms (`fuzz::targets::operator_chains`:
/// infix ones flat, `min`/`max` nested). A comparison chain is a type error
/// after its first link: a clean error is the expected answer.
fn chains(int: &str, boolean: &str) -> Vec<(&'static str, String)> {
    fuzz::targets::operator_chains(terms(), int, boolean)
}

#[test]
fn every_binary_operator_has_a_chain() {
    let spelled: Vec<&str> = chains("x", "b").iter().map(|(op, _)| *op).collect();
    let binary = OPS.iter().filter(|(_, info)| info.arity == 2).count();
    assert_eq!(spelled.len(), binary, "{spelled:?}");
    assert!(
        spelled.contains(&"min") && spelled.contains(&"+"),
        "{spelled:?}"
    );
}

struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `args FILE` on each chain (of the operands `x` and `b`, or in a
/// rule `a` and `p`) written by `file` and checks the answer.
fn every_chain(command: &str, args: &[&str], file: impl Fn(&str) -> String) {
    let (int, boolean) = if command == "prove" {
        ("a", "p")
    } else {
        ("x", "b")
    };
    let dir = Dir(
        std::env::temp_dir().join(format!("tileproof-chains-{command}-{}", std::process::id()))
    );
    std::fs::create_dir_all(&dir.0).unwrap();
    for (op, chain) in chains(int, boolean) {
        let path = dir.0.join("input");
        std::fs::write(&path, file(&chain)).unwrap();
        let start = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_tileproof"))
            .args(args)
            .arg(&path)
            .output()
            .expect("tileproof runs");
        // The figures behind "linear time" (compare a run at another N).
        eprintln!(
            "{command} on a `{op}` chain of {} terms: {:.2} s, {:?}",
            terms(),
            start.elapsed().as_secs_f64(),
            out.status
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let code = out.status.code();
        assert!(
            matches!(code, Some(0..=2)),
            "{command} on a `{op}` chain: status {:?}\n{}",
            out.status,
            &stderr[..stderr.len().min(2000)]
        );
        assert!(
            !stderr.contains("panicked"),
            "{command} on a `{op}` chain: {stderr}"
        );
        if code == Some(1) {
            assert!(
                !stderr.trim().is_empty(),
                "{command} on a `{op}` chain: an error says why"
            );
        } else {
            assert!(
                !stdout.trim().is_empty(),
                "{command} on a `{op}` chain: an answer"
            );
        }
    }
}

fn program(chain: &str, expect: bool) -> String {
    let mut s = format!("var x in [0, 100]\nvar b: bool\nexpr {chain}\n");
    if expect {
        s.push_str(&format!("expect {chain}\n"));
    }
    s
}

#[test]
fn simplify_answers_every_operator_chain() {
    every_chain("simplify", &["simplify"], |c| program(c, false));
}

#[test]
fn check_answers_every_operator_chain() {
    every_chain("check", &["check"], |c| program(c, true));
}

#[test]
fn replay_answers_every_operator_chain() {
    every_chain("replay", &["replay"], |c| program(c, true));
}

#[test]
fn lower_answers_every_operator_chain() {
    every_chain("lower", &["lower"], |c| program(c, false));
}

#[test]
fn prove_answers_a_rule_of_every_operator_chain() {
    every_chain(
        "prove",
        &["prove", "--widths", "64", "--no-cache", "--rules"],
        |c| format!("group chains\nrule chain: {c} => {c}\n"),
    );
}
