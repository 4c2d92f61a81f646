//! A rewrite that reads one division family as another: the answer is
//! right for the source with its truncating divisions taken as flooring
//! or ceiling ones (or its flooring ones as truncating or ceiling). TVM's
//! comparison folding splits `x % 4` as if it were `x mod 4`, in whatever
//! comparison it folds; Morok's gcd of a quotient's terms rounds a
//! truncating quotient down or up by the signs: one defect each, found in
//! as many shapes as the generators draw, keyed by the family misread.

use super::Cause;
use crate::checks::{self, CheckConfig, Checked};
use crate::oracle::{self, OracleConfig};
use engine::ir::op::{Family, Part};
use engine::ir::{Graph, NodeId, Op};
use engine::semantics::Model;

/// The family a peer's answer for a (sub)case misreads: the answer equals
/// the source with every quotient and remainder of that family (else one
/// of them alone) read as another's (a ceiling family has no remainder:
/// remainders stay), at every point of the domain the oracle walks; a
/// remainder by a negative constant is also read by the constant's
/// magnitude (the sign a truncating remainder ignores: TVM
/// normalises `x % -6` to `x % 6`, then splits it as `x mod 6`). A
/// constant answer is judged too (TVM decides a comparison it misread);
/// over a small domain that can be a coincidence, so the finding's `how`
/// names the reading, for its reader to check.
pub(super) fn misread(
    checked: &Checked,
    model: Model,
    cfg: &CheckConfig,
) -> Option<(Cause, String)> {
    let f = checked.oracle.as_ref()?.failure.as_ref()?;
    let tgt = checked.tgt.as_deref()?;
    let oracle_cfg = OracleConfig {
        partial: model.partial,
        unbounded: model.unbounded,
        ..cfg.oracle()
    };
    let mut g = checked.graph.clone();
    let below = g.reachable(&checked.src);
    let misreadings = [
        (Family::Trunc, Family::Floor),
        (Family::Trunc, Family::Ceil),
        (Family::Floor, Family::Trunc),
        (Family::Floor, Family::Ceil),
    ];
    for (read, as_) in misreadings {
        let of_read: Vec<NodeId> = below
            .iter()
            .copied()
            .filter(|&n| matches!(g.node(n).op.info().division, Some((fam, _)) if fam == read))
            .collect();
        // All of them, then each alone (a rewrite that misread one of
        // several).
        let mut sets: Vec<Vec<NodeId>> = vec![of_read.clone()];
        if of_read.len() > 1 {
            sets.extend(of_read.iter().map(|&n| vec![n]));
        }
        for nodes in sets.into_iter().filter(|t| !t.is_empty()) {
            for magnitude in [false, true] {
                if magnitude && !nodes.iter().any(|&n| negative_divisor(&g, n).is_some()) {
                    continue;
                }
                let reread = reread(&mut g, &checked.src, &nodes, as_, magnitude);
                if oracle::fails_at(&g, &reread, tgt, &f.env, model).is_some() {
                    continue;
                }
                let walked = oracle::check_cheapest(&g, &reread, tgt, &oracle_cfg);
                if walked.is_ok_and(|(report, _)| report.failure.is_none()) {
                    let shown: Vec<String> =
                        reread.iter().map(|&r| checks::short_expr(&g, r)).collect();
                    let how = format!(
                        "the answer is right for `{}` ({read} read as {as_})",
                        shown.join("`, `")
                    );
                    return Some((Cause::Misread { read }, how));
                }
            }
        }
    }
    None
}

/// The constant divisor of remainder `n`, when it is negative (and has a
/// magnitude).
fn negative_divisor(g: &Graph, n: NodeId) -> Option<i64> {
    let node = g.node(n);
    if !matches!(node.op.info().division, Some((_, Part::Remainder))) {
        return None;
    }
    g.node(node.src()[1])
        .as_const()
        .filter(|&c| c < 0 && c != i64::MIN)
}

/// `roots` rebuilt in `g` with the division ops of `nodes` taken as
/// family `as_`'s (the same part: quotient or remainder), and, with
/// `magnitude`, each of their remainders by a negative constant taken by
/// its magnitude.
fn reread(
    g: &mut Graph,
    roots: &[NodeId],
    nodes: &[NodeId],
    as_: Family,
    magnitude: bool,
) -> Vec<NodeId> {
    g.rebuild(roots, |g, n, node, src| {
        if !nodes.contains(&n) {
            return None;
        }
        let (_, part) = node.op.info().division?;
        let mut src = src.to_vec();
        if let Some(c) = negative_divisor(g, n).filter(|_| magnitude) {
            let dtype = g.node(node.src()[1]).dtype;
            src[1] = g.cnst(-c, dtype);
        }
        Some(g.mk(Op::division(as_, part).unwrap_or(node.op), &src))
    })
}
