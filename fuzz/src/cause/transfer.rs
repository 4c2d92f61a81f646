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
/// `bounded` (of the source's nodes) and of `built` (of nodes the answer
/// built, which a rule's closure may have bounded before it used them)
/// holds (`failing`: the points the oracle failed at, judged first): then
/// what makes the answer wrong needs a wrong bound, and the defect is the
/// range analysis's, not the rule's that trusted it. A wrapped bound of a
/// product the answer built is one whose corners overflow, so the answer
/// overflows somewhere: points where a built node is undefined are passed
/// over, but the answer must be wrong somewhere with every built node
/// defined and a bound violated (an answer wrong only where it overflows
/// is its own fault, whatever its bounds say).
#[allow(clippy::too_many_arguments)]
pub fn right_where_bounds_hold(
    g: &Graph,
    src: &[NodeId],
    tgt: &[NodeId],
    bounded: &[PeerBound],
    built: &[PeerBound],
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
    let built_nodes: Vec<NodeId> = built.iter().map(|b| b.node).collect();
    let nodes = g.size_of(&watched) + g.size_of(tgt);
    let decision = walk::decide(Purpose::Premise, domain.size(), nodes);
    // Compiled, both sides, past a few hundred points: a sample of
    // thousands by the interpreter cost a campaign most of its time.
    let compiled = (domain.size() > walk::INTERPRETED)
        .then(|| {
            let s = crate::jit::CompiledEval::new(g, &watched, model).ok()?;
            let t = crate::jit::CompiledEval::new(g, tgt, model).ok()?;
            let b = match built.is_empty() {
                true => None,
                false => Some(crate::jit::CompiledEval::new(g, &built_nodes, model).ok()?),
            };
            Some((s, t, b))
        })
        .flatten();
    let mut src_ev = Evaluator::new(g, src, model);
    let mut built_ev = Evaluator::new(g, &built_nodes, model);
    let within = |b: &PeerBound, v| bounds::contains(b.bound, v) != Some(false);
    let mut wrong_somewhere = false;
    // Some point where the answer is wrong with every node it built
    // defined, and a bound violated: the wrong value a trusted bound
    // explains (not only the overflow of a node the answer built).
    let mut excused = built.is_empty();
    let mut judge = |env: &[i64]| -> bool {
        let (holds, s, t) = match &compiled {
            Some((se, te, be)) => {
                let Ok(vals) = se.eval(env) else {
                    return false;
                };
                let built_hold = match be {
                    None => true,
                    Some(be) => match be.eval(env) {
                        Ok(v) => built.iter().zip(&v).all(|(b, &v)| within(b, v)),
                        Err(_) => return false,
                    },
                };
                let holds = built_hold && bounded.iter().zip(&vals).all(|(b, &v)| within(b, v));
                (holds, vals[bounded.len()..].to_vec(), te.eval(env))
            }
            None => {
                let wide: Vec<i128> = env.iter().map(|&v| v as i128).collect();
                let built_hold = built.is_empty()
                    || match built_ev.eval_all(&wide) {
                        Ok(vals) => built.iter().all(|b| within(b, vals[b.node.index()])),
                        Err(_) => return false,
                    };
                let Ok(vals) = src_ev.eval_all(&wide) else {
                    return false;
                };
                let holds = built_hold && bounded.iter().all(|b| within(b, vals[b.node.index()]));
                let s: Vec<interp::Val> = src.iter().map(|r| vals[r.index()]).collect();
                (holds, s, interp::eval(g, tgt, &wide, model))
            }
        };
        let wrong = matches!(interp::check_point(Ok(s), t), PointCheck::Fails(_));
        if !holds {
            excused |= wrong;
            return false;
        }
        wrong_somewhere = wrong;
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
    !wrong_somewhere && excused
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

    /// The answer `max(r * K, 0) / K` of `r` over [-8, 8], and its node
    /// `r * K` bounded `[lo, hi]`.
    fn built(k: i64, lo: i64, hi: i64) -> (engine::parse::Program, Vec<PeerBound>) {
        let text = format!("var r in [-8, 8]\nexpr r\nexpect max(r * {k}, 0) / {k}\n");
        let p = parse_program(&text).unwrap();
        let mul = bounds::preorder(&p.graph, p.expects[0])[2];
        assert_eq!(p.graph.node(mul).op, Op::Mul);
        let b = vec![PeerBound {
            node: mul,
            bound: Bound::Int(lo, hi),
            op: Some("MUL".into()),
        }];
        (p, b)
    }

    #[test]
    fn an_answer_right_wherever_the_bound_of_a_node_it_built_holds_is_the_range_analysis_fault() {
        // Right for r >= 0, the only values the wrong bound [0, 16] of
        // `r * 2` allows: the closure that built it trusted the bound.
        let (p, wrong) = built(2, 0, 16);
        let at = vec![vec![-3]];
        // With K = 2^61 the node overflows for |r| >= 4, but the answer is
        // wrong at r = -3 too, where it is defined: passed over where it
        // overflows, the bound [0, MAX] explains it all the same.
        let (p61, b61) = built(1 << 61, 0, i64::MAX);
        assert!(right_where_bounds_hold(
            &p61.graph,
            &p61.outputs,
            &p61.expects,
            &[],
            &b61,
            model(),
            1,
            &at
        ));
        let right = |b: &[PeerBound]| {
            right_where_bounds_hold(&p.graph, &p.outputs, &p.expects, &[], b, model(), 1, &at)
        };
        assert!(right(&wrong));
        // With the sound bound the answer is wrong where it holds.
        let (p2, sound) = built(2, -16, 16);
        assert!(!right_where_bounds_hold(
            &p2.graph,
            &p2.outputs,
            &p2.expects,
            &[],
            &sound,
            model(),
            1,
            &at
        ));
    }

    #[test]
    fn an_answer_wrong_only_where_a_node_it_built_overflows_is_its_own_fault() {
        // `r * 2^62` is defined only at r in [-2, 1], where the answer
        // `max(r * 2^62, 0) / 2^62` of `max(r, 0)` is right; it is wrong
        // (undefined) only where the node overflows: no bound it trusted
        // makes it wrong, though [0, MAX] is violated at -2 and -1.
        let text = "var r in [-8, 8]\nexpr max(r, 0)\nexpect max(r * 4611686018427387904, 0) / 4611686018427387904\n";
        let p = parse_program(text).unwrap();
        let mul = bounds::preorder(&p.graph, p.expects[0])[2];
        let b = [PeerBound {
            node: mul,
            bound: Bound::Int(0, i64::MAX),
            op: Some("MUL".into()),
        }];
        assert!(!right_where_bounds_hold(
            &p.graph,
            &p.outputs,
            &p.expects,
            &[],
            &b,
            model(),
            1,
            &[vec![-5]]
        ));
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
            &[],
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
            &[],
            model(),
            1,
            &at
        ));
    }
}
