//! `tileproof check --timeout T` holds whatever the solver does: Z3 4.8.12
//! does not heed an interrupt while it works on `16 mod (r0 >> r0)` over a
//! 64-bit `r0` (3.7 to 6.7 s at `--timeout 1` before), so the check runs
//! in a worker process that is killed at the deadline; the answer is
//! unknown, and no worker is left running.

use std::process::Command;
use std::time::{Duration, Instant};

#[allow(dead_code, reason = "this file uses only `left_running`")]
mod common;
use common::left_running;

#[test]
fn a_check_whose_solver_ignores_its_interrupt_ends_at_the_deadline() {
    let dir = std::env::temp_dir().join(format!("tileproof-deadline-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let case = dir.join("shift.txt");
    std::fs::write(
        &case,
        "var r0 in [-9223372036854775808, 9223372036854775807]\nexpr 16 mod (r0 >> r0)\nexpect 16 mod (r0 >> r0) + 0\n",
    )
    .unwrap();
    let mark = format!("deadline-{}", std::process::id());
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_tileproof"))
        .args(["check", "--timeout", "1", case.to_str().unwrap()])
        .env("TILEPROOF_TEST_MARK", &mark)
        .output()
        .unwrap();
    let took = start.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    // Unknown is not proved: exit 2.
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(stdout.contains("unknown"), "{stdout}");
    // The timeout plus the worker's grace, plus starting tileproof on a
    // loaded machine: well under the seconds the solver takes.
    assert!(took < Duration::from_millis(2500), "{took:?}: {stdout}");
    // No worker outlives the command (an idle one exits at the end of its
    // input; a killed one was reaped).
    assert_eq!(
        left_running(&mark),
        Vec::<u32>::new(),
        "workers left running"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
