//! Every algorithmic rule (every sub-rule of a row of the pass registry)
//! fires on its fire cases (`engine/src/passes/fire_cases.txt`), which the
//! gate's firing stage runs first so that every rule has a firing to
//! validate.

use engine::parse::parse_program;
use engine::passes::{fire_cases, pass_of, rules, PASSES};
use engine::rewrite::Simplifier;
use engine::rules::builtin;

#[test]
fn every_algorithmic_rule_fires_on_its_fire_cases() {
    let simp = Simplifier::new(builtin());
    let mut missing: Vec<&str> = rules().collect();
    let mut failures = Vec::new();
    for case in fire_cases().unwrap() {
        let mut p = parse_program(&case.program).unwrap();
        let roots = p.outputs.clone();
        let out = simp.simplify(&mut p.graph, &roots, true).unwrap();
        let fired = out
            .trace
            .iter()
            .any(|f| simp.rule_names()[f.rule] == case.rule);
        if fired {
            missing.retain(|r| *r != case.rule);
        } else {
            failures.push(format!("{} does not fire on {}", case.rule, case.program));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(missing.is_empty(), "rules without a fire case: {missing:?}");
}

#[test]
fn a_pass_is_found_by_each_of_its_rule_names() {
    for pass in &PASSES {
        for rule in pass.rules {
            assert_eq!(pass_of(rule).map(|p| p.name), Some(pass.name));
        }
    }
    assert!(pass_of("mod_in_range").is_none());
}

#[test]
fn every_sub_rule_states_what_its_firings_decrease_and_its_fire_cases_keep_it() {
    let simp = Simplifier::new(builtin());
    for pass in &PASSES {
        assert_eq!(pass.decreases.len(), pass.rules.len(), "{}", pass.name);
    }
    let mut failures = Vec::new();
    for case in fire_cases().unwrap() {
        let mut p = parse_program(&case.program).unwrap();
        let roots = p.outputs.clone();
        let out = simp.simplify(&mut p.graph, &roots, true).unwrap();
        for f in &out.trace {
            if let Some(Err(why)) = simp.check_decrease(&mut p.graph, f.rule, f.before, f.after) {
                failures.push(format!("{}: {why}", simp.rule_names()[f.rule]));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
