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
use crate::oracle::{self, Domain, Replay};
use crate::subject::Subject;
use engine::dtype::Width;
use engine::ir::NodeId;
use engine::semantics::{Failure, Model, Ub};

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
    c.class = if let Some((tgt, wrong)) = c.tgt.as_deref().zip(wrong_point(c, model)) {
        Some(oracle_class(subject, c, tgt, &wrong, only, model))
    } else {
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
    };
}

fn unconfirmed() -> Confirmation {
    Confirmation::without_backend(
        Class::Unconfirmed,
        "not run on the peer's backend (confirmation off)",
    )
}

/// A point where the answer is wrong under tileproof's model: the oracle's
/// failing point, else the validator's counterexample (a point the walk
/// sampled past is judged on the backends all the same).
struct WrongPoint<'c> {
    env: Vec<i64>,
    failure: Failure,
    /// Why the target is undefined there, when the oracle's replay says.
    ub: Option<Ub>,
    /// The oracle's replay there (both sides' values by the interpreter).
    replay: Option<&'c Replay>,
    /// Its row-major index, when the oracle walked every point before it.
    walked_to: Option<u64>,
    /// The oracle's domain and node count.
    domain: Option<(&'c Domain, usize)>,
}

fn wrong_point(c: &Checked, model: Model) -> Option<WrongPoint<'_>> {
    if c.failed(Kind::Oracle) {
        let report = c.oracle.as_ref()?;
        let f = report.failure.as_ref()?;
        return Some(WrongPoint {
            env: f.env.clone(),
            failure: f.failure,
            ub: f
                .replay
                .as_ref()
                .and_then(|r| r.tgt.as_ref().err())
                .map(|u| u.reason),
            replay: f.replay.as_ref(),
            walked_to: (!report.sampled).then_some(f.index),
            domain: Some((&report.domain, report.nodes)),
        });
    }
    let env = c.failure(Kind::Validate)?.env.clone()?;
    let failure = oracle::fails_at(&c.graph, &c.src, c.tgt.as_deref()?, &env, model)?;
    Some(WrongPoint {
        env,
        failure,
        ub: None,
        replay: None,
        walked_to: None,
        domain: None,
    })
}

/// The class of an oracle or validation finding against a peer: by its
/// backends at the failing points under `model` (`only`: `None` when
/// confirmation is off, else the one backend to run or every one), else
/// unconfirmed.
fn oracle_class(
    subject: &dyn Subject,
    c: &Checked,
    tgt: &[NodeId],
    f: &WrongPoint<'_>,
    only: Option<Option<&str>>,
    model: Model,
) -> Confirmation {
    if !c.covered_by(subject) {
        return confirm::outside_language(subject);
    }
    let (g, src) = (&c.graph, &c.src);
    let Some(only) = only else {
        return unconfirmed();
    };
    if subject.backends().is_empty() {
        return Confirmation::without_backend(
            Class::Unconfirmed,
            format!("{} offers no backend to run it on", subject.name()),
        );
    }
    let first = confirm::OraclePoint {
        env: &f.env,
        replay: f.replay,
        walked_to: f.walked_to,
        domain: f.domain,
    };
    let points = confirm::failing_points(g, src, tgt, model, Some(first), CONFIRM_POINTS);
    let flagged = format!(
        "tileproof's model flagged {}: {}",
        f.failure,
        confirm::model_part(Some(f.failure), f.ub)
    );
    confirm::confirm(subject, g, src, tgt, &points, &flagged, only)
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
