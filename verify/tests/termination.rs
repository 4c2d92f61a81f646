//! The built-in rule set terminates: every rule decreases the reduction
//! order (Z3 settling the ones that come down to their constants) but
//! the four whose files say why they stop, and no rules undo each other;
//! the lowering group's rules that copy an operand are justified by their
//! group. A rule that does not decrease has its reason shown.

use engine::rules::{builtin, load_lowering};
use std::time::Duration;
use verify::termination::{check, Method, TerminationVerdict};

#[test]
fn every_builtin_rule_decreases_the_order_or_says_why_it_stops() {
    let set = builtin();
    let rules: Vec<_> = set.rules().collect();
    let r = check(&rules, set, &[8, 16, 32, 64], Duration::from_secs(30));
    let failing: Vec<String> = r
        .failing()
        .map(|t| format!("{} {}", t.rule, t.verdict.line()))
        .collect();
    assert!(failing.is_empty(), "{failing:?}");
    assert!(r.cycles.is_empty(), "{:?}", r.cycles);
    let justified: Vec<&str> = r.justified().map(|t| t.rule.as_str()).collect();
    assert_eq!(
        justified,
        [
            "floordiv_eq",
            "floordiv_eq_neg",
            "add_push_const",
            "mul_push_const"
        ]
    );
    assert_eq!(r.decreasing(), rules.len() - 4);
    // The constants of these are left to Z3, which proves them.
    for name in ["rem_neg_const", "mod_reduce_coeff", "mod_split_offset"] {
        let v = &r.rules.iter().find(|t| t.rule == name).unwrap().verdict;
        assert!(
            matches!(
                v,
                TerminationVerdict::Terminates {
                    method: Method::Solver,
                    ..
                }
            ),
            "{name}: {}",
            v.line()
        );
    }
    println!("{}", r.summary());
}

#[test]
fn the_lowering_rules_that_copy_an_operand_are_justified_by_their_group() {
    let set = load_lowering().unwrap();
    let rules: Vec<_> = set.rules().collect();
    let r = check(&rules, &set, &[8], Duration::from_secs(30));
    assert!(r.holds(), "{}", r.summary());
    let lower_mod = &r
        .rules
        .iter()
        .find(|t| t.rule == "lower_mod")
        .unwrap()
        .verdict;
    match lower_mod {
        TerminationVerdict::Justified {
            failure,
            justification,
        } => {
            assert!(failure.contains("`x` occurs 3 times"), "{failure}");
            assert!(justification.contains("floor-family"), "{justification}");
        }
        other => panic!("{}", other.line()),
    }
    // A power of two goes to a shift: below the division in the order.
    assert!(matches!(
        r.rules
            .iter()
            .find(|t| t.rule == "lower_floordiv_pow2")
            .unwrap()
            .verdict,
        TerminationVerdict::Terminates { .. }
    ));
}
