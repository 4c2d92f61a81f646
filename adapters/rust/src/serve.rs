//! The serve loop: the hello, then one answer per request line, until the
//! input ends. Every request is answered, whatever the adapter or its peer
//! does short of killing the process: a request that cannot be read gets
//! `error` (with its id when one could be read), and a panic in the peer is
//! caught and answered as `error` with the panic's message and location, so
//! tileproof records a `peer-crash` finding and the campaign goes on.

use crate::answer::{
    bounds_json, run_json, simplified_json, Bounds, Instances, InstancesRequest, Refuse,
    ReproducerRequest, RuleInfo, Run, RunRequest, RunValue, Script, Simplified,
};
use crate::case::{BadRequest, Case};
use crate::hello::Hello;
use serde_json::{json, Value};
use std::cell::RefCell;
use std::io::{self, BufRead, Write};
use std::panic::{self, AssertUnwindSafe};

/// A peer's simplifier behind the protocol. Only `hello` and `simplify` are
/// required; each optional capability answers `unsupported` until the
/// adapter implements it (and says so in its hello).
pub trait Adapter {
    fn hello(&self) -> Hello;

    /// One simplified expression per input expression, in order, each of
    /// its input's dtype.
    fn simplify(&mut self, case: &Case) -> Result<Simplified, Refuse>;

    /// Compile `case`'s expressions with `req.backend` and run them at
    /// each point (section 5).
    fn run(&mut self, _case: &Case, _req: &RunRequest) -> Result<Run, Refuse> {
        Err(Refuse::Unsupported("this adapter has no backend".into()))
    }

    /// A standalone reproducer of a finding on `case` (section 5).
    fn reproducer(&mut self, _case: &Case, _req: &ReproducerRequest) -> Result<Script, Refuse> {
        Err(Refuse::Unsupported(
            "this adapter writes no reproducers".into(),
        ))
    }

    /// The peer's bounds of every node of the source (section 7).
    fn bounds(&mut self, _case: &Case) -> Result<Bounds, Refuse> {
        Err(Refuse::Unsupported("this adapter gives no bounds".into()))
    }

    /// The peer's rules, in its order (section 6).
    fn rules(&mut self) -> Result<Vec<RuleInfo>, Refuse> {
        Err(Refuse::Unsupported("this adapter lists no rules".into()))
    }

    fn instances(&mut self, _req: &InstancesRequest) -> Result<Instances, Refuse> {
        Err(Refuse::Unsupported(
            "this adapter builds no instances".into(),
        ))
    }

    /// One rule alone on the case's one expression.
    fn apply(&mut self, _rule: &str, _case: &Case) -> Result<Simplified, Refuse> {
        Err(Refuse::Unsupported(
            "this adapter does not apply single rules".into(),
        ))
    }
}

thread_local! {
    /// The message of the last panic on this thread, set by the hook.
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs a panic hook that keeps the message for the answer and prints
/// it on stderr as one line (tileproof keeps a tail of stderr). No
/// backtrace: with `RUST_BACKTRACE` set, symbolizing one per panic cost a
/// campaign more than the peer's own work.
fn capture_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(install_hook);
}

fn install_hook() {
    panic::set_hook(Box::new(move |info| {
        let msg = if let Some(s) = info.payload().downcast_ref::<&str>() {
            (*s).to_string()
        } else if let Some(s) = info.payload().downcast_ref::<String>() {
            s.clone()
        } else {
            "a panic without a message".to_string()
        };
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let text = format!("{msg}{at}");
        eprintln!("panic: {text}");
        LAST_PANIC.with(|p| *p.borrow_mut() = Some(text));
    }));
}

/// Serves `adapter` on the process's stdin and stdout: claims stdout for
/// the protocol first (fd 1 then points at stderr, so nothing the peer
/// prints can corrupt the stream), and runs on a thread with a large stack
/// (a peer that recurses over a deep expression should not overflow it).
pub fn serve<A: Adapter + Send + 'static>(adapter: A) -> io::Result<()> {
    let out = claim_stdout()?;
    let worker = std::thread::Builder::new()
        .name("tileproof-adapter".into())
        .stack_size(1 << 30)
        .spawn(move || {
            let stdin = io::stdin();
            serve_on(adapter, stdin.lock(), out)
        })?;
    worker
        .join()
        .unwrap_or_else(|_| Err(io::Error::other("the serve loop panicked")))
}

/// A private copy of fd 1 for the protocol; fd 1 itself then points at
/// stderr.
fn claim_stdout() -> io::Result<std::fs::File> {
    use std::os::fd::FromRawFd;
    io::stdout().flush()?;
    // SAFETY: dup/dup2 on the process's own standard descriptors; the new
    // descriptor is owned by the returned File alone.
    unsafe {
        let fd = libc::dup(1);
        if fd < 0 || libc::dup2(2, 1) < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(std::fs::File::from_raw_fd(fd))
    }
}

/// The loop itself, over any input and output (tests use byte buffers).
pub fn serve_on<A: Adapter>(
    mut adapter: A,
    input: impl BufRead,
    mut out: impl Write,
) -> io::Result<()> {
    capture_panics();
    let hello = adapter.hello();
    writeln!(out, "{}", hello.to_json())?;
    out.flush()?;
    for line in input.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let answer = answer_line(&mut adapter, &line);
        writeln!(out, "{answer}")?;
        out.flush()?;
    }
    Ok(())
}

/// The answer to one request line.
pub fn answer_line<A: Adapter>(adapter: &mut A, line: &str) -> Value {
    let obj: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => {
            return refusal(
                Value::Null,
                Refuse::Error(BadRequest::NotJson(e.to_string()).to_string()),
            )
        }
    };
    let Some(id) = obj.get("id").filter(|i| i.is_u64() || i.is_i64()).cloned() else {
        return refusal(Value::Null, Refuse::Error(BadRequest::NoId.to_string()));
    };
    LAST_PANIC.with(|p| p.borrow_mut().take());
    let result = panic::catch_unwind(AssertUnwindSafe(|| dispatch(adapter, &obj)));
    let body = match result {
        Ok(Ok(v)) => v,
        Ok(Err(r)) => return refusal(id, r),
        Err(payload) => {
            // A panic through the hook has its message and location there;
            // one resumed without the hook (`resume_unwind`) only its payload.
            let msg = LAST_PANIC
                .with(|p| p.borrow_mut().take())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a panic".into());
            return refusal(id, Refuse::Error(format!("panic: {}", clip(&msg))));
        }
    };
    let mut v = body;
    v["id"] = id;
    v
}

fn refusal(id: Value, r: Refuse) -> Value {
    match r {
        Refuse::Unsupported(why) => json!({"id": id, "unsupported": clip(&why)}),
        Refuse::Error(e) => json!({"id": id, "error": clip(&e)}),
        Refuse::Declined(why) => json!({"id": id, "declined": clip(&why)}),
    }
}

/// A message kept short enough for an answer line.
fn clip(s: &str) -> String {
    const MAX: usize = 4000;
    if s.len() <= MAX {
        return s.to_string();
    }
    let mut end = MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

fn bad(e: BadRequest) -> Refuse {
    Refuse::Error(format!("bad request: {e}"))
}

fn dispatch<A: Adapter>(adapter: &mut A, obj: &Value) -> Result<Value, Refuse> {
    if obj.get("rules").is_some() {
        let rules = adapter.rules()?;
        return Ok(json!({"rules": rules.iter().map(RuleInfo::to_json).collect::<Vec<_>>()}));
    }
    if let Some(spec) = obj.get("instances") {
        let req = instances_request(spec).map_err(bad)?;
        let inst = adapter.instances(&req)?;
        let cases: Vec<Value> = inst
            .cases
            .iter()
            .map(|c| {
                let v = c.to_json();
                json!({"vars": v["vars"], "trees": v["trees"]})
            })
            .collect();
        let failures: serde_json::Map<String, Value> = inst
            .failures
            .iter()
            .map(|(k, n)| (k.clone(), json!(n)))
            .collect();
        return Ok(json!({"instances": cases, "failures": failures}));
    }
    let case = Case::from_json(obj).map_err(bad)?;
    if let Some(spec) = obj.get("run") {
        let req = RunRequest {
            backend: spec
                .get("backend")
                .and_then(Value::as_str)
                .ok_or(bad(BadRequest::NotAList("run.backend")))?
                .to_string(),
            points: points(spec.get("points"), case.vars.len())?,
        };
        return Ok(run_json(&adapter.run(&case, &req)?));
    }
    if let Some(spec) = obj.get("reproducer") {
        let req = ReproducerRequest {
            backend: spec
                .get("backend")
                .and_then(Value::as_str)
                .map(str::to_string),
            point: points(
                spec.get("point").map(|p| json!([p])).as_ref(),
                case.vars.len(),
            )?
            .pop()
            .unwrap_or_default(),
            expected: spec
                .get("expected")
                .and_then(Value::as_array)
                .map(|v| v.iter().filter_map(RunValue::from_json).collect())
                .unwrap_or_default(),
            class: spec
                .get("class")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            kind: spec
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        };
        let s = adapter.reproducer(&case, &req)?;
        return Ok(json!({"script": s.text, "extension": s.extension}));
    }
    if obj.get("bounds").is_some() {
        return Ok(json!({"bounds": bounds_json(&adapter.bounds(&case)?)}));
    }
    if let Some(spec) = obj.get("apply") {
        let rule = spec
            .get("rule")
            .and_then(Value::as_str)
            .ok_or(bad(BadRequest::NotAList("apply.rule")))?;
        if case.trees.len() != 1 {
            return Err(Refuse::Error(
                "bad request: an `apply` request has exactly one tree".into(),
            ));
        }
        return Ok(simplified_json(&adapter.apply(rule, &case)?));
    }
    let s = adapter.simplify(&case)?;
    Ok(simplified_json(&s))
}

/// A list of points, each with one value per variable.
fn points(v: Option<&Value>, vars: usize) -> Result<Vec<Vec<i64>>, Refuse> {
    let wrong = || {
        Refuse::Error(format!(
            "bad request: points must be lists of {vars} integers"
        ))
    };
    let list = v.and_then(Value::as_array).ok_or_else(wrong)?;
    list.iter()
        .map(|p| {
            let p = p.as_array().filter(|p| p.len() == vars).ok_or_else(wrong)?;
            p.iter()
                .map(|x| {
                    x.as_i64()
                        .or_else(|| x.as_bool().map(i64::from))
                        .ok_or_else(wrong)
                })
                .collect()
        })
        .collect()
}

fn instances_request(spec: &Value) -> Result<InstancesRequest, BadRequest> {
    let ints = |k: &'static str| -> Result<Vec<i64>, BadRequest> {
        spec.get(k)
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_i64).collect())
            .ok_or(BadRequest::NotAList(k))
    };
    let ranges = spec
        .get("ranges")
        .and_then(Value::as_array)
        .ok_or(BadRequest::NotAList("ranges"))?
        .iter()
        .filter_map(|r| Some((r.get(0)?.as_i64()?, r.get(1)?.as_i64()?)))
        .collect();
    Ok(InstancesRequest {
        rule: spec
            .get("rule")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        constants: ints("constants")?,
        ranges,
        limit: spec.get("limit").and_then(Value::as_u64).unwrap_or(32) as usize,
        seed: spec.get("seed").and_then(Value::as_u64).unwrap_or(0),
    })
}
