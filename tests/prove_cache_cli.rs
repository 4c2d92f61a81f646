//! `tileproof prove --cache-dir DIR` with forged entries at the keys of an
//! unsound rule's queries: an empty file or a directory is rejected (the
//! rule still fails, exit 2, and the entries are reported); a well-formed
//! forgery passes, and `--no-cache` and `--cross-check` are the ways
//! around it.

use std::path::PathBuf;
use std::process::Command;
use verify::cache::{Cache, Query};

const RULE: &str = "# x * 0 == 0 (wrong for an invalid x)\nrule mul_zero_any: x * 0 => 0\n";

/// A scratch directory holding the unsound rule's file and a cache, and
/// the cache keys of the rule's queries at 8 bits.
struct Scratch {
    dir: PathBuf,
    rules: PathBuf,
    cache_dir: PathBuf,
    cache: Cache,
    queries: Vec<Query>,
}

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("tileproof-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let rules = dir.join("wrong.rules");
        std::fs::write(&rules, RULE).unwrap();
        let set = engine::rules::candidates(&[(rules.display().to_string(), RULE.to_string())])
            .expect("the rule parses");
        let rule = set.rule("mul_zero_any").expect("rule exists");
        let cache_dir = dir.join("cache");
        Scratch {
            cache: Cache::new(&cache_dir),
            queries: verify::prove::cache_queries(rule, 8),
            dir,
            rules,
            cache_dir,
        }
    }

    /// `tileproof prove --width 8` of the rule with this cache: the exit
    /// status, and standard output then standard error.
    fn prove(&self, extra: &[&str]) -> (Option<i32>, String, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_tileproof"))
            .args(["prove", "--width", "8", "--rules"])
            .arg(&self.rules)
            .arg("--cache-dir")
            .arg(&self.cache_dir)
            .args(extra)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn forged_cache_entries_do_not_make_an_unsound_rule_proved() {
    let s = Scratch::new("prove-cache-cli");
    // An empty file, a directory and garbage at the keys of the three
    // encodings that could prove it.
    assert_eq!(
        s.queries.len(),
        3,
        "the width-generic, bitvector and integer encodings at 8 bits"
    );
    for (i, q) in s.queries.iter().enumerate() {
        let path = s.cache.path(q);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        match i {
            0 => std::fs::write(&path, "").unwrap(),
            1 => std::fs::create_dir(&path).unwrap(),
            _ => std::fs::write(&path, "unsat\n").unwrap(),
        }
    }
    let (code, stdout, stderr) = s.prove(&[]);
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert!(
        stdout.contains("FAILED mul_zero_any at width 8"),
        "{stdout}"
    );
    assert!(
        stderr.contains("3 entries rejected")
            && (stderr.contains(": empty") || stderr.contains(": not a regular file")),
        "{stderr}"
    );
}

/// The limit of the cache's defence, and the two ways around it: a
/// well-formed forged entry (whoever can write the cache can write one)
/// makes the unsound rule "proved"; `--no-cache` proves without the cache
/// and fails it; `--cross-check` asks cvc5, which never reads the cache,
/// and disputes it. This is what docs/architecture.md promises CI.
#[test]
fn a_well_formed_forgery_is_trusted_unless_proved_without_the_cache_or_cross_checked() {
    let s = Scratch::new("prove-forgery-cli");
    for q in &s.queries {
        s.cache
            .record_proof(q, "forger", verify::portfolio::SolverKind::Z3);
    }
    let (code, out, err) = s.prove(&[]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("width  8: 1/1 proved"), "{out}");
    let (code, out, err) = s.prove(&["--no-cache"]);
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(out.contains("FAILED mul_zero_any at width 8"), "{out}");
    assert!(
        verify::cvc5::version().is_some(),
        "cvc5 is needed (apt-get install -y cvc5; .ci/run installs it)"
    );
    let (code, out, err) = s.prove(&["--cross-check"]);
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(out.contains("DISPUTED mul_zero_any at width 8"), "{out}");
}
