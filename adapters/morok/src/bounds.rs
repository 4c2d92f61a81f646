//! The peer's bounds (docs/protocol.md, section 7): Morok's `vmin`/`vmax`
//! of every node of the source, in the request trees' pre-order.
//!
//! A node's bounds are those of the UOp the adapter builds for it (for
//! `min`, the root of its spelling). tileproof checks each against the
//! node's values at every point: a range analysis is sound only if every
//! reachable value lies within what it says, and Morok's rules (and its
//! index lowering) trust it.

use crate::convert::{Uops, VarPlan, build_tree};
use morok_ir::ConstValue;
use morok_ir::UOp;
use std::collections::HashMap;
use std::sync::Arc;
use tileproof_adapter::{Bound, Bounds, Case, Refuse, Tree};

fn bound(u: &Arc<UOp>) -> Option<Bound> {
    match (u.vmin(), u.vmax()) {
        (ConstValue::Int(lo), ConstValue::Int(hi)) => Some(Bound::Int(*lo, *hi)),
        (ConstValue::Bool(lo), ConstValue::Bool(hi)) => Some(Bound::Bool(*lo, *hi)),
        _ => None,
    }
}

/// The bounds Morok gives every node of `case`'s expressions.
pub fn of(case: &Case, plans: &[VarPlan]) -> Result<Bounds, Refuse> {
    let mut memo: HashMap<Tree, Arc<UOp>> = HashMap::new();
    let mut out = Vec::new();
    for t in &case.trees {
        build_tree(&mut Uops, t, plans, &mut memo)?;
        out.push(
            t.preorder()
                .into_iter()
                .map(|n| match n {
                    Tree::Invalid => None,
                    n => memo.get(n).and_then(bound),
                })
                .collect(),
        );
    }
    Ok(out)
}
