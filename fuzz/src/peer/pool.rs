//! [`Peer`]: a pool of adapter processes behind one command, each started
//! with its hello checked, restarted after a hang, crash or garbage, capped
//! at `--peer-jobs` live processes.

use super::codec::{line, past_id, profile_of, reply, PROTOCOL};
use super::codec::{line_about, read_reply, Malformed, Wire, MAX_REQUEST_BYTES};
use super::lines::{self};
use super::memo::{Cases, Memo};
use super::process::{Next, Process, Slots};
use crate::kind::Kind;
use crate::subject::{Answer, Profile, Refusal};
use engine::ir::{Graph, NodeId};
use std::io::{self, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;
use tileproof_adapter::{Hello, Reply, Request};

/// How long a process may take to write its hello (a peer library can take
/// seconds to import).
pub const START_TIMEOUT: Duration = Duration::from_secs(120);

/// How long a `run` or `reproducer` request may take: it compiles with
/// the peer's compiler, in child processes, and re-runs each point alone
/// after a trap.
pub const RUN_TIMEOUT: Duration = Duration::from_secs(600);

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

/// One of a peer's rules, as its `rules` answer lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnownRule {
    pub name: String,
    /// Some input tileproof can express can match it.
    pub reachable: bool,
    /// Where the peer defines it (`file:line`, or empty).
    pub location: String,
}

/// A peer's simplifier as a subject.
pub struct Peer {
    pub(super) cmd: String,
    pub(super) timeout: Duration,
    /// The longest line read from the adapter (`--peer-max-line`).
    pub(super) max_line: usize,
    pub(super) name: String,
    pub(super) profile: Profile,
    /// Idle processes, ready for a case.
    pub(super) pool: Mutex<Vec<Process>>,
    /// The cap on live processes (`--peer-jobs`).
    pub(super) slots: Arc<Slots>,
    pub(super) next_id: AtomicU64,
    /// Time spent waiting for answers to simplification requests, and how
    /// many were answered: the peer's share of a campaign.
    busy_nanos: AtomicU64,
    pub(super) requests: AtomicU64,
    /// Processes started after the first (restarts after a hang, crash or
    /// garbage, and extra workers).
    pub started: AtomicU64,
    /// The backends it compiles on (the hello's `backends`).
    pub(super) backends: Vec<String>,
    /// It answers `reproducer` requests.
    pub(super) reproducer: bool,
    /// It answers `rules`, `instances` and `apply` requests (its own
    /// rules, one by one: `crate::peer_rules`).
    pub(super) rules: bool,
    /// It answers `bounds` requests (its range analysis: `crate::bounds`).
    pub(super) bounds: bool,
    /// The stages of its entry point's pipeline, in order (the hello's
    /// `stages`; the last is the entry itself).
    pub(super) stages: Vec<String>,
    /// Its answers to `apply` and `stage` requests, by request.
    parts: Memo,
    /// The wire forms of the cases asked about lately.
    pub(super) cases: Cases,
    /// Its rules' names, when its answers say which fired (see
    /// [`Peer::with_rule_names`]): a campaign counts them like the engine's.
    pub(super) rule_names: Vec<String>,
    /// Per rule: whether some input tileproof can express can match it.
    pub(super) rule_reachable: Vec<bool>,
    /// Where each rule is defined (`file:line`; empty when the adapter
    /// does not say).
    pub(super) rule_locations: Vec<String>,
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
        let mut p = Process::spawn(cmd, max_line).map_err(|source| PeerError::Spawn {
            cmd: cmd.to_string(),
            source,
        })?;
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
            stages: hello.stages,
            parts: Memo::default(),
            cases: Cases::default(),
            rule_names: Vec::new(),
            rule_reachable: Vec::new(),
            rule_locations: Vec::new(),
        })
    }

    /// Counts the peer's rules by these names (its `rules` list): an answer
    /// that says which fired (`fired`) is then tallied per rule, and a
    /// campaign reports how many of the peer's rules it reached.
    /// `rules`: each rule's name, whether an input tileproof can express
    /// can match it (the adapter's `instantiable`), and where the peer
    /// defines it (a finding's cause names it).
    pub fn with_rule_names(mut self, rules: Vec<KnownRule>) -> Peer {
        self.rule_names = rules.iter().map(|r| r.name.clone()).collect();
        self.rule_reachable = rules.iter().map(|r| r.reachable).collect();
        self.rule_locations = rules.into_iter().map(|r| r.location).collect();
        self
    }

    /// Per rule (like [`Subject::rule_names`](crate::subject::Subject::rule_names)): whether some input
    /// tileproof can express can match it.
    pub fn rule_reachable(&self) -> &[bool] {
        &self.rule_reachable
    }

    /// Whether it lists and applies its own rules (the hello's `rules`).
    pub fn has_rules(&self) -> bool {
        self.rules
    }

    /// Sends a request that is not about a case (`rules`, `instances`)
    /// and returns its answer; `timeout` bounds it. A line that is not an
    /// answer to it is garbage.
    pub fn ask(&self, mut req: Request, timeout: Duration) -> Result<Reply, Refusal> {
        req.id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (p, answer) = self.exchange(&line(&req), timeout)?;
        match reply(&answer, req.id) {
            Ok(r) => {
                self.give_back(p);
                Ok(r)
            }
            Err(why) => Err(self.garbage(p, why, &answer)),
        }
    }

    /// Sends the case `roots` of `g` as the request `with` makes of it, and
    /// reads its answer into `g`.
    pub(super) fn ask_case(
        &self,
        g: &mut Graph,
        roots: &[NodeId],
        with: impl FnOnce(Request) -> Request,
    ) -> Result<Answer, Refusal> {
        let (id, case, sent) = self.request_about(g, roots, |req, _| with(req));
        self.answer(g, roots, case.budget, id, &sent)
    }

    /// A request about case `roots` of `g`, as `with` fills in a request
    /// bearing only its new id (given the case's wire form, for the order
    /// of a point's values): its id, the case's wire form and its line.
    pub(super) fn request_about(
        &self,
        g: &Graph,
        roots: &[NodeId],
        with: impl FnOnce(Request, &Wire) -> Request,
    ) -> (u64, Arc<Wire>, String) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let case = self.cases.of(g, roots);
        let bare = Request {
            id,
            ..Request::default()
        };
        let sent = line_about(&case, &with(bare, &case));
        (id, case, sent)
    }

    /// [`Peer::ask_case`] for a part of the peer (a rule alone, a stage:
    /// [`super::PeerPart`]), whose answer to a request asked before is read
    /// from its memo.
    pub(super) fn ask_part(
        &self,
        g: &mut Graph,
        roots: &[NodeId],
        with: impl FnOnce(Request) -> Request,
    ) -> Result<Answer, Refusal> {
        // The memo's key is the request's line past its id.
        let (id, case, sent) = self.request_about(g, roots, |req, _| with(req));
        let key = past_id(&sent);
        if let Some(r) = self.parts.get(key) {
            // Well formed when it was first read, and into a graph of the
            // same case: building it again fails only past the node budget.
            return match read_reply(g, roots, case.budget, r, &self.rule_names, false) {
                Ok(answer) => answer,
                Err(why) => Err(Refusal {
                    kind: Kind::Garbage,
                    message: why.to_string(),
                }),
            };
        }
        let mut said = None;
        let answer = self.answer_beside(g, roots, case.budget, id, &sent, false, Some(&mut said));
        if let Some((r, bytes)) = said {
            self.parts.put(key.to_string(), r, bytes);
        }
        answer
    }

    /// Sends a case request and reads its answer into `g`, within
    /// `budget` nodes.
    fn answer(
        &self,
        g: &mut Graph,
        roots: &[NodeId],
        budget: usize,
        id: u64,
        line: &str,
    ) -> Result<Answer, Refusal> {
        self.answer_beside(g, roots, budget, id, line, false, None)
    }

    /// [`Peer::answer`], with the bounds the answer carries in it when
    /// `beside` (a `with_bounds` request's, protocol section 7: its
    /// [`Answer::Simplified`]'s `bounds`), and read into `said` the answer,
    /// with its line's length, when it is well formed.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn answer_beside(
        &self,
        g: &mut Graph,
        roots: &[NodeId],
        budget: usize,
        id: u64,
        line: &str,
        beside: bool,
        said: Option<&mut Option<(Reply, usize)>>,
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
        let read = reply(&answer, id).and_then(|r| {
            let kept = said.is_some().then(|| r.clone());
            read_reply(g, roots, budget, r, &self.rule_names, beside).map(|result| (result, kept))
        });
        match read {
            Ok((result, kept)) => {
                self.give_back(p);
                if let (Some(s), Some(r)) = (said, kept) {
                    *s = Some((r, answer.len()));
                }
                result
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
    pub(super) fn process(&self) -> Result<Process, Refusal> {
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
        let spawned = Process::spawn(&self.cmd, self.max_line).map_err(|source| PeerError::Spawn {
            cmd: self.cmd.clone(),
            source,
        });
        let mut p = match spawned {
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

    pub(super) fn give_back(&self, p: Process) {
        self.pool.lock().unwrap_or_else(|e| e.into_inner()).push(p);
        self.slots.freed.notify_one();
    }

    /// Sends one request line and reads the answer line, within `timeout`.
    /// The process is the caller's to give back once the answer is read;
    /// one that hung or exited is dropped here and the failure returned.
    pub(super) fn exchange(
        &self,
        line: &str,
        timeout: Duration,
    ) -> Result<(Process, String), Refusal> {
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
    pub(super) fn garbage(&self, p: Process, why: Malformed, answer: &str) -> Refusal {
        p.kill();
        Refusal {
            kind: Kind::Garbage,
            message: format!("{why}: {}", clip(answer)),
        }
    }
}

/// A line cut for a message.
fn clip(s: &str) -> String {
    crate::message::short(&crate::message::one_line(s))
}
