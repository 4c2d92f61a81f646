//! Findings against a peer are judged by the peer's own compiled code:
//! each gets exactly one class (wrong-value, trap, compile-error,
//! model-only, peer-crash, ...) from the protocol's `run` requests, a
//! reproducer beside it when it is a bug, and a cause bucket; `check` and
//! `replay` take one judgement path. The peers here are
//! `tests/adapters/backend.py` (a fake peer with fake backends: 64-bit
//! wrapping arithmetic that traps on a division by zero) and
//! `tests/adapters/recorded.py` (recorded answers under any profile);
//! python3, stdlib only.

use std::collections::HashMap;
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
    let d = std::env::temp_dir().join(format!(
        "tileproof-peer-backend-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn case(dir: &Path, name: &str, body: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p.display().to_string()
}

fn fake(mode: &str) -> String {
    format!("python3 tests/adapters/backend.py {mode}")
}

/// `check --simplifier` on `body`: its exit status and the verdict line.
fn verdict(mode: &str, body: &str, extra: &[&str]) -> (Option<i32>, String, String) {
    let dir = scratch(&format!("verdict-{}", mode.replace([' ', ','], "-")));
    let file = case(&dir, "case.txt", body);
    let cmd = fake(mode);
    let mut args = vec!["check", "--simplifier", cmd.as_str(), file.as_str()];
    args.extend_from_slice(extra);
    let o = run(&args);
    let out = stdout(&o);
    let line = out
        .lines()
        .find_map(|l| l.strip_prefix("verdict: "))
        .unwrap_or_else(|| panic!("no verdict:\n{}", text(&o)))
        .to_string();
    (o.status.code(), line, out)
}

const HOIST: &str = "var x in [-2, 2]\nexpr 1 // where(x != 0, x, invalid)\n";

#[test]
fn a_division_moved_under_its_gate_is_a_trap_on_the_backend_that_traps() {
    let (code, line, out) = verdict("hoist", HOIST, &[]);
    assert_eq!(code, Some(2), "{out}");
    assert_eq!(line, "fails (trap)", "{out}");
    assert!(
        out.contains("backend: trap (eager): source invalid, target traps (SIGFPE) at x = 0"),
        "{out}"
    );
    // The lazy backend computes only the selected arm: no trap there, and
    // the report says so; the source comes from the interpreter.
    assert!(out.contains("lazy: agrees with the source"), "{out}");
    assert!(
        out.contains("the source by tileproof's interpreter"),
        "{out}"
    );
}

#[test]
fn a_finding_no_backend_shows_is_model_only() {
    let (code, line, out) = verdict("hoist lazy", HOIST, &[]);
    assert_eq!(code, Some(2), "{out}");
    assert_eq!(line, "fails (model-only)", "{out}");
    assert!(
        out.contains("a division by zero, undefined in the model"),
        "{out}"
    );
    let (_, line, out) = verdict(
        "reassoc",
        "var r1 in [0, 1]\nexpr 91 - r1 + 9223372036854775717\n",
        &[],
    );
    assert_eq!(line, "fails (model-only)", "{out}");
    assert!(
        out.contains("an index overflow, undefined in the model, wraps"),
        "{out}"
    );
}

#[test]
fn a_wrong_value_and_a_compile_error_are_told_apart() {
    let (_, line, out) = verdict("rem-as-mod", "var x in [-3, 3]\nexpr x % 2\n", &[]);
    assert_eq!(line, "fails (wrong-value)", "{out}");
    assert!(
        out.contains("backend: wrong-value (eager): source -1, target 1 at x = -3"),
        "{out}"
    );
    let (_, line, out) = verdict("ceil", "var x in [-3, 3]\nexpr x // 2\n", &[]);
    assert_eq!(line, "fails (compile-error)", "{out}");
    assert!(out.contains("no instruction for ceildiv"), "{out}");
}

#[test]
fn without_confirmation_a_finding_is_unconfirmed_and_a_crash_is_a_peer_crash() {
    let (_, line, out) = verdict("hoist", HOIST, &["--no-confirm"]);
    assert_eq!(line, "fails (unconfirmed)", "{out}");
    let (_, line, out) = verdict("raise", "var x in [1, 3]\nexpr 6 // x\n", &[]);
    assert_eq!(line, "fails (peer-crash)", "{out}");
    // A comparison of a gated value is outside this peer's input language.
    let (_, line, out) = verdict(
        "rem-as-mod",
        "var x in [-3, 3]\nexpr where(where(x < 0, x, invalid) < 2, x % 2, 0)\n",
        &[],
    );
    assert_eq!(line, "fails (outside-input-language)", "{out}");
}

#[test]
fn a_campaign_classifies_buckets_and_writes_reproducers() {
    let dir = scratch("campaign");
    let corpus = dir.join("corpus");
    let cmd = fake("rem-as-mod");
    let o = run(&[
        "fuzz",
        "--simplifier",
        &cmd,
        "--seed",
        "1",
        "--cases",
        "300",
        "--generator",
        "expr",
        "--validate-every",
        "0",
        "--max-findings",
        "2",
        "--json",
        "--corpus",
        corpus.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let json: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    let buckets = json["buckets"].as_array().unwrap();
    assert!(!buckets.is_empty(), "{json}");
    for b in buckets {
        assert!(b["written"].as_u64().unwrap() <= 2, "{b}");
        assert!(b["count"].as_u64().unwrap() >= b["written"].as_u64().unwrap());
        // A remainder of the wrong sign gives a wrong value, or a zero
        // divisor further up: a trap.
        assert!(b["class"] == "wrong-value" || b["class"] == "trap", "{b}");
    }
    assert!(
        json["findings_by_class"]["wrong-value"].as_u64().unwrap() >= 1,
        "{json}"
    );
    let written: Vec<PathBuf> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    assert!(!written.is_empty());
    for f in &written {
        let t = std::fs::read_to_string(f).unwrap();
        let class = if t.contains("# backend: wrong-value (") {
            "wrong-value"
        } else {
            assert!(t.contains("# backend: trap ("), "{t}");
            "trap"
        };
        let script = f.with_extension("py");
        assert!(script.exists(), "no reproducer beside {}", f.display());
        // The adapter's attachment is kept beside it.
        let attached = std::fs::read_to_string(f.with_extension("case")).unwrap();
        assert!(
            t.contains(&format!("expr {}", attached.lines().next().unwrap())),
            "{attached}\n{t}"
        );
        // The kept finding replays with its class, confirmed again.
        let o = run(&[
            "replay",
            "--expect-findings",
            "--simplifier",
            &cmd,
            f.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        assert!(
            stdout(&o).contains(&format!("still oracle      {class}")),
            "{}",
            text(&o)
        );
        // A recorded class the peer's code no longer shows fails the replay.
        std::fs::write(
            f,
            t.replace(&format!("# backend: {class}"), "# backend: model-only"),
        )
        .unwrap();
        let o = run(&[
            "replay",
            "--expect-findings",
            "--simplifier",
            &cmd,
            f.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(
            stdout(&o).contains(&format!(
                "recorded oracle model-only, but the peer's compiled code now says {class}"
            )),
            "{}",
            text(&o)
        );
    }
}

#[test]
fn model_only_findings_are_kept_apart_and_reclassified_in_place() {
    let dir = scratch("reclassify");
    let file = case(&dir, "oracle-0123456789.txt", &format!("# tileproof finding: oracle\n# simplifier: fake-hoist 1.0\n# reproduce: tileproof replay x {}/oracle-0123456789.txt\n{HOIST}", dir.display()));
    let lazy = fake("hoist lazy");
    let o = run(&["replay", "--reclassify", "--simplifier", &lazy, &file]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let moved = dir.join("model-only").join("oracle-0123456789.txt");
    assert!(moved.exists(), "{}", text(&o));
    assert!(!Path::new(&file).exists());
    let t = std::fs::read_to_string(&moved).unwrap();
    assert!(t.contains("# backend: model-only:"), "{t}");
    assert!(
        t.contains(&moved.display().to_string()),
        "the reproduce line follows the file:\n{t}"
    );
    // A directory replays its class subdirectories too.
    let o = run(&[
        "replay",
        "--expect-findings",
        "--simplifier",
        &lazy,
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // Against a backend that traps, it is a bug again: back with the bugs,
    // with a reproducer.
    let eager = fake("hoist");
    let o = run(&[
        "replay",
        "--reclassify",
        "--simplifier",
        &eager,
        moved.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(Path::new(&file).exists(), "{}", text(&o));
    assert!(Path::new(&file).with_extension("py").exists());
    assert!(std::fs::read_to_string(&file)
        .unwrap()
        .contains("# backend: trap (eager)"));
}

/// Every case file of the corpus, peers' included.
fn corpus_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "txt") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// A replay's output split into its cases' blocks (a block starts with
/// the line naming the case, its detail indented), keyed by the case's path;
/// the summary line left out.
fn blocks(replayed: &str) -> HashMap<String, Vec<String>> {
    let mut out: HashMap<String, Vec<String>> = HashMap::new();
    let mut current: Option<String> = None;
    for line in replayed.lines() {
        if line.starts_with("replayed ") {
            current = None;
        } else if !line.starts_with(char::is_whitespace) {
            let path = line
                .split_whitespace()
                .nth(1)
                .expect("a case line names its path");
            current = Some(path.to_string());
            out.entry(path.to_string())
                .or_default()
                .push(line.to_string());
        } else {
            let case = current
                .as_ref()
                .expect("a detail line follows its case line");
            out.get_mut(case)
                .expect("the case's block")
                .push(line.to_string());
        }
    }
    out
}

#[test]
fn check_and_replay_give_the_same_verdict_on_every_corpus_case_under_every_profile() {
    let files = corpus_files();
    assert!(files.len() >= 10, "{files:?}");
    let listed: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    // The profiles are independent: two threads take two each (the
    // commands spawn processes; CI's two cores are what bounds this test,
    // and the `--timeout 2` proofs must not starve). Each profile replays
    // the whole corpus in one run (a case's verdict and point are its own
    // in any company: each check solves in a Z3 context of its own) and
    // checks every case on its own.
    std::thread::scope(|scope| {
        for profiles in [["contract", "tinygrad"], ["tvm64", "tvm32"]] {
            let listed = &listed;
            scope.spawn(move || {
                for profile in profiles {
                    let cmd = format!(
                        "python3 tests/adapters/recorded.py {profile} {}",
                        listed.join(" ")
                    );
                    let mut args = vec!["replay", "--timeout", "2", "--simplifier", &cmd];
                    args.extend(listed.iter().map(String::as_str));
                    let r = run(&args);
                    let replayed = blocks(&stdout(&r));
                    assert_eq!(replayed.len(), listed.len(), "{profile}:\n{}", text(&r));
                    for f in listed.iter() {
                        // (replay does not look for missed simplifications)
                        let c = run(&[
                            "check",
                            "--no-missed",
                            "--timeout",
                            "2",
                            "--simplifier",
                            &cmd,
                            f,
                        ]);
                        let check_out = stdout(&c);
                        let checked: Vec<&str> = check_out
                            .lines()
                            .filter(|l| !l.starts_with("answer ") && !l.starts_with("verdict: "))
                            .collect::<Vec<_>>();
                        let block = &replayed[f.as_str()];
                        assert_eq!(
                            checked,
                            *block,
                            "{profile}: {f}:\ncheck:\n{}\nreplay:\n{}",
                            text(&c),
                            block.join("\n")
                        );
                        let fails = block.first().is_some_and(|l| l.starts_with("FAIL"));
                        assert_eq!(
                            c.status.code() == Some(0),
                            !fails && check_out.contains("verdict: proved"),
                            "{profile}: {f}"
                        );
                    }
                }
            });
        }
    });
}
