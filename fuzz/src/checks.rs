//! The per-case checks: one definition of "this case fails", shared by
//! campaigns, the shrinker (which keeps a case only while it fails the same
//! check), corpus replay and the libFuzzer targets, so that a finding means
//! the same thing wherever it is reproduced.
//!
//! A case (a graph and its roots) is simplified once; then each check looks
//! at the original (source) and the simplified form (target):
//!
//! | kind         | fails when                                                  |
//! |--------------|-------------------------------------------------------------|
//! | `cap`        | the rewriter hit its cap ([`engine::rewrite::CapError`])    |
//! | `oracle`     | the JIT oracle finds a point where the target does not refine the source (whole domain, or sampled past [`CheckConfig::limits`]) |
//! | `range`      | at a probe point, some node's interpreted value lies outside its `[vmin, vmax]` |
//! | `unsound-bounds` | a peer's own bounds of a node of the source (its `bounds` answer) exclude a value the node takes somewhere in the domain ([`crate::bounds`]) |
//! | `idempotent` | simplifying the simplified form changes it                  |
//! | `jit`        | at a probe point, the oracle's evaluator for the case (the JIT's [`crate::jit::CompiledEval`], or the batched evaluator for small domains: [`oracle::point_evaluator`]) and `interp::eval` disagree (or the JIT cannot compile) |
//! | `validate`   | the validator hook (SMT, supplied by the CLI) reports a failure |
//! | `lower`      | the simplified form lowered to i32/i64 ([`engine::lower`]), compiled with its concrete widths, differs from it somewhere in the domain (forms with `invalid` below a root are not lowerable and are skipped) |
//! | `panic`      | anything above panicked                                     |
//!
//! `cap` and `panic` are always reported (nothing else can run after them);
//! the others are selected with a [`KindSet`]. Panics are caught here, never
//! propagated: a fuzzer that dies on the first panic loses the rest of the
//! campaign.

use crate::bounds::PeerBounds;
use crate::confirm::{Class, Confirmation};
use crate::oracle::{self, Domain, OracleConfig};
use crate::subject::{Answer, Subject};
use engine::dtype::Width;
use engine::interp::{self, Evaluator, Val};
use engine::ir::{Graph, NodeId};
use engine::semantics::Model;
use engine::walk::Limits;
use std::cell::{Cell, RefCell};
use std::fmt;

pub use crate::kind::{Kind, KindSet};
pub use crate::message::{one_line, short, short_expr, SHORT};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

/// What an independent check (SMT, then an exhaustive walk where SMT
/// could not decide) decided about a source and its simplification.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValidationVerdict {
    /// Every point refines: the solver proved it.
    Equivalent,
    /// Every point refines: the solver could not decide, an exhaustive walk
    /// of the domain did.
    EquivalentByEnumeration,
    /// The source is undefined at every point: nothing to refine.
    Vacuous,
    /// A point where the target does not refine the source.
    Counterexample,
    /// Not decided: not a finding, and never a pass.
    Unknown,
}

impl ValidationVerdict {
    pub fn name(self) -> &'static str {
        match self {
            ValidationVerdict::Equivalent => "equivalent",
            ValidationVerdict::EquivalentByEnumeration => "equivalent by enumeration",
            ValidationVerdict::Vacuous => "vacuous",
            ValidationVerdict::Counterexample => "counterexample",
            ValidationVerdict::Unknown => "unknown",
        }
    }

    /// Every point was shown to refine.
    pub fn proves(self) -> bool {
        matches!(
            self,
            ValidationVerdict::Equivalent
                | ValidationVerdict::EquivalentByEnumeration
                | ValidationVerdict::Vacuous
        )
    }
}

impl fmt::Display for ValidationVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl serde::Serialize for ValidationVerdict {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// What the validator hook said about a source and its simplification.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Validation {
    pub verdict: ValidationVerdict,
    /// One line saying how the target fails to refine the source (a
    /// finding), or why the validator could not tell (`unknown`: not a
    /// finding, never a pass).
    pub detail: Option<String>,
    /// The target fails to refine the source.
    pub fails: bool,
    /// The failing point, indexed like the graph's variable table.
    pub point: Option<Vec<i128>>,
}

/// The validator hook: `(graph, source roots, target roots)` to what an
/// independent check (SMT) says. The CLI plugs `verify::check` in here, so
/// this crate does not depend on the verifier.
pub type Validator<'a> = dyn Fn(&Graph, &[NodeId], &[NodeId]) -> Validation + Sync + 'a;

/// How the checks run (the simplifier carries its own width and cap).
#[derive(Clone, Debug)]
pub struct CheckConfig {
    /// The width `index` is checked at by the oracle and the probes.
    pub width: Width,
    /// What the oracle walks of a domain: every point within them, else a
    /// sample.
    pub limits: Limits,
    /// Points at which the `range` and `jit` checks evaluate every node
    /// (the whole domain when it is smaller).
    pub probe_points: u64,
    /// Seed of sampled and probed points.
    pub seed: u64,
    /// Let the oracle split a domain across cores.
    pub parallel: bool,
    pub kinds: KindSet,
}

/// The verdict under a profile's own, relaxed model, recorded beside the
/// strict one (tinygrad declares partial ops unspecified).
#[derive(Clone, Debug, PartialEq)]
pub struct Relaxed {
    /// What the profile relaxes (`partial_ops: unspecified`).
    pub what: String,
    /// The answer refines the source under the relaxed model too (on what
    /// the oracle walked).
    pub holds: bool,
    /// One line: the relaxed oracle's report.
    pub report: String,
}

impl Relaxed {
    /// The `# relaxed:` header line.
    pub fn header(&self) -> String {
        if self.holds {
            format!(
                "{}: {}; the strict model and the backend decide",
                self.what, self.report
            )
        } else {
            format!("{}: fails too: {}", self.what, self.report)
        }
    }
}

impl Default for CheckConfig {
    fn default() -> CheckConfig {
        CheckConfig {
            width: Width::W64,
            limits: Limits::CASE,
            probe_points: 64,
            seed: 0,
            parallel: true,
            kinds: KindSet::ALL,
        }
    }
}

impl CheckConfig {
    /// This configuration, running only the check `kind`.
    pub fn only(&self, kind: Kind) -> CheckConfig {
        CheckConfig {
            kinds: KindSet::only(kind),
            ..self.clone()
        }
    }

    /// The checks of one step of finding a cause (a rule applied alone, a
    /// subterm, a shrink candidate kept to its cause): the failure is
    /// already known to show at the domain's edges and special values, so
    /// a smaller walk finds it again, on this thread.
    pub fn quick(&self) -> CheckConfig {
        let t = Limits::TRIAGE;
        CheckConfig {
            limits: Limits {
                whole: self.limits.whole.min(t.whole),
                samples: self.limits.samples.min(t.samples),
            },
            parallel: false,
            ..self.clone()
        }
    }

    pub(crate) fn oracle(&self) -> OracleConfig {
        OracleConfig {
            width: self.width,
            limits: self.limits,
            seed: self.seed,
            parallel: self.parallel,
            ..OracleConfig::default()
        }
    }
}

/// One failed check.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckFailure {
    pub kind: Kind,
    /// One line saying what failed.
    pub message: String,
    /// The failing point (domain variables and values), when there is one.
    pub point: Option<Vec<(String, i64)>>,
    /// `point` as the input syntax writes it, printed once for the message
    /// and kept for the `# point:` header.
    pub shown: Option<String>,
    /// The failing point as a full environment, indexed like the graph's
    /// variable table (for `interp::eval`).
    pub env: Option<Vec<i64>>,
    /// The node the failure is about, when it is one node's (an
    /// `unsound-bounds` finding's): its cause is that node's shape.
    pub node: Option<NodeId>,
}

impl CheckFailure {
    fn new(kind: Kind, message: impl Into<String>) -> CheckFailure {
        CheckFailure {
            kind,
            message: message.into(),
            point: None,
            shown: None,
            env: None,
            node: None,
        }
    }
}

impl fmt::Display for CheckFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

/// The outcome of checking one case.
#[derive(Clone)]
pub struct Checked {
    /// The case's graph with the simplified form's nodes added.
    pub graph: Graph,
    /// The original roots.
    pub src: Vec<NodeId>,
    /// The simplified roots; `None` when simplification failed (cap, panic).
    pub tgt: Option<Vec<NodeId>>,
    /// Firings per rule of the (first) simplification, indexed like the
    /// subject's rule names; empty when it failed (or for a peer).
    pub counts: Vec<usize>,
    /// For a rule applied alone, the patterns of it that made the rewrite
    /// (an `apply` answer's `patterns`: each a rule of its own).
    pub patterns: Vec<String>,
    /// Every check that failed, in the order they ran.
    pub failures: Vec<CheckFailure>,
    /// The subject declined the case (a peer's `unsupported`), and why:
    /// nothing was checked, and nothing failed.
    pub unsupported: Option<String>,
    /// It was a single rule that declined the case (its pattern does not
    /// match, or its function returned None; `unsupported` says why).
    pub declined: bool,
    /// What the validator said, when it ran.
    pub validation: Option<Validation>,
    /// What the JIT oracle walked, when it ran.
    pub oracle: Option<oracle::Report>,
    /// The verdict under the profile's relaxed model, for an oracle
    /// finding against a subject that declares one.
    pub relaxed: Option<Relaxed>,
    /// For a finding against a peer: its class, by the peer's own compiled
    /// code where it was run ([`crate::classify`], a step after the check;
    /// the check itself sets only the classes no backend is needed for).
    pub class: Option<Confirmation>,
    /// The lowest node whose peer bound misses a value it takes (the
    /// transfer function that is wrong), when the peer's bounds were asked
    /// and some bound misses: an `unsound-bounds` finding's violation, and
    /// what a crash or a wrong answer may have trusted.
    pub wrong_bound: Option<crate::cause::transfer::Wrong>,
    /// The peer's own bounds of the source's nodes, when it gave them: what
    /// a finding's cause is weighed against ([`crate::cause::transfer`]).
    pub peer_bounds: Vec<crate::cause::transfer::PeerBound>,
    /// Every node whose peer bound excludes a value it takes, with where
    /// (empty when every bound holds, or none was asked).
    pub bounds_violations: Vec<crate::bounds::Violation>,
    /// Whether the subject's profile covers the source, when whoever made
    /// the case asked already (a shrink candidate is judged on it before
    /// it is checked): [`Checked::covered_by`] asks only otherwise.
    pub covered: Option<bool>,
    /// The peer's bounds of the source that came beside its answer when
    /// the bounds were not checked: what [`check_bounds`] checks later,
    /// without asking again.
    beside: Option<PeerBounds>,
}

impl Checked {
    /// Whether `subject`'s profile covers the source (the language it
    /// takes).
    pub fn covered_by(&self, subject: &dyn Subject) -> bool {
        self.covered
            .unwrap_or_else(|| subject.profile().covers(&self.graph, &self.src))
    }

    pub fn ok(&self) -> bool {
        self.failures.is_empty()
    }

    /// Whether its answer was `tgt` to `src` of `g`: the same nodes, held
    /// by the same graph (a check in a clone of its graph, or both in
    /// clones of one graph that held them), so the same comparison.
    fn compared(&self, g: &Graph, src: &[NodeId], tgt: &[NodeId]) -> bool {
        let same = |ours: &[NodeId], theirs: &[NodeId]| {
            ours == theirs && self.graph.holder(ours) == g.holder(theirs)
        };
        same(&self.src, src) && self.tgt.as_deref().is_some_and(|t| same(t, tgt))
    }

    pub fn failed(&self, kind: Kind) -> bool {
        self.failures.iter().any(|f| f.kind == kind)
    }

    pub fn failure(&self, kind: Kind) -> Option<&CheckFailure> {
        self.failures.iter().find(|f| f.kind == kind)
    }

    /// `(rule, count)` of the rules that fired, most frequent first
    /// (`names`: the subject's rule names).
    pub fn fired(&self, names: &[String]) -> Vec<(String, usize)> {
        let mut v: Vec<(String, usize)> = self
            .counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| (names[i].clone(), c))
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    }
}

impl Checked {
    /// The outcome of a program nothing was checked on: tileproof panicked
    /// making it or looking at its check (`message`).
    pub fn panicked(graph: Graph, src: Vec<NodeId>, message: String) -> Checked {
        Checked {
            failures: vec![CheckFailure::new(Kind::Panic, message)],
            ..Checked::unmade(graph, src)
        }
    }

    /// The check of `src` of `graph` before any check has run: nothing
    /// found yet.
    fn unmade(graph: Graph, src: Vec<NodeId>) -> Checked {
        Checked {
            graph,
            src,
            tgt: None,
            counts: Vec::new(),
            patterns: Vec::new(),
            failures: Vec::new(),
            unsupported: None,
            declined: false,
            validation: None,
            oracle: None,
            relaxed: None,
            class: None,
            wrong_bound: None,
            peer_bounds: Vec::new(),
            bounds_violations: Vec::new(),
            covered: None,
            beside: None,
        }
    }

    /// The check of only `kinds` that this check, of more kinds and under
    /// the same configuration and validator otherwise, made on its way,
    /// when it ran to its end (`None` after a panic, which stops a check
    /// where it is): each check judges the answer alone and none reads
    /// another's verdict, so a check of fewer kinds runs each of them as
    /// this one did, on the same answer (a peer answers a case the same way
    /// each time it is asked). `kinds` include the peer's bounds, so its
    /// bounds, the failures they show and the class they set are this
    /// check's; what the other kinds found (their failures, the oracle's
    /// report and relaxed verdict, the validator's) is dropped. Also `None`
    /// when a `jit` failure may be the oracle's (it did not compile), which
    /// a check of the oracle without `jit` makes as well: not told apart.
    pub fn narrowed(mut self, kinds: KindSet) -> Option<Checked> {
        debug_assert!(kinds.contains(Kind::Bounds));
        let oracle_jit = kinds.contains(Kind::Oracle) && !kinds.contains(Kind::Jit);
        if self.failed(Kind::Panic) || (oracle_jit && self.failed(Kind::Jit)) {
            return None;
        }
        self.failures.retain(|f| kinds.contains(f.kind));
        if !kinds.contains(Kind::Oracle) {
            (self.oracle, self.relaxed) = (None, None);
        }
        if !kinds.contains(Kind::Validate) {
            self.validation = None;
        }
        Some(self)
    }
}

// ---- catching panics --------------------------------------------------------

thread_local! {
    static CATCHING: Cell<bool> = const { Cell::new(false) };
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs (once) a panic hook that, on a thread inside [`catch`], records
/// the message and location instead of printing them, and otherwise defers
/// to the hook that was installed before. A campaign that catches a panic
/// reports it as a finding; printing it as well would only scramble the
/// progress display.
fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let prev = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if CATCHING.with(|c| c.get()) {
                let msg = payload_message(info.payload());
                let text = match info.location() {
                    Some(l) => format!("{msg} (at {}:{}:{})", l.file(), l.line(), l.column()),
                    None => msg,
                };
                LAST_PANIC.with(|p| *p.borrow_mut() = Some(text));
            } else {
                prev(info)
            }
        }));
    });
}

fn payload_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_string()
    }
}

/// Runs `f`, turning a panic into `Err(message and location)`.
pub fn catch<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    install_hook();
    let was = CATCHING.with(|c| c.replace(true));
    LAST_PANIC.with(|p| p.borrow_mut().take());
    let r = panic::catch_unwind(AssertUnwindSafe(f));
    CATCHING.with(|c| c.set(was));
    r.map_err(|payload| {
        LAST_PANIC
            .with(|p| p.borrow_mut().take())
            .unwrap_or_else(|| payload_message(&*payload))
    })
}

// ---- the checks ---------------------------------------------------------------

/// Simplifies `roots` of `g` (a copy) with `subject` and runs the checks
/// of `cfg.kinds` that concern it (a peer's answer: the oracle and the
/// validator; tileproof's engine: everything); `validate` runs the
/// validator hook when given (and `Validate` is selected). Never panics.
pub fn check(
    g: &Graph,
    roots: &[NodeId],
    subject: &dyn Subject,
    cfg: &CheckConfig,
    validate: Option<&Validator<'_>>,
) -> Checked {
    check_knowing(g, roots, subject, cfg, validate, None)
}

/// [`check`], knowing `known`, a check made under `cfg` or a walk at least
/// as thorough: where the answer is `known`'s to the same source (the same
/// nodes, held by the same graph: [`Graph::holder`]), the oracle's
/// comparison is the one `known` made, and its verdict is `known`'s, not
/// made again (a rule's pattern alone that gives its whole rule's answer).
pub fn check_knowing(
    g: &Graph,
    roots: &[NodeId],
    subject: &dyn Subject,
    cfg: &CheckConfig,
    validate: Option<&Validator<'_>>,
    known: Option<&Checked>,
) -> Checked {
    let mut out = Checked::unmade(g.clone(), roots.to_vec());
    if let Err(msg) = catch(|| run_checks(&mut out, subject, cfg, validate, known)) {
        out.failures
            .push(CheckFailure::new(Kind::Panic, one_line(&msg)));
    }
    out
}

/// The subject's answer: its roots, or `None` when it declined, refused
/// the case or failed on it (recorded in `out`: a failure of the subject's
/// own kind, classified for a peer, unless the source means nothing).
fn answer(
    out: &mut Checked,
    subject: &dyn Subject,
    cfg: &CheckConfig,
) -> Option<(Vec<NodeId>, Option<PeerBounds>)> {
    let profile = subject.profile();
    if profile.defined_everywhere {
        // The subject computes the whole domain at once: one undefined
        // point makes the case mean nothing to it (not sent).
        let m = profile.model_at(cfg.width);
        if oracle::undefined_somewhere(&out.graph, &out.src, m) == Some(true) {
            out.unsupported = Some(
                "the source is undefined at some point of its domain, which the peer computes as a whole (input_language.defined_everywhere)"
                    .into(),
            );
            return None;
        }
    }
    match subject.simplify(&mut out.graph, &out.src) {
        Ok(Answer::Simplified {
            roots,
            counts,
            patterns,
            bounds,
        }) => {
            out.counts = counts;
            out.patterns = patterns;
            Some((roots, bounds))
        }
        Ok(Answer::Unsupported(why)) => {
            out.unsupported = Some(why);
            None
        }
        Ok(Answer::Declined(why)) => {
            out.unsupported = Some(format!("the rule declined it: {why}"));
            out.declined = true;
            None
        }
        Err(refusal) => {
            if excused(subject, &out.graph, &out.src, &refusal, cfg) {
                out.unsupported = Some(format!(
                    "the source means nothing at any point and the simplifier failed ({})",
                    refusal.kind
                ));
            } else {
                if subject.engine().is_none() {
                    out.class = Some(subject_failure_class(
                        subject, &out.graph, &out.src, &refusal,
                    ));
                    if cfg.kinds.contains(Kind::Bounds) && refusal.kind == Kind::PeerError {
                        crashed_bounds(out, subject, cfg);
                    }
                }
                out.failures
                    .push(CheckFailure::new(refusal.kind, one_line(&refusal.message)));
            }
            None
        }
    }
}

/// The peer's bounds of a case its simplifier failed on, kept beside the
/// failure (not a finding of their own: the crash is the finding): a
/// crash may come after a step that trusted a wrong bound, and then that
/// bound is its cause ([`crate::cause::crash`]).
fn crashed_bounds(out: &mut Checked, subject: &dyn Subject, cfg: &CheckConfig) {
    let (bounded, failed) = peer_bounds_check(subject, &out.graph, &out.src, cfg, None);
    out.peer_bounds = bounded;
    if let Some((_, BoundsFound::Violation(w, all))) = failed {
        out.wrong_bound = Some(w);
        out.bounds_violations = all;
    }
}

/// Whether `tgt` fails to refine `src` at `env` with exact integers (the
/// `confirm` model): for a subject of unbounded integers, an overflow only
/// the W-bit check sees is not the subject's.
pub(crate) fn fails_exactly(
    g: &Graph,
    src: &[NodeId],
    tgt: &[NodeId],
    env: &[i128],
    confirm: Model,
) -> bool {
    let s = interp::eval(g, src, env, confirm);
    let t = interp::eval(g, tgt, env, confirm);
    interp::check_point(s, t).failure().is_some()
}

/// The idempotence check: simplifying the engine's answer again changes
/// nothing.
fn idempotent_check(
    simp: &engine::rewrite::Simplifier,
    g: &mut Graph,
    tgt: &[NodeId],
) -> Option<CheckFailure> {
    match simp.simplify(g, tgt, false) {
        Ok(again) if again.roots == tgt => None,
        Ok(again) => {
            let fired: Vec<String> = again
                .fired(simp)
                .into_iter()
                .map(|(n, c)| format!("{n} ({c}x)"))
                .collect();
            Some(CheckFailure::new(
                Kind::Idempotent,
                format!(
                    "simplifying again gives {} instead of {} (fired: {})",
                    show_roots(g, &again.roots),
                    show_roots(g, tgt),
                    fired.join(", ")
                ),
            ))
        }
        Err(e) => Some(CheckFailure::new(
            Kind::Idempotent,
            format!("simplifying the simplified form again: {e}"),
        )),
    }
}

/// The validator's verdict on `tgt`, an overflow exact integers do not
/// have made `unknown` (it proves nothing either way), and the failure it
/// shows.
fn validate_check(
    v: &Validator<'_>,
    g: &Graph,
    src: &[NodeId],
    tgt: &[NodeId],
    cfg: &CheckConfig,
    confirm: Model,
) -> (Validation, Option<CheckFailure>) {
    let mut val = v(g, src, tgt);
    let exact_ok = confirm.width != cfg.width
        && val.fails
        && val
            .point
            .as_ref()
            .is_some_and(|p| !fails_exactly(g, src, tgt, p, confirm));
    if exact_ok {
        val = Validation {
            verdict: ValidationVerdict::Unknown,
            detail: Some(format!(
                "the counterexample at width {} is an overflow exact integers do not have ({})",
                cfg.width,
                val.detail.as_deref().unwrap_or(val.verdict.name())
            )),
            fails: false,
            point: None,
        };
    }
    let failure = val.fails.then(|| {
        let msg = val
            .detail
            .clone()
            .unwrap_or_else(|| val.verdict.name().to_string());
        CheckFailure {
            kind: Kind::Validate,
            message: one_line(&msg),
            point: None,
            shown: None,
            env: val
                .point
                .as_ref()
                .map(|p| p.iter().map(|&v| v as i64).collect()),
            node: None,
        }
    });
    (val, failure)
}

fn run_checks(
    out: &mut Checked,
    subject: &dyn Subject,
    cfg: &CheckConfig,
    validate: Option<&Validator<'_>>,
    known: Option<&Checked>,
) {
    let Some((tgt, beside)) = answer(out, subject, cfg) else {
        return;
    };
    out.tgt = Some(tgt.clone());
    let compared = known.filter(|k| k.oracle.is_some() && k.compared(&out.graph, &out.src, &tgt));
    let (g, src) = (&mut out.graph, &out.src);
    // The checks of tileproof's own machinery (ranges, idempotence, the JIT
    // against the interpreter, lowering) concern the engine only.
    let kinds = match subject.engine() {
        Some(_) => cfg.kinds,
        None => cfg
            .kinds
            .without(Kind::Range)
            .without(Kind::Idempotent)
            .without(Kind::Jit)
            .without(Kind::Lower),
    };
    let confirm = subject.profile().confirm_model();
    let judged = subject.profile().model();
    let oracle_cfg = OracleConfig {
        partial: judged.partial,
        unbounded: judged.unbounded,
        ..cfg.oracle()
    };

    if let Some(k) = compared.filter(|_| kinds.contains(Kind::Oracle)) {
        out.failures.extend(k.failure(Kind::Oracle).cloned());
        out.relaxed = k.relaxed.clone();
        out.oracle = k.oracle.clone();
    } else if kinds.contains(Kind::Oracle) {
        match oracle::check_jit(g, src, &tgt, &oracle_cfg) {
            Ok(rep) => {
                // For unbounded integers, the point must fail with exact
                // arithmetic too: an overflow only the W-bit check sees is
                // not the subject's.
                let real = |f: &oracle::FailingPoint| {
                    confirm.width == cfg.width || {
                        let env: Vec<i128> = f.env.iter().map(|&v| v as i128).collect();
                        fails_exactly(g, src, &tgt, &env, confirm)
                    }
                };
                if let Some(f) = rep.failure.as_ref().filter(|f| real(f)) {
                    out.failures.push(CheckFailure {
                        kind: Kind::Oracle,
                        message: rep.to_string(),
                        point: Some(f.point.clone()),
                        shown: Some(f.shown.clone()),
                        env: Some(f.env.clone()),
                        node: None,
                    });
                    if let Some(m) = subject.profile().relaxed() {
                        out.relaxed = relaxed_verdict(g, src, &tgt, m, &oracle_cfg);
                    }
                }
                out.oracle = Some(rep);
            }
            Err(e) => out.failures.push(CheckFailure::new(
                Kind::Jit,
                format!("the oracle does not compile: {e}"),
            )),
        }
    }
    if kinds.contains(Kind::Bounds) && subject.engine().is_none() {
        bounds_of_answer(out, subject, cfg, beside);
    } else {
        out.beside = beside;
    }
    let (g, src) = (&mut out.graph, &out.src);
    if kinds.contains(Kind::Range) {
        if let Some(f) = range_check(g, src, &tgt, cfg) {
            out.failures.push(f);
        }
    }
    if let Some(simp) = subject
        .engine()
        .filter(|_| kinds.contains(Kind::Idempotent))
    {
        out.failures.extend(idempotent_check(simp, g, &tgt));
    }
    if kinds.contains(Kind::Jit) {
        if let Some(f) = jit_check(g, src, &tgt, cfg) {
            out.failures.push(f);
        }
    }
    if kinds.contains(Kind::Lower) {
        if let Some(f) = lower_check(g, &tgt, cfg) {
            out.failures.push(f);
        }
    }
    if let Some(v) = validate.filter(|_| kinds.contains(Kind::Validate)) {
        let (val, failure) = validate_check(v, g, src, &tgt, cfg, confirm);
        out.failures.extend(failure);
        out.validation = Some(val);
    }
}

/// `checked`'s bounds check, made after its others (a peer's only: the
/// engine has none), as a check of both kinds at once would have made it:
/// with the bounds that came beside its answer, so no request is sent
/// again (the innermost subterm a peer gets wrong, triaged further).
pub fn check_bounds(checked: &mut Checked, subject: &dyn Subject, cfg: &CheckConfig) {
    if checked.tgt.is_some() && subject.engine().is_none() {
        let beside = checked.beside.take();
        bounds_of_answer(checked, subject, cfg, beside);
    }
}

/// The peer's bounds check of `out`'s source, its findings recorded in
/// `out`.
fn bounds_of_answer(
    out: &mut Checked,
    subject: &dyn Subject,
    cfg: &CheckConfig,
    beside: Option<PeerBounds>,
) {
    let (bounded, failed) = peer_bounds_check(subject, &out.graph, &out.src, cfg, beside);
    out.peer_bounds = bounded;
    if let Some((f, found)) = failed {
        out.failures.push(f);
        match found {
            BoundsFound::Classed(class) => {
                out.class.get_or_insert(class);
            }
            BoundsFound::Violation(w, all) => {
                out.wrong_bound = Some(w);
                out.bounds_violations = all;
            }
        }
    }
}

/// What a peer's bounds check found beside its failure.
enum BoundsFound {
    /// The peer failed to give its bounds: a class no backend is needed for.
    Classed(Confirmation),
    /// The lowest wrong node, with a value outside its bounds, and every
    /// wrong node's values, classified later on the peer's backends
    /// ([`crate::classify`]).
    Violation(crate::cause::transfer::Wrong, Vec<crate::bounds::Violation>),
}

/// A peer's own bounds of every node of the source ([`crate::bounds`]),
/// against the values the nodes take: the bounds, and the failure when
/// some value lies outside its node's bounds (or the peer fails to give
/// them).
fn peer_bounds_check(
    subject: &dyn Subject,
    g: &Graph,
    src: &[NodeId],
    cfg: &CheckConfig,
    beside: Option<PeerBounds>,
) -> (
    Vec<crate::cause::transfer::PeerBound>,
    Option<(CheckFailure, BoundsFound)>,
) {
    let asked = match beside {
        Some(b) => Ok(Some(b)),
        None => subject.bounds(g, src),
    };
    let bounds = match asked {
        Ok(Some(b)) => b,
        Ok(None) => return (Vec::new(), None),
        // The simplifier's triage holds for its analysis too.
        Err(refusal) if excused(subject, g, src, &refusal, cfg) => return (Vec::new(), None),
        Err(refusal) => {
            let class = subject_failure_class(subject, g, src, &refusal);
            let msg = format!("asked for its bounds: {}", one_line(&refusal.message));
            return (
                Vec::new(),
                Some((
                    CheckFailure::new(refusal.kind, msg),
                    BoundsFound::Classed(class),
                )),
            );
        }
    };
    let with_ops = match crate::bounds::per_node_ops(g, src, &bounds) {
        Ok(n) => n,
        Err(e) => {
            let msg = format!("the bounds answer does not match the case: {e}");
            let class = Confirmation::without_backend(Class::Garbage, msg.clone());
            return (
                Vec::new(),
                Some((
                    CheckFailure::new(Kind::Garbage, msg),
                    BoundsFound::Classed(class),
                )),
            );
        }
    };
    let bounded: Vec<crate::cause::transfer::PeerBound> = with_ops
        .iter()
        .map(|(node, bound, op)| crate::cause::transfer::PeerBound {
            node: *node,
            bound: *bound,
            op: op.clone(),
        })
        .collect();
    // A node bounded twice (a shared subtree written twice) keeps both.
    let mut nodes: Vec<(NodeId, crate::bounds::Bound)> = Vec::new();
    for b in &bounded {
        if !nodes.contains(&(b.node, b.bound)) {
            nodes.push((b.node, b.bound));
        }
    }
    let model = subject.profile().model_at(cfg.width);
    // Every value each bound misses: the finding names the lowest wrong
    // node, whose transfer function is the cause ([`crate::cause::transfer`]).
    let found = crate::bounds::violations(g, src, &nodes, model, cfg.seed);
    let Some(wrong) = crate::cause::transfer::lowest_among(g, src, &bounded, &found) else {
        return (bounded, None);
    };
    let v = &wrong.violation;
    let domain = Domain::new(g, src);
    let point: Vec<(String, i64)> = domain
        .vars
        .iter()
        .map(|&i| (g.var(i).name.clone(), v.env[i as usize]))
        .collect();
    let shown = engine::print::point(g, &point);
    let message = format!(
        "{}'s bounds of `{}` are {}, but it is {} at {shown}",
        subject.name(),
        short_expr(g, v.node),
        v.bound,
        v.value,
    );
    let failure = CheckFailure {
        kind: Kind::Bounds,
        message,
        point: Some(point),
        shown: Some(shown),
        env: Some(v.env.clone()),
        node: Some(v.node),
    };
    (
        bounded,
        Some((failure, BoundsFound::Violation(wrong, found))),
    )
}

/// Whether a peer that raised, hung or exited on a case owes nothing: the
/// case's source means nothing at any point (undefined, or a root
/// unconstrained, at every point), by the profile's model and its relaxed
/// one. The protocol's one triage: adapters answer `error` whenever the
/// peer raises and leave the semantics to tileproof (docs/protocol.md).
/// Nothing is excused that the profile's own model finds meaningful.
fn excused(
    subject: &dyn Subject,
    g: &Graph,
    src: &[NodeId],
    refusal: &crate::subject::Refusal,
    cfg: &CheckConfig,
) -> bool {
    let profile = subject.profile();
    let meaningless = |m: Model| {
        let m = Model {
            width: cfg.width,
            ..m
        };
        oracle::meaningful_somewhere(g, src, m) == Some(false)
    };
    matches!(refusal.kind, Kind::PeerError | Kind::Hang | Kind::Crash)
        && meaningless(profile.model())
        && profile.relaxed().is_none_or(meaningless)
}

/// The class of a subject's failure on a case (a peer raising, hanging,
/// writing garbage): no backend is needed to tell.
fn subject_failure_class(
    subject: &dyn Subject,
    g: &Graph,
    src: &[NodeId],
    refusal: &crate::subject::Refusal,
) -> Confirmation {
    if !subject.profile().covers(g, src) {
        return crate::confirm::outside_language(subject);
    }
    let class = match refusal.kind {
        Kind::Hang => Class::Hang,
        Kind::Garbage => Class::Garbage,
        _ => Class::PeerCrash,
    };
    Confirmation::without_backend(
        class,
        format!(
            "the simplifier failed on an input that means something at some point: {}",
            crate::checks::short(&one_line(&refusal.message))
        ),
    )
}

/// The oracle's verdict under a profile's relaxed model `m`.
fn relaxed_verdict(
    g: &Graph,
    src: &[NodeId],
    tgt: &[NodeId],
    m: Model,
    cfg: &OracleConfig,
) -> Option<Relaxed> {
    let rcfg = OracleConfig {
        partial: m.partial,
        unbounded: m.unbounded,
        ..cfg.clone()
    };
    let rep = oracle::check_jit(g, src, tgt, &rcfg).ok()?;
    Some(Relaxed {
        what: format!("partial_ops {}", m.partial.name()),
        holds: rep.failure.is_none(),
        report: rep.to_string(),
    })
}

/// The probe points of `roots`: every point of a small domain, else
/// `cfg.probe_points` samples. Each as a full environment.
fn probe_points(g: &Graph, roots: &[NodeId], cfg: &CheckConfig) -> (Domain, Vec<Vec<i64>>) {
    let domain = Domain::new(g, roots);
    let size = domain.size();
    let exhaustive = size <= cfg.probe_points as u128;
    let n = if exhaustive {
        size as u64
    } else {
        cfg.probe_points
    };
    let mut point = vec![0i64; domain.len()];
    let envs = (0..n)
        .map(|k| {
            if exhaustive {
                domain.decode(k, &mut point);
            } else {
                domain.sample(cfg.seed, k, &mut point);
            }
            domain.env(g, &point)
        })
        .collect();
    (domain, envs)
}

fn named_point(g: &Graph, domain: &Domain, env: &[i64]) -> Vec<(String, i64)> {
    domain
        .vars
        .iter()
        .map(|&v| (g.var(v).name.clone(), env[v as usize]))
        .collect()
}

/// Every value of every node of both forms lies inside its range, at the
/// probe points where the form is defined (undefined is whole-evaluation:
/// its node values mean nothing).
fn range_check(
    g: &Graph,
    src: &[NodeId],
    tgt: &[NodeId],
    cfg: &CheckConfig,
) -> Option<CheckFailure> {
    let all: Vec<NodeId> = src.iter().chain(tgt).copied().collect();
    let (domain, envs) = probe_points(g, &all, cfg);
    let mut sides = [("source", src), ("target", tgt)].map(|(label, roots)| {
        (
            label,
            g.reachable(roots),
            Evaluator::new(g, roots, cfg.width),
        )
    });
    for env in &envs {
        let env128: Vec<i128> = env.iter().map(|&v| v as i128).collect();
        for (label, reached, eval) in &mut sides {
            let Ok(vals) = eval.eval_all(&env128) else {
                continue;
            };
            for &id in reached.iter() {
                let n = g.node(id);
                let v = match vals[id.index()] {
                    Val::Int(v) => v,
                    Val::Bool(b) => b as i128,
                    Val::Invalid | Val::Unconstrained => continue,
                };
                if (n.vmin as i128) <= v && v <= (n.vmax as i128) {
                    continue;
                }
                let point = named_point(g, &domain, env);
                let shown = engine::print::point(g, &point);
                return Some(CheckFailure {
                    kind: Kind::Range,
                    message: format!(
                        "{label} node `{}` is {v} at {shown}, outside its range [{}, {}]",
                        short_expr(g, id),
                        n.vmin,
                        n.vmax
                    ),
                    point: Some(point),
                    shown: Some(shown),
                    env: Some(env.clone()),
                    node: None,
                });
            }
        }
    }
    None
}

/// The single-point evaluator of what the oracle walks the domain with
/// (the JIT, or the batched evaluator) agrees with the interpreter on both
/// forms at the probe points.
fn jit_check(g: &Graph, src: &[NodeId], tgt: &[NodeId], cfg: &CheckConfig) -> Option<CheckFailure> {
    let all: Vec<NodeId> = src.iter().chain(tgt).copied().collect();
    let compiled = match oracle::point_evaluator(g, src, tgt, &cfg.oracle()) {
        Ok(c) => c,
        Err(e) => {
            return Some(CheckFailure::new(
                Kind::Jit,
                format!("the evaluator does not compile: {e}"),
            ))
        }
    };
    let (domain, envs) = probe_points(g, &all, cfg);
    let mut interpreter = Evaluator::new(g, &all, cfg.width);
    for env in &envs {
        let env128: Vec<i128> = env.iter().map(|&v| v as i128).collect();
        let by_jit = compiled.eval(env);
        let by_interp = interpreter.eval(&env128);
        if by_jit != by_interp {
            let point = named_point(g, &domain, env);
            let shown = engine::print::point(g, &point);
            return Some(CheckFailure {
                kind: Kind::Jit,
                message: format!(
                    "at {shown} {} gives {} but the interpreter {}",
                    compiled.checker(),
                    show_eval(g, &by_jit),
                    show_eval(g, &by_interp)
                ),
                point: Some(point),
                shown: Some(shown),
                env: Some(env.clone()),
                node: None,
            });
        }
    }
    None
}

/// The simplified form lowered to i32/i64 agrees with it on the domain
/// (the JIT compiles the lowered program with its concrete dtypes, so an
/// i32 intermediate that overflows wraps, as on hardware).
fn lower_check(g: &mut Graph, tgt: &[NodeId], cfg: &CheckConfig) -> Option<CheckFailure> {
    use engine::lower::{as_roots, lower, Select};
    // `invalid` below a root has no concrete form: not lowerable, no finding.
    let ts = lower(g, tgt, Select::Ranges).ok()?;
    let lowered = as_roots(g, tgt, &ts);
    match oracle::check_jit(g, tgt, &lowered, &cfg.oracle()) {
        Ok(rep) => rep.failure.as_ref().map(|f| CheckFailure {
            kind: Kind::Lower,
            message: format!("the i32/i64-lowered form differs: {rep}"),
            point: Some(f.point.clone()),
            shown: Some(f.shown.clone()),
            env: Some(f.env.clone()),
            node: None,
        }),
        Err(e) => Some(CheckFailure::new(
            Kind::Lower,
            format!("the lowered form does not compile: {e}"),
        )),
    }
}

/// An evaluation's results, or where it is undefined.
pub(crate) fn show_eval(g: &Graph, r: &Result<Vec<Val>, interp::Undefined>) -> String {
    match r {
        Ok(v) => format!(
            "({})",
            v.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Err(u) => format!("undefined ({} at `{}`)", u.reason, short_expr(g, u.node)),
    }
}

fn show_roots(g: &Graph, roots: &[NodeId]) -> String {
    let parts: Vec<String> = roots.iter().map(|&r| short_expr(g, r)).collect();
    format!("`{}`", parts.join("`, `"))
}
