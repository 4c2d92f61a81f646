//! The serve loop: the hello, then one answer per request line, until the
//! input ends. Every request is answered, whatever the adapter or its peer
//! does short of killing the process: a request that cannot be read gets
//! `error` (with its id when one could be read), and a panic in the peer is
//! caught and answered as `error` with the panic's message and location, so
//! tileproof records a `peer-crash` finding and the campaign goes on.

use crate::answer::{Instances, PeerBounds, Refuse, Reply, RuleInfo, Run, Script, Simplified};
use crate::case::{BadRequest, Case};
use crate::hello::Hello;
use crate::request::{InstancesRequest, ReproducerRequest, Request, RunRequest};
use serde_json::Value;
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

    /// The peer's bounds of every node of the source, and optionally its
    /// own op of each (section 7).
    fn bounds(&mut self, _case: &Case) -> Result<PeerBounds, Refuse> {
        Err(Refuse::Unsupported("this adapter gives no bounds".into()))
    }

    /// The expressions as they are after the pipeline's stage `stage` (one
    /// of the hello's `stages`; the last is `simplify` itself).
    fn stage(&mut self, stage: &str, _case: &Case) -> Result<Simplified, Refuse> {
        Err(Refuse::Unsupported(format!(
            "this adapter has no pipeline stage `{stage}`"
        )))
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
    let hello: Hello = adapter.hello();
    writeln!(out, "{}", line(&hello))?;
    out.flush()?;
    for l in input.lines() {
        let l = l?;
        if l.trim().is_empty() {
            continue;
        }
        let answer = answer_line(&mut adapter, &l);
        writeln!(out, "{}", line(&answer))?;
        out.flush()?;
    }
    Ok(())
}

/// A protocol line: these types always serialize.
fn line(v: &impl serde::Serialize) -> String {
    serde_json::to_string(v).expect("the protocol's types serialize")
}

/// The answer to one request line.
pub fn answer_line<A: Adapter>(adapter: &mut A, line: &str) -> Reply {
    let req: Request = match serde_json::from_str(line) {
        Ok(r) => r,
        Err(e) => return unreadable(line, e),
    };
    LAST_PANIC.with(|p| p.borrow_mut().take());
    let result = panic::catch_unwind(AssertUnwindSafe(|| dispatch(adapter, &req)));
    let id = Some(req.id);
    match result {
        Ok(Ok(mut reply)) => {
            reply.id = id;
            reply
        }
        Ok(Err(r)) => refusal(id, r),
        Err(payload) => {
            // A panic through the hook has its message and location there;
            // one resumed without the hook (`resume_unwind`) only its payload.
            let msg = LAST_PANIC
                .with(|p| p.borrow_mut().take())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a panic".into());
            refusal(id, Refuse::Error(format!("panic: {}", clip(&msg))))
        }
    }
}

/// The `error` answer to a line that is not a request, with its id when
/// one can be read (so that tileproof pairs it with its request).
fn unreadable(line: &str, e: serde_json::Error) -> Reply {
    let obj: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => {
            return refusal(
                None,
                Refuse::Error(BadRequest::NotJson(e.to_string()).to_string()),
            )
        }
    };
    match obj.get("id").and_then(Value::as_u64) {
        Some(id) => refusal(Some(id), bad(BadRequest::Shape(e.to_string()))),
        None => refusal(None, Refuse::Error(BadRequest::NoId.to_string())),
    }
}

fn refusal(id: Option<u64>, r: Refuse) -> Reply {
    Reply::refusal(
        id,
        match r {
            Refuse::Unsupported(why) => Refuse::Unsupported(clip(&why)),
            Refuse::Error(e) => Refuse::Error(clip(&e)),
            Refuse::Declined(why) => Refuse::Declined(clip(&why)),
        },
    )
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

fn dispatch<A: Adapter>(adapter: &mut A, req: &Request) -> Result<Reply, Refuse> {
    if req.rules.is_some() {
        return Ok(Reply {
            rules: Some(adapter.rules()?),
            ..Reply::default()
        });
    }
    if let Some(spec) = &req.instances {
        return Ok(adapter.instances(spec)?.into());
    }
    let case = req.case().map_err(bad)?;
    if let Some(spec) = &req.run {
        check_points(spec.points.iter(), case.vars.len())?;
        return Ok(adapter.run(&case, spec)?.into());
    }
    if let Some(spec) = &req.reproducer {
        check_points([&spec.point].into_iter(), case.vars.len())?;
        return Ok(adapter.reproducer(&case, spec)?.into());
    }
    if req.bounds.is_some() {
        return Ok(adapter.bounds(&case)?.into());
    }
    if let Some(spec) = &req.apply {
        if case.trees.len() != 1 {
            return Err(Refuse::Error(
                "bad request: an `apply` request has exactly one tree".into(),
            ));
        }
        return Ok(adapter.apply(&spec.rule, &case)?.into());
    }
    if let Some(stage) = &req.stage {
        return Ok(adapter.stage(stage, &case)?.into());
    }
    let mut reply: Reply = adapter.simplify(&case)?.into();
    if req.with_bounds.is_some() {
        // Beside the answer only when the peer gives them: a failure (or a
        // panic) on them is the `bounds` request's to report, alone.
        let bounds = panic::catch_unwind(AssertUnwindSafe(|| adapter.bounds(&case)));
        LAST_PANIC.with(|p| p.borrow_mut().take());
        if let Ok(Ok(b)) = bounds {
            let b: Reply = b.into();
            reply.bounds = b.bounds;
            reply.ops = b.ops;
        }
    }
    Ok(reply)
}

/// Every point has one value per variable.
fn check_points<'a>(
    mut points: impl Iterator<Item = &'a Vec<i64>>,
    vars: usize,
) -> Result<(), Refuse> {
    if points.all(|p| p.len() == vars) {
        Ok(())
    } else {
        Err(Refuse::Error(format!(
            "bad request: points must be lists of {vars} integers"
        )))
    }
}
