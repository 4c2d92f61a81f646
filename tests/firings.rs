//! Every firing of an algorithmic rule is validated (stage 3 of the gate):
//! the firings of a sound rule all validate, those of a broken one are
//! refuted with a case that `verify::check` reproduces from its text alone.

use engine::rewrite::Simplifier;
use engine::rules::{builtin, RuleSet};
use fuzz::checks::Validation;
use fuzz::firings::{validate_firings, Firing, Firings};
use std::time::Duration;
use verify::check::{check, CheckResult};

/// Marks the rules named as if they were algorithmic.
fn marked(simp: &Simplifier, names: &[&str]) -> Vec<bool> {
    simp.rule_names()
        .iter()
        .map(|n| names.contains(&n.as_str()))
        .collect()
}

/// `verify::check` at width 64 as the validator.
fn validate(simp: &Simplifier, alg: &[bool]) -> Firings {
    let smt = |g: &engine::ir::Graph, s: &[engine::ir::NodeId], t: &[engine::ir::NodeId]| {
        let r = check(g, s, t, engine::dtype::Width::W64, Duration::from_secs(10));
        Validation {
            verdict: r.name().to_string(),
            detail: None,
            fails: matches!(r, CheckResult::Counterexample { .. }),
            point: None,
        }
    };
    validate_firings(simp, alg, 1, 300, Duration::from_secs(60), &smt)
}

#[test]
fn firings_of_a_sound_rule_all_validate() {
    let simp = Simplifier::new(builtin());
    let f = validate(&simp, &marked(&simp, &["mod_in_range"]));
    assert_eq!(f.rules, vec!["mod_in_range".to_string()]);
    assert!(
        f.total > 0 && !f.distinct.is_empty(),
        "mod_in_range never fired"
    );
    assert!(f.distinct.iter().all(|x| x.rule == "mod_in_range"));
    let bad: Vec<String> = f
        .failed()
        .map(|x| format!("{}: {}", x.result.verdict, x.case))
        .collect();
    assert!(bad.is_empty(), "{bad:?}");
    assert!(f.errors.is_empty(), "{:?}", f.errors);
}

#[test]
fn a_wrong_firing_is_refuted_with_a_case_that_check_reproduces() {
    // mod_in_range without its upper bound: x mod y => x for any
    // non-negative x, wrong wherever x >= y.
    let set = RuleSet::with_file(
        builtin(),
        "broken.rules",
        "group range_divmod\nrule mod_in_range: x mod y => x if valid(y) && vmin(y) > 0 && vmin(x) >= 0\n",
    )
    .unwrap();
    let simp = Simplifier::new(&set);
    let f = validate(&simp, &marked(&simp, &["mod_in_range"]));
    let bad: Vec<&Firing> = f.failed().collect();
    assert!(
        !bad.is_empty(),
        "no wrong firing found in {} firings",
        f.total
    );
    for x in bad {
        assert!(x.result.fails, "{}", x.result.verdict);
        // The case text alone reproduces the failure.
        let p = engine::parse::parse_program(&x.case).unwrap();
        let again = check(
            &p.graph,
            &p.outputs,
            &p.expects,
            engine::dtype::Width::W64,
            Duration::from_secs(10),
        );
        assert!(
            matches!(again, CheckResult::Counterexample { .. }),
            "{}",
            x.case
        );
    }
}

#[test]
fn no_algorithmic_rule_means_no_firing_work() {
    let simp = Simplifier::new(builtin());
    let f = validate(&simp, &marked(&simp, &[]));
    assert!(f.rules.is_empty() && f.total == 0 && f.cases == 0);
}
