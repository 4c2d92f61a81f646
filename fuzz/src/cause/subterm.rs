//! The innermost subterm a simplifier gets wrong alone, and what is wrong
//! with its answer when that is one defect whatever the subterm's shape:
//! the undefined behaviour it brings in ([`super::introduced`]), the
//! division family it misreads ([`super::misread`]), the constant it wraps
//! ([`super::wrapped`]). Read by the triage of a whole case and by a
//! pipeline's stages alike.

use super::found::Found;
use super::introduced::introduced;
use super::misread::misread;
use super::wrapped::wrapped;
use super::Cause;
use crate::bucket;
use crate::checks::{self, CheckConfig, Checked};
use crate::kind::Kind;
use crate::subject::Subject;
use engine::ir::{Graph, NodeId, Op};
use engine::semantics::{Model, Ub};

/// Non-leaf nodes tried as subterms a simplifier gets wrong alone.
const MAX_SUBTERMS: usize = 24;

/// What is wrong with a peer's answer for the innermost subterm it gets
/// wrong alone, when it is one defect whatever the subterm's shape: the
/// undefined behaviour it brings in, the division family it misreads, the
/// constant it wraps.
pub(super) fn how_wrong(
    subject: &dyn Subject,
    sub: &Checked,
    model: Model,
    cfg: &CheckConfig,
) -> Option<Found> {
    let overflow = Cause::Introduced {
        ub: Ub::IndexOverflow,
    };
    let (cause, how) = introduced(sub, model, cfg)
        .or_else(|| misread(sub, model, cfg))
        .or_else(|| wrapped(subject, sub, model, cfg).map(|how| (overflow, how)))?;
    Some(Found {
        how: Some(how),
        ..Found::just(cause)
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
    innermost_wrong(subject, g, src, cfg).map(|(n, _)| bucket::linear_shape(g, n))
}

/// The innermost node of `src` that `subject` gets wrong alone, and its
/// check (the oracle only).
pub(super) fn innermost_wrong(
    subject: &dyn Subject,
    g: &Graph,
    src: &[NodeId],
    cfg: &CheckConfig,
) -> Option<(NodeId, Checked)> {
    let cfg = cfg.only(Kind::Oracle);
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
        .filter(|&n| tried.insert(n) && profile.covers(g, &[n]))
        .find_map(|n| {
            let c = checks::check(g, &[n], subject, &cfg, None);
            c.failed(Kind::Oracle).then_some((n, c))
        })
}
