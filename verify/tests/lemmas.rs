//! The schematic lemmas behind fold_divmod_general (congruence,
//! gcd_with_remainder, factor_remainder: `verify/lemmas/divmod.rules`) are
//! proved at every width, width-generically (one query for all widths of 8
//! bits and more: about 20 s on 2 cores; they took minutes of nonlinear
//! solving at width 8 alone before the width-generic encoding). They are
//! statements, not engine rules: the engine must not load them (no rule
//! exists twice). `tileproof prove --rules verify/lemmas/divmod.rules` does
//! the same by hand.

use engine::rules::{builtin, RuleSet};
use std::time::Duration;
use verify::prove::{Options, ProofVerdict};
use verify::schedule::prove_all;

fn lemmas() -> RuleSet {
    RuleSet::parse("divmod.rules", include_str!("../lemmas/divmod.rules"))
        .expect("the lemma file parses")
}

#[test]
fn divmod_lemmas_are_proved_at_every_width() {
    let set = lemmas();
    let opts = Options {
        widths: vec![8, 16, 32, 64],
        // Generous against a loaded CI machine.
        timeout: Duration::from_secs(60),
        // The repository's proof cache, as for the built-in rules.
        cache: Some(verify::cache::Cache::new(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../.tileproof-cache/proofs"),
        )),
        ..Options::default()
    };
    let rules: Vec<_> = set.rules().collect();
    let mut bad = Vec::new();
    for r in prove_all(&rules, &opts, &|_| {}) {
        if !matches!(r.verdict, ProofVerdict::Proved) {
            bad.push(format!("{} at {}: {:?}", r.rule, r.width, r.verdict));
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
