//! `tileproof prove --timeout T` bounds wall time: with `1e-9` every query
//! of the hard rules (verify/tests/hard.rules) is unknown at once (exit 2),
//! not solved for seconds; with `0.001` every query of the slowest built-in
//! rules ends within a second, 100 times in a row (the acceptance);
//! with `1`, every hard query ends within two seconds and leaves no solver
//! process behind, even where the solver's process does not return at all
//! (a worker told to stall): it is killed at the deadline.

use std::process::Command;
use std::time::{Duration, Instant};

#[allow(dead_code, reason = "this file uses only `left_running`")]
mod common;
use common::left_running;

#[test]
fn a_tiny_timeout_makes_every_query_unknown_quickly() {
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_tileproof"))
        .args([
            "prove",
            "--no-cache",
            "--timeout",
            "1e-9",
            "--width",
            "8,64",
        ])
        .args(["--rules", "verify/tests/hard.rules"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let took = start.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert_eq!(stdout.matches("UNKNOWN ").count(), 8, "{stdout}");
    // The summary counts what was not proved, and nothing else ("0/4
    // proved ()" had an empty list of methods).
    assert!(
        stdout.contains("width  8: 0/4 proved, 4 unknown\n"),
        "{stdout}"
    );
    // The old watchdog let such a run take seconds to minutes.
    assert!(took < Duration::from_secs(10), "{took:?}");
}

/// `prove --cross-check` where cvc5 does not run is an error naming it
/// (exit 1), never a run that silently skips the cross-check.
#[test]
fn cross_check_without_cvc5_is_an_error_naming_it() {
    let out = Command::new(env!("CARGO_BIN_EXE_tileproof"))
        .args(["prove", "--no-cache", "--cross-check", "--width", "8"])
        .args(["--rules", "verify/tests/hard.rules"])
        .env("TILEPROOF_CVC5", "/nonexistent/cvc5")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cvc5") && stderr.contains("/nonexistent/cvc5"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "nothing was proved");
}

/// The slowest built-in rules with the default timeout, which varies from
/// run to run: floor_nested_div_add (57.7 s at one width cold, README's
/// proof table), div_div (25.5 s over its four widths in a cold run on
/// 2026-11-25, 8.8 s at 8 bits). The most a timeout has to cut short.
const SLOWEST: [&str; 2] = ["floor_nested_div_add", "div_div"];

/// The acceptance line: `--timeout 0.001` on the slowest rule never
/// takes more than a second per query (one rule at one width, every
/// attempt together), 100 times in a row. The bound is the issue's; a
/// query's own figure is the `seconds` of `prove --json`.
#[test]
fn a_millisecond_timeout_ends_every_query_of_the_slowest_rules_within_a_second_100_times() {
    let mut per_query: Vec<f64> = Vec::new();
    let mut per_run: Vec<f64> = Vec::new();
    for run in 0..100 {
        let start = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_tileproof"))
            .arg("prove")
            .args(SLOWEST)
            .args(["--no-cache", "--timeout", "0.001", "--json"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        per_run.push(start.elapsed().as_secs_f64());
        let stdout = String::from_utf8_lossy(&out.stdout);
        // Unknown (exit 2) or, were Z3 ever that quick, proved (exit 0):
        // a timeout never makes a sound rule anything else.
        assert!(
            matches!(out.status.code(), Some(0 | 2)),
            "run {run}: {stdout}"
        );
        let results: Vec<serde_json::Value> = serde_json::from_str(&stdout).expect("JSON");
        assert_eq!(results.len(), 4 * SLOWEST.len(), "run {run}: {stdout}");
        for r in &results {
            let verdict = r["verdict"].as_str().unwrap_or_default();
            assert!(matches!(verdict, "unknown" | "proved"), "run {run}: {r}");
            let s = r["seconds"].as_f64().expect("seconds");
            assert!(
                s < 1.0,
                "run {run}: {} at width {}: {s} s",
                r["rule"],
                r["width"]
            );
            per_query.push(s);
            // The width-generic attempt that preceded the per-width
            // queries is a query too.
            let g = r["generic_attempt_seconds"].as_f64().expect("generic");
            assert!(g < 1.0, "run {run}: {} generic attempt: {g} s", r["rule"]);
        }
    }
    let sorted = |v: &mut Vec<f64>| v.sort_by(|a, b| a.total_cmp(b));
    sorted(&mut per_query);
    sorted(&mut per_run);
    let at = |v: &[f64], q: f64| v[((v.len() - 1) as f64 * q) as usize];
    println!(
        "{}, --timeout 0.001, 100 runs x 4 widths: per query median {:.3} s, 99th percentile {:.3} s, max {:.3} s; per run (one process, its queries on the cores) median {:.3} s, max {:.3} s",
        SLOWEST.join(" and "),
        at(&per_query, 0.5),
        at(&per_query, 0.99),
        at(&per_query, 1.0),
        at(&per_run, 0.5),
        at(&per_run, 1.0)
    );
}

/// `prove --timeout 1` on rules no solver settles in a second (the hard
/// rules, cvc5 beside Z3 at 8 and 16 bits): every query, the width-generic
/// attempt included, ends within the timeout plus a second, each row is
/// in the JSON, and no solver process outlives the command.
#[test]
fn a_one_second_timeout_ends_every_hard_query_within_two_seconds_and_leaves_no_solver_running() {
    let mark = format!("prove-deadline-{}", std::process::id());
    let out = Command::new(env!("CARGO_BIN_EXE_tileproof"))
        .args(["prove", "--no-cache", "--timeout", "1", "--json"])
        .args([
            "--width",
            "8,16,32,64",
            "--rules",
            "verify/tests/hard.rules",
        ])
        .env("TILEPROOF_TEST_MARK", &mark)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    every_row_unknown_within(&stdout, 4 * 4, 2.0, "");
    assert_eq!(
        left_running(&mark),
        Vec::<u32>::new(),
        "solver processes left running"
    );
}

/// A proof's worker that does not return (told to stall for a minute, as a
/// solver stuck in a phase that ignores its interrupt would) is killed at
/// the query's deadline: every row, and every width-generic attempt, is
/// unknown "stopped at the deadline" within the timeout and the worker's
/// grace, and no worker is left running.
#[test]
fn a_proof_whose_worker_does_not_return_is_stopped_at_the_deadline_and_killed() {
    let mark = format!("prove-stall-{}", std::process::id());
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_tileproof"))
        .args(["prove", "--no-cache", "--timeout", "1", "--json"])
        .args(["--width", "8,64", "--rules", "verify/tests/hard.rules"])
        .env("TILEPROOF_TEST_MARK", &mark)
        .env(verify::remote::STALL_ENV, "60000")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let took = start.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    every_row_unknown_within(&stdout, 4 * 2, 2.5, "stopped at the deadline");
    // Four rules, two queries each, two at a time: nowhere near the minute
    // a worker was told to stall.
    assert!(took < Duration::from_secs(30), "{took:?}");
    assert_eq!(
        left_running(&mark),
        Vec::<u32>::new(),
        "workers left running"
    );
}

/// `prove --json`'s output has `rows` rows, each unknown for a reason that
/// says `reason`, and each row's query and its width-generic attempt took
/// less than `bound` seconds.
fn every_row_unknown_within(stdout: &str, rows: usize, bound: f64, reason: &str) {
    let results: Vec<serde_json::Value> = serde_json::from_str(stdout).expect("JSON");
    assert_eq!(results.len(), rows, "{stdout}");
    for r in &results {
        assert_eq!(r["verdict"], "unknown", "{r}");
        let why = r["reason"].as_str().unwrap_or_default();
        assert!(why.contains(reason), "{r}");
        for field in ["seconds", "generic_attempt_seconds"] {
            let s = r[field].as_f64().expect(field);
            let (rule, width) = (&r["rule"], &r["width"]);
            assert!(s < bound, "{rule} at width {width}: {field} {s} s");
        }
    }
}
