//! Deciding whether a target refines its source: the one path every
//! command uses, in the order the walk policy gives a proof
//! (`engine::walk::Purpose::Proof`). SMT first (`verify::check`, over the
//! variables' bounds, which also walks a small domain with the
//! interpreter; in a worker process killed at the timeout,
//! `verify::worker`, so that the timeout holds whatever Z3 does); where the solver cannot decide (a timeout, a node count
//! past its limit), an exhaustive JIT walk of the domain
//! (`fuzz::oracle::enumerate`) where the policy walks it compiled: a walk
//! of every point is a proof at that width, a sample never is. Also the
//! answer as the fuzz crate's [`Validation`], and the validator hook built
//! on it.

use engine::ir::{Graph, NodeId};
use engine::semantics::Model;
use engine::walk::Purpose;
use fuzz::checks::{Validation, ValidationVerdict};
use std::time::Duration;
use verify::check::{counterexample_at, CheckResult, Method};
use verify::remote::check_within_deadline;

/// `tgt` against `src` under `model`: SMT, then the JIT's walk of a small
/// domain where SMT says unknown.
pub fn decide(
    g: &Graph,
    src: &[NodeId],
    tgt: &[NodeId],
    model: impl Into<Model>,
    timeout: Duration,
) -> CheckResult {
    let model = model.into();
    match check_within_deadline(g, src, tgt, model, timeout) {
        CheckResult::Unknown { reason } => walk(g, src, tgt, model, reason),
        r => r,
    }
}

/// What an exhaustive JIT walk says after the solver said `reason`:
/// equivalent or a counterexample (complete at the model's width), else
/// still unknown with both reasons. The JIT computes tileproof's own
/// semantics, so a peer's relaxed model is never walked.
pub fn walk(
    g: &Graph,
    src: &[NodeId],
    tgt: &[NodeId],
    model: Model,
    reason: String,
) -> CheckResult {
    let width = model.width;
    let why = if model != Model::from(width) {
        "the JIT walks only tileproof's own semantics, not this model".to_string()
    } else {
        match fuzz::oracle::enumerate(g, src, tgt, width) {
            None => format!(
                "too many points to enumerate (over {})",
                Purpose::Proof.limits().whole
            ),
            Some(Err(e)) => format!("the JIT could not compile it: {e}"),
            Some(Ok(rep)) => {
                return match rep.failure {
                    None => CheckResult::Equivalent {
                        method: Method::Jit,
                    },
                    Some(f) => {
                        let env: Vec<i128> = f.env.iter().map(|&v| v as i128).collect();
                        counterexample_at(g, src, tgt, &env, f.failure, Method::Jit, model)
                    }
                };
            }
        }
    };
    CheckResult::Unknown {
        reason: format!("{reason}; {why}"),
    }
}

/// A decision as the fuzz crate's validation: a counterexample is a
/// failure (with its point, and whether the interpreter confirms it);
/// unknown is neither a pass nor a finding.
pub fn validation_of(g: &Graph, r: &CheckResult) -> Validation {
    let (verdict, detail, point) = match r {
        CheckResult::Counterexample {
            failure,
            method,
            point,
            confirmed,
            ..
        } => (
            ValidationVerdict::Counterexample,
            Some(format!(
                "{}: {failure} at {}; {}",
                if method.by_enumeration() {
                    method.to_string()
                } else {
                    format!("smt ({method})")
                },
                engine::print::point(g, point),
                match confirmed {
                    Ok(v) => format!("confirmed by the interpreter: {v}"),
                    Err(e) => format!("NOT confirmed by the interpreter: {e}"),
                }
            )),
            Some(point.iter().map(|p| p.1).collect()),
        ),
        CheckResult::Unknown { reason } => (ValidationVerdict::Unknown, Some(reason.clone()), None),
        CheckResult::Equivalent { method } if method.by_enumeration() => (
            ValidationVerdict::EquivalentByEnumeration,
            Some(format!("proved by {method}")),
            None,
        ),
        CheckResult::Equivalent { method } => (
            ValidationVerdict::Equivalent,
            Some(format!("proved by {method}")),
            None,
        ),
        CheckResult::Vacuous => (ValidationVerdict::Vacuous, None, None),
    };
    Validation {
        fails: verdict == ValidationVerdict::Counterexample,
        verdict,
        detail,
        point,
    }
}

/// The prover of missed simplifications in a campaign: SMT alone under
/// `model` (the hunter has already walked every domain a walk settles
/// quickly; a long walk here would cost the campaign more than the case is
/// worth), as a [`Validation`].
pub fn smt_validator(
    model: impl Into<Model>,
    timeout: Duration,
) -> impl Fn(&Graph, &[NodeId], &[NodeId]) -> Validation + Sync {
    let model = model.into();
    // `timeout` bounds the whole query, every attempt of it (hints, the
    // integer encoding after bitvectors), and holds: a campaign's batch
    // waits for it, and Z3 4.8 can take seconds to heed an interrupt (a
    // shift by a variable), so the query runs where it is stopped.
    move |g, src, tgt| validation_of(g, &check_within_deadline(g, src, tgt, model, timeout))
}

/// The validator hook: [`decide`] under `model`, as a [`Validation`].
pub fn validator(
    model: impl Into<Model>,
    timeout: Duration,
) -> impl Fn(&Graph, &[NodeId], &[NodeId]) -> Validation + Sync {
    let model = model.into();
    move |g, src, tgt| validation_of(g, &decide(g, src, tgt, model, timeout))
}
