//! `tileproof prove --simplifier CMD` checks a peer's own rules one by one
//! (docs/protocol.md, section 6). The fast tests use
//! `tests/adapters/rules.py` (python3, stdlib only: a toy peer whose rules
//! are written over tileproof's trees); the ignored ones (run by `.ci/run`)
//! use the pinned tinygrad through `--module` with deliberately broken
//! copies of its rules (`tests/peers/tinygrad_broken_rules.py`).

use std::path::PathBuf;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tileproof"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("tileproof runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn text(o: &Output) -> String {
    format!("{}{}", stdout(o), String::from_utf8_lossy(&o.stderr))
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "tileproof-peer-rules-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

const TOY: &str = "python3 tests/adapters/rules.py";

/// `prove --simplifier TOY` with `extra`, writing into a scratch corpus.
fn prove_toy(name: &str, extra: &[&str]) -> (Output, PathBuf) {
    let dir = scratch(name);
    let corpus = dir.join("corpus").display().to_string();
    let mut args = vec!["prove", "--simplifier", TOY, "--corpus", &corpus];
    args.extend_from_slice(extra);
    (run(&args), dir)
}

/// The table line of `rule` in a report.
fn row<'a>(out: &'a str, rule: &str) -> &'a str {
    out.lines()
        .find(|l| l.starts_with(&format!("{rule} ")))
        .unwrap_or_else(|| panic!("no line for {rule} in:\n{out}"))
}

#[test]
fn each_rule_gets_its_own_verdict_and_the_run_ends_with_the_summary_line() {
    let (o, _) = prove_toy("all", &[]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(row(&out, "add_zero").contains("checked on"), "{out}");
    assert!(row(&out, "floordiv_tile").contains("checked on"), "{out}");
    assert!(row(&out, "mod_range_dropped").contains("refuted"), "{out}");
    assert!(
        row(&out, "floordiv_guard_by_one").contains("refuted"),
        "{out}"
    );
    assert!(row(&out, "raises_on_three").contains("crashed"), "{out}");
    assert!(
        row(&out, "declines_always").contains("not instantiated (the rule rewrote none"),
        "{out}"
    );
    assert!(
        row(&out, "needs_fdiv").contains("not instantiated (it needs FDIV"),
        "{out}"
    );
    // Wrong, and it loops: its result, given to it again, comes back.
    assert!(row(&out, "lt_swap").contains("refuted"), "{out}");
    assert!(
        row(&out, "lt_swap").contains("LOOPS on 32 of 32 instances: a < b -> b < a -> a < b"),
        "{out}"
    );
    let last = out.lines().last().unwrap();
    assert!(
        last.starts_with(
            "peer rules: 8 (6 fired, 2 never fired), instantiated 6, refuted 3, checked 2, not instantiated 2, crashed 1, sampled 0, looping 1"
        ),
        "{last}"
    );
}

#[test]
fn a_refuted_rule_has_a_shrunk_counterexample_that_replays_against_that_rule_alone() {
    let (o, dir) = prove_toy("replay", &["--rule", "floordiv_guard_by_one"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(out.contains("REFUTED floordiv_guard_by_one"), "{out}");
    // The guard admits b == c: the shrunk instance has b at c exactly.
    assert!(out.contains("result:   a"), "{out}");
    let file = std::fs::read_dir(dir.join("corpus"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "txt"))
        .expect("a corpus case was written");
    let case = std::fs::read_to_string(&file).unwrap();
    assert!(case.contains("--peer-rule floordiv_guard_by_one"), "{case}");
    assert!(
        case.contains("# origin: peer rule floordiv_guard_by_one"),
        "{case}"
    );
    let f = file.display().to_string();
    let again = run(&[
        "replay",
        "--simplifier",
        TOY,
        "--peer-rule",
        "floordiv_guard_by_one",
        &f,
    ]);
    assert_eq!(again.status.code(), Some(2), "{}", text(&again));
    assert!(stdout(&again).contains("value-differs"), "{}", text(&again));
    // The sound rule declines the same instance: nothing to judge, and
    // the replay says so rather than passing it.
    let fixed = run(&[
        "replay",
        "--simplifier",
        TOY,
        "--peer-rule",
        "floordiv_tile",
        &f,
    ]);
    assert!(stdout(&fixed).contains("declined"), "{}", text(&fixed));
}

#[test]
fn only_sound_rules_selected_exit_zero_and_the_json_has_each_rule() {
    let (o, _) = prove_toy("sound", &["--rule", "add_zero,floordiv_tile", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["summary"]["checked"], 2, "{v}");
    assert_eq!(v["rules"][0]["rule"]["name"], "add_zero");
    assert_eq!(v["rules"][0]["verdict"], "checked");
    assert!(v["rules"][0]["judged"].as_u64().unwrap() > 0);
}

#[test]
fn a_rule_name_the_peer_does_not_have_is_an_error_naming_it() {
    let (o, _) = prove_toy("unknown", &["--rule", "no_such_rule"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("no rule named `no_such_rule`"),
        "{}",
        text(&o)
    );
}

#[test]
fn a_peer_without_the_rules_capability_is_an_error_not_a_pass() {
    let o = run(&[
        "prove",
        "--simplifier",
        "python3 adapters/example_adapter.py",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("does not list its rules"), "{}", text(&o));
}

#[test]
fn the_junit_report_has_one_case_per_rule_with_failures_and_skips() {
    let dir = scratch("junit");
    let junit = dir.join("r.xml").display().to_string();
    let (o, _) = prove_toy("junit-run", &["--junit", &junit]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let x = std::fs::read_to_string(&junit).unwrap();
    assert!(x.contains("tests=\"8\" failures=\"4\""), "{x}");
    assert!(x.contains("skipped=\"2\""), "{x}");
    assert!(x.contains("<skipped message=\"needs_fdiv"), "{x}");
}

// ---- the pinned tinygrad (the venv: .ci/run runs these with --ignored) ----

const TINYGRAD: &str = ".venv-peers/bin/python adapters/tinygrad_adapter.py";

fn prove_module(name: &str, matcher: &str) -> Output {
    let dir = scratch(name);
    let corpus = dir.join("corpus").display().to_string();
    let cmd = format!("{TINYGRAD} --module tests/peers/tinygrad_broken_rules.py:{matcher}");
    // Each solver call 1 s (--timeout 10): the oracle decides these
    // small instances; SMT over unbounded integers can run to its bound.
    run(&[
        "prove",
        "--simplifier",
        &cmd,
        "--corpus",
        &corpus,
        "--timeout",
        "10",
    ])
}

#[test]
#[ignore = "needs the pinned tinygrad (.venv-peers): run by .ci/run"]
fn broken_copies_of_tinygrad_rules_are_refuted_through_module() {
    let o = prove_module("broken", "broken");
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    // The remainder rule without its range check, and the tile rule whose
    // guard admits one value too many: each refuted with a counterexample
    // that tinygrad's own compiled code shows as a wrong value.
    for rule in [
        "broken.0.mod_in_range_no_upper",
        "broken.1.tile_guard_by_one",
    ] {
        assert!(row(&out, rule).contains("refuted"), "{out}");
        assert!(out.contains(&format!("REFUTED {rule}")), "{out}");
    }
    assert!(out.contains("counterexample (oracle, wrong-value"), "{out}");
    assert!(
        out.lines().last().unwrap().starts_with(
            "peer rules: 2 (2 fired, 0 never fired), instantiated 2, refuted 2, checked 0"
        ),
        "{out}"
    );
}

#[test]
#[ignore = "needs the pinned tinygrad (.venv-peers): run by .ci/run"]
fn the_fixed_tinygrad_rules_are_checked_through_module() {
    let o = prove_module("fixed", "fixed");
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        row(&out, "fixed.0.mod_in_range").contains("checked on"),
        "{out}"
    );
    assert!(row(&out, "fixed.1.tile").contains("checked on"), "{out}");
}

#[test]
#[ignore = "needs the pinned tinygrad (.venv-peers): run by .ci/run"]
fn every_pattern_of_the_pinned_sym_is_instantiated_or_says_why_not() {
    let dir = scratch("sym");
    let corpus = dir.join("corpus").display().to_string();
    let o = run(&[
        "prove",
        "--simplifier",
        TINYGRAD,
        "--corpus",
        &corpus,
        "--instances",
        "8",
        // Each solver call 1 s: the bitwise rules' SMT queries over
        // unbounded integers run to their timeout (the oracle checks those
        // instances exhaustively anyway).
        "--timeout",
        "10",
        "--no-confirm",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    let rules = v["rules"].as_array().unwrap();
    assert!(rules.len() > 100, "{} rules", rules.len());
    for r in rules {
        match r["verdict"].as_str().unwrap() {
            "not-instantiated" => assert!(
                !r["why"].as_str().unwrap().is_empty(),
                "{} not instantiated without a reason",
                r["rule"]["name"]
            ),
            _ => assert!(r["judged"].as_u64().unwrap() > 0, "{r}"),
        }
    }
    // The known bug: a division moved under its divisor's gate (the
    // masked lane then divides by zero).
    let gate = rules
        .iter()
        .find(|r| r["rule"]["name"] == "pm_data_invalid.4.lambda")
        .unwrap();
    assert_eq!(gate["verdict"], "refuted", "{gate}");
}

#[test]
#[ignore = "needs the pinned tinygrad (.venv-peers): run by .ci/run"]
fn a_tinygrad_rewrite_loop_is_a_finding_that_names_its_rules() {
    // Two sound rules that undo each other (`x * 2 -> x + x`, `x + x ->
    // x * 2`), as the simplifier (`--module`): the adapter stops the loop
    // long before tinygrad's own guard and says which rules kept firing.
    let dir = scratch("loop");
    let case = dir.join("loop.case");
    std::fs::write(&case, "var x: index in [0, 9]\nexpr x * 2 + 1\n").unwrap();
    let cmd = format!("{TINYGRAD} --module tests/peers/tinygrad_looping_rules.py:looping");
    let o = run(&["check", case.to_str().unwrap(), "--simplifier", &cmd]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        out.contains(
            "graph_rewrite loops: 33 rewrites without a fixed point (the rules \
             looping.0.double -> looping.1.add_self rewrite in a cycle)"
        ),
        "{out}"
    );
    assert!(out.contains("verdict: fails (peer-crash)"), "{out}");
}
