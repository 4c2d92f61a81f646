//! `prove --simplifier CMD --all-constants`: a peer's rule proved or
//! refuted for every constant (issue 48). Its translation into the DSL was
//! checked against the rule on its instances (`fuzz::translation`); here
//! the verifier proves each of its DSL rules at every width asked (one
//! width-generic query covers every width of 8 bits and more, and so the
//! unbounded integers of a peer like tinygrad), and a counterexample is
//! turned into an instance and given to the peer's own rule, judged and
//! classified like any of its instances: only a failure there refutes it.

use fuzz::checks::Validator;
use fuzz::peer::Peer;
use fuzz::peer_rules::{self, Options, PeerRule, RuleReport};
use fuzz::subject::{Integers, Subject};
use fuzz::translation::{self, ConstantsVerdict, Translation};
use std::time::Instant;
use verify::counterexample::Failure;
use verify::prove::{Options as ProveOptions, ProofVerdict, RuleResult};

/// How many query bounds one peer rule's proofs may take in all.
const RULE_QUERIES: u32 = 4;

/// Settles `rep`'s verdict for every constant where its instances left it
/// open (a translation that agreed with the rule).
pub fn settle(
    peer: &Peer,
    rule: &PeerRule,
    rep: &mut RuleReport,
    opts: &Options,
    prove: &ProveOptions,
    validator: Option<&Validator<'_>>,
) {
    if rep.constants.is_some() {
        return;
    }
    let Some(agreement) = &rep.agreement else {
        return;
    };
    let instances = rep.judged;
    let open = |why: String| ConstantsVerdict::CheckedOnInstances { instances, why };
    if !agreement.holds() {
        rep.constants = Some(open(format!(
            "the translation was never seen to fire with the rule ({} instances both declined): it is not proved",
            agreement.both_declined
        )));
        return;
    }
    let Some(Translation::Rules(texts)) = &rule.translation else {
        return;
    };
    let rules = match translation::parse(texts) {
        Ok(r) => r,
        Err(e) => {
            rep.constants = Some(ConstantsVerdict::NotTranslatable { why: e.to_string() });
            return;
        }
    };
    // One rule's proofs together end within RULE_QUERIES query bounds: a
    // rule whose queries the solvers cannot settle (bitwise `&` at 32 and
    // 64 bits) stays open without holding the run.
    let bound = prove.query_bound().map(|b| b * RULE_QUERIES);
    let prove = ProveOptions {
        deadline: bound.and_then(|b| Instant::now().checked_add(b)),
        ..prove.clone()
    };
    // A counterexample the peer's rule cannot be given (an earlier rule of
    // the peer settles it first, as Morok's range analysis settles a point
    // range) is not the only one: Z3's seed picks another model, so the
    // proof is tried again with a few seeds (uncached: the cache keeps one
    // counterexample) before the rule is left open.
    let mut first = None;
    for (k, seed) in std::iter::once(prove.seed).chain(RETRY_SEEDS).enumerate() {
        let prove = ProveOptions {
            seed,
            cache: if k == 0 { prove.cache.clone() } else { None },
            ..prove.clone()
        };
        let rows: Vec<RuleResult> = rules
            .iter()
            .flat_map(|r| verify::schedule::prove_rule_widths(r, &prove, &|_: &RuleResult| {}))
            .collect();
        let v = verdict(peer, rule, rep, opts, validator, &rows, &open);
        let unconfirmed = matches!(v, ConstantsVerdict::CheckedOnInstances { .. })
            && rows
                .iter()
                .any(|r| matches!(r.verdict, ProofVerdict::Failed { .. }));
        if !unconfirmed {
            rep.constants = Some(v);
            return;
        }
        first.get_or_insert(v);
    }
    rep.constants = first;
}

/// The Z3 seeds a rule's proof is tried again with when none of its
/// counterexamples fails the peer's rule.
const RETRY_SEEDS: [u32; 3] = [1, 2, 3];

/// The verdict the proof rows give: proved where every row is, refuted
/// where a counterexample fails the peer's rule, open otherwise.
fn verdict(
    peer: &Peer,
    rule: &PeerRule,
    rep: &mut RuleReport,
    opts: &Options,
    validator: Option<&Validator<'_>>,
    rows: &[RuleResult],
    open: &impl Fn(String) -> ConstantsVerdict,
) -> ConstantsVerdict {
    if !rows.is_empty()
        && rows
            .iter()
            .all(|r| matches!(r.verdict, ProofVerdict::Proved))
    {
        let mut widths: Vec<u32> = rows.iter().map(|r| r.width).collect();
        widths.sort_unstable();
        widths.dedup();
        return ConstantsVerdict::Proved {
            width_generic: rows.iter().all(|r| r.width_generic),
            widths,
        };
    }
    // The widest counterexample first: the peer judges its instances at
    // its own width (tinygrad: 64 bits), where a narrow width's overflow
    // is no failure.
    let mut failed: Vec<(&RuleResult, &str)> = rows
        .iter()
        .filter_map(|r| match &r.verdict {
            ProofVerdict::Failed { counterexample } => {
                counterexample.case.as_deref().map(|c| (r, c))
            }
            _ => None,
        })
        .collect();
    failed.sort_by_key(|(r, _)| std::cmp::Reverse(r.width));
    let mut not_confirmed = Vec::new();
    for (row, case) in &failed {
        let program = match engine::parse::parse_program(case) {
            Ok(p) => p,
            Err(e) => {
                not_confirmed.push(format!(
                    "width {}: the case does not read back ({e})",
                    row.width
                ));
                continue;
            }
        };
        match peer_rules::judge_refutation(peer, rule, opts, validator, &program) {
            Ok(f) => {
                let peer_failure = match &f.backend {
                    Some(b) => format!("{} ({b})", f.message),
                    None => f.message.clone(),
                };
                rep.findings.push(f);
                return ConstantsVerdict::Refuted {
                    width: row.width,
                    counterexample: case.to_string(),
                    peer_failure,
                };
            }
            Err(why) => not_confirmed.push(format!("width {}: {why}", row.width)),
        }
    }
    if !not_confirmed.is_empty() {
        // The usual reason: under the prover's bounded model the target is
        // undefined where the source is not (an overflow at a fixed width,
        // or an op on an unconstrained operand that could overflow), which
        // a peer of unbounded integers (tinygrad) does not have; the
        // prover's options have no unbounded model yet.
        let overflow = peer.profile().integers == Integers::Unbounded
            && failed.iter().all(|(r, _)| {
                matches!(&r.verdict, ProofVerdict::Failed { counterexample } if counterexample.failure == Failure::TargetUndefined)
            });
        return open(format!(
            "{}the prover's counterexamples do not fail the peer's rule: {}",
            if overflow {
                "not proved: every counterexample is the target undefined under the prover's bounded model (an overflow the peer's unbounded integers do not have), and "
            } else {
                ""
            },
            not_confirmed.join("; ")
        ));
    }
    let why = rows
        .iter()
        .find_map(|r| {
            not_settled(&r.verdict).map(|why| format!("{} at width {}: {why}", r.rule, r.width))
        })
        .unwrap_or_else(|| "the prover's counterexamples were not realized as cases".into());
    open(format!("not proved for every constant: {why}"))
}

/// Why a row neither proves nor refutes its rule (`None` where it does).
fn not_settled(v: &ProofVerdict) -> Option<String> {
    match v {
        ProofVerdict::Proved | ProofVerdict::Failed { .. } => None,
        ProofVerdict::Unknown { reason } => Some(format!("unknown ({reason})")),
        ProofVerdict::Vacuous => Some("vacuous: its guard can never hold".into()),
        ProofVerdict::Disputed { reason } => Some(format!("disputed ({reason})")),
        ProofVerdict::InternalError { internal_error } => {
            Some(format!("internal error ({internal_error})"))
        }
    }
}
