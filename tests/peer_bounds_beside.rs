//! A peer that gives bounds is asked them beside each simplification
//! (`with_bounds`, docs/protocol.md section 7): one round trip per checked
//! program, not two. Driven through the Python SDK with the fake peer of
//! tests/adapters/causes.py (`collapse`: a range analysis and a rule that
//! trusts it), whose request lines a `tee` records.

use std::process::Command;

/// Runs a 40-case campaign against the fake peer behind `filter` (a shell
/// pipe stage before `tee`): the request lines the adapter saw.
fn campaign_requests(name: &str, filter: &str) -> (String, String) {
    let dir = std::env::temp_dir().join(format!("tileproof-beside-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("requests.jsonl");
    let cmd = format!(
        "sh -c '{filter}tee -a {} | python3 tests/adapters/causes.py collapse'",
        log.display()
    );
    let out = Command::new(env!("CARGO_BIN_EXE_tileproof"))
        .args(["fuzz", "--simplifier", &cmd, "--seed", "1", "--cases", "40"])
        .args(["--jobs", "1", "--no-variants", "--no-confirm", "--corpus"])
        .arg(dir.join("corpus"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    assert!(matches!(out.status.code(), Some(0 | 2)), "{text}");
    let requests = std::fs::read_to_string(&log).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    (requests, text)
}

#[test]
fn a_campaign_asks_a_peers_bounds_beside_its_simplifications() {
    let (requests, text) = campaign_requests("sdk", "");
    let beside = requests.matches(",\"with_bounds\":{}").count();
    let alone = requests.matches(",\"bounds\":{}").count();
    // (The log may lag the campaign by a line or two: `tee` is killed with
    // the adapter.)
    assert!(
        beside >= 20,
        "{beside} simplifications asked with bounds:\n{text}"
    );
    // The SDK gives them every time: none is asked alone.
    assert_eq!(alone, 0, "{alone} bounds requests alone");
    // An adapter that leaves them out (the field removed on its way in,
    // as an adapter that predates it ignores it) is asked them alone, for
    // every program checked: the bounds check runs either way.
    let (requests, text) = campaign_requests("old", "sed -u s/,.with_bounds.:{}// | ");
    let alone = requests.matches(",\"bounds\":{}").count();
    assert!(alone >= 20, "{alone} bounds requests alone:\n{text}");
}
