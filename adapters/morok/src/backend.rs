//! The `run` requests (docs/protocol.md, section 5): Morok's compiled code
//! decides every finding. One backend, `clang`: Morok's C renderer and its
//! clang JIT over the expressions as built ([`crate::harness`]). The kernel
//! is compiled in the adapter and run in a forked child, so that a trap at
//! a point is an answer: the points run in one child in order; when it
//! dies, the point it died at is a trap and the rest run in a new child.

use crate::convert::{VarPlan, var_uop};
use crate::harness::{self, Compiled, NotCompiled, Val};
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;
use tileproof_adapter::child::{Outcome, in_child};
use tileproof_adapter::{Case, PointRun, Refuse, Run, RunRequest, RunValue};

pub const BACKENDS: &[&str] = &["clang"];

/// How long one child may run its points.
const CHILD_TIMEOUT: Duration = Duration::from_secs(20);

/// Kernels compiled in this process, by their C code: a campaign runs one
/// program on the backend several times (judged, shrunk, kept, reported),
/// and clang's second compile of the same code was most of the CPU time a
/// campaign against Morok spent.
static KERNELS: LazyLock<Mutex<HashMap<String, Result<Arc<Compiled>, NotCompiled>>>> =
    LazyLock::new(Default::default);

/// How many kernels the cache holds before it starts afresh.
const KERNELS_KEPT: usize = 256;

/// The kernel of `code`'s rendering, compiled once per process.
fn kernel(rendered: harness::Rendered) -> Result<Arc<Compiled>, NotCompiled> {
    let lock = || KERNELS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(k) = lock().get(&rendered.code) {
        return k.clone();
    }
    let code = rendered.code.clone();
    let k = rendered.compile().map(Arc::new);
    let mut cache = lock();
    if cache.len() >= KERNELS_KEPT {
        cache.clear();
    }
    cache.insert(code, k.clone());
    k
}

/// A point's values as one line of the child's output.
fn encode(vals: &[Val]) -> String {
    vals.iter()
        .map(|v| match v {
            Val::Int(i) => format!("i{i}"),
            Val::Bool(b) => format!("b{}", u8::from(*b)),
            Val::Invalid => "x".into(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn decode(line: &str) -> Option<Vec<RunValue>> {
    line.split(' ')
        .filter(|w| !w.is_empty())
        .map(|w| match w.split_at(1) {
            ("i", v) => v.parse().ok().map(RunValue::Int),
            ("b", v) => Some(RunValue::Bool(v == "1")),
            ("x", "") => Some(RunValue::Invalid),
            _ => None,
        })
        .collect()
}

/// Compiles `case`'s expressions literally and runs them at `req`'s points.
pub fn run(case: &Case, plans: &[VarPlan], req: &RunRequest) -> Result<Run, Refuse> {
    if !BACKENDS.contains(&req.backend.as_str()) {
        return Err(Refuse::Unsupported(format!(
            "no backend `{}` (this adapter has clang)",
            req.backend
        )));
    }
    let vars: Vec<_> = plans.iter().map(var_uop).collect();
    let exprs = crate::convert::build(case, plans)?;
    let compiled = match harness::render(&vars, &exprs).and_then(kernel) {
        Ok(c) => c,
        Err(NotCompiled::Unsupported(why)) => return Err(Refuse::Unsupported(why)),
        Err(NotCompiled::Rejected(e)) => return Ok(Run::CompileError(e)),
    };
    let mut results: Vec<PointRun> = Vec::with_capacity(req.points.len());
    while results.len() < req.points.len() {
        let start = results.len();
        let outcome = in_child(CHILD_TIMEOUT, |w| {
            for p in &req.points[start..] {
                let line = encode(&compiled.run(p));
                let _ = writeln!(w, "{line}");
            }
        })
        .map_err(|e| Refuse::Error(format!("the adapter could not fork: {e}")))?;
        let (out, end) = match outcome {
            Outcome::Output(out) => (out, None),
            Outcome::Signal(sig, out) => (out, Some(PointRun::Trap(sig))),
            Outcome::Timeout(out) => (out, Some(PointRun::Timeout(CHILD_TIMEOUT.as_secs_f64()))),
            Outcome::Failed(code, _) => {
                return Err(Refuse::Error(format!(
                    "the kernel's child exited with status {code}"
                )));
            }
        };
        let text = String::from_utf8_lossy(&out);
        for line in text.lines() {
            let vals =
                decode(line).ok_or_else(|| Refuse::Error(format!("a child wrote `{line}`")))?;
            results.push(PointRun::Values(vals));
        }
        if let Some(e) = end {
            results.push(e);
        } else if results.len() == start {
            return Err(Refuse::Error("a child ran no point".into()));
        }
    }
    results.truncate(req.points.len());
    Ok(Run::Results(results))
}
