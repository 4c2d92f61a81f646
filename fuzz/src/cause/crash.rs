//! A crash's cause: the site that raised ([`super::site`]), unless a step
//! before it trusted a wrong bound. A rule that collapses `y * -2^60` to 0
//! from a bound of `[0, 0]` hands the next rule a constant zero divisor,
//! and Morok's `mod_` builder panics there: the panic's site is where the
//! crash shows, the product's transfer function is what is wrong.
//!
//! Told apart by the peer itself: the lowest node whose bound the peer
//! gets wrong is replaced by a variable that ranges over its values, a
//! node whose bound any analysis gets right. The crash that goes with that
//! replacement needed the wrong bound; one that stays is the site's own.

use super::found::{Found, WrongBound};
use super::transfer::Wrong;
use super::Cause;
use crate::checks::{self, CheckConfig, Checked};
use crate::kind::KindSet;
use crate::subject::Subject;
use engine::ir::{Graph, NodeId};

/// The wrong bound a crash of `checked` needed, when the peer does not
/// crash once that node's bound is right; `None` keeps the site.
pub(super) fn after_wrong_bound(
    subject: &dyn Subject,
    checked: &Checked,
    cfg: &CheckConfig,
) -> Option<Found> {
    let w = checked.wrong_bound.as_ref()?;
    let (g, src) = right_bound(&checked.graph, &checked.src, w)?;
    if !subject.profile().covers(&g, &src) {
        return None;
    }
    let cfg = CheckConfig {
        kinds: KindSet::NONE,
        ..cfg.quick()
    };
    let again = checks::check(&g, &src, subject, &cfg, None);
    // Still failing, or a case that means nothing: the site's own.
    if !again.failures.is_empty() || again.unsupported.is_some() || again.tgt.is_none() {
        return None;
    }
    Some(Found {
        cause: Cause::Transfer(w.op.clone()),
        blame: None,
        wrong_bound: Some(WrongBound::new(&checked.graph, w, &checked.peer_bounds)),
        how: None,
    })
}

/// `src` with the wrong node replaced by a fresh variable over the node's
/// values (its range by tileproof's analysis, which is sound); `None` for
/// a root (nothing would be left to crash on), a bool, or a node that
/// never has a value.
fn right_bound(graph: &Graph, src: &[NodeId], w: &Wrong) -> Option<(Graph, Vec<NodeId>)> {
    let n = w.violation.node;
    let node = graph.node(n);
    if src.contains(&n) || !node.dtype.is_int() || node.range_empty() {
        return None;
    }
    let mut g = graph.clone();
    let name = (0..)
        .map(|i| format!("bounded{i}"))
        .find(|name| g.var_named(name).is_none())?;
    let v = g
        .declare_var(&name, node.dtype, node.vmin, node.vmax)
        .ok()?;
    let var = g.var_node(v);
    let roots = g.rebuild(src, |_, id, _, _| (id == n).then_some(var));
    Some((g, roots))
}
