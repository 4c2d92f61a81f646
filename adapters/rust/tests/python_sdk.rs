//! The Python SDK (adapters/tileproof_peer.py) writes the protocol these
//! wire types define: a session with tests/adapters/every_answer.py (a
//! peer with every capability, under plain python3) sends every request
//! form, and every line the SDK writes is read with the wire types whole:
//! each key it writes is one the types know, with the value they read.
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};
use std::io::Write;
use std::process::{Command, Stdio};
use tileproof_adapter::{Hello, Reply};

fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The lines the adapter writes for `requests`: its hello first.
fn session(requests: &[String]) -> Vec<Value> {
    let mut child = Command::new("python3")
        .arg(root().join("tests/adapters/every_answer.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("python3 runs");
    let mut stdin = child.stdin.take().unwrap();
    for r in requests {
        writeln!(stdin, "{r}").unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the adapter exited with {}",
        out.status
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// `line` is read by `T`, and every key of it is one `T` knows.
fn read_whole<T: DeserializeOwned + Serialize>(line: &Value) -> T {
    let typed: T = serde_json::from_value(line.clone())
        .unwrap_or_else(|e| panic!("the wire types do not read {line}: {e}"));
    let back = serde_json::to_value(&typed).unwrap();
    same::<T>(line, line, &back, &mut Vec::new());
    typed
}

/// `b` (what `T` writes back) has every key of `a` (what the SDK wrote),
/// at `path` of `line`, with the same value. A key `T` does not write back
/// is one it skips when empty: it must still know it, so a value of the
/// wrong type there must make `T` refuse the line (a key `T` does not
/// know is ignored, whatever its value).
fn same<T: DeserializeOwned>(line: &Value, a: &Value, b: &Value, path: &mut Vec<Value>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in x {
                path.push(json!(k));
                match y.get(k) {
                    Some(w) => same::<T>(line, v, w, path),
                    None => {
                        let mut poisoned = line.clone();
                        *at(&mut poisoned, path) = json!({"not": ["what it is"]});
                        assert!(
                            serde_json::from_value::<T>(poisoned).is_err(),
                            "`{}` is not a key the wire types know, in {line}",
                            show(path)
                        );
                    }
                }
                path.pop();
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            assert_eq!(x.len(), y.len(), "at {} of {line}", show(path));
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                path.push(json!(i));
                same::<T>(line, v, w, path);
                path.pop();
            }
        }
        (Value::Number(x), Value::Number(y)) => {
            assert_eq!(x.as_f64(), y.as_f64(), "at {} of {line}", show(path))
        }
        _ => assert_eq!(a, b, "at {} of {line}", show(path)),
    }
}

fn at<'v>(v: &'v mut Value, path: &[Value]) -> &'v mut Value {
    path.iter().fold(v, |v, k| match k {
        Value::String(k) => &mut v[k.as_str()],
        k => &mut v[k.as_u64().unwrap() as usize],
    })
}

fn show(path: &[Value]) -> String {
    path.iter()
        .map(|k| k.to_string())
        .collect::<Vec<_>>()
        .join(".")
}

fn case(id: u64, trees: Value, extra: Value) -> String {
    let mut r = json!({"id": id, "vars": [{"name": "x", "dtype": "index", "lo": -3, "hi": 5},
                                          {"name": "p", "dtype": "bool", "lo": 0, "hi": 1}],
                       "exprs": [], "trees": trees});
    r["exprs"] = json!(vec!["(not read)"; r["trees"].as_array().unwrap().len()]);
    for (k, v) in extra.as_object().unwrap() {
        r[k] = v.clone();
    }
    r.to_string()
}

#[test]
fn every_line_the_python_sdk_writes_is_read_whole_by_the_wire_types() {
    let x1 = json!([["add", ["mul", ["var", "x"], ["const", 1]], ["const", 2]]]);
    let requests = [
        case(1, x1.clone(), json!({})),
        case(2, x1.clone(), json!({"stage": "build"})),
        case(3, x1.clone(), json!({"stage": "no-such-stage"})),
        case(4, json!([["floordiv", ["var", "x"], ["const", 2]]]), json!({})),
        r#"{"id": 5, "vars": [{"name": "boom", "dtype": "index", "lo": 0, "hi": 1}], "trees": [["var", "boom"]]}"#.into(),
        "not json".into(),
        case(7, json!([["where", ["var", "p"], ["var", "x"], ["invalid"]]]), json!({"run": {"backend": "eval", "points": [[1, 1], [1, 0], [13, 1]]}})),
        case(8, x1.clone(), json!({"run": {"backend": "broken", "points": [[1, 1]]}})),
        case(9, x1.clone(), json!({"reproducer": {"backend": "eval", "point": [1, 0], "expected": [3], "class": "wrong-value", "kind": "oracle"}})),
        json!({"id": 10, "rules": {}}).to_string(),
        json!({"id": 11, "instances": {"rule": "mul-one", "constants": [1], "ranges": [[0, 7]], "limit": 4, "seed": 0}}).to_string(),
        case(12, json!([["mul", ["var", "x"], ["const", 1]]]), json!({"apply": {"rule": "mul-one"}})),
        case(13, json!([["add", ["var", "x"], ["const", 1]]]), json!({"apply": {"rule": "mul-one"}})),
        case(14, json!([["lt", ["var", "x"], ["const", 1]], ["bool", true]]), json!({"bounds": {}})),
        case(15, x1.clone(), json!({"with_bounds": {}})),
    ];
    let lines = session(&requests);
    assert_eq!(lines.len(), requests.len() + 1, "{lines:?}");
    let hello: Hello = read_whole(&lines[0]);
    assert_eq!(
        (
            hello.stages.as_slice(),
            hello.backends.len(),
            hello.rules,
            hello.bounds
        ),
        (
            ["build".to_string(), "fold".into()].as_slice(),
            2,
            true,
            true
        )
    );
    let replies: Vec<Reply> = lines[1..].iter().map(read_whole::<Reply>).collect();
    // Each answer form came back, so each was read whole above.
    let r = |i: usize| &replies[i - 1];
    assert!(r(1).trees.is_some() && r(1).fired.is_some());
    assert_eq!(
        r(2).trees.as_ref(),
        Some(&serde_json::from_value(x1).unwrap())
    );
    assert!(r(3)
        .error
        .as_ref()
        .unwrap()
        .contains("`stage` must be one of"));
    assert!(r(4).unsupported.is_some());
    assert!(r(5).error.as_ref().unwrap().contains("the peer fell over"));
    assert_eq!((r(6).id, r(6).error.is_some()), (None, true));
    let results = serde_json::to_value(r(7).results.as_ref().unwrap()).unwrap();
    assert_eq!(
        results,
        json!([{"values": [1]}, {"values": ["invalid"]}, {"trap": "SIGFPE"}])
    );
    assert!(r(8).compile_error.is_some());
    assert!(r(9).script.is_some() && r(9).attachments.is_some());
    assert_eq!(r(10).rules.as_ref().unwrap().len(), 3);
    assert!(r(11).instances.is_some() && r(11).failures.is_some());
    assert!(r(12).trees.is_some());
    assert_eq!(
        r(12).patterns.as_deref(),
        Some(&["mul-one/x*1".to_string()][..])
    );
    assert!(r(13).declined.is_some());
    assert_eq!(
        r(14).ops.as_ref().unwrap()[0],
        [None, Some("VAR".into()), Some("CONST".into())]
    );
    assert_eq!(
        r(14).bounds.as_ref().unwrap()[1],
        [Some(tileproof_adapter::Bound::Bool(true, true))]
    );
    // A simplification asked with bounds carries its source's, per node.
    assert!(r(15).trees.is_some());
    assert_eq!(r(15).bounds.as_ref().unwrap()[0].len(), 5);
}
