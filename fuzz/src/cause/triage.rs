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
//! 3. a rule whose step fails alone ([`crate::blame`]);
//! 4. for a peer with neither, the innermost subterm it gets wrong alone;
//! 5. the failure and the case's shape.
//!
//! The backend ([`super::backend`]) needs the peer's compiler: it is asked
//! only of a finding that is kept, after its class is known
//! ([`crate::finding`]).

use super::transfer::{self, Wrong};
use super::{site, Cause};
use crate::blame;
use crate::bucket::{self, Blame};
use crate::checks::{self, CheckConfig, CheckFailure, Checked};
use crate::kind::{Kind, KindSet};
use crate::subject::Subject;
use engine::ir::{Graph, NodeId, Op};
use engine::semantics::{Failure, Model};

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
    fn just(cause: Cause) -> Found {
        Found {
            cause,
            blame: None,
            wrong_bound: None,
        }
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

/// Non-leaf nodes tried as subterms a simplifier gets wrong alone.
const MAX_SUBTERMS: usize = 24;

/// The cause of `failure` (a failed check of `checked`, the case simplified
/// by `subject` under `cfg`).
pub fn triage(
    subject: &dyn Subject,
    checked: &Checked,
    failure: &CheckFailure,
    cfg: &CheckConfig,
) -> Found {
    let peer = subject.engine().is_none();
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
            if let Some(w) = transfer::lowest(
                &checked.graph,
                &checked.src,
                &checked.peer_bounds,
                model,
                cfg.seed,
            ) {
                return Found {
                    cause: Cause::Transfer(w.op.clone()),
                    blame: None,
                    wrong_bound: Some(WrongBound::new(&checked.graph, &w, &checked.peer_bounds)),
                };
            }
        }
        Kind::Oracle => {
            if let Some(found) = oracle_cause(subject, checked, failure, cfg, model, peer) {
                return found;
            }
        }
        _ => {}
    }
    Found::just(shape_cause(checked, failure))
}

/// The cause of an oracle failure: the range analysis, a rule, a subterm.
fn oracle_cause(
    subject: &dyn Subject,
    checked: &Checked,
    failure: &CheckFailure,
    cfg: &CheckConfig,
    model: Model,
    peer: bool,
) -> Option<Found> {
    let (g, src) = (&checked.graph, &checked.src);
    let tgt = checked.tgt.as_deref()?;
    let how = oracle_failure(checked)?;
    if !checked.peer_bounds.is_empty() {
        if let Some(w) = transfer::lowest(g, src, &checked.peer_bounds, model, cfg.seed) {
            let failing: Vec<Vec<i64>> = failure.env.iter().cloned().collect();
            if transfer::right_where_bounds_hold(
                g,
                src,
                tgt,
                &checked.peer_bounds,
                model,
                cfg.seed,
                &failing,
            ) {
                return Some(Found {
                    cause: Cause::Transfer(w.op.clone()),
                    blame: None,
                    wrong_bound: Some(WrongBound::new(g, &w, &checked.peer_bounds)),
                });
            }
        }
    }
    let fired = checked.fired(subject.rule_names());
    if let Some(b) = blame::blame(subject, g, src, how, &fired, cfg) {
        return Some(Found {
            cause: Cause::Rule(b.rule.clone()),
            blame: Some(b),
            wrong_bound: None,
        });
    }
    if peer {
        if let Some(shape) = wrong_subterm(subject, g, src, cfg) {
            return Some(Found::just(Cause::Subterm(shape)));
        }
    }
    None
}

/// How the oracle's answer failed.
fn oracle_failure(checked: &Checked) -> Option<Failure> {
    checked
        .oracle
        .as_ref()
        .and_then(|o| o.failure.as_ref())
        .map(|f| f.failure)
}

/// The innermost subterm of `src` that `subject` gets wrong alone (the
/// oracle only), names and constants abstracted.
pub fn wrong_subterm(
    subject: &dyn Subject,
    g: &Graph,
    src: &[NodeId],
    cfg: &CheckConfig,
) -> Option<String> {
    let cfg = CheckConfig {
        kinds: KindSet::only(Kind::Oracle),
        ..cfg.clone()
    };
    let profile = subject.profile();
    g.reachable(src)
        .into_iter()
        .filter(|&n| !matches!(g.node(n).op, Op::Var(_) | Op::Const(_) | Op::Invalid))
        .take(MAX_SUBTERMS)
        .find(|&n| {
            profile.covers(g, &[n]) && {
                let c = checks::check(g, &[n], subject, &cfg, None);
                c.failed(Kind::Oracle)
            }
        })
        .map(|n| bucket::abstract_shape(g, &[n]))
}

/// The failure and the shape of the node it is about (a bound's), else of
/// the case.
fn shape_cause(checked: &Checked, failure: &CheckFailure) -> Cause {
    let roots: Vec<NodeId> = match failure.node {
        Some(n) => vec![n],
        None => checked.src.clone(),
    };
    let how = (failure.kind == Kind::Oracle)
        .then(|| oracle_failure(checked))
        .flatten();
    let mut head = failure.kind.name().to_string();
    if let Some(f) = how {
        head.push(' ');
        head.push_str(f.name());
    }
    Cause::Shape(format!(
        "{head}: {}",
        bucket::abstract_shape(&checked.graph, &roots)
    ))
}
