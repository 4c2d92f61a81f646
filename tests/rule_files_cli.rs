//! Every command reads `--rules` files with one loader: a file that
//! defines no rules is an error everywhere; a file the engine cannot take
//! (no group it has) is proved on its own by `prove`, which says that the
//! other commands refuse it, and they do.

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
    for (name, text) in [
        ("empty.rules", ""),
        ("comments.rules", "# only a comment\n\n"),
    ] {
        let file = d.join(name);
        std::fs::write(&file, text).unwrap();
        for args in [
            vec!["prove", "--no-cache"],
            vec!["simplify", case],
            vec!["fuzz", "--cases", "1"],
            vec!["gate", "--candidates-only", "--time", "1"],
        ] {
            let (code, out) = run(&args, &file);
            assert_eq!(code, 1, "{args:?} {name}: {out}");
            assert!(out.contains("the file defines no rules"), "{args:?}: {out}");
        }
    }
}

#[test]
fn prove_says_when_the_engine_would_refuse_a_file_it_proves() {
    let d = dir("nogroup");
    let file = d.join("lemma.rules");
    std::fs::write(&file, "# x + 0 == x\nrule add_zero_lemma: x + 0 => x\n").unwrap();
    let (code, out) = run(&["prove", "--no-cache", "--width", "8"], &file);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("1/1 proved"), "{out}");
    assert!(
        out.contains("would not load them") && out.contains("group `lemma`"),
        "{out}"
    );
    let case = d.join("case.txt");
    std::fs::write(&case, "var x in [0, 9]\nexpr x + 0\n").unwrap();
    let (code, out) = run(&["simplify", case.to_str().unwrap()], &file);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("group `lemma`"), "{out}");
}

#[test]
fn width_and_widths_are_one_flag_in_prove_and_gate() {
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
}

#[test]
fn a_gate_run_removes_the_previous_runs_reports_before_it_starts() {
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
}
