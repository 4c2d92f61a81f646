//! Every command reads `--rules` files with one loader and one behaviour:
//! a file that defines no rules is an error everywhere; any other file is
//! taken everywhere, a group the engine does not have (a file without a
//! `group` header is one, named after the file) tried after the built-in
//! groups, with one note saying so.

use std::path::PathBuf;
use std::process::Command;

fn dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("rule-files-{name}"));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(args: &[&str], file: &PathBuf) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tileproof"))
        .args(args)
        .arg("--rules")
        .arg(file)
        .output()
        .expect("tileproof runs");
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn a_rule_file_that_defines_nothing_is_an_error_for_every_command() {
    let d = dir("empty");
    let case = d.join("case.txt");
    std::fs::write(&case, "var x in [0, 9]\nexpr x + 0\n").unwrap();
    let case = case.to_str().unwrap();
    let artifact = d.join("crash-artifact");
    std::fs::write(&artifact, [7u8; 64]).unwrap();
    let artifact = artifact.to_str().unwrap();
    let corpus = d.join("imported");
    let _ = std::fs::remove_dir_all(&corpus);
    let corpus = corpus.to_str().unwrap();
    for (name, text) in [
        ("empty.rules", ""),
        ("comments.rules", "# only a comment\n\n"),
    ] {
        let file = d.join(name);
        std::fs::write(&file, text).unwrap();
        for args in [
            vec!["prove", "--no-cache"],
            vec!["simplify", case],
            vec!["check", case],
            vec![
                "compose",
                "docs/examples/xla-reshape2.map",
                "docs/examples/xla-reshape1.map",
            ],
            vec!["fuzz", "--cases", "1"],
            vec!["replay", case],
            // Bytes that decode to a case that passes every check (exit 2
            // without a rule file): the error is the rule file's.
            vec![
                "import",
                "--generator",
                "tiled",
                "--corpus",
                corpus,
                artifact,
            ],
            // Standard input is empty: without a rule file it serves
            // nothing and exits 0.
            vec!["serve"],
            vec!["gate", "--candidates-only", "--time", "1"],
        ] {
            let (code, out) = run(&args, &file);
            assert_eq!(code, 1, "{args:?} {name}: {out}");
            assert!(out.contains("the file defines no rules"), "{args:?}: {out}");
        }
    }
    // Every command taking `--rules` is in the list above (a new one must
    // join it): the commands are read from `tileproof --help`.
    let help = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_tileproof"))
            .args(args)
            .output()
            .expect("tileproof runs");
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let top = help(&["--help"]);
    let commands: Vec<&str> = top
        .lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        // A command's line, not a continuation of its description.
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    assert!(commands.len() >= 10, "{top}");
    let with_rules: Vec<&str> = commands
        .into_iter()
        .filter(|c| help(&[c, "--help"]).contains("--rules <FILE>"))
        .collect();
    assert_eq!(
        with_rules,
        ["simplify", "prove", "check", "compose", "fuzz", "replay", "import", "serve", "gate"],
        "the commands that take --rules (lower, bench do not)"
    );
}

/// A file without a `group` header (as `verify/tests/hard.rules`) is a group
/// named after the file: `prove` proves it, and every other command lays it
/// over the built-in rules, tried after their groups. Each says so in the
/// same note.
#[test]
fn a_rule_file_without_a_group_header_is_taken_by_every_command_with_one_note() {
    let d = dir("nogroup");
    let file = d.join("lemma.rules");
    std::fs::write(
        &file,
        "# x * 2 == x << 1 for a non-negative x\nrule shl_one: x * 2 => x << 1 if vmin(x) >= 0\n",
    )
    .unwrap();
    let case = d.join("case.txt");
    std::fs::write(&case, "var x in [0, 9]\nexpr x * 2\nexpect x << 1\n").unwrap();
    let case = case.to_str().unwrap();
    let corpus = d.join("findings");
    let corpus = corpus.to_str().unwrap();
    let note = "lemma.rules:2: group `lemma` is not one of the engine's groups: its rule is tried after every built-in group";
    for (args, says) in [
        (
            vec!["prove", "--no-cache", "--width", "8"],
            "width  8: 1/1 proved",
        ),
        (
            vec!["simplify", "--trace", case],
            "# shl_one: x * 2  =>  x << 1",
        ),
        (vec!["check", case], "verdict: proved"),
        (vec!["replay", "--no-smt", case], "1 ok, 0 failed"),
        (
            vec!["fuzz", "--cases", "20", "--seed", "1", "--corpus", corpus],
            "findings: 0",
        ),
        (
            vec![
                "gate",
                "--candidates-only",
                "--widths",
                "8",
                "--no-cache",
                "--time",
                "1",
            ],
            "verdict   PASS",
        ),
    ] {
        let (code, out) = run(&args, &file);
        assert_eq!(code, 0, "{args:?}: {out}");
        assert!(out.contains(says), "{args:?}: {out}");
        assert_eq!(out.matches(note).count(), 1, "{args:?}: {out}");
    }
}

/// A misspelt group is a group of its own, tried last: the note names it.
#[test]
fn a_group_the_engine_does_not_have_is_named_in_the_note() {
    let d = dir("typo");
    let file = d.join("typo.rules");
    std::fs::write(
        &file,
        "group range_divmdo\n# x + 0 == x\nrule add_zero_typo: x + 0 => x\n",
    )
    .unwrap();
    let case = d.join("case.txt");
    std::fs::write(&case, "var x in [0, 9]\nexpr x + 0\n").unwrap();
    let (code, out) = run(&["simplify", case.to_str().unwrap()], &file);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("typo.rules:3: group `range_divmdo` is not one of the engine's groups"),
        "{out}"
    );
}

#[test]
fn prove_and_gate_take_width_widths_and_rule_alike() {
    let d = dir("widths");
    let file = d.join("w.rules");
    std::fs::write(
        &file,
        "group identity\n# x + 0 == x\nrule add_zero_w: x + 0 => x\n",
    )
    .unwrap();
    let (code, out) = run(&["prove", "--no-cache", "--widths", "8,16"], &file);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("width  8: 1/1") && out.contains("width 16: 1/1"),
        "{out}"
    );
    let (code, out) = run(
        &[
            "gate",
            "--candidates-only",
            "--width",
            "8,16",
            "--no-cache",
            "--time",
            "1",
        ],
        &file,
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("1 rule x 2 widths: 2 proved (1/1 at 8, 1/1 at 16; 1 rule width-generic)"),
        "{out}"
    );
    // `--rule NAME` picks rules in both (prove also takes bare names).
    let (code, out) = run(
        &[
            "prove",
            "--no-cache",
            "--width",
            "8",
            "--rule",
            "add_zero_w",
        ],
        &file,
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("width  8: 1/1 proved"), "{out}");
    let (code, out) = run(&["prove", "--no-cache", "--rule", "no_such_rule"], &file);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("no rule named `no_such_rule`"), "{out}");
}

#[test]
fn a_gate_or_prove_run_removes_the_previous_runs_reports_before_it_starts() {
    let d = dir("stale");
    let (json, junit) = (d.join("gate.json"), d.join("gate.xml"));
    std::fs::write(&json, "{\"verdict\": \"pass\"}\n").unwrap();
    std::fs::write(&junit, "<testsuites/>\n").unwrap();
    // This run stops with an error (no corpus) after the reports' removal.
    let out = Command::new(env!("CARGO_BIN_EXE_tileproof"))
        .args(["gate", "--corpus"])
        .arg(d.join("no-such-corpus"))
        .arg("--json")
        .arg(&json)
        .arg("--junit")
        .arg(&junit)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(!json.exists() && !junit.exists(), "a stale report survived");
    // prove's JUnit report likewise (this run stops: no such rule file).
    std::fs::write(&junit, "<testsuites/>\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tileproof"))
        .args(["prove", "--rules"])
        .arg(d.join("no-such.rules"))
        .arg("--junit")
        .arg(&junit)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(!junit.exists(), "a stale report survived");
}
