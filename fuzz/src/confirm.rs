//! Confirming a finding on the peer's own compiled code.
//!
//! The oracle judges a peer's answer under tileproof's (strict) model of the
//! peer: a fast, exhaustive first filter that explains itself. The last word
//! on a peer's bug is what the peer's compiled code does, so every finding
//! against a peer gets exactly one [`Class`]: the source and the answer are
//! compiled literally by the peer's own compiler (the protocol's `run`
//! request, [`crate::backend`]) and run side by side at the failing points.
//!
//! | class                    | when                                                             |
//! |--------------------------|------------------------------------------------------------------|
//! | `wrong-value`            | the compiled answer differs from the compiled source where the source runs |
//! | `trap`                   | the compiled answer crashes where the source does not             |
//! | `compile-error`          | the peer's compiler rejects the answer, not the source           |
//! | `model-only`             | every backend agrees with the source at every point checked       |
//! | `peer-crash`             | the simplifier raised (or its adapter died) on an input defined somewhere |
//! | `hang`                   | the simplifier did not answer in time                            |
//! | `garbage`                | the adapter wrote something that is not an answer                |
//! | `outside-input-language` | the input is not one the peer's own pipeline builds (its profile) |
//! | `unconfirmed`            | no backend could run it (none offered, or `--no-confirm`)        |
//!
//! Where a backend cannot compile the *source* as written (tinygrad compiles
//! an `invalid` under arithmetic only after its rewriter moved it), the
//! source's values come from tileproof's interpreter, and the report says
//! so. Backends are tried in the order the peer lists them; the class is
//! the most severe any of them shows (a wrong value, then a trap, then a
//! compile error), and the backend that showed it is named.

use crate::backend::{PointRun, Run, Value};
use crate::oracle::{Domain, Replay};
use crate::subject::Subject;
use engine::interp::{self, Evaluator, PointCheck, Val};
use engine::ir::{Graph, NodeId};
use engine::print;
use engine::semantics::{Failure, Model, Ub};
use engine::walk::{self, Purpose};
use std::fmt;

/// What a finding against a peer is, by the peer's own compiled code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    WrongValue,
    Trap,
    CompileError,
    ModelOnly,
    PeerCrash,
    Hang,
    Garbage,
    OutsideInputLanguage,
    Unconfirmed,
}

impl Class {
    pub const ALL: [Class; 9] = [
        Class::WrongValue,
        Class::Trap,
        Class::CompileError,
        Class::ModelOnly,
        Class::PeerCrash,
        Class::Hang,
        Class::Garbage,
        Class::OutsideInputLanguage,
        Class::Unconfirmed,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Class::WrongValue => "wrong-value",
            Class::Trap => "trap",
            Class::CompileError => "compile-error",
            Class::ModelOnly => "model-only",
            Class::PeerCrash => "peer-crash",
            Class::Hang => "hang",
            Class::Garbage => "garbage",
            Class::OutsideInputLanguage => "outside-input-language",
            Class::Unconfirmed => "unconfirmed",
        }
    }

    pub fn from_name(s: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.name() == s)
    }

    /// A real bug of the peer, shown by its own code: what a maintainer
    /// acts on. `model-only` and `outside-input-language` findings are kept
    /// apart from these; `unconfirmed` ones are suspicions.
    pub fn is_bug(self) -> bool {
        matches!(
            self,
            Class::WrongValue | Class::Trap | Class::CompileError | Class::PeerCrash | Class::Hang
        )
    }

    /// The corpus subdirectory a finding of this class is kept in, when it
    /// is not kept with the bugs.
    pub fn subdir(self) -> Option<&'static str> {
        match self {
            Class::ModelOnly | Class::OutsideInputLanguage => Some(self.name()),
            _ => None,
        }
    }
}

impl serde::Serialize for Class {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// A finding's class, with what showed it.
#[derive(Clone, Debug, PartialEq)]
pub struct Confirmation {
    pub class: Class,
    /// The backend that showed it (for a bug found by running code).
    pub backend: Option<String>,
    /// One line: what the compiled code did, or why nothing was run
    /// (`source 1, target 0 at r0 = 1`).
    pub summary: String,
    /// One line per backend tried, saying what it did.
    pub backends: Vec<String>,
    /// The point shown, indexed like the graph's variable table.
    pub env: Option<Vec<i64>>,
    /// The source's values there (by the backend, else the interpreter).
    pub expected: Vec<Value>,
    /// What the backend that showed the class computed at `env`, when it
    /// ran both there: attributing the finding to the backend reads these
    /// rather than compile both again.
    pub compiled: Option<CompiledAt>,
}

/// The values a backend computed at one point: the source's (`None` where
/// it would not compile it, and the interpreter stood in) and the
/// answer's (`None` where it trapped).
#[derive(Clone, Debug, PartialEq)]
pub struct CompiledAt {
    pub src: Option<Vec<Value>>,
    pub tgt: Option<Vec<Value>>,
    /// The source's meaning there by the interpreter, under the model the
    /// finding was classified with (`None` where undefined, `None` in it
    /// for an unconstrained root).
    pub meaning: Option<Vec<Option<Value>>>,
    /// The answer's meaning there, likewise.
    pub answer_meaning: Option<Vec<Option<Value>>>,
}

impl Confirmation {
    /// A class that needs no backend (a peer's error, hang or garbage; an
    /// input outside its language; no backend to run).
    pub fn without_backend(class: Class, summary: impl Into<String>) -> Confirmation {
        Confirmation {
            class,
            backend: None,
            summary: summary.into(),
            backends: Vec::new(),
            env: None,
            expected: Vec::new(),
            compiled: None,
        }
    }

    /// The `# backend:` header line: `wrong-value (llvm): source 1, target
    /// 0 at r0 = 1`.
    pub fn header(&self) -> String {
        match &self.backend {
            Some(b) => format!("{} ({b}): {}", self.class, self.summary),
            None => format!("{}: {}", self.class, self.summary),
        }
    }
}

/// What one backend showed.
#[derive(Clone, Debug)]
enum BackendVerdict {
    WrongValue {
        env: Vec<i64>,
        src: Vec<Option<Value>>,
        tgt: Vec<Value>,
        /// `src` is the backend's, not the interpreter's.
        src_compiled: bool,
        /// The interpreter's values of the source and of the answer at
        /// `env`.
        meaning: Option<Vec<Option<Value>>>,
        answer_meaning: Option<Vec<Option<Value>>>,
    },
    Trap {
        env: Vec<i64>,
        signal: String,
        src: Vec<Option<Value>>,
        src_compiled: bool,
        meaning: Option<Vec<Option<Value>>>,
        answer_meaning: Option<Vec<Option<Value>>>,
    },
    CompileError(String),
    /// The answer computes the source's values at this many points.
    Agrees(usize),
    /// Nothing to conclude (why).
    Nothing(String),
}

impl BackendVerdict {
    fn rank(&self) -> u8 {
        match self {
            BackendVerdict::WrongValue { .. } => 0,
            BackendVerdict::Trap { .. } => 1,
            BackendVerdict::CompileError(_) => 2,
            BackendVerdict::Agrees(_) => 3,
            BackendVerdict::Nothing(_) => 4,
        }
    }

    /// The verdict in one line, as a backend's line of the confirmation;
    /// for a wrong value or a trap, with the finding's summary when this
    /// backend's verdict is the one kept (the same values and point,
    /// printed once for both).
    fn said(&self, g: &Graph, src: &[NodeId]) -> (String, Option<String>) {
        match self {
            BackendVerdict::WrongValue {
                env,
                src: s,
                tgt: t,
                ..
            } => {
                let (s, at) = (show_values(s), show_point(g, src, env));
                let t = show_values(&t.iter().copied().map(Some).collect::<Vec<_>>());
                (
                    format!("wrong value: source {s}, answer {t} at {at}"),
                    Some(format!("source {s}, target {t} at {at}")),
                )
            }
            BackendVerdict::Trap {
                env,
                signal,
                src: s,
                ..
            } => {
                let at = show_point(g, src, env);
                (
                    format!("the answer traps ({signal}) at {at}"),
                    Some(format!(
                        "source {}, target traps ({signal}) at {at}",
                        show_values(s)
                    )),
                )
            }
            BackendVerdict::CompileError(m) => (format!("the answer does not compile: {m}"), None),
            BackendVerdict::Agrees(n) => (
                format!("agrees with the source at {}", print::count(*n, "point")),
                None,
            ),
            BackendVerdict::Nothing(why) => (format!("no verdict: {why}"), None),
        }
    }
}

/// The interpreter's values of `roots` at `env` under `model` (`None` for
/// an unconstrained value, which any value refines); `None` where the
/// evaluation is undefined.
pub(crate) fn interp_values(
    g: &Graph,
    roots: &[NodeId],
    env: &[i64],
    model: Model,
) -> Option<Vec<Option<Value>>> {
    let env: Vec<i128> = env.iter().map(|&v| v as i128).collect();
    interp::eval(g, roots, &env, model).ok().map(meaning)
}

/// The interpreter's values as the backends' verdicts read them (`None`
/// for an unconstrained value).
fn meaning(vals: Vec<Val>) -> Vec<Option<Value>> {
    vals.into_iter()
        .map(|v| match v {
            Val::Int(i) => Some(Value::Int(i)),
            Val::Bool(b) => Some(Value::Bool(b)),
            Val::Invalid => Some(Value::Invalid),
            Val::Unconstrained => None,
        })
        .collect()
}

fn show_values(vals: &[Option<Value>]) -> String {
    let parts: Vec<String> = vals
        .iter()
        .map(|v| v.map_or_else(|| "any".to_string(), |v| v.to_string()))
        .collect();
    if parts.len() == 1 {
        parts[0].clone()
    } else {
        format!("({})", parts.join(", "))
    }
}

fn show_point(g: &Graph, roots: &[NodeId], env: &[i64]) -> String {
    let named: Vec<(String, i64)> = g
        .reachable_vars(roots)
        .into_iter()
        .map(|v| (g.var(v).name.clone(), env[v as usize]))
        .collect();
    if named.is_empty() {
        "every point".to_string()
    } else {
        print::point(g, &named)
    }
}

/// Runs the source and the target on `backend` at `points` and says what
/// it shows, against the source's meanings there (what every backend's
/// values are weighed against, and the source's values where a backend
/// cannot compile it as written).
fn on_backend(
    subject: &dyn Subject,
    g: &Graph,
    src: &[NodeId],
    tgt: &[NodeId],
    points: &FailingPoints,
    backend: &str,
) -> (BackendVerdict, String) {
    let FailingPoints {
        envs,
        meanings,
        answers,
    } = points;
    let mut notes = Vec::new();
    let source = subject.run(g, src, backend, envs);
    // A compile error of the answer counts only where the source compiles.
    let source_compiles = !matches!(source, Ok(Run::CompileError(_)));
    let src_compiled = matches!(source, Ok(Run::Results(_)));
    // The source's values per point (None: the point does not count).
    let src_vals: Vec<Option<Vec<Option<Value>>>> = match source {
        Ok(Run::Results(rs)) => rs
            .into_iter()
            .zip(envs)
            .zip(meanings)
            .map(|((r, env), meaning)| match r {
                PointRun::Values(v) => {
                    let by_backend: Vec<Option<Value>> = v.into_iter().map(Some).collect();
                    if let Some(i) = meaning {
                        let differs = i
                            .iter()
                            .zip(&by_backend)
                            .any(|(a, b)| a.is_some() && a != b);
                        if differs && notes.is_empty() {
                            notes.push(format!(
                                "the compiled source gives {} where tileproof's interpreter gives {} (at {}): the peer's backend computes the source itself otherwise (a code generation bug of the peer, or an adapter or semantics mismatch)",
                                show_values(&by_backend),
                                show_values(i),
                                show_point(g, src, env)
                            ));
                        }
                    }
                    Some(by_backend)
                }
                // Where the source itself does not run, nothing is owed.
                PointRun::Trap(_) | PointRun::Timeout(_) => None,
            })
            .collect(),
        Ok(Run::Unsupported(why)) | Ok(Run::CompileError(why)) => {
            notes.push(format!(
                "the source by tileproof's interpreter ({backend} cannot compile it as written: {})",
                crate::message::short(&crate::message::one_line(&why))
            ));
            meanings.to_vec()
        }
        Err(e) => {
            return (
                BackendVerdict::Nothing(format!("the source did not run: {e}")),
                String::new(),
            )
        }
    };
    let verdict = match subject.run(g, tgt, backend, envs) {
        Ok(Run::Results(rs)) => {
            let mut agree = 0;
            let mut found = None;
            let meant = meanings.iter().zip(answers);
            for (((r, env), sv), (meaning, answer_meaning)) in
                rs.into_iter().zip(envs).zip(&src_vals).zip(meant)
            {
                let Some(sv) = sv else { continue };
                match r {
                    PointRun::Values(tv) => {
                        let differs = sv.iter().zip(&tv).any(|(s, t)| s.is_some_and(|s| s != *t));
                        if differs {
                            found = Some(BackendVerdict::WrongValue {
                                env: env.clone(),
                                src: sv.clone(),
                                tgt: tv,
                                src_compiled,
                                meaning: meaning.clone(),
                                answer_meaning: answer_meaning.clone(),
                            });
                            break;
                        }
                        agree += 1;
                    }
                    PointRun::Trap(signal) => {
                        found = found.or(Some(BackendVerdict::Trap {
                            env: env.clone(),
                            signal,
                            src: sv.clone(),
                            src_compiled,
                            meaning: meaning.clone(),
                            answer_meaning: answer_meaning.clone(),
                        }));
                    }
                    PointRun::Timeout(s) => notes.push(format!(
                        "the answer did not finish within {s:.0} s at {}",
                        show_point(g, src, env)
                    )),
                }
            }
            found.unwrap_or_else(|| {
                if agree > 0 {
                    BackendVerdict::Agrees(agree)
                } else {
                    BackendVerdict::Nothing("no point where the compiled source runs".into())
                }
            })
        }
        Ok(Run::CompileError(msg)) if source_compiles => {
            BackendVerdict::CompileError(crate::message::short(&crate::message::one_line(&msg)))
        }
        Ok(Run::CompileError(msg)) => BackendVerdict::Nothing(format!(
            "neither the source nor the answer compiles: {}",
            crate::message::short(&crate::message::one_line(&msg))
        )),
        Ok(Run::Unsupported(why)) => BackendVerdict::Nothing(format!(
            "cannot compile the answer as written: {}",
            crate::message::short(&crate::message::one_line(&why))
        )),
        Err(e) => BackendVerdict::Nothing(format!("the answer did not run: {e}")),
    };
    (verdict, notes.join("; "))
}

/// Why tileproof's model flagged a point the backend computes right: the
/// part of the model that differs from the machine.
pub fn model_part(failure: Option<Failure>, ub: Option<Ub>) -> String {
    match (failure, ub) {
        (_, Some(Ub::IndexOverflow)) => {
            "an index overflow, undefined in the model, wraps to the source's value".into()
        }
        (_, Some(Ub::DivByZero)) => {
            "a division by zero, undefined in the model, is not executed or does not trap (the optimiser removed it, or it is in an arm or lane that is not computed)".into()
        }
        (_, Some(Ub::ShiftAmount)) => {
            "an out-of-range shift, undefined in the model, gives the source's value".into()
        }
        (_, Some(Ub::DivOverflow)) => {
            "MIN / -1, undefined in the model, gives the source's value".into()
        }
        (Some(f), None) => format!("the model's {f} does not show in the compiled code"),
        (None, None) => "the model's verdict does not show in the compiled code".into(),
    }
}

/// Confirms a finding on every backend of `subject` (or only `only`):
/// the source `src` and the answer `tgt` compiled and run at `points` (the
/// failing points, each with the source's meaning under the strict model:
/// the source's values where a backend cannot compile it). `flagged` says
/// what the model found (for a `model-only` verdict).
pub fn confirm(
    subject: &dyn Subject,
    g: &Graph,
    src: &[NodeId],
    tgt: &[NodeId],
    points: &FailingPoints,
    flagged: &str,
    only: Option<&str>,
) -> Confirmation {
    let FailingPoints { envs, meanings, .. } = points;
    let backends: Vec<&String> = subject
        .backends()
        .iter()
        .filter(|b| only.is_none_or(|o| o == b.as_str()))
        .collect();
    if backends.is_empty() {
        return Confirmation::without_backend(
            Class::Unconfirmed,
            format!("{} has no backend to run it on", subject.name()),
        );
    }
    let mut best: Option<(BackendVerdict, &str, Option<String>)> = None;
    let mut lines = Vec::new();
    let mut agreed = Vec::new();
    for b in backends {
        let (v, notes) = on_backend(subject, g, src, tgt, points, b);
        if matches!(v, BackendVerdict::Agrees(_)) {
            agreed.push(b.clone());
        }
        let (said, summary) = v.said(g, src);
        lines.push(if notes.is_empty() {
            format!("{b}: {said}")
        } else {
            format!("{b}: {said} ({notes})")
        });
        if best.as_ref().is_none_or(|(bv, ..)| v.rank() < bv.rank()) {
            best = Some((v, b, summary));
        }
    }
    let (v, b, summary) = best.expect("at least one backend");
    let mut c = Confirmation {
        class: Class::Unconfirmed,
        backend: Some(b.to_string()),
        summary: String::new(),
        backends: lines,
        env: None,
        expected: Vec::new(),
        compiled: None,
    };
    let expected = |s: &[Option<Value>]| s.iter().map(|v| v.unwrap_or(Value::Int(0))).collect();
    // The backend's own values of a side, one per root (as a run of that
    // side alone at the point reports them).
    let own = |vals: Option<Vec<Value>>, roots: &[NodeId]| vals.filter(|v| v.len() == roots.len());
    let compiled_src = |s: &[Option<Value>], src_compiled: bool| {
        own(
            src_compiled.then(|| s.iter().copied().collect()).flatten(),
            src,
        )
    };
    match v {
        BackendVerdict::WrongValue {
            env,
            src: s,
            tgt: t,
            src_compiled,
            meaning,
            answer_meaning,
        } => {
            c.class = Class::WrongValue;
            c.compiled = Some(CompiledAt {
                src: compiled_src(&s, src_compiled),
                tgt: own(Some(t.clone()), tgt),
                meaning,
                answer_meaning,
            });
            c.summary = summary.expect("a wrong value's summary");
            c.expected = expected(&s);
            c.env = Some(env);
        }
        BackendVerdict::Trap {
            env,
            src: s,
            src_compiled,
            meaning,
            answer_meaning,
            ..
        } => {
            c.class = Class::Trap;
            c.compiled = Some(CompiledAt {
                src: compiled_src(&s, src_compiled),
                tgt: None,
                meaning,
                answer_meaning,
            });
            c.summary = summary.expect("a trap's summary");
            c.expected = expected(&s);
            c.env = Some(env);
        }
        BackendVerdict::CompileError(m) => {
            c.class = Class::CompileError;
            c.summary = format!("the answer does not compile, the source does: {m}");
            c.env = envs.first().cloned();
            c.expected = meanings
                .first()
                .and_then(Option::as_ref)
                .map(|s| expected(s))
                .unwrap_or_default();
        }
        BackendVerdict::Agrees(_) => {
            c.class = Class::ModelOnly;
            c.backend = None;
            c.summary = format!(
                "{} compute{} the source's value at every point checked ({}); {}",
                agreed.join(", "),
                if agreed.len() == 1 { "s" } else { "" },
                print::count(envs.len(), "point"),
                flagged
            );
        }
        BackendVerdict::Nothing(why) => {
            c.backend = None;
            c.summary = format!("no backend could judge it: {why}");
        }
    }
    c
}

/// The points a finding is confirmed at, each with the source's and the
/// answer's meanings there (interpreted once, when the point was found).
pub struct FailingPoints {
    /// Each indexed like the graph's variable table.
    pub envs: Vec<Vec<i64>>,
    /// The interpreter's values of the source at each point (`None` where
    /// it is undefined).
    pub meanings: Vec<Option<Vec<Option<Value>>>>,
    /// The interpreter's values of the answer at each point, likewise.
    pub answers: Vec<Option<Vec<Option<Value>>>>,
}

/// The oracle's failing point, where a finding is confirmed first, with
/// what the oracle knows of it.
pub struct OraclePoint<'a> {
    /// Indexed like the graph's variable table.
    pub env: &'a [i64],
    /// The oracle's replay there: both sides' values by the interpreter,
    /// under the replay's model.
    pub replay: Option<&'a Replay>,
    /// Its index in the domain's row-major order, when the oracle walked
    /// every point before it (and found them refining) under the replay's
    /// model.
    pub walked_to: Option<u64>,
    /// The domain of the two forms and their node count, when the oracle
    /// compared these forms (its report has them).
    pub domain: Option<(&'a Domain, usize)>,
}

/// Up to `limit` points where `tgt` does not refine `src` under `model`,
/// `first` (the oracle's point) first: every point the walk policy names
/// for failing points ([`Purpose::FailingPoints`]) is tried, by the
/// interpreter, but those the oracle already evaluated under `model` (its
/// point, and the points before it when it walked them in the same order).
pub fn failing_points(
    g: &Graph,
    src: &[NodeId],
    tgt: &[NodeId],
    model: Model,
    first: Option<OraclePoint<'_>>,
    limit: usize,
) -> FailingPoints {
    let (mut es, mut et) = (Evaluator::new(g, src, model), Evaluator::new(g, tgt, model));
    let mut at = |env: &[i64]| {
        let e128: Vec<i128> = env.iter().map(|&v| v as i128).collect();
        (es.eval(&e128), et.eval(&e128))
    };
    let mut out = FailingPoints {
        envs: Vec::new(),
        meanings: Vec::new(),
        answers: Vec::new(),
    };
    let made;
    let (domain, nodes) = match first.as_ref().and_then(|f| f.domain) {
        Some(known) => known,
        None => {
            let all: Vec<NodeId> = src.iter().chain(tgt).copied().collect();
            made = Domain::with_size(g, &all);
            (&made.0, made.1)
        }
    };
    // Where the oracle walked under this model, the points before its
    // failing one refine: the walk starts past it.
    let mut start = 0;
    if let Some(f) = first {
        let known = f.replay.filter(|r| r.model == model);
        let (s, t) = match known {
            Some(r) => (r.src.clone(), r.tgt.clone()),
            None => at(f.env),
        };
        out.envs.push(f.env.to_vec());
        out.meanings.push(s.ok().map(meaning));
        out.answers.push(t.ok().map(meaning));
        if let (Some(_), Some(i)) = (known, f.walked_to) {
            start = i + 1;
        }
    }
    let decision = walk::decide(Purpose::FailingPoints, domain.size(), nodes);
    let exhaustive = decision.samples().is_none();
    let n = decision.samples().unwrap_or(domain.size() as u64);
    let start = if exhaustive { start } else { 0 };
    let mut point = vec![0i64; domain.len()];
    for k in start..n {
        if out.envs.len() >= limit {
            break;
        }
        if exhaustive {
            domain.decode(k, &mut point);
        } else {
            domain.sample(0x5EED, k, &mut point);
        }
        let env = domain.env(g, &point);
        if out.envs.contains(&env) {
            continue;
        }
        let (Ok(s), t) = at(&env) else {
            continue;
        };
        if let PointCheck::Fails(_) = interp::check_point(Ok(s.clone()), t.clone()) {
            out.envs.push(env);
            out.meanings.push(Some(meaning(s)));
            out.answers.push(t.ok().map(meaning));
        }
    }
    out
}

/// What a backend computed for an expression, compared with tileproof's
/// interpreter (see [`agreement`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Agreement {
    /// Points where the interpreter finds the source meaningful and the
    /// backend gives the same values.
    pub agreed: usize,
    /// The backend could not compile the expressions as written (why).
    pub unsupported: Option<String>,
    /// The peer's compiler rejected (or died on) the literal expressions:
    /// a limit of its code generator on inputs its pipeline never feeds it
    /// unsimplified, not a disagreement on what they mean.
    pub compile_error: Option<String>,
    /// Where the backend differs from the interpreter: a wrong value or a
    /// trap where the interpreter finds a meaning (one line).
    pub disagreement: Option<String>,
}

/// Whether `backend` of `subject` computes what tileproof's interpreter
/// computes for `roots` at `envs`, under `model`, at every point where the
/// interpreter finds them defined (a root unconstrained there is anything).
/// A disagreement is a bug in the adapter, in tileproof's semantics, or in
/// the peer's code generator, never the simplifier's: nothing is
/// simplified.
pub fn agreement(
    subject: &dyn Subject,
    backend: &str,
    g: &Graph,
    roots: &[NodeId],
    envs: &[Vec<i64>],
    model: Model,
) -> Agreement {
    let mut a = Agreement::default();
    let expected: Vec<Option<Vec<Option<Value>>>> = envs
        .iter()
        .map(|e| interp_values(g, roots, e, model))
        .collect();
    if expected.iter().all(Option::is_none) {
        return a;
    }
    let run = match subject.run(g, roots, backend, envs) {
        Ok(r) => r,
        Err(e) => {
            a.disagreement = Some(format!("the adapter failed: {e}"));
            return a;
        }
    };
    let results = match run {
        Run::Results(r) => r,
        Run::Unsupported(why) => {
            a.unsupported = Some(why);
            return a;
        }
        Run::CompileError(msg) => {
            a.compile_error = Some(crate::message::short(&crate::message::one_line(&msg)));
            return a;
        }
    };
    for ((r, env), want) in results.into_iter().zip(envs).zip(&expected) {
        let Some(want) = want else { continue };
        let at = show_point(g, roots, env);
        match r {
            PointRun::Values(got) => {
                if want
                    .iter()
                    .zip(&got)
                    .any(|(w, g)| w.is_some_and(|w| w != *g))
                {
                    a.disagreement = Some(format!(
                        "at {at} the backend gives {} where tileproof's interpreter gives {}",
                        show_values(&got.into_iter().map(Some).collect::<Vec<_>>()),
                        show_values(want)
                    ));
                    return a;
                }
                a.agreed += 1;
            }
            PointRun::Trap(sig) => {
                a.disagreement = Some(format!(
                    "at {at} the backend traps ({sig}) where tileproof's interpreter gives {}",
                    show_values(want)
                ));
                return a;
            }
            PointRun::Timeout(s) => {
                a.disagreement = Some(format!("at {at} the backend ran over {s:.0} s"));
                return a;
            }
        }
    }
    a
}

/// The class of an `unsound-bounds` finding: the node its peer bounded is
/// compiled alone on each backend and run at the point. A value outside
/// the bounds there is the peer's bug (`wrong-value`: its analysis states
/// a range its own code leaves); a value within them on every backend is
/// tileproof's model's (`model-only`).
pub fn confirm_bounds(
    subject: &dyn Subject,
    g: &Graph,
    src: &[NodeId],
    node: NodeId,
    bound: crate::bounds::Bound,
    env: &[i64],
    only: Option<&str>,
) -> Confirmation {
    let backends: Vec<&String> = subject
        .backends()
        .iter()
        .filter(|b| only.is_none_or(|o| o == b.as_str()))
        .collect();
    if backends.is_empty() {
        return Confirmation::without_backend(
            Class::Unconfirmed,
            format!("{} has no backend to run it on", subject.name()),
        );
    }
    let at = show_point(g, src, env);
    let mut lines = Vec::new();
    let mut outside: Option<(String, Value)> = None;
    let mut inside = false;
    for b in backends {
        let said = match subject.run(g, &[node], b, &[env.to_vec()]) {
            Ok(Run::Results(r)) => match r.first() {
                Some(PointRun::Values(v)) => {
                    let got = v[0];
                    let val = match got {
                        Value::Int(i) => Val::Int(i),
                        Value::Bool(x) => Val::Bool(x),
                        Value::Invalid => Val::Invalid,
                    };
                    match crate::bounds::contains(bound, val) {
                        Some(false) => {
                            outside.get_or_insert((b.clone(), got));
                            format!("the node computes {got} at {at}, outside {bound}")
                        }
                        Some(true) => {
                            inside = true;
                            format!("the node computes {got} at {at}, within {bound}")
                        }
                        None => format!("the node computes {got} at {at}"),
                    }
                }
                Some(other) => format!("the node does not compute a value at {at}: {other}"),
                None => "no result".to_string(),
            },
            Ok(Run::CompileError(e)) => {
                format!("the node does not compile: {}", crate::message::short(&e))
            }
            Ok(Run::Unsupported(e)) => format!("cannot compile the node as written: {e}"),
            Err(r) => format!("the adapter failed to run it: {}", r.message),
        };
        lines.push(format!("{b}: {said}"));
    }
    let mut c = Confirmation {
        class: Class::Unconfirmed,
        backend: None,
        summary: "no backend could judge it".to_string(),
        backends: lines,
        env: Some(env.to_vec()),
        expected: Vec::new(),
        compiled: None,
    };
    if let Some((b, got)) = outside {
        c.class = Class::WrongValue;
        c.summary = format!(
            "the compiled node `{}` computes {got} at {at}, outside the bounds {bound} the peer's analysis gives it",
            crate::message::short_expr(g, node)
        );
        c.backend = Some(b);
    } else if inside {
        c.class = Class::ModelOnly;
        c.summary = format!("the compiled node computes a value within {bound} at {at}: tileproof's model of the node differs");
    }
    c
}

/// The class of a finding on an input the peer's own pipeline does not
/// build (outside its profile's input language).
pub fn outside_language(subject: &dyn Subject) -> Confirmation {
    Confirmation::without_backend(
        Class::OutsideInputLanguage,
        format!(
            "the input is not one {}'s own pipeline builds (its profile)",
            subject.name()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::ir::dtype::Width;

    #[test]
    fn each_failing_point_carries_both_sides_meanings_there_the_oracles_replay_read_not_redone() {
        // `x / (x - 2)` is undefined at x = 2: that point carries no meaning.
        let p = engine::parse::parse_program("var x in [0, 5]\nexpr x / (x - 2)\nexpr x + 0 - x\n")
            .unwrap();
        let (g, src, tgt) = (&p.graph, &p.outputs[..1], &p.outputs[1..]);
        let model = Model::from(Width::W64);
        let first = [2i64];
        fn oracle<'a>(
            env: &'a [i64],
            replay: Option<&'a Replay>,
            walked_to: Option<u64>,
        ) -> OraclePoint<'a> {
            OraclePoint {
                env,
                replay,
                walked_to,
                domain: None,
            }
        }
        let points = failing_points(g, src, tgt, model, Some(oracle(&first, None, None)), 4);
        assert_eq!(points.envs.len(), points.meanings.len());
        assert_eq!(points.envs.len(), points.answers.len());
        assert_eq!(points.envs[0], first);
        assert_eq!(points.meanings[0], None, "undefined at the oracle's point");
        assert!(points.envs.len() > 1, "{:?}", points.envs);
        for ((env, meaning), answer) in points
            .envs
            .iter()
            .zip(&points.meanings)
            .zip(&points.answers)
        {
            assert_eq!(meaning, &interp_values(g, src, env, model), "at {env:?}");
            assert_eq!(answer, &interp_values(g, tgt, env, model), "at {env:?}");
        }
        // The oracle's replay at its point is read, under its model only.
        let mut told = crate::oracle::replay(g, src, tgt, &[3], model);
        told.src = Ok(vec![Val::Int(41)]);
        let read = failing_points(g, src, tgt, model, Some(oracle(&[3], Some(&told), None)), 1);
        assert_eq!(read.meanings[0], Some(vec![Some(Value::Int(41))]));
        // The points the oracle walked before its own (x = 3, index 3)
        // refine: the next is looked for past it (x = 1 fails, unasked).
        let past = failing_points(
            g,
            src,
            tgt,
            model,
            Some(oracle(&[3], Some(&told), Some(3))),
            2,
        );
        assert_eq!(past.envs, [vec![3], vec![4]]);
        told.model = Model::from(Width(32));
        let other = failing_points(
            g,
            src,
            tgt,
            model,
            Some(oracle(&[3], Some(&told), Some(3))),
            2,
        );
        assert_eq!(other.meanings[0], Some(vec![Some(Value::Int(3))]));
        assert_eq!(other.envs, [vec![3], vec![1]], "another model: every point");
        // The oracle's domain, when it comes with its point, is the one
        // walked (not made again from the forms): here a narrower one.
        let narrow = Domain {
            vars: vec![0],
            names: vec!["x".to_string()],
            lo: vec![4],
            hi: vec![5],
        };
        let given = OraclePoint {
            domain: Some((&narrow, 5)),
            ..oracle(&[3], None, None)
        };
        let within = failing_points(g, src, tgt, model, Some(given), 3);
        assert_eq!(within.envs, [vec![3], vec![4], vec![5]]);
    }
}
