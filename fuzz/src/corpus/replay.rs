//! Replaying a case: its `expr` lines simplified again by the engine or a
//! peer and judged by every check, with what `replay`, `check` and `gate`
//! print of it.

use super::format::{case_width, header_width, Header};
use super::store::{read, read_as, CorpusError};
use crate::backend::Script;
use crate::checks::{self, CheckConfig, Checked, Kind, KindSet, ValidationVerdict, Validator};
use crate::classify::{classify, Confirm};
use crate::confirm::Class;
use crate::missed::{Hunt, Hunter};
use crate::subject::{Engine, Subject};
use engine::dtype::Width;
use engine::input::Syntax;
use engine::interp;
use engine::ir::{NodeId, Op};
use engine::parse::Program;
use engine::print;
use engine::rewrite::Simplifier;
use engine::rules::RuleSet;
use std::path::Path;

/// What replaying a case found.
#[derive(Clone)]
pub struct Replay {
    /// The width the case was checked at.
    pub width: Width,
    /// The case re-simplified and checked; `checked.src` are the `expr`
    /// lines, `checked.tgt` the simplifier's answer.
    pub checked: Checked,
    /// Rules that fired, with counts (the engine's).
    pub fired: Vec<(String, usize)>,
}

impl Replay {
    pub fn ok(&self) -> bool {
        self.checked.ok()
    }

    /// The original (`outputs`) and simplified (`expects`) forms in one
    /// program, e.g. for printing every node's value at the failing point.
    pub fn program(&self) -> Program {
        Program {
            graph: self.checked.graph.clone(),
            outputs: self.checked.src.clone(),
            expects: self.checked.tgt.clone().unwrap_or_default(),
            header: Vec::new(),
            constraints: Vec::new(),
            expect_constraints: None,
        }
    }
}

/// The checks a replay runs: everything a campaign checks, within the
/// campaign's limits ([`engine::walk::Limits::CASE`]).
pub fn replay_config(width: Width) -> CheckConfig {
    CheckConfig {
        width,
        kinds: KindSet::ALL,
        ..CheckConfig::default()
    }
}

/// Who replays a case.
#[derive(Clone, Copy)]
pub enum Replayer<'a> {
    /// tileproof's engine with these rules (loaded with the candidate
    /// `rule_files` laid over the built-in ones), simplifying at each
    /// case's `# simplify-width:` (else the width it is checked at).
    Engine {
        rules: &'a RuleSet,
        rule_files: &'a [String],
    },
    /// A simplifier under test, as it is; `confirm`: its findings are run
    /// on its backends and classified ([`crate::confirm`]); `missed`: a
    /// sound answer is looked at for a missed simplification
    /// ([`crate::missed`]).
    Subject {
        subject: &'a dyn Subject,
        confirm: bool,
        missed: Option<&'a Hunter<'a>>,
    },
}

/// Re-simplifies the `expr` lines of `p` and checks the answer at `width`:
/// the oracle and the validator when given; for the engine also ranges,
/// idempotence, the JIT against the interpreter and lowering.
pub fn replay(
    p: &Program,
    path: &Path,
    who: Replayer<'_>,
    width: Width,
    validate: Option<&Validator<'_>>,
) -> Result<Replay, CorpusError> {
    let cfg = replay_config(width);
    let engine;
    let subject: &dyn Subject = match who {
        Replayer::Engine { rules, rule_files } => {
            let mut simp = Simplifier::new(rules);
            simp.width = header_width(
                Header::of(p).simplify_width.as_deref(),
                path,
                "simplify-width",
            )?
            .unwrap_or(width);
            engine = Engine::new(simp, rule_files.to_vec());
            &engine
        }
        Replayer::Subject { subject, .. } => subject,
    };
    let mut checked = checks::check(&p.graph, &p.outputs, subject, &cfg, validate);
    at_recorded_point(&mut checked, p, subject, width);
    if let Replayer::Subject { confirm, .. } = who {
        let confirm = if confirm { Confirm::All } else { Confirm::Off };
        classify(subject, &mut checked, &confirm, width);
    }
    let fired = match who {
        Replayer::Engine { rules, .. } => checked.fired(Simplifier::new(rules).rule_names()),
        Replayer::Subject { subject, .. } => checked.fired(subject.rule_names()),
    };
    Ok(Replay {
        width,
        checked,
        fired,
    })
}

/// A replay whose oracle sampled the domain and passed is judged at the
/// case's recorded `# point:` too: the finding was seen failing there, and
/// a sample drawn another way (a change of the sampler) may miss it.
fn at_recorded_point(checked: &mut Checked, p: &Program, subject: &dyn Subject, width: Width) {
    let (Some(rep), Some(tgt)) = (&checked.oracle, &checked.tgt) else {
        return;
    };
    let Ok(wide) = engine::text::point::header_point(p) else {
        return;
    };
    let Ok(env) = wide
        .iter()
        .map(|&v| i64::try_from(v))
        .collect::<Result<Vec<i64>, _>>()
    else {
        return;
    };
    // The check's graph is the program's, extended: its variables are
    // numbered alike.
    let model = engine::semantics::Model {
        width,
        ..subject.profile().model()
    };
    let Some(at) =
        crate::oracle::failing_at_point(rep, &checked.graph, &checked.src, tgt, &env, model)
    else {
        return;
    };
    // As the check judges: for unbounded integers, an overflow only the
    // W-bit model sees is not the subject's.
    let confirm = subject.profile().confirm_model();
    if confirm.width != width
        && !checks::fails_exactly(&checked.graph, &checked.src, tgt, &wide, confirm)
    {
        return;
    }
    let f = at.failure.as_ref().expect("a failing report");
    checked.failures.push(checks::CheckFailure {
        kind: Kind::Oracle,
        message: format!("{at} (at the case's recorded point; the samples passed)"),
        point: Some(f.point.clone()),
        shown: Some(f.shown.clone()),
        env: Some(f.env.clone()),
        node: None,
    });
    checked.oracle = Some(at);
}

/// [`replay`] of a file, at `width` or else the width its header asks for,
/// else 64.
pub fn replay_file(
    path: &Path,
    who: Replayer<'_>,
    width: Option<Width>,
    validate: Option<&Validator<'_>>,
) -> Result<Replay, CorpusError> {
    let p = read(path)?;
    let w = match width {
        Some(w) => w,
        None => case_width(&p, path)?.unwrap_or(Width::W64),
    };
    replay(&p, path, who, w, validate)
}

impl<'a> Replayer<'a> {
    /// The model answers are judged under at width `w` (the width a case
    /// is replayed at): the contract's for the engine, the profile's for a
    /// peer.
    pub fn model(&self, w: engine::dtype::Width) -> engine::semantics::Model {
        match self {
            Replayer::Engine { .. } => w.into(),
            Replayer::Subject { subject, .. } => subject.profile().model_at(w),
        }
    }

    /// The name of the simplifier replayed against, as headers record it.
    pub fn name(&self) -> String {
        match self {
            Replayer::Engine { .. } => crate::subject::engine_name(),
            Replayer::Subject { subject, .. } => subject.name(),
        }
    }

    /// The engine with `rules` (no candidate files).
    pub fn engine(rules: &'a RuleSet) -> Replayer<'a> {
        Replayer::Engine {
            rules,
            rule_files: &[],
        }
    }
}

/// What replaying one case file found (what `replay`, `check` and `gate`
/// print).
#[derive(Clone, Debug, serde::Serialize)]
pub struct CaseReport {
    pub path: String,
    /// The width it was checked at (`None`: the file could not be read).
    pub width: Option<u32>,
    pub ok: bool,
    /// The kind the file's header records (`# tileproof finding: KIND`;
    /// `None` also when it names no kind this tileproof knows).
    pub recorded: Option<Kind>,
    /// The simplifier the header records (`# simplifier: NAME VERSION`).
    pub recorded_subject: Option<String>,
    /// The class the header records (`# backend: CLASS ...`).
    pub recorded_class: Option<Class>,
    /// The cause the header records (`# cause: ...`).
    pub recorded_cause: Option<crate::cause::Cause>,
    /// Its cause now, with what shows it (a failing case against a peer
    /// whose backends are run: what `--reclassify` writes).
    pub cause: Option<crate::cause::found::Found>,
    /// The kinds of the checks that failed now (empty when ok).
    pub found: Vec<Kind>,
    /// The simplifier's answer, one expression per root (empty when it
    /// failed or declined).
    pub answer: Vec<String>,
    /// Why the simplifier gave no answer that was not a finding: its
    /// `unsupported` or `declined` reason, or that it failed on a source
    /// that means nothing at any point (`None` when it answered, or
    /// failed with a finding). A replay fails on it all the same: a kept
    /// case must be answered.
    pub unsupported: Option<String>,
    /// The validator's verdict, when it ran.
    pub smt: Option<ValidationVerdict>,
    /// Every point of the domain was shown to refine: the JIT oracle
    /// walked the whole domain, or the validator proved it (`equivalent`,
    /// `vacuous`). An `ok` case that is not `proved` was sampled, with no
    /// proof (the validator unknown or off).
    pub proved: bool,
    /// For a finding against a peer: its class now.
    pub class: Option<Class>,
    /// The class with what showed it (the `# backend:` line it would get),
    /// and one line per backend tried.
    pub backend: Option<String>,
    pub backends: Vec<String>,
    /// The verdict under the profile's relaxed model (`# relaxed:`).
    pub relaxed: Option<String>,
    /// For a confirmed bug of a peer: the peer's reproducer script.
    #[serde(skip)]
    pub reproducer: Option<Script>,
    /// For a sound answer of a peer, when asked: what the engine makes of
    /// the same input under the peer's semantics.
    pub missed: Option<Hunt>,
    /// The one-line summary, saying what was checked: `ok   FILE at width
    /// W (JIT: exhaustive, 12 points; SMT: equivalent)` or `FAIL FILE ...`.
    pub line: String,
    /// For a failure: the failed checks, the point, and every node's value
    /// there in both forms (newline-terminated lines; empty when ok).
    pub detail: String,
    pub seconds: f64,
}

impl CaseReport {
    fn new(path: String) -> CaseReport {
        CaseReport {
            path,
            width: None,
            ok: false,
            recorded: None,
            recorded_subject: None,
            recorded_class: None,
            recorded_cause: None,
            cause: None,
            found: Vec::new(),
            answer: Vec::new(),
            unsupported: None,
            smt: None,
            proved: false,
            class: None,
            backend: None,
            backends: Vec::new(),
            relaxed: None,
            reproducer: None,
            missed: None,
            line: String::new(),
            detail: String::new(),
            seconds: 0.0,
        }
    }

    /// The verdict: what `check` and `replay` agree on.
    pub fn verdict(&self) -> CaseVerdict {
        match (self.ok, self.proved) {
            (true, true) => CaseVerdict::Proved,
            (true, false) => CaseVerdict::Sampled,
            (false, _) => CaseVerdict::Fails,
        }
    }
}

/// What replaying a case showed, in one word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CaseVerdict {
    /// Every point refines (walked whole, or proved by the validator).
    Proved,
    /// Nothing failed, but the domain was sampled and not proved.
    Sampled,
    /// A check failed.
    Fails,
}

impl CaseVerdict {
    pub fn name(self) -> &'static str {
        match self {
            CaseVerdict::Proved => "proved",
            CaseVerdict::Sampled => "sampled",
            CaseVerdict::Fails => "fails",
        }
    }
}

/// Replays one file: simplified again by `who`, checked by the JIT oracle
/// (and, for the engine, the interpreter checks), and validated by
/// `validate` when given. The width is `width`, else the file's
/// `# width:`, else the subject's. The file is read in `syntax`, else in
/// the syntax detected. Never fails: an unreadable file is a failed
/// report.
pub fn replay_case(
    path: &Path,
    syntax: Option<Syntax>,
    who: Replayer<'_>,
    width: Option<Width>,
    validate: Option<&Validator<'_>>,
) -> CaseReport {
    let start = std::time::Instant::now();
    match read_as(path, syntax) {
        Ok(prog) => judge(&prog, path, who, width, validate),
        Err(e) => {
            let mut rep = CaseReport::new(path.display().to_string());
            rep.line = format!("FAIL {e}");
            rep.seconds = start.elapsed().as_secs_f64();
            rep
        }
    }
}

/// The one judgement of a case's `expr` lines simplified by `who` (what
/// `replay` and `check --simplifier` both print): the checks of
/// [`replay`], the validator, the class of a finding against a peer, and
/// for a failure every node's value at the failing point. `path` labels
/// the report and resolves a `# simplify-width:` header.
pub fn judge(
    prog: &Program,
    path: &Path,
    who: Replayer<'_>,
    width: Option<Width>,
    validate: Option<&Validator<'_>>,
) -> CaseReport {
    let start = std::time::Instant::now();
    let mut rep = CaseReport::new(path.display().to_string());
    let header = Header::of(prog);
    rep.recorded = header.kind;
    rep.recorded_subject = header.simplifier.clone();
    rep.recorded_class = header.class();
    rep.recorded_cause = header.cause.clone();
    let r = (|| {
        let default = match who {
            Replayer::Engine { .. } => Width::W64,
            Replayer::Subject { subject, .. } => subject.profile().width(),
        };
        let w = match width {
            Some(w) => w,
            None => case_width(prog, path)?.unwrap_or(default),
        };
        replay(prog, path, who, w, validate)
    })();
    let r = match r {
        Ok(r) => r,
        Err(e) => {
            rep.line = format!("FAIL {e}");
            rep.seconds = start.elapsed().as_secs_f64();
            return rep;
        }
    };
    let w = r.width;
    rep.width = Some(w.0);
    for f in &r.checked.failures {
        if !rep.found.contains(&f.kind) {
            rep.found.push(f.kind);
        }
    }
    if let Some(t) = &r.checked.tgt {
        rep.answer = t
            .iter()
            .map(|&id| print::expr(&r.checked.graph, id))
            .collect();
    }
    if let Some(c) = &r.checked.class {
        rep.class = Some(c.class);
        rep.backend = Some(c.header());
        rep.backends = c.backends.clone();
    }
    rep.relaxed = r.checked.relaxed.as_ref().map(|x| x.header());
    if let Replayer::Subject {
        subject,
        confirm: true,
        ..
    } = who
    {
        let mut note = None;
        rep.reproducer = crate::classify::reproducer(subject, &r.checked, &mut note);
        if let Some(n) = note {
            rep.detail.push_str(&format!("  note: {n}\n"));
        }
        // The finding's cause now, for the kind its header records.
        let kind = rep
            .recorded
            .filter(|&k| r.checked.failed(k))
            .or_else(|| r.checked.failures.first().map(|f| f.kind));
        if let Some(kind) = kind {
            let found = crate::cause::attribute(
                subject,
                &r.checked,
                kind,
                &replay_config(w),
                &crate::cause::backend::LiteralCache::default(),
            );
            rep.detail.push_str(&format!("  cause: {}\n", found.cause));
            if let Some(d) = found.detail() {
                rep.detail.push_str(&format!("    {d}\n"));
            }
            rep.cause = Some(found);
        }
    }
    let val = r.checked.validation.as_ref();
    rep.smt = val.map(|v| v.verdict);
    let jit = r.checked.oracle.as_ref();
    rep.proved =
        jit.is_some_and(|o| o.exhaustive_pass()) || val.is_some_and(|v| v.verdict.proves());
    let smt = match val {
        None if validate.is_some() && r.checked.unsupported.is_none() => {
            "no SMT: simplification failed".to_string()
        }
        None => "no SMT".to_string(),
        Some(v) if v.verdict == checks::ValidationVerdict::Unknown => format!(
            "SMT unknown: {}",
            v.detail.as_deref().unwrap_or("no reason given")
        ),
        Some(v) => format!("SMT: {}", v.verdict),
    };
    let smt_note = match jit {
        Some(o) => format!(" (JIT: {}; {smt})", o.coverage()),
        None => format!(" ({smt})"),
    };
    if let Some(why) = &r.checked.unsupported {
        // A peer that declines a case it once answered: nothing to check,
        // and nothing proved either.
        rep.unsupported = Some(why.clone());
        rep.line = format!(
            "FAIL {} at width {w}: the simplifier declined it ({})",
            path.display(),
            checks::one_line(why)
        );
        rep.seconds = start.elapsed().as_secs_f64();
        return rep;
    }
    if let (
        Replayer::Subject {
            missed: Some(h), ..
        },
        true,
        Some(t),
    ) = (who, r.ok(), &r.checked.tgt)
    {
        rep.missed = Some(h.hunt_settled(&r.checked.graph, &r.checked.src, t));
    }
    if r.ok() {
        rep.ok = true;
        rep.line = format!("ok   {} at width {w}{smt_note}", path.display());
        rep.seconds = start.elapsed().as_secs_f64();
        return rep;
    }
    rep.line = format!("FAIL {} at width {w}{smt_note}", path.display());
    failure_detail(&mut rep, &r, val);
    rep.seconds = start.elapsed().as_secs_f64();
    rep
}

/// A failing case's detail: each failure, the peer's classes, and the
/// failing point with every node's value there (from the checks, else from
/// the validator).
fn failure_detail(rep: &mut CaseReport, r: &Replay, val: Option<&checks::Validation>) {
    let w = r.width;
    let d = &mut rep.detail;
    for f in &r.checked.failures {
        d.push_str(&format!("  {f}\n"));
    }
    if let Some(b) = &rep.backend {
        d.push_str(&format!("  backend: {b}\n"));
        for line in &rep.backends {
            d.push_str(&format!("    {line}\n"));
        }
    }
    if let Some(x) = &rep.relaxed {
        d.push_str(&format!("  relaxed: {x}\n"));
    }
    // The failing point: from the checks, else from the validator.
    let env: Option<Vec<i128>> = r
        .checked
        .failures
        .iter()
        .find_map(|f| f.env.as_ref())
        .map(|e| e.iter().map(|&v| v as i128).collect())
        .or_else(|| val.and_then(|v| v.point.clone()));
    if let Some(env) = env {
        let p = r.program();
        let named: Vec<(String, i128)> = p
            .graph
            .vars()
            .iter()
            .zip(&env)
            .map(|(d, &v)| (d.name.clone(), v))
            .collect();
        d.push_str(&format!("  point: {}\n", print::point(&p.graph, &named)));
        let show = |roots: &[NodeId]| {
            crate::checks::show_eval(&p.graph, &interp::eval(&p.graph, roots, &env, w))
        };
        d.push_str(&format!(
            "  results: source {}, target {}\n",
            show(&p.outputs),
            show(&p.expects)
        ));
        d.push_str(
            "  every node at that point (source: the `expr` lines, target: the simplifier's answer):\n",
        );
        d.push_str(&node_values(&p, &env, w));
    }
}

/// The value of every node of both sides at a point, one per line, source
/// first: what a failing point looks like from the inside.
pub fn node_values(p: &Program, env: &[i128], w: Width) -> String {
    /// Nodes listed per side: the ones nearest the roots.
    const NODE_ROWS: usize = 1000;
    let mut out = String::new();
    for (label, roots) in [("source", &p.outputs), ("target", &p.expects)] {
        if roots.is_empty() {
            continue;
        }
        out.push_str(&format!("  {label}:\n"));
        match interp::eval_all(&p.graph, roots, env, w) {
            Ok(vals) => {
                let shown: Vec<NodeId> = p
                    .graph
                    .reachable(roots)
                    .into_iter()
                    .filter(|&id| !matches!(p.graph.node(id).op, Op::Const(_) | Op::Invalid))
                    .collect();
                // Each text is cut short before it is printed whole, so a
                // long chain costs its length, not its length squared.
                let rows: Vec<(String, String)> = shown
                    .iter()
                    .take(NODE_ROWS)
                    .map(|&id| {
                        (
                            checks::short_expr(&p.graph, id),
                            vals[id.index()].to_string(),
                        )
                    })
                    .collect();
                let width = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
                for (text, val) in rows {
                    out.push_str(&format!("    {text:<width$} = {val}\n"));
                }
                if shown.len() > NODE_ROWS {
                    out.push_str(&format!(
                        "    ... and {} not shown\n",
                        print::count(shown.len() - NODE_ROWS, "more node")
                    ));
                }
            }
            Err(u) => out.push_str(&format!(
                "    undefined: {} at {}\n",
                u.reason,
                checks::short_expr(&p.graph, u.node)
            )),
        }
    }
    out
}
