//! Two solvers on a hard query: when Z3 leaves a rule's bitvector query
//! unknown in its share, cvc5 starts on the same query (its SMT-LIB2 text)
//! while Z3 goes on with the integer encoding; the first definite answer
//! wins and the other solver is stopped (Z3 interrupted through
//! [`crate::solver::with_stop`], cvc5 killed). Bitvector queries only:
//! they are exact at their width, and there cvc5 settles queries that Z3
//! 4.8.12 does not (a truncating remainder of a remainder by a divisor of
//! its symbolic modulus at 8 bits: cvc5 in 4-6 s, Z3 not in 20). Which
//! solver answered is recorded (the row's `solver`, the cache entry's).

use crate::cvc5;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;
use z3::ast::Bool;
use z3::Solver;

/// The solver that settled a query.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum SolverKind {
    #[default]
    Z3,
    Cvc5,
    /// No solver: every assignment walked by the reference interpreter
    /// ([`crate::exhaustive`]); never cached.
    Interpreter,
}

impl SolverKind {
    pub fn name(self) -> &'static str {
        match self {
            SolverKind::Z3 => "z3",
            SolverKind::Cvc5 => "cvc5",
            SolverKind::Interpreter => "interpreter",
        }
    }

    /// Its version, as a cache entry records it.
    pub fn version(self) -> String {
        match self {
            SolverKind::Z3 => z3::full_version().to_string(),
            SolverKind::Cvc5 => cvc5::version().unwrap_or_default(),
            SolverKind::Interpreter => format!("tileproof {}", env!("CARGO_PKG_VERSION")),
        }
    }

    pub const ALL: [SolverKind; 2] = [SolverKind::Z3, SolverKind::Cvc5];
}

/// What cvc5 said of a rule's query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Settled {
    /// The premise never holds.
    Vacuous,
    /// No input fails.
    Proved,
    /// An input fails: cvc5's model (`define-fun` lines).
    Fails(String),
    /// Not settled, and why.
    Unknown(String),
}

/// cvc5 running on one query in the background.
pub struct Race {
    stop: Arc<AtomicBool>,
    answered: Arc<AtomicBool>,
    handle: JoinHandle<Settled>,
}

/// The name of the Bool constant that stands for "some obligation fails"
/// in the script cvc5 is given.
const FAILS: &str = "portfolio.fails";

impl Race {
    /// Starts cvc5 on the query whose premise is `premise` and whose
    /// obligations fail where one of `failures` holds, for `timeout`.
    /// The script checks the premise first (vacuity), then the failures
    /// under it.
    pub fn start(premise: &Bool, failures: &[Bool], timeout: Duration) -> Race {
        let solver = Solver::new();
        solver.assert(premise);
        let fails = Bool::new_const(FAILS);
        solver.assert(fails.eq(Bool::or(failures)));
        let script = format!(
            "{}\n(check-sat-assuming (|{FAILS}|))\n(get-model)\n",
            solver.to_smt2()
        );
        let stop = Arc::new(AtomicBool::new(false));
        let answered = Arc::new(AtomicBool::new(false));
        let (s, a) = (stop.clone(), answered.clone());
        let handle = std::thread::spawn(move || {
            let settled = settle(cvc5::script(&script, timeout, &s));
            if !matches!(settled, Settled::Unknown(_)) {
                a.store(true, Ordering::Relaxed);
            }
            settled
        });
        Race {
            stop,
            answered,
            handle,
        }
    }

    /// Set once cvc5 has a definite answer: Z3's work on the query stops
    /// ([`crate::solver::with_stop`]).
    pub fn answered(&self) -> Arc<AtomicBool> {
        self.answered.clone()
    }

    /// Waits for cvc5's answer.
    pub fn finish(self) -> Settled {
        self.handle
            .join()
            .unwrap_or_else(|_| Settled::Unknown("cvc5's thread panicked".into()))
    }

    /// Stops cvc5 (Z3 answered first): killed if it still runs.
    pub fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.handle.join();
    }
}

/// Reads the script's output: the premise's check, then the failures'.
fn settle(out: Result<String, String>) -> Settled {
    let out = match out {
        Ok(o) => o,
        Err(why) => return Settled::Unknown(format!("cvc5: {why}")),
    };
    let mut lines = out.lines().map(str::trim).filter(|l| !l.is_empty());
    match (lines.next(), lines.next()) {
        (Some("unsat"), _) => Settled::Vacuous,
        (Some("sat"), Some("unsat")) => Settled::Proved,
        (Some("sat"), Some("sat")) => Settled::Fails(lines.collect::<Vec<_>>().join("\n")),
        (Some("sat"), other) => Settled::Unknown(format!(
            "cvc5: {}",
            other.unwrap_or("no answer for the obligations in the time left")
        )),
        (other, _) => Settled::Unknown(format!("cvc5: {}", other.unwrap_or("no answer"))),
    }
}

/// Asserts cvc5's model (its `define-fun` lines) on `solver`, which holds
/// the same query: Z3 then finds the failing input at once, and the usual
/// reading of a counterexample applies.
pub fn pin_model(solver: &Solver, model: &str) {
    solver.from_string(cvc5::model_as_assertions(model));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scripts_answers_read_as_vacuous_proved_fails_or_unknown() {
        assert_eq!(
            settle(Ok("unsat\n(error \"x\")\n".into())),
            Settled::Vacuous
        );
        assert_eq!(settle(Ok("sat\nunsat\n".into())), Settled::Proved);
        assert_eq!(
            settle(Ok("sat\nsat\n(\n(define-fun x () Int 5)\n)\n".into())),
            Settled::Fails("(\n(define-fun x () Int 5)\n)".into())
        );
        assert!(matches!(
            settle(Ok("sat\nunknown\n".into())),
            Settled::Unknown(_)
        ));
        assert!(matches!(settle(Err("timeout".into())), Settled::Unknown(_)));
    }
}
