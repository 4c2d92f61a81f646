//! A worker process whose deadline holds: killed at it, whatever it does.
//!
//! Z3 4.8.12 does not leave some phases when interrupted (a shift by a
//! variable ran seconds past a one-second timeout), and a thread cannot be
//! stopped. So where a deadline must hold, the solving runs in a worker
//! process: tileproof itself, started as its hidden `solver-worker`
//! command, reading one request line and writing one answer line at a
//! time ([`serve`]; what the lines say is [`crate::remote`]'s). Past the
//! caller's wait the worker is killed and reaped with its process group
//! (a cvc5 it started goes with it), and the caller's answer is unknown
//! ("stopped at the deadline"); a worker whose parent is gone exits on its
//! own. Idle workers are kept and reused: starting one costs a process.
//!
//! The command that wants this installs its executable ([`install`]);
//! without it (the library's own tests) the caller solves in its own
//! process.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// The hidden command a worker runs as.
pub const COMMAND: &str = "solver-worker";

/// How long past its own time a request is waited for: the worker's
/// start, reading the request, an interrupted solver unwinding, a small
/// domain walked by the interpreter after an unknown.
pub const GRACE: Duration = Duration::from_millis(900);

static EXE: OnceLock<PathBuf> = OnceLock::new();
/// Workers waiting for a request.
static IDLE: Mutex<Vec<Worker>> = Mutex::new(Vec::new());

/// Requests run in workers started from `exe` (tileproof's own executable).
pub fn install(exe: PathBuf) {
    let _ = EXE.set(exe);
}

/// Whether requests run in workers (else the caller solves in-process).
pub fn installed() -> bool {
    EXE.get().is_some()
}

/// Why a request got no answer.
#[derive(Debug, thiserror::Error)]
pub enum NoAnswer {
    #[error("no worker is installed")]
    NotInstalled,
    #[error("the solver's worker process could not start: {0}")]
    NotStarted(std::io::Error),
    #[error("the solver's worker process is gone")]
    Gone,
    #[error(
        "stopped at the deadline: the solver had not returned {} ms after its {} ms, and its process was killed",
        GRACE.as_millis(),
        .0.as_millis()
    )]
    Overdue(Duration),
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
            // Its own group, so that killing it kills what it started.
            .process_group(0)
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
    /// A worker dropped is killed and reaped with its process group: none
    /// of it is left behind.
    fn drop(&mut self) {
        if let Ok(pid) = i32::try_from(self.child.id()) {
            // SAFETY: kill(2) on the group this worker leads; no memory is
            // touched.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Sends `line` to a worker and waits at most `own + GRACE` for its
/// answer line; past that the worker is killed ([`NoAnswer::Overdue`]).
pub fn ask(line: &str, own: Duration) -> Result<String, NoAnswer> {
    let exe = EXE.get().ok_or(NoAnswer::NotInstalled)?;
    let idle = IDLE.lock().ok().and_then(|mut v| v.pop());
    let mut worker = match idle {
        Some(w) => w,
        None => Worker::start(exe).map_err(NoAnswer::NotStarted)?,
    };
    if writeln!(worker.stdin, "{line}")
        .and_then(|()| worker.stdin.flush())
        .is_err()
    {
        return Err(NoAnswer::Gone);
    }
    let answer = match worker.lines.recv_timeout(own.saturating_add(GRACE)) {
        Ok(a) => a,
        // Killed and reaped as it drops.
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => return Err(NoAnswer::Overdue(own)),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return Err(NoAnswer::Gone),
    };
    if let Ok(mut idle) = IDLE.lock() {
        let keep = std::thread::available_parallelism().map_or(2, |n| n.get());
        if idle.len() < keep {
            idle.push(worker);
        }
    }
    Ok(answer)
}

/// Kills and reaps the idle workers, at the end of a run: none outlives
/// it by the moment it takes to see its parent gone, and the time they
/// spent is counted as the run's (the system counts a child's time when
/// it is reaped: `time tileproof prove` then shows the whole run's).
pub fn shutdown() {
    let idle = IDLE.lock().map(|mut v| std::mem::take(&mut *v));
    // Each is killed and reaped as it drops.
    drop(idle);
}

/// The worker's loop: one request per line on standard input, `answer`'s
/// line for it on standard output, until the input ends or the parent is
/// gone.
pub fn serve(answer: impl Fn(&str) -> String) -> std::io::Result<()> {
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
        writeln!(out, "{}", answer(&line?))?;
        out.flush()?;
    }
    Ok(())
}
