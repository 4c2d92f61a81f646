//! Missed simplifications through the command line: where tileproof's
//! engine, under a peer's semantics, is provably cheaper than the peer's
//! sound answer, `check --simplifier` and peer campaigns say so, with the
//! rule and the proof, apart from the findings; a cheaper answer that is
//! not proved equal (an unsound rule laid over the built-in ones) is
//! rejected, never proposed. The other direction too: where the peer's
//! sound answer is the cheaper one, it is tileproof's own missed
//! simplification. The peers are `tileproof serve` (the engine itself, so
//! only a rule one of the two lacks can make a difference) and
//! `tests/adapters/faulty.py identity` (answers every case unchanged).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn text(o: &Output) -> String {
    format!("{}{}", stdout(o), String::from_utf8_lossy(&o.stderr))
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tileproof-missed-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

const IDENTITY: &str = "python3 tests/adapters/faulty.py identity";

/// Drops a floor remainder whatever the range of `x`: cheaper, and wrong
/// as soon as `x` reaches `N`.
const UNSOUND: &str = "# deliberately unsound: x mod N == x only for x in [0, N)\n\
                       rule drop_mod_unsound: x mod N => x if N > 0\n";

fn serve() -> String {
    format!("{} serve", tileproof())
}

fn campaign_json(dir: &Path, peer: &str, extra: &[&str]) -> serde_json::Value {
    let corpus = dir.join("corpus").display().to_string();
    let mut args = vec![
        "fuzz",
        "--simplifier",
        peer,
        "--seed",
        "1",
        "--cases",
        "120",
        "--corpus",
        &corpus,
        "--json",
    ];
    args.extend_from_slice(extra);
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{e}: {}", text(&o)))
}

#[test]
fn a_cheaper_answer_of_an_unsound_rule_is_rejected_by_the_walk_not_proposed() {
    let dir = scratch("unsound-walk");
    let rules = write(&dir, "bad.rules", UNSOUND);
    let case = write(&dir, "case.txt", "var x in [0, 9]\nexpr x mod 4\n");
    let o = run(&["check", "--simplifier", &serve(), "--rules", &rules, &case]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        out.contains("not proved equal (refuted: value-differs at x = 4)"),
        "{out}"
    );
    assert!(!out.contains("missed simplification"), "{out}");
}

#[test]
fn a_cheaper_answer_of_an_unsound_rule_is_rejected_by_smt_on_a_large_domain() {
    let dir = scratch("unsound-smt");
    let rules = write(&dir, "bad.rules", UNSOUND);
    let case = write(&dir, "case.txt", "var x in [0, 100000000]\nexpr x mod 4\n");
    let o = run(&["check", "--simplifier", &serve(), "--rules", &rules, &case]);
    let out = stdout(&o);
    assert!(out.contains("not proved equal (refuted: "), "{out}");
    assert!(!out.contains("missed simplification"), "{out}");
}

#[test]
fn a_campaign_with_an_unsound_rule_reports_no_missed_case_and_counts_the_rejections() {
    let dir = scratch("unsound-campaign");
    let rules = write(&dir, "bad.rules", UNSOUND);
    let j = campaign_json(&dir, &serve(), &["--rules", &rules]);
    let missed = &j["missed"];
    assert_eq!(missed["cases"], 0, "{missed}");
    assert!(
        missed["rejected"]["refuted"].as_u64().unwrap_or(0) > 0,
        "{missed}"
    );
    assert!(!dir.join("corpus/missed").exists());
}

#[test]
fn a_sound_cheaper_answer_is_proposed_with_its_rule_and_its_proof() {
    let dir = scratch("sound");
    let case = write(&dir, "case.txt", "var x in [0, 3]\nexpr x mod 4 + 1\n");
    let o = run(&["check", "--simplifier", IDENTITY, &case]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        out.contains("missed simplification (not a bug): tileproof x + 1 (0 div/mod, 3 nodes), the peer x mod 4 + 1 (1 div/mod, 5 nodes)"),
        "{out}"
    );
    assert!(
        out.contains("proof: equivalent by enumeration: every one of 4 points"),
        "{out}"
    );
    assert!(out.contains("rule mod_in_range: x mod y => x if"), "{out}");
    // On a domain too large to walk, the solver proves it.
    let big = write(
        &dir,
        "big.txt",
        "var x in [0, 100000000]\nexpr x mod 200000000\n",
    );
    let out = stdout(&run(&["check", "--simplifier", IDENTITY, &big]));
    assert!(out.contains("proof: equivalent: proved by"), "{out}");
    let off = stdout(&run(&[
        "check",
        "--simplifier",
        IDENTITY,
        "--no-missed",
        &case,
    ]));
    // (The scratch path itself says "missed".)
    assert!(
        !off.contains("missed simplification") && !off.contains("missed:"),
        "{off}"
    );
}

/// Sound, and not among the built-in rules.
const SQUARE: &str = "# x mod 2 squared is itself: x mod 2 is 0 or 1\n\
                      rule mod2_square: (x mod 2) * (x mod 2) => x mod 2\n";

#[test]
fn a_peer_cheaper_than_the_engine_is_the_engines_missed_simplification_with_its_proof() {
    let dir = scratch("engine-missed");
    let rules = write(&dir, "square.rules", SQUARE);
    let case = write(
        &dir,
        "case.txt",
        "var x in [0, 3]\nexpr (x mod 2) * (x mod 2)\n",
    );
    let peer = format!("{} --rules {rules}", serve());
    let o = run(&["check", "--simplifier", &peer, &case]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        out.contains("missed simplification of tileproof's engine (not a bug of the peer): the peer x mod 2 (1 div/mod, 3 nodes), tileproof x mod 2 * (x mod 2) (1 div/mod, 4 nodes)"),
        "{out}"
    );
    assert!(
        out.contains("proof (the peer's answer): equivalent by enumeration: every one of 4 points"),
        "{out}"
    );
    // Without the rule the peer is the engine: nothing is missed.
    let out = stdout(&run(&["check", "--simplifier", &serve(), &case]));
    assert!(
        out.contains("missed: none (the two answers cost the same)"),
        "{out}"
    );
}

#[test]
fn a_campaign_keeps_missed_cases_apart_by_rule_and_each_file_checks_again() {
    let dir = scratch("campaign");
    let j = campaign_json(&dir, IDENTITY, &[]);
    assert_eq!(j["findings"], 0, "missed cases are not findings");
    let missed = &j["missed"];
    let cases = missed["cases"].as_u64().unwrap();
    let rules = missed["rules"].as_array().unwrap();
    assert!(cases > 0 && !rules.is_empty(), "{missed}");
    // One entry per rule, most frequent first, none counting more than
    // the cases.
    let counts: Vec<u64> = rules.iter().map(|r| r["count"].as_u64().unwrap()).collect();
    assert!(
        counts.windows(2).all(|w| w[0] >= w[1]) && counts[0] <= cases,
        "{counts:?}"
    );
    let files: Vec<PathBuf> = std::fs::read_dir(dir.join("corpus/missed"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(!files.is_empty());
    assert!(!dir
        .join("corpus")
        .read_dir()
        .unwrap()
        .any(|e| { e.unwrap().path().extension().is_some_and(|x| x == "txt") }));
    for f in files.iter().take(5) {
        let o = run(&["check", &f.display().to_string()]);
        assert_eq!(o.status.code(), Some(0), "{}: {}", f.display(), text(&o));
    }
    // The identity is sometimes cheaper than the engine: its cost counts
    // `d0 + (d0 + 3)` one node under the engine's `d0 * 2 + 3`. Those are
    // the engine's missed simplifications, apart, each proved.
    let engine_missed = &missed["engine_missed"];
    assert!(engine_missed["cases"].as_u64().unwrap() > 0, "{missed}");
    let kept: Vec<PathBuf> = std::fs::read_dir(dir.join("corpus/engine-missed"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(
        kept.len() as u64,
        engine_missed["written"].as_u64().unwrap()
    );
    for f in &kept {
        let t = std::fs::read_to_string(f).unwrap();
        assert!(
            t.starts_with("# missed simplification of tileproof's engine (not a bug of the peer)")
                && t.contains("# proof (the peer's answer): equivalent"),
            "{}: {t}",
            f.display()
        );
    }
    let off = campaign_json(&scratch("campaign-off"), IDENTITY, &["--no-missed"]);
    assert!(off["missed"].is_null(), "{}", off["missed"]);
}

#[test]
fn a_campaign_reports_the_same_missed_cases_whatever_its_thread_count() {
    let counts = |jobs: &str| {
        let j = campaign_json(
            &scratch(&format!("jobs{jobs}")),
            IDENTITY,
            &["--jobs", jobs],
        );
        let m = &j["missed"];
        let rules: Vec<(String, u64)> = m["rules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["rule"].as_str().unwrap().to_string(),
                    r["count"].as_u64().unwrap(),
                )
            })
            .collect();
        let engine = &m["engine_missed"];
        (
            m["cases"].as_u64().unwrap(),
            rules,
            m["rejected"].clone(),
            (
                engine["cases"].as_u64().unwrap(),
                engine["rejected"].clone(),
            ),
        )
    };
    assert_eq!(counts("1"), counts("2"));
}

// ---- the pinned peers (.ci/run runs these with --ignored) ----

/// `check --simplifier PEER --json CASE`, and the peer's installation, which
/// must be there.
fn check_json(peer: &str, installed: &str, case: &str) -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(installed);
    assert!(path.exists(), "{} is missing: see .ci/run", path.display());
    let o = run(&["check", "--simplifier", peer, "--json", case]);
    serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{e}: {}", text(&o)))
}

/// The module proposed for the missed simplification of a `check --json`.
fn proposed_module(j: &serde_json::Value) -> String {
    let missed = &j["report"]["missed"]["missed"];
    missed["proposal"]["module"]
        .as_str()
        .unwrap_or_else(|| panic!("{missed}"))
        .to_string()
}

const TINYGRAD: &str = ".venv-peers/bin/python adapters/tinygrad_adapter.py";

#[test]
#[ignore = "needs the pinned tinygrad (.venv-peers): run by .ci/run"]
fn the_proposed_tinygrad_pattern_makes_tinygrad_simplify_the_case_and_passes_prove() {
    let dir = scratch("tinygrad");
    // A truncating remainder of a value in (-16, 0): the pinned `sym` keeps
    // it, the engine's rem_in_range drops it.
    let case = write(
        &dir,
        "case.txt",
        "var r0 in [5, 7]\nexpr (r0 * -2 + 5) % 16\n",
    );
    let j = check_json(TINYGRAD, ".venv-peers/bin/python", &case);
    assert!(j["target"][0].as_str().unwrap().contains('%'), "{j}");
    let missed = &j["report"]["missed"]["missed"];
    assert_eq!(missed["rules"][0]["rule"], "rem_in_range", "{missed}");
    let module = proposed_module(&j);
    let file = write(
        &dir,
        "proposed.py",
        &format!("{module}\nfrom tinygrad.uop.symbolic import sym\nextended = proposed + sym\n"),
    );
    // The pinned `sym` with the proposed pattern first simplifies it.
    let extended = format!("{TINYGRAD} --module {file}:extended");
    let o = run(&["check", "--simplifier", &extended, "--json", &case]);
    let j: serde_json::Value =
        serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(!j["target"][0].as_str().unwrap().contains('%'), "{j}");
    // And tinygrad's own rule checker checks the pattern: a wrong
    // translation is refuted here.
    let corpus = dir.join("corpus").display().to_string();
    let proposed = format!("{TINYGRAD} --module {file}:proposed");
    let o = run(&[
        "prove",
        "--simplifier",
        &proposed,
        "--corpus",
        &corpus,
        "--timeout",
        "10",
    ]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(out.contains("refuted 0, checked 1"), "{out}");
}

// ---- the pinned Morok (its adapter built by .ci/run) ----

const MOROK: &str = "adapters/morok/target/release/tileproof-morok";

#[test]
#[ignore = "needs Morok's adapter built (adapters/morok/target): run by .ci/run"]
fn the_proposed_morok_entries_compile_against_the_pinned_morok_and_build_a_matcher() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = scratch("morok");
    // Morok leaves `0 % x` as it is; the engine's zero_rem drops it.
    let case = write(
        &dir,
        "case.txt",
        "var x in [-16, 16]\nexpr 0 % x / 4 * 4 <= 0 % x\n",
    );
    let module = proposed_module(&check_json(MOROK, MOROK, &case));
    assert!(module.contains("root @ Mod(@zero, x) => {"), "{module}");
    // The entries go inside morok-schedule (`crate::`); here, a crate of
    // their own on the adapter's pinned dependencies, built offline in its
    // target directory, whose main builds the matcher.
    let krate = dir.join("proposed");
    std::fs::create_dir_all(krate.join("src")).unwrap();
    std::fs::write(
        krate.join("Cargo.toml"),
        "[package]\nname = \"proposed-check\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\nmorok-ir = \"=0.1.0-alpha.2\"\nmorok-dtype = \"=0.1.0-alpha.2\"\nmorok-schedule = \"=0.1.0-alpha.2\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::copy(
        root.join("adapters/morok/Cargo.lock"),
        krate.join("Cargo.lock"),
    )
    .unwrap();
    let main = format!(
        "#![allow(unused)]\n{}\nfn main() {{\n    let _ = proposed();\n}}\n",
        module.replace("crate::", "morok_schedule::")
    );
    std::fs::write(krate.join("src/main.rs"), main).unwrap();
    let o = Command::new(env!("CARGO"))
        .args(["run", "--release", "--offline", "--quiet"])
        .current_dir(&krate)
        .env("CARGO_TARGET_DIR", root.join("adapters/morok/target"))
        .output()
        .expect("cargo runs");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}
