//! The schematic lemmas behind fold_divmod_general (congruence,
//! gcd_with_remainder, factor_remainder: `verify/lemmas/divmod.rules`) are
//! proved at width 8, bit-exact. They are statements, not engine rules: the
//! engine must not load them (no rule exists twice).
//!
//! Proving them takes minutes of nonlinear solving whose outcome under a
//! wall-clock budget depends on the machine's load (CI saw `incomplete`
//! from the integer encoding after the bitvector attempt ran out), so the
//! proof is not part of the fast, deterministic `cargo test`: the nightly
//! workflow runs it (`cargo test --release -p tileproof-verify --test
//! lemmas -- --ignored`), and `tileproof prove --rules
//! verify/lemmas/divmod.rules --width 8` does the same by hand.

use engine::rules::{builtin, RuleSet};
use std::time::Duration;
use verify::prove::{prove_rule, Options, Verdict};

fn lemmas() -> RuleSet {
    RuleSet::parse("divmod.rules", include_str!("../lemmas/divmod.rules"))
        .expect("the lemma file parses")
}

#[test]
#[ignore = "minutes of nonlinear solving: run by the nightly workflow with --ignored"]
fn divmod_lemmas_are_proved_at_width_8() {
    let set = lemmas();
    let opts = Options {
        widths: vec![8],
        timeout: Duration::from_secs(300),
        cache: None,
        smt2_dir: None,
        seed: 0,
        ..Options::default()
    };
    let mut bad = Vec::new();
    for rule in set.rules() {
        let r = prove_rule(rule, 8, &opts);
        if !matches!(r.verdict, Verdict::Proved) {
            bad.push(format!("{}: {:?}", rule.name, r.verdict));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // Each identity of the issue has a schema.
    for prefix in ["congruence_", "gcd_remainder_", "factor_"] {
        assert!(
            set.rules().any(|r| r.name.starts_with(prefix)),
            "no {prefix} lemma"
        );
    }
}

#[test]
fn divmod_lemmas_are_not_engine_rules() {
    let engine_rules = builtin();
    for rule in lemmas().rules() {
        assert!(
            engine_rules.rule(&rule.name).is_none(),
            "lemma {} is also an engine rule",
            rule.name
        );
    }
}
