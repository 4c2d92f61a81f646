//! The peer's bounds (docs/protocol.md, section 7): Morok's `vmin`/`vmax`
//! of every node of the source, in the request trees' pre-order, each with
//! the op of the UOp whose bound it is.
//!
//! A node's bounds are those of the UOp the adapter builds for it (for
//! `min`, the root of its spelling). tileproof checks each against the
//! node's values at every point: a range analysis is sound only if every
//! reachable value lies within what it says, and Morok's rules (and its
//! index lowering) trust it. The op says which of Morok's transfer
//! functions gave the bound: `-x` is built as `MUL(x, -1)` and `min(a, b)`
//! as `-max(-a, -b)`, so both are `MUL`'s.

use crate::convert::{Uops, VarPlan, build_node};
use morok_ir::{ConstValue, Op, UOp};
use std::sync::Arc;
use tileproof_adapter::{Bound, Case, PeerBounds, Refuse, Tree};

fn bound(u: &Arc<UOp>) -> Option<Bound> {
    match (u.vmin(), u.vmax()) {
        (ConstValue::Int(lo), ConstValue::Int(hi)) => Some(Bound::Int(*lo, *hi)),
        (ConstValue::Bool(lo), ConstValue::Bool(hi)) => Some(Bound::Bool(*lo, *hi)),
        _ => None,
    }
}

/// The name of `u`'s operation, written as tinygrad writes its `Ops`
/// (Morok mirrors them): `Binary(Mul)` is `MUL`, `DefineVar` is
/// `DEFINE_VAR`.
pub fn op_name(u: &UOp) -> String {
    let camel: &str = match u.op() {
        Op::Unary(o, _) => o.as_ref(),
        Op::Binary(o, _, _) => o.as_ref(),
        Op::Ternary(o, _, _, _) => o.as_ref(),
        other => other.as_ref(),
    };
    let mut out = String::new();
    for (i, c) in camel.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

/// Builds `t`, recording the bound of each of its nodes in pre-order, and
/// the op of the UOp it is the bound of.
fn walk(
    t: &Tree,
    plans: &[VarPlan],
    out: &mut Vec<Option<Bound>>,
    ops: &mut Vec<Option<String>>,
) -> Result<Arc<UOp>, Refuse> {
    let slot = out.len();
    out.push(None);
    ops.push(None);
    let args: Vec<Arc<UOp>> = match t {
        Tree::Cast(_, x) => vec![walk(x, plans, out, ops)?],
        Tree::Op(_, args) => args
            .iter()
            .map(|x| walk(x, plans, out, ops))
            .collect::<Result<_, _>>()?,
        _ => Vec::new(),
    };
    let u = build_node(&mut Uops, t, &args, plans)?;
    if !matches!(t, Tree::Invalid) {
        out[slot] = bound(&u);
        ops[slot] = out[slot].map(|_| op_name(&u));
    }
    Ok(u)
}

/// The bounds Morok gives every node of `case`'s expressions, with their
/// ops.
pub fn of(case: &Case, plans: &[VarPlan]) -> Result<PeerBounds, Refuse> {
    let mut all = PeerBounds {
        bounds: Vec::new(),
        ops: Some(Vec::new()),
    };
    for t in &case.trees {
        let (mut out, mut ops) = (Vec::new(), Vec::new());
        walk(t, plans, &mut out, &mut ops)?;
        all.bounds.push(out);
        all.ops.get_or_insert_with(Vec::new).push(ops);
    }
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::{VarMode, plan_vars};
    use tileproof_adapter::Request;

    fn case(line: &str) -> Case {
        serde_json::from_str::<Request>(line)
            .unwrap()
            .case()
            .unwrap()
    }

    /// Morok spells `-x` as `MUL(x, -1)` and `min(a, b)` as `-max(-a,
    /// -b)`: their bounds are MUL's, whichever tileproof op asked.
    #[test]
    fn morok_reports_its_own_op_for_each_bound() {
        let c = case(
            r#"{"id": 1, "vars": [{"name": "x", "dtype": "index", "lo": -3, "hi": 5},
                                  {"name": "y", "dtype": "index", "lo": 0, "hi": 4}],
                "trees": [["add", ["neg", ["var", "x"]], ["min", ["var", "x"], ["var", "y"]]]]}"#,
        );
        let plans = plan_vars(&c, VarMode::Mixed).unwrap();
        let b = of(&c, &plans).unwrap();
        let ops: Vec<Option<&str>> = b.ops.as_ref().unwrap()[0]
            .iter()
            .map(Option::as_deref)
            .collect();
        // add, neg, x, min, x, y in pre-order.
        assert_eq!(ops.len(), 6);
        assert_eq!(ops[0], Some("ADD"));
        assert_eq!(ops[1], Some("MUL"), "{ops:?}");
        assert_eq!(ops[3], Some("MUL"), "{ops:?}");
        assert_eq!(b.bounds[0][1], Some(Bound::Int(-5, 3)));
        assert_eq!(b.bounds[0][3], Some(Bound::Int(-3, 4)));
    }
}
