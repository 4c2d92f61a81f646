//! A file of deliberately wrong rules: each is rejected with a
//! counterexample that the reference interpreter reproduces, and a rule
//! whose guard can never hold is reported vacuous, not proved.

use engine::rules::RuleSet;
use std::time::Duration;
use verify::counterexample::Failure;
use verify::prove::{prove_rule, Options, ProofVerdict};

fn wrong_rules() -> RuleSet {
    RuleSet::parse("wrong.rules", include_str!("wrong.rules")).expect("the test file parses")
}

fn opts() -> Options {
    Options {
        widths: vec![8, 16, 32, 64],
        // A refutation returns as soon as the solver finds it; the budget
        // only matters on a loaded machine, where 20 s was seen to run out.
        timeout: Duration::from_secs(120),
        cache: None,
        smt2_dir: None,
        seed: 0,
        ..Options::default()
    }
}

fn expect_refuted(name: &str, width: u32, failure: Failure) {
    let set = wrong_rules();
    let rule = set.rule(name).expect("rule exists");
    let r = prove_rule(rule, width, &opts());
    match &r.verdict {
        ProofVerdict::Failed { counterexample } => {
            assert_eq!(
                counterexample.failure, failure,
                "{name} at {width}:\n{counterexample}"
            );
            assert!(
                counterexample.confirmed.is_ok(),
                "{name} at {width}: the interpreter does not confirm:\n{counterexample}"
            );
            assert!(counterexample.case.is_some(), "{name}: no replayable case");
        }
        other => panic!("{name} at width {width} should fail, got {other:?}"),
    }
}

#[test]
fn truncating_mod_drop_guarded_only_by_b_nonnegative_is_refuted() {
    for w in [8, 16, 32, 64] {
        expect_refuted("wrong_rem_drop", w, Failure::ValueDiffers);
    }
}

#[test]
fn truncating_div_drop_with_small_b_is_refuted() {
    for w in [8, 16, 32, 64] {
        expect_refuted("wrong_div_drop", w, Failure::ValueDiffers);
    }
}

#[test]
fn mul_zero_without_invalid_guard_is_refuted_as_validity() {
    for w in [8, 16, 32, 64] {
        expect_refuted("wrong_mul_zero", w, Failure::ValidityDiffers);
    }
}

#[test]
fn floordiv_nesting_with_negative_outer_divisor_is_refuted() {
    for w in [8, 16, 32, 64] {
        expect_refuted("wrong_floordiv_nest", w, Failure::ValueDiffers);
    }
}

#[test]
fn truncating_nested_div_add_without_sign_guard_is_refuted() {
    for w in [8, 16, 32, 64] {
        expect_refuted("wrong_nested_div_add", w, Failure::ValueDiffers);
    }
}

#[test]
fn rule_whose_guard_never_holds_is_vacuous() {
    let set = wrong_rules();
    let r = prove_rule(set.rule("vacuous_guard").unwrap(), 8, &opts());
    assert!(
        matches!(r.verdict, ProofVerdict::Vacuous),
        "{:?}",
        r.verdict
    );
}
