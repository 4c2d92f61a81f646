//! `tileproof prove --ranges`: the range analysis is proved sound op by
//! op, every transfer function for every operand dtype at 8, 16, 32 and 64
//! bits, after the monotonicity and remainder lemmas it rests on. Each
//! query runs in a worker process killed past its share of the timeout
//! (Z3 4.15.8's `nlsat` once refined an algebraic number for over 13
//! minutes without looking at its interrupt, in the library's own
//! process), and no worker outlives the command.

use std::process::Command;

#[allow(dead_code, reason = "this file uses only `left_running`")]
mod common;
use common::left_running;

#[test]
fn every_transfer_function_is_sound_at_every_width() {
    let mark = format!("ranges-{}", std::process::id());
    let out = Command::new(env!("CARGO_BIN_EXE_tileproof"))
        .args(["prove", "--ranges", "--width", "8,16,32,64", "--json"])
        .env("TILEPROOF_TEST_MARK", &mark)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("--json printed no report ({e}): {stderr}"));
    let lemmas = report["lemmas"].as_array().expect("a lemma list");
    let results = report["results"].as_array().expect("a result list");
    assert!(lemmas.len() >= 15, "the lemma list lost lemmas: {lemmas:?}");
    assert!(
        results.len() >= 4 * 60,
        "the signature list lost ops: {} transfer functions",
        results.len()
    );
    let bad: Vec<String> = lemmas
        .iter()
        .filter(|l| l[2] != "proved")
        .map(|l| format!("lemma {l}"))
        .chain(
            results
                .iter()
                .filter(|r| r["verdict"] != "proved")
                .map(|r| r.to_string()),
        )
        .collect();
    assert!(bad.is_empty(), "not proved:\n{}", bad.join("\n"));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        left_running(&mark),
        Vec::<u32>::new(),
        "workers left running"
    );
}
