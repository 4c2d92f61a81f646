//! The serve loop, driven as tileproof drives an adapter: lines in, lines out.
use serde_json::{json, Value};
use tileproof_adapter::*;

/// Answers `x` unchanged, panics on a variable named `boom`, refuses `q`;
/// its bounds panic on a variable named `nob`.
struct Echo;

impl Adapter for Echo {
    fn hello(&self) -> Hello {
        let profile = Profile {
            ops: vec!["add".into()],
            invalid: false,
            integers: Integers::Int64,
            bool_vars: false,
            partial_ops: PartialOps::Undefined,
            input_language: InputLanguage::default(),
        };
        Hello {
            bounds: true,
            ..Hello::new("echo", "0", profile)
        }
    }

    fn simplify(&mut self, case: &Case) -> Result<Simplified, Refuse> {
        if case.var("boom").is_some() {
            panic!("the peer fell over on {}", case.trees.len());
        }
        if case.var("q").is_some() {
            return Err(Refuse::Unsupported("no q".into()));
        }
        Ok(Simplified {
            exprs: Exprs::Trees(case.trees.clone()),
            fired: vec![("r1".into(), 2)],
            patterns: Vec::new(),
        })
    }

    fn bounds(&mut self, case: &Case) -> Result<PeerBounds, Refuse> {
        if case.var("nob").is_some() {
            panic!("no bounds for nob");
        }
        let bounds: Bounds = case
            .trees
            .iter()
            .map(|t| {
                t.preorder()
                    .iter()
                    .map(|_| Some(Bound::Int(0, 7)))
                    .collect()
            })
            .collect();
        Ok(bounds.into())
    }
}

fn session(lines: &[&str]) -> Vec<Value> {
    let input = lines.join("\n");
    let mut out = Vec::new();
    serve_on(Echo, input.as_bytes(), &mut out).unwrap();
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn every_request_line_gets_one_answer_with_its_id() {
    let case = |id: i64, var: &str| {
        json!({"id": id, "vars": [{"name": var, "dtype": "index", "lo": 0, "hi": 7}],
               "trees": [["add", ["var", var], ["const", 1]]]})
        .to_string()
    };
    let (ok, boom, q, bounds) = (case(1, "x"), case(2, "boom"), case(3, "q"), {
        let mut v: Value = serde_json::from_str(&case(4, "x")).unwrap();
        v["bounds"] = json!({});
        v.to_string()
    });
    let run = {
        let mut v: Value = serde_json::from_str(&case(5, "x")).unwrap();
        v["run"] = json!({"backend": "c", "points": [[1]]});
        v.to_string()
    };
    let out = session(&[
        &ok,
        "not json",
        &boom,
        &q,
        "",
        &bounds,
        &run,
        r#"{"vars": []}"#,
    ]);
    assert_eq!(out[0]["tileproof"], 1);
    assert_eq!(out[0]["bounds"], true);
    assert_eq!(
        out[1],
        json!({"id": 1, "trees": [["add", ["var", "x"], ["const", 1]]], "fired": {"r1": 2}})
    );
    assert_eq!(out[2]["id"], Value::Null);
    assert!(out[2]["error"].as_str().unwrap().starts_with("not JSON"));
    // A panic in the peer is an answer, and the loop goes on.
    assert_eq!(out[3]["id"], 2);
    let msg = out[3]["error"].as_str().unwrap();
    assert!(
        msg.starts_with("panic: the peer fell over on 1 at "),
        "{msg}"
    );
    assert_eq!(out[4], json!({"id": 3, "unsupported": "no q"}));
    assert_eq!(
        out[5],
        json!({"id": 4, "bounds": [[[0, 7], [0, 7], [0, 7]]]})
    );
    assert_eq!(
        out[6],
        json!({"id": 5, "unsupported": "this adapter has no backend"})
    );
    assert!(out[7]["error"].as_str().unwrap().contains("integer `id`"));
    assert_eq!(out.len(), 8);
}

#[test]
fn a_simplification_asked_with_bounds_carries_them_unless_they_fail() {
    let case = |id: i64, var: &str| {
        json!({"id": id, "vars": [{"name": var, "dtype": "index", "lo": 0, "hi": 7}],
               "trees": [["add", ["var", var], ["const", 1]]], "with_bounds": {}})
        .to_string()
    };
    let out = session(&[&case(1, "x"), &case(2, "nob"), &case(3, "boom")]);
    // The answer and the bounds of its request's expressions, in one line.
    assert_eq!(
        out[1],
        json!({"id": 1, "trees": [["add", ["var", "x"], ["const", 1]]], "fired": {"r1": 2},
               "bounds": [[[0, 7], [0, 7], [0, 7]]]})
    );
    // Bounds that fail are left out (asked alone, the failure is theirs);
    // the simplification stands.
    assert_eq!(
        out[2],
        json!({"id": 2, "trees": [["add", ["var", "nob"], ["const", 1]]], "fired": {"r1": 2}})
    );
    // A simplification that fails is the answer, as without bounds.
    assert!(out[3]["error"]
        .as_str()
        .unwrap()
        .starts_with("panic: the peer fell over"));
    assert_eq!(out.len(), 4);
}
