//! Every built-in declarative rule is proved by Z3 at the small widths (8
//! and 16 bits), the fast part of the proof that `cargo test` runs; the
//! 32- and 64-bit proofs are `tileproof prove` and `tileproof gate`.
//! A timeout counts as a failure here: only an unsat answer is a proof.
//! Proofs are recorded in the repository's proof cache (the one
//! `tileproof prove` and `tileproof gate` read), so that the gate `.ci/run`
//! runs next does not prove the same queries twice; a cached entry is only
//! ever written after Z3 answered unsat, and is keyed by the query's text.

use engine::rules::builtin;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::time::Duration;
use verify::prove::{prove_rule, Options, Verdict};

fn prove_every_builtin_rule_at(width: u32) {
    let opts = Options {
        widths: vec![width],
        // Generous against a loaded CI machine; the median rule takes
        // milliseconds.
        timeout: Duration::from_secs(20),
        cache: Some(verify::cache::Cache::new(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../.tileproof-cache/proofs"),
        )),
        smt2_dir: None,
        seed: 0,
        ..Options::default()
    };
    let rules: Vec<_> = builtin().rules().collect();
    let results: Vec<_> = rules
        .par_iter()
        .map(|r| (r.name.clone(), prove_rule(r, width, &opts)))
        .collect();
    let mut methods: BTreeMap<String, usize> = BTreeMap::new();
    let mut bad = Vec::new();
    for (name, r) in &results {
        match &r.verdict {
            Verdict::Proved => *methods.entry(r.method.to_string()).or_default() += 1,
            other => bad.push(format!("{name}: {other:?}")),
        }
    }
    println!(
        "width {width}: {} rules, proved by {methods:?}",
        results.len()
    );
    assert!(
        bad.is_empty(),
        "not proved at width {width}:\n{}",
        bad.join("\n")
    );
}

#[test]
fn every_builtin_rule_is_proved_at_8_bits() {
    prove_every_builtin_rule_at(8);
}

#[test]
fn every_builtin_rule_is_proved_at_16_bits() {
    prove_every_builtin_rule_at(16);
}
