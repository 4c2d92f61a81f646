//! The cross-check catches a wrong encoding in one solver's query: with the
//! integer encoding of `mod` deliberately broken (read as the Euclidean
//! remainder, never negative), Z3 "proves" a wrong rule at 32 and 64 bits
//! (where only the integer encoding is used); cvc5 on the bitvector
//! encoding at width 8, which the fault does not touch, finds the
//! counterexample, and the rule is disputed, not proved. (One test in this
//! binary: the fault is process-wide.) Needs cvc5 (`apt-get install cvc5`;
//! `.ci/run` installs it): without it the test fails and says so.

use engine::rules::RuleSet;
use std::time::Duration;
use verify::crosscheck::CrossCheck;
use verify::cvc5::{path as cvc5_path, version as cvc5_version};
use verify::encode::fault;
use verify::prove::{Options, ProofVerdict};
use verify::schedule::prove_all;

#[test]
fn a_wrong_encoding_of_mod_in_one_solver_is_caught_by_the_cross_check() {
    assert!(
        cvc5_version().is_some(),
        "cvc5 is not installed (or `{}` does not run): the cross-check cannot run; \
         install it with `apt-get install -y cvc5` or point TILEPROOF_CVC5 at it",
        cvc5_path()
    );
    let set = RuleSet::parse(
        "wrong.rules",
        "# value-differs: x mod N is negative where N is\n\
         rule wrong_mod_sign: max(x mod N, 0) => x mod N if valid(x)\n\
         # x + 0 == x\n\
         rule add_zero_x: x + 0 => x\n",
    )
    .expect("parses");
    let wrong = [set.rule("wrong_mod_sign").unwrap()];
    let opts = |cross_check| Options {
        widths: vec![32, 64],
        timeout: Duration::from_secs(20),
        cross_check,
        ..Options::default()
    };
    fault::set_euclidean_mod(true);
    // Z3 alone, on the broken integer encoding: "proved".
    let alone = prove_all(&wrong, &opts(false), &|_| {});
    // With the cross-check: cvc5 on the bitvector encoding disagrees.
    let checked = prove_all(&wrong, &opts(true), &|_| {});
    fault::set_euclidean_mod(false);
    for r in &alone {
        assert!(
            matches!(r.verdict, ProofVerdict::Proved),
            "the fault should fool Z3 alone at {}: {:?}",
            r.width,
            r.verdict
        );
        assert_eq!(r.cross_check, CrossCheck::NotRun);
    }
    for r in &checked {
        assert!(
            matches!(r.verdict, ProofVerdict::Disputed { .. }),
            "at {}: {:?}",
            r.width,
            r.verdict
        );
        assert!(
            matches!(r.cross_check, CrossCheck::Disagrees { .. }),
            "{:?}",
            r.cross_check
        );
    }
    // The correct encoding refutes it on its own.
    let fixed = prove_all(&wrong, &opts(false), &|_| {});
    assert!(
        fixed
            .iter()
            .all(|r| matches!(r.verdict, ProofVerdict::Failed { .. })),
        "{:?}",
        fixed.iter().map(|r| r.verdict.name()).collect::<Vec<_>>()
    );
    // A sound rule: cvc5 agrees, and the rule stays proved.
    let ok = prove_all(&[set.rule("add_zero_x").unwrap()], &opts(true), &|_| {});
    assert!(
        ok.iter().all(|r| matches!(r.verdict, ProofVerdict::Proved)
            && matches!(r.cross_check, CrossCheck::Agrees { .. })),
        "{:?}",
        ok.iter()
            .map(|r| (&r.verdict, &r.cross_check))
            .collect::<Vec<_>>()
    );
}
