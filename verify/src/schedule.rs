//! Which proofs run, where and in what order: the lemmas the rules cite
//! first, then every rule at every width, the costliest rules first, on
//! every thread of the pool; a rule's width-generic attempt before its
//! per-width queries; each query in a worker process where one is
//! installed ([`crate::remote`]), so that its deadline holds; the
//! cross-check last.

use crate::check::Method;
use crate::crosscheck::CrossCheck;
use crate::encode::Mode;
use crate::lemma::Lemmas;
use crate::portfolio::SolverKind;
use crate::prove::{width_generic_obstacle, Options, ProofVerdict, RuleResult, WidthByWidth};
use crate::ranges::{self, RangeReport, RangeResult};
use crate::solver::QUERY_FACTOR;
use crate::verdict::VerdictKind;
use engine::ir::Op;
use engine::rules::{Pat, Rule};
use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One unit of work of a run.
enum Task<'a> {
    /// A cited lemma, with the lemmas it cites (proved before it).
    Lemma(&'a str),
    /// A rule at every width, by its index in the run's rules.
    Rule(usize),
}

/// Proves every (rule, width) pair in parallel, calling `progress` as each
/// finishes. Results come back in (rule, width) order.
///
/// The run's wall time is at least its longest chain (a lemma, then the
/// rules that cite it) and its work shared over the threads, so the
/// threads take the tasks from one list, in order: the chains of cited
/// lemmas (longest first), then the rules, costliest first
/// ([`estimated_cost`]); a thread free takes the next. Taken in the
/// rules' own order, a slow rule that came last ran alone at the end.
pub fn prove_all(
    rules: &[&Rule],
    opts: &Options,
    progress: &(dyn Fn(&RuleResult) + Sync),
) -> Vec<RuleResult> {
    let mut order: Vec<usize> = (0..rules.len()).collect();
    let costs: Vec<usize> = rules.iter().map(|r| estimated_cost(r)).collect();
    // Stable: equal guesses keep the rules' order.
    order.sort_by_key(|&i| std::cmp::Reverse(costs[i]));
    let tasks: Vec<Task> = lemma_chains(rules, &opts.lemmas)
        .into_iter()
        .map(Task::Lemma)
        .chain(order.into_iter().map(Task::Rule))
        .collect();
    let next = AtomicUsize::new(0);
    let rows: Vec<Mutex<Vec<RuleResult>>> = rules.iter().map(|_| Mutex::new(Vec::new())).collect();
    rayon::scope(|s| {
        for _ in 0..rayon::current_num_threads() {
            s.spawn(|_| {
                while let Some(task) = tasks.get(next.fetch_add(1, Ordering::Relaxed)) {
                    match task {
                        Task::Lemma(name) => crate::prove::prove_lemma(name, opts),
                        Task::Rule(i) => {
                            let r = prove_rule_widths(rules[*i], opts, progress);
                            *rows[*i].lock().unwrap_or_else(|e| e.into_inner()) = r;
                        }
                    }
                }
            });
        }
    });
    let mut results: Vec<RuleResult> = rows
        .into_iter()
        .flat_map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
        .collect();
    // Past the run's budget the second opinion is not asked for (the
    // rules keep `cross_check: not run`).
    if opts.cross_check && opts.past_deadline().is_none() {
        cross_check_results(rules, opts, &mut results);
    }
    results
}

/// The lemmas `rules` cite that no other cited lemma cites, each standing
/// for the chain of lemmas it needs (proving it proves them first), the
/// longest chain first: the lemmas of a run as few tasks that do not
/// wait for one another.
fn lemma_chains<'a>(rules: &[&Rule], lemmas: &'a Lemmas) -> Vec<&'a str> {
    // Every lemma needed, with what it needs: the cited ones and theirs.
    let mut needed: Vec<usize> = Vec::new();
    let mut todo: Vec<&str> = rules
        .iter()
        .flat_map(|r| r.lemmas.iter().map(|u| u.name.as_str()))
        .collect();
    while let Some(name) = todo.pop() {
        let Some(i) = lemmas.lemmas.iter().position(|l| l.name == name) else {
            // Not a lemma: the rule's proof reports it.
            continue;
        };
        if !needed.contains(&i) {
            needed.push(i);
            todo.extend(lemmas.lemmas[i].uses.iter().map(|u| u.name.as_str()));
        }
    }
    let cited_by_a_lemma = |i: usize| {
        needed.iter().any(|&j| {
            lemmas.lemmas[j]
                .uses
                .iter()
                .any(|u| u.name == lemmas.lemmas[i].name)
        })
    };
    // How many lemmas proving this one proves (itself included).
    let chain = |i: usize| {
        let mut seen = vec![i];
        let mut k = 0;
        while k < seen.len() {
            for u in &lemmas.lemmas[seen[k]].uses {
                if let Some(j) = lemmas.lemmas.iter().position(|l| l.name == u.name) {
                    if !seen.contains(&j) {
                        seen.push(j);
                    }
                }
            }
            k += 1;
        }
        seen.len()
    };
    let mut tops: Vec<usize> = needed
        .iter()
        .copied()
        .filter(|&i| !cited_by_a_lemma(i))
        .collect();
    tops.sort_by_key(|&i| (std::cmp::Reverse(chain(i)), i));
    tops.into_iter()
        .map(|i| lemmas.lemmas[i].name.as_str())
        .collect()
}

/// A guess at how long a rule's proof takes, to start the costly ones
/// first (it orders the work and decides nothing): a division, remainder
/// or product with symbolic operands makes a query nonlinear, which is
/// where Z3 spends its time; a cited lemma adds its instances; a rule
/// proved width by width (a cast, a shift, `&`) has a query per width,
/// and a rule a query per type instance.
pub fn estimated_cost(rule: &Rule) -> usize {
    let mut cost = 4 * rule.lemmas.len();
    let mut todo: Vec<&Pat> = vec![&rule.lhs, &rule.rhs];
    while let Some(p) = todo.pop() {
        cost += match p {
            Pat::Op(op, _, args) => {
                todo.extend(args);
                if op.info().division.is_some() {
                    8
                } else if *op == Op::Mul {
                    3
                } else {
                    1
                }
            }
            Pat::Helper(_, args) => {
                todo.extend(args);
                1
            }
            Pat::Computed(inner) => {
                todo.push(inner);
                1
            }
            Pat::Var(_) | Pat::Lit(..) | Pat::Invalid | Pat::Bound(..) => 1,
        };
    }
    let per_width = if width_generic_obstacle(rule).is_some() {
        4
    } else {
        1
    };
    cost * per_width * rule.instances().len().max(1)
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

/// Proves the range analysis ([`crate::ranges`]): its lemmas, then every
/// transfer function at every width, in parallel on the pool, calling
/// `done` after each transfer function. `timeout` is a solver call's, as
/// for a rule: a lemma gets it, and a transfer function, a query of its
/// own, [`QUERY_FACTOR`] times it, shared among its tries
/// ([`ranges::attempts`]; a try cut short gives way to the next). Each
/// try runs in a worker where one is installed ([`crate::remote`]), so
/// that its share holds. A transfer function counts as proved only if the
/// lemmas it assumes are.
pub fn prove_ranges(widths: &[u32], timeout: Duration, done: &(dyn Fn() + Sync)) -> RangeReport {
    let names = ranges::lemma_names();
    let lemmas: Vec<VerdictKind> = (0..names.len())
        .into_par_iter()
        .map(|i| crate::remote::prove_range_lemma(i, timeout))
        .collect();
    let lemma_ok = |op: Op| {
        names
            .iter()
            .zip(&lemmas)
            .filter(|(n, _)| n.0 == op)
            .all(|(_, v)| *v == VerdictKind::Proved)
    };
    let sigs = ranges::signatures();
    let jobs: Vec<(u32, usize)> = widths
        .iter()
        .flat_map(|&w| (0..sigs.len()).map(move |i| (w, i)))
        .collect();
    let results = jobs
        .par_iter()
        .map(|&(w, i)| {
            let (op, args, dt) = &sigs[i];
            let start = Instant::now();
            let mut outcome = (VerdictKind::Unknown, None);
            for (attempt, share) in ranges::attempts(*op, timeout * QUERY_FACTOR) {
                outcome = crate::remote::try_transfer(i, w, attempt, share);
                if outcome.0 != VerdictKind::Unknown {
                    break;
                }
            }
            if outcome.0 == VerdictKind::Proved && !ranges::lemma_ops(*op).into_iter().all(lemma_ok)
            {
                outcome = (
                    VerdictKind::Unknown,
                    Some(format!("a lemma of {op:?} is not proved")),
                );
            }
            done();
            RangeResult::new((*op, args, *dt), w, outcome, start)
        })
        .collect();
    RangeReport {
        lemmas: names
            .into_iter()
            .zip(lemmas)
            .map(|((o, l), v)| (format!("{o:?}"), l.to_string(), v))
            .collect(),
        results,
    }
}
