//! A finding, from a failing case to its corpus entry: shrunk while it
//! fails the same way (and, against a peer, shows the same class on the
//! peer's backend), checked again after a round trip through text,
//! classified by the peer's compiled code, blamed on the rule whose step
//! fails alone ([`crate::blame`]), with the peer's reproducer. Campaigns,
//! `tileproof import` and `prove --simplifier` (a peer rule's failing
//! instance) all prepare their findings here.

use crate::blame;
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

/// Shrinks `program` (its `expr` lines) while it fails `kind` under
/// `subject` and `check` (whose `kinds` are narrowed to what `kind` needs:
/// shrinking a peer's finding runs the peer on every candidate),
/// then builds the corpus entry from the shrunk case, checked again after
/// a round trip through text (the text is what the corpus keeps).
/// `shrink_steps == 0` keeps the case as it is; past `deadline` shrinking
/// stops where it is.
///
/// Judging and classifying are two steps: against a peer with backends
/// (`confirm` not off), the finding is classified by the peer's compiled
/// code first ([`crate::classify`]); a real bug (a wrong
/// value, a trap, a compile error) is shrunk only through candidates that
/// still show that class on the backend that showed it, so the shrunk case
/// is the same bug and not a smaller model-only look-alike. The shrunk
/// case is classified again on every backend, and a bug gets the peer's
/// reproducer script. Shared by campaigns and `tileproof import`.
#[allow(clippy::too_many_arguments)]
pub fn prepare_finding(
    program: &Program,
    kind: Kind,
    subject: &dyn Subject,
    check: &CheckConfig,
    confirm: &Confirm,
    validator: Option<&Validator<'_>>,
    shrink_steps: usize,
    origin: String,
    deadline: Option<Instant>,
) -> Prepared {
    let mut ccfg = check.clone();
    ccfg.kinds = kinds_for(kind);
    // A shrunk case must stay one the subject accepts (a peer's profile):
    // else shrinking finds a case it was never meant to take (a bare
    // `invalid` for tinygrad) and blames it.
    let profile = subject.profile();
    let original = Program {
        graph: program.graph.clone(),
        outputs: program.outputs.clone(),
        expects: Vec::new(),
        header: Vec::new(),
        constraints: Vec::new(),
        expect_constraints: None,
    };
    // The class to keep while shrinking, and the backend that shows it.
    let keep = (kind == Kind::Oracle && *confirm != Confirm::Off)
        .then(|| {
            let mut found = checks::check(
                &original.graph,
                &original.outputs,
                subject,
                &ccfg,
                validator,
            );
            classify(subject, &mut found, confirm, ccfg.width);
            found.class
        })
        .flatten()
        .filter(|c| {
            matches!(
                c.class,
                Class::WrongValue | Class::Trap | Class::CompileError
            )
        })
        .and_then(|c| c.backend.clone().map(|b| (c.class, b)));
    // A candidate keeps the class on the backend that showed it.
    let still_fails = |p: &Program| {
        if !profile.covers(&p.graph, &p.outputs) {
            return false;
        }
        let mut c = checks::check(&p.graph, &p.outputs, subject, &ccfg, validator);
        if !c.failed(kind) {
            return false;
        }
        let Some((class, b)) = &keep else {
            return true;
        };
        classify(subject, &mut c, &Confirm::Only(b.clone()), ccfg.width);
        c.class.as_ref().is_some_and(|x| x.class == *class)
    };
    let fails = |p: &Program| deadline.is_none_or(|d| Instant::now() < d) && still_fails(p);
    // Shrinking a hang would wait out the timeout on every candidate.
    let shrink_steps = if kind == Kind::Hang { 0 } else { shrink_steps };
    let (mut chosen, stats) = if shrink_steps == 0 {
        (original.clone(), None)
    } else if keep.is_some() {
        // Each candidate run on the backend costs a compile or two with the
        // peer's compiler: the case is shrunk by the check alone first, and
        // only when the result no longer shows the class on that backend is
        // it shrunk again, from the original, through candidates that do.
        let fails_fast = |p: &Program| {
            deadline.is_none_or(|d| Instant::now() < d)
                && profile.covers(&p.graph, &p.outputs)
                && checks::check(&p.graph, &p.outputs, subject, &ccfg, validator).failed(kind)
        };
        let (p, st) = shrink::shrink(&original, &fails_fast, shrink_steps);
        if still_fails(&p) {
            (p, Some(st))
        } else {
            let steps = shrink_steps.min(BACKEND_SHRINK_STEPS);
            let (p, st) = shrink::shrink(&original, &fails, steps);
            (p, Some(st))
        }
    } else {
        let (p, st) = shrink::shrink(&original, &fails, shrink_steps);
        (p, Some(st))
    };
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
            None => note = Some("this case does not fail after a round trip through text".into()),
        },
    }
    let mut checked = checks::check(&chosen.graph, &chosen.outputs, subject, &ccfg, validator);
    classify(subject, &mut checked, confirm, ccfg.width);
    let mut entry = Entry::from_checked(&checked, kind, subject, check.width, origin);
    if !checked.failed(kind) {
        // Only reachable through a nondeterministic check; say so rather
        // than write a case that claims a failure it does not show.
        entry.message = format!("{NOT_AGAIN} {}", entry.message);
    }
    entry.reproducer = crate::classify::reproducer(subject, &checked, &mut note);
    let failure = checked
        .oracle
        .as_ref()
        .and_then(|o| o.failure.as_ref())
        .map(|f| f.failure);
    if let (Kind::Oracle, Some(f), true) = (kind, failure, checked.failed(kind)) {
        if let Some(b) = blame::blame(
            subject,
            &checked.graph,
            &checked.src,
            f,
            &entry.rules,
            &ccfg,
        ) {
            entry.blame_on(b, Some(f));
        }
    }
    Prepared {
        entry,
        stats,
        note,
        failure,
    }
}

/// How a finding's message starts when its case passed the final check.
pub(crate) const NOT_AGAIN: &str = "(did not fail again when re-checked)";
