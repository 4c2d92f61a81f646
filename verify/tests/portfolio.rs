//! The portfolio: where Z3 leaves a bitvector query unknown in its share,
//! cvc5 runs beside it on the same query; the first definite answer wins,
//! the other solver is stopped, and the row and the cache say which one
//! answered. A truncating remainder of a remainder by a divisor of its
//! symbolic modulus at 8 bits: Z3 4.8.12 does not settle it in 20 s, cvc5
//! does in a few.

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
fn a_query_z3_leaves_unknown_is_proved_by_cvc5_beside_it_and_cached_as_cvc5s() {
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
    assert_eq!(r.solver, SolverKind::Cvc5);
    assert!(took < Duration::from_secs(26), "{took:?}");
    // The proof is cached as cvc5's, and read back as cvc5's.
    let again = prove_rule(rule, 8, &opts(25, true, Some(Cache::new(&dir))));
    assert!(matches!(again.verdict, ProofVerdict::Proved) && again.cached);
    assert_eq!(again.solver, SolverKind::Cvc5);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn z3_alone_leaves_the_same_query_unknown() {
    let set = RuleSet::parse("t.rules", RULES).unwrap();
    let rule = set.rule("rem_rem_divisor").unwrap();
    let r = prove_rule(rule, 8, &opts(4, false, None));
    assert!(
        matches!(r.verdict, ProofVerdict::Unknown { .. }),
        "{:?}",
        r.verdict
    );
    assert_eq!(r.solver, SolverKind::Z3);
}
