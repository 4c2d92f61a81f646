//! Rules of any size load and their proof queries build: a long chain on
//! the left or a long product of constants on the right is read, encoded
//! and proved without recursing on its depth (nor taking quadratic time).

use engine::rules::RuleSet;
use std::time::Duration;
use verify::encode::{Enc, Mode};
use verify::prove::{prove_rule, Options, ProofVerdict};
use verify::query::RuleQuery;

fn options() -> Options {
    Options {
        widths: vec![8],
        timeout: Duration::from_secs(60),
        cache: None,
        smt2_dir: None,
        seed: 0,
        ..Options::default()
    }
}

fn one_rule(text: &str) -> RuleSet {
    RuleSet::parse("deep.rules", text).unwrap_or_else(|e| panic!("the rule loads: {e}"))
}

#[test]
fn a_rule_with_a_15000_term_left_side_loads_and_its_query_builds() {
    let n = 15_000;
    let chain = vec!["x"; n].join(" + ");
    // The sum of n copies of x is x * n, overflow and all (wrapping at 8
    // bits on both sides).
    let rules = one_rule(&format!("group deep\nrule deep_sum: {chain} => x * {n}\n"));
    let rule = rules.rule("deep_sum").expect("the rule is there");
    assert_eq!(rule.show(&rule.lhs), chain);
    // Solving 15,000 wrapping additions is Z3's business; building and
    // encoding the query is ours.
    for mode in [Mode::Bv, Mode::Int] {
        for types in rule.instances() {
            let q = RuleQuery::new(rule, &types, Enc::new(mode, 8));
            assert!(!q.nodes.is_empty());
        }
    }
}

#[test]
fn a_prove_query_with_a_5000_factor_computed_right_side_is_proved() {
    let n = 5_000;
    let product = vec!["C"; n].join(" * ");
    let rules = one_rule(&format!(
        "group deep\nrule deep_product: x * C => x * ({product}) if C == 1\n"
    ));
    let rule = rules.rule("deep_product").expect("the rule is there");
    let r = prove_rule(rule, 8, &options());
    assert!(matches!(r.verdict, ProofVerdict::Proved), "{:?}", r.verdict);
}

#[test]
fn a_rule_over_the_smt_limit_is_unknown_at_once_and_says_why() {
    let n = 15_000;
    let chain = vec!["x"; n].join(" + ");
    let rules = one_rule(&format!("group deep\nrule deep_sum: {chain} => x * {n}\n"));
    let rule = rules.rule("deep_sum").expect("the rule is there");
    let r = prove_rule(rule, 64, &options());
    match &r.verdict {
        ProofVerdict::Unknown { reason } => {
            assert!(reason.contains("over the SMT limit"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
}
