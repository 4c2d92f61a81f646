//! The other side of the protocol: any [`Subject`] (tileproof's own engine)
//! served on standard input and output (`tileproof serve`).

use super::codec::PROTOCOL;
use super::codec::{from_tree, tree, Malformed};
use crate::subject::{Answer, Integers, Subject};
use engine::dtype::DType;
use engine::ir::{Graph, NodeId, Op};
use serde::Deserialize;
use serde_json::{json, Value};
use std::io::{self, BufRead, Write};

#[derive(Deserialize)]
struct RequestIn {
    pub(super) id: Value,
    pub(super) vars: Vec<VarIn>,
    pub(super) trees: Vec<Value>,
}

#[derive(Deserialize)]
struct VarIn {
    pub(super) name: String,
    pub(super) dtype: String,
    pub(super) lo: i64,
    pub(super) hi: i64,
}

/// Serves `subject` over the protocol: writes its hello to `output`, then
/// answers every request line of `input` until it ends. `tileproof serve`
/// runs tileproof's engine this way, so that it (or a deliberately broken
/// rule set) can be tested exactly as a peer is. A request that cannot be
/// read gets an `error` answer; the loop goes on.
pub fn serve(
    subject: &dyn Subject,
    version: &str,
    input: impl BufRead,
    mut output: impl Write,
) -> io::Result<()> {
    let prof = subject.profile();
    let hello = json!({
        "tileproof": PROTOCOL,
        "name": "tileproof",
        "version": version,
        "profile": {
            "ops": prof.ops.iter().filter(|op| **op != Op::Cast).map(|op| op.name()).collect::<Vec<_>>(),
            "invalid": prof.invalid,
            "integers": match prof.integers {
                Integers::Unbounded => "unbounded".to_string(),
                Integers::Fixed(w) => format!("int{}", w.0),
            },
            "bool_vars": prof.bool_vars,
            "partial_ops": prof.partial.name(),
            "input_language": {"invalid_compared": prof.invalid_compared},
        }
    });
    writeln!(output, "{hello}")?;
    output.flush()?;
    for line in input.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let answer = match serde_json::from_str::<RequestIn>(&line) {
            Ok(req) => {
                let id = req.id.clone();
                match answer_request(subject, &req) {
                    Ok(v) => v,
                    Err(e) => json!({"id": id, "error": e.to_string()}),
                }
            }
            Err(e) => {
                let id = serde_json::from_str::<Value>(&line)
                    .ok()
                    .and_then(|v| v.get("id").cloned())
                    .unwrap_or(Value::Null);
                json!({"id": id, "error": format!("not a request: {e}")})
            }
        };
        writeln!(output, "{answer}")?;
        output.flush()?;
    }
    Ok(())
}

fn answer_request(subject: &dyn Subject, req: &RequestIn) -> Result<Value, Malformed> {
    let mut g = Graph::new();
    for v in &req.vars {
        let dt = DType::from_name(&v.dtype)
            .filter(|d| matches!(d, DType::Index | DType::Bool))
            .ok_or_else(|| Malformed::VarDtype {
                name: v.name.clone(),
                dtype: v.dtype.clone(),
            })?;
        g.declare_var(&v.name, dt, v.lo, v.hi)?;
    }
    let roots: Vec<NodeId> = req
        .trees
        .iter()
        .map(|t| from_tree(&mut g, t))
        .collect::<Result<_, _>>()?;
    match subject.simplify(&mut g, &roots) {
        Ok(Answer::Simplified { roots: out, .. }) => {
            let trees: Vec<Value> = out.iter().map(|&r| tree(&g, r)).collect();
            Ok(json!({"id": req.id, "trees": trees}))
        }
        Ok(Answer::Unsupported(why)) => Ok(json!({"id": req.id, "unsupported": why})),
        Ok(Answer::Declined(why)) => Ok(json!({"id": req.id, "declined": why})),
        Err(refusal) => Err(refusal.into()),
    }
}
