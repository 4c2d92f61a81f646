//! Every counterexample must reproduce. More than forty deliberately wrong
//! rules (`wrong_rules_many.rules`: every op family, commutative operators
//! with gated operands, bool pattern variables, type variables, computed
//! constants, range guards, every failure kind) are proved at every width
//! with several solver seeds, so that counterexamples are rebuilt from many
//! different models. Each must be refuted with the failure kind its comment
//! names; the interpreter must confirm exactly that failure on the realized
//! program; and the case file `tileproof prove --cases` would write must,
//! read back, fail at its own `# point:` (interpreter), fail under
//! `tileproof check`'s validation (`verify::check::check`) over its whole
//! domain, and fail with the same failure at exactly that point when the
//! domain is pinned to it.
//!
//! `WRONG_RULES_SEEDS=0,1,2,3,4,5` runs more seeds (default: 0, 1, 2);
//! `WRONG_RULES_FILTER=text` only the rules whose name contains `text`.

use engine::ir::VarDecl;
use engine::parse::parse_program;
use engine::print;
use engine::rules::{Rule, RuleSet};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};
use verify::check::{check, CheckResult};
use verify::counterexample::{
    case_point, replay_case, reproduce, CaseError, Counterexample, Failure, State, Unconfirmed,
    VarValue,
};
use verify::prove::{prove_rule, Options, ProofVerdict};

const WIDTHS: [u32; 4] = [8, 16, 32, 64];

fn rules() -> RuleSet {
    RuleSet::parse(
        "wrong_rules_many.rules",
        include_str!("wrong_rules_many.rules"),
    )
    .expect("the test file parses")
}

fn seeds() -> Vec<u32> {
    match std::env::var("WRONG_RULES_SEEDS") {
        Ok(s) if !s.trim().is_empty() => s
            .split(',')
            .map(|x| x.trim().parse().expect("WRONG_RULES_SEEDS: numbers"))
            .collect(),
        _ => vec![0, 1, 2],
    }
}

/// The failure kind a rule's comment starts with.
fn expected(rule: &Rule) -> Failure {
    let kind = rule.comment.split(':').next().unwrap_or("").trim();
    *Failure::ALL
        .iter()
        .find(|f| f.name() == kind)
        .unwrap_or_else(|| panic!("{}: the comment must start with a failure kind", rule.name))
}

/// The case text with every variable's bounds pinned to the case's point.
fn pinned(case: &str) -> Result<String, CaseError> {
    let p = parse_program(case)?;
    let env = case_point(&p)?;
    let mut decls = p.graph.vars().iter().zip(&env).map(|(d, &v)| {
        print::var_decl(&VarDecl {
            lo: v as i64,
            hi: v as i64,
            ..d.clone()
        })
    });
    Ok(case
        .lines()
        .map(|l| {
            if l.starts_with("var ") {
                decls.next().expect("one declaration per var line")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n"))
}

/// Everything a counterexample must satisfy; the problems found.
fn audit(rule: &Rule, width: u32, cex: &Counterexample) -> Vec<String> {
    let mut bad = Vec::new();
    if cex.failure != expected(rule) {
        bad.push(format!(
            "refuted with {}, the comment says {}",
            cex.failure,
            expected(rule)
        ));
    }
    match &cex.confirmed {
        Ok(text) if text.starts_with(cex.failure.name()) => {}
        other => bad.push(format!("the interpreter's answer: {other:?}")),
    }
    let Some(case) = &cex.case else {
        bad.push("no case file".into());
        return bad;
    };
    if !case.contains(&format!("\n# width: {width}\n")) {
        bad.push("the case does not state its width".into());
    }
    // The file read back, at its own point, with the interpreter.
    match replay_case(case, width) {
        Ok((f, _)) if f == cex.failure => {}
        other => bad.push(format!("the case at its point: {other:?}")),
    }
    let timeout = Duration::from_secs(10);
    // `tileproof check` on the file: some point of its domain fails.
    match parse_program(case) {
        Ok(p) => match check(
            &p.graph,
            &p.outputs,
            &p.expects,
            engine::dtype::Width(width),
            timeout,
        ) {
            CheckResult::Counterexample { confirmed, .. } if confirmed.is_ok() => {}
            other => bad.push(format!("tileproof check on the case: {other:?}")),
        },
        Err(e) => bad.push(format!("the case does not parse: {e}")),
    }
    // ... and the case's own point fails, with the same failure.
    match pinned(case).and_then(|t| Ok(parse_program(&t)?)) {
        Ok(p) => match check(
            &p.graph,
            &p.outputs,
            &p.expects,
            engine::dtype::Width(width),
            timeout,
        ) {
            CheckResult::Counterexample {
                failure, confirmed, ..
            } if failure == cex.failure && confirmed.is_ok() => {}
            other => bad.push(format!("tileproof check at the case's point: {other:?}")),
        },
        Err(e) => bad.push(format!("the pinned case: {e}")),
    }
    bad
}

/// A proof's rule, width and seed; its counterexample's case, or what is
/// wrong with it; and its seconds.
type Outcome<'r> = (&'r Rule, u32, u32, Result<String, String>, f64);

#[test]
fn every_counterexample_to_a_wrong_rule_reproduces() {
    let set = rules();
    let mut rules: Vec<&Rule> = set.rules().collect();
    assert!(rules.len() >= 40, "{} rules", rules.len());
    for r in &rules {
        expected(r);
    }
    if let Ok(only) = std::env::var("WRONG_RULES_FILTER") {
        rules.retain(|r| r.name.contains(&only));
    }
    let seeds = seeds();
    let jobs: Vec<(&Rule, u32, u32)> = rules
        .iter()
        .flat_map(|r| {
            let seeds = &seeds;
            WIDTHS
                .iter()
                .flat_map(move |&w| seeds.iter().map(move |&s| (*r, w, s)))
        })
        .collect();
    let start = Instant::now();
    let outcomes: Vec<Outcome<'_>> = jobs
        .par_iter()
        .map(|&(rule, width, seed)| {
            let opts = Options {
                widths: vec![width],
                // Wrong rules are refuted in a second or two; the margin
                // is for a loaded machine (a timeout would read "unknown").
                timeout: Duration::from_secs(20),
                cache: None,
                smt2_dir: None,
                seed,
                ..Options::default()
            };
            let res = prove_rule(rule, width, &opts);
            let out = match &res.verdict {
                ProofVerdict::Failed { counterexample } => {
                    let bad = audit(rule, width, counterexample);
                    if bad.is_empty() {
                        Ok(counterexample.case.clone().unwrap_or_default())
                    } else {
                        Err(format!("{}\n{counterexample}", bad.join("\n")))
                    }
                }
                ProofVerdict::InternalError { internal_error } => Err(internal_error.to_string()),
                other => Err(format!("not refuted: {}", other.name())),
            };
            (rule, width, seed, out, res.seconds)
        })
        .collect();
    let elapsed = start.elapsed().as_secs_f64();
    let mut failures = Vec::new();
    let mut cases: BTreeMap<(&str, u32), BTreeSet<String>> = BTreeMap::new();
    let mut by_kind: BTreeMap<&str, usize> = BTreeMap::new();
    for (rule, width, seed, out, _) in &outcomes {
        match out {
            Ok(case) => {
                *by_kind.entry(expected(rule).name()).or_default() += 1;
                // The model, not the header's seed-independent lines.
                let body: String = case
                    .lines()
                    .filter(|l| !l.starts_with("# counterexample"))
                    .collect();
                cases
                    .entry((rule.name.as_str(), *width))
                    .or_default()
                    .insert(body);
            }
            Err(e) => failures.push(format!("{} at width {width}, seed {seed}: {e}", rule.name)),
        }
    }
    let mut by_time: Vec<_> = outcomes.iter().collect();
    by_time.sort_by(|a, b| b.4.total_cmp(&a.4));
    let slowest = by_time
        .iter()
        .take(3)
        .map(|o| format!("{:.2} s ({} at {}, seed {})", o.4, o.0.name, o.1, o.2))
        .collect::<Vec<_>>()
        .join(", ");
    let distinct: usize = cases.values().map(|s| s.len()).sum();
    println!(
        "{} rules x {} widths x {} seeds ({:?}): {} counterexamples confirmed and reproduced by their case files ({}), {} failed; {} distinct cases over {} rule-widths; slowest {}; {:.1} s",
        rules.len(),
        WIDTHS.len(),
        seeds.len(),
        seeds,
        outcomes.len() - failures.len(),
        by_kind
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect::<Vec<_>>()
            .join(", "),
        failures.len(),
        distinct,
        cases.len(),
        slowest,
        elapsed
    );
    assert!(
        failures.is_empty(),
        "{} of {} did not reproduce:\n\n{}",
        failures.len(),
        outcomes.len(),
        failures.join("\n\n")
    );
    if seeds.len() > 1 && !cases.is_empty() {
        assert!(
            distinct > cases.len(),
            "the seeds gave every rule-width the same counterexample: the rebuild saw one model each"
        );
    }
}

/// The rule and model of the report that started this test: a
/// commutative `max` whose operands are both gated. The case must be the
/// rule instantiated at the model (the gate of `x` stays the gate of `x`),
/// however the engine orders the operands of `max`.
fn issue_rule() -> RuleSet {
    RuleSet::parse(
        "issue.rules",
        "# validity-differs: where c is unconstrained and y invalid\n\
         rule tg_inv_gate_max: max(where(c, x, invalid), y) => where(c, max(x, y), invalid)\n",
    )
    .expect("parses")
}

fn issue_model(c: State, c_range: (i128, i128), y: State) -> Counterexample {
    use engine::ir::DType;
    let var = |name: &str, dtype, state, value, (lo, hi)| VarValue {
        name: name.into(),
        dtype,
        constant: false,
        state,
        value,
        lo,
        hi,
    };
    Counterexample {
        rule: "tg_inv_gate_max".into(),
        width: 32,
        unbounded: false,
        types: Vec::new(),
        failure: Failure::ValidityDiffers,
        vars: vec![
            var("c", DType::Bool, c, 0, c_range),
            var("x", DType::Index, State::Valid, 0, (0, 0)),
            var("y", DType::Index, y, 0, (0, 0)),
        ],
        nodes: Vec::new(),
        case: None,
        confirmed: Err(Unconfirmed::NotYetChecked),
    }
}

#[test]
fn the_reported_max_counterexample_reproduces_with_its_own_gate() {
    let set = issue_rule();
    let rule = set.rule("tg_inv_gate_max").unwrap();
    for range in [(0, 1), (0, 0), (1, 1)] {
        let cex = issue_model(State::Unconstrained, range, State::Invalid);
        let cex = match reproduce(rule, &[], cex) {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        };
        let case = cex.case.as_deref().unwrap();
        assert!(audit(rule, 32, &cex).is_empty(), "{case}");
        // The target's gate is c's node (a comparison of invalid), never
        // y's mask `y_on`.
        let expect = case.lines().find(|l| l.starts_with("expect")).unwrap();
        assert!(expect.starts_with("expect where(invalid < 0"), "{case}");
    }
}

#[test]
fn a_counterexample_the_interpreter_does_not_confirm_is_an_internal_error() {
    let set = issue_rule();
    let rule = set.rule("tg_inv_gate_max").unwrap();
    // c true and y valid: the target refines the source at this point.
    let cex = issue_model(State::Valid, (1, 1), State::Valid);
    let cex = Counterexample {
        vars: cex
            .vars
            .into_iter()
            .map(|v| VarValue {
                value: if v.name == "c" { 1 } else { v.value },
                ..v
            })
            .collect(),
        ..cex
    };
    let e = match reproduce(rule, &[], cex) {
        Ok(c) => panic!("reported as a counterexample:\n{c}"),
        Err(e) => e,
    };
    let text = e.to_string();
    for needle in [
        "internal error",
        "validity-differs counterexample to tg_inv_gate_max at width 32",
        "reason: the interpreter does not confirm it: the target refines the source here",
        "rule tg_inv_gate_max: max(where(c, x, invalid), y) => where(c, max(x, y), invalid)",
        "the solver's model:",
        "c      = true",
        "pattern variables realized as:",
        "y = y",
        "realized case:",
        "expect where(c, max(x, y), invalid)",
        "NOT confirmed by the interpreter",
    ] {
        assert!(text.contains(needle), "`{needle}` missing from:\n{text}");
    }
    let json = serde_json::to_string(&e).expect("serializable");
    assert!(json.contains("\"reason\""), "{json}");
}
