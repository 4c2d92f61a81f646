//! Which proofs run, where and in what order: every rule at every width,
//! in parallel; a rule's width-generic attempt before its per-width
//! queries; each query in a worker process where one is installed
//! ([`crate::remote`]), so that its deadline holds; the cross-check last.

use crate::check::Method;
use crate::crosscheck::CrossCheck;
use crate::encode::Mode;
use crate::portfolio::SolverKind;
use crate::prove::{width_generic_obstacle, Options, ProofVerdict, RuleResult, WidthByWidth};
use engine::rules::Rule;
use rayon::prelude::*;

/// Proves every (rule, width) pair in parallel, calling `progress` as each
/// finishes. Results come back in (rule, width) order.
pub fn prove_all(
    rules: &[&Rule],
    opts: &Options,
    progress: &(dyn Fn(&RuleResult) + Sync),
) -> Vec<RuleResult> {
    let mut results: Vec<RuleResult> = rules
        .par_iter()
        .flat_map_iter(|r| prove_rule_widths(r, opts, progress))
        .collect();
    // Past the run's budget the second opinion is not asked for (the
    // rules keep `cross_check: not run`).
    if opts.cross_check && opts.past_deadline().is_none() {
        cross_check_results(rules, opts, &mut results);
    }
    results
}

/// Cross-checks every rule that is proved at every width it was proved at
/// (in parallel, one cvc5 run per rule and type instance), and records the
/// answer in each of its results; a disagreement disputes the rule.
pub fn cross_check_results(rules: &[&Rule], opts: &Options, results: &mut [RuleResult]) {
    let checks: Vec<Option<CrossCheck>> = rules
        .par_iter()
        .map(|r| {
            let mine = results.iter().filter(|x| x.rule == r.name);
            let all_proved = mine
                .clone()
                .all(|x| matches!(x.verdict, ProofVerdict::Proved));
            (all_proved && mine.count() > 0).then(|| {
                crate::crosscheck::cross_check(r, opts.timeout, &|| {
                    crate::prove::integer_obligations(r, opts)
                })
            })
        })
        .collect();
    for (rule, check) in rules.iter().zip(checks) {
        let Some(cc) = check else { continue };
        for res in results.iter_mut().filter(|x| x.rule == rule.name) {
            if let CrossCheck::Disagrees { detail, .. } = &cc {
                res.verdict = ProofVerdict::Disputed {
                    reason: format!("Z3 proved it, but the cross-check disagrees: {detail}"),
                };
            }
            res.cross_check = cc.clone();
        }
    }
}

/// Proves one rule at every width of `opts`: by one width-generic query
/// for all the widths of 8 bits and more where the rule allows it and the
/// query settles, width by width (in parallel) otherwise, with the reason
/// in each row's notes. Rows come back in width order.
pub fn prove_rule_widths(
    rule: &Rule,
    opts: &Options,
    progress: &(dyn Fn(&RuleResult) + Sync),
) -> Vec<RuleResult> {
    let covered: Vec<u32> = opts.widths.iter().copied().filter(|&w| w >= 8).collect();
    let mut generic_note = None;
    let mut attempt_seconds = 0.0;
    let mut attempt = None;
    if !opts.per_width && !covered.is_empty() {
        match width_generic_obstacle(rule) {
            Some(why) => {
                generic_note = Some((
                    WidthByWidth::WidthDependent,
                    format!("checked width by width: {why}"),
                ))
            }
            None => match crate::remote::prove_generic(rule, opts) {
                Ok((cached, seconds)) => {
                    let rows: Vec<RuleResult> = opts
                        .widths
                        .iter()
                        .filter(|w| covered.contains(w))
                        .map(|&w| RuleResult {
                            rule: rule.name.clone(),
                            width: w,
                            verdict: ProofVerdict::Proved,
                            method: Method::Solver(Mode::Int),
                            solver: SolverKind::Z3,
                            cached,
                            instances: rule.instances().len(),
                            seconds,
                            notes: Vec::new(),
                            cross_check: CrossCheck::NotRun,
                            width_generic: true,
                            generic_attempt_seconds: 0.0,
                            budget: None,
                            generic_budget: None,
                            width_by_width: None,
                        })
                        .collect();
                    rows.iter().for_each(progress);
                    // Widths below 8 (if asked for) are not covered.
                    let rest: Vec<RuleResult> = opts
                        .widths
                        .par_iter()
                        .filter(|w| !covered.contains(w))
                        .map(|&w| {
                            let r = crate::remote::prove_width(rule, w, opts, opts.timeout);
                            progress(&r);
                            r
                        })
                        .collect();
                    let mut all = rows;
                    all.extend(rest);
                    all.sort_by_key(|r| opts.widths.iter().position(|&w| w == r.width));
                    return all;
                }
                Err((kind, why, seconds, spent)) => {
                    attempt_seconds = seconds;
                    generic_note = Some((kind, format!("checked width by width: {why}")));
                    attempt = Some(spent);
                }
            },
        }
    }
    // The per-width queries start past every share at which the generic
    // attempt had a check cut short: each of them is that query with the
    // width's bounds fixed.
    let first = attempt
        .as_ref()
        .map_or(opts.timeout, |a| a.share_after(opts.timeout));
    opts.widths
        .par_iter()
        .map(|&w| {
            let mut r = crate::remote::prove_width(rule, w, opts, first);
            if let (true, Some((kind, note))) = (w >= 8, &generic_note) {
                r.notes.push(note.clone());
                r.width_by_width = Some(*kind);
            }
            r.generic_attempt_seconds = attempt_seconds;
            if matches!(r.verdict, ProofVerdict::Unknown { .. }) {
                r.generic_budget = attempt.clone().filter(|a| !a.rounds.is_empty());
            }
            progress(&r);
            r
        })
        .collect()
}
