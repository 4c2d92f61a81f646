//! A range analysis the peer does not expose, read from its folds.
//!
//! MLIR's `canonicalize` folds `e floordiv C` to a constant when the bounds
//! it computes for `e` lie in one block of `C`, and `e mod C` to `e - q*C`
//! when they lie in block `q`; its bound of a `mod` is wrong, and each
//! expression holding one is a finding of another shape. A fold to `k`
//! needs `e` in `[k*C, k*C + C - 1]` (ceildiv: `[(k-1)*C + 1, k*C]`; a mod
//! folded to `e - q*C`: `[q*C, q*C + C - 1]`): where `e` takes a value
//! outside, the stage folded with a bound of `e` that excludes it, and the
//! defect is that bound, by `e`'s op, whatever expression held it.
//!
//! Read only from a stage after the first (one the earlier stages get
//! right): MLIR's first stage builds the expressions with no ranges at
//! all, so a wrong fold there is not a bound's.

use super::Cause;
use crate::bounds::{self, Bound};
use crate::checks::{self, CheckConfig};
use crate::kind::{Kind, KindSet};
use crate::subject::Subject;
use engine::ir::{Graph, NodeId, Op};
use engine::semantics::Model;

/// The interval the answer `a` for `e op c` (c > 0) needs `e` in: a
/// quotient folded to a constant, a remainder folded to `e` less a
/// multiple of `c`.
fn needed(g: &Graph, op: Op, e: NodeId, c: i64, a: NodeId) -> Option<(i64, i64)> {
    let c = i128::from(c);
    let block = |q: i128| (q * c, q * c + c - 1);
    let (lo, hi) = match (op, g.node(a).op) {
        (Op::FloorDiv, Op::Const(k)) => block(i128::from(k)),
        (Op::CeilDiv, Op::Const(k)) => ((i128::from(k) - 1) * c + 1, i128::from(k) * c),
        (Op::Mod, _) if a == e => block(0),
        (Op::Mod, Op::Add) => {
            let (x, y) = match g.node(a).src() {
                [x, y] => (*x, *y),
                _ => return None,
            };
            let other = if x == e {
                y
            } else if y == e {
                x
            } else {
                return None;
            };
            let d = i128::from(g.node(other).as_const()?);
            if d % c != 0 {
                return None;
            }
            block(-d / c)
        }
        _ => return None,
    };
    // What of it a 64-bit value can be (nothing: every value leaves it).
    let clamp = |v: i128| v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
    Some(if lo > i128::from(i64::MAX) || hi < i128::from(i64::MIN) {
        (1, 0)
    } else {
        (clamp(lo), clamp(hi))
    })
}

/// The cause of `n` (a subterm `stage` gets wrong alone, `stage` named
/// `name`): the bound of its numerator the stage's fold needed, when the
/// numerator takes a value outside it.
pub fn implied(
    stage: &dyn Subject,
    name: &str,
    g: &Graph,
    n: NodeId,
    cfg: &CheckConfig,
    model: Model,
) -> Option<Cause> {
    let node = g.node(n);
    let op = node.op;
    if !matches!(op, Op::FloorDiv | Op::CeilDiv | Op::Mod) {
        return None;
    }
    let (e, c) = match node.src() {
        [e, c] => (*e, *c),
        _ => return None,
    };
    let c = g.node(c).as_const().filter(|&v| v > 0)?;
    let cfg = CheckConfig {
        kinds: KindSet::only(Kind::Oracle),
        ..cfg.clone()
    };
    let checked = checks::check(g, &[n], stage, &cfg, None);
    // The check copied the graph: `n` and `e` have the same ids in it.
    let a = *checked.tgt.as_ref()?.first()?;
    let (lo, hi) = needed(&checked.graph, op, e, c, a)?;
    let found = bounds::violations(
        &checked.graph,
        &[n],
        &[(e, Bound::Int(lo, hi))],
        model,
        cfg.seed,
    );
    (!found.is_empty()).then(|| Cause::Implied {
        stage: name.to_string(),
        op: checked.graph.node(e).op.name().to_string(),
    })
}
