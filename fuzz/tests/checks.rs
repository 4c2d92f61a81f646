//! The per-case checks report what they claim to: a rewrite loop is a
//! `cap` finding, a wrong rule an `oracle` finding with its point, a panic
//! a `panic` finding with its location; a correct engine passes them all.

use engine::parse::parse_program;
use engine::rewrite::Simplifier;
use engine::rules::builtin;
use fuzz::campaign::{self, CampaignConfig, GeneratorChoice, Hooks};
use fuzz::checks::Validation;
use fuzz::checks::{check, CheckConfig, Kind, KindSet};
use fuzz::generate::Generator;
use fuzz::subject::Engine;

fn program(text: &str) -> engine::parse::Program {
    parse_program(text).unwrap()
}

#[test]
fn a_correct_rewrite_passes_every_check() {
    let p = program(
        "var r0 in [0, 7]\nvar r1 in [0, 3]\nexpr ((r0*4 + r1) // 8) * 8 + (r0*4 + r1) mod 8\n",
    );
    let simp = Engine::new(Simplifier::new(builtin()), Vec::new());
    let c = check(&p.graph, &p.outputs, &simp, &CheckConfig::default(), None);
    assert!(c.ok(), "{:?}", c.failures);
    assert!(c.counts.iter().sum::<usize>() > 0);
    assert_eq!(
        engine::print::expr(&c.graph, c.tgt.unwrap()[0]),
        "r0 * 4 + r1"
    );
}

#[test]
fn two_rules_that_undo_each_other_are_a_cap_finding() {
    let rules = engine::rules::RuleSet::with_file(
        builtin(),
        "loop.rules",
        "group chain\nrule swap_sub: x - y => -(y - x)\n",
    )
    .unwrap();
    let mut simp = Simplifier::new(&rules);
    simp.cap = 1000;
    let simp = Engine::new(simp, Vec::new());
    let p = program("var a in [0, 5]\nvar b in [0, 5]\nexpr a - b\n");
    let c = check(&p.graph, &p.outputs, &simp, &CheckConfig::default(), None);
    let f = c.failure(Kind::Cap).expect("cap");
    assert!(f.message.contains("swap_sub"), "{}", f.message);
    assert!(c.tgt.is_none());

    // ... and a campaign reports it as such, and goes on.
    let cfg = CampaignConfig {
        seed: 4,
        generator: GeneratorChoice::One(Generator::Expr),
        cases: Some(40),
        cap: 1000,
        shrink_steps: 0,
        ..CampaignConfig::default()
    };
    let s = campaign::run(&cfg, &rules, &Hooks::default()).unwrap();
    assert_eq!(s.cases, 40);
    assert!(
        s.by_kind.get(&Kind::Cap).copied().unwrap_or(0) > 0,
        "{:?}",
        s.by_kind
    );
}

#[test]
fn a_wrong_rule_is_an_oracle_finding_with_its_point() {
    let rules = engine::rules::RuleSet::with_file(
        builtin(),
        "wrong.rules",
        "group identity\nrule mul_zero: x * 0 => 0\n",
    )
    .unwrap();
    let simp = Engine::new(Simplifier::new(&rules), Vec::new());
    let p = program(
        "var c: bool\nvar x in [0, 5]\nexpr where(c, x, where(x < 3, x + 1, invalid)) * 0\n",
    );
    let c = check(&p.graph, &p.outputs, &simp, &CheckConfig::default(), None);
    let f = c.failure(Kind::Oracle).expect("oracle");
    assert!(f.message.starts_with("validity-differs"), "{}", f.message);
    assert_eq!(f.point.as_ref().unwrap()[0], ("c".to_string(), 0));
    assert_eq!(f.env.as_ref().unwrap().len(), 2);
    // Only the checks asked for run.
    let cfg = CheckConfig {
        kinds: KindSet::only(Kind::Range),
        ..CheckConfig::default()
    };
    assert!(check(&p.graph, &p.outputs, &simp, &cfg, None).ok());
}

#[test]
fn the_validator_hook_runs_and_its_panics_are_caught_with_their_location() {
    let p = program("var x in [0, 5]\nexpr x + 0\n");
    let simp = Engine::new(Simplifier::new(builtin()), Vec::new());
    let says_no =
        |_: &engine::ir::Graph, _: &[engine::ir::NodeId], _: &[engine::ir::NodeId]| Validation {
            verdict: fuzz::checks::ValidationVerdict::Counterexample,
            detail: Some("the validator disagrees\nover two lines".to_string()),
            fails: true,
            point: None,
        };
    let c = check(
        &p.graph,
        &p.outputs,
        &simp,
        &CheckConfig::default(),
        Some(&says_no),
    );
    assert_eq!(
        c.failure(Kind::Validate).unwrap().message,
        "the validator disagrees over two lines"
    );
    let panics = |_: &engine::ir::Graph,
                  _: &[engine::ir::NodeId],
                  _: &[engine::ir::NodeId]|
     -> Validation { panic!("boom {}", 42) };
    let c = check(
        &p.graph,
        &p.outputs,
        &simp,
        &CheckConfig::default(),
        Some(&panics),
    );
    let m = &c.failure(Kind::Panic).unwrap().message;
    assert!(
        m.starts_with("boom 42 (at ") && m.contains("checks.rs:"),
        "{m}"
    );
    // Without `Validate` selected the hook is not called.
    let cfg = CheckConfig {
        kinds: KindSet::ALL.without(Kind::Validate),
        ..CheckConfig::default()
    };
    assert!(check(&p.graph, &p.outputs, &simp, &cfg, Some(&panics)).ok());
}
