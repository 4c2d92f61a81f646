//! The fuzzing subcommands end to end: `fuzz` finds an injected bug and
//! writes a case that `replay` reproduces; `import` turns libFuzzer bytes
//! into a corpus case; bad input is an error message, never a panic.

use engine::rules::builtin;
use fuzz::campaign::mix;
use fuzz::checks::{self, CheckConfig};
use fuzz::generate::{Case, Generator, SEED_BYTES};
use fuzz::rng::seed_bytes;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn tileproof(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tileproof"))
        .args(args)
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &Path, name: &str, contents: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, contents).unwrap();
    p.display().to_string()
}

const BROKEN_REM: &str = "group range_divmod\n\
    rule rem_drop_multiple: (a * C + b) % N => b % N if divides(N, C) && valid(a) && vmin(b) >= 0\n";

#[test]
fn fuzz_finds_a_broken_rule_and_replay_reproduces_it() {
    let dir = temp_dir("fuzz");
    let rules = write(&dir, "broken.rules", BROKEN_REM);
    let corpus = dir.join("corpus");
    let c = corpus.display().to_string();
    let out = tileproof(&[
        "fuzz",
        "--rules",
        &rules,
        "--generator",
        "tiled",
        "--seed",
        "1",
        "--cases",
        "400",
        "--corpus",
        &c,
        "--max-findings",
        "1",
        "--max-causes",
        "1",
        "--validate-every",
        "0",
    ]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert!(t.contains("findings: 1 (oracle 1)"), "{t}");
    assert!(t.contains("never fired ("), "{t}");
    let files = fuzz::corpus::files(&corpus).unwrap();
    assert_eq!(files.len(), 1, "{t}");
    let case = files[0].display().to_string();
    assert!(t.contains(&case), "{t}");

    let out = tileproof(&["replay", &case]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).starts_with("ok   "), "{}", text(&out));

    // The `# reproduce:` line, run as it is written, reproduces the finding:
    // it carries the candidate rules.
    let written = std::fs::read_to_string(&files[0]).unwrap();
    let line = written
        .lines()
        .find_map(|l| l.strip_prefix("# reproduce: tileproof "))
        .expect("a reproduce line");
    assert!(line.contains(&format!("--rules {rules} ")), "{line}");
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("{} {line}", env!("CARGO_BIN_EXE_tileproof")))
        .output()
        .unwrap();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{line}: {t}");
    assert!(t.contains(&format!("FAIL {case}")), "{t}");

    let out = tileproof(&["replay", "--rules", &rules, &c]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert!(t.contains(&format!("FAIL {case}")), "{t}");
    assert!(t.contains("value-differs") && t.contains("smt"), "{t}");
    // The failing point, with every node of both forms.
    assert!(
        t.contains("  point: r0 = ") && t.contains("  results: source"),
        "{t}"
    );
    assert!(
        t.contains("  source:\n") && t.contains("  target:\n"),
        "{t}"
    );
    assert!(t.contains(&format!("1 failed: {case}")), "{t}");
}

#[test]
fn a_finding_that_cannot_be_written_is_printed_whole_and_fails_the_run() {
    let dir = temp_dir("unwritable");
    let rules = write(&dir, "broken.rules", BROKEN_REM);
    // A file where the corpus directory should be.
    let corpus = write(&dir, "not-a-directory", "");
    let out = tileproof(&[
        "fuzz",
        "--rules",
        &rules,
        "--generator",
        "tiled",
        "--seed",
        "1",
        "--cases",
        "400",
        "--corpus",
        &corpus,
        "--max-findings",
        "1",
        "--max-causes",
        "1",
        "--validate-every",
        "0",
    ]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("error: cannot write to"), "{t}");
    // The whole case is on stdout, ready to be saved by hand and replayed.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("# tileproof finding: oracle"), "{t}");
    let case = stdout
        .split("# tileproof finding: oracle")
        .nth(1)
        .map(|rest| format!("# tileproof finding: oracle{rest}"))
        .unwrap();
    let saved = write(&dir, "saved.txt", &case);
    let out = tileproof(&["replay", "--rules", &rules, &saved]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

#[test]
fn fuzz_json_summary_has_counts_and_the_rules_never_fired() {
    let dir = temp_dir("json");
    let c = dir.display().to_string();
    let out = tileproof(&[
        "fuzz",
        "--cases",
        "64",
        "--seed",
        "1",
        "--generator",
        "tiled",
        "--json",
        "--corpus",
        &c,
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["cases"], 64);
    assert_eq!(v["findings"], 0);
    assert_eq!(v["stop"], "case budget");
    let counts = v["rule_counts"].as_object().unwrap();
    let never = v["never_fired"].as_array().unwrap();
    assert_eq!(counts.len(), v["rules_total"].as_u64().unwrap() as usize);
    assert_eq!(
        never.len(),
        counts.values().filter(|c| c.as_u64() == Some(0)).count()
    );
    assert!(counts["add_zero"].as_u64().unwrap() > 0);
}

#[test]
fn import_turns_a_crash_artifact_into_a_shrunk_corpus_case() {
    let dir = temp_dir("import");
    // A rule wrong on every floor-mod tiled index, and the first seed whose
    // case it breaks: its bytes are what libFuzzer would have saved.
    let broken = "group range_divmod\n\
        rule mod_drop_multiple: (a * C + b) mod N => a if divides(N, C) && valid(a)\n";
    let rules_file = write(&dir, "broken.rules", broken);
    let rules = engine::rules::RuleSet::with_file(builtin(), "broken.rules", broken).unwrap();
    let simp = fuzz::subject::Engine::new(engine::rewrite::Simplifier::new(&rules), Vec::new());
    let seed = (0..500)
        .map(|k| mix(9, k))
        .find(|&s| {
            let c = Case::from_seed(Generator::Tiled, s);
            !checks::check(&c.graph, &c.roots, &simp, &CheckConfig::default(), None).ok()
        })
        .expect("a tiled case the broken rule breaks");
    let artifacts = dir.join("artifacts").join("tiled_graph");
    std::fs::create_dir_all(&artifacts).unwrap();
    let artifact = artifacts.join("crash-0001");
    std::fs::write(&artifact, seed_bytes(seed, SEED_BYTES)).unwrap();
    let corpus = dir.join("corpus").display().to_string();
    let a = artifact.display().to_string();

    let out = tileproof(&["import", &a, "--rules", &rules_file, "--corpus", &corpus]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    let files = fuzz::corpus::files(Path::new(&corpus)).unwrap();
    assert_eq!(files.len(), 1, "{t}");
    let written = std::fs::read_to_string(&files[0]).unwrap();
    assert!(
        written.contains("# origin: libFuzzer artifact"),
        "{written}"
    );
    assert!(written.contains("generator tiled"), "{written}");
    assert!(
        written.lines().filter(|l| !l.starts_with('#')).count() <= 6,
        "{written}"
    );
    let case = files[0].display().to_string();
    assert!(tileproof(&["replay", &case]).status.success());
    assert_eq!(
        tileproof(&["replay", "--rules", &rules_file, &case])
            .status
            .code(),
        Some(2)
    );

    // With the built-in rules the same bytes pass: nothing is written.
    let out = tileproof(&["import", &a, "--corpus", &corpus, "--no-smt"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("nothing written"));
}

#[test]
fn bad_input_is_an_error_with_its_position_never_a_panic() {
    let dir = temp_dir("bad");
    let bad = write(&dir, "bad.txt", "var x in [0, 3]\nexpr x + * 2\n");
    let out = tileproof(&["replay", &bad]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert!(t.contains(&format!("FAIL {bad}:2:")), "{t}");
    let bad_width = write(&dir, "w.txt", "# width: 12\nvar x in [0, 3]\nexpr x\n");
    let t = text(&tileproof(&["replay", &bad_width]));
    assert!(
        t.contains("`# width: 12` is not one of 8, 16, 32, 64"),
        "{t}"
    );

    for (args, needle) in [
        (
            vec!["replay", "/nonexistent/case.txt"],
            "/nonexistent/case.txt",
        ),
        (
            vec!["import", "/nonexistent/artifact", "--generator", "tiled"],
            "/nonexistent/artifact",
        ),
        (vec!["import", &bad], "give --generator"),
        (
            vec!["fuzz", "--shard", "1/2", "--cases", "1"],
            "--shard needs --seed",
        ),
        (vec!["fuzz", "--cases", "1", "--width", "12"], "width 12"),
        (vec!["fuzz", "--cases", "1", "--rules", &bad], "bad.txt:"),
        (vec!["bench", "--seconds", "0"], "--seconds"),
    ] {
        let out = tileproof(&args);
        let t = text(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {t}");
        assert!(t.contains(needle), "{args:?}: {t}");
        assert!(!t.contains("panicked"), "{args:?}: {t}");
    }
    let out = tileproof(&["fuzz", "--shard", "2/2", "--seed", "1"]);
    assert!(text(&out).contains("bad shard `2/2`"), "{}", text(&out));
}

#[test]
fn bench_prints_campaign_throughput_with_the_machine() {
    let out = tileproof(&["bench", "campaign", "--seconds", "1"]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(
        t.contains("command: ") && t.contains("bench campaign --seconds 1"),
        "{t}"
    );
    assert!(t.contains(" cores;"), "{t}");
    assert!(
        t.contains("campaign tiled: ") && t.contains("campaign expr: "),
        "{t}"
    );
}
