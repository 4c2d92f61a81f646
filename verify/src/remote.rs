//! Checks and proofs run in a worker process ([`crate::worker`]), so that
//! their deadlines hold: what the request and answer lines say, the
//! caller's side and the worker's.
//!
//! The worker reads what it is sent from text (a program's, a rule's) and
//! runs the same [`check`] or proof on it. Nothing it answers is trusted: a
//! counterexample comes back as its point (a check's) or its model's values
//! (a rule's), and the caller realizes and confirms it with its own
//! interpreter. Where no worker is installed (the library's own tests), the
//! caller solves in its own process.

use crate::budget::Spent;
use crate::cache::Cache;
use crate::check::{check, counterexample_at, CheckResult, Method};
use crate::counterexample::{
    reproduce, type_names, Counterexample, NodeValue, State, Unconfirmed, VarValue,
};
use crate::encode::Mode;
use crate::lemma::{LemmaResult, Lemmas};
use crate::portfolio::SolverKind;
use crate::prove::{NotSettled, Options, ProofVerdict, RuleResult, WidthByWidth};
use crate::ranges::{self, Attempt};
use crate::verdict::VerdictKind;
use crate::worker;
use engine::dtype::Width;
use engine::ir::{DType, Graph, NodeId};
use engine::rules::{Rule, RuleSet};
use engine::semantics::{Failure, Model, Partial};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What a worker is asked.
#[derive(Serialize, Deserialize)]
enum Request {
    Check(CheckRequest),
    Prove(Box<ProveRequest>),
    Range(RangeRequest),
}

/// What a worker answers.
#[derive(Serialize, Deserialize)]
enum Reply {
    Check(CheckReply),
    Generic(Result<(bool, f64), WireNotSettled>),
    Width(Box<WireResult>),
    Range(VerdictKind, Option<String>),
    /// The request could not be read.
    Unreadable(String),
}

/// Sends `request` to a worker, waiting `own` plus its grace.
fn ask(request: &Request, own: Duration) -> Result<Reply, String> {
    let line = serde_json::to_string(request).expect("a request serializes");
    let answer = worker::ask(&line, own).map_err(|e| e.to_string())?;
    match serde_json::from_str(&answer) {
        Ok(Reply::Unreadable(why)) => Err(why),
        Ok(r) => Ok(r),
        Err(e) => Err(format!("the solver's worker answered garbage: {e}")),
    }
}

/// The worker's answer to one request line.
pub fn answer(line: &str) -> String {
    let reply = match serde_json::from_str::<Request>(line) {
        Ok(Request::Check(req)) => Reply::Check(answer_check(&req)),
        Ok(Request::Prove(req)) => answer_prove(&req),
        Ok(Request::Range(req)) => answer_range(&req),
        Err(e) => Reply::Unreadable(format!("the worker could not read the request: {e}")),
    };
    serde_json::to_string(&reply).expect("a reply serializes")
}

/// The worker's loop ([`worker::serve`] answering with [`answer`]).
pub fn serve() -> std::io::Result<()> {
    worker::serve(answer)
}

// ---- the range analysis ----

/// One query of the range analysis's proof, as the worker receives it.
#[derive(Serialize, Deserialize)]
struct RangeRequest {
    query: RangeQuery,
    share: Duration,
}

/// A lemma, or one try at a transfer function (by its index in
/// [`ranges::signatures`]: the worker is the same executable).
#[derive(Serialize, Deserialize)]
enum RangeQuery {
    Lemma(usize),
    Transfer {
        signature: usize,
        width: u32,
        attempt: Attempt,
    },
}

fn answer_range(req: &RangeRequest) -> Reply {
    match req.query {
        RangeQuery::Lemma(i) => Reply::Range(ranges::prove_lemma(i, req.share), None),
        RangeQuery::Transfer {
            signature,
            width,
            attempt,
        } => match ranges::signatures().get(signature) {
            Some((op, args, dt)) => {
                let (v, d) = ranges::try_transfer(*op, args, *dt, width, attempt, req.share);
                Reply::Range(v, d)
            }
            None => Reply::Unreadable(format!("no transfer function numbered {signature}")),
        },
    }
}

/// Asks a worker a range query, killed past its share.
fn ask_range(query: RangeQuery, share: Duration) -> (VerdictKind, Option<String>) {
    match ask(&Request::Range(RangeRequest { query, share }), share) {
        Ok(Reply::Range(v, d)) => (v, d),
        Ok(_) => (
            VerdictKind::Unknown,
            Some("the solver's worker answered another question".into()),
        ),
        Err(why) => (VerdictKind::Unknown, Some(why)),
    }
}

/// Lemma `index` of [`ranges::lemma_names`], in a worker where one is
/// installed, killed past `timeout`.
pub fn prove_range_lemma(index: usize, timeout: Duration) -> VerdictKind {
    if !worker::installed() {
        return ranges::prove_lemma(index, timeout);
    }
    ask_range(RangeQuery::Lemma(index), timeout).0
}

/// One try at transfer function `signature` of [`ranges::signatures`]
/// ([`ranges::try_transfer`]), in a worker where one is installed, killed
/// past `share`.
pub fn try_transfer(
    signature: usize,
    width: u32,
    attempt: Attempt,
    share: Duration,
) -> (VerdictKind, Option<String>) {
    if !worker::installed() {
        let sigs = ranges::signatures();
        let (op, args, dt) = &sigs[signature];
        return ranges::try_transfer(*op, args, *dt, width, attempt, share);
    }
    let query = RangeQuery::Transfer {
        signature,
        width,
        attempt,
    };
    ask_range(query, share)
}

// ---- checks ----

/// One check, as the worker receives it.
#[derive(Serialize, Deserialize)]
struct CheckRequest {
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
    UnboundedInteger,
}

impl From<Method> for WireMethod {
    fn from(m: Method) -> WireMethod {
        match m {
            Method::Interpreter => WireMethod::Interpreter,
            Method::Jit => WireMethod::Jit,
            Method::Solver(Mode::Bv) => WireMethod::Bitvector,
            Method::Solver(Mode::Int) => WireMethod::BoundedInteger,
            Method::Unbounded => WireMethod::UnboundedInteger,
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
            WireMethod::UnboundedInteger => Method::Unbounded,
        }
    }
}

/// A check's answer.
#[derive(Serialize, Deserialize)]
enum CheckReply {
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

/// `tgt` against `src` under `model` ([`check`]), within `timeout` plus
/// [`worker::GRACE`] of wall time whatever the solver does: in a worker
/// process where one is installed.
pub fn check_within_deadline(
    g: &Graph,
    src: &[NodeId],
    tgt: &[NodeId],
    model: Model,
    timeout: Duration,
) -> CheckResult {
    if !worker::installed() {
        let deadline = Instant::now() + timeout;
        return crate::solver::with_deadline(deadline, || check(g, src, tgt, model, timeout));
    }
    let request = Request::Check(CheckRequest {
        text: program_text(g, src, tgt),
        width: model.width.0,
        partial: Partial::ALL
            .iter()
            .position(|&p| p == model.partial)
            .expect("every partial semantics is listed"),
        unbounded: model.unbounded,
        timeout_ms: millis(timeout),
    });
    let reply = match ask(&request, timeout) {
        Ok(Reply::Check(r)) => r,
        Ok(_) => {
            return CheckResult::Unknown {
                reason: "the solver's worker answered another question".into(),
            }
        }
        Err(reason) => return CheckResult::Unknown { reason },
    };
    match reply {
        CheckReply::Equivalent { method } => CheckResult::Equivalent {
            method: method.into(),
        },
        CheckReply::Vacuous => CheckResult::Vacuous,
        CheckReply::Unknown { reason } => CheckResult::Unknown { reason },
        CheckReply::Counterexample {
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

/// One check's answer, in the worker, bounded by its timeout.
fn answer_check(req: &CheckRequest) -> CheckReply {
    let p = match engine::parse::parse_program(&req.text) {
        Ok(p) => p,
        Err(e) => {
            return CheckReply::Unknown {
                reason: format!("the worker could not read the program: {e}"),
            }
        }
    };
    let Some(&partial) = Partial::ALL.get(req.partial) else {
        return CheckReply::Unknown {
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
        CheckResult::Equivalent { method } => CheckReply::Equivalent {
            method: method.into(),
        },
        CheckResult::Vacuous => CheckReply::Vacuous,
        CheckResult::Unknown { reason } => CheckReply::Unknown { reason },
        CheckResult::Counterexample {
            failure,
            method,
            point,
            ..
        } => CheckReply::Counterexample {
            failure: failure_index(failure),
            method: method.into(),
            env: point.iter().map(|(_, v)| v.to_string()).collect(),
        },
    }
}

// ---- proofs ----

/// One rule's query (width-generic, or at one width), as the worker
/// receives it: the rule as its file states it, and what of the caller's
/// [`Options`] that query reads.
#[derive(Serialize, Deserialize)]
struct ProveRequest {
    /// `group G` and `rule NAME: TEXT` lines.
    rule_text: String,
    rule_file: String,
    /// `None`: the width-generic query.
    width: Option<u32>,
    /// The unbounded-integer query (`width` is its nominal one).
    #[serde(default)]
    unbounded: bool,
    first_ms: u64,
    timeout_ms: u64,
    query_timeout_ms: Option<u64>,
    /// What is left of the run's budget, if it has one.
    budget_ms: Option<u64>,
    cache: Option<PathBuf>,
    smt2_dir: Option<PathBuf>,
    seed: u32,
    portfolio: bool,
    walk: bool,
    /// The lemma set's files; `None`: the built-in set (its file is the
    /// worker's own, not sent with every request).
    lemma_files: Option<Vec<(String, String)>>,
    /// The caller's proofs of the lemmas the rule cites.
    lemma_results: Vec<LemmaResult>,
}

/// Why a width-generic attempt did not settle a rule, on the wire.
#[derive(Serialize, Deserialize)]
struct WireNotSettled {
    kind: WidthByWidth,
    why: String,
    seconds: f64,
    spent: Spent,
}

/// One rule at one width, on the wire.
#[derive(Serialize, Deserialize)]
struct WireResult {
    verdict: WireVerdict,
    method: WireMethod,
    solver: SolverKind,
    cached: bool,
    seconds: f64,
    notes: Vec<String>,
    budget: Option<Spent>,
    /// Cache entries the worker found not to be proofs.
    rejected: Vec<(PathBuf, String)>,
}

#[derive(Serialize, Deserialize)]
enum WireVerdict {
    Proved,
    Vacuous,
    Disputed {
        reason: String,
    },
    Unknown {
        reason: String,
    },
    /// A counterexample (found failing, or not reproduced there: the
    /// caller reproduces it again, and its interpreter decides).
    Counterexample(WireCex),
}

/// A counterexample's model values.
#[derive(Serialize, Deserialize)]
struct WireCex {
    types: Vec<String>,
    /// Index into [`Failure::ALL`].
    failure: usize,
    vars: Vec<WireVar>,
    nodes: Vec<WireNode>,
}

#[derive(Serialize, Deserialize)]
struct WireVar {
    name: String,
    dtype: String,
    constant: bool,
    state: State,
    /// Decimal: an `i128` is no JSON number.
    value: String,
    lo: String,
    hi: String,
}

#[derive(Serialize, Deserialize)]
struct WireNode {
    source: bool,
    text: String,
    state: State,
    value: String,
    dtype: String,
}

/// A rule's width-generic query ([`crate::prove::prove_generic`]), in a
/// worker where one is installed, killed past the query's bound.
pub fn prove_generic(rule: &Rule, opts: &Options) -> Result<(bool, f64), NotSettled> {
    // Past the run's budget the query is not tried: no worker is needed
    // to say so.
    if !worker::installed() || opts.past_deadline().is_some() {
        return crate::prove::prove_generic(rule, opts);
    }
    crate::prove::prove_lemmas(rule, opts);
    let start = Instant::now();
    let own = query_wait(opts);
    let outcome = ask(&prove_request(rule, None, opts, opts.timeout), own);
    match outcome {
        Ok(Reply::Generic(Ok(r))) => Ok(r),
        Ok(Reply::Generic(Err(n))) => Err((n.kind, n.why, n.seconds, n.spent)),
        Ok(_) => Err(not_settled(
            "the solver's worker answered another question".into(),
            start,
            opts,
        )),
        Err(why) => Err(not_settled(why, start, opts)),
    }
}

fn not_settled(why: String, start: Instant, opts: &Options) -> NotSettled {
    (
        WidthByWidth::Unsettled,
        format!("the width-generic query is unknown ({why})"),
        start.elapsed().as_secs_f64(),
        Spent::new(opts.query_bound()),
    )
}

/// A rule at one width ([`crate::prove::prove_width`]), in a worker where
/// one is installed, killed past the query's bound.
pub fn prove_width(rule: &Rule, width: u32, opts: &Options, first: Duration) -> RuleResult {
    if !worker::installed() || opts.past_deadline().is_some() {
        return crate::prove::prove_width(rule, width, opts, first);
    }
    prove_row(rule, Row::Width(width), opts, first)
}

/// A rule over the unbounded integers ([`crate::prove::prove_unbounded`]),
/// in a worker where one is installed, killed past the query's bound.
pub fn prove_unbounded(rule: &Rule, opts: &Options) -> RuleResult {
    if !worker::installed() || opts.past_deadline().is_some() {
        return crate::prove::prove_unbounded(rule, opts);
    }
    prove_row(rule, Row::Unbounded, opts, opts.timeout)
}

/// Which row of a rule a worker proves.
#[derive(Clone, Copy)]
enum Row {
    Width(u32),
    Unbounded,
}

/// A row's query in a worker, its counterexample confirmed here.
fn prove_row(rule: &Rule, row: Row, opts: &Options, first: Duration) -> RuleResult {
    crate::prove::prove_lemmas(rule, opts);
    let start = Instant::now();
    // Its walks are within the query's bound too.
    let own = query_wait(opts);
    let (width, unbounded) = match row {
        Row::Width(w) => (w, false),
        Row::Unbounded => (crate::encode::Enc::unbounded_integers().width, true),
    };
    let mut request = prove_request(rule, Some(width), opts, first);
    if let Request::Prove(r) = &mut request {
        r.unbounded = unbounded;
    }
    let reply = ask(&request, own);
    let unknown = |reason: String| {
        let spent = Spent::new(opts.query_bound());
        RuleResult::unknown(
            rule,
            width,
            reason,
            start.elapsed().as_secs_f64(),
            Some(spent),
        )
    };
    let w = match reply {
        Ok(Reply::Width(w)) => w,
        Ok(_) => return unknown("the solver's worker answered another question".into()),
        Err(why) => return unknown(why),
    };
    if let Some(cache) = &opts.cache {
        for (path, why) in w.rejected {
            cache.note_rejected(path, why);
        }
    }
    let verdict = match w.verdict {
        WireVerdict::Proved => ProofVerdict::Proved,
        WireVerdict::Vacuous => ProofVerdict::Vacuous,
        WireVerdict::Disputed { reason } => ProofVerdict::Disputed { reason },
        WireVerdict::Unknown { reason } => ProofVerdict::Unknown { reason },
        WireVerdict::Counterexample(c) => match confirm(rule, width, unbounded, c) {
            Ok(Ok(cex)) => ProofVerdict::Failed {
                counterexample: Box::new(cex),
            },
            Ok(Err(internal_error)) => ProofVerdict::InternalError { internal_error },
            Err(why) => return unknown(why),
        },
    };
    let method = w.method.into();
    RuleResult {
        rule: rule.name.clone(),
        width,
        verdict,
        method,
        solver: w.solver,
        cached: w.cached,
        instances: rule.instances().len(),
        seconds: w.seconds,
        notes: w.notes,
        cross_check: Default::default(),
        width_generic: false,
        generic_attempt_seconds: 0.0,
        budget: w.budget,
        generic_budget: None,
        width_by_width: None,
    }
}

/// How long a worker's proof is waited for: the query's bound, cut to
/// what is left of the run's budget.
fn query_wait(opts: &Options) -> Duration {
    let mut own = opts
        .query_bound()
        .unwrap_or(Duration::from_secs(86_400 * 365));
    if let Some(d) = opts.deadline {
        own = own.min(d.saturating_duration_since(Instant::now()));
    }
    own
}

/// The worker's counterexample, realized and confirmed here: a failure
/// (`Ok(Ok)`), or one the interpreter does not reproduce (`Ok(Err)`, a
/// bug in tileproof); `Err` where the values are not a counterexample of
/// this rule at all.
fn confirm(
    rule: &Rule,
    width: u32,
    unbounded: bool,
    c: WireCex,
) -> Result<Result<Counterexample, Box<crate::counterexample::InternalError>>, String> {
    let bad = || "the solver's worker answered a counterexample that is not one".to_string();
    let types: Vec<DType> = rule
        .instances()
        .into_iter()
        .find(|t| type_names(rule, t) == c.types)
        .ok_or_else(bad)?;
    let failure = *Failure::ALL.get(c.failure).ok_or_else(bad)?;
    let wide = |s: &str| s.parse::<i128>().map_err(|_| bad());
    let dtype = |s: &str| DType::from_name(s).ok_or_else(bad);
    let vars = c
        .vars
        .iter()
        .map(|v| {
            Ok(VarValue {
                name: v.name.clone(),
                dtype: dtype(&v.dtype)?,
                constant: v.constant,
                state: v.state,
                value: wide(&v.value)?,
                lo: wide(&v.lo)?,
                hi: wide(&v.hi)?,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let nodes = c
        .nodes
        .iter()
        .map(|n| {
            Ok(NodeValue {
                side: if n.source { "source" } else { "target" },
                text: n.text.clone(),
                state: n.state,
                value: wide(&n.value)?,
                dtype: dtype(&n.dtype)?,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    if vars.len() != rule.vars.len() {
        return Err(bad());
    }
    let cex = Counterexample {
        rule: rule.name.clone(),
        width,
        unbounded,
        types: c.types,
        failure,
        vars,
        nodes,
        case: None,
        confirmed: Err(Unconfirmed::NotYetChecked),
    };
    Ok(reproduce(rule, &types, cex))
}

fn wire_cex(c: &Counterexample) -> WireCex {
    WireCex {
        types: c.types.clone(),
        failure: failure_index(c.failure),
        vars: c
            .vars
            .iter()
            .map(|v| WireVar {
                name: v.name.clone(),
                dtype: v.dtype.name().to_string(),
                constant: v.constant,
                state: v.state,
                value: v.value.to_string(),
                lo: v.lo.to_string(),
                hi: v.hi.to_string(),
            })
            .collect(),
        nodes: c
            .nodes
            .iter()
            .map(|n| WireNode {
                source: n.side == "source",
                text: n.text.clone(),
                state: n.state,
                value: n.value.to_string(),
                dtype: n.dtype.name().to_string(),
            })
            .collect(),
    }
}

fn failure_index(f: Failure) -> usize {
    Failure::ALL
        .iter()
        .position(|&x| x == f)
        .expect("every failure is listed")
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The request for `rule`'s query at `width` (`None`: width-generic).
fn prove_request(rule: &Rule, width: Option<u32>, opts: &Options, first: Duration) -> Request {
    let lemma_results = rule
        .lemmas
        .iter()
        .map(|u| {
            opts.lemmas
                .result(&u.name, opts.timeout, opts.cache.as_ref())
        })
        .collect();
    Request::Prove(Box::new(ProveRequest {
        rule_text: rule_text(rule),
        rule_file: rule.file.clone(),
        width,
        unbounded: false,
        first_ms: millis(first),
        timeout_ms: millis(opts.timeout),
        query_timeout_ms: opts.query_timeout.map(millis),
        budget_ms: opts
            .deadline
            .map(|d| millis(d.saturating_duration_since(Instant::now()))),
        cache: opts.cache.as_ref().map(|c| c.dir().to_path_buf()),
        smt2_dir: opts.smt2_dir.clone(),
        seed: opts.seed,
        portfolio: opts.portfolio,
        walk: opts.walk,
        lemma_files: (opts.lemmas.sources() != crate::lemma::builtin().sources())
            .then(|| opts.lemmas.sources().to_vec()),
        lemma_results,
    }))
}

/// A rule as a rule file states it (its text is the file's, whitespace
/// collapsed), in its group, on its own line of the file (a message about
/// it names the line the user wrote).
pub fn rule_text(rule: &Rule) -> String {
    let above = "\n".repeat(rule.line.saturating_sub(2) as usize);
    format!(
        "{above}group {}\nrule {}: {}\n",
        rule.group, rule.name, rule.text
    )
}

/// The lemma sets and caches a worker has read, kept across its requests:
/// a lemma proved (or told proved) once is not proved again, and a cache
/// is opened once.
static LEMMA_SETS: Mutex<Vec<Arc<Lemmas>>> = Mutex::new(Vec::new());
static CACHES: Mutex<Vec<Cache>> = Mutex::new(Vec::new());

fn lemma_set(files: Option<&[(String, String)]>) -> Result<Arc<Lemmas>, String> {
    let Some(files) = files else {
        return Ok(crate::lemma::builtin());
    };
    let mut sets = LEMMA_SETS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(s) = sets.iter().find(|s| s.sources() == files) {
        return Ok(s.clone());
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(f, t)| (f.as_str(), t.as_str()))
        .collect();
    let set = Arc::new(Lemmas::parse_files(&refs).map_err(|e| e.to_string())?);
    sets.push(set.clone());
    Ok(set)
}

fn cache_at(dir: &PathBuf) -> Cache {
    let mut caches = CACHES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(c) = caches.iter().find(|c| c.dir() == dir) {
        return c.clone();
    }
    let c = Cache::new(dir.clone());
    caches.push(c.clone());
    c
}

/// Set (to milliseconds) in a worker's environment, it sleeps that long
/// before each proof, heeding no deadline: how a test stands for a solver
/// that does not return, to show that the caller kills it at the deadline.
pub const STALL_ENV: &str = "TILEPROOF_TEST_WORKER_STALL_MS";

/// One rule's query, in the worker.
fn answer_prove(req: &ProveRequest) -> Reply {
    if let Some(ms) = std::env::var(STALL_ENV).ok().and_then(|v| v.parse().ok()) {
        std::thread::sleep(Duration::from_millis(ms));
    }
    let set = match RuleSet::parse(&req.rule_file, &req.rule_text) {
        Ok(s) => s,
        Err(e) => return Reply::Unreadable(format!("the worker could not read the rule: {e}")),
    };
    let Some(rule) = set.rules().next() else {
        return Reply::Unreadable("the worker was sent no rule".into());
    };
    let lemmas = match lemma_set(req.lemma_files.as_deref()) {
        Ok(l) => l,
        Err(e) => return Reply::Unreadable(format!("the worker could not read the lemmas: {e}")),
    };
    for r in &req.lemma_results {
        lemmas.assume(r.clone());
    }
    let opts = Options {
        widths: req.width.into_iter().collect(),
        timeout: Duration::from_millis(req.timeout_ms),
        query_timeout: req.query_timeout_ms.map(Duration::from_millis),
        deadline: req
            .budget_ms
            .map(|ms| Instant::now() + Duration::from_millis(ms)),
        cache: req.cache.as_ref().map(cache_at),
        smt2_dir: req.smt2_dir.clone(),
        seed: req.seed,
        lemmas,
        cross_check: false,
        per_width: false,
        portfolio: req.portfolio,
        walk: req.walk,
    };
    let Some(width) = req.width else {
        return Reply::Generic(crate::prove::prove_generic(rule, &opts).map_err(
            |(kind, why, seconds, spent)| WireNotSettled {
                kind,
                why,
                seconds,
                spent,
            },
        ));
    };
    let first = Duration::from_millis(req.first_ms);
    let r = if req.unbounded {
        crate::prove::prove_unbounded(rule, &opts)
    } else {
        crate::prove::prove_width(rule, width, &opts, first)
    };
    let verdict = match r.verdict {
        ProofVerdict::Proved => WireVerdict::Proved,
        ProofVerdict::Vacuous => WireVerdict::Vacuous,
        ProofVerdict::Disputed { reason } => WireVerdict::Disputed { reason },
        ProofVerdict::Unknown { reason } => WireVerdict::Unknown { reason },
        ProofVerdict::Failed { counterexample } => {
            WireVerdict::Counterexample(wire_cex(&counterexample))
        }
        ProofVerdict::InternalError { internal_error } => {
            WireVerdict::Counterexample(wire_cex(&internal_error.counterexample))
        }
    };
    Reply::Width(Box::new(WireResult {
        verdict,
        method: r.method.into(),
        solver: r.solver,
        cached: r.cached,
        seconds: r.seconds,
        notes: r.notes,
        budget: r.budget,
        rejected: opts.cache.as_ref().map(Cache::rejected).unwrap_or_default(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A worker reads each rule from [`rule_text`]: every built-in rule
    /// reads back as the same rule (its sides, guard, variables, types and
    /// lemmas).
    #[test]
    fn every_builtin_rule_reads_back_from_the_text_a_worker_is_sent() {
        // Where a citation's arguments are written is not what they say:
        // a rule of several lines is read back as one.
        let without_spans = |mut s: String| {
            while let Some(i) = s.find("span: Span {") {
                let end = s[i..].find('}').map_or(s.len(), |j| i + j + 1);
                s.replace_range(i..end, "");
            }
            s
        };
        let shape = |r: &Rule| {
            without_spans(format!(
                "{:?} {:?} {:?} {:?} {:?} {:?}",
                r.lhs, r.rhs, r.guard, r.vars, r.tyvars, r.lemmas
            ))
        };
        let mut n = 0;
        for rule in engine::rules::builtin().rules() {
            let set = RuleSet::parse(&rule.file, &rule_text(rule))
                .unwrap_or_else(|e| panic!("{}: {e}", rule.name));
            let back = set.rules().next().expect("one rule");
            assert_eq!((&back.name, back.line), (&rule.name, rule.line));
            assert_eq!(shape(back), shape(rule), "{}", rule.name);
            n += 1;
        }
        assert!(n > 200, "{n} rules");
    }
}
