//! `tileproof prove --cache-dir DIR` with forged entries at the keys of an
//! unsound rule's queries: the rule still fails (exit 2), and the forged
//! entries are reported as rejected.

use std::path::Path;
use std::process::Command;
use verify::cache::Cache;

const RULE: &str = "# x * 0 == 0 (wrong for an invalid x)\nrule mul_zero_any: x * 0 => 0\n";

#[test]
fn forged_cache_entries_do_not_make_an_unsound_rule_proved() {
    let dir =
        std::env::temp_dir().join(format!("tileproof-prove-cache-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let rules = dir.join("wrong.rules");
    std::fs::write(&rules, RULE).unwrap();
    let set = engine::rules::candidates(&[(rules.display().to_string(), RULE.to_string())])
        .expect("the rule parses");
    let rule = set.rule("mul_zero_any").expect("rule exists");
    let cache_dir = dir.join("cache");
    let cache = Cache::new(&cache_dir);
    // An empty file at one encoding's key, a directory at the other's.
    let queries = verify::prove::cache_queries(rule, 8);
    assert_eq!(
        queries.len(),
        2,
        "bitvector and integer encodings at 8 bits"
    );
    for (i, q) in queries.iter().enumerate() {
        let path = cache.path(q);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        if i == 0 {
            std::fs::write(&path, "").unwrap();
        } else {
            std::fs::create_dir(&path).unwrap();
        }
    }
    let out = Command::new(env!("CARGO_BIN_EXE_tileproof"))
        .args(["prove", "--width", "8", "--rules"])
        .arg(&rules)
        .arg("--cache-dir")
        .arg(&cache_dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stdout}{stderr}");
    assert!(
        stdout.contains("FAILED mul_zero_any at width 8"),
        "{stdout}"
    );
    assert!(
        stderr.contains("2 entries rejected")
            && (stderr.contains(": empty") || stderr.contains(": not a regular file")),
        "{stderr}"
    );
    assert!(Path::new(&cache_dir).exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The limit of the cache's defence, and the two ways around it: a
/// well-formed forged entry (whoever can write the cache can write one)
/// makes the unsound rule "proved"; `--no-cache` proves without the cache
/// and fails it; `--cross-check` asks cvc5, which never reads the cache,
/// and disputes it. This is what docs/architecture.md promises CI.
#[test]
fn a_well_formed_forgery_is_trusted_unless_proved_without_the_cache_or_cross_checked() {
    let dir = std::env::temp_dir().join(format!(
        "tileproof-prove-forgery-cli-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let rules = dir.join("wrong.rules");
    std::fs::write(&rules, RULE).unwrap();
    let set = engine::rules::candidates(&[(rules.display().to_string(), RULE.to_string())])
        .expect("the rule parses");
    let rule = set.rule("mul_zero_any").expect("rule exists");
    let cache_dir = dir.join("cache");
    let cache = Cache::new(&cache_dir);
    for q in verify::prove::cache_queries(rule, 8) {
        cache.record_proof(&q, "forger");
    }
    let prove = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_tileproof"))
            .args(["prove", "--width", "8", "--rules"])
            .arg(&rules)
            .arg("--cache-dir")
            .arg(&cache_dir)
            .args(extra)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).to_string()
                + &String::from_utf8_lossy(&out.stderr),
        )
    };
    let (code, out) = prove(&[]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("width  8: 1/1 proved"), "{out}");
    let (code, out) = prove(&["--no-cache"]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("FAILED mul_zero_any at width 8"), "{out}");
    assert!(
        verify::crosscheck::cvc5_version().is_some(),
        "cvc5 is needed (apt-get install -y cvc5; .ci/run installs it)"
    );
    let (code, out) = prove(&["--cross-check"]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("DISPUTED mul_zero_any at width 8"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}
