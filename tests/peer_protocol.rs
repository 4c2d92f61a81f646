//! The protocol's pipeline stages and the ops of a bounds answer, from
//! tileproof's side (docs/protocol.md, "Pipeline stages" and section 7):
//! a peer lists its stages in its hello, a `stage` request answers the
//! expressions after that stage (as a subject: `Subject::stage`, and on the
//! command line `--peer-stage`), and a `bounds` answer's ops pair each
//! bound with the peer's own op. The peer is tests/adapters/every_answer.py
//! (plain python3), and MLIR's canonicalize for the real thing (the pinned
//! peers).

use fuzz::peer::Peer;
use fuzz::subject::{Answer, Subject};
use std::process::Command;
use std::time::Duration;

const EVERY_ANSWER: &str = "python3 tests/adapters/every_answer.py";

fn start(cmd: &str) -> Peer {
    Peer::start(cmd, Duration::from_secs(60)).unwrap_or_else(|e| panic!("{e}"))
}

/// `subject`'s answer to the program `text`, printed.
fn answer(subject: &dyn Subject, text: &str) -> Vec<String> {
    let mut p = engine::parse::parse_program(text).unwrap();
    let roots = p.outputs.clone();
    match subject.simplify(&mut p.graph, &roots) {
        Ok(Answer::Simplified { roots, .. }) => roots
            .iter()
            .map(|&r| engine::print::expr(&p.graph, r))
            .collect(),
        other => panic!("not an answer: {other:?}"),
    }
}

#[test]
fn a_stage_request_answers_the_pipeline_up_to_that_stage() {
    let peer = start(EVERY_ANSWER);
    assert_eq!(peer.stages(), ["build", "fold"]);
    let case = "var x in [0, 7]\nexpr x * 1 + 2\n";
    let build = peer.stage("build").expect("a stage of its hello");
    assert_eq!(answer(build.as_ref(), case), ["x * 1 + 2"]);
    assert_eq!(
        answer(peer.stage("fold").unwrap().as_ref(), case),
        ["x + 2"]
    );
    // The last stage is the entry point itself.
    assert_eq!(answer(&peer, case), ["x + 2"]);
    assert!(peer.stage("parse").is_none());
    assert_eq!(build.name(), peer.name());
    assert!(
        build.reproduce_args().ends_with("--peer-stage build "),
        "{}",
        build.reproduce_args()
    );
}

#[test]
fn check_with_peer_stage_judges_that_stage_alone() {
    let dir = std::env::temp_dir().join(format!("tileproof-peer-stage-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let case = dir.join("case.txt");
    std::fs::write(&case, "var x in [0, 7]\nexpr x * 1 + 2\n").unwrap();
    let check = |stage: &str| {
        let o = Command::new(env!("CARGO_BIN_EXE_tileproof"))
            .args([
                "check",
                "--no-missed",
                "--simplifier",
                EVERY_ANSWER,
                "--peer-stage",
                stage,
            ])
            .arg(&case)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        let text =
            String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
        (o.status.code(), text)
    };
    let (code, text) = check("build");
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("answer x * 1 + 2"), "{text}");
    let (code, text) = check("fold");
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("answer x + 2"), "{text}");
    let (code, text) = check("parse");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("has no stage `parse` (its hello's stages: build, fold)"),
        "{text}"
    );
}

#[test]
fn a_bounds_answer_pairs_each_bound_with_the_peers_op() {
    let peer = start(EVERY_ANSWER);
    let p = engine::parse::parse_program("var x in [-3, 5]\nexpr x * 1 + 2\n").unwrap();
    let b = peer
        .bounds(&p.graph, &p.outputs)
        .unwrap()
        .expect("its hello offers bounds");
    let nodes = fuzz::bounds::per_node_ops(&p.graph, &p.outputs, &b).unwrap();
    let shown: Vec<(String, String, Option<String>)> = nodes
        .iter()
        .map(|(n, bound, op)| {
            (
                engine::print::expr(&p.graph, *n),
                bound.to_string(),
                op.clone(),
            )
        })
        .collect();
    let op = |s: &str| Some(s.to_string());
    assert_eq!(
        shown,
        [
            ("x".into(), "[-3, 5]".into(), op("VAR")),
            ("1".into(), "[1, 1]".into(), op("CONST")),
            ("2".into(), "[2, 2]".into(), op("CONST")),
        ]
    );
}

/// MLIR builds the expressions (which folds them), prints them into a
/// module and parses it, then canonicalize runs: `parse` is the module as
/// parsed, before the pass, which drops a `mod` the loop ranges make
/// useless.
#[test]
#[ignore = "needs the pinned peers: sh adapters/setup-venv.sh, then cargo test --release --test peer_protocol -- --ignored"]
fn mlir_canonicalize_answers_each_stage_of_its_pipeline() {
    let peer = start(".venv-peers/bin/python adapters/mlir_adapter.py --entry canonicalize");
    assert_eq!(peer.stages(), ["construct", "parse", "canonicalize"]);
    let stage = |s: &str| peer.stage(s).unwrap();
    let folded = "var d0 in [0, 7]\nvar d1 in [0, 7]\nexpr ((d0 + d1) + 2) floordiv 2\n";
    for s in ["construct", "parse", "canonicalize"] {
        assert_eq!(
            answer(stage(s).as_ref(), folded),
            ["(d0 + d1) // 2 + 1"],
            "{s}"
        );
    }
    let ranged = "var d0 in [0, 7]\nvar d1 in [3, 3]\nexpr (d0 + d1) mod 16\nexpr d0 mod 8\n";
    let kept = ["(d0 + d1) mod 16", "d0 mod 8"];
    assert_eq!(answer(stage("construct").as_ref(), ranged), kept);
    assert_eq!(answer(stage("parse").as_ref(), ranged), kept);
    assert_eq!(
        answer(stage("canonicalize").as_ref(), ranged),
        ["d0 + d1", "d0"]
    );
    assert_eq!(answer(&peer, ranged), ["d0 + d1", "d0"]);
}
