//! The corpus replays clean: every case in `corpus/` passes the JIT oracle,
//! the interpreter checks and Z3 with the current engine and the built-in
//! rules. A case of a bug that is still present makes this fail, naming the
//! file: that is the point of keeping it.

use engine::dtype::Width;
use engine::rules::{builtin, RuleSet};
use fuzz::corpus;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus")
}

/// Replays every case of `dir` with `rules`, validating with Z3 as the CLI
/// does; returns one line per failing file.
fn replay_dir(dir: &Path, rules: &RuleSet) -> Vec<String> {
    let mut failures = Vec::new();
    for path in corpus::files(dir).unwrap() {
        let prog = match corpus::read(&path) {
            Ok(p) => p,
            Err(e) => {
                failures.push(e.to_string());
                continue;
            }
        };
        let w = corpus::case_width(&prog, &path)
            .unwrap()
            .unwrap_or(Width::W64);
        let smt = tileproof::decide::validator(w, Duration::from_secs(10));
        let r =
            corpus::replay(&prog, &path, corpus::Replayer::engine(rules), w, Some(&smt)).unwrap();
        if !r.ok() {
            let why: Vec<String> = r.checked.failures.iter().map(|f| f.to_string()).collect();
            failures.push(format!("{}: {}", path.display(), why.join("; ")));
        }
    }
    failures
}

#[test]
fn every_corpus_case_replays_clean() {
    let failures = replay_dir(&corpus_dir(), builtin());
    assert!(
        failures.is_empty(),
        "corpus cases fail with the current engine:\n{}",
        failures.join("\n")
    );
}

#[test]
fn the_corpus_holds_only_whole_case_files() {
    for e in std::fs::read_dir(corpus_dir()).unwrap() {
        let p = e.unwrap().path();
        assert!(!corpus::is_temp_file(&p), "temporary file: {}", p.display());
        if p.extension().is_some_and(|x| x == "txt") {
            corpus::read(&p).unwrap();
        }
    }
}

#[test]
fn the_replay_command_passes_on_the_corpus() {
    let out = Command::new(env!("CARGO_BIN_EXE_tileproof"))
        .arg("replay")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("0 failed"), "{stdout}");
}

#[test]
fn a_case_of_a_present_bug_fails_the_replay_naming_its_file() {
    // With mul_zero's guard removed, the corpus's regression case for it is
    // a case of a present bug.
    let broken = engine::rules::RuleSet::with_file(
        builtin(),
        "broken.rules",
        "group identity\nrule mul_zero: x * 0 => 0\n",
    )
    .unwrap();
    let failures = replay_dir(&corpus_dir(), &broken);
    assert!(
        failures.iter().any(|f| f.contains("oracle-f245ee5a72.txt")
            && f.contains("validity-differs")
            && f.contains("validate: smt")),
        "{failures:?}"
    );
}

#[test]
fn replay_says_what_was_checked_and_require_proof_refuses_a_sampled_unproved_case() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("replay-require-proof");
    std::fs::create_dir_all(&dir).unwrap();
    let run = |name: &str, text: &str, extra: &[&str]| {
        let case = dir.join(name);
        std::fs::write(&case, text).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_tileproof"))
            .arg("replay")
            .args(extra)
            .arg(&case)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).to_string(),
        )
    };
    // Too many points to walk: the JIT samples. Without Z3 (deterministic:
    // whether Z3 beats a tiny timeout is a race) nothing proves it.
    let big = "var x in [0, 1000000000000]\nvar y in [0, 1000000]\nexpr (x * 4 + y) // 4\n";
    let (code, text) = run("big.txt", big, &["--no-smt"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("(JIT: sampled, 262144 of 1.0e18 points; no SMT)"),
        "{text}"
    );
    let (code, text) = run("big.txt", big, &["--no-smt", "--require-proof"]);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("FAIL") && text.contains("not proved"),
        "{text}"
    );
    // A domain the JIT walks whole is proved by enumeration.
    let small = "var x in [0, 99]\nexpr (x * 4 + 3) // 4\n";
    let (code, text) = run("small.txt", small, &["--no-smt", "--require-proof"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("(JIT: exhaustive, 100 points; no SMT)"),
        "{text}"
    );
}

/// The case `--no-smt` does not reach: Z3 is asked and answers unknown. A
/// timeout below a nanosecond is a zero duration, so the check is never
/// started and the answer is unknown on every run (a 1e-9 s timeout is a
/// race: Z3 decides this case before the watchdog's interrupt lands in
/// about half the runs). The domain is too large to enumerate, so nothing
/// else proves it.
#[test]
fn an_smt_unknown_on_a_sampled_case_is_ok_but_not_a_proof_under_require_proof() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("replay-smt-unknown");
    std::fs::create_dir_all(&dir).unwrap();
    let case = dir.join("big.txt");
    std::fs::write(
        &case,
        "var x in [0, 1000000000000]\nvar y in [0, 1000000]\nexpr (x * 4 + y) // 4\n",
    )
    .unwrap();
    let run = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_tileproof"))
            .args(["replay", "--timeout", "1e-10"])
            .args(extra)
            .arg(&case)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).to_string()
                + &String::from_utf8_lossy(&out.stderr),
        )
    };
    let checked = "(JIT: sampled, 262144 of 1.0e18 points; SMT unknown: ";
    let (code, text) = run(&[]);
    assert_eq!(code, Some(0), "nothing failed:\n{text}");
    assert!(
        text.starts_with(&format!("ok   {} at width 64 {checked}", case.display())),
        "{text}"
    );
    assert!(text.contains("replayed 1 case: 1 ok, 0 failed"), "{text}");
    let (code, text) = run(&["--require-proof"]);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.starts_with(&format!("FAIL {} at width 64 {checked}", case.display()))
            && text
                .contains("not proved (--require-proof: the JIT sampled, and Z3 did not prove it)"),
        "{text}"
    );
    assert!(text.contains("0 ok, 1 failed"), "{text}");
}

/// `replay -` reads the case from standard input as `replay FILE` reads the
/// file: its `# width:` header sets the width of every check, the SMT
/// validation's included (it used to validate standard input at 64 bits).
#[test]
fn replay_of_standard_input_is_replay_of_the_file() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("replay-stdin");
    std::fs::create_dir_all(&dir).unwrap();
    let rules = dir.join("where_bad.rules");
    std::fs::write(
        &rules,
        "group where\n# wrong: drops the condition\nrule where_bad: where(c, x, y) => x\n",
    )
    .unwrap();
    let case = dir.join("case.txt");
    let text = "# width: 8\nvar x in [0, 3]\nvar b: bool\nexpr where(b, x, x + 1)\n";
    std::fs::write(&case, text).unwrap();
    // Standard input is the case file itself in both runs.
    let replay = |arg: &std::path::Path| {
        let out = Command::new(env!("CARGO_BIN_EXE_tileproof"))
            .arg("replay")
            .arg("--rules")
            .arg(&rules)
            .arg(arg)
            .stdin(std::fs::File::open(&case).unwrap())
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).to_string(),
        )
    };
    let (code, from_file) = replay(&case);
    assert_eq!(code, Some(2), "{from_file}");
    assert!(
        from_file.contains("validate: smt (bitvector)"),
        "{from_file}"
    );
    let (code, from_stdin) = replay(std::path::Path::new("-"));
    assert_eq!(code, Some(2), "{from_stdin}");
    assert_eq!(
        from_stdin,
        from_file.replace(&case.display().to_string(), "-")
    );
    // Every line that shows the failing point shows the bool as a bool, and
    // names the output that differs as `check` does (counted from 1).
    for line in [
        "FAIL - at width 8 (JIT: exhaustive, failed at point 1 of 8; SMT: counterexample)\n",
        "  oracle: value-differs (output 1) at x = 0, b = false; source (1), target (0) [exhaustive, failed at point 1 of 8]\n",
        // The solver picks x (the rule is wrong at every x where b is false).
        "  validate: smt (bitvector): value-differs at x = ",
        ", b = false; confirmed by the interpreter: value-differs\n",
        "  point: x = 0, b = false\n",
        "    b                  = false\n",
    ] {
        assert!(from_stdin.contains(line), "{line:?} in {from_stdin}");
    }
    assert!(!from_file.contains("b = 0"), "{from_file}");
}

/// A finding whose failure lies in a window the oracle's samples miss
/// replays as failing at its recorded `# point:`: the point it was found
/// at, whatever sequence the samples are drawn in.
#[test]
fn a_replay_judges_the_recorded_point_where_the_samples_pass() {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("replay-point");
    std::fs::create_dir_all(&d).unwrap();
    let rules = d.join("eq_never.rules");
    std::fs::write(
        &rules,
        "group eq_never\n# x == C is never true (wrong where x is C)\nrule eq_never: x == C => false\n",
    )
    .unwrap();
    let body = "var x in [0, 1099511627776]\nexpr x == 123456789\n";
    let run = |name: &str, text: &str| {
        let case = d.join(name);
        std::fs::write(&case, text).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_tileproof"))
            .args(["replay", "--no-smt", "--rules"])
            .arg(&rules)
            .arg(&case)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).to_string(),
        )
    };
    let (code, text) = run("pointed.txt", &format!("# point: x = 123456789\n{body}"));
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("at the case's recorded point; the samples passed"),
        "{text}"
    );
    assert!(text.contains("x = 123456789"), "{text}");
    // Without the point, 2^18 samples of 2^40 values pass: what the
    // recorded point is for.
    let (code, text) = run("unpointed.txt", body);
    assert_eq!(code, Some(0), "{text}");
}
