//! Peers under test: a simplifier behind the line protocol of
//! `docs/protocol.md`, run as long-lived child processes.
//!
//! [`Peer::start`] runs `sh -c CMD`, reads its hello (the name, version and
//! semantics profile), and keeps the process for the next case: one start
//! serves thousands of cases. Cases run in parallel, so a peer keeps a pool
//! of processes (one per worker at most). A process that hangs past the
//! per-case timeout is killed, one that exits or prints something that is
//! not a valid answer is dropped; the case that did it is a finding of its
//! own kind ([`Kind::Hang`], [`Kind::Crash`], [`Kind::Garbage`], and
//! [`Kind::PeerError`] for an `error` answer), and the next case starts a
//! fresh process: a bad peer never hangs a campaign.
//!
//! A request carries the case both as text and as JSON trees; an answer may
//! use either. Answers are built into the case's graph with the engine's
//! typing, so an ill-typed answer is garbage, not a crash of tileproof.
//!
//! Whatever an adapter prints costs bounded memory and time (the limits
//! are listed in docs/protocol.md): its lines are read as bytes up to
//! `--peer-max-line` ([`crate::lines`]), an answer is built within a node
//! budget ([`node_budget`]), its stderr is kept as a bounded tail, and a
//! wait for an answer watches the process, so one that exits or closes
//! its stdout is reported rather than waited for.

use crate::backend::{self, Attachment, PointRun, ReproducerSpec, Run, Script};
use crate::bounds::{Bound, Bounds};
use crate::kind::Kind;
use crate::lines::{self, BadLine, Line, Tail};
use crate::subject::{Answer, Integers, Profile, Refusal, Subject};
use engine::dtype::{DType, Width};
use engine::ir::{Graph, NodeId, Op};
use engine::print;
use engine::semantics::Partial;
use serde::Deserialize;
use serde_json::{json, Value};
use std::io::{self, BufRead, BufReader, Write};
use std::process::{ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// The protocol version this side speaks.
pub const PROTOCOL: u64 = 1;

/// How long a process may take to write its hello (a peer library can take
/// seconds to import).
pub const START_TIMEOUT: Duration = Duration::from_secs(120);

/// How long a `run` or `reproducer` request may take: it compiles with
/// the peer's compiler, in child processes, and re-runs each point alone
/// after a trap.
pub const RUN_TIMEOUT: Duration = Duration::from_secs(600);

/// Lines of a process's standard error kept for reports, and the bytes
/// kept of each: the rest is read and dropped, however much it writes.
const STDERR_LINES: usize = 20;
const STDERR_LINE_BYTES: usize = 512;

/// Lines read ahead of the requests that want them: a reader that gets
/// this far ahead waits, and so does the adapter writing to it, so an
/// adapter that prints lines nobody asked for cannot fill memory.
const LINES_QUEUED: usize = 4;

/// How often a wait for an answer checks that the adapter is still
/// running, and how long a line may trail its exit or the end of its
/// output: an adapter that exits (or closes its stdout) is reported
/// within about this long, even when a process it started still holds
/// its stdout.
const POLL: Duration = Duration::from_millis(100);
const EXIT_GRACE: Duration = Duration::from_millis(500);

/// The nodes an answer may have (its expressions as trees, all of them;
/// as text, its operators and operands): this many per node of the
/// case's source, within `[NODE_BUDGET_MIN, NODE_BUDGET_MAX]`. A bigger
/// answer is garbage, not a graph built without bound.
pub const NODE_BUDGET_PER_SOURCE_NODE: usize = 64;
pub const NODE_BUDGET_MIN: usize = 10_000;
pub const NODE_BUDGET_MAX: usize = 1_000_000;

/// The node budget of an answer to a source of `source_nodes` nodes.
pub fn node_budget(source_nodes: usize) -> usize {
    source_nodes
        .saturating_mul(NODE_BUDGET_PER_SOURCE_NODE)
        .clamp(NODE_BUDGET_MIN, NODE_BUDGET_MAX)
}

/// Requests longer than this are not sent (the case is declined): a
/// generated case expanded from its DAG into a tree can grow large.
const MAX_REQUEST_BYTES: usize = 1 << 20;

/// Why a peer could not be started.
#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    #[error("cannot start `{cmd}`: {source}")]
    Spawn { cmd: String, source: io::Error },
    #[error("`{cmd}` wrote no hello within {secs} s{stderr}")]
    NoHello {
        cmd: String,
        secs: u64,
        stderr: String,
    },
    #[error("`{cmd}` exited before its hello{stderr}")]
    Exited { cmd: String, stderr: String },
    #[error("`{cmd}` wrote a bad hello ({reason}){}", if line.is_empty() { String::new() } else { format!(": {line}") })]
    BadHello {
        cmd: String,
        reason: Malformed,
        line: String,
    },
}

/// Why a protocol line (a hello, an answer, a request) is not valid.
#[derive(Debug, thiserror::Error)]
pub enum Malformed {
    #[error("not a hello: {0}")]
    NotAHello(serde_json::Error),
    #[error("protocol {0}, but this tileproof speaks {PROTOCOL}")]
    Protocol(u64),
    #[error("integers `{0}` is not one this tileproof checks (unbounded, int32, int64)")]
    Integers(String),
    #[error("partial_ops `{0}` is not one this tileproof knows (undefined, unspecified)")]
    PartialOps(String),
    #[error("not an answer ({0})")]
    NotAnAnswer(serde_json::Error),
    #[error("the answer is to id {got:?}, not {want}")]
    WrongId { got: Option<Value>, want: u64 },
    #[error("{got} {what} for {want} expressions")]
    Count {
        got: usize,
        what: &'static str,
        want: usize,
    },
    #[error("no trees, exprs, unsupported or error")]
    Empty,
    #[error("`{text}`: {err}")]
    Expr {
        text: String,
        err: engine::parse::ParseError,
    },
    #[error("an answer of dtype {got} for an expression of dtype {want}")]
    Dtype { got: DType, want: DType },
    #[error("a tree nested more than {MAX_TREE_DEPTH} deep")]
    TooDeep,
    #[error("an answer of more than {0} nodes (the node budget for this case)")]
    TooBig(usize),
    #[error(transparent)]
    Line(#[from] BadLine),
    #[error("`{0}` is not a tree")]
    NotATree(Value),
    #[error("`{0}` does not start with a name")]
    NoHead(Value),
    #[error("`{head}` with {args} arguments")]
    Arity { head: String, args: usize },
    #[error("`{0}`: not a 64-bit integer")]
    NotAnInteger(Value),
    #[error("`{0}`: not a concrete dtype (index, i32, i64)")]
    NotADtype(Value),
    #[error("`{0}`: not a bool")]
    NotABool(Value),
    #[error("`{0}` is not a reproducer's extension (1 to 8 letters or digits, not txt)")]
    Extension(String),
    #[error("{0}")]
    Bounds(String),
    #[error("`{0}` is not a run result (values, trap or timeout)")]
    NotAResult(Value),
    #[error("`{0}`: not a name")]
    NotAName(Value),
    #[error("`{0}` is not a variable of the case")]
    UnknownVar(String),
    #[error("`{0}` is not an op")]
    UnknownOp(String),
    #[error("variable `{name}` has dtype `{dtype}`")]
    VarDtype { name: String, dtype: String },
    #[error(transparent)]
    Type(#[from] engine::ir::TypeError),
    #[error("{0}")]
    Refused(#[from] Refusal),
}

/// How deep a protocol tree may nest: an adversarial answer must not
/// overflow the stack.
const MAX_TREE_DEPTH: usize = 10_000;

#[derive(Deserialize)]
struct Hello {
    tileproof: u64,
    name: String,
    version: String,
    profile: HelloProfile,
    #[serde(default)]
    backends: Vec<String>,
    #[serde(default)]
    reproducer: bool,
    #[serde(default)]
    rules: bool,
    #[serde(default)]
    bounds: bool,
}

#[derive(Deserialize)]
struct HelloProfile {
    ops: Vec<String>,
    invalid: bool,
    integers: String,
    #[serde(default)]
    bool_vars: bool,
    #[serde(default)]
    partial_ops: Option<String>,
    #[serde(default)]
    input_language: InputLanguage,
}

/// What inputs the peer's own pipeline builds (docs/protocol.md).
#[derive(Deserialize)]
struct InputLanguage {
    #[serde(default = "yes")]
    invalid_compared: bool,
}

impl Default for InputLanguage {
    fn default() -> Self {
        InputLanguage {
            invalid_compared: true,
        }
    }
}

fn yes() -> bool {
    true
}

#[derive(Deserialize)]
struct Response {
    id: Option<Value>,
    exprs: Option<Vec<String>>,
    trees: Option<Vec<Value>>,
    unsupported: Option<String>,
    error: Option<String>,
    declined: Option<String>,
    /// The peer's rules that fired, by name (optional).
    #[serde(default)]
    fired: serde_json::Map<String, Value>,
}

/// One running adapter process.
struct Process {
    child: std::process::Child,
    stdin: ChildStdin,
    /// Its stdout's lines, or the bad line that ended the reading.
    lines: Receiver<Result<String, BadLine>>,
    stderr: Arc<Mutex<Tail>>,
    /// The peer's count of live processes, released when this one ends.
    slot: Option<Arc<Slots>>,
}

/// How many adapter processes a peer runs at most, and how many are alive
/// (idle in the pool or serving a request).
struct Slots {
    live: Mutex<usize>,
    freed: Condvar,
    max: usize,
}

impl Process {
    /// Starts `sh -c cmd`; its stdout is read in lines of at most
    /// `max_line` bytes.
    fn spawn(cmd: &str, max_line: usize) -> Result<Process, PeerError> {
        let mut command = Command::new("sh");
        command.arg("-c").arg(cmd);
        // Its own process group, so that killing a hung peer also kills
        // what `sh -c` started (dash does not exec the last command: the
        // Python under it would go on computing, orphaned).
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| PeerError::Spawn {
                cmd: cmd.to_string(),
                source,
            })?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let stderr = child.stderr.take().expect("piped");
        let (tx, lines) = mpsc::sync_channel(LINES_QUEUED);
        // Neither reader is ever joined: each ends when the pipe closes
        // (the process group is killed) or, for stdout, when the receiver
        // is dropped or after a bad line (the stream is not read past it).
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            let mut buf = Vec::new();
            loop {
                let line = match lines::read_line(&mut r, max_line, &mut buf) {
                    Ok(Line::Text(s)) => Ok(s),
                    Ok(Line::Bad(bad)) => Err(bad),
                    Ok(Line::End) | Err(_) => break,
                };
                let bad = line.is_err();
                if tx.send(line).is_err() || bad {
                    break;
                }
            }
        });
        let tail = Arc::new(Mutex::new(Tail::new(STDERR_LINES, STDERR_LINE_BYTES)));
        let sink = Arc::clone(&tail);
        std::thread::spawn(move || lines::drain_into(stderr, &sink));
        Ok(Process {
            child,
            stdin,
            lines,
            stderr: tail,
            slot: None,
        })
    }

    /// The last lines of its standard error, as a suffix for a message.
    fn stderr_tail(&self) -> String {
        // Give the reader thread a moment to catch the last lines.
        std::thread::sleep(Duration::from_millis(20));
        let lines = self
            .stderr
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .lines();
        if lines.is_empty() {
            String::new()
        } else {
            format!("; its stderr ends: {}", lines.join(" | "))
        }
    }

    /// Its exit status, if `sh` exits within `grace`.
    fn exited_within(&mut self, grace: Duration) -> Option<ExitStatus> {
        let end = Instant::now() + grace;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) if Instant::now() < end => std::thread::sleep(Duration::from_millis(10)),
                _ => return None,
            }
        }
    }

    /// The next line within `timeout`, watching the process meanwhile.
    fn next_line(&mut self, timeout: Duration) -> Next {
        let end = Instant::now() + timeout;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left.min(POLL)) {
                Ok(Ok(line)) => return Next::Line(line),
                Ok(Err(bad)) => return Next::Bad(bad),
                Err(RecvTimeoutError::Disconnected) => {
                    return match self.exited_within(EXIT_GRACE) {
                        Some(status) => Next::Exited(status),
                        None => Next::ClosedStdout,
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    if let Ok(Some(status)) = self.child.try_wait() {
                        // A line it wrote before exiting may still be on
                        // its way; past that, something it started holds
                        // its stdout open and would keep the reader waiting.
                        return match self.lines.recv_timeout(EXIT_GRACE) {
                            Ok(Ok(line)) => Next::Line(line),
                            Ok(Err(bad)) => Next::Bad(bad),
                            Err(_) => Next::Exited(status),
                        };
                    }
                    if left.is_zero() {
                        return Next::Timeout;
                    }
                }
            }
        }
    }

    fn kill(self) {
        // Dropping kills.
    }

    /// Kills the adapter's whole process group and reaps `sh`.
    fn kill_group(&mut self) {
        #[cfg(unix)]
        if let Ok(pid) = i32::try_from(self.child.id()) {
            // SAFETY: kill(2) on the group this process created at spawn;
            // no memory is involved.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What a process wrote next (see [`Process::next_line`]).
enum Next {
    Line(String),
    Bad(BadLine),
    Timeout,
    Exited(ExitStatus),
    /// Its stdout ended but it did not exit.
    ClosedStdout,
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill_group();
        if let Some(slots) = &self.slot {
            *slots.live.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
            slots.freed.notify_one();
        }
    }
}

/// A peer's simplifier as a subject.
pub struct Peer {
    cmd: String,
    timeout: Duration,
    /// The longest line read from the adapter (`--peer-max-line`).
    max_line: usize,
    name: String,
    profile: Profile,
    /// Idle processes, ready for a case.
    pool: Mutex<Vec<Process>>,
    /// The cap on live processes (`--peer-jobs`).
    slots: Arc<Slots>,
    next_id: AtomicU64,
    /// Time spent waiting for answers to simplification requests, and how
    /// many were answered: the peer's share of a campaign.
    busy_nanos: AtomicU64,
    requests: AtomicU64,
    /// Processes started after the first (restarts after a hang, crash or
    /// garbage, and extra workers).
    pub started: AtomicU64,
    /// The backends it compiles on (the hello's `backends`).
    backends: Vec<String>,
    /// It answers `reproducer` requests.
    reproducer: bool,
    /// It answers `rules`, `instances` and `apply` requests (its own
    /// rules, one by one: `crate::peer_rules`).
    rules: bool,
    /// It answers `bounds` requests (its range analysis: `crate::bounds`).
    bounds: bool,
    /// Its rules' names, when its answers say which fired (see
    /// [`Peer::with_rule_names`]): a campaign counts them like the engine's.
    rule_names: Vec<String>,
    /// Per rule: whether some input tileproof can express can match it.
    rule_reachable: Vec<bool>,
}

impl Peer {
    /// Starts `sh -c cmd`, reads its hello and keeps the process. `timeout`
    /// bounds each case.
    pub fn start(cmd: &str, timeout: Duration) -> Result<Peer, PeerError> {
        Peer::start_bounded(cmd, timeout, lines::DEFAULT_MAX_LINE)
    }

    /// [`Peer::start`], reading lines of at most `max_line` bytes from
    /// the adapter (its hello, and every answer after it).
    pub fn start_bounded(cmd: &str, timeout: Duration, max_line: usize) -> Result<Peer, PeerError> {
        let mut p = Process::spawn(cmd, max_line)?;
        let line = match p.next_line(START_TIMEOUT) {
            Next::Line(line) => line,
            Next::Bad(bad) => {
                p.kill();
                return Err(PeerError::BadHello {
                    cmd: cmd.to_string(),
                    reason: Malformed::Line(bad),
                    line: String::new(),
                });
            }
            Next::Timeout => {
                let stderr = p.stderr_tail();
                p.kill();
                return Err(PeerError::NoHello {
                    cmd: cmd.to_string(),
                    secs: START_TIMEOUT.as_secs(),
                    stderr,
                });
            }
            Next::Exited(_) | Next::ClosedStdout => {
                let stderr = p.stderr_tail();
                p.kill();
                return Err(PeerError::Exited {
                    cmd: cmd.to_string(),
                    stderr,
                });
            }
        };
        let bad = |reason: Malformed| PeerError::BadHello {
            cmd: cmd.to_string(),
            reason,
            line: clip(&line),
        };
        let hello: Hello = serde_json::from_str(&line).map_err(|e| bad(Malformed::NotAHello(e)))?;
        if hello.tileproof != PROTOCOL {
            return Err(bad(Malformed::Protocol(hello.tileproof)));
        }
        let profile = profile_of(&hello.profile).map_err(bad)?;
        let slots = Arc::new(Slots {
            live: Mutex::new(1),
            freed: Condvar::new(),
            max: std::thread::available_parallelism().map_or(1, |n| n.get()),
        });
        let mut p = p;
        p.slot = Some(Arc::clone(&slots));
        Ok(Peer {
            cmd: cmd.to_string(),
            timeout,
            max_line,
            name: format!("{} {}", hello.name, hello.version),
            profile,
            pool: Mutex::new(vec![p]),
            slots,
            busy_nanos: AtomicU64::new(0),
            requests: AtomicU64::new(0),
            next_id: AtomicU64::new(1),
            started: AtomicU64::new(0),
            backends: hello.backends,
            reproducer: hello.reproducer,
            rules: hello.rules,
            bounds: hello.bounds,
            rule_names: Vec::new(),
            rule_reachable: Vec::new(),
        })
    }

    /// Counts the peer's rules by these names (its `rules` list): an answer
    /// that says which fired (`fired`) is then tallied per rule, and a
    /// campaign reports how many of the peer's rules it reached.
    /// `rules`: each rule's name and whether an input tileproof can
    /// express can match it (the adapter's `instantiable`).
    pub fn with_rule_names(mut self, rules: Vec<(String, bool)>) -> Peer {
        (self.rule_names, self.rule_reachable) = rules.into_iter().unzip();
        self
    }

    /// Per rule (like [`Subject::rule_names`]): whether some input
    /// tileproof can express can match it.
    pub fn rule_reachable(&self) -> &[bool] {
        &self.rule_reachable
    }

    /// Whether it lists and applies its own rules (the hello's `rules`).
    pub fn has_rules(&self) -> bool {
        self.rules
    }

    /// Sends a request that is not about a case (`{"id": N, key: value}`)
    /// and returns its answer, an object whose `id` is N; `timeout`
    /// bounds it. A line that is not such an object is garbage.
    pub fn ask(&self, key: &str, value: Value, timeout: Duration) -> Result<Value, Refusal> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut req = json!({"id": id});
        req[key] = value;
        let (p, answer) = self.exchange(&req.to_string(), timeout)?;
        match serde_json::from_str::<Value>(&answer) {
            Ok(v) if v.get("id").and_then(Value::as_u64) == Some(id) && v.is_object() => {
                self.give_back(p);
                Ok(v)
            }
            Ok(v) => Err(self.garbage(
                p,
                Malformed::WrongId {
                    got: v.get("id").cloned(),
                    want: id,
                },
                &answer,
            )),
            Err(e) => Err(self.garbage(p, Malformed::NotAnAnswer(e), &answer)),
        }
    }

    /// Applies the peer's rule `rule` alone at the root of `roots` (one
    /// root) of `g` (an `apply` request): its result, added to `g`, or
    /// [`Answer::Declined`] when the rule does not rewrite it.
    pub fn apply(&self, rule: &str, g: &mut Graph, roots: &[NodeId]) -> Result<Answer, Refusal> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let line = request(g, roots, id, Some(("apply", json!({ "rule": rule }))));
        self.answer(g, roots, id, &line)
    }

    /// Sends a case request and reads its answer into `g`.
    fn answer(
        &self,
        g: &mut Graph,
        roots: &[NodeId],
        id: u64,
        line: &str,
    ) -> Result<Answer, Refusal> {
        if line.len() > MAX_REQUEST_BYTES {
            return Ok(Answer::Unsupported(format!(
                "the case is {} bytes as a request (at most {MAX_REQUEST_BYTES} are sent)",
                line.len()
            )));
        }
        let start = std::time::Instant::now();
        let exchanged = self.exchange(line, self.timeout);
        self.busy_nanos
            .fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
        self.requests.fetch_add(1, Ordering::Relaxed);
        let (p, answer) = exchanged?;
        match read_answer(g, roots, id, &answer, &self.rule_names) {
            Ok(result) => {
                self.give_back(p);
                match result {
                    Reply::Answer(a) => Ok(a),
                    Reply::Error(e) => Err(Refusal {
                        kind: Kind::PeerError,
                        message: e,
                    }),
                }
            }
            Err(why) => Err(self.garbage(p, why, &answer)),
        }
    }

    /// The command that runs the adapter.
    pub fn command(&self) -> &str {
        &self.cmd
    }

    /// At most `n` adapter processes at a time (`--peer-jobs`; default one
    /// per core): a request waits for an idle one beyond that.
    pub fn with_processes(mut self, n: usize) -> Peer {
        let live = *self.slots.live.lock().unwrap_or_else(|e| e.into_inner());
        let slots = Arc::new(Slots {
            live: Mutex::new(live),
            freed: Condvar::new(),
            max: n.max(1),
        });
        for p in self
            .pool
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .iter_mut()
        {
            p.slot = Some(Arc::clone(&slots));
        }
        self.slots = slots;
        self
    }

    /// The cap on live adapter processes.
    pub fn processes(&self) -> usize {
        self.slots.max
    }

    /// Seconds spent waiting for simplification answers, and how many
    /// were answered.
    pub fn busy(&self) -> (f64, u64) {
        (
            self.busy_nanos.load(Ordering::Relaxed) as f64 * 1e-9,
            self.requests.load(Ordering::Relaxed),
        )
    }

    /// An idle process, or a fresh one (whose hello is read and checked)
    /// while fewer than the cap are alive; else waits for one.
    fn process(&self) -> Result<Process, Refusal> {
        loop {
            if let Some(p) = self.pool.lock().unwrap_or_else(|e| e.into_inner()).pop() {
                return Ok(p);
            }
            let mut live = self.slots.live.lock().unwrap_or_else(|e| e.into_inner());
            if *live < self.slots.max {
                *live += 1;
                break;
            }
            // Woken when a process is given back or ends; the timeout covers
            // a give-back that raced with this wait.
            let _ = self
                .slots
                .freed
                .wait_timeout(live, Duration::from_millis(50))
                .unwrap_or_else(|e| e.into_inner());
        }
        self.started.fetch_add(1, Ordering::Relaxed);
        let crash = |message: String| Refusal {
            kind: Kind::Crash,
            message,
        };
        let mut p = match Process::spawn(&self.cmd, self.max_line) {
            Ok(p) => p,
            Err(e) => {
                *self.slots.live.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
                self.slots.freed.notify_one();
                return Err(crash(e.to_string()));
            }
        };
        p.slot = Some(Arc::clone(&self.slots));
        match p.next_line(START_TIMEOUT) {
            Next::Line(line) if serde_json::from_str::<Hello>(&line).is_ok() => Ok(p),
            Next::Line(line) => Err(crash(format!(
                "the restarted adapter wrote a bad hello: {}",
                clip(&line)
            ))),
            Next::Bad(bad) => Err(crash(format!(
                "the restarted adapter wrote a bad hello: {bad}"
            ))),
            Next::Timeout | Next::Exited(_) | Next::ClosedStdout => {
                let tail = p.stderr_tail();
                p.kill();
                Err(crash(format!("the adapter did not restart{tail}")))
            }
        }
    }

    fn give_back(&self, p: Process) {
        self.pool.lock().unwrap_or_else(|e| e.into_inner()).push(p);
        self.slots.freed.notify_one();
    }

    /// Sends one request line and reads the answer line, within `timeout`.
    /// The process is the caller's to give back once the answer is read;
    /// one that hung or exited is dropped here and the failure returned.
    fn exchange(&self, line: &str, timeout: Duration) -> Result<(Process, String), Refusal> {
        let mut p = self.process()?;
        let refusal = |kind: Kind, message: String| Refusal { kind, message };
        if writeln!(p.stdin, "{line}")
            .and_then(|_| p.stdin.flush())
            .is_err()
        {
            let tail = p.stderr_tail();
            p.kill();
            return Err(refusal(
                Kind::Crash,
                format!("the adapter stopped reading its input{tail}"),
            ));
        }
        match p.next_line(timeout) {
            Next::Line(answer) => Ok((p, answer)),
            Next::Bad(bad) => {
                p.kill();
                Err(refusal(Kind::Garbage, bad.to_string()))
            }
            Next::Timeout => {
                let tail = p.stderr_tail();
                p.kill();
                Err(refusal(
                    Kind::Hang,
                    format!(
                        "no answer within {:.1} s (the adapter was killed and is restarted){tail}",
                        timeout.as_secs_f64()
                    ),
                ))
            }
            Next::Exited(status) => {
                let tail = p.stderr_tail();
                p.kill();
                Err(refusal(
                    Kind::Crash,
                    format!("the adapter exited ({status}) before answering{tail}"),
                ))
            }
            Next::ClosedStdout => {
                let tail = p.stderr_tail();
                p.kill();
                Err(refusal(
                    Kind::Crash,
                    format!(
                        "the adapter closed its stdout but kept running (it was killed and is restarted){tail}"
                    ),
                ))
            }
        }
    }

    /// A line that is not a valid answer: the stream's state is unknown
    /// after it, so a fresh process takes the next request.
    fn garbage(&self, p: Process, why: Malformed, answer: &str) -> Refusal {
        p.kill();
        Refusal {
            kind: Kind::Garbage,
            message: format!("{why}: {}", clip(answer)),
        }
    }
}

/// The semantics profile a hello declares.
fn profile_of(h: &HelloProfile) -> Result<Profile, Malformed> {
    let mut ops = Vec::new();
    for name in &h.ops {
        // An op this side does not know is one it never sends.
        if let Some(op) = Op::by_name(name) {
            if op.class() != engine::op::Class::Cast {
                ops.push(op);
            }
        }
    }
    let integers = match h.integers.as_str() {
        "unbounded" => Integers::Unbounded,
        "int32" => Integers::Fixed(Width(32)),
        "int64" => Integers::Fixed(Width(64)),
        other => return Err(Malformed::Integers(other.to_string())),
    };
    let partial = match h.partial_ops.as_deref() {
        None => Partial::Undefined,
        Some(name) => {
            Partial::by_name(name).ok_or_else(|| Malformed::PartialOps(name.to_string()))?
        }
    };
    Ok(Profile {
        ops,
        invalid: h.invalid,
        bare_invalid: false,
        integers,
        bool_vars: h.bool_vars,
        concrete_dtypes: false,
        invalid_compared: h.input_language.invalid_compared,
        partial,
    })
}

/// A line cut for a message.
fn clip(s: &str) -> String {
    crate::message::short(&crate::message::one_line(s))
}

impl Subject for Peer {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn profile(&self) -> &Profile {
        &self.profile
    }

    fn rule_names(&self) -> &[String] {
        &self.rule_names
    }

    fn simplify(&self, g: &mut Graph, roots: &[NodeId]) -> Result<Answer, Refusal> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let line = request(g, roots, id, None);
        self.answer(g, roots, id, &line)
    }

    fn backends(&self) -> &[String] {
        &self.backends
    }

    fn run(
        &self,
        g: &Graph,
        roots: &[NodeId],
        backend: &str,
        points: &[Vec<i64>],
    ) -> Result<Run, Refusal> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let vars = g.reachable_vars(roots);
        let pts: Vec<Vec<i64>> = points
            .iter()
            .map(|env| vars.iter().map(|&v| env[v as usize]).collect())
            .collect();
        let line = request(
            g,
            roots,
            id,
            Some(("run", json!({"backend": backend, "points": pts}))),
        );
        let (p, answer) = self.exchange(&line, RUN_TIMEOUT.max(self.timeout))?;
        match read_run(&answer, id, roots.len(), points.len()) {
            Ok(Ok(run)) => {
                self.give_back(p);
                Ok(run)
            }
            Ok(Err(e)) => {
                self.give_back(p);
                Err(Refusal {
                    kind: Kind::PeerError,
                    message: format!("the adapter failed to run it on {backend}: {e}"),
                })
            }
            Err(why) => Err(self.garbage(p, why, &answer)),
        }
    }

    fn reproducer(
        &self,
        g: &Graph,
        roots: &[NodeId],
        spec: &ReproducerSpec,
    ) -> Result<Option<Script>, Refusal> {
        if !self.reproducer {
            return Ok(None);
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let vars = g.reachable_vars(roots);
        let point: Vec<i64> = vars.iter().map(|&v| spec.env[v as usize]).collect();
        let line = request(
            g,
            roots,
            id,
            Some((
                "reproducer",
                json!({"backend": spec.backend, "point": point, "expected": spec.expected,
                       "class": spec.class, "kind": spec.kind}),
            )),
        );
        let (p, answer) = self.exchange(&line, RUN_TIMEOUT.max(self.timeout))?;
        match read_script(&answer, id) {
            Ok(script) => {
                self.give_back(p);
                script.map(Some).map_err(|e| Refusal {
                    kind: Kind::PeerError,
                    message: format!("the adapter wrote no reproducer: {e}"),
                })
            }
            Err(why) => Err(self.garbage(p, why, &answer)),
        }
    }

    fn reproduce_args(&self) -> String {
        format!("--simplifier {} ", crate::subject::shell_quote(&self.cmd))
    }

    fn bounds(&self, g: &Graph, roots: &[NodeId]) -> Result<Option<Bounds>, Refusal> {
        if !self.bounds {
            return Ok(None);
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let line = request(g, roots, id, Some(("bounds", json!({}))));
        if line.len() > MAX_REQUEST_BYTES {
            return Ok(None);
        }
        let (p, answer) = self.exchange(&line, self.timeout)?;
        match read_bounds(&answer, id) {
            Ok(Ok(b)) => {
                self.give_back(p);
                Ok(b)
            }
            Ok(Err(e)) => {
                self.give_back(p);
                Err(Refusal {
                    kind: Kind::PeerError,
                    message: format!("the peer failed to give its bounds: {e}"),
                })
            }
            Err(why) => Err(self.garbage(p, why, &answer)),
        }
    }
}

/// Reads the answer to `bounds` request `id`: the bounds (none when the
/// peer declines the case: `unsupported`), or the peer's `error`; `Err`
/// when the line is not a valid answer.
fn read_bounds(line: &str, id: u64) -> Result<Result<Option<Bounds>, String>, Malformed> {
    #[derive(Deserialize)]
    struct BoundsResponse {
        id: Option<Value>,
        bounds: Option<Vec<Vec<Value>>>,
        unsupported: Option<String>,
        error: Option<String>,
    }
    let r: BoundsResponse = serde_json::from_str(line).map_err(Malformed::NotAnAnswer)?;
    if r.id.as_ref().and_then(Value::as_u64) != Some(id) {
        return Err(Malformed::WrongId {
            got: r.id,
            want: id,
        });
    }
    if let Some(e) = r.error {
        return Ok(Err(e));
    }
    if r.unsupported.is_some() {
        return Ok(Ok(None));
    }
    let lists = r.bounds.ok_or(Malformed::Empty)?;
    let bounds = lists
        .iter()
        .map(|l| {
            l.iter()
                .map(Bound::from_json)
                .collect::<Result<Vec<_>, _>>()
        })
        .collect::<Result<Bounds, String>>()
        .map_err(Malformed::Bounds)?;
    Ok(Ok(Some(bounds)))
}

/// The request line for case `id`, with an extra request field (`run`,
/// `reproducer`) when given (also what `tileproof bench` gives its TVM
/// timing script).
pub fn request(g: &Graph, roots: &[NodeId], id: u64, extra: Option<(&str, Value)>) -> String {
    let mut used: Vec<u32> = g
        .reachable(roots)
        .into_iter()
        .filter_map(|n| match g.node(n).op {
            Op::Var(v) => Some(v),
            _ => None,
        })
        .collect();
    // In declaration order.
    used.sort_unstable();
    let vars: Vec<Value> = used
        .iter()
        .map(|&v| {
            let d = g.var(v);
            json!({"name": d.name, "dtype": d.dtype.name(), "lo": d.lo, "hi": d.hi})
        })
        .collect();
    let exprs: Vec<String> = roots.iter().map(|&r| print::expr(g, r)).collect();
    let trees: Vec<Value> = roots.iter().map(|&r| tree(g, r)).collect();
    let mut req = json!({"id": id, "vars": vars, "exprs": exprs, "trees": trees});
    if let Some((key, value)) = extra {
        req[key] = value;
    }
    req.to_string()
}

/// A node as a protocol tree.
fn tree(g: &Graph, id: NodeId) -> Value {
    let n = g.node(id);
    match n.op {
        Op::Const(c) if n.dtype == DType::Bool => json!(["bool", c != 0]),
        Op::Const(c) if n.dtype == DType::Index => json!(["const", c]),
        Op::Const(c) => json!(["const", c, n.dtype.name()]),
        Op::Var(v) => json!(["var", g.var(v).name]),
        Op::Invalid => json!(["invalid"]),
        Op::Cast => json!(["cast", n.dtype.name(), tree(g, n.src()[0])]),
        op => {
            let mut v = vec![json!(op.name())];
            v.extend(n.src().iter().map(|&s| tree(g, s)));
            Value::Array(v)
        }
    }
}

/// What an answer line says.
enum Reply {
    Answer(Answer),
    /// The peer raised (an `error` answer).
    Error(String),
}

/// Reads an answer line to case `id` into `g`; `Err` says why it is not a
/// valid answer.
/// `rules`: the peer's rule names (empty when it lists none); an answer's
/// `fired` counts are indexed like them, names it did not list ignored.
fn read_answer(
    g: &mut Graph,
    roots: &[NodeId],
    id: u64,
    line: &str,
    rules: &[String],
) -> Result<Reply, Malformed> {
    let r: Response = serde_json::from_str(line).map_err(Malformed::NotAnAnswer)?;
    if r.id.as_ref().and_then(Value::as_u64) != Some(id) {
        return Err(Malformed::WrongId {
            got: r.id,
            want: id,
        });
    }
    if let Some(e) = r.error {
        return Ok(Reply::Error(e));
    }
    if let Some(u) = r.unsupported {
        return Ok(Reply::Answer(Answer::Unsupported(u)));
    }
    if let Some(d) = r.declined {
        return Ok(Reply::Answer(Answer::Declined(d)));
    }
    let mut budget = Budget::new(node_budget(g.reachable(roots).len()));
    let built: Vec<NodeId> = match (r.trees, r.exprs) {
        (Some(trees), _) => {
            if trees.len() != roots.len() {
                return Err(Malformed::Count {
                    got: trees.len(),
                    what: "trees",
                    want: roots.len(),
                });
            }
            trees
                .iter()
                .map(|t| build_tree(g, t, 0, &mut budget))
                .collect::<Result<_, _>>()?
        }
        (None, Some(exprs)) => {
            if exprs.len() != roots.len() {
                return Err(Malformed::Count {
                    got: exprs.len(),
                    what: "exprs",
                    want: roots.len(),
                });
            }
            // Counted before parsing: the parser's tokens and syntax tree
            // are bounded by the budget, not only by the line's length.
            let tokens: usize = exprs.iter().map(|e| text_nodes(e)).sum();
            budget.take(tokens)?;
            let mut out = Vec::new();
            for e in &exprs {
                let bad = |err| Malformed::Expr {
                    text: e.clone(),
                    err,
                };
                let ast = engine::parse::parse_ast(e, 1).map_err(bad)?;
                out.push(engine::parse::build(g, &ast).map_err(bad)?);
            }
            out
        }
        (None, None) => return Err(Malformed::Empty),
    };
    for (&r, &b) in roots.iter().zip(&built) {
        let (want, got) = (g.node(r).dtype, g.node(b).dtype);
        if want != got {
            return Err(Malformed::Dtype { got, want });
        }
    }
    let mut counts = vec![0; rules.len()];
    for (name, n) in &r.fired {
        if let (Some(i), Some(n)) = (rules.iter().position(|r| r == name), n.as_u64()) {
            counts[i] += n as usize;
        }
    }
    Ok(Reply::Answer(Answer::Simplified {
        roots: built,
        counts,
    }))
}

/// Reads the answer to `run` request `id` over `roots` expressions at
/// `points` points: the run, or the adapter's own `error`; `Err` when the
/// line is not a valid answer.
fn read_run(
    line: &str,
    id: u64,
    roots: usize,
    points: usize,
) -> Result<Result<Run, String>, Malformed> {
    #[derive(Deserialize)]
    struct RunResponse {
        id: Option<Value>,
        results: Option<Vec<Value>>,
        compile_error: Option<String>,
        unsupported: Option<String>,
        error: Option<String>,
    }
    let r: RunResponse = serde_json::from_str(line).map_err(Malformed::NotAnAnswer)?;
    if r.id.as_ref().and_then(Value::as_u64) != Some(id) {
        return Err(Malformed::WrongId {
            got: r.id,
            want: id,
        });
    }
    if let Some(e) = r.error {
        return Ok(Err(e));
    }
    if let Some(e) = r.compile_error {
        return Ok(Ok(Run::CompileError(e)));
    }
    if let Some(u) = r.unsupported {
        return Ok(Ok(Run::Unsupported(u)));
    }
    let results = r.results.ok_or(Malformed::Empty)?;
    if results.len() != points {
        return Err(Malformed::Count {
            got: results.len(),
            what: "results",
            want: points,
        });
    }
    let point = |v: &Value| -> Result<PointRun, Malformed> {
        if let Some(sig) = v.get("trap").and_then(Value::as_str) {
            return Ok(PointRun::Trap(sig.to_string()));
        }
        if let Some(t) = v.get("timeout").and_then(Value::as_f64) {
            return Ok(PointRun::Timeout(t));
        }
        let vals = v
            .get("values")
            .and_then(Value::as_array)
            .ok_or_else(|| Malformed::NotAResult(v.clone()))?;
        if vals.len() != roots {
            return Err(Malformed::Count {
                got: vals.len(),
                what: "values",
                want: roots,
            });
        }
        vals.iter()
            .map(|x| match x {
                Value::Bool(b) => Ok(backend::Value::Bool(*b)),
                Value::String(s) if s == "invalid" => Ok(backend::Value::Invalid),
                Value::Number(n) => n
                    .as_i64()
                    .map(|i| backend::Value::Int(i as i128))
                    .or_else(|| n.as_u64().map(|u| backend::Value::Int(u as i128)))
                    .ok_or_else(|| Malformed::NotAnInteger(x.clone())),
                _ => Err(Malformed::NotAResult(x.clone())),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(PointRun::Values)
    };
    let runs = results.iter().map(point).collect::<Result<Vec<_>, _>>()?;
    Ok(Ok(Run::Results(runs)))
}

/// Reads the answer to `reproducer` request `id`: the script, or why the
/// adapter wrote none; `Err` when the line is not a valid answer.
fn read_script(line: &str, id: u64) -> Result<Result<Script, String>, Malformed> {
    #[derive(Deserialize)]
    struct ScriptResponse {
        id: Option<Value>,
        script: Option<String>,
        extension: Option<String>,
        attachments: Option<std::collections::BTreeMap<String, String>>,
        unsupported: Option<String>,
        error: Option<String>,
    }
    let r: ScriptResponse = serde_json::from_str(line).map_err(Malformed::NotAnAnswer)?;
    if r.id.as_ref().and_then(Value::as_u64) != Some(id) {
        return Err(Malformed::WrongId {
            got: r.id,
            want: id,
        });
    }
    let extension = r
        .extension
        .unwrap_or_else(|| Script::DEFAULT_EXTENSION.to_string());
    if !Script::valid_extension(&extension) {
        return Err(Malformed::Extension(extension));
    }
    let mut attachments = Vec::new();
    for (ext, text) in r.attachments.unwrap_or_default() {
        if !Script::valid_extension(&ext) || ext == extension {
            return Err(Malformed::Extension(ext));
        }
        attachments.push(Attachment {
            extension: ext,
            text,
        });
    }
    match (r.script, r.unsupported.or(r.error)) {
        (Some(text), _) => Ok(Ok(Script {
            text,
            extension,
            attachments,
        })),
        (None, Some(e)) => Ok(Err(e)),
        (None, None) => Err(Malformed::Empty),
    }
}

/// One line an adapter printed, read as each message this module reads
/// (a hello, an answer to the case `g`'s `roots` as id 7, a `run` and a
/// `reproducer` answer): for the `protocol` fuzz target. Errors are
/// fine, panics are not, and an answer grows `g` by no more than its
/// node budget.
pub(crate) fn read_every_way(g: &mut Graph, roots: &[NodeId], line: &str) {
    if let Ok(h) = serde_json::from_str::<Hello>(line) {
        let _ = profile_of(&h.profile);
    }
    let before = g.len();
    let budget = node_budget(g.reachable(roots).len());
    let _ = read_answer(g, roots, 7, line, &["r".to_string()]);
    assert!(
        g.len() - before <= budget,
        "an answer built {} nodes, over its budget of {budget}",
        g.len() - before
    );
    let _ = read_run(line, 7, roots.len(), 2);
    let _ = read_script(line, 7);
    let _ = read_bounds(line, 7);
}

/// An upper bound on the nodes a text expression builds: its operands
/// (runs of letters, digits and `_`) and its operator characters, every
/// character but spaces, parentheses and commas. Every node of the
/// expression comes from at least one of them.
fn text_nodes(text: &str) -> usize {
    let mut n = 0;
    let mut in_word = false;
    for c in text.chars() {
        let word = c.is_alphanumeric() || c == '_';
        let operator = !word && !c.is_whitespace() && !matches!(c, '(' | ')' | ',');
        if (word && !in_word) || operator {
            n += 1;
        }
        in_word = word;
    }
    n
}

/// The nodes an answer may still build, of its whole budget.
struct Budget {
    left: usize,
    total: usize,
}

impl Budget {
    fn new(total: usize) -> Budget {
        Budget { left: total, total }
    }

    /// Takes `n` nodes, or says the answer is over its budget.
    fn take(&mut self, n: usize) -> Result<(), Malformed> {
        self.left = self
            .left
            .checked_sub(n)
            .ok_or(Malformed::TooBig(self.total))?;
        Ok(())
    }
}

/// Builds a protocol tree into `g` (the case's variables are declared
/// there), at most [`NODE_BUDGET_MAX`] nodes.
pub(crate) fn from_tree(g: &mut Graph, t: &Value) -> Result<NodeId, Malformed> {
    build_tree(g, t, 0, &mut Budget::new(NODE_BUDGET_MAX))
}

/// Builds a protocol tree into `g`, each node of it taken from `budget`.
fn build_tree(
    g: &mut Graph,
    t: &Value,
    depth: usize,
    budget: &mut Budget,
) -> Result<NodeId, Malformed> {
    if depth > MAX_TREE_DEPTH {
        return Err(Malformed::TooDeep);
    }
    budget.take(1)?;
    let items = t.as_array().ok_or_else(|| Malformed::NotATree(t.clone()))?;
    let head = items
        .first()
        .and_then(Value::as_str)
        .ok_or_else(|| Malformed::NoHead(t.clone()))?;
    let args = &items[1..];
    let arity = |n: usize| {
        if args.len() == n {
            Ok(())
        } else {
            Err(Malformed::Arity {
                head: head.to_string(),
                args: args.len(),
            })
        }
    };
    // A concrete dtype (`i32`, `i64`, `index`): the second operand of a
    // typed constant, the first of a cast.
    let dtype = |v: &Value| {
        v.as_str()
            .and_then(DType::from_name)
            .filter(|d| *d != DType::Bool)
            .ok_or_else(|| Malformed::NotADtype(v.clone()))
    };
    match head {
        "const" if args.len() == 2 => {
            let d = dtype(&args[1])?;
            let v = args[0]
                .as_i64()
                .filter(|v| {
                    let (lo, hi) = d.bounds();
                    lo <= *v && *v <= hi
                })
                .ok_or_else(|| Malformed::NotAnInteger(t.clone()))?;
            Ok(g.cnst(v, d))
        }
        "const" => {
            arity(1)?;
            let v = args[0]
                .as_i64()
                .ok_or_else(|| Malformed::NotAnInteger(t.clone()))?;
            Ok(g.cnst(v, DType::Index))
        }
        "cast" => {
            arity(2)?;
            let d = dtype(&args[0])?;
            let x = build_tree(g, &args[1], depth + 1, budget)?;
            Ok(g.try_mk(Op::Cast, Some(d), &[x])?)
        }
        "bool" => {
            arity(1)?;
            let b = args[0]
                .as_bool()
                .ok_or_else(|| Malformed::NotABool(t.clone()))?;
            Ok(g.bool_const(b))
        }
        "invalid" => {
            arity(0)?;
            Ok(g.invalid())
        }
        "var" => {
            arity(1)?;
            let name = args[0]
                .as_str()
                .ok_or_else(|| Malformed::NotAName(t.clone()))?;
            let v = g
                .var_named(name)
                .ok_or_else(|| Malformed::UnknownVar(name.to_string()))?;
            Ok(g.var_node(v))
        }
        name => {
            let op = Op::by_name(name).ok_or_else(|| Malformed::UnknownOp(name.to_string()))?;
            arity(op.arity())?;
            let src: Vec<NodeId> = args
                .iter()
                .map(|a| build_tree(g, a, depth + 1, budget))
                .collect::<Result<_, _>>()?;
            Ok(g.try_mk(op, None, &src)?)
        }
    }
}

// ---- the other side: a subject served over the protocol --------------------

#[derive(Deserialize)]
struct RequestIn {
    id: Value,
    vars: Vec<VarIn>,
    trees: Vec<Value>,
}

#[derive(Deserialize)]
struct VarIn {
    name: String,
    dtype: String,
    lo: i64,
    hi: i64,
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

#[cfg(test)]
mod tests {
    use super::*;
    use engine::parse::parse_program;

    #[test]
    fn a_request_carries_text_and_trees_and_an_answer_builds_back() {
        let mut p = parse_program(
            "var r0 in [0, 7]\nvar c: bool\nexpr where(c, (r0 * 4 + 3) // 4, invalid)\n",
        )
        .unwrap();
        let line = request(&p.graph, &p.outputs, 7, None);
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["id"], 7);
        assert_eq!(v["exprs"][0], "where(c, (r0 * 4 + 3) // 4, invalid)");
        assert_eq!(v["trees"][0][0], "where");
        assert_eq!(v["vars"][0]["name"], "r0");
        let answer = r#"{"id": 7, "trees": [["where", ["var", "c"], ["var", "r0"], ["invalid"]]]}"#;
        let Ok(Reply::Answer(Answer::Simplified { roots, .. })) =
            read_answer(&mut p.graph, &p.outputs, 7, answer, &[])
        else {
            panic!("not an answer")
        };
        assert_eq!(print::expr(&p.graph, roots[0]), "where(c, r0, invalid)");
        let text = r#"{"id": 7, "exprs": ["where(c, r0 + 0, invalid)"]}"#;
        assert!(matches!(
            read_answer(&mut p.graph, &p.outputs, 7, text, &[]),
            Ok(Reply::Answer(Answer::Simplified { .. }))
        ));
    }

    #[test]
    fn bad_answers_are_garbage_with_a_reason() {
        let mut p = parse_program("var r0 in [0, 7]\nexpr r0 + 1\n").unwrap();
        let roots = p.outputs.clone();
        let mut bad = |line: &str| match read_answer(&mut p.graph, &roots, 3, line, &[]) {
            Err(why) => why,
            Ok(_) => panic!("accepted {line}"),
        };
        assert!(matches!(bad("not json"), Malformed::NotAnAnswer(_)));
        assert!(matches!(
            bad(r#"{"id": 4, "trees": [["var", "r0"]]}"#),
            Malformed::WrongId { want: 3, .. }
        ));
        assert!(matches!(
            bad(r#"{"id": 3, "trees": [["var", "x"]]}"#),
            Malformed::UnknownVar(v) if v == "x"
        ));
        assert!(matches!(
            bad(r#"{"id": 3, "trees": [["lt", ["var", "r0"], ["const", 1]]]}"#),
            Malformed::Dtype { .. }
        ));
        assert!(matches!(
            bad(r#"{"id": 3, "trees": [["add", ["var", "r0"]]]}"#),
            Malformed::Arity { args: 1, .. }
        ));
        assert!(bad(r#"{"id": 3, "exprs": ["r0 +"]}"#)
            .to_string()
            .contains("r0 +"));
        assert!(matches!(bad(r#"{"id": 3}"#), Malformed::Empty));
    }

    #[test]
    fn an_answer_over_the_node_budget_is_garbage() {
        let mut p = parse_program("var r0 in [0, 7]\nexpr r0 + 1\n").unwrap();
        let roots = p.outputs.clone();
        let budget = node_budget(3);
        assert_eq!(budget, NODE_BUDGET_MIN);
        let sum = |n: usize| vec!["r0"; n].join(" + ");
        let text = |n: usize| format!(r#"{{"id": 3, "exprs": ["{}"]}}"#, sum(n));
        // n operands and n - 1 operators.
        let at = budget.div_ceil(2);
        assert!(read_answer(&mut p.graph, &roots, 3, &text(at), &[]).is_ok());
        assert!(matches!(
            read_answer(&mut p.graph, &roots, 3, &text(at + 1), &[]),
            Err(Malformed::TooBig(b)) if b == budget
        ));
        // A balanced tree: serde_json refuses nesting past 128 levels.
        let wide = |n: usize| {
            let mut t = json!(["var", "r0"]);
            let mut level = vec![t.clone(); n];
            while level.len() > 1 {
                level = level
                    .chunks(2)
                    .map(|c| json!(["add", c[0], c.get(1).unwrap_or(&c[0])]))
                    .collect();
            }
            t = level.pop().unwrap();
            json!({"id": 3, "trees": [t]}).to_string()
        };
        assert!(read_answer(&mut p.graph, &roots, 3, &wide(1 << 12), &[]).is_ok());
        assert!(matches!(
            read_answer(&mut p.graph, &roots, 3, &wide(1 << 13), &[]),
            Err(Malformed::TooBig(b)) if b == budget
        ));
        // 7 nodes; `//` counts twice: an upper bound.
        assert_eq!(text_nodes("where(p, -x, y_1 // 12)"), 8);
    }
}
