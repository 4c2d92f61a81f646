//! Peers under test, end to end through the command line: a broken peer is
//! caught and shrunk within a minute and its finding replays against it; a
//! peer that hangs, crashes or prints garbage is reported cleanly and the
//! campaign goes on; tileproof's engine served over the protocol is sound.
//! The peers here are `tileproof serve` (the engine as a peer) and
//! `tests/adapters/faulty.py` (python3, stdlib only).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn tileproof() -> &'static str {
    env!("CARGO_BIN_EXE_tileproof")
}

fn run(args: &[&str]) -> Output {
    Command::new(tileproof())
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("tileproof runs")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tileproof-peer-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn faulty(mode: &str) -> String {
    format!("python3 tests/adapters/faulty.py {mode}")
}

/// The finding files a campaign wrote (not its `causes.json` nor the
/// missed-simplification folders beside them).
fn findings(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p| p.is_file() && p.extension().is_some_and(|e| e == "txt"));
    v.sort();
    v
}

#[test]
fn a_peer_that_turns_rem_into_mod_is_caught_and_shrunk_within_a_minute() {
    let dir = scratch("rem");
    let cmd = faulty("rem-as-mod");
    let start = Instant::now();
    let o = run(&[
        "fuzz",
        "--simplifier",
        &cmd,
        "--seed",
        "1",
        "--time",
        "60",
        "--max-causes",
        "1",
        "--max-findings",
        "1",
        "--generator",
        "expr",
        "--validate-every",
        "0",
        "--corpus",
        dir.to_str().unwrap(),
    ]);
    let took = start.elapsed();
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(took < Duration::from_secs(60), "took {took:?}\n{out}");
    let files = findings(&dir);
    let oracle: Vec<&PathBuf> = files
        .iter()
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("oracle-")
        })
        .collect();
    assert_eq!(oracle.len(), 1, "{files:?}\n{out}");
    let case = std::fs::read_to_string(oracle[0]).unwrap();
    // Shrunk to the bug: a truncating remainder answered as a floor one.
    assert!(
        case.contains("# simplifier: faulty-rem-as-mod 1.0"),
        "{case}"
    );
    assert!(
        case.lines()
            .any(|l| l.starts_with("expr") && l.contains('%')),
        "{case}"
    );
    assert!(
        case.lines()
            .any(|l| l.starts_with("expect") && l.contains("mod")),
        "{case}"
    );
    let body: Vec<&str> = case.lines().filter(|l| !l.starts_with('#')).collect();
    assert!(body.len() <= 4, "not shrunk: {case}");
    // The reproduce line runs it again, against the same peer.
    let repro = case
        .lines()
        .find_map(|l| l.strip_prefix("# reproduce: tileproof "))
        .expect("a reproduce line");
    assert!(
        repro.contains("--simplifier 'python3 tests/adapters/faulty.py rem-as-mod'"),
        "{repro}"
    );
    let o = run(&["replay", "--simplifier", &cmd, oracle[0].to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    // An honest peer answers it soundly.
    let o = run(&[
        "replay",
        "--simplifier",
        &faulty("honest"),
        oracle[0].to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn the_engine_with_an_unsound_rule_is_caught_as_a_peer() {
    let dir = scratch("serve");
    let rules = dir.join("broken.rules");
    std::fs::write(
        &rules,
        "group range_divmod\nrule mod_in_range: x mod y => x if valid(y) && vmin(y) > 0 && vmin(x) >= 0\n",
    )
    .unwrap();
    let cmd = format!("{} serve --rules {}", tileproof(), rules.display());
    let corpus = dir.join("corpus");
    let o = run(&[
        "fuzz",
        "--simplifier",
        &cmd,
        "--seed",
        "3",
        "--time",
        "60",
        "--max-causes",
        "1",
        "--max-findings",
        "1",
        "--corpus",
        corpus.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let files = findings(&corpus);
    assert_eq!(files.len(), 1, "{files:?}");
    let case = std::fs::read_to_string(&files[0]).unwrap();
    assert!(case.contains("mod"), "{case}");
}

#[test]
fn the_engine_served_over_the_protocol_is_sound() {
    let dir = scratch("sound");
    let cmd = format!("{} serve", tileproof());
    let o = run(&[
        "fuzz",
        "--simplifier",
        &cmd,
        "--seed",
        "5",
        "--cases",
        "400",
        "--validate-every",
        "0",
        "--corpus",
        dir.to_str().unwrap(),
    ]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("findings: 0"), "{out}");
    assert!(out.contains("declined 0"), "{out}");
}

/// A misbehaving peer: the campaign runs to its case budget, reports the
/// kind, and restarts the adapter.
fn misbehaving(mode: &str, kind: &str) {
    let dir = scratch(mode);
    let o = run(&[
        "fuzz",
        "--simplifier",
        &faulty(mode),
        "--seed",
        "2",
        "--cases",
        "60",
        "--peer-timeout",
        "1",
        "--generator",
        "expr",
        "--validate-every",
        "0",
        "--max-findings",
        "2",
        "--shrink-steps",
        "50",
        "--corpus",
        dir.to_str().unwrap(),
    ]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(out.contains("stopped by the case budget"), "{out}");
    assert!(
        out.contains(&format!("({kind} ")),
        "no {kind} finding:\n{out}"
    );
    assert!(out.contains("started after the first"), "{out}");
    let files = findings(&dir);
    assert!(
        files
            .iter()
            .any(|p| p.file_name().unwrap().to_string_lossy().starts_with(kind)),
        "{files:?}"
    );
}

#[test]
fn a_peer_that_hangs_is_reported_and_the_campaign_goes_on() {
    misbehaving("hang", "hang");
}

#[test]
fn a_peer_that_crashes_is_reported_and_the_campaign_goes_on() {
    misbehaving("crash", "crash");
}

#[test]
fn a_peer_that_prints_garbage_is_reported_and_the_campaign_goes_on() {
    misbehaving("garbage", "garbage");
}

#[test]
fn a_peer_that_cannot_start_is_a_clear_error() {
    let o = run(&["fuzz", "--simplifier", "exit 7", "--cases", "1"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("exited before its hello"), "{}", text(&o));
    let o = run(&["fuzz", "--simplifier", "echo hello", "--cases", "1"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("bad hello"), "{}", text(&o));
}

#[test]
fn check_judges_a_peers_answer() {
    let dir = scratch("check");
    let case = dir.join("case.txt");
    std::fs::write(&case, "var x in [-3, 3]\nexpr x % 2\n").unwrap();
    let bad = run(&[
        "check",
        "--simplifier",
        &faulty("rem-as-mod"),
        case.to_str().unwrap(),
    ]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
    assert!(text(&bad).contains("answer x mod 2"), "{}", text(&bad));
    assert!(
        text(&bad).contains("confirmed by the interpreter"),
        "{}",
        text(&bad)
    );
    let good = run(&[
        "check",
        "--simplifier",
        &faulty("honest"),
        case.to_str().unwrap(),
    ]);
    assert_eq!(good.status.code(), Some(0), "{}", text(&good));
}

#[test]
fn a_peer_that_raises_where_the_source_means_nothing_is_no_finding() {
    // The adapter answers `error` and leaves the triage to tileproof
    // (docs/protocol.md): `x // 0` is undefined at every point, `x // 1`
    // is not.
    let dir = scratch("raises");
    std::fs::write(dir.join("nothing.txt"), "var x in [0, 7]\nexpr x // 0\n").unwrap();
    std::fs::write(dir.join("something.txt"), "var x in [0, 7]\nexpr x // 1\n").unwrap();
    let o = run(&[
        "replay",
        "--json",
        "--no-smt",
        "--simplifier",
        &faulty("raises"),
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let reports: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let report = |file: &str| {
        reports
            .iter()
            .find(|r| r["file"].as_str().is_some_and(|f| f.ends_with(file)))
            .map(|r| &r["report"])
            .unwrap_or_else(|| panic!("no report on {file}: {}", text(&o)))
    };
    let nothing = report("nothing.txt");
    assert_eq!(nothing["found"], serde_json::json!([]), "{nothing}");
    assert!(
        nothing["unsupported"]
            .as_str()
            .is_some_and(|u| u.contains("the source means nothing at any point")),
        "{nothing}"
    );
    let something = report("something.txt");
    assert_eq!(
        something["found"],
        serde_json::json!(["peer-error"]),
        "{something}"
    );
    assert_eq!(something["class"], "peer-crash", "{something}");
    assert_eq!(something["unsupported"], serde_json::Value::Null);
}
