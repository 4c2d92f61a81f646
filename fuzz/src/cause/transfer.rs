//! A defect of the peer's range analysis, named by its transfer function.
//!
//! Morok bounds a product by its four corner products, computed with
//! wrapping multiplication: `-x` over the whole range is bounded `[MIN,
//! MIN + 1]`, `x * 2` over `[-16, MAX]` `[-32, -2]`. That one function
//! shows up under every expression holding a product, and every rule that
//! trusted such a bound rewrites wrongly though it is right for the bounds
//! it was given. So:
//!
//! - an unsound bound is the defect of the **lowest** node whose bound
//!   excludes a value it takes while its operands' bounds hold (the nodes
//!   above it only inherit the error), keyed by the op the peer computed
//!   that bound for (its own name, from the `bounds` answer's `ops`, else
//!   tileproof's): one transfer function, one cause, whatever expression
//!   holds the node ([`lowest`]);
//! - a wrong answer is the range analysis's when it is right at every point
//!   where every bound the peer gave holds ([`right_where_bounds_hold`]):
//!   whatever step made it wrong needed a wrong bound.

use crate::bounds::{self, Bound, Violation};
use crate::oracle::Domain;
use engine::interp::{self, Evaluator, PointCheck};
use engine::ir::{Graph, NodeId, Op};
use engine::semantics::Model;
use engine::walk::{self, Purpose};
use std::collections::HashSet;

/// A peer's bound of one node of the source, and the peer's own name for
/// the operation it bounded (the root of the node's spelling in its IR).
#[derive(Clone, Debug, PartialEq)]
pub struct PeerBound {
    pub node: NodeId,
    pub bound: Bound,
    pub op: Option<String>,
}

/// The node whose transfer function is wrong.
#[derive(Clone, Debug, PartialEq)]
pub struct Wrong {
    /// The op its bound was computed for (the peer's name, else tileproof's).
    pub op: String,
    /// Its bound, a value outside it, and where.
    pub violation: Violation,
}

/// The op a bounded node stands for: the peer's name, else tileproof's.
fn op_name(g: &Graph, b: &PeerBound) -> String {
    b.op.clone()
        .unwrap_or_else(|| g.node(b.node).op.name().to_string())
}

/// The lowest node of `src` whose peer bound excludes a value it takes at
/// some point where the source is defined, none of its operands' bounds
/// excluding one: the transfer function that is wrong. `None` when every
/// bound holds (at every point walked).
pub fn lowest(
    g: &Graph,
    src: &[NodeId],
    bounded: &[PeerBound],
    model: Model,
    seed: u64,
) -> Option<Wrong> {
    let pairs: Vec<(NodeId, Bound)> = bounded.iter().map(|b| (b.node, b.bound)).collect();
    let found = bounds::violations(g, src, &pairs, model, seed);
    lowest_among(g, src, bounded, &found)
}

/// [`lowest`] of the violations `found` (every wrong node's, as
/// [`bounds::violations`] gives them).
pub fn lowest_among(
    g: &Graph,
    src: &[NodeId],
    bounded: &[PeerBound],
    found: &[Violation],
) -> Option<Wrong> {
    let wrong: HashSet<NodeId> = found.iter().map(|v| v.node).collect();
    // Operands come before the nodes that use them.
    let node = g
        .reachable(src)
        .into_iter()
        .find(|&n| wrong.contains(&n) && !g.node(n).src().iter().any(|s| wrong.contains(s)))?;
    let violation = found.iter().find(|v| v.node == node)?.clone();
    let b = bounded.iter().find(|b| b.node == node)?;
    Some(Wrong {
        op: op_name(g, b),
        violation,
    })
}

/// Whether `tgt` refines `src` at every point walked where every bound of
/// `bounded` holds (`failing`: the points the oracle failed at, judged
/// first): then what makes the answer wrong needs a wrong bound, and the
/// defect is the range analysis's, not the rule's that trusted it.
pub fn right_where_bounds_hold(
    g: &Graph,
    src: &[NodeId],
    tgt: &[NodeId],
    bounded: &[PeerBound],
    model: Model,
    seed: u64,
    failing: &[Vec<i64>],
) -> bool {
    let domain = Domain::new(g, src);
    let watched: Vec<NodeId> = bounded
        .iter()
        .map(|b| b.node)
        .chain(src.iter().copied())
        .collect();
    let nodes = g.size_of(&watched) + g.size_of(tgt);
    let decision = walk::decide(Purpose::Premise, domain.size(), nodes);
    // Compiled, both sides, past a few hundred points: a sample of
    // thousands by the interpreter cost a campaign most of its time.
    let compiled = (domain.size() > walk::INTERPRETED)
        .then(|| {
            let s = crate::jit::CompiledEval::new(g, &watched, model).ok()?;
            let t = crate::jit::CompiledEval::new(g, tgt, model).ok()?;
            Some((s, t))
        })
        .flatten();
    let mut src_ev = Evaluator::new(g, src, model);
    let mut wrong_somewhere = false;
    let mut judge = |env: &[i64]| -> bool {
        let (holds, s, t) = match &compiled {
            Some((se, te)) => {
                let Ok(vals) = se.eval(env) else {
                    return false;
                };
                let holds = bounded
                    .iter()
                    .zip(&vals)
                    .all(|(b, &v)| bounds::contains(b.bound, v) != Some(false));
                (holds, vals[bounded.len()..].to_vec(), te.eval(env))
            }
            None => {
                let wide: Vec<i128> = env.iter().map(|&v| v as i128).collect();
                let Ok(vals) = src_ev.eval_all(&wide) else {
                    return false;
                };
                let holds = bounded
                    .iter()
                    .all(|b| bounds::contains(b.bound, vals[b.node.index()]) != Some(false));
                let s: Vec<interp::Val> = src.iter().map(|r| vals[r.index()]).collect();
                (holds, s, interp::eval(g, tgt, &wide, model))
            }
        };
        if !holds {
            return false;
        }
        wrong_somewhere = matches!(interp::check_point(Ok(s), t), PointCheck::Fails(_));
        wrong_somewhere
    };
    for env in failing {
        if judge(env) {
            return false;
        }
    }
    bounds::scan_points(&domain, seed, decision.samples(), |point| {
        judge(&domain.env(g, point))
    });
    !wrong_somewhere
}

/// The bounds of `bounded` that are of integer nodes below an op, for a
/// report: what the wrong node's operands were bounded by.
pub fn operand_bounds(g: &Graph, node: NodeId, bounded: &[PeerBound]) -> Vec<Option<Bound>> {
    if matches!(g.node(node).op, Op::Var(_) | Op::Const(_) | Op::Invalid) {
        return Vec::new();
    }
    g.node(node)
        .src()
        .iter()
        .map(|s| bounded.iter().find(|b| b.node == *s).map(|b| b.bound))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::dtype::Width;
    use engine::parse::parse_program;
    use engine::semantics::Partial;

    fn model() -> Model {
        Model {
            width: Width::W64,
            partial: Partial::Undefined,
            unbounded: false,
        }
    }

    /// Bounds of every node of the first expression, in pre-order, with
    /// the op each stands for.
    fn bounded(g: &Graph, root: NodeId, b: &[Option<(i64, i64, &str)>]) -> Vec<PeerBound> {
        bounds::preorder(g, root)
            .into_iter()
            .zip(b)
            .filter_map(|(n, b)| {
                b.map(|(lo, hi, op)| PeerBound {
                    node: n,
                    bound: Bound::Int(lo, hi),
                    op: Some(op.to_string()),
                })
            })
            .collect()
    }

    #[test]
    fn the_lowest_wrong_bound_is_the_cause_not_the_nodes_that_inherit_it() {
        // x * 2 over [-16, MAX]: Morok's wrapping corners give [-32, -2];
        // the sum above inherits the wrong bound.
        let p = parse_program("var x in [-16, 9223372036854775807]\nexpr x * 2 + 1\n").unwrap();
        let (g, r) = (&p.graph, p.outputs[0]);
        let b = bounded(
            g,
            r,
            &[
                Some((-31, -1, "ADD")),
                Some((-32, -2, "MUL")),
                Some((-16, i64::MAX, "DEFINE_VAR")),
                Some((2, 2, "CONST")),
                Some((1, 1, "CONST")),
            ],
        );
        let w = lowest(g, &p.outputs, &b, model(), 1).expect("a wrong bound");
        assert_eq!(w.op, "MUL");
        assert_eq!(w.violation.node, bounds::preorder(g, r)[1]);
    }

    #[test]
    fn sound_bounds_blame_no_transfer_function() {
        let p = parse_program("var x in [-3, 3]\nexpr x * 2\n").unwrap();
        let (g, r) = (&p.graph, p.outputs[0]);
        let b = bounded(
            g,
            r,
            &[Some((-6, 6, "MUL")), Some((-3, 3, "DEFINE_VAR")), None],
        );
        assert_eq!(lowest(g, &p.outputs, &b, model(), 1), None);
    }

    #[test]
    fn an_answer_right_wherever_the_bounds_hold_is_the_range_analysis_fault() {
        // (r1 * 2 + 1) / 2 => 0, trusting r1 * 2 in [-2, 0] (the wrapped
        // corners of [0, MAX] * 2): right at r1 = 0, the only point where
        // that bound holds.
        let text = "var r1 in [0, 9223372036854775807]\nexpr (r1 * 2 + 1) / 2\nexpect 0\n";
        let p = parse_program(text).unwrap();
        let g = &p.graph;
        let mul = bounds::preorder(g, p.outputs[0])[2];
        let b = [PeerBound {
            node: mul,
            bound: Bound::Int(-2, 0),
            op: Some("MUL".into()),
        }];
        let at = vec![vec![698_036_803_875_446_762]];
        assert!(right_where_bounds_hold(
            g,
            &p.outputs,
            &p.expects,
            &b,
            model(),
            1,
            &at
        ));
        // With sound bounds the same answer is the rule's fault.
        let sound = [PeerBound {
            node: mul,
            bound: Bound::Int(0, i64::MAX - 1),
            op: Some("MUL".into()),
        }];
        assert!(!right_where_bounds_hold(
            g,
            &p.outputs,
            &p.expects,
            &sound,
            model(),
            1,
            &at
        ));
    }
}
