//! Corpus files: written whole (atomically), named after what they found
//! and the case, readable by the engine's parser, and replayable at the
//! width their header names.

use engine::dtype::Width;
use engine::parse::parse_program;
use engine::rewrite::Simplifier;
use engine::rules::builtin;
use fuzz::cause::found::Found;
use fuzz::cause::{Cause, Fault};
use fuzz::checks::{check, CheckConfig, Kind, ValidationVerdict};
use fuzz::corpus::Replayer;
use fuzz::corpus::{self, Entry};
use fuzz::missed::{Direction, Hunt, Hunter, Tally};
use fuzz::subject::{Engine, Profile};
use std::path::{Path, PathBuf};

fn temp_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("corpus-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A header's text parsed and written again.
fn h_again(text: &str) -> String {
    let lines: Vec<String> = text
        .lines()
        .map(|l| l[1..].strip_prefix(' ').unwrap_or(&l[1..]).to_string())
        .collect();
    corpus::Header::parse(&lines).render()
}

fn entry(body: &str) -> Entry {
    let cause = Found::just(Cause::Rule {
        rule: "rem_drop_multiple".into(),
        fault: Fault::Wrong,
    });
    Entry {
        kind: Kind::Oracle,
        message: "value-differs at x = -1".into(),
        point: Some(vec![("x".into(), -1)]),
        point_text: Some("x = -1".into()),
        rules: vec![("rem_drop_multiple".into(), 1)],
        origin: "a test".into(),
        width: Width(32),
        simplify_width: Width(32),
        subject: "tileproof engine".into(),
        reproduce_args: String::new(),
        body: body.into(),
        class: None,
        relaxed: None,
        detail: cause.detail(),
        cause,
        reproducer: None,
    }
}

#[test]
fn concurrent_atomic_writes_leave_one_whole_file_and_no_temporary_files() {
    let dir = temp_dir("atomic");
    let path = dir.join("case.txt");
    let texts: Vec<String> = (0..8)
        .map(|i| format!("# writer {i}\n{}", "expr 1\n".repeat(5000)))
        .collect();
    std::thread::scope(|s| {
        for t in &texts {
            let path = &path;
            s.spawn(move || {
                for _ in 0..20 {
                    corpus::write_atomic(path, t).unwrap();
                }
            });
        }
    });
    let got = std::fs::read_to_string(&path).unwrap();
    assert!(texts.contains(&got), "a torn file");
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["case.txt".to_string()]);
}

#[test]
fn a_written_case_parses_and_says_what_failed() {
    let dir = temp_dir("entry");
    let e = entry("var x in [-2, 1]\nexpr (x * 4 + 1) % 4\nexpect 1 % 4\n");
    let saved = corpus::save(&dir, &e).unwrap();
    assert!(saved.new);
    let name = saved
        .path
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(
        name.starts_with("oracle-") && name.ends_with(".txt") && name.len() == 21,
        "{name}"
    );
    let text = std::fs::read_to_string(&saved.path).unwrap();
    let p = parse_program(&text).unwrap();
    assert_eq!(p.outputs.len(), 1);
    assert_eq!(p.expects.len(), 1);
    let h = corpus::Header::of(&p);
    assert_eq!(h.width.as_deref(), Some("32"));
    assert_eq!(
        corpus::case_width(&p, std::path::Path::new("case.txt")).unwrap(),
        Some(Width(32))
    );
    assert_eq!(h.point.as_deref(), Some("x = -1"));
    assert_eq!(h.rules.as_deref(), Some("rem_drop_multiple (1x)"));
    assert_eq!(
        h.cause,
        Some(Cause::Rule {
            rule: "rem_drop_multiple".into(),
            fault: Fault::Wrong,
        })
    );
    assert_eq!(
        h.reproduce.unwrap(),
        format!("tileproof replay {}", saved.path.display())
    );
    // What was written reads back as the very same header.
    let header_text: String = text
        .lines()
        .filter(|l| l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(h_again(&header_text), header_text);
    // The same case again is the same file, left as it was.
    let again = corpus::save(
        &dir,
        &entry("var x in [-2, 1]\nexpr (x * 4 + 1) % 4\nexpect 0\n"),
    )
    .unwrap();
    assert_eq!(again.path, saved.path);
    assert!(!again.new);
    assert_eq!(std::fs::read_to_string(&saved.path).unwrap(), text);
    // A different case is another file.
    assert_ne!(
        corpus::save(&dir, &entry("expr 1\n")).unwrap().path,
        saved.path
    );
}

#[test]
fn replay_uses_the_width_of_the_header_and_rejects_a_bad_one() {
    let dir = temp_dir("width");
    let ok = dir.join("w8.txt");
    // At width 8, x + 100 overflows for x > 27: the source is undefined
    // there and any target is fine; the rest must still agree.
    std::fs::write(&ok, "# width: 8\nvar x in [0, 100]\nexpr (x + 100) - 100\n").unwrap();
    let r = corpus::replay_file(&ok, Replayer::engine(builtin()), None, None).unwrap();
    assert_eq!(r.width, Width(8));
    assert!(r.ok(), "{:?}", r.checked.failures);
    let bad = dir.join("bad.txt");
    std::fs::write(&bad, "# width: 7\nexpr 1\n").unwrap();
    let e = corpus::replay_file(&bad, Replayer::engine(builtin()), None, None)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("bad.txt") && e.contains("`# width: 7`"), "{e}");
    let syntax = dir.join("syntax.txt");
    std::fs::write(&syntax, "var x in [0, 3]\nexpr x +\n").unwrap();
    let e = corpus::replay_file(&syntax, Replayer::engine(builtin()), None, None)
        .err()
        .unwrap()
        .to_string();
    assert!(e.starts_with(&format!("{}:2:", syntax.display())), "{e}");
}

#[test]
fn directories_list_their_case_files_in_order() {
    let dir = temp_dir("files");
    for n in ["b.txt", "a.txt", ".a.txt.tmp-1-0", "notes.md"] {
        std::fs::write(dir.join(n), "expr 1\n").unwrap();
    }
    let files = corpus::files(&dir).unwrap();
    let names: Vec<_> = files
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["a.txt", "b.txt"]);
    assert!(corpus::is_temp_file(&dir.join(".a.txt.tmp-1-0")));
    assert!(corpus::files(&dir.join("missing")).is_err());
}

#[test]
fn an_entry_from_a_checked_case_carries_the_failure_and_the_engine_output() {
    let rules = engine::rules::RuleSet::with_file(
        builtin(),
        "b.rules",
        "group identity\nrule mul_zero: x * 0 => 0\n",
    )
    .unwrap();
    let simp = Engine::new(Simplifier::new(&rules), Vec::new());
    let p = parse_program(
        "var c: bool\nvar x in [0, 5]\nexpr where(c, x, where(x < 3, x + 1, invalid)) * 0\n",
    )
    .unwrap();
    let c = check(&p.graph, &p.outputs, &simp, &CheckConfig::default(), None);
    let e = Entry::from_checked(
        &c,
        corpus::case_body(&p.graph, &p.outputs, None),
        Kind::Oracle,
        &simp,
        Width::W64,
        "test".into(),
        Found::just(Cause::Shape("test".into())),
    );
    assert_eq!(e.rules, vec![("mul_zero".to_string(), 1)]);
    // The case as checked, then the answer.
    assert_eq!(
        e.body,
        format!(
            "{}expect 0\n",
            corpus::case_body(&p.graph, &p.outputs, None)
        )
    );
    assert!(e.message.starts_with("validity-differs"));
    // A bool is written as the input syntax writes it, on the failure line
    // and in the `# point:` header alike.
    let text = e.render(Path::new("corpus/x.txt"));
    assert!(
        text.contains("# failure: validity-differs (output 1) at c = false, x = 3;")
            && text.contains("# point: c = false, x = 3\n"),
        "{text}"
    );
}

/// A peer's answer (the `expect` line) to the `expr` line, hunted for a
/// missed simplification by the built-in engine under its own profile.
fn hunt(text: &str) -> Hunt {
    let p = engine::parse::parse_program(text).unwrap();
    let h = Hunter::new(engine::rules::builtin(), Profile::engine(Width::W64), None);
    h.hunt(&p.graph, &p.outputs, &p.expects)
}

#[test]
fn a_cheaper_sound_peer_answer_is_the_engines_missed_simplification_proved_and_written() {
    // The engine keeps the square of x mod 2, which is x mod 2 itself.
    let h = hunt("var x in [0, 3]\nexpr x mod 2 * (x mod 2)\nexpect x mod 2\n");
    let Hunt::Missed(m) = h.clone() else {
        panic!("{h:?}")
    };
    assert_eq!(m.direction, Direction::PeerCheaper);
    assert_eq!(m.verdict, ValidationVerdict::EquivalentByEnumeration);
    assert!(m.peer_cost < m.engine_cost, "{m:?}");
    assert!(m.causes.is_empty() && m.proposal.is_none());
    let mut t = Tally {
        on: true,
        ..Tally::default()
    };
    let dir = std::env::temp_dir().join(format!("tileproof-engine-missed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    t.add(h, Some(1), |m| {
        let text = corpus::missed_file(m, "peer 1.0", "its model", Width::W64);
        corpus::save_missed(&dir, &m.key(), &text, None)
    });
    assert_eq!(
        (t.cases, t.engine_missed.cases, t.engine_missed.written),
        (0, 1, 1)
    );
    let path = t.engine_missed.first_path.unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with("# missed simplification of tileproof's engine (not a bug of the peer): peer 1.0 is cheaper"),
        "{text}"
    );
    assert!(
        text.contains(
            "# proof (the peer's answer): equivalent by enumeration: every one of 4 points"
        ),
        "{text}"
    );
    assert!(
        text.ends_with("expr x mod 2 * (x mod 2)\nexpect x mod 2\n"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
