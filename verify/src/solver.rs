//! Running Z3: one check under a wall-clock bound, why it gave up, and
//! how it ended (recorded for a query's account of its time,
//! [`crate::budget`]).

use serde::{Deserialize, Serialize};
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};
use z3::{SatResult, Solver};

/// How many solver timeouts one rule at one width may take in all: the
/// wall time of a query is at most `QUERY_FACTOR * timeout` plus the time
/// to build it and read a counterexample (a fraction of a second). Not 1:
/// a query runs several checks (vacuity, three obligations, a case split,
/// a retry with another seed), and a hard built-in rule takes up to 5
/// timeouts in all at the default 10 s on a 2-core machine
/// (floor_nested_div_add at 64 bits: 41.6 s and 49.6 s), more under load: 6
/// left it unknown (60 s) in a run of the built-in set beside two other
/// builds. 10 keeps a margin of 2.
pub const QUERY_FACTOR: u32 = 10;

/// How often the watchdog interrupts again once a check is overdue.
const REINTERRUPT: Duration = Duration::from_millis(10);

thread_local! {
    /// The deadline of the query this thread is working on (see
    /// [`with_deadline`]).
    static DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
    /// The deadline of the whole run (see [`with_budget`]).
    static BUDGET: Cell<Option<Instant>> = const { Cell::new(None) };
    /// The checks made on this thread inside [`recording`], if it runs.
    static CALLS: RefCell<Option<Vec<Call>>> = const { RefCell::new(None) };
    /// Set by another solver that answered the query this thread works on
    /// (see [`with_stop`]).
    static STOP: RefCell<Option<Arc<AtomicBool>>> = const { RefCell::new(None) };
}

/// How a check ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum End {
    /// Z3 answered sat or unsat.
    Answered,
    /// Z3 said unknown before its share ran out ("incomplete"): more time
    /// would not change that answer.
    GaveUp,
    /// Interrupted when its share ran out: a larger share might settle it.
    Cancelled,
    /// Interrupted at the query's deadline or the run's budget.
    OutOfTime,
    /// Not started: no time was left.
    NotStarted,
    /// Interrupted because another solver of the portfolio answered.
    Stopped,
}

/// One solver check: what it checked (labels from [`labelled`]), the
/// share it was given, the seconds it ran and how it ended.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Call {
    pub what: String,
    pub share: f64,
    pub seconds: f64,
    pub end: End,
}

/// Runs `f` and returns the checks it made on this thread, in order. A
/// nested `recording` keeps its checks to itself: a pool thread may run
/// another query inside this one (rayon's work stealing), and that
/// query's calls are not this one's.
pub fn recording<T>(f: impl FnOnce() -> T) -> (T, Vec<Call>) {
    struct Restore(Option<Vec<Call>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let outer = self.0.take();
            CALLS.with_borrow_mut(|c| *c = outer);
        }
    }
    let restore = Restore(CALLS.with_borrow_mut(|c| c.replace(Vec::new())));
    let r = f();
    let calls = CALLS.with_borrow_mut(Option::take).unwrap_or_default();
    drop(restore);
    (r, calls)
}

/// Runs `f`, prefixing `what` to the label of every check it makes (inner
/// labels come last: `value-differs with hints`).
pub fn labelled<T>(what: &str, f: impl FnOnce() -> T) -> T {
    if what.is_empty() {
        return f();
    }
    let from = CALLS.with_borrow(|c| c.as_ref().map(Vec::len));
    let r = f();
    if let Some(from) = from {
        CALLS.with_borrow_mut(|c| {
            for call in c.iter_mut().flatten().skip(from) {
                call.what = if call.what.is_empty() {
                    what.to_string()
                } else {
                    format!("{what} {}", call.what)
                };
            }
        });
    }
    r
}

pub(crate) fn record(share: Duration, seconds: f64, end: End) {
    CALLS.with_borrow_mut(|c| {
        if let Some(c) = c {
            c.push(Call {
                what: String::new(),
                share: share.as_secs_f64(),
                seconds,
                end,
            });
        }
    });
}

type Slot = std::thread::LocalKey<Cell<Option<Instant>>>;

/// Runs `f` with `slot` set to `at`, restored afterwards, on unwinding
/// too: a panic in one query must not leave its deadline on a pool thread
/// that proves the next one.
fn with_slot<T>(slot: &'static Slot, at: Instant, f: impl FnOnce() -> T) -> T {
    struct Restore(&'static Slot, Option<Instant>);
    impl Drop for Restore {
        fn drop(&mut self) {
            self.0.set(self.1);
        }
    }
    let _restore = Restore(slot, slot.get());
    slot.set(Some(at));
    f()
}

/// Runs `f` with every [`check_within`] on this thread ending by
/// `deadline`, whatever its own timeout: the bound of one query over all
/// its attempts, including the checks made by code that only knows a
/// per-check timeout (minimizing a counterexample). A nested call sets its
/// own deadline until it returns: a pool thread that runs another query
/// while this one waits (rayon's work stealing) must not cut it short.
pub fn with_deadline<T>(deadline: Instant, f: impl FnOnce() -> T) -> T {
    with_slot(&DEADLINE, deadline, f)
}

/// Runs `f` with every [`check_within`] on this thread ending by
/// `budget`, the end of a whole run (`--budget`): unlike a query's
/// deadline, a nested [`with_deadline`] (a lemma's own time) does not
/// lift it.
pub fn with_budget<T>(budget: Instant, f: impl FnOnce() -> T) -> T {
    with_slot(&BUDGET, budget, f)
}

/// The earlier of this thread's query deadline and run budget.
fn bound() -> Option<Instant> {
    match (DEADLINE.get(), BUDGET.get()) {
        (Some(d), Some(b)) => Some(d.min(b)),
        (d, b) => d.or(b),
    }
}

/// Runs `f` with every [`check_within`] on this thread stopped as soon as
/// `stop` is set, and no check started after it: a portfolio's other
/// solver answered the query ([`crate::portfolio`]).
pub fn with_stop<T>(stop: Arc<AtomicBool>, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<Arc<AtomicBool>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let outer = self.0.take();
            STOP.with_borrow_mut(|s| *s = outer);
        }
    }
    let _restore = Restore(STOP.with_borrow_mut(|s| s.replace(stop)));
    f()
}

/// The stop flag of [`with_stop`] on this thread, if any.
fn stop_flag() -> Option<Arc<AtomicBool>> {
    STOP.with_borrow(Clone::clone)
}

/// Whether another solver answered this thread's query ([`with_stop`]).
pub fn stopped() -> bool {
    stop_flag().is_some_and(|s| s.load(Ordering::Relaxed))
}

/// Whether this thread's query deadline (or run budget) has passed, or
/// another solver answered its query.
pub fn out_of_time() -> bool {
    stopped() || bound().is_some_and(|d| Instant::now() >= d)
}

/// What a call of `timeout` may take here, cut to this thread's query
/// deadline and run budget; `None` when nothing is left (for a solver run
/// outside [`check_within`], such as cvc5).
pub fn time_left(timeout: Duration) -> Option<Duration> {
    if stopped() {
        return None;
    }
    let left = bound().map_or(timeout, |d| {
        timeout.min(d.saturating_duration_since(Instant::now()))
    });
    (!left.is_zero()).then_some(left)
}

/// Runs one solver check, interrupting it after `timeout` (or at the
/// deadline of [`with_deadline`], if sooner). With no time left the check
/// is not run: unknown. How it ended goes to [`recording`]'s list.
///
/// Not Z3's own `timeout` parameter: in libz3 4.8.12 its timer pool can
/// deadlock when several threads time out at once (Z3 issue #5990), which
/// hung a parallel proof run here. An interrupt from a watchdog thread
/// does the same job, with two wrinkles of 4.8.12 (pinned by the tests
/// below): a check clears a pending interrupt when it starts, so one that
/// arrives before the solver is running is lost; the watchdog therefore
/// interrupts again every [`REINTERRUPT`] until the check returns. And an
/// interrupt that arrives after the check returned makes the next model
/// read or simplification fail until some check runs; so after any
/// interrupt an empty check clears it before this returns.
pub fn check_within(solver: &Solver, timeout: Duration) -> SatResult {
    let now = Instant::now();
    let share_end = now.checked_add(timeout).unwrap_or(now + Duration::MAX / 4);
    let deadline = bound().map_or(share_end, |d| share_end.min(d));
    let stop = stop_flag();
    let is_stopped = || stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed));
    if now >= deadline || is_stopped() {
        record(timeout, 0.0, End::NotStarted);
        return SatResult::Unknown;
    }
    let has_stop = stop.is_some();
    let ctx = solver.get_context();
    let handle = ctx.handle();
    let (r, interrupted) = std::thread::scope(|s| {
        let (done, wait) = channel::<()>();
        let handle = &handle;
        let is_stopped = &is_stopped;
        let watchdog = s.spawn(move || {
            let mut interrupted = false;
            loop {
                // With a stop flag the watchdog also looks at it, every
                // REINTERRUPT; without one it sleeps to the deadline.
                let left = deadline.saturating_duration_since(Instant::now());
                let wait_for = match (has_stop, interrupted) {
                    (_, true) => REINTERRUPT,
                    (true, false) => left.min(REINTERRUPT),
                    (false, false) => left,
                };
                if wait.recv_timeout(wait_for) != Err(RecvTimeoutError::Timeout) {
                    break;
                }
                if interrupted || Instant::now() >= deadline || is_stopped() {
                    handle.interrupt();
                    interrupted = true;
                }
            }
            interrupted
        });
        let r = solver.check();
        drop(done);
        (r, watchdog.join().unwrap_or(true))
    });
    if interrupted {
        clear_interrupt(ctx);
    }
    let end = match r {
        SatResult::Sat | SatResult::Unsat => End::Answered,
        SatResult::Unknown if !interrupted => End::GaveUp,
        SatResult::Unknown if is_stopped() => End::Stopped,
        SatResult::Unknown if share_end <= deadline => End::Cancelled,
        SatResult::Unknown => End::OutOfTime,
    };
    record(timeout, now.elapsed().as_secs_f64(), end);
    r
}

/// Clears an interrupt pending on `ctx` (one that arrived after the check
/// it was meant for returned), by running an empty check.
fn clear_interrupt(ctx: &z3::Context) {
    z3::with_z3_context(ctx, || Solver::new().check());
}

/// Why the last check of `solver` gave up, for a report.
pub fn unknown_reason(solver: &Solver, what: &str) -> String {
    if out_of_time() {
        return format!("{what}: out of time (the query's time ran out)");
    }
    format!(
        "{what}: {}",
        solver
            .get_reason_unknown()
            .unwrap_or_else(|| "unknown".into())
    )
}

/// Checks `cond` under the solver's assertions with the valid facts `hints`
/// (the encoding's quotient ranges, [`crate::encode::take_facts`]) on the
/// first attempt where `hints_first`, else on a second attempt after an
/// unknown: they help show a target defined and slow other obligations
/// down, and being valid they cannot turn a satisfiable query unsat, so
/// either answer stands. Returns with one scope pushed that holds `cond`
/// (and the hints, if the answer came with them), for the caller to read a
/// model or try more, then pop.
pub fn check_with_hints(
    solver: &Solver,
    cond: &z3::ast::Bool,
    hints: &[z3::ast::Bool],
    hints_first: bool,
    timeout: Duration,
) -> SatResult {
    for with_hints in [hints_first, !hints_first] {
        if with_hints && hints.is_empty() {
            continue;
        }
        solver.push();
        solver.assert(cond);
        if with_hints {
            hints.iter().for_each(|h| solver.assert(h));
        }
        let what = if with_hints { "with hints" } else { "" };
        let result = labelled(what, || check_within(solver, timeout));
        if result != SatResult::Unknown {
            return result;
        }
        solver.pop(1);
    }
    solver.push();
    solver.assert(cond);
    SatResult::Unknown
}

#[cfg(test)]
mod tests {
    use super::*;
    use z3::ast::{Ast, Int};

    /// x³ + y³ = z³ over positive integers: no solution (Fermat), and none
    /// that Z3's nonlinear arithmetic settles in seconds.
    fn hard() -> Solver {
        let solver = Solver::new();
        let [x, y, z] = ["x", "y", "z"].map(Int::new_const);
        let zero = Int::from_i64(0);
        for v in [&x, &y, &z] {
            solver.assert(v.gt(&zero));
        }
        let cube = |v: &Int| v * v * v;
        solver.assert((cube(&x) + cube(&y)).eq(cube(&z)));
        solver
    }

    #[test]
    fn a_check_ends_soon_after_its_timeout_however_small() {
        let solver = hard();
        for t in [1e-9, 1e-3, 0.2] {
            let start = Instant::now();
            assert_eq!(
                check_within(&solver, Duration::from_secs_f64(t)),
                SatResult::Unknown
            );
            let took = start.elapsed().as_secs_f64();
            assert!(took < t + 1.0, "timeout {t} s: the check took {took:.3} s");
        }
    }

    #[test]
    fn a_check_ends_at_the_query_deadline_before_its_own_timeout() {
        let solver = hard();
        let start = Instant::now();
        let r = with_deadline(start + Duration::from_millis(200), || {
            let r = check_within(&solver, Duration::from_secs(60));
            (r, out_of_time())
        });
        assert_eq!(r, (SatResult::Unknown, true));
        assert!(start.elapsed() < Duration::from_secs(2));
        assert!(!out_of_time(), "the deadline outlived with_deadline");
        // Past the deadline a check is not even started.
        let late = with_deadline(start, || {
            let t = Instant::now();
            (check_within(&solver, Duration::from_secs(60)), t.elapsed())
        });
        assert_eq!(late.0, SatResult::Unknown);
        assert!(late.1 < Duration::from_millis(50));
    }

    /// What the rounds of a query go by: only a check interrupted at its
    /// own share is `Cancelled` (more time might settle it).
    #[test]
    fn a_check_is_cancelled_at_its_share_and_out_of_time_at_the_deadline() {
        let solver = hard();
        let ends = |f: &dyn Fn() -> SatResult| {
            let (r, calls) = recording(f);
            assert_eq!(r, SatResult::Unknown);
            calls.iter().map(|c| c.end).collect::<Vec<End>>()
        };
        let short = Duration::from_millis(50);
        assert_eq!(ends(&|| check_within(&solver, short)), [End::Cancelled]);
        let soon = Instant::now() + short;
        let long = Duration::from_secs(60);
        let cut = || with_deadline(soon, || check_within(&solver, long));
        assert_eq!(ends(&cut), [End::OutOfTime]);
        assert_eq!(ends(&cut), [End::NotStarted]);
        let easy = Solver::new();
        easy.assert(Int::new_const("x").gt(Int::from_i64(3)));
        let (r, calls) = recording(|| labelled("easy", || check_within(&easy, long)));
        assert_eq!(r, SatResult::Sat);
        assert_eq!(calls.len(), 1);
        assert_eq!(
            (calls[0].what.as_str(), calls[0].end),
            ("easy", End::Answered)
        );
    }

    /// Why the watchdog interrupts more than once: an interrupt before the
    /// check starts is cleared by it (the check runs its full time).
    #[test]
    fn an_interrupt_before_a_check_is_lost_and_does_not_poison_it() {
        let solver = hard();
        solver.get_context().interrupt();
        let start = Instant::now();
        assert_eq!(
            check_within(&solver, Duration::from_millis(300)),
            SatResult::Unknown
        );
        assert!(start.elapsed() >= Duration::from_millis(250));
        let easy = Solver::new();
        let x = Int::new_const("x");
        easy.assert(x.gt(Int::from_i64(3)));
        easy.get_context().interrupt();
        assert_eq!(check_within(&easy, Duration::from_secs(10)), SatResult::Sat);
    }

    /// Why an interrupted check is followed by an empty one: in Z3 4.8.12
    /// an interrupt that arrives after its check returned (the watchdog
    /// racing the answer) broke model reads and simplification until some
    /// check ran (4.15.8 keeps the model); after the empty check, model
    /// reads and simplification work whichever Z3 is linked.
    #[test]
    fn an_interrupt_after_the_check_returned_is_cleared() {
        let easy = Solver::new();
        let x = Int::new_const("x");
        easy.assert(x.gt(Int::from_i64(3)));
        assert_eq!(easy.check(), SatResult::Sat);
        easy.get_context().interrupt();
        clear_interrupt(easy.get_context());
        let m = easy
            .get_model()
            .expect("a model once the interrupt is cleared");
        assert!(m.eval(&x, true).is_some());
        assert!((&x * &x).simplify().to_string().contains('x'));
    }
}
