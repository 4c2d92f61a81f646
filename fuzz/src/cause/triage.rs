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

use super::transfer::{self, Wrong};
use super::{site, stage, Cause};
use crate::blame::Blame;
use crate::blame::{self, Instance};
use crate::bucket;
use crate::checks::{self, CheckConfig, CheckFailure, Checked};
use crate::kind::{Kind, KindSet};
use crate::subject::Subject;
use engine::ir::{Graph, NodeId, Op};
use engine::semantics::{Failure, Model, Partial, Ub};

/// A cause with what showed it.
#[derive(Clone, Debug, PartialEq)]
pub struct Found {
    pub cause: Cause,
    /// The rule's step that fails alone (a [`Cause::Rule`]).
    pub blame: Option<Blame>,
    /// The bound that excludes a reachable value (a [`Cause::Transfer`]).
    pub wrong_bound: Option<WrongBound>,
}

impl Found {
    /// What showed the cause, in one line: the rule's step that fails
    /// alone, or the bound that is wrong.
    pub fn detail(&self) -> Option<String> {
        match (&self.blame, &self.wrong_bound) {
            (Some(b), _) => Some(format!(
                "{}{}, applied alone, fails the same way on: {}",
                b.culprit(),
                b.location
                    .as_ref()
                    .map_or_else(String::new, |l| format!(" (at {l})")),
                b.instance.text().lines().collect::<Vec<_>>().join("; ")
            )),
            (None, Some(w)) => Some(w.line()),
            (None, None) => None,
        }
    }

    /// A cause with nothing more to show.
    pub fn just(cause: Cause) -> Found {
        Found {
            cause,
            blame: None,
            wrong_bound: None,
        }
    }
}

impl serde::Serialize for Found {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Found", 3)?;
        st.serialize_field("cause", &self.cause)?;
        st.serialize_field("layer", self.cause.layer().name())?;
        st.serialize_field("detail", &self.detail())?;
        st.end()
    }
}

/// A wrong bound, as a report shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct WrongBound {
    /// The node (its text) and the op its bound was computed for.
    pub node: String,
    pub op: String,
    /// Its bound and its operands' (`None` where the peer gave none).
    pub bound: String,
    pub operands: Vec<Option<String>>,
    /// A value it takes outside the bound, and where.
    pub value: String,
    pub point: String,
}

impl WrongBound {
    fn new(g: &Graph, w: &Wrong, bounded: &[transfer::PeerBound]) -> WrongBound {
        let v = &w.violation;
        let domain = crate::oracle::Domain::new(g, &[v.node]);
        let point: Vec<(String, i64)> = domain
            .vars
            .iter()
            .map(|&i| (g.var(i).name.clone(), v.env[i as usize]))
            .collect();
        WrongBound {
            node: checks::short_expr(g, v.node),
            op: w.op.clone(),
            bound: v.bound.to_string(),
            operands: transfer::operand_bounds(g, v.node, bounded)
                .into_iter()
                .map(|b| b.map(|b| b.to_string()))
                .collect(),
            value: v.value.to_string(),
            point: engine::print::point(g, &point),
        }
    }

    /// One line: `the bound of x * 2 (MUL) is [-32, -2], but it is 0 at x = 0
    /// (operands [-16, 9223372036854775807], [2, 2])`.
    pub fn line(&self) -> String {
        let ops: Vec<String> = self
            .operands
            .iter()
            .map(|b| b.clone().unwrap_or_else(|| "none".into()))
            .collect();
        format!(
            "the bound of `{}` ({}) is {}, but it is {} at {}{}",
            self.node,
            self.op,
            self.bound,
            self.value,
            self.point,
            if ops.is_empty() {
                String::new()
            } else {
                format!(" (its operands' bounds: {})", ops.join(", "))
            }
        )
    }
}

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

/// Non-leaf nodes tried as subterms a simplifier gets wrong alone.
const MAX_SUBTERMS: usize = 24;

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
    if let Some(cause) = stage::first_wrong(subject, g, src, cfg) {
        return Some(Found::just(cause));
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
    if let Some(cause) = introduced(&sub, model, cfg) {
        return Some(Found::just(cause));
    }
    Some(Found::just(Cause::Subterm {
        failure: how,
        shape: bucket::linear_shape(g, n),
    }))
}

/// The undefined behaviour a peer's answer brings into a (sub)case whose
/// source has none, when that is all that is wrong with it: the answer is
/// undefined at the failing point (`ub` at a node of `op` the answer
/// built) and equals the source there once that undefined behaviour is
/// taken away: an overflow computed wide (twice the width and more), a
/// division by zero or a bad shift giving some value in a lane the answer
/// does not select. A rewrite right over the integers that lacks the
/// check for its type's bounds, or one that drops the guard round a
/// partial op in an eager `where`: one defect whatever the subterm's
/// shape.
/// Where an [`Cause::Introduced`] partial op is: in a lane the answer does
/// not select.
const UNSELECTED_LANE: &str = "unselected lane";

fn introduced(checked: &Checked, model: Model, cfg: &CheckConfig) -> Option<Cause> {
    let f = checked.oracle.as_ref()?.failure.as_ref()?;
    if f.failure != Failure::TargetUndefined {
        return None;
    }
    let replay = f.replay.as_ref()?;
    replay.src.as_ref().ok()?;
    let undefined = replay.tgt.as_ref().err()?;
    let tgt = checked.tgt.as_deref()?;
    let g = &checked.graph;
    // The node is the answer's own (not a node of the source).
    if g.reachable(&checked.src).contains(&undefined.node) {
        return None;
    }
    let judged = match undefined.reason {
        // Right over the integers: at the point, the answer computed with
        // room for every product of two values (and no more: a value past
        // that is still an overflow) equals the source.
        Ub::IndexOverflow => Model {
            width: engine::dtype::Width((2 * cfg.width.0 + 2).min(126)),
            ..model
        },
        // Only in a lane the answer does not select: with the partial op
        // giving some value there (which the ops above it carry without
        // overflowing), the answer equals the source (a guard dropped from
        // round a division in an eager `where`).
        Ub::DivByZero | Ub::DivOverflow | Ub::ShiftAmount => Model {
            partial: Partial::Unspecified,
            unbounded: true,
            ..model
        },
    };
    if judged == model {
        return None;
    }
    // Where: the op that overflows (one rule's missing check), or the
    // lane (a guard dropped, whatever op it guarded).
    let at = match undefined.reason {
        Ub::IndexOverflow => g.node(undefined.node).op.name().to_string(),
        _ => UNSELECTED_LANE.to_string(),
    };
    crate::oracle::fails_at(g, &checked.src, tgt, &f.env, judged)
        .is_none()
        .then_some(Cause::Introduced {
            ub: undefined.reason,
            at,
        })
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
            if let Some(cause) = stage::first_wrong(subject, g, src, cfg) {
                return cause == *want;
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
        Cause::Introduced { .. } => {
            let Some(n) = innermost_wrong(subject, g, src, cfg) else {
                return false;
            };
            let sub_cfg = CheckConfig {
                kinds: KindSet::only(Kind::Oracle),
                ..cfg.clone()
            };
            let sub = checks::check(g, &[n], subject, &sub_cfg, None);
            introduced(&sub, model, cfg).as_ref() == Some(want)
        }
        Cause::Stage { .. } | Cause::Implied { .. } => {
            stage::first_wrong(subject, g, src, cfg).as_ref() == Some(want)
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

/// The innermost subterm of `src` that `subject` gets wrong alone (the
/// oracle only), names and constants abstracted.
pub fn wrong_subterm(
    subject: &dyn Subject,
    g: &Graph,
    src: &[NodeId],
    cfg: &CheckConfig,
) -> Option<String> {
    innermost_wrong(subject, g, src, cfg).map(|n| bucket::linear_shape(g, n))
}

/// The innermost node of `src` that `subject` gets wrong alone.
pub(super) fn innermost_wrong(
    subject: &dyn Subject,
    g: &Graph,
    src: &[NodeId],
    cfg: &CheckConfig,
) -> Option<NodeId> {
    let cfg = CheckConfig {
        kinds: KindSet::only(Kind::Oracle),
        ..cfg.clone()
    };
    let profile = subject.profile();
    // The innermost operations, then each root (a large case's roots lie
    // past the innermost few).
    let inner = g
        .reachable(src)
        .into_iter()
        .filter(|&n| !matches!(g.node(n).op, Op::Var(_) | Op::Const(_) | Op::Invalid))
        .take(MAX_SUBTERMS);
    let mut tried = std::collections::HashSet::new();
    inner
        .chain(src.iter().copied())
        .filter(|&n| tried.insert(n))
        .find(|&n| {
            profile.covers(g, &[n]) && {
                let c = checks::check(g, &[n], subject, &cfg, None);
                c.failed(Kind::Oracle)
            }
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
