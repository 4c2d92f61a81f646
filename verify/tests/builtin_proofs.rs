//! Every built-in declarative rule is proved by Z3 at every width: by one
//! width-generic query for all widths of 8 bits and more where the rule
//! allows it, width by width otherwise (the cast rules). A timeout counts
//! as a failure here: only an unsat answer is a proof. Proofs are recorded
//! in the repository's proof cache (the one `tileproof prove` and
//! `tileproof gate` read), so that the gate `.ci/run` runs next does not
//! prove the same queries twice; a cached entry is only ever written after
//! Z3 answered unsat, and is keyed by the query's text.

use engine::rules::builtin;
use std::collections::BTreeMap;
use std::time::Duration;
use verify::prove::{Options, ProofVerdict};
use verify::schedule::prove_all;

#[test]
fn every_builtin_rule_is_proved_at_every_width() {
    let opts = Options {
        widths: vec![8, 16, 32, 64],
        // Generous against a loaded CI machine; the median rule takes
        // milliseconds.
        timeout: Duration::from_secs(20),
        cache: Some(verify::cache::Cache::new(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../.tileproof-cache/proofs"),
        )),
        ..Options::default()
    };
    let rules: Vec<_> = builtin().rules().collect();
    let results = prove_all(&rules, &opts, &|_| {});
    let mut methods: BTreeMap<String, usize> = BTreeMap::new();
    let mut bad = Vec::new();
    for r in &results {
        match &r.verdict {
            ProofVerdict::Proved => {
                let how = if r.width_generic {
                    "width-generic"
                } else {
                    r.method.name()
                };
                *methods.entry(format!("{how} at {}", r.width)).or_default() += 1
            }
            other => bad.push(format!("{} at {}: {other:?}", r.rule, r.width)),
        }
    }
    println!("{} rules, proved by {methods:?}", rules.len());
    assert!(bad.is_empty(), "not proved:\n{}", bad.join("\n"));
    // Every rule the op set allows is width-generic: only an op whose
    // semantics counts bits keeps a rule width by width.
    for rule in &rules {
        let generic = results
            .iter()
            .any(|r| r.rule == rule.name && r.width_generic);
        let obstacle = verify::prove::width_generic_obstacle(rule);
        assert!(
            generic || obstacle.is_some(),
            "{} is proved width by width although nothing ties it to a width",
            rule.name
        );
    }
}
