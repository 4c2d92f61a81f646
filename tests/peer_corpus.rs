//! The findings kept against peers (`corpus/peers/NAME/*.txt`, and the
//! class subdirectories `model-only/` ...) are real: each is confirmed by
//! running the pinned peer on the case (its answer, its error, or its
//! bounds of the source's nodes) and the interpreter on the recorded
//! point, carries its class by the peer's compiled code (re-confirmed by
//! `replay --expect-findings` in CI), a real bug has a reproducer beside it
//! that needs only the peer and still exits 1, and its `# reproduce:` line,
//! run as written, still shows it. And tileproof's own engine is sound on
//! every one of them.
//!
//! The peer half needs the pinned peers (`sh adapters/setup-venv.sh`), so
//! it is ignored by a plain `cargo test`; `.ci/run` installs them and runs
//! it with `--ignored`, failing when they cannot be installed.

use engine::interp::{self, PointCheck};
use engine::parse::Program;
use engine::rules::builtin;
use engine::semantics::Model;
use fuzz::checks::Kind;
use fuzz::confirm::Class;
use fuzz::corpus::{self, replay_case, Replayer};
use fuzz::peer::Peer;
use fuzz::subject::{Answer, Subject};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every kept peer finding, by peer directory.
fn peer_cases() -> Vec<PathBuf> {
    let dir = root().join("corpus/peers");
    let mut out = Vec::new();
    for d in std::fs::read_dir(&dir).expect("corpus/peers exists") {
        let d = d.unwrap().path();
        if d.is_dir() {
            out.extend(corpus::files(&d).unwrap());
        }
    }
    out.sort();
    assert!(!out.is_empty(), "no cases under {}", dir.display());
    out
}

/// A header field the file must have.
fn must(v: &Option<String>, key: &str, path: &Path) -> String {
    v.clone()
        .unwrap_or_else(|| panic!("{}: no `# {key}:` header", path.display()))
}

/// The `--simplifier` command of a reproduce line (single-quoted, as
/// tileproof writes it).
fn simplifier_of(reproduce: &str, path: &Path) -> String {
    let rest = reproduce
        .split_once("--simplifier '")
        .unwrap_or_else(|| panic!("{}: reproduce line has no --simplifier", path.display()))
        .1;
    rest[..rest.find('\'').unwrap()].to_string()
}

/// The `# point:` header as an environment in the graph's variable order.
fn point_of(p: &Program, path: &Path) -> Vec<i128> {
    let text = must(&corpus::Header::of(p).point, "point", path);
    let vals: Vec<(String, i128)> = text
        .split(", ")
        .map(|kv| {
            let (k, v) = kv.split_once(" = ").expect("`name = value`");
            (k.to_string(), v.parse().expect("an integer"))
        })
        .collect();
    p.graph
        .vars()
        .iter()
        .map(|d| {
            vals.iter()
                .find(|(k, _)| *k == d.name)
                .map(|(_, v)| *v)
                .unwrap_or(d.lo as i128)
        })
        .collect()
}

/// Some point of the domain where the case's source means something under
/// model `m`: it is defined and no root is unconstrained.
fn meaningful_point(p: &Program, m: Model) -> Option<Vec<i128>> {
    interp::points(&p.graph).find(|env| {
        interp::eval(&p.graph, &p.outputs, env, m)
            .is_ok_and(|vals| vals.iter().all(|v| *v != interp::Val::Unconstrained))
    })
}

#[test]
fn the_engine_is_sound_on_every_case_found_in_a_peer() {
    let rules = builtin();
    for path in peer_cases() {
        let r = replay_case(&path, None, Replayer::engine(rules), None, None);
        assert!(r.ok, "{}\n{}", r.line, r.detail);
    }
}

#[test]
#[ignore = "needs the pinned peers: sh adapters/setup-venv.sh, then cargo test --release --test peer_corpus -- --ignored"]
fn every_kept_peer_finding_is_confirmed_by_the_peer_and_the_interpreter() {
    let python = root().join(".venv-peers/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run sh adapters/setup-venv.sh",
        python.display()
    );
    let mut peers: Vec<(String, Peer)> = Vec::new();
    let mut reproduced = std::collections::HashSet::new();
    let mut runs: Vec<Run> = Vec::new();
    for path in peer_cases() {
        let shown = path.display().to_string();
        let mut p = corpus::read(&path).unwrap();
        let reproduce = must(&corpus::Header::of(&p).reproduce, "reproduce", &path).to_string();
        let cmd = simplifier_of(&reproduce, &path);
        if !peers.iter().any(|(c, _)| *c == cmd) {
            let peer = Peer::start(&cmd, Duration::from_secs(30))
                .unwrap_or_else(|e| panic!("{shown}: {cmd}: {e}"));
            peers.push((cmd.clone(), peer));
        }
        let peer = &peers.iter().find(|(c, _)| *c == cmd).unwrap().1;
        // The pinned peer is the one the finding was made against, and the
        // case sits in that peer's directory.
        assert_eq!(
            must(&corpus::Header::of(&p).simplifier, "simplifier", &path),
            peer.name(),
            "{shown}"
        );
        // Findings of a class kept apart from the bugs sit in its
        // subdirectory of the peer's directory.
        let class_name = must(&corpus::Header::of(&p).backend, "backend", &path)
            .split([' ', ':'])
            .next()
            .unwrap()
            .to_string();
        let class = Class::from_name(&class_name)
            .unwrap_or_else(|| panic!("{shown}: `# backend: {class_name}` is not a class"));
        let mut parent = path.parent().unwrap();
        if let Some(sub) = class.subdir() {
            assert_eq!(
                parent.file_name().unwrap().to_string_lossy(),
                sub,
                "{shown}: a {class} finding is kept in {sub}/"
            );
            parent = parent.parent().unwrap();
        }
        let dir = parent.file_name().unwrap().to_string_lossy();
        assert!(
            peer.name().starts_with(&format!("{dir} ")),
            "{shown} is in {dir}/, but it is a finding of {}",
            peer.name()
        );
        let w = corpus::case_width(&p, &path)
            .unwrap()
            .unwrap_or(peer.profile().width());
        // Judged under the strict model at the case's width; a peer's
        // error counts where its own, relaxed model finds a meaning too.
        let m = Model {
            width: w,
            ..peer.profile().model()
        };
        let relaxed = peer.profile().relaxed().map(|r| Model { width: w, ..r });
        let kind = must(
            &corpus::Header::of(&p).kind_text,
            "tileproof finding",
            &path,
        )
        .to_string();
        let outputs = p.outputs.clone();
        let answer = peer.simplify(&mut p.graph, &outputs);
        if kind == Kind::PeerError.name() {
            // The peer fails on a case that has a meaning: its source is
            // defined, and not unconstrained, somewhere in the domain.
            let refusal = answer.expect_err(&format!("{shown}: the peer now answers"));
            assert_eq!(refusal.kind, Kind::PeerError, "{shown}: {refusal}");
            assert!(
                meaningful_point(&p, m).is_some()
                    || relaxed.is_some_and(|r| meaningful_point(&p, r).is_some()),
                "{shown}: the source means nothing at any point, so the peer's error is no finding"
            );
        } else if kind == Kind::Bounds.name() {
            // The peer's range analysis bounds some node of the source
            // away from the value the interpreter gives it at the point.
            let bounds = peer
                .bounds(&p.graph, &outputs)
                .unwrap_or_else(|e| panic!("{shown}: the peer gives no bounds: {e}"))
                .unwrap_or_else(|| panic!("{shown}: the peer gives no bounds"));
            let bounded = fuzz::bounds::per_node(&p.graph, &outputs, &bounds.bounds)
                .unwrap_or_else(|e| panic!("{shown}: {e}"));
            let env = point_of(&p, &path);
            let mut ev = interp::Evaluator::new(&p.graph, &outputs, m);
            let vals = ev
                .eval_all(&env)
                .unwrap_or_else(|e| panic!("{shown}: the source is undefined at the point: {e:?}"));
            assert!(
                bounded
                    .iter()
                    .any(|&(n, b)| fuzz::bounds::contains(b, vals[n.index()]) == Some(false)),
                "{shown}: at the recorded point every node lies within the peer's bounds"
            );
        } else {
            assert_eq!(kind, Kind::Oracle.name(), "{shown}: a kind this test knows");
            let Ok(Answer::Simplified { roots, .. }) = answer else {
                panic!("{shown}: the peer gave no answer: {answer:?}")
            };
            // The answer is the one recorded in the `expect` lines.
            let shown_now: Vec<String> = roots
                .iter()
                .map(|&r| engine::print::expr(&p.graph, r))
                .collect();
            let recorded: Vec<String> = p
                .expects
                .iter()
                .map(|&r| engine::print::expr(&p.graph, r))
                .collect();
            assert_eq!(shown_now, recorded, "{shown}: the peer's answer changed");
            // At the recorded point the interpreter sees the recorded failure.
            let env = point_of(&p, &path);
            let check = interp::check_point(
                interp::eval(&p.graph, &p.outputs, &env, m),
                interp::eval(&p.graph, &roots, &env, m),
            );
            let failure = must(&corpus::Header::of(&p).failure, "failure", &path);
            match check {
                PointCheck::Fails(f) => assert!(
                    failure.starts_with(f.name()),
                    "{shown}: the interpreter sees {} at the point, the header says {failure}",
                    f.name()
                ),
                other => panic!("{shown}: at the recorded point the interpreter says {other:?}"),
            }
        }
        // A real bug has a reproducer beside it that needs only the peer
        // and still shows it (a Python script exits 1; a Rust test, Morok's,
        // fails: adapters/morok/run-reproducers.sh runs those in CI).
        let beside = corpus::reproducers_of(&path);
        // What the adapter attached (MLIR's `.mlir` module) is kept beside
        // the one script that runs.
        let scripts: Vec<_> = beside
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "py" || e == "rs"))
            .collect();
        if class.is_bug() && class != Class::Hang {
            assert_eq!(scripts.len(), 1, "{shown}: reproducers {beside:?}");
            let script = scripts[0];
            if script.extension().is_some_and(|e| e == "py") {
                runs.push(Run::Reproducer(script.clone()));
            }
        } else {
            assert!(
                beside.is_empty(),
                "{shown}: a {class} finding has a reproducer"
            );
        }
        // The reproduce line, run as written, still shows the finding: one
        // per peer command and kind of finding (each case of a directory is
        // replayed against its peer by .ci/run, `replay --expect-findings`;
        // this pins that the line itself runs).
        if !reproduced.insert((cmd.clone(), kind.clone())) {
            continue;
        }
        let line = reproduce
            .strip_prefix("tileproof ")
            .unwrap_or_else(|| panic!("{shown}: reproduce line is not a tileproof command"))
            .to_string();
        runs.push(Run::Line { path, line });
    }
    // The reproducers and the reproduce lines are processes of their own
    // (each starts Python and its peer, 0.3 to 3 s): one per core at a time.
    let failed: Vec<String> = runs
        .par_iter()
        .filter_map(|run| run.failure(&python))
        .collect();
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

/// A process the corpus test runs once every case is read.
enum Run {
    /// A real bug's Python reproducer, which must still exit 1.
    Reproducer(PathBuf),
    /// A case's reproduce line, run as written: it must still fail the case.
    Line { path: PathBuf, line: String },
}

impl Run {
    /// Why it no longer shows its finding, if it does not.
    fn failure(&self, python: &Path) -> Option<String> {
        match self {
            Run::Reproducer(script) => {
                let out = Command::new(python)
                    .arg(script)
                    .current_dir(root())
                    .output()
                    .unwrap();
                (out.status.code() != Some(1)).then(|| {
                    format!(
                        "{}: the reproducer no longer shows the bug ({}):\n{}{}",
                        script.display(),
                        out.status,
                        String::from_utf8_lossy(&out.stdout),
                        String::from_utf8_lossy(&out.stderr)
                    )
                })
            }
            Run::Line { path, line } => {
                let out = Command::new("sh")
                    .arg("-c")
                    .arg(format!("{} {line}", env!("CARGO_BIN_EXE_tileproof")))
                    .current_dir(root())
                    .output()
                    .unwrap();
                let text = String::from_utf8_lossy(&out.stdout);
                let fail = format!("FAIL {}", path.strip_prefix(root()).unwrap().display());
                (out.status.code() != Some(2) || !text.contains(&fail)).then(|| {
                    format!(
                        "{}: tileproof {line} ({}), expected `{fail}`:\n{text}",
                        path.display(),
                        out.status
                    )
                })
            }
        }
    }
}
