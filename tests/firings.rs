//! Every firing of an algorithmic rule is validated (stage 3 of the gate):
//! the firings of a sound rule all validate, those of a broken one are
//! refuted with a case that `verify::check` reproduces from its text alone.

use engine::rewrite::Simplifier;
use engine::rules::{builtin, RuleSet};
use fuzz::checks::Validation;
use fuzz::firings::{validate_firings, Firings, ValidatedFiring};
use std::time::Duration;
use verify::check::{check, CheckResult};

/// Marks the rules named as if they were algorithmic.
fn marked(simp: &Simplifier, names: &[&str]) -> Vec<bool> {
    simp.rule_names()
        .iter()
        .map(|n| names.contains(&n.as_str()))
        .collect()
}

/// The CLI's validator at width 64.
fn smt(g: &engine::ir::Graph, s: &[engine::ir::NodeId], t: &[engine::ir::NodeId]) -> Validation {
    tileproof::decide::validator(engine::dtype::Width::W64, Duration::from_secs(10))(g, s, t)
}

/// The generated cases of a gate run (no fire cases), validated by [`smt`].
fn validate(simp: &Simplifier, alg: &[bool]) -> Firings {
    validate_firings(simp, alg, &[], 1, 300, Duration::from_secs(60), &smt)
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
    let bad: Vec<&ValidatedFiring> = f.failed().collect();
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
fn every_algorithmic_rule_is_validated_on_its_fire_cases_alone() {
    let simp = Simplifier::new(builtin());
    let alg: Vec<bool> = (0..simp.rule_names().len())
        .map(|i| simp.is_algorithmic(i))
        .collect();
    let cases = engine::passes::fire_cases().unwrap();
    // No generated case: the fire cases alone reach every rule.
    let f = validate_firings(&simp, &alg, &cases, 1, 0, Duration::ZERO, &smt);
    assert_eq!(f.rules.len(), engine::passes::rules().count());
    assert!(f.unvalidated().is_empty(), "{:?}", f.unvalidated());
    assert_eq!(f.failed().count(), 0);
}

#[test]
fn a_rule_that_never_fires_is_not_validated() {
    // A rule whose guard never holds: it fires nowhere, so nothing of it
    // is validated, and the run says so rather than passing it.
    let set = RuleSet::with_file(
        builtin(),
        "never.rules",
        "group identity\nrule never_fires: x * 12345 => x if vmin(x) > vmax(x)\n",
    )
    .unwrap();
    let simp = Simplifier::new(&set);
    let f = validate(&simp, &marked(&simp, &["never_fires"]));
    assert_eq!(f.unvalidated(), vec!["never_fires".to_string()]);
    assert_eq!(f.per_rule()[0].fired, 0);
}

#[test]
fn no_algorithmic_rule_means_no_firing_work() {
    let simp = Simplifier::new(builtin());
    let f = validate(&simp, &marked(&simp, &[]));
    assert!(f.rules.is_empty() && f.total == 0 && f.cases == 0);
}

#[test]
fn every_residue_firing_is_proved_at_width_64() {
    // The residue rewrites (engine/src/passes/residue.rs) on the Halide cases they
    // were written for, over full-width variables, so that a node they add
    // that could overflow where the gate fails would be refuted.
    let cases = [
        "max(min(x * 8, 32), y * 16) mod 4 == 0",
        "where(4 < x, x * 9 + 1, y * 6 - 2) mod 3 == 1",
        "max(x * 4, 32) mod 16 < 13",
        "0 <= 5 mod max(x, -x)",
        "where(x mod 2 == 0, (x + 1) // 2, invalid)",
        "where(x mod 3 == 1, (x + 2) // 3, invalid)",
        "where(x mod 3 == 2, (x + 5) // 3, invalid)",
        "where(x mod 4 == 1, (x + 3) // 2, invalid)",
        "where(x mod 4 == 3, x mod 2, invalid)",
        "where(x mod 6 == 5 && y < x, (x - 7) // 3 + (y * 4 + 2) mod 2, invalid)",
        "where(10 < y && y mod 17 == 4 && y < 30 && y * 16 + 3 == x, where(x mod 2 == 0, 1237, y), invalid)",
    ];
    let fired = firings_proved_at_64("residue_", FULL, &cases);
    let all: std::collections::BTreeSet<String> = engine::passes::residue::RULES
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(fired, all, "every residue rule fired");
}

/// Full-width variables.
const FULL: &str = "[-9223372036854775808, 9223372036854775807]";

/// The firings of the rules named `prefix*` while simplifying each case
/// (over `x`, `y` in `range`), each proved by Z3 at width 64; the names
/// that fired.
fn firings_proved_at_64(
    prefix: &str,
    range: &str,
    cases: &[&str],
) -> std::collections::BTreeSet<String> {
    let simp = Simplifier::new(builtin());
    let names = simp.rule_names();
    let mut fired = std::collections::BTreeSet::new();
    for case in cases {
        let src = format!("var x in {range}\nvar y in {range}\nexpr {case}\n");
        let mut p = engine::parse::parse_program(&src).unwrap();
        let out = simp.simplify(&mut p.graph, &p.outputs, true).unwrap();
        for f in &out.trace {
            let name = names[f.rule].as_str();
            if !name.starts_with(prefix) {
                continue;
            }
            fired.insert(name.to_string());
            let r = check(
                &p.graph,
                &[f.before],
                &[f.after],
                engine::dtype::Width::W64,
                Duration::from_secs(20),
            );
            assert!(
                matches!(r, CheckResult::Equivalent { .. }),
                "{name} in {case}: {} => {}: {}",
                engine::print::expr(&p.graph, f.before),
                engine::print::expr(&p.graph, f.after),
                r.name()
            );
        }
    }
    fired
}

#[test]
fn every_arm_narrowing_firing_is_proved_at_width_64() {
    // gate_narrow_arms on Halide's select of a signed division, and on arms
    // whose narrowed bounds settle a remainder and a min; over full-width
    // variables, so a new node that could overflow would be refuted.
    let cases = [
        "where(x * 2 + 1 < 0, -(-1 // -(x * 2 + 1)), -1 // (x * 2 + 1))",
        "where(x < 8, where(0 <= x, x mod 8, y), min(x, 7) + y)",
        "where(y <= x, (x - y) // (x - y + 1), x + 1)",
    ];
    let fired = firings_proved_at_64("gate_narrow_arms", FULL, &cases);
    assert!(fired.contains("gate_narrow_arms"), "it fired: {fired:?}");
}

#[test]
fn every_pinned_remainder_firing_is_proved_at_width_64() {
    // gate_narrow_index (and _arms) on XLA's constraints as gates: a pinned
    // remainder makes the quotient times (a multiple of) its divisor the
    // dividend less the remainder. Each of these fires it (printed with
    // `simplify --trace`); every firing is proved at width 64.
    let cases = [
        "where((x - 3) mod 7 == 0, ((x - 3) // 7) * 7 + 3, invalid)",
        "where(x mod 4 == 2 && 0 < y, (x // 4) * 8 + y, invalid)",
        "where((x + y) mod 16 == 15, ((x + y) // 16) * 32, invalid)",
        "where(x mod 3 == 0, (x // 3) * 3, y)",
    ];
    let fired = firings_proved_at_64("gate_narrow", "[-1000000000, 1000000000]", &cases);
    assert!(
        fired.contains("gate_narrow_index") && fired.contains("gate_narrow_arms"),
        "it fired: {fired:?}"
    );
}

/// A test build's pass: `x * 2` to `x + x` (sound), which the declarative
/// `add_self` turns back: the two loop. It states that it decreases the
/// reduction order, which it does not.
fn double(
    g: &mut engine::ir::Graph,
    n: engine::ir::NodeId,
    _: bool,
    _: engine::dtype::Width,
) -> Option<(usize, engine::ir::NodeId)> {
    use engine::ir::Op;
    let node = *g.node(n);
    if node.op != Op::Mul || node.dtype != engine::dtype::DType::Index {
        return None;
    }
    let (a, b) = (node.src()[0], node.src()[1]);
    (g.node(b).as_const() == Some(2)).then(|| (0, g.mk(Op::Add, &[a, a])))
}

/// The registry with [`double`] after its passes.
fn with_double(canonicalizing: bool) -> Vec<engine::passes::Pass> {
    use engine::passes::{At, Decreases, Pass, PASSES};
    let mut passes = PASSES.to_vec();
    passes.push(Pass {
        name: "double",
        rules: &["double"],
        decreases: &[Decreases::Order],
        at: At::Any,
        canonicalizing,
        run: double,
    });
    passes
}

#[test]
fn a_looping_algorithmic_pass_is_caught_by_the_firing_validation() {
    // Canonicalizing, its result is not taken twice at one node, so the
    // rewriter stops; each firing is sound, and none decreases the order.
    let passes = with_double(true);
    let simp = Simplifier::with_passes(builtin(), &passes);
    let f = validate_firings(
        &simp,
        &marked(&simp, &["double"]),
        &[],
        1,
        60,
        Duration::from_secs(60),
        &smt,
    );
    assert!(f.total > 0, "double never fired");
    let bad: Vec<&ValidatedFiring> = f.failed().collect();
    assert!(!bad.is_empty());
    for x in bad {
        assert!(x.validated(), "{}: sound", x.case);
        let why = x.undecreasing.as_deref().unwrap_or_default();
        assert!(why.contains("decreases the reduction order"), "{why}");
    }
}

#[test]
fn a_pass_that_loops_with_a_rule_hits_the_cap_naming_the_cycle() {
    let passes = with_double(false);
    let simp = Simplifier::with_passes(builtin(), &passes);
    let mut p = engine::parse::parse_program("var x in [0, 7]\nexpr x * 2\n").unwrap();
    let e = simp.simplify(&mut p.graph, &p.outputs, false).unwrap_err();
    let cycle: Vec<&str> = e.cycle.iter().map(String::as_str).collect();
    assert!(
        cycle == ["double", "add_self"] || cycle == ["add_self", "double"],
        "{e}"
    );
    assert!(
        e.to_string().contains("add_self -> double")
            || e.to_string().contains("double -> add_self"),
        "{e}"
    );
}
