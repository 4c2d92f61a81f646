//! The portfolio: where Z3 leaves a bitvector query unknown in its share,
//! cvc5 runs beside it on the same query; the first definite answer wins,
//! the other solver is stopped, and the row and the cache say which one
//! answered. A truncating remainder of a remainder by a divisor of its
//! symbolic modulus at 8 bits: Z3 4.8.12 did not settle it in 20 s and
//! cvc5 did in a few; Z3 4.15.8 leaves the bitvector query to cvc5 but
//! settles the bounded-integer one in 2 to 10 s, about when cvc5 answers,
//! so either may win: the tests pin the race and its record, not the
//! winner.

use engine::rules::RuleSet;
use std::time::{Duration, Instant};
use verify::cache::Cache;
use verify::portfolio::SolverKind;
use verify::prove::{prove_rule, Options, ProofVerdict};

const RULES: &str = "group symdiv\n\
    # (x % C2) % C1 == x % C1 when C1 divides C2 (truncating)\n\
    rule rem_rem_divisor: (x % C2) % C1 => x % C1 if C1 > 0 && divides(C1, C2)\n";

fn opts(timeout: u64, portfolio: bool, cache: Option<Cache>) -> Options {
    Options {
        widths: vec![8],
        timeout: Duration::from_secs(timeout),
        query_timeout: Some(Duration::from_secs(timeout)),
        per_width: true,
        portfolio,
        cache,
        // The solvers alone: these tests time them.
        walk: false,
        ..Options::default()
    }
}

#[test]
fn a_query_z3_leaves_unknown_in_its_bitvector_share_is_settled_by_the_first_solver_and_cached_as_its(
) {
    assert!(
        verify::cvc5::version().is_some(),
        "cvc5 does not run here (the README's prerequisite line installs it)"
    );
    let set = RuleSet::parse("t.rules", RULES).unwrap();
    let rule = set.rule("rem_rem_divisor").unwrap();
    let dir = std::env::temp_dir().join(format!("tileproof-portfolio-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let start = Instant::now();
    let r = prove_rule(rule, 8, &opts(25, true, Some(Cache::new(&dir))));
    let took = start.elapsed();
    assert!(
        matches!(r.verdict, ProofVerdict::Proved),
        "{:?} {:?}",
        r.verdict,
        r.notes
    );
    // The loser was stopped: the rule took no longer than its bound.
    assert!(took < Duration::from_secs(26), "{took:?}");
    // The proof is cached as the winner's, and read back as the winner's.
    let again = prove_rule(rule, 8, &opts(25, true, Some(Cache::new(&dir))));
    assert!(matches!(again.verdict, ProofVerdict::Proved) && again.cached);
    assert_eq!(again.solver, r.solver);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn without_the_portfolio_z3_alone_answers() {
    let set = RuleSet::parse("t.rules", RULES).unwrap();
    let rule = set.rule("rem_rem_divisor").unwrap();
    let r = prove_rule(rule, 8, &opts(4, false, None));
    assert!(
        !matches!(r.verdict, ProofVerdict::Failed { .. }),
        "{:?}",
        r.verdict
    );
    assert_eq!(r.solver, SolverKind::Z3);
}
