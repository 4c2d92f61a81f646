//! Identities with a symbolic divisor (XLA's and Halide's: a remainder of a
//! remainder by a divisor of its modulus, a remainder of a sum, a quotient
//! of a remainder) are proved for every width by one query, and their
//! wrong variants refuted: a remainder by a symbolic divisor is its
//! numerator less a multiple of the divisor in the encoding, so that a
//! remainder by a divisor of that divisor splits.

use engine::rules::RuleSet;
use std::time::Duration;
use verify::prove::{Options, ProofVerdict};
use verify::schedule::prove_rule_widths;

fn opts() -> Options {
    Options {
        widths: vec![8, 16, 32, 64],
        timeout: Duration::from_secs(20),
        ..Options::default()
    }
}

#[test]
fn remainders_by_a_divisor_of_a_symbolic_modulus_are_proved_for_every_width() {
    let set = RuleSet::parse(
        "symbolic_divisors.rules",
        include_str!("symbolic_divisors.rules"),
    )
    .expect("the rules parse");
    let o = opts();
    for name in ["mod_mod_divisor", "mod_sum", "mod_div_divisor"] {
        let rule = set.rule(name).unwrap();
        let rows = prove_rule_widths(rule, &o, &|_| {});
        for r in &rows {
            assert!(
                matches!(r.verdict, ProofVerdict::Proved) && r.width_generic,
                "{name} at {}: {:?}",
                r.width,
                r.verdict
            );
        }
    }
}

#[test]
fn a_symbolic_divisor_identity_with_the_divisibility_reversed_is_refuted() {
    let set = RuleSet::parse(
        "wrong.rules",
        "group symdiv\n\
         # wrong: C2 divides C1, not the other way round\n\
         rule mod_mod_wrong: (x mod C2) mod C1 => x mod C1 if C1 > 0 && divides(C2, C1)\n\
         # wrong: truncation where the identity needs floor\n\
         rule mod_sum_rem: (x % C + y) % C => (x + y) % C if C > 0 && fits(x + y) && valid(x) && valid(y)\n",
    )
    .expect("the rules parse");
    let o = opts();
    for name in ["mod_mod_wrong", "mod_sum_rem"] {
        for r in prove_rule_widths(set.rule(name).unwrap(), &o, &|_| {}) {
            assert!(
                matches!(r.verdict, ProofVerdict::Failed { .. }),
                "{name} at {}: {:?}",
                r.width,
                r.verdict
            );
        }
    }
}
