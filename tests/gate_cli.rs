//! `tileproof gate` end to end: an unsound candidate rule fails it (named,
//! with a counterexample, as a failed JUnit test case and in the JSON
//! report, and through the corpus case of the bug it reintroduces); a sound
//! candidate passes it; bad arguments are errors, not panics; `--budget`
//! ends the gate, failing it with what it did not reach.
//!
//! Proofs are restricted to the candidate's rules at width 8 and the
//! campaigns to a couple of seconds, so each run takes seconds.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("gate-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Runs a quick gate over the repository's corpus with `rules` laid over
/// the built-in ones; returns the output, the JUnit and the JSON reports.
fn quick_gate(dir: &Path, rules: &str) -> (Output, String, serde_json::Value) {
    let file = dir.join("candidate.rules");
    std::fs::write(&file, rules).unwrap();
    let junit = dir.join("gate.xml");
    let json = dir.join("gate.json");
    let out = Command::new(env!("CARGO_BIN_EXE_tileproof"))
        .current_dir(root())
        .args(["gate", "--rules"])
        .arg(&file)
        .args(["--candidates-only", "--widths", "8", "--time", "2"])
        .args(["--max-findings", "1", "--no-cache", "--findings"])
        .arg(dir.join("findings"))
        .arg("--junit")
        .arg(&junit)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let x = std::fs::read_to_string(&junit)
        .unwrap_or_else(|e| panic!("no JUnit report ({e}):\n{}", text(&out)));
    let j = std::fs::read_to_string(&json)
        .unwrap_or_else(|e| panic!("no JSON report ({e}):\n{}", text(&out)));
    (out, x, serde_json::from_str(&j).unwrap())
}

/// The `<testcase ...>` element (up to its end) whose name starts with
/// `name`.
fn testcase<'x>(xml: &'x str, name: &str) -> Option<&'x str> {
    let start = xml.find(&format!("name=\"{name}"))?;
    let start = xml[..start].rfind("<testcase")?;
    let rest = &xml[start..];
    // '>' never occurs inside an attribute value (it is escaped).
    let open_end = rest.find('>')? + 1;
    let end = if rest[..open_end].ends_with("/>") {
        open_end
    } else {
        rest.find("</testcase>")? + "</testcase>".len()
    };
    Some(&rest[..end])
}

#[test]
fn an_unsound_candidate_rule_fails_the_gate_with_a_counterexample() {
    let dir = temp_dir("unsound");
    // x * 0 => 0 without valid(x): a masked lane becomes address 0. It joins
    // the identity group after the guarded mul_zero, so it fires exactly
    // where mul_zero refuses to: on a possibly invalid x.
    let (out, xml, json) = quick_gate(&dir, "group identity\n# x * 0 == 0 (wrong: not for an invalid x)\nrule mul_zero_any: x * 0 => 0\n");
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    // Named, with a counterexample the interpreter confirms.
    assert!(t.contains("FAILED mul_zero_any at width 8"), "{t}");
    assert!(
        t.contains("counterexample to mul_zero_any at width 8"),
        "{t}"
    );
    assert!(t.contains("validity-differs"), "{t}");
    assert!(t.contains("confirmed by the interpreter"), "{t}");
    assert!(t.contains("prove     1 rule x 1 width: 0 proved"), "{t}");
    // The corpus case kept for this very bug fails again.
    assert!(t.contains("FAIL corpus/oracle-f245ee5a72.txt"), "{t}");
    assert!(t.contains("1 corpus case failed"), "{t}");
    assert!(
        t.contains("verdict   FAIL: 1 rule-width failed (counterexample): mul_zero_any@8"),
        "{t}"
    );

    // JUnit: a failed test case for the rule, carrying the counterexample.
    let case = testcase(&xml, "mul_zero_any @ 8 bits").unwrap_or_else(|| panic!("{xml}"));
    assert!(case.contains("<failure type=\"failed\""), "{case}");
    assert!(
        case.contains("counterexample to mul_zero_any at width 8: validity-differs"),
        "{case}"
    );
    let corpus_case =
        testcase(&xml, "corpus/oracle-f245ee5a72.txt").unwrap_or_else(|| panic!("{xml}"));
    assert!(
        corpus_case.contains("<failure type=\"replay\""),
        "{corpus_case}"
    );
    assert!(
        xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites"),
        "{xml}"
    );
    assert_eq!(
        xml.matches("<testsuite ").count(),
        xml.matches("</testsuite>").count()
    );

    // JSON: the verdict, the rule's result and its counterexample.
    assert_eq!(json["verdict"], "fail");
    assert_eq!(json["prove"]["failed"], 1);
    let r = &json["prove"]["results"][0];
    assert_eq!(r["rule"], "mul_zero_any");
    assert_eq!(r["width"], 8);
    assert_eq!(r["verdict"], "failed");
    assert_eq!(r["counterexample"]["failure"], "validity-differs");
    assert!(r["counterexample_text"]
        .as_str()
        .unwrap()
        .contains("counterexample to mul_zero_any"));
    assert!(json["corpus"]["failed"].as_u64().unwrap() >= 1, "{json}");
}

#[test]
fn a_sound_candidate_rule_passes_the_gate() {
    let dir = temp_dir("sound");
    // (x + C1) + C2 == x + (C1 + C2) where the sum is computed without
    // overflow; an invalid x stays invalid on both sides.
    let (out, xml, json) = quick_gate(
        &dir,
        "group combine\n# (x + C1) + C2 == x + (C1 + C2)\nrule add_consts_candidate: (x + C1) + C2 => x + (C1 + C2)\n",
    );
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(t.contains("prove     1 rule x 1 width: 1 proved"), "{t}");
    let n = std::fs::read_dir(root().join("corpus"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "txt")
        })
        .count();
    assert!(
        t.contains(&format!(
            "corpus    {n} cases in corpus: {n} ok ({n} proved, 0 sampled), 0 failed"
        )),
        "{t}"
    );
    assert!(t.contains("algorithmic firings"), "{t}");
    for g in fuzz::generate::Generator::ALL {
        assert!(t.contains(&format!("campaign  {}:", g.name())), "{t}");
    }
    assert!(t.contains("verdict   PASS"), "{t}");
    assert!(xml.contains("failures=\"0\" errors=\"0\""), "{xml}");
    let case = testcase(&xml, "add_consts_candidate @ 8 bits").unwrap_or_else(|| panic!("{xml}"));
    assert!(case.ends_with("/>"), "{case}");
    assert_eq!(json["verdict"], "pass");
    assert_eq!(json["corpus"]["cases"], n);
    assert_eq!(
        json["campaigns"].as_array().unwrap().len(),
        fuzz::generate::Generator::ALL.len()
    );
}

#[test]
fn a_cycling_pair_laid_over_the_builtin_rules_fails_the_gate_naming_both() {
    let dir = temp_dir("cycle");
    // Sound, but the built-in add_self turns its result back.
    let (out, xml, json) = quick_gate(
        &dir,
        "group combine\n# a * 2 == a + a\nrule double: a * 2 => a + a\n",
    );
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert!(t.contains("prove     1 rule x 1 width: 1 proved"), "{t}");
    assert!(
        t.contains("CYCLE: double -> add_self -> double on `a * 2`"),
        "{t}"
    );
    assert!(
        t.contains("termination 0 of 1 rule decrease the order, 1 do not"),
        "{t}"
    );
    let verdict = t
        .lines()
        .find(|l| l.starts_with("verdict"))
        .unwrap_or_default();
    assert!(
        verdict.contains("1 rule not shown to decrease the order: double; ")
            && verdict.contains("rule cycles that loop: double -> add_self on `a * 2`"),
        "{verdict}"
    );
    let case = testcase(&xml, "cycle double -&gt; add_self").unwrap_or_else(|| panic!("{xml}"));
    assert!(case.contains("<failure type=\"cycle\""), "{case}");
    assert_eq!(json["termination"]["cycles"][0]["rules"][1], "add_self");
    assert_eq!(json["termination"]["cycles"][0]["term"], "a * 2");
}

#[test]
fn bad_arguments_are_errors_not_panics() {
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_tileproof"))
            .current_dir(root())
            .arg("gate")
            .args(args)
            .output()
            .unwrap()
    };
    let o = run(&["--widths", "12"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("width 12 is not one of 8, 16, 32, 64"),
        "{}",
        text(&o)
    );
    let o = run(&["--rule", "no_such_rule"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("no rule named `no_such_rule`"),
        "{}",
        text(&o)
    );
    let o = run(&["--corpus", "/nonexistent/corpus"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("no such corpus"), "{}", text(&o));
    let o = run(&["--rules", "/nonexistent.rules"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("/nonexistent.rules"), "{}", text(&o));
    let o = run(&["--time", "0"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    for o in [run(&["--candidates-only"]), run(&["--jobs", "0"])] {
        assert!(!o.status.success(), "{}", text(&o));
        assert!(!text(&o).contains("panicked"), "{}", text(&o));
    }
}

#[test]
fn prove_writes_a_junit_report_with_the_counterexample() {
    let dir = temp_dir("prove-junit");
    let rules = dir.join("wrong.rules");
    std::fs::write(
        &rules,
        "# x * 0 == 0 (wrong for an invalid x)\nrule mul_zero_any: x * 0 => 0\n\
         # x + 0 == x\nrule add_zero_again: x + 0 => x\n",
    )
    .unwrap();
    let junit = dir.join("prove.xml");
    let out = Command::new(env!("CARGO_BIN_EXE_tileproof"))
        .args(["prove", "--no-cache", "--width", "8,16", "--rules"])
        .arg(&rules)
        .arg("--junit")
        .arg(&junit)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains(
            "<testsuites name=\"tileproof prove\" tests=\"4\" failures=\"2\" errors=\"0\""
        ),
        "{xml}"
    );
    for w in [8, 16] {
        let bad =
            testcase(&xml, &format!("mul_zero_any @ {w} bits")).unwrap_or_else(|| panic!("{xml}"));
        assert!(
            bad.contains(&format!("counterexample to mul_zero_any at width {w}")),
            "{bad}"
        );
        let good = testcase(&xml, &format!("add_zero_again @ {w} bits"))
            .unwrap_or_else(|| panic!("{xml}"));
        assert!(good.ends_with("/>"), "{good}");
    }
}

/// `--budget` ends the whole gate when its user said: every rule proved
/// cold takes far longer than 2 s, so the run stops proving at its budget,
/// skips the stages it cannot reach and fails, naming what it did not reach
/// (unknown, never proved).
#[test]
fn a_budget_ends_the_gate_and_what_it_did_not_reach_fails_it() {
    let dir = temp_dir("budget");
    let start = std::time::Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_tileproof"))
        .current_dir(root())
        .args(["gate", "--budget", "2", "--no-cache", "--time", "5"])
        .arg("--findings")
        .arg(dir.join("findings"))
        .output()
        .unwrap();
    let took = start.elapsed();
    let t = text(&out);
    println!("gate --budget 2: {took:.2?}");
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert!(t.contains("the run's budget ran out"), "{t}");
    assert!(t.contains("out of budget: "), "{t}");
    assert!(t.contains("the tiled campaign did not run"), "{t}");
    // Generous: a loaded machine starts the process and its threads late.
    assert!(took.as_secs_f64() < 12.0, "{took:?} with a budget of 2 s");
}
