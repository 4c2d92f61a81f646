//! A finding, from a failing case to its corpus entry: shrunk while it
//! fails the same way (and, against a peer, shows the same class on the
//! peer's backend), checked again after a round trip through text,
//! classified by the peer's compiled code, blamed on the rule whose step
//! fails alone ([`crate::blame`]), with the peer's reproducer. Campaigns,
//! `tileproof import` and `prove --simplifier` (a peer rule's failing
//! instance) all prepare their findings here.

use crate::cause::backend::{self, LiteralCache};
use crate::cause::found::Found;
use crate::cause::triage;
use crate::cause::{Cause, Layer};
use crate::checks::{self, CheckConfig, Kind, KindSet, Validator};
use crate::classify::{classify, Confirm};
use crate::confirm::Class;
use crate::corpus::{self, Entry};
use crate::shrink;
use crate::subject::Subject;
use engine::parse::Program;
use engine::semantics::Failure;
use std::time::Instant;

/// A finding ready to be written: its corpus entry (built from the shrunk
/// case), what shrinking did, and anything worth a note.
#[derive(Clone, Debug)]
pub struct Prepared {
    pub entry: Entry,
    pub stats: Option<shrink::ShrinkStats>,
    pub note: Option<String>,
    /// How the oracle's answer fails on the kept case (an oracle finding).
    pub failure: Option<Failure>,
}

/// The checks a shrink candidate must still fail: the finding's own kind
/// (a `panic` may come from any check, so all run; an oracle that does not
/// compile is reported as `jit`).
pub fn kinds_for(kind: Kind) -> KindSet {
    match kind {
        Kind::Cap => KindSet::NONE,
        Kind::Panic => KindSet::ALL,
        Kind::Jit => KindSet::only(Kind::Jit).with(Kind::Oracle),
        // A peer fails on its bounds request as well as on the case itself:
        // the request is made again (the failure kinds always count).
        Kind::PeerError | Kind::Crash | Kind::Hang | Kind::Garbage => KindSet::only(Kind::Bounds),
        k => KindSet::only(k),
    }
}

/// Candidates a case is shrunk through on the backend that shows its
/// class, at most: each is a compile with the peer's compiler (a tenth of
/// a second with clang), where the check alone is a millisecond.
pub const BACKEND_SHRINK_STEPS: usize = 150;

/// Candidates a case is shrunk through while keeping its cause, at most,
/// when shrinking by its failure alone lands on a case of another cause:
/// each is a triage (a peer's rules applied alone, its bounds asked).
pub const CAUSE_SHRINK_STEPS: usize = 60;

/// How findings are prepared: the subject, how a case is checked, which
/// of the peer's backends classify it, how far it is shrunk.
#[derive(Clone, Copy)]
pub struct Preparer<'a> {
    pub subject: &'a dyn Subject,
    /// The checks (`kinds` is narrowed per finding to what its kind needs).
    pub check: &'a CheckConfig,
    pub confirm: &'a Confirm,
    pub validator: Option<&'a Validator<'a>>,
    /// Checks a shrink may run (0: keep the case as found).
    pub shrink_steps: usize,
    /// Past it, shrinking stops where it is.
    pub deadline: Option<Instant>,
    /// The literals the peer's backends were seen to compile wrongly.
    pub literals: &'a LiteralCache,
}

impl Preparer<'_> {
    /// The checks a triage of a `kind` failure runs: `kind`'s, and the
    /// peer's bounds, which a cause is weighed against.
    fn triage_config(&self, kind: Kind) -> CheckConfig {
        CheckConfig {
            kinds: kinds_for(kind).with(Kind::Bounds),
            ..self.check.clone()
        }
    }

    /// The cause of the `kind` failure of `p`, when it fails so.
    pub fn cause_of(&self, p: &Program, kind: Kind) -> Option<Found> {
        let cfg = self.triage_config(kind);
        let c = checks::check(&p.graph, &p.outputs, self.subject, &cfg, self.validator);
        let f = c.failure(kind)?;
        Some(triage::triage(
            self.subject,
            &c,
            f,
            &cfg,
            triage::Depth::Full,
        ))
    }

    /// The cause a finding found with none (a subterm's shape) shows once
    /// shrunk by its check alone, when it is one of `kept` (causes kept as
    /// often as asked): counted there, it costs no compile with the peer's
    /// compiler. A shape seldom recurs, so the shape's key alone would
    /// send most findings of a known defect through the whole preparation.
    pub fn kept_cause(
        &self,
        program: &Program,
        kind: Kind,
        found: &Found,
        kept: &std::collections::HashSet<Cause>,
    ) -> Option<Cause> {
        if kept.is_empty()
            || found.cause.layer() != Layer::Unattributed
            || self.shrink_steps == 0
            || kind == Kind::Hang
        {
            return None;
        }
        let quick = CheckConfig {
            kinds: kinds_for(kind),
            ..self.check.clone()
        }
        .quick();
        let (p, _) = shrink::shrink(
            program,
            self.fails_by_check(kind, &quick),
            self.shrink_steps,
        );
        let cause = self.cause_of(&p, kind)?.cause;
        if kept.contains(&cause) {
            return Some(cause);
        }
        // A finding only tileproof's model calls one (its compiled code
        // agrees with the source) is known by its class: one run on the
        // peer's backend, where the whole preparation takes several.
        if !kept.iter().any(|c| c.layer() == Layer::Model) || *self.confirm == Confirm::Off {
            return None;
        }
        let mut c = checks::check(
            &p.graph,
            &p.outputs,
            self.subject,
            &self.triage_config(kind),
            self.validator,
        );
        c.failure(kind)?;
        classify(self.subject, &mut c, self.confirm, self.check.width);
        crate::cause::model_only(&c).filter(|m| kept.contains(m))
    }

    /// Whether a shrink candidate still fails `kind` by the check alone
    /// (no backend run), in time, and is still one the subject accepts.
    fn fails_by_check<'b>(
        &'b self,
        kind: Kind,
        cfg: &'b CheckConfig,
    ) -> impl Fn(&Program) -> bool + 'b {
        let profile = self.subject.profile();
        move |p: &Program| {
            self.deadline.is_none_or(|d| Instant::now() < d)
                && profile.covers(&p.graph, &p.outputs)
                && checks::check(&p.graph, &p.outputs, self.subject, cfg, self.validator)
                    .failed(kind)
        }
    }

    /// Whether `p`'s `kind` failure still has cause `want`.
    fn has_cause(&self, p: &Program, kind: Kind, want: &Cause) -> bool {
        let cfg = self.triage_config(kind).quick();
        let c = checks::check(&p.graph, &p.outputs, self.subject, &cfg, self.validator);
        c.failure(kind)
            .is_some_and(|f| triage::holds(self.subject, &c, f, &cfg, want))
    }

    /// Shrinks `program` (its `expr` lines) while it fails `kind` the same
    /// way and keeps its cause (`found`, else the cause triage gives it),
    /// then builds the corpus entry from the shrunk case, checked again
    /// after a round trip through text (the text is what the corpus
    /// keeps), classified on the peer's backends, and filed under its
    /// cause: the backend when its compiled code gets a construct wrong,
    /// else the cause the case shows.
    ///
    /// Judging and classifying are two steps: against a peer with backends
    /// (`confirm` not off), the finding is classified by the peer's
    /// compiled code first ([`crate::classify`]); a real bug (a wrong
    /// value, a trap, a compile error) is shrunk only through candidates
    /// that still show that class on the backend that showed it, so the
    /// shrunk case is the same bug and not a smaller model-only
    /// look-alike. The shrunk case is classified again on every backend,
    /// and a bug gets the peer's reproducer script.
    pub fn prepare(
        &self,
        program: &Program,
        kind: Kind,
        found: Option<Found>,
        origin: String,
    ) -> Prepared {
        let subject = self.subject;
        let mut ccfg = self.check.clone();
        ccfg.kinds = kinds_for(kind);
        // A shrunk case must stay one the subject accepts (a peer's
        // profile): else shrinking finds a case it was never meant to take
        // (a bare `invalid` for tinygrad) and blames it.
        let profile = subject.profile();
        let original = Program {
            graph: program.graph.clone(),
            outputs: program.outputs.clone(),
            expects: Vec::new(),
            header: Vec::new(),
            constraints: Vec::new(),
            expect_constraints: None,
        };
        let cause = found.or_else(|| self.cause_of(&original, kind));
        let keep = self.class_to_keep(&original, kind, &ccfg);
        // A candidate is judged by a quick walk (its failure shows at the
        // domain's edges); the kept case by the whole check.
        let quick = ccfg.quick();
        // A candidate keeps the class on the backend that showed it.
        let still_fails = |p: &Program| {
            if !profile.covers(&p.graph, &p.outputs) {
                return false;
            }
            let mut c = checks::check(&p.graph, &p.outputs, subject, &quick, self.validator);
            if !c.failed(kind) {
                return false;
            }
            let Some((class, b)) = &keep else {
                return true;
            };
            classify(subject, &mut c, &Confirm::Only(b.clone()), ccfg.width);
            c.class.as_ref().is_some_and(|x| x.class == *class)
        };
        let in_time = || self.deadline.is_none_or(|d| Instant::now() < d);
        let fails = |p: &Program| in_time() && still_fails(p);
        let (mut chosen, mut stats) = self.shrunk(&original, kind, &quick, &keep, &fails);
        // Shrinking by the failure alone may land on a case of another
        // cause (a smaller instance of another wrong rule): shrunk again
        // from the original, keeping the cause (a shape cannot be kept).
        if let Some(want) = cause
            .as_ref()
            .filter(|c| c.cause.layer() != Layer::Unattributed)
        {
            let same = |p: &Program| self.has_cause(p, kind, &want.cause);
            if stats.is_some() && !same(&chosen) {
                let steps = self.shrink_steps.min(CAUSE_SHRINK_STEPS);
                let (p, st) = shrink::shrink(&original, &|p: &Program| fails(p) && same(p), steps);
                (chosen, stats) = (p, Some(st));
            }
        }
        let mut note = None;
        let round_trip = |p: &Program| {
            let text = corpus::case_body(&p.graph, &p.outputs, None);
            engine::parse::parse_program(&text)
                .ok()
                .filter(|q| still_fails(q))
        };
        match round_trip(&chosen) {
            Some(p) => chosen = p,
            None => match round_trip(&original) {
                Some(p) => {
                    note = Some(
                        "the shrunk case did not fail after a round trip through text; \
                         the original case is kept"
                            .into(),
                    );
                    chosen = p;
                }
                None => {
                    note = Some("this case does not fail after a round trip through text".into())
                }
            },
        }
        // Checked with the peer's bounds too: the kept case's cause is
        // triaged on this check, not on another.
        let mut checked = checks::check(
            &chosen.graph,
            &chosen.outputs,
            subject,
            &self.triage_config(kind),
            self.validator,
        );
        classify(subject, &mut checked, self.confirm, ccfg.width);
        let failure = checked
            .oracle
            .as_ref()
            .and_then(|o| o.failure.as_ref())
            .map(|f| f.failure);
        let filed = self.file_under(kind, cause, &checked);
        let mut entry =
            Entry::from_checked(&checked, kind, subject, self.check.width, origin, filed);
        if !checked.failed(kind) {
            // Only reachable through a nondeterministic check; say so rather
            // than write a case that claims a failure it does not show.
            entry.message = format!("{NOT_AGAIN} {}", entry.message);
        }
        entry.reproducer = crate::classify::reproducer(subject, &checked, &mut note);
        Prepared {
            entry,
            stats,
            note,
            failure,
        }
    }

    /// The class to keep while shrinking an oracle finding, and the backend
    /// that shows it: a real bug's (a wrong value, a trap, a compile
    /// error), found on the peer's backends.
    fn class_to_keep(
        &self,
        original: &Program,
        kind: Kind,
        ccfg: &CheckConfig,
    ) -> Option<(Class, String)> {
        if !matches!(kind, Kind::Oracle | Kind::Validate) || *self.confirm == Confirm::Off {
            return None;
        }
        let mut found = checks::check(
            &original.graph,
            &original.outputs,
            self.subject,
            ccfg,
            self.validator,
        );
        classify(self.subject, &mut found, self.confirm, ccfg.width);
        found
            .class
            .filter(|c| {
                matches!(
                    c.class,
                    Class::WrongValue | Class::Trap | Class::CompileError
                )
            })
            .and_then(|c| c.backend.clone().map(|b| (c.class, b)))
    }

    /// `original` shrunk while `fails`, and what shrinking did (`None`: not
    /// shrunk). Each candidate run on a backend costs a compile or two with
    /// the peer's compiler: a case whose class must be kept is shrunk by the
    /// check alone first, and only when the result no longer shows the
    /// class on that backend is it shrunk again, from the original,
    /// through candidates that do.
    fn shrunk(
        &self,
        original: &Program,
        kind: Kind,
        ccfg: &CheckConfig,
        keep: &Option<(Class, String)>,
        fails: &dyn Fn(&Program) -> bool,
    ) -> (Program, Option<shrink::ShrinkStats>) {
        // Shrinking a hang would wait out the timeout on every candidate.
        if self.shrink_steps == 0 || kind == Kind::Hang {
            return (original.clone(), None);
        }
        if keep.is_none() {
            let (p, st) = shrink::shrink(original, fails, self.shrink_steps);
            return (p, Some(st));
        }
        let (p, st) = shrink::shrink(original, self.fails_by_check(kind, ccfg), self.shrink_steps);
        if fails(&p) {
            (p, Some(st))
        } else {
            let steps = self.shrink_steps.min(BACKEND_SHRINK_STEPS);
            let (p, st) = shrink::shrink(original, fails, steps);
            (p, Some(st))
        }
    }

    /// The cause the kept case is filed under: the backend, when the peer's
    /// compiled code gets a construct of it wrong (a wrong value or a trap
    /// the answer is not to blame for), else what triage of the kept case
    /// finds, else `cause` (the finding's as found).
    fn file_under(&self, kind: Kind, cause: Option<Found>, checked: &checks::Checked) -> Found {
        if let Some(cause) =
            backend::of_classified(self.subject, checked, self.check.width, self.literals)
                .or_else(|| crate::cause::model_only(checked))
        {
            return Found::just(cause);
        }
        // The kept case's own cause, with what shows it on the kept case;
        // a case shrunk to another cause than its finding's (found before
        // shrinking) keeps its finding's, unless that was only a shape.
        let now = checked.failure(kind).map(|f| {
            triage::triage(
                self.subject,
                checked,
                f,
                &self.triage_config(kind),
                triage::Depth::Full,
            )
        });
        match (now, cause) {
            (Some(now), Some(was))
                if now.cause != was.cause && was.cause.layer() != Layer::Unattributed =>
            {
                was
            }
            (Some(now), _) => now,
            (None, Some(was)) => was,
            (None, None) => Found::just(triage::shape_of(checked, kind)),
        }
    }
}

/// How a finding's message starts when its case passed the final check.
pub(crate) const NOT_AGAIN: &str = "(did not fail again when re-checked)";
