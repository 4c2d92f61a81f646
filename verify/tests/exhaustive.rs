//! A rule the solvers leave unknown at a small width is decided by walking
//! every assignment of its constants, variables and lane states.

use engine::rules::RuleSet;
use std::time::{Duration, Instant};
use verify::check::Method;
use verify::counterexample::State;
use verify::exhaustive::{size, walk, NotWalked, Walked};
use verify::portfolio::SolverKind;
use verify::prove::{prove_rule, Options, ProofVerdict};

const RULES: &str = "group t\n\
    # (x % C2) % C1 == x % C1 when C1 divides C2 (truncating)\n\
    rule rem_rem_divisor: (x % C2) % C1 => x % C1 if C1 > 0 && divides(C1, C2)\n\
    # wrong: the divisibility reversed\n\
    rule rem_rem_reversed: (x % C2) % C1 => x % C1 if C2 > 0 && divides(C2, C1)\n\
    # wrong: x * 0 is invalid where x is\n\
    rule mul_zero_drops_lane: x * 0 => 0\n\
    # (x // C) * C + x mod C == x (floor)\n\
    rule floor_recombine: (x // C) * C + x mod C => x if C != 0\n\
    # wrong for a negative x: its bound read\n\
    rule rem_of_small: x % C => x if C > 0 && vmin(x) >= 0 && vmax(x) < C\n\
    # three plain variables\n\
    rule add_assoc3: (x + y) + z => x + (y + z)\n";

fn set() -> RuleSet {
    RuleSet::parse("t.rules", RULES).unwrap()
}

fn far() -> Instant {
    Instant::now() + Duration::from_secs(60)
}

#[test]
fn a_rule_both_solvers_leave_unknown_at_8_bits_is_proved_by_walking_every_assignment() {
    let set = set();
    let rule = set.rule("rem_rem_divisor").unwrap();
    // Z3 does not settle this truncating query at 8 bits in 2 s, nor cvc5
    // beside it (6-9 s here).
    let opts = |walk| Options {
        widths: vec![8],
        timeout: Duration::from_secs(2),
        query_timeout: Some(Duration::from_secs(2)),
        per_width: true,
        walk,
        ..Options::default()
    };
    let solvers = prove_rule(rule, 8, &opts(false));
    assert!(
        matches!(solvers.verdict, ProofVerdict::Unknown { .. }),
        "the solvers alone: {:?}",
        solvers.verdict
    );
    let start = Instant::now();
    let r = prove_rule(rule, 8, &opts(true));
    assert!(matches!(r.verdict, ProofVerdict::Proved), "{:?}", r.verdict);
    assert_eq!(
        (r.method, r.solver),
        (Method::Interpreter, SolverKind::Interpreter)
    );
    assert!(!r.cached, "a walk is never cached");
    // The solvers' 2 s, then the walk, well within its own 2 s.
    assert!(
        start.elapsed() < Duration::from_secs(6),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn a_wrong_rule_is_refuted_by_the_walk_with_a_confirmed_counterexample() {
    let set = set();
    let rule = set.rule("rem_rem_reversed").unwrap();
    let Ok(Walked::Failed(cex)) = walk(rule, &[], 8, far()) else {
        panic!("not refuted");
    };
    assert!(cex.confirmed.is_ok(), "{:?}", cex.confirmed);
    assert!(cex.case.as_deref().is_some_and(|c| c.contains("expect")));
}

#[test]
fn a_rule_that_drops_an_invalid_lane_is_refuted_at_that_lane() {
    let set = set();
    let rule = set.rule("mul_zero_drops_lane").unwrap();
    let Ok(Walked::Failed(cex)) = walk(rule, &[], 8, far()) else {
        panic!("not refuted");
    };
    let x = cex.vars.iter().find(|v| v.name == "x").unwrap();
    assert_ne!(x.state, State::Valid, "{cex}");
    assert!(cex.confirmed.is_ok(), "{:?}", cex.confirmed);
}

#[test]
fn a_sound_rule_walks_every_constant_value_and_lane() {
    let set = set();
    let rule = set.rule("floor_recombine").unwrap();
    // 256 constants times 256 values and two lane states of x.
    assert_eq!(size(rule, &[], 8), Ok(256 * 258));
    let Ok(Walked::Proved { points }) = walk(rule, &[], 8, far()) else {
        panic!("not proved");
    };
    assert_eq!(points, 256 * 258);
}

#[test]
fn a_guard_that_reads_a_variables_bounds_is_not_walked() {
    let set = set();
    let rule = set.rule("rem_of_small").unwrap();
    assert_eq!(size(rule, &[], 8), Err(NotWalked::ReadsBounds("x".into())));
}

#[test]
fn a_walk_over_its_limit_is_not_started_and_one_out_of_time_says_how_far_it_got() {
    let set = set();
    let rule = set.rule("add_assoc3").unwrap();
    assert!(matches!(
        size(rule, &[], 16),
        Err(NotWalked::TooMany { .. })
    ));
    // 258^3 assignments at 8 bits: within the limit, but not in no time.
    assert_eq!(size(rule, &[], 8), Ok(258 * 258 * 258));
    let Ok(Walked::OutOfTime { points, of }) = walk(rule, &[], 8, Instant::now()) else {
        panic!("not stopped");
    };
    assert!(points < of && of == 258 * 258 * 258, "{points} of {of}");
}

#[test]
fn an_i32_operand_is_never_walked() {
    // An i32 operand has 2^32 values at every width: never walked.
    let set = RuleSet::parse(
        "t.rules",
        "group t\n# x + 0 == x\nrule add_zero32: x:i32 + 0 => x\n",
    )
    .unwrap();
    let rule = set.rule("add_zero32").unwrap();
    assert!(matches!(size(rule, &[], 8), Err(NotWalked::TooMany { .. })));
}
