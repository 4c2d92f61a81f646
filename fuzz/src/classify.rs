//! A finding's class by the peer's own compiled code: the step after the
//! check. [`crate::checks::check`] only judges (it sets only the classes no
//! backend is needed for: a peer that failed on the case, an input outside
//! its language); [`classify`] then runs what failed on the peer's
//! backends ([`crate::confirm`]). Each compiles with the peer's compiler, so
//! a finding is classified once as found and once as kept, never on every
//! case of a campaign or every shrink candidate.

use crate::backend::{ReproducerSpec, Script};
use crate::checks::Checked;
use crate::confirm::{self, Class, Confirmation};
use crate::kind::Kind;
use crate::oracle;
use crate::subject::Subject;
use engine::dtype::Width;
use engine::semantics::Model;

/// Which of a peer's backends confirm an oracle finding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Confirm {
    Off,
    /// Every backend the peer offers.
    All,
    /// Only this one (the backend that showed a bug, while shrinking it).
    Only(String),
}

/// How many failing points a finding is confirmed at.
pub const CONFIRM_POINTS: usize = 8;

/// Classifies `c`'s failure against `subject` on its backends (`confirm`
/// says which), judged at `width`: an oracle failure at its failing points,
/// a peer's unsound bounds at the point its bounds miss. A class the check
/// already set, and tileproof's own engine, are left as they are.
pub fn classify(subject: &dyn Subject, c: &mut Checked, confirm: &Confirm, width: Width) {
    if subject.engine().is_some() || c.class.is_some() {
        return;
    }
    let (g, src) = (&c.graph, &c.src);
    let only = match confirm {
        Confirm::Off => None,
        Confirm::All => Some(None),
        Confirm::Only(b) => Some(Some(b.as_str())),
    };
    // The strict model at the check's width: what the oracle judged and
    // the backends' values are confirmed under.
    let model = subject.profile().model_at(width);
    let class = oracle_class(subject, c, only, model).or_else(|| {
        let unsound = c.wrong_bound.as_ref().filter(|_| c.failed(Kind::Bounds));
        unsound.map(|w| {
            let v = &w.violation;
            if !c.covered_by(subject) {
                confirm::outside_language(subject)
            } else {
                match only {
                    None => unconfirmed(),
                    Some(only) => {
                        confirm::confirm_bounds(subject, g, src, v.node, v.bound, &v.env, only)
                    }
                }
            }
        })
    });
    c.class = class;
}

fn unconfirmed() -> Confirmation {
    Confirmation::without_backend(
        Class::Unconfirmed,
        "not run on the peer's backend (confirmation off)",
    )
}

/// The class of an oracle or validation finding against a peer, where its
/// answer is wrong at a point under `model`: the oracle's failing point,
/// else the validator's counterexample (a point the walk sampled past is
/// judged on the backends all the same). By its backends at the failing
/// points (`only`: `None` when confirmation is off, else the one backend
/// to run or every one), else unconfirmed; `None` without such a point.
fn oracle_class(
    subject: &dyn Subject,
    c: &Checked,
    only: Option<Option<&str>>,
    model: Model,
) -> Option<Confirmation> {
    let (g, src, tgt) = (&c.graph, &c.src, c.tgt.as_deref()?);
    // The point, with what the oracle knows of it (its replay there, how
    // far it walked, its domain), the failure, and why the target is
    // undefined there when the replay says.
    let (first, failure, ub) = if c.failed(Kind::Oracle) {
        let report = c.oracle.as_ref()?;
        let f = report.failure.as_ref()?;
        let ub = f.replay.as_ref().and_then(|r| r.tgt.as_ref().err());
        let first = confirm::OraclePoint {
            env: &f.env,
            replay: f.replay.as_ref(),
            walked_to: (!report.sampled).then_some(f.index),
            domain: Some((&report.domain, report.nodes)),
        };
        (first, f.failure, ub.map(|u| u.reason))
    } else {
        let env = c.failure(Kind::Validate)?.env.as_deref()?;
        let failure = oracle::fails_at(g, src, tgt, env, model)?;
        let first = confirm::OraclePoint {
            env,
            replay: None,
            walked_to: None,
            domain: None,
        };
        (first, failure, None)
    };
    if !c.covered_by(subject) {
        return Some(confirm::outside_language(subject));
    }
    let Some(only) = only else {
        return Some(unconfirmed());
    };
    if subject.backends().is_empty() {
        return Some(Confirmation::without_backend(
            Class::Unconfirmed,
            format!("{} offers no backend to run it on", subject.name()),
        ));
    }
    let points = confirm::failing_points(g, src, tgt, model, Some(first), CONFIRM_POINTS);
    let flagged = format!(
        "tileproof's model flagged {failure}: {}",
        confirm::model_part(Some(failure), ub)
    );
    Some(confirm::confirm(
        subject, g, src, tgt, &points, &flagged, only,
    ))
}

/// The peer's reproducer script for a confirmed bug of `checked`, when it
/// writes one; a failure to get it becomes a note.
pub fn reproducer(
    subject: &dyn Subject,
    checked: &Checked,
    note: &mut Option<String>,
) -> Option<Script> {
    let c = checked.class.as_ref()?;
    if !matches!(
        c.class,
        Class::WrongValue | Class::Trap | Class::CompileError | Class::PeerCrash
    ) {
        return None;
    }
    let backend = match c.class {
        Class::PeerCrash => None,
        _ => Some(c.backend.clone()?),
    };
    let env = c.env.clone().or_else(|| {
        checked
            .failures
            .iter()
            .find_map(|f| f.env.clone())
            .or_else(|| Some(checked.graph.vars().iter().map(|d| d.lo).collect()))
    })?;
    let spec = ReproducerSpec {
        backend,
        env,
        expected: c.expected.clone(),
        class: c.class.name().to_string(),
        kind: checked
            .failures
            .first()
            .map_or(String::new(), |f| f.kind.name().to_string()),
    };
    match subject.reproducer(&checked.graph, &checked.src, &spec) {
        Ok(script) => script,
        Err(e) => {
            *note = Some(format!("no reproducer: {e}"));
            None
        }
    }
}
