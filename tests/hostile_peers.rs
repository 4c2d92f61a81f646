//! A peer cannot take tileproof down (issue 28): a campaign against each
//! hostile adapter of tests/adapters/hostile/ ends normally, writes the
//! finding the misbehaviour deserves, stays under a memory bound, and
//! leaves no process of the adapter's behind.
//!
//! Each adapter appends its pid (and a forked child's) to the file named
//! by `HOSTILE_PIDS`; peak RSS is the campaign's own, from `wait4`.
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The bound on tileproof's peak resident memory in any of these
/// campaigns (docs/protocol.md, "Limits"): generous, the measured peaks
/// are 15 to 70 MB; unbounded reading reached the OOM killer at 24 GB.
const PEAK_RSS_LIMIT_KB: i64 = 256 * 1024;

/// Longest a campaign may take before the test kills it and fails.
const CAMPAIGN_LIMIT: Duration = Duration::from_secs(50);

struct Outcome {
    status: i32,
    peak_kb: i64,
    output: String,
    /// The findings written: file name and contents.
    findings: Vec<(String, String)>,
    /// Adapter processes (and their children) still alive after it.
    survivors: Vec<i32>,
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tileproof-hostile-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `tileproof fuzz` against `sh -c cmd`, with `extra` arguments.
fn campaign_cmd(name: &str, cmd: &str, extra: &[&str]) -> Outcome {
    let dir = scratch(name);
    let pids = dir.join("pids");
    let out = dir.join("output");
    let file = std::fs::File::create(&out).unwrap();
    let corpus = dir.join("corpus");
    let mut args = vec!["fuzz", "--simplifier", cmd];
    args.extend_from_slice(extra);
    // Small and quick unless `extra` says otherwise: two cases, each its
    // own adapter's misbehaviour once.
    let defaults = [
        ("--seed", "1"),
        ("--cases", "2"),
        ("--jobs", "1"),
        ("--shrink-steps", "10"),
        ("--peer-timeout", "1"),
    ];
    for (flag, value) in defaults {
        if !extra.contains(&flag) {
            args.extend([flag, value]);
        }
    }
    let corpus_arg = corpus.to_str().unwrap();
    args.extend(["--no-variants", "--corpus", corpus_arg]);
    #[allow(
        clippy::zombie_processes,
        reason = "reaped by wait4, which also gives its peak RSS"
    )]
    let child = Command::new(env!("CARGO_BIN_EXE_tileproof"))
        .args(&args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("HOSTILE_PIDS", &pids)
        .stdin(Stdio::null())
        .stdout(file.try_clone().unwrap())
        .stderr(file)
        .spawn()
        .unwrap();
    let (status, peak_kb) = wait_with_rusage(child.id() as i32, CAMPAIGN_LIMIT);
    let output = std::fs::read_to_string(&out).unwrap_or_default();
    let outcome = Outcome {
        status,
        peak_kb,
        findings: findings(&corpus),
        survivors: survivors(&pids),
        output,
    };
    // Everything a failure needs is in the outcome.
    let _ = std::fs::remove_dir_all(&dir);
    outcome
}

fn campaign(adapter: &str, extra: &[&str]) -> Outcome {
    let cmd = format!("python3 tests/adapters/hostile/{adapter}.py");
    campaign_cmd(adapter, &cmd, extra)
}

/// Waits for `pid` (killing it past `limit`): its exit status and peak
/// RSS in kB.
fn wait_with_rusage(pid: i32, limit: Duration) -> (i32, i64) {
    let start = Instant::now();
    loop {
        let mut status = 0;
        // SAFETY: plain syscalls on our own child; `ru` is written by wait4.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut ru) };
        assert!(r >= 0, "wait4 failed");
        if r == pid {
            let code = if libc::WIFEXITED(status) {
                libc::WEXITSTATUS(status)
            } else {
                -libc::WTERMSIG(status)
            };
            return (code, ru.ru_maxrss);
        }
        if start.elapsed() > limit {
            unsafe { libc::kill(pid, libc::SIGKILL) };
            unsafe { libc::waitpid(pid, &mut status, 0) };
            panic!("the campaign did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The findings written under `corpus`, with their text.
fn findings(corpus: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut dirs = vec![corpus.to_path_buf()];
    while let Some(d) = dirs.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            // Missed simplifications (either way) are kept beside the
            // findings, never counted as one.
            let missed = p
                .file_name()
                .is_some_and(|n| n == "missed" || n == "engine-missed");
            if p.is_dir() && !missed {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "txt") {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                out.push((name, std::fs::read_to_string(&p).unwrap()));
            }
        }
    }
    out
}

/// The recorded pids still alive (not zombies), after a moment for
/// SIGKILLs in flight.
fn survivors(pids: &Path) -> Vec<i32> {
    let text = std::fs::read_to_string(pids).unwrap_or_default();
    let pids: Vec<i32> = text.lines().filter_map(|l| l.trim().parse().ok()).collect();
    let alive = |pid: i32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| s.rsplit(')').next().map(|r| r.trim_start().chars().next()))
            .flatten()
            .is_some_and(|state| state != 'Z' && state != 'X')
    };
    let end = Instant::now() + Duration::from_secs(3);
    loop {
        let left: Vec<i32> = pids.iter().copied().filter(|&p| alive(p)).collect();
        if left.is_empty() || Instant::now() > end {
            for &p in &left {
                // SAFETY: kill(2); the test fails below, this only cleans up.
                unsafe { libc::kill(p, libc::SIGKILL) };
            }
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The campaign ended as one with findings does (exit 2), wrote a
/// finding of `prefix` (its file name) whose text has `says`, stayed
/// under the memory bound, and left nothing running.
fn assert_survived(o: &Outcome, prefix: &str, says: &str) {
    assert_eq!(o.status, 2, "exit status {}:\n{}", o.status, o.output);
    assert!(
        o.findings
            .iter()
            .any(|(name, text)| name.starts_with(prefix) && text.contains(says)),
        "no `{prefix}` finding saying `{says}`; written: {:?}\n{}",
        o.findings.iter().map(|(n, _)| n).collect::<Vec<_>>(),
        o.output
    );
    assert!(
        o.peak_kb < PEAK_RSS_LIMIT_KB,
        "peak RSS {} kB, over {PEAK_RSS_LIMIT_KB} kB",
        o.peak_kb
    );
    assert!(o.survivors.is_empty(), "still running: {:?}", o.survivors);
    eprintln!("peak RSS {} kB", o.peak_kb);
}

#[test]
fn a_line_that_is_not_utf8_is_garbage_and_the_campaign_goes_on() {
    let o = campaign("not_utf8", &[]);
    assert_survived(&o, "garbage-", "not UTF-8");
}

#[test]
fn a_120_mb_answer_is_garbage_read_no_further_than_the_line_limit() {
    // Building 120 MB takes the adapter a while: not a hang.
    let o = campaign("huge_answer", &["--peer-timeout", "30"]);
    assert_survived(&o, "garbage-", "a line longer than 4194304 bytes");
}

#[test]
fn an_answer_over_the_node_budget_is_garbage_before_it_is_parsed() {
    // 2 MB of `1 + 1 + ...`: within the line limit, over the node budget.
    let o = campaign_cmd(
        "huge_answer_500k",
        "python3 tests/adapters/hostile/huge_answer.py 500000",
        &["--peer-timeout", "30"],
    );
    assert_survived(&o, "garbage-", "node budget");
}

#[test]
fn json_nested_200000_deep_is_garbage() {
    let o = campaign("deep_json", &[]);
    assert_survived(&o, "garbage-", "recursion limit");
}

#[test]
fn an_answer_to_another_id_is_garbage() {
    let o = campaign("wrong_id", &[]);
    assert_survived(&o, "garbage-", "the answer is to id");
}

#[test]
fn an_expression_of_100000_nested_parentheses_is_judged() {
    // `((...(1)...))` for every expression: wrong for each case, and a
    // bool expression answered by an integer is garbage.
    // Seed 3's cases include a bool expression (the first cases are drawn
    // from the peers' suites: a case added to a suite can move it).
    let o = campaign("deep_parens", &["--seed", "3"]);
    assert!(
        o.findings
            .iter()
            .all(|(n, _)| n.starts_with("oracle-") || n.starts_with("garbage-")),
        "{:?}",
        o.findings.iter().map(|(n, _)| n).collect::<Vec<_>>()
    );
    assert_survived(&o, "", "((");
}

#[test]
fn a_stderr_flood_is_drained_in_bounded_memory() {
    // Its `error` answers keep it running for the whole campaign: 3 s
    // of flood, which took unbounded reading past 2 GB.
    let o = campaign("stderr_flood", &["--cases", "1000000", "--time", "3"]);
    assert_survived(&o, "peer-error-", "flooding stderr");
}

#[test]
fn an_adapter_that_closes_stdout_but_keeps_running_is_killed() {
    // `exec`: without it `sh` holds the pipe and the case is a hang.
    let o = campaign_cmd(
        "close_stdout",
        "exec python3 tests/adapters/hostile/close_stdout.py",
        &[],
    );
    assert_survived(&o, "crash-", "closed its stdout but kept running");
}

#[test]
fn a_forked_child_holding_the_pipe_does_not_hold_up_the_campaign() {
    let o = campaign("fork_holds_pipe", &[]);
    assert_survived(&o, "crash-", "exited (exit status: 3) before answering");
}

#[test]
fn an_adapter_that_answers_twice_is_garbage() {
    // The second answer is read as the next request's: that case fails,
    // and the finding says which answer came to which request.
    let o = campaign("answers_twice", &[]);
    assert_survived(&o, "garbage-", "the answer is to id");
}

#[test]
fn an_adapter_that_sleeps_after_its_hello_is_a_hang() {
    let o = campaign("sleeps", &[]);
    assert_survived(&o, "hang-", "no answer within 1.0 s");
}

#[test]
fn a_partial_line_then_exit_is_garbage() {
    let o = campaign("partial_line", &[]);
    assert_survived(&o, "garbage-", "a partial line");
}

#[test]
fn a_hello_over_the_line_limit_stops_the_campaign_with_a_message() {
    let o = campaign("wrong_id", &["--peer-max-line", "16"]);
    assert_eq!(o.status, 1, "{}", o.output);
    assert!(
        o.output.contains("a line longer than 16 bytes"),
        "{}",
        o.output
    );
    assert!(o.survivors.is_empty(), "still running: {:?}", o.survivors);
}
