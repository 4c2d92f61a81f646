//! Undefined behaviour a rewrite brings in: the peer's answer for a
//! (sub)case is undefined where its source is not, and right once that is
//! taken away (an overflow computed wide; a division by zero in a lane the
//! answer does not select).

use super::Cause;
use crate::checks::{self, CheckConfig, Checked};
use engine::semantics::{Failure, Model, Partial, Ub};

/// Where an [`Cause::Introduced`] partial op is: in a lane the answer does
/// not select.
const UNSELECTED_LANE: &str = "a lane the answer does not select";

/// The undefined behaviour a peer's answer brings into a (sub)case whose
/// source has none, when that is all that is wrong with it: the answer is
/// undefined at the failing point (`ub` at a node of `op` the answer
/// built) and equals the source there once that undefined behaviour is
/// taken away: an overflow computed wide (twice the width and more), a
/// division by zero or a bad shift giving some value in a lane the answer
/// does not select. A rewrite right over the integers that lacks the
/// check for its type's bounds, or one that drops the guard round a
/// partial op in an eager `where`: one defect whatever the subterm's
/// shape. With where it shows.
pub(super) fn introduced(
    checked: &Checked,
    model: Model,
    cfg: &CheckConfig,
) -> Option<(Cause, String)> {
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
    let how = match undefined.reason {
        Ub::IndexOverflow => format!(
            "the answer overflows at its `{}` (`{}`), and is right computed wide",
            g.node(undefined.node).op.name(),
            checks::short_expr(g, undefined.node)
        ),
        ub => format!("{ub} in {UNSELECTED_LANE}"),
    };
    crate::oracle::fails_at(g, &checked.src, tgt, &f.env, judged)
        .is_none()
        .then_some((
            Cause::Introduced {
                ub: undefined.reason,
            },
            how,
        ))
}
