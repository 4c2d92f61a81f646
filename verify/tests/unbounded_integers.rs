//! The unbounded-integer prover mode (`verify::prove::prove_unbounded`):
//! `index` as the mathematical integers, for a peer whose integers are
//! unbounded. A rule whose only fixed-width counterexamples wrap is proved
//! there; a rule wrong on small integers is refuted with a counterexample
//! realized at 64 bits and confirmed by the interpreter under the
//! unbounded model; a rule whose meaning counts bits is not tried.

use engine::rules::RuleSet;
use verify::check::Method;
use verify::counterexample::{replay_case_under, Failure};
use verify::prove::{prove_rule, prove_unbounded, Options, ProofVerdict};

fn rules() -> RuleSet {
    RuleSet::parse(
        "unbounded.rules",
        "group unbounded\n\
         # c*(x + y) == c*x + c*y over the integers; at a fixed width c*x can overflow where x + y does not\n\
         rule distribute: C * (x + y) => C * x + C * y\n\
         # x*c + y*c == (x + y)*c over the integers; at a fixed width x + y can overflow (c = 0)\n\
         rule factor: x * C + y * C => (x + y) * C\n\
         # wrong: x // C * C is x only where C divides x\n\
         rule div_mul_wrong: x // C * C => x\n\
         # wrong over the integers too: a masked x becomes 0\n\
         rule mul_zero_wrong: x * 0 => 0\n\
         # x & -1 == x, but `&` counts bits\n\
         rule and_all_ones: x & -1 => x\n",
    )
    .expect("the rules parse")
}

fn opts() -> Options {
    Options {
        widths: vec![64],
        ..Options::default()
    }
}

#[test]
fn a_rule_whose_fixed_width_counterexample_wraps_is_proved_for_unbounded_integers() {
    let set = rules();
    for name in ["distribute", "factor"] {
        let rule = set.rule(name).unwrap();
        // At 64 bits the target overflows where the source does not.
        let fixed = prove_rule(rule, 64, &opts());
        match &fixed.verdict {
            ProofVerdict::Failed { counterexample } => {
                assert_eq!(counterexample.failure, Failure::TargetUndefined, "{name}")
            }
            other => panic!("{name} at 64 bits: {other:?}"),
        }
        let r = prove_unbounded(rule, &opts());
        assert!(
            matches!(r.verdict, ProofVerdict::Proved),
            "{name}: {:?}",
            r.verdict
        );
        assert_eq!(r.method, Method::Unbounded);
    }
}

#[test]
fn a_rule_wrong_on_small_integers_is_refuted_for_unbounded_integers() {
    let set = rules();
    for (name, failure) in [
        ("div_mul_wrong", Failure::ValueDiffers),
        ("mul_zero_wrong", Failure::ValidityDiffers),
    ] {
        let r = prove_unbounded(set.rule(name).unwrap(), &opts());
        let ProofVerdict::Failed { counterexample: c } = &r.verdict else {
            panic!("{name}: {:?}", r.verdict);
        };
        assert_eq!(c.failure, failure, "{name}");
        assert!(c.unbounded && c.width == 64, "{name}: {c:?}");
        assert!(c.confirmed.is_ok(), "{name}: {c:?}");
        let case = c.case.as_deref().expect("a case");
        assert!(case.contains("# integers: unbounded"), "{case}");
        // Read back, the case fails the same way under the unbounded model.
        let (f, _) = replay_case_under(case, c.model()).expect("the case replays");
        assert_eq!(f, failure, "{case}");
    }
}

#[test]
fn a_rule_whose_op_counts_bits_is_not_tried_over_the_unbounded_integers() {
    let set = rules();
    let r = prove_unbounded(set.rule("and_all_ones").unwrap(), &opts());
    match &r.verdict {
        ProofVerdict::Unknown { reason } => {
            assert!(reason.contains("depends on the width's bits"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
}
