//! The one decision policy (`tileproof::decide`): a result the solver
//! could not decide is settled by an exhaustive JIT walk of a small domain,
//! stays unknown with both reasons on a large one, and a peer's relaxed
//! model is never walked with tileproof's own semantics.

use engine::dtype::Width;
use engine::parse::parse_program;
use engine::semantics::{Model, Partial};
use fuzz::checks::ValidationVerdict;
use tileproof::decide::{validation_of, walk};
use verify::check::CheckResult;
use verify::check::Method;

/// What the walk says of `text` after the solver gave up.
fn walked(text: &str, model: Model) -> CheckResult {
    let p = parse_program(text).unwrap();
    walk(&p.graph, &p.outputs, &p.expects, model, "canceled".into())
}

#[test]
fn an_undecided_rewrite_on_a_small_domain_is_settled_by_enumeration() {
    let text = "var x in [0, 1000]\nexpr x / 7 * 7 + x % 7\nexpect x\n";
    let r = walked(text, Width::W64.into());
    assert!(
        matches!(
            r,
            CheckResult::Equivalent {
                method: Method::Jit
            }
        ),
        "{r:?}"
    );
    let p = parse_program(text).unwrap();
    let v = validation_of(&p.graph, &r);
    assert_eq!(v.verdict, ValidationVerdict::EquivalentByEnumeration);
    assert!(v.verdict.proves() && !v.fails);
}

#[test]
fn an_undecided_wrong_rewrite_on_a_small_domain_is_a_counterexample_at_its_point() {
    let text = "var x in [0, 1000]\nexpr x / 7 * 7 + x % 7\nexpect x + x / 999\n";
    let p = parse_program(text).unwrap();
    let r = walked(text, Width::W64.into());
    let v = validation_of(&p.graph, &r);
    assert!(v.fails);
    assert_eq!(v.verdict, ValidationVerdict::Counterexample);
    assert_eq!(v.point, Some(vec![999]));
    let detail = v.detail.unwrap();
    assert!(detail.starts_with("exhaustive, JIT: "), "{detail}");
    assert!(detail.contains("confirmed by the interpreter"), "{detail}");
}

#[test]
fn an_undecided_rewrite_on_a_large_domain_stays_unknown_with_both_reasons() {
    let r = walked(
        "var x in [0, 1000000]\nvar y in [0, 1000000]\nexpr x / 7 * 7 + x % 7 + y\nexpect x + y\n",
        Width::W64.into(),
    );
    match r {
        CheckResult::Unknown { reason } => assert!(
            reason.contains("canceled") && reason.contains("too many points"),
            "{reason}"
        ),
        other => panic!("expected unknown, got {other:?}"),
    }
}

#[test]
fn a_relaxed_model_is_not_walked_with_tileproofs_own_semantics() {
    let relaxed = Model {
        partial: Partial::Unspecified,
        ..Model::from(Width::W64)
    };
    let r = walked("var x in [0, 10]\nexpr x\nexpect x\n", relaxed);
    match r {
        CheckResult::Unknown { reason } => {
            assert!(reason.contains("own semantics"), "{reason}")
        }
        other => panic!("expected unknown, got {other:?}"),
    }
}
