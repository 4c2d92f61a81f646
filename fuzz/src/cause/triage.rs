//! The cause of a failed check, found without compiling anything: what a
//! campaign files a finding under before it spends a shrink or a compile
//! on it (a finding of a cause already kept is only counted).
//!
//! Layer by layer, the first that explains the failure:
//!
//! 1. a peer that failed names itself: a crash site, a loop, a hang
//!    ([`super::site`]);
//! 2. an unsound bound is its lowest node's transfer function; a wrong
//!    answer is the range analysis's when it is right wherever the peer's
//!    bounds hold ([`super::transfer`]);
//! 3. the first stage of a pipeline whose output fails ([`super::stage`]);
//!    a rule whose step fails alone ([`crate::blame`]);
//! 4. for a peer with neither, the innermost subterm it gets wrong alone;
//! 5. the failure and the case's shape.
//!
//! The backend ([`super::backend`]) needs the peer's compiler: it is asked
//! only of a finding that is kept, after its class is known
//! ([`crate::finding`]).

use super::found::{Found, WrongBound};
use super::subterm::{how_wrong, innermost_wrong, wrong_subterm};
use super::transfer::{self, Wrong};
use super::{site, stage, Cause};
use crate::blame::Blame;
use crate::blame::{self, Instance};
use crate::bucket;
use crate::checks::{self, CheckConfig, CheckFailure, Checked};
use crate::kind::{Kind, KindSet};
use crate::subject::Subject;
use engine::ir::NodeId;
use engine::semantics::{Failure, Model};

/// How far a triage looks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Depth {
    /// Where a campaign finds a finding: the cause named, its rule's
    /// instance the case itself (a finding of a known cause is only
    /// counted).
    Quick,
    /// A kept finding: its rule's instance the innermost node it fails on.
    Full,
}

/// The cause of `failure` (a failed check of `checked`, the case simplified
/// by `subject` under `cfg`).
pub fn triage(
    subject: &dyn Subject,
    checked: &Checked,
    failure: &CheckFailure,
    cfg: &CheckConfig,
    depth: Depth,
) -> Found {
    let peer = subject.engine().is_none();
    let cfg = &cfg.quick();
    let model = Model {
        width: cfg.width,
        ..subject.profile().model()
    };
    match failure.kind {
        Kind::PeerError | Kind::Crash | Kind::Garbage => {
            return Found::just(site::of_message(&failure.message));
        }
        Kind::Hang => return Found::just(Cause::Hang),
        Kind::Bounds => {
            if let Some(w) = wrong_bound(checked) {
                return Found {
                    cause: Cause::Transfer(w.op.clone()),
                    blame: None,
                    wrong_bound: Some(WrongBound::new(&checked.graph, &w, &checked.peer_bounds)),
                    how: None,
                };
            }
        }
        Kind::Oracle | Kind::Validate => {
            let focused = focus(checked);
            let checked = focused.as_ref().unwrap_or(checked);
            if let Some(found) = oracle_cause(subject, checked, failure, cfg, model, peer, depth) {
                return found;
            }
        }
        _ => {}
    }
    Found::just(shape(checked, failure.kind, failure.node))
}

/// `checked` narrowed to the output its oracle failure is of, when it has
/// several and the failure names one: a rule applies to one expression,
/// and the other outputs are not the finding's.
fn focus(checked: &Checked) -> Option<Checked> {
    let root = checked.oracle.as_ref()?.failure.as_ref()?.root?;
    let tgt = checked.tgt.as_ref()?;
    if checked.src.len() < 2 || root >= checked.src.len() || root >= tgt.len() {
        return None;
    }
    let mut narrow = checked.clone();
    narrow.src = vec![checked.src[root]];
    narrow.tgt = Some(vec![tgt[root]]);
    let below: std::collections::HashSet<NodeId> =
        checked.graph.reachable(&narrow.src).into_iter().collect();
    narrow.peer_bounds.retain(|b| below.contains(&b.node));
    narrow.bounds_violations.retain(|v| below.contains(&v.node));
    Some(narrow)
}

/// The cause of an oracle failure: the range analysis, a rule, a subterm.
fn oracle_cause(
    subject: &dyn Subject,
    checked: &Checked,
    failure: &CheckFailure,
    cfg: &CheckConfig,
    model: Model,
    peer: bool,
    depth: Depth,
) -> Option<Found> {
    let (g, src) = (&checked.graph, &checked.src);
    let how = oracle_failure(checked, model)?;
    if let Some(found) = bounds_explain(checked, failure, model, cfg.seed) {
        return Some(found);
    }
    if let Some(found) = stage::first_wrong(subject, g, src, cfg) {
        return Some(found);
    }
    let fired = checked.fired(subject.rule_names());
    let instance = match depth {
        Depth::Quick => Instance::Case,
        Depth::Full => Instance::Smallest,
    };
    let points: Vec<Vec<i64>> = failure.env.iter().cloned().collect();
    if let Some(b) = blame::blame(subject, g, src, how, &fired, cfg, instance, &points) {
        // The rule's premises: a step that is right wherever the peer's
        // bounds of its instance hold trusted a wrong bound.
        if let Some(found) = instance_bounds_explain(subject, &b, cfg, model, checked) {
            return Some(found);
        }
        return Some(Found {
            cause: Cause::Rule(b.culprit().to_string()),
            blame: Some(b),
            wrong_bound: None,
            how: None,
        });
    }
    if !peer {
        return None;
    }
    let n = innermost_wrong(subject, g, src, cfg)?;
    // The innermost subterm it gets wrong alone is a case of its own,
    // smaller: its cause may show where the whole case's did not (a rule
    // among many, a bound of a node the case rewrote first).
    let sub = if src.as_slice() != [n] {
        let sub_cfg = CheckConfig {
            kinds: KindSet::only(Kind::Oracle).with(Kind::Bounds),
            ..cfg.clone()
        };
        let c = checks::check(g, &[n], subject, &sub_cfg, None);
        if let Some(f) = c.failure(Kind::Oracle) {
            if let Some(found) = oracle_cause(subject, &c, f, cfg, model, false, depth) {
                return Some(found);
            }
        }
        c
    } else {
        checked.clone()
    };
    if let Some(found) = how_wrong(subject, &sub, model, cfg) {
        return Some(found);
    }
    Some(Found::just(Cause::Subterm {
        failure: how,
        shape: bucket::linear_shape(g, n),
    }))
}

/// The range analysis's transfer function, when the peer's bounds of
/// `checked`'s source exclude a value some node takes and its answer is
/// right wherever they hold.
fn bounds_explain(
    checked: &Checked,
    failure: &CheckFailure,
    model: Model,
    seed: u64,
) -> Option<Found> {
    let (g, src) = (&checked.graph, &checked.src);
    let tgt = checked.tgt.as_deref()?;
    if checked.peer_bounds.is_empty() {
        return None;
    }
    let w = wrong_bound(checked)?;
    let failing: Vec<Vec<i64>> = failure.env.iter().cloned().collect();
    transfer::right_where_bounds_hold(g, src, tgt, &checked.peer_bounds, model, seed, &failing)
        .then(|| Found {
            cause: Cause::Transfer(w.op.clone()),
            blame: None,
            wrong_bound: Some(WrongBound::new(g, &w, &checked.peer_bounds)),
            how: None,
        })
}

/// [`bounds_explain`] for a blamed rule's instance: its step (the rule
/// alone) judged against the peer's bounds of the instance, which may hold
/// nodes the case's source has not (Morok rewrites `-c / x` to `c * -1 /
/// x` before another group trusts the product's bound).
fn instance_bounds_explain(
    subject: &dyn Subject,
    b: &Blame,
    cfg: &CheckConfig,
    model: Model,
    case: &Checked,
) -> Option<Found> {
    let alone = subject.rule_alone(&b.rule)?;
    let step_cfg = CheckConfig {
        kinds: KindSet::only(Kind::Oracle),
        ..cfg.clone()
    };
    // The case's own bounds serve when the instance is the case.
    let at = &b.instance;
    let whole = at.whole_case;
    let mut step = if whole {
        checks::check(&case.graph, &case.src, alone.as_ref(), &step_cfg, None)
    } else {
        checks::check(&at.graph, &at.roots, alone.as_ref(), &step_cfg, None)
    };
    if whole {
        step.peer_bounds = case.peer_bounds.clone();
        step.bounds_violations = case.bounds_violations.clone();
    } else {
        let bounds_cfg = CheckConfig {
            kinds: KindSet::only(Kind::Bounds),
            ..cfg.clone()
        };
        let asked = checks::check(&step.graph, &step.src, subject, &bounds_cfg, None);
        // The check copied the step's graph: the instance's nodes have
        // the same ids in both.
        step.peer_bounds = asked.peer_bounds;
        step.bounds_violations = asked.bounds_violations;
    }
    let failure = step.failure(Kind::Oracle)?.clone();
    bounds_explain(&step, &failure, model, cfg.seed)
}

/// Whether `failure` of `checked` still has cause `want` (a shrink
/// candidate kept to its finding's cause): the triage of it, asking only
/// what that cause and the layers before it need (its bound; its rule
/// alone; its message). A shape cannot be kept (shrinking changes it).
pub fn holds(
    subject: &dyn Subject,
    checked: &Checked,
    failure: &CheckFailure,
    cfg: &CheckConfig,
    want: &Cause,
) -> bool {
    let cfg = &cfg.quick();
    let model = Model {
        width: cfg.width,
        ..subject.profile().model()
    };
    let (g, src) = (&checked.graph, &checked.src);
    match want {
        Cause::Crash(_) | Cause::Loop(_) => site::of_message(&failure.message) == *want,
        Cause::Hang => failure.kind == Kind::Hang,
        Cause::Transfer(_) if failure.kind == Kind::Bounds => {
            wrong_bound(checked).is_some_and(|w| Cause::Transfer(w.op) == *want)
        }
        Cause::Transfer(_) | Cause::Rule(_) => {
            let Some(how) = oracle_failure(checked, model) else {
                return false;
            };
            if let Some(found) = bounds_explain(checked, failure, model, cfg.seed) {
                return found.cause == *want;
            }
            if let Some(found) = stage::first_wrong(subject, g, src, cfg) {
                return found.cause == *want;
            }
            let only = match want {
                Cause::Rule(rule) => vec![(rule.clone(), 1)],
                _ => checked.fired(subject.rule_names()),
            };
            let points: Vec<Vec<i64>> = failure.env.iter().cloned().collect();
            let Some(b) = blame::blame(subject, g, src, how, &only, cfg, Instance::Case, &points)
            else {
                return false;
            };
            match instance_bounds_explain(subject, &b, cfg, model, checked) {
                Some(found) => found.cause == *want,
                None => Cause::Rule(b.culprit().to_string()) == *want,
            }
        }
        Cause::Subterm { failure, shape } => {
            oracle_failure(checked, model) == Some(*failure)
                && wrong_subterm(subject, g, src, cfg).as_deref() == Some(shape.as_str())
        }
        Cause::Introduced { .. } | Cause::Misread { .. } => {
            // A pipeline's: its first wrong stage's.
            if let Some(found) = stage::first_wrong(subject, g, src, cfg) {
                return found.cause == *want;
            }
            let Some(n) = innermost_wrong(subject, g, src, cfg) else {
                return false;
            };
            let sub_cfg = CheckConfig {
                kinds: KindSet::only(Kind::Oracle),
                ..cfg.clone()
            };
            let sub = checks::check(g, &[n], subject, &sub_cfg, None);
            how_wrong(subject, &sub, model, cfg).is_some_and(|f| f.cause == *want)
        }
        Cause::Stage { .. } | Cause::Implied { .. } => {
            stage::first_wrong(subject, g, src, cfg).is_some_and(|f| f.cause == *want)
        }
        Cause::Backend { .. } | Cause::Model(_) | Cause::Shape(_) => false,
    }
}

/// The lowest node whose peer bound is wrong, of the violations the check
/// found (it asked the peer's bounds and walked every node's values).
fn wrong_bound(checked: &Checked) -> Option<Wrong> {
    transfer::lowest_among(
        &checked.graph,
        &checked.src,
        &checked.peer_bounds,
        &checked.bounds_violations,
    )
}

/// How the answer failed: by the oracle's walk, else at the point the
/// validator found (a counterexample the walk sampled past).
fn oracle_failure(checked: &Checked, model: Model) -> Option<Failure> {
    let walked = checked
        .oracle
        .as_ref()
        .and_then(|o| o.failure.as_ref())
        .map(|f| f.failure);
    walked.or_else(|| {
        let tgt = checked.tgt.as_deref()?;
        let env = checked.failure(Kind::Validate)?.env.as_ref()?;
        crate::oracle::fails_at(&checked.graph, &checked.src, tgt, env, model)
    })
}

/// The failure and the shape of the node it is about (a bound's), else of
/// the case.
fn shape(checked: &Checked, kind: Kind, node: Option<NodeId>) -> Cause {
    let roots: Vec<NodeId> = match node {
        Some(n) => vec![n],
        None => checked.src.clone(),
    };
    // The walk's failure (the shape keeps what it said before a validator's
    // counterexample could be judged too).
    let how = (kind == Kind::Oracle)
        .then(|| {
            checked
                .oracle
                .as_ref()
                .and_then(|o| o.failure.as_ref())
                .map(|f| f.failure)
        })
        .flatten();
    let mut head = kind.name().to_string();
    if let Some(f) = how {
        head.push(' ');
        head.push_str(f.name());
    }
    Cause::Shape(format!(
        "{head}: {}",
        bucket::abstract_shape(&checked.graph, &roots)
    ))
}

/// The shape cause of the `kind` failure of `checked` (what a case is
/// filed under when nothing more can be said of it).
pub fn shape_of(checked: &Checked, kind: Kind) -> Cause {
    shape(checked, kind, checked.failure(kind).and_then(|f| f.node))
}
