//! Running Z3: one check under a wall-clock bound, and why it gave up.

use std::time::Duration;
use z3::{SatResult, Solver};

/// Runs one solver check, interrupting it after `timeout`.
///
/// Not Z3's own `timeout` parameter: in libz3 4.8.12 its timer pool can
/// deadlock when several threads time out at once (Z3 issue #5990), which
/// hung a parallel proof run here. An interrupt from a watchdog thread
/// does the same job; an interrupt that arrives after the check returned
/// does not affect later checks (probed here with 4.8.12).
pub fn check_within(solver: &Solver, timeout: Duration) -> SatResult {
    let handle = solver.get_context().handle();
    std::thread::scope(|s| {
        let (done, wait) = std::sync::mpsc::channel::<()>();
        let handle = &handle;
        s.spawn(move || {
            if wait.recv_timeout(timeout) == Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
                handle.interrupt();
            }
        });
        let r = solver.check();
        drop(done);
        r
    })
}

pub fn unknown_reason(solver: &Solver, what: &str) -> String {
    format!(
        "{what}: {}",
        solver
            .get_reason_unknown()
            .unwrap_or_else(|| "unknown".into())
    )
}
