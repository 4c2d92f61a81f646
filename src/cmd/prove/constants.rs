//! `prove --simplifier CMD --all-constants`: a peer's rule proved or
//! refuted for every constant (issue 48). Its translation into the DSL was
//! checked against the rule on its instances (`fuzz::translation`); here
//! the verifier proves each of its DSL rules: first over the unbounded
//! integers where the peer's profile says its integers are (tinygrad's
//! Python ints: a fixed width's counterexample that only wraps is none
//! there), then at every width asked (one width-generic query covers
//! every width of 8 bits and more, and so the unbounded integers too). A
//! counterexample is turned into an instance and given to the peer's own
//! rule, judged and classified like any of its instances: only a failure
//! there refutes it.

use engine::rules::Rule;
use fuzz::checks::Validator;
use fuzz::peer::Peer;
use fuzz::peer_rules::{self, Options, PeerRule, RuleReport};
use fuzz::subject::{Integers, Subject};
use fuzz::translation::{self, ConstantsVerdict, ProvedFor, Translation};
use std::time::Instant;
use verify::counterexample::{Counterexample, Failure};
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
    let mut unbounded_why = None;
    if peer.profile().integers == Integers::Unbounded {
        match unbounded(peer, rule, rep, opts, prove, validator, &rules) {
            Ok(v) => {
                rep.constants = Some(v);
                return;
            }
            Err(open) => unbounded_why = Some(open),
        }
    }
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
        let v = match (verdict(peer, rule, rep, opts, validator, &rows), &unbounded_why) {
            // A counterexample over the peer's own unbounded integers that
            // its rule passed (declined, or built something else there)
            // leaves a fixed-width proof without force: under the strict
            // model an unconstrained operand can overflow, and that proof
            // may rest on it. Only a refutation stands.
            (Ok(ConstantsVerdict::Proved { .. }), Some(u)) if u.counterexample => open(format!(
                "{}; the fixed widths prove the translation, but a proof under their bounded model is not one for unbounded integers",
                u.why
            )),
            (Ok(v), _) => v,
            (Err(why), Some(u)) => open(format!("{}; {why}", u.why)),
            (Err(why), None) => open(why),
        };
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

/// The Z3 seeds a rule's fixed-width proof is tried again with when none
/// of its counterexamples fails the peer's rule.
const RETRY_SEEDS: [u32; 3] = [1, 2, 3];

/// Why the unbounded-integer queries left a rule open.
struct Open {
    why: String,
    /// Some query had a counterexample (confirmed by the interpreter
    /// under the unbounded model) that the peer's rule did not fail.
    counterexample: bool,
}

/// The verdict over the unbounded integers (a peer whose integers are):
/// proved where every DSL rule's unbounded-integer query is, refuted where
/// its counterexample fails the peer's rule; otherwise why not, and the
/// fixed widths are tried.
fn unbounded(
    peer: &Peer,
    rule: &PeerRule,
    rep: &mut RuleReport,
    opts: &Options,
    prove: &ProveOptions,
    validator: Option<&Validator<'_>>,
    rules: &[Rule],
) -> Result<ConstantsVerdict, Open> {
    // One query bound for all of them: what they leave open goes on to
    // the fixed widths' own bounds.
    let prove = ProveOptions {
        deadline: prove
            .query_bound()
            .and_then(|b| Instant::now().checked_add(b)),
        ..prove.clone()
    };
    let rows: Vec<RuleResult> = rules
        .iter()
        .map(|r| verify::remote::prove_unbounded(r, &prove))
        .collect();
    if rows
        .iter()
        .all(|r| matches!(r.verdict, ProofVerdict::Proved))
    {
        return Ok(ConstantsVerdict::Proved {
            scope: ProvedFor::UnboundedIntegers,
        });
    }
    let counterexample = rows
        .iter()
        .any(|r| matches!(r.verdict, ProofVerdict::Failed { .. }));
    let why = match refute(peer, rule, rep, opts, validator, &rows) {
        Ok(v) => return Ok(v),
        Err(Some(why)) => why,
        Err(None) => rows
            .iter()
            .find_map(|r| not_settled(&r.verdict).map(|why| format!("{}: {why}", r.rule)))
            .unwrap_or_else(|| "its counterexamples were not realized as cases".into()),
    };
    Err(Open {
        why: format!("not proved for unbounded integers ({why})"),
        counterexample,
    })
}

/// The verdict the fixed-width proof rows give: proved where every row
/// is, refuted where a counterexample fails the peer's rule; otherwise
/// why the rule stays open.
fn verdict(
    peer: &Peer,
    rule: &PeerRule,
    rep: &mut RuleReport,
    opts: &Options,
    validator: Option<&Validator<'_>>,
    rows: &[RuleResult],
) -> Result<ConstantsVerdict, String> {
    if !rows.is_empty()
        && rows
            .iter()
            .all(|r| matches!(r.verdict, ProofVerdict::Proved))
    {
        let mut widths: Vec<u32> = rows.iter().map(|r| r.width).collect();
        widths.sort_unstable();
        widths.dedup();
        let scope = if rows.iter().all(|r| r.width_generic) {
            ProvedFor::EveryWidth { widths }
        } else {
            ProvedFor::Widths { widths }
        };
        return Ok(ConstantsVerdict::Proved { scope });
    }
    match refute(peer, rule, rep, opts, validator, rows) {
        Ok(v) => Ok(v),
        Err(Some(why)) => Err(why),
        Err(None) => {
            let why = rows
                .iter()
                .find_map(|r| {
                    not_settled(&r.verdict)
                        .map(|why| format!("{} at width {}: {why}", r.rule, r.width))
                })
                .unwrap_or_else(|| {
                    "the prover's counterexamples were not realized as cases".into()
                });
            Err(format!("not proved for every constant: {why}"))
        }
    }
}

/// The rows' counterexamples, each made an instance and given to the
/// peer's rule: refuted at the first the peer's rule fails on; else why
/// none refutes it (`None`: there was none).
fn refute(
    peer: &Peer,
    rule: &PeerRule,
    rep: &mut RuleReport,
    opts: &Options,
    validator: Option<&Validator<'_>>,
    rows: &[RuleResult],
) -> Result<ConstantsVerdict, Option<String>> {
    // The widest counterexample first: the peer judges its instances at
    // its own width (tinygrad: 64 bits), where a narrow width's overflow
    // is no failure.
    let mut failed: Vec<(&Counterexample, &str)> = rows
        .iter()
        .filter_map(|r| match &r.verdict {
            ProofVerdict::Failed { counterexample } => counterexample
                .case
                .as_deref()
                .map(|c| (&**counterexample, c)),
            _ => None,
        })
        .collect();
    failed.sort_by_key(|(c, _)| std::cmp::Reverse(c.width));
    let mut not_confirmed = Vec::new();
    for (cex, case) in &failed {
        let program = match engine::parse::parse_program(case) {
            Ok(p) => p,
            Err(e) => {
                not_confirmed.push(format!("{}: the case does not read back ({e})", at(cex)));
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
                return Ok(ConstantsVerdict::Refuted {
                    width: cex.width,
                    unbounded: cex.unbounded,
                    counterexample: case.to_string(),
                    peer_failure,
                });
            }
            Err(why) => not_confirmed.push(format!("{}: {why}", at(cex))),
        }
    }
    if not_confirmed.is_empty() {
        return Err(None);
    }
    // The usual reason at a fixed width: under the prover's bounded model
    // the target is undefined where the source is not (an overflow at a
    // fixed width, or an op on an unconstrained operand that could
    // overflow), which a peer of unbounded integers (tinygrad) does not
    // have.
    let overflow = peer.profile().integers == Integers::Unbounded
        && failed
            .iter()
            .all(|(c, _)| !c.unbounded && c.failure == Failure::TargetUndefined);
    Err(Some(format!(
        "{}the prover's counterexamples do not fail the peer's rule: {}",
        if overflow {
            "not proved: every counterexample is the target undefined under the prover's bounded model (an overflow the peer's unbounded integers do not have), and "
        } else {
            ""
        },
        not_confirmed.join("; ")
    )))
}

/// Where a row's counterexample was found: at its width, or over the
/// unbounded integers.
fn at(cex: &Counterexample) -> String {
    if cex.unbounded {
        "unbounded integers".into()
    } else {
        format!("width {}", cex.width)
    }
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
