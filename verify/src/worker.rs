//! A check whose deadline holds: run in a worker process, killed at it.
//!
//! Z3 4.8.12 does not leave some phases when interrupted (a shift by a
//! variable ran seconds past a one-second timeout), and a thread cannot be
//! stopped. So where a deadline must hold, a check runs in a worker
//! process: tileproof itself serving checks over a pipe (its hidden
//! `solver-worker` command, one JSON line each way, [`serve`]). The worker
//! reads the program from its text and runs the same [`check`] on it (the
//! same query, the same solver calls); a counterexample comes back as its
//! point, which the caller confirms with its own interpreter. Past the
//! check's deadline and a grace, the worker is killed and reaped, and the
//! check is unknown ("stopped at the deadline"); a worker whose parent is
//! gone exits on its own.
//!
//! The command that wants this installs its executable ([`install`]);
//! without it (the library's own tests) a check runs in this process, as
//! before.

use crate::check::{check, counterexample_at, CheckResult, Method};
use crate::encode::Mode;
use engine::dtype::Width;
use engine::ir::{Graph, NodeId};
use engine::semantics::{Failure, Model, Partial};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The hidden command a worker runs as.
pub const COMMAND: &str = "solver-worker";

/// How long past its timeout a check is waited for: the worker's start,
/// reading the program, an interrupted solver unwinding, a small domain
/// walked by the interpreter after an unknown.
pub const GRACE: Duration = Duration::from_millis(900);

static EXE: OnceLock<PathBuf> = OnceLock::new();
/// Workers waiting for a check, reused: starting one costs a process.
static IDLE: Mutex<Vec<Worker>> = Mutex::new(Vec::new());

/// Checks run in workers started from `exe` (tileproof's own executable).
pub fn install(exe: PathBuf) {
    let _ = EXE.set(exe);
}

/// One check, as the worker receives it.
#[derive(Serialize, Deserialize)]
struct Request {
    /// Every variable of the graph in its order, the sources as `expr`
    /// lines and the targets as `expect` lines.
    text: String,
    width: u32,
    /// Index into [`Partial::ALL`].
    partial: usize,
    unbounded: bool,
    timeout_ms: u64,
}

/// How a check was decided, on the wire.
#[derive(Clone, Copy, Serialize, Deserialize)]
enum WireMethod {
    Interpreter,
    Jit,
    Bitvector,
    BoundedInteger,
}

impl From<Method> for WireMethod {
    fn from(m: Method) -> WireMethod {
        match m {
            Method::Interpreter => WireMethod::Interpreter,
            Method::Jit => WireMethod::Jit,
            Method::Solver(Mode::Bv) => WireMethod::Bitvector,
            Method::Solver(Mode::Int) => WireMethod::BoundedInteger,
        }
    }
}

impl From<WireMethod> for Method {
    fn from(m: WireMethod) -> Method {
        match m {
            WireMethod::Interpreter => Method::Interpreter,
            WireMethod::Jit => Method::Jit,
            WireMethod::Bitvector => Method::Solver(Mode::Bv),
            WireMethod::BoundedInteger => Method::Solver(Mode::Int),
        }
    }
}

/// The worker's answer.
#[derive(Serialize, Deserialize)]
enum Reply {
    Equivalent {
        method: WireMethod,
    },
    Counterexample {
        /// Index into [`Failure::ALL`].
        failure: usize,
        method: WireMethod,
        /// The point, indexed like the graph's variables (decimal: an
        /// `i128` is no JSON number).
        env: Vec<String>,
    },
    Vacuous,
    Unknown {
        reason: String,
    },
}

/// A running worker: its pipe in, and its answer lines.
struct Worker {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Worker {
    fn start(exe: &PathBuf) -> std::io::Result<Worker> {
        let mut child = Command::new(exe)
            .arg(COMMAND)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(Worker {
            child,
            stdin,
            lines,
        })
    }
}

impl Drop for Worker {
    /// A worker dropped is killed and reaped: none is left behind.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `tgt` against `src` under `model` ([`check`]), within `timeout` plus
/// [`GRACE`] of wall time whatever the solver does: in a worker process
/// where one is installed.
pub fn check_within_deadline(
    g: &Graph,
    src: &[NodeId],
    tgt: &[NodeId],
    model: Model,
    timeout: Duration,
) -> CheckResult {
    let Some(exe) = EXE.get() else {
        let deadline = Instant::now() + timeout;
        return crate::solver::with_deadline(deadline, || check(g, src, tgt, model, timeout));
    };
    let request = Request {
        text: program_text(g, src, tgt),
        width: model.width.0,
        partial: Partial::ALL
            .iter()
            .position(|&p| p == model.partial)
            .expect("every partial semantics is listed"),
        unbounded: model.unbounded,
        timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
    };
    let line = serde_json::to_string(&request).expect("a request serializes");
    let idle = IDLE.lock().ok().and_then(|mut v| v.pop());
    let mut worker = match idle.map_or_else(|| Worker::start(exe), Ok) {
        Ok(w) => w,
        Err(e) => {
            return CheckResult::Unknown {
                reason: format!("the solver's worker process could not start: {e}"),
            }
        }
    };
    if writeln!(worker.stdin, "{line}")
        .and_then(|()| worker.stdin.flush())
        .is_err()
    {
        return CheckResult::Unknown {
            reason: "the solver's worker process is gone".into(),
        };
    }
    let Ok(answer) = worker.lines.recv_timeout(timeout + GRACE) else {
        // Killed and reaped as it drops.
        drop(worker);
        return CheckResult::Unknown {
            reason: format!(
                "stopped at the deadline: the solver had not returned {} ms after its {} ms, and its process was killed",
                GRACE.as_millis(),
                timeout.as_millis()
            ),
        };
    };
    let reply: Reply = match serde_json::from_str(&answer) {
        Ok(r) => r,
        Err(e) => {
            return CheckResult::Unknown {
                reason: format!("the solver's worker answered garbage: {e}"),
            }
        }
    };
    if let Ok(mut idle) = IDLE.lock() {
        let keep = std::thread::available_parallelism().map_or(2, |n| n.get());
        if idle.len() < keep {
            idle.push(worker);
        }
    }
    match reply {
        Reply::Equivalent { method } => CheckResult::Equivalent {
            method: method.into(),
        },
        Reply::Vacuous => CheckResult::Vacuous,
        Reply::Unknown { reason } => CheckResult::Unknown { reason },
        Reply::Counterexample {
            failure,
            method,
            env,
        } => {
            let env: Option<Vec<i128>> = env.iter().map(|v| v.parse().ok()).collect();
            match (env, Failure::ALL.get(failure)) {
                (Some(env), Some(&f)) if env.len() == g.vars().len() => {
                    counterexample_at(g, src, tgt, &env, f, method.into(), model)
                }
                _ => CheckResult::Unknown {
                    reason: "the solver's worker answered a point that is not one".into(),
                },
            }
        }
    }
}

/// The program a worker reads: every variable of `g` in order (the point
/// it answers is indexed like them), `src` as `expr` lines, `tgt` as
/// `expect` lines.
fn program_text(g: &Graph, src: &[NodeId], tgt: &[NodeId]) -> String {
    let mut out = String::new();
    for d in g.vars() {
        out.push_str(&engine::print::var_decl(d));
        out.push('\n');
    }
    for &r in src {
        out.push_str(&format!("expr {}\n", engine::print::expr(g, r)));
    }
    for &r in tgt {
        out.push_str(&format!("expect {}\n", engine::print::expr(g, r)));
    }
    out
}

/// The worker's loop: one JSON request per line on standard input, one
/// answer per line on standard output, until the input ends or the parent
/// is gone.
pub fn serve() -> std::io::Result<()> {
    let parent = std::os::unix::process::parent_id();
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_millis(200));
        if std::os::unix::process::parent_id() != parent {
            // Re-parented: nobody waits for this answer.
            std::process::exit(0);
        }
    });
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let reply = match serde_json::from_str::<Request>(&line?) {
            Ok(req) => answer(&req),
            Err(e) => Reply::Unknown {
                reason: format!("the worker could not read the request: {e}"),
            },
        };
        writeln!(
            out,
            "{}",
            serde_json::to_string(&reply).expect("a reply serializes")
        )?;
        out.flush()?;
    }
    Ok(())
}

/// One request's check, in this process, bounded by its timeout.
fn answer(req: &Request) -> Reply {
    let p = match engine::parse::parse_program(&req.text) {
        Ok(p) => p,
        Err(e) => {
            return Reply::Unknown {
                reason: format!("the worker could not read the program: {e}"),
            }
        }
    };
    let Some(&partial) = Partial::ALL.get(req.partial) else {
        return Reply::Unknown {
            reason: "the worker was sent no partial semantics it knows".into(),
        };
    };
    let model = Model {
        width: Width(req.width),
        partial,
        unbounded: req.unbounded,
    };
    let timeout = Duration::from_millis(req.timeout_ms);
    let deadline = Instant::now() + timeout;
    let r = crate::solver::with_deadline(deadline, || {
        check(&p.graph, &p.outputs, &p.expects, model, timeout)
    });
    match r {
        CheckResult::Equivalent { method } => Reply::Equivalent {
            method: method.into(),
        },
        CheckResult::Vacuous => Reply::Vacuous,
        CheckResult::Unknown { reason } => Reply::Unknown { reason },
        CheckResult::Counterexample {
            failure,
            method,
            point,
            ..
        } => Reply::Counterexample {
            failure: Failure::ALL
                .iter()
                .position(|&f| f == failure)
                .expect("every failure is listed"),
            method: method.into(),
            env: point.iter().map(|(_, v)| v.to_string()).collect(),
        },
    }
}
