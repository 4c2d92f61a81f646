//! Validating the firings of algorithmic rules: the rewrites that are Rust
//! code (the engine's passes, `engine::passes::PASSES`) are not proved once
//! like declarative rules, so every firing is recorded and checked by the
//! validator (the CLI plugs in `tileproof::decide`: SMT over the variables'
//! bounds, and an exhaustive JIT walk of a small domain where the solver
//! cannot decide): first on every rule's fire cases
//! (`engine::passes::fire_cases`, so that every rule fires), then over a
//! fixed-seed run of both generators. A rule with no validated firing has
//! not been validated. Each firing must also decrease what its pass's
//! registry row says the rule decreases (`engine::passes::Decreases`), the
//! rewriter's reason to stop. This is stage 3 of `tileproof gate`.

use crate::campaign::mix;
use crate::checks::{self, Validation, ValidationVerdict, Validator};
use crate::generate::{Case, Generator};
use engine::passes::FireCase;
use engine::rewrite::Simplifier;
use rayon::prelude::*;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// One distinct firing of an algorithmic rule and its validation.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ValidatedFiring {
    pub rule: String,
    /// `var` lines, `expr` (before) and `expect` (after): a file
    /// `tileproof check` validates again.
    pub case: String,
    /// How many times it fired (equal text) over the run.
    pub count: u64,
    pub result: Validation,
    /// Why it does not decrease what its pass says its rule decreases
    /// (`engine::passes::Decreases`); `None` when it does.
    pub undecreasing: Option<String>,
}

impl ValidatedFiring {
    /// The validator (or an exhaustive walk) confirmed it.
    pub fn validated(&self) -> bool {
        !self.result.fails && self.result.verdict != ValidationVerdict::Unknown
    }

    /// It is sound and decreases what its rule states: it holds.
    pub fn holds(&self) -> bool {
        self.validated() && self.undecreasing.is_none()
    }
}

/// One algorithmic rule's firings over a run.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct RuleTally {
    pub rule: String,
    /// Distinct firings recorded.
    pub fired: usize,
    /// Of them, validated.
    pub validated: usize,
}

/// What validating the firings found.
#[derive(Clone, Debug, Default)]
pub struct Firings {
    /// Rules of the simplifier that are not declarative.
    pub rules: Vec<String>,
    pub cases: u64,
    pub total: u64,
    pub distinct: Vec<ValidatedFiring>,
    /// Cases the simplifier could not finish (cap or panic), named.
    pub errors: Vec<String>,
    pub seconds: f64,
}

impl Firings {
    /// Firings the validator did not confirm (a counterexample, or an
    /// unknown: never a pass), or that do not decrease what their rule
    /// states.
    pub fn failed(&self) -> impl Iterator<Item = &ValidatedFiring> {
        self.distinct.iter().filter(|f| !f.holds())
    }

    /// Per algorithmic rule, in the simplifier's order: its distinct
    /// firings and how many validated.
    pub fn per_rule(&self) -> Vec<RuleTally> {
        self.rules
            .iter()
            .map(|r| {
                let mine = self.distinct.iter().filter(|f| &f.rule == r);
                RuleTally {
                    rule: r.clone(),
                    fired: mine.clone().count(),
                    validated: mine.filter(|f| f.validated()).count(),
                }
            })
            .collect()
    }

    /// The rules with no validated firing: not validated by this run.
    pub fn unvalidated(&self) -> Vec<String> {
        self.per_rule()
            .into_iter()
            .filter(|t| t.validated == 0)
            .map(|t| t.rule)
            .collect()
    }

    pub fn counterexamples(&self) -> usize {
        self.distinct.iter().filter(|f| f.result.fails).count()
    }

    pub fn unknown(&self) -> usize {
        self.distinct
            .iter()
            .filter(|f| !f.result.fails && f.result.verdict == ValidationVerdict::Unknown)
            .count()
    }

    /// Firings the solver left unknown and the JIT oracle settled by
    /// walking their whole domain.
    pub fn by_enumeration(&self) -> usize {
        self.distinct
            .iter()
            .filter(|f| f.result.verdict == ValidationVerdict::EquivalentByEnumeration)
            .count()
    }
}

/// Where the firings of one batch come from.
#[derive(Clone, Copy)]
enum Job<'a> {
    /// A rule's fire case.
    Fire(&'a FireCase),
    /// Case `k` of a generator.
    Generated(Generator, u64),
}

/// A job's name in an error: the fire case, or the generated case's seed.
fn job_name(job: Job<'_>, seed: u64) -> String {
    match job {
        Job::Fire(f) => format!(
            "the fire case of {}: {}",
            f.rule,
            f.program.trim_end().replace('\n', "; ")
        ),
        Job::Generated(g, k) => format!(
            "{} case {k} (seed {seed}, Case::from_seed({g:?}, {:#x}))",
            g.name(),
            mix(seed, k)
        ),
    }
}

/// One distinct firing (`case`: its `expr`/`expect` text) of `simp`'s
/// rule `rule`, validated, and checked to decrease what its pass states.
fn validate_one(
    simp: &Simplifier,
    rule: usize,
    case: &str,
    count: u64,
    validator: &Validator<'_>,
) -> ValidatedFiring {
    let (result, undecreasing) = match engine::parse::parse_program(case) {
        Ok(mut p) => {
            let result = validator(&p.graph, &p.outputs, &p.expects);
            let (before, after) = (p.outputs[0], p.expects[0]);
            let decrease = simp.check_decrease(&mut p.graph, rule, before, after);
            (result, decrease.and_then(Result::err))
        }
        Err(e) => (
            Validation {
                verdict: ValidationVerdict::Unknown,
                detail: Some(format!("the firing does not parse back from text: {e}")),
                fails: false,
                point: None,
            },
            None,
        ),
    };
    ValidatedFiring {
        rule: simp.rule_names()[rule].clone(),
        case: case.to_string(),
        count,
        result,
        undecreasing,
    }
}

/// Simplifies `fire_cases`, then fixed-seed cases of both generators, with
/// tracing, collects every firing of the rules `algorithmic` marks (indexed
/// like `simp.rule_names()`; the gate marks [`Simplifier::is_algorithmic`]),
/// and validates each distinct one with `validator` (the CLI's: Z3 at the
/// width the engine simplifies at, and an exhaustive walk where Z3 cannot
/// decide). The fire cases are all run whatever the budget; the
/// generated cases only until it runs out. The fire cases run on the
/// built-in rules (with `simp`'s width and cap): an algorithmic rule's
/// soundness does not depend on the declarative rules around it, and a
/// candidate rule laid over them could rewrite a fire case before the rule
/// it is for sees it.
pub fn validate_firings(
    simp: &Simplifier,
    algorithmic: &[bool],
    fire_cases: &[FireCase],
    seed: u64,
    cases: u64,
    budget: Duration,
    validator: &Validator<'_>,
) -> Firings {
    let start = Instant::now();
    let names = simp.rule_names();
    let mut out = Firings {
        rules: names
            .iter()
            .zip(algorithmic)
            .filter(|(_, &alg)| alg)
            .map(|(n, _)| n.clone())
            .collect(),
        ..Firings::default()
    };
    if out.rules.is_empty() {
        out.seconds = start.elapsed().as_secs_f64();
        return out;
    }
    // Batches of cases: each batch's new firings are validated before the
    // next starts, so that every firing recorded is validated and the time
    // budget (checked between batches) covers the Z3 work too.
    const BATCH: u64 = 64;
    let deadline = start + budget;
    // (rule index, case text) -> index into `out.distinct`.
    let mut seen: HashMap<(usize, String), usize> = HashMap::new();
    let mut builtin = Simplifier::new(engine::rules::builtin());
    builtin.width = simp.width;
    builtin.cap = simp.cap;
    // A built-in rule index -> the index of the same algorithmic rule in
    // `simp`, for the rules `algorithmic` marks.
    let to_simp: Vec<Option<usize>> = builtin
        .rule_names()
        .iter()
        .enumerate()
        .map(|(i, n)| {
            builtin.is_algorithmic(i).then(|| {
                names
                    .iter()
                    .enumerate()
                    .position(|(j, m)| algorithmic[j] && m == n)
            })?
        })
        .collect();
    let mut next = 0;
    let mut fire = fire_cases.iter().map(Job::Fire).peekable();
    while fire.peek().is_some() || (next < cases && Instant::now() < deadline) {
        let jobs: Vec<Job> = if fire.peek().is_some() {
            fire.by_ref().take(BATCH as usize).collect()
        } else {
            // A batch of BATCH cases in all, each generator's case k in
            // turn, so that a batch (validated whole) stays small.
            let per = (BATCH / Generator::ALL.len() as u64).max(1);
            let end = (next + per).min(cases);
            // Case k of each generator, generators interleaved.
            let jobs = (next..end)
                .flat_map(|k| {
                    Generator::ALL
                        .into_iter()
                        .map(move |g| Job::Generated(g, k))
                })
                .collect();
            next = end;
            jobs
        };
        let per_case: Vec<Result<Vec<(usize, String)>, String>> = jobs
            .par_iter()
            .map(|&job| {
                let name = job_name(job, seed);
                checks::catch(|| {
                    // The case, the simplifier it runs on, and its rule
                    // indices mapped to `simp`'s algorithmic ones.
                    let (mut graph, roots, on, index): (_, _, _, &dyn Fn(usize) -> Option<usize>) =
                        match job {
                            Job::Fire(f) => {
                                let p =
                                    engine::parse::parse_program(&f.program).unwrap_or_else(|e| {
                                        panic!("the fire case does not parse: {e}")
                                    });
                                (p.graph, p.outputs, &builtin, &|r| to_simp[r])
                            }
                            Job::Generated(g, k) => {
                                let case = Case::from_seed(g, mix(seed, k));
                                (case.graph, case.roots, simp, &|r| {
                                    algorithmic[r].then_some(r)
                                })
                            }
                        };
                    let run = on.simplify(&mut graph, &roots, true);
                    run.map(|o| {
                        o.trace
                            .iter()
                            .filter_map(|f| {
                                let rule = index(f.rule)?;
                                let body =
                                    crate::corpus::case_body(&graph, &[f.before], Some(&[f.after]));
                                Some((rule, body))
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .map_err(|panic| format!("{name}: panic: {}", checks::one_line(&panic)))
                .and_then(|r| r.map_err(|cap| format!("{name}: {cap}")))
            })
            .collect();
        out.cases += jobs.len() as u64;
        // Firings first seen in this batch, with their counts in it.
        let old = out.distinct.len();
        let mut fresh: Vec<((usize, String), u64)> = Vec::new();
        for r in per_case {
            match r {
                Ok(v) => {
                    for key in v {
                        out.total += 1;
                        match seen.get(&key) {
                            Some(&i) if i < old => out.distinct[i].count += 1,
                            Some(&i) => fresh[i - old].1 += 1,
                            None => {
                                seen.insert(key.clone(), old + fresh.len());
                                fresh.push((key, 1));
                            }
                        }
                    }
                }
                Err(e) => out.errors.push(e),
            }
        }
        let validated: Vec<ValidatedFiring> = fresh
            .par_iter()
            .map(|((rule, case), count)| validate_one(simp, *rule, case, *count, validator))
            .collect();
        out.distinct.extend(validated);
    }
    out.seconds = start.elapsed().as_secs_f64();
    out
}
