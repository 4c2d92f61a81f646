//! Validating the firings of algorithmic rules: the rewrites that are Rust
//! code (`engine::divmod` and any rule not written in the DSL) are not
//! proved once like declarative rules, so every firing over a fixed-seed run
//! of both generators is recorded and checked by the validator (the CLI
//! plugs in `verify::check`, SMT over the variables' bounds). This is stage
//! 3 of `tileproof gate`.

use crate::campaign::mix;
use crate::checks::{self, Validation, Validator};
use crate::generate::{Case, Generator};
use engine::rewrite::Simplifier;
use rayon::prelude::*;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// One distinct firing of an algorithmic rule and its validation.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Firing {
    pub rule: String,
    /// `var` lines, `expr` (before) and `expect` (after): a file
    /// `tileproof check` validates again.
    pub case: String,
    /// How many times it fired (equal text) over the run.
    pub count: u64,
    pub result: Validation,
}

/// What validating the firings found.
#[derive(Clone, Debug, Default)]
pub struct Firings {
    /// Rules of the simplifier that are not declarative.
    pub rules: Vec<String>,
    pub cases: u64,
    pub total: u64,
    pub distinct: Vec<Firing>,
    /// Cases the simplifier could not finish (cap or panic), named.
    pub errors: Vec<String>,
    pub seconds: f64,
}

impl Firings {
    /// Firings the validator did not confirm: a counterexample, or an
    /// unknown (never a pass).
    pub fn failed(&self) -> impl Iterator<Item = &Firing> {
        self.distinct
            .iter()
            .filter(|f| f.result.fails || f.result.verdict == "unknown")
    }

    pub fn counterexamples(&self) -> usize {
        self.distinct.iter().filter(|f| f.result.fails).count()
    }

    pub fn unknown(&self) -> usize {
        self.distinct
            .iter()
            .filter(|f| !f.result.fails && f.result.verdict == "unknown")
            .count()
    }
}

/// Simplifies fixed-seed cases of both generators with tracing, collects
/// every firing of the rules `algorithmic` marks (indexed like
/// `simp.rule_names()`), and validates each distinct one with Z3 at width
/// 64 (the width the engine simplifies at).
pub fn validate_firings(
    simp: &Simplifier,
    algorithmic: &[bool],
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
    let mut next = 0;
    while next < cases && Instant::now() < deadline {
        let end = (next + BATCH).min(cases);
        // Case k of each generator, generators interleaved.
        let jobs: Vec<(Generator, u64)> = (next..end)
            .flat_map(|k| Generator::ALL.into_iter().map(move |g| (g, k)))
            .collect();
        next = end;
        let per_case: Vec<Result<Vec<(usize, String)>, String>> = jobs
            .par_iter()
            .map(|&(g, k)| {
                let case_seed = mix(seed, k);
                let name = format!(
                    "{} case {k} (seed {seed}, Case::from_seed({g:?}, {case_seed:#x}))",
                    g.name()
                );
                checks::catch(|| {
                    let case = Case::from_seed(g, case_seed);
                    let mut graph = case.graph.clone();
                    let run = simp.simplify(&mut graph, &case.roots, true);
                    run.map(|o| {
                        o.trace
                            .iter()
                            .filter(|f| algorithmic[f.rule])
                            .map(|f| {
                                let body =
                                    crate::corpus::case_body(&graph, &[f.before], Some(&[f.after]));
                                (f.rule, body)
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
        let validated: Vec<Firing> = fresh
            .par_iter()
            .map(|((rule, case), count)| {
                let result = match engine::parse::parse_program(case) {
                    Ok(p) => validator(&p.graph, &p.outputs, &p.expects),
                    Err(e) => Validation {
                        verdict: "unknown".into(),
                        detail: Some(format!("the firing does not parse back from text: {e}")),
                        fails: false,
                        point: None,
                    },
                };
                Firing {
                    rule: names[*rule].clone(),
                    case: case.clone(),
                    count: *count,
                    result,
                }
            })
            .collect();
        out.distinct.extend(validated);
    }
    out.seconds = start.elapsed().as_secs_f64();
    out
}
