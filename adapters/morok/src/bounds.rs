//! The peer's bounds (docs/protocol.md, section 7): Morok's `vmin`/`vmax`
//! of every node of the source, in the request trees' pre-order.
//!
//! A node's bounds are those of the UOp the adapter builds for it (for
//! `min`, the root of its spelling). tileproof checks each against the
//! node's values at every point: a range analysis is sound only if every
//! reachable value lies within what it says, and Morok's rules (and its
//! index lowering) trust it.

use crate::convert::{Uops, VarPlan, build_node};
use morok_ir::ConstValue;
use morok_ir::UOp;
use std::sync::Arc;
use tileproof_adapter::{Bound, Bounds, Case, Refuse, Tree};

fn bound(u: &Arc<UOp>) -> Option<Bound> {
    match (u.vmin(), u.vmax()) {
        (ConstValue::Int(lo), ConstValue::Int(hi)) => Some(Bound::Int(*lo, *hi)),
        (ConstValue::Bool(lo), ConstValue::Bool(hi)) => Some(Bound::Bool(*lo, *hi)),
        _ => None,
    }
}

/// Builds `t`, recording the bounds of each of its nodes in pre-order.
fn walk(t: &Tree, plans: &[VarPlan], out: &mut Vec<Option<Bound>>) -> Result<Arc<UOp>, Refuse> {
    let slot = out.len();
    out.push(None);
    let args: Vec<Arc<UOp>> = match t {
        Tree::Cast(_, x) => vec![walk(x, plans, out)?],
        Tree::Op(_, args) => args
            .iter()
            .map(|x| walk(x, plans, out))
            .collect::<Result<_, _>>()?,
        _ => Vec::new(),
    };
    let u = build_node(&mut Uops, t, &args, plans)?;
    if !matches!(t, Tree::Invalid) {
        out[slot] = bound(&u);
    }
    Ok(u)
}

/// The bounds Morok gives every node of `case`'s expressions.
pub fn of(case: &Case, plans: &[VarPlan]) -> Result<Bounds, Refuse> {
    case.trees
        .iter()
        .map(|t| {
            let mut out = Vec::new();
            walk(t, plans, &mut out)?;
            Ok(out)
        })
        .collect()
}
