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
    // An empty file, a directory and garbage at the keys of the three
    // encodings that could prove it.
    let queries = verify::prove::cache_queries(rule, 8);
    assert_eq!(
        queries.len(),
        3,
        "the width-generic, bitvector and integer encodings at 8 bits"
    );
    for (i, q) in queries.iter().enumerate() {
        let path = cache.path(q);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        match i {
            0 => std::fs::write(&path, "").unwrap(),
            1 => std::fs::create_dir(&path).unwrap(),
            _ => std::fs::write(&path, "unsat\n").unwrap(),
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
        stderr.contains("3 entries rejected")
            && (stderr.contains(": empty") || stderr.contains(": not a regular file")),
        "{stderr}"
    );
    assert!(Path::new(&cache_dir).exists());
    let _ = std::fs::remove_dir_all(&dir);
}
