//! The second opinion: every rule Z3 proved is checked again by another
//! solver (cvc5, Debian's `cvc5` command-line solver) on another encoding
//! (bit-exact bitvectors at width 8, built by `encode`'s bitvector
//! primitives, while Z3's proofs are over bounded or width-generic
//! integers), so that a bug in one solver or in one encoding cannot make a
//! rule pass on its own: the integer encoding's division, polynomial and
//! lemma machinery is not involved in the bitvector query at all.
//!
//! The query is the rule's at width 8 in bitvectors, every type instance,
//! the three failure conditions as one disjunction: unsat means cvc5
//! agrees; sat is a disagreement, which fails the rule; a timeout or an
//! error means "not cross-checked", never a pass. Nothing is cached: the
//! cross-check is opt-in (`tileproof prove --cross-check`, the nightly
//! workflow) and always runs cvc5. Where cvc5 is not installed the command
//! refuses the flag rather than skip the check.

use crate::counterexample::{failure_condition, Failure};
use crate::cvc5::{self, Answer};
use crate::encode::{Enc, Mode};
use crate::query::RuleQuery;
use engine::rules::Rule;
use serde::Serialize;
use std::time::{Duration, Instant};
use z3::ast::Bool;
use z3::Solver;

/// The width the cross-check encodes `index` at.
pub const WIDTH: u32 = 8;

/// The cross-check of one rule.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum CrossCheck {
    /// Not asked for (or the rule was not proved at every width).
    #[default]
    NotRun,
    /// The second solver agrees: its query is unsat.
    Agrees {
        solver: String,
        encoding: String,
        seconds: f64,
    },
    /// The second solver finds a counterexample where Z3 found none: the
    /// rule fails.
    Disagrees {
        solver: String,
        encoding: String,
        detail: String,
        seconds: f64,
    },
    /// The second solver could not answer: the proof stands on Z3 alone.
    NotCrossChecked { reason: String, seconds: f64 },
}

impl CrossCheck {
    pub fn not_run(&self) -> bool {
        *self == CrossCheck::NotRun
    }

    pub fn name(&self) -> &'static str {
        match self {
            CrossCheck::NotRun => "not-run",
            CrossCheck::Agrees { .. } => "agrees",
            CrossCheck::Disagrees { .. } => "disagrees",
            CrossCheck::NotCrossChecked { .. } => "not-cross-checked",
        }
    }
}

/// The cross-check query of `rule`: every type instance at width 8 in
/// bitvectors, premise and the disjunction of the failure conditions, as
/// SMT-LIB2 texts.
pub fn queries(rule: &Rule) -> Vec<String> {
    let enc = Enc::new(Mode::Bv, WIDTH);
    rule.instances()
        .iter()
        .map(|types| {
            crate::poly::take_nonlinear();
            let q = RuleQuery::new(rule, types, enc);
            let conds: Vec<Bool> = Failure::ALL
                .iter()
                .map(|&f| failure_condition(f, &q.src, &q.tgt, &enc, q.root_dtype))
                .collect();
            let s = Solver::new();
            s.assert(&q.premise);
            s.assert(Bool::or(&conds));
            s.to_smt2()
        })
        .collect()
}

/// Cross-checks one rule with cvc5 (see the module's documentation),
/// each type instance's query within `timeout`. Where cvc5 cannot answer
/// the bitvector query, it is given `integer()`'s queries (the ones Z3
/// proved: each must be unsat), which checks the solver but not the
/// encoding; the result's `encoding` says which was checked.
pub fn cross_check(
    rule: &Rule,
    timeout: Duration,
    integer: &dyn Fn() -> Vec<String>,
) -> CrossCheck {
    let start = Instant::now();
    let secs = || start.elapsed().as_secs_f64();
    if cvc5::version().is_none() {
        return CrossCheck::NotCrossChecked {
            reason: format!("cvc5 (`{}`) does not run", cvc5::path()),
            seconds: 0.0,
        };
    }
    let disagrees = |encoding: String, at: &str| CrossCheck::Disagrees {
        solver: "cvc5".into(),
        encoding,
        detail: format!("cvc5 finds an input where the rule fails (sat) {at}, where Z3 proved it"),
        seconds: secs(),
    };
    let bitvector = format!("bitvector, width {WIDTH}");
    let mut bv_unknown = None;
    for smt in queries(rule) {
        match cvc5::run(&smt, timeout) {
            Answer::Unsat => {}
            Answer::Sat(_) => return disagrees(bitvector, &format!("at width {WIDTH}")),
            Answer::Unknown(reason) => {
                bv_unknown = Some(reason);
                break;
            }
        }
    }
    let Some(bv_reason) = bv_unknown else {
        return CrossCheck::Agrees {
            solver: "cvc5".into(),
            encoding: bitvector,
            seconds: secs(),
        };
    };
    let encoding =
        format!("bounded-integer, Z3's own queries (bitvector at width {WIDTH}: {bv_reason})");
    for smt in integer() {
        match cvc5::run(&smt, timeout) {
            Answer::Unsat => {}
            Answer::Sat(_) => return disagrees(encoding, "in Z3's own integer query"),
            Answer::Unknown(reason) => {
                return CrossCheck::NotCrossChecked {
                    reason: format!(
                        "cvc5: bitvector at width {WIDTH}: {bv_reason}; integer: {reason}"
                    ),
                    seconds: secs(),
                }
            }
        }
    }
    CrossCheck::Agrees {
        solver: "cvc5".into(),
        encoding,
        seconds: secs(),
    }
}
