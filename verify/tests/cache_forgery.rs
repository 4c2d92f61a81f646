//! A proof-cache entry is a proof only if it says what it proves: an empty
//! file, a directory or an entry of another query at the key of an unsound
//! rule's query leaves the rule failed (and is reported as rejected). A
//! well-formed entry is trusted, which is the limit of the defence (see
//! docs/architecture.md, "Proof cache and its trust model").

use engine::rules::RuleSet;
use std::path::PathBuf;
use std::time::Duration;
use verify::cache::{Cache, Query};
use verify::prove::{cache_queries, prove_rule, Options, ProofVerdict};

const WIDTH: u32 = 8;

fn wrong_rules() -> RuleSet {
    RuleSet::parse("wrong.rules", include_str!("wrong.rules")).expect("the test file parses")
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "tileproof-cache-forgery-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Proves `wrong_mul_zero` (unsound: a masked lane becomes a real 0) at 8
/// bits with a cache in which `forge` put something at each of its query
/// keys; returns the verdict and the cache.
fn prove_with_forged(name: &str, forge: impl Fn(&Cache, &Query)) -> (ProofVerdict, Cache) {
    let set = wrong_rules();
    let rule = set.rule("wrong_mul_zero").expect("rule exists");
    let cache = Cache::new(scratch(name));
    let queries = cache_queries(rule, WIDTH);
    assert!(!queries.is_empty());
    for q in &queries {
        let path = cache.path(q);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        forge(&cache, q);
    }
    let opts = Options {
        widths: vec![WIDTH],
        timeout: Duration::from_secs(60),
        cache: Some(cache.clone()),
        smt2_dir: None,
        seed: 0,
        ..Options::default()
    };
    let r = prove_rule(rule, WIDTH, &opts);
    (r.verdict, cache)
}

fn assert_failed_and_rejected(name: &str, verdict: &ProofVerdict, cache: &Cache, why: &str) {
    assert!(
        matches!(verdict, ProofVerdict::Failed { .. }),
        "{name}: a forged entry made the unsound rule {}",
        verdict.name()
    );
    let rejected = cache.rejected();
    assert!(!rejected.is_empty(), "{name}: nothing reported rejected");
    for (path, reason) in &rejected {
        assert!(
            reason.starts_with(why),
            "{name}: {}: {reason}",
            path.display()
        );
    }
    let _ = std::fs::remove_dir_all(cache.dir());
}

#[test]
fn an_empty_file_at_the_key_is_not_a_proof() {
    let (v, cache) = prove_with_forged("empty", |c, q| std::fs::write(c.path(q), "").unwrap());
    assert_failed_and_rejected("empty file", &v, &cache, "empty");
}

#[test]
fn a_directory_at_the_key_is_not_a_proof() {
    let (v, cache) = prove_with_forged("dir", |c, q| std::fs::create_dir(c.path(q)).unwrap());
    assert_failed_and_rejected("directory", &v, &cache, "not a regular file");
}

#[test]
fn garbage_at_the_key_is_not_a_proof() {
    let (v, cache) = prove_with_forged("garbage", |c, q| {
        std::fs::write(c.path(q), "wrong_mul_zero width 8 int\n").unwrap()
    });
    assert_failed_and_rejected("garbage", &v, &cache, "not a cache entry");
}

/// A genuine entry of another query, renamed to the key and with the key
/// inside rewritten: only the digest gives it away.
#[test]
fn an_entry_with_the_wrong_digest_is_not_a_proof() {
    let (v, cache) = prove_with_forged("digest", |c, q| {
        let other = Query::new("Int/8", &["true", "true"]);
        c.record_proof(&other, "wrong_mul_zero", verify::portfolio::SolverKind::Z3);
        let text = std::fs::read_to_string(c.path(&other)).unwrap();
        std::fs::write(c.path(q), text.replace(other.key(), q.key())).unwrap();
    });
    assert_failed_and_rejected("wrong digest", &v, &cache, "its digest is");
}

/// The limit of the defence, pinned so that the docs stay true: whoever can
/// write the cache can write a well-formed entry, and it is trusted.
#[test]
fn a_well_formed_entry_is_trusted_so_the_cache_is_only_as_good_as_its_writer() {
    let (v, cache) = prove_with_forged("valid", |c, q| {
        c.record_proof(q, "forger", verify::portfolio::SolverKind::Z3)
    });
    assert!(matches!(v, ProofVerdict::Proved), "{}", v.name());
    assert!(cache.rejected().is_empty());
    let _ = std::fs::remove_dir_all(cache.dir());
}

/// A genuine entry, copied byte for byte from the key of another rule's
/// proved query (the sound `mul_zero`, whose guard is what the unsound
/// rule forgets) to every key of the unsound rule: its key gives it away.
#[test]
fn an_entry_copied_from_another_rules_key_is_not_a_proof() {
    let (v, cache) = prove_with_forged("copied", |c, q| {
        let sound = engine::rules::builtin()
            .rule("mul_zero")
            .expect("built-in rule");
        let opts = Options {
            widths: vec![WIDTH],
            timeout: Duration::from_secs(60),
            cache: Some(c.clone()),
            ..Options::default()
        };
        assert!(matches!(
            prove_rule(sound, WIDTH, &opts).verdict,
            ProofVerdict::Proved
        ));
        let entry = cache_queries(sound, WIDTH)
            .iter()
            .map(|s| c.path(s))
            .find(|p| p.is_file())
            .expect("the sound rule's proof is cached");
        std::fs::copy(entry, c.path(q)).unwrap();
    });
    assert_failed_and_rejected("copied entry", &v, &cache, "its key is");
}
