//! A peer's range analysis, checked (docs/protocol.md, section 7).
//!
//! A simplifier is only as sound as the bounds it reasons with: Morok's
//! rules drop a `mod`, fold a comparison or narrow an index to 32 bits on
//! the strength of `vmin`/`vmax`. An adapter that says `"bounds": true`
//! answers a `bounds` request with its peer's bounds of every node of the
//! source, in the pre-order of the request's trees; [`check`] evaluates
//! every node at every point of the domain (sampled past the walk policy's
//! limits, [`Purpose::Bounds`]) and reports a value outside its node's
//! bounds: an `unsound-bounds` finding, even when no rewrite has used that
//! bound yet (Souper checks LLVM's dataflow facts the same way).

use crate::jit::EvalScratch;
use crate::oracle::Domain;
use engine::interp::{Evaluator, Val};
use engine::ir::{Graph, NodeId};
use engine::semantics::Model;
use engine::walk::{self, Purpose, Way};

/// A node's bound, an answer's bounds, the peer's op names of its nodes,
/// and the answer itself: the protocol's wire types.
pub use tileproof_adapter::{Bound, Bounds, Ops, PeerBounds};

/// Whether `v` lies within `b`; `None` for a value it says nothing of (an
/// invalid or unconstrained lane, or a value of the other type).
pub fn contains(b: Bound, v: Val) -> Option<bool> {
    match (b, v) {
        (Bound::Int(lo, hi), Val::Int(x)) => Some(lo as i128 <= x && x <= hi as i128),
        (Bound::Bool(lo, hi), Val::Bool(b)) => Some(lo <= b && b <= hi),
        _ => None,
    }
}

/// The nodes of `root`'s tree in pre-order (a node, then its operands left
/// to right), a shared node once per occurrence: the order in which a
/// request writes the tree, and a `bounds` answer lists it.
pub fn preorder(g: &Graph, root: NodeId) -> Vec<NodeId> {
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        out.push(n);
        stack.extend(g.node(n).src().iter().rev());
    }
    out
}

/// `Err` unless the answer's ops, when it has them, name one op per bound
/// (the same lists, of the same lengths).
pub fn ops_match(b: &PeerBounds) -> Result<(), String> {
    let Some(ops) = &b.ops else {
        return Ok(());
    };
    let shape = |l: &[Vec<Option<String>>]| l.iter().map(Vec::len).collect::<Vec<_>>();
    let bounds: Vec<usize> = b.bounds.iter().map(Vec::len).collect();
    if shape(ops) != bounds {
        return Err(format!(
            "ops for {:?} nodes beside bounds for {bounds:?}",
            shape(ops)
        ));
    }
    Ok(())
}

/// Each bounded node with its bounds (one per occurrence that has one,
/// duplicates dropped); `Err` when the answer does not match the trees.
pub fn per_node(
    g: &Graph,
    roots: &[NodeId],
    bounds: &Bounds,
) -> Result<Vec<(NodeId, Bound)>, String> {
    let mut out: Vec<(NodeId, Bound)> = Vec::new();
    for (n, b, _) in in_preorder(g, roots, bounds, None)? {
        if !out.contains(&(n, b)) {
            out.push((n, b));
        }
    }
    Ok(out)
}

/// Each bounded node with its bounds and the peer's op whose bound it is
/// (one per occurrence that has a bound, duplicates dropped): one node may
/// be reported twice under two ops of the peer; `Err` when the bounds do
/// not match the trees. The ops' shape is the answer's own, checked once
/// where it is read ([`ops_match`]); an op this walk does not find is no
/// op.
pub fn per_node_ops(
    g: &Graph,
    roots: &[NodeId],
    b: &PeerBounds,
) -> Result<Vec<(NodeId, Bound, Option<String>)>, String> {
    let mut out: Vec<(NodeId, Bound, Option<String>)> = Vec::new();
    for (n, bound, op) in in_preorder(g, roots, &b.bounds, b.ops.as_ref())? {
        let entry = (n, bound, op.cloned());
        if !out.contains(&entry) {
            out.push(entry);
        }
    }
    Ok(out)
}

/// A bounded occurrence of a node: its bound and the peer's op of it.
type Occurrence<'a> = (NodeId, Bound, Option<&'a String>);

/// Every bounded occurrence of a node in the pre-order of `roots`' trees;
/// `Err` when `bounds` do not list one entry per node.
fn in_preorder<'a>(
    g: &Graph,
    roots: &[NodeId],
    bounds: &Bounds,
    ops: Option<&'a Ops>,
) -> Result<Vec<Occurrence<'a>>, String> {
    if bounds.len() != roots.len() {
        return Err(format!(
            "{} bound lists for {} expressions",
            bounds.len(),
            roots.len()
        ));
    }
    let mut out = Vec::new();
    for (k, (&r, b)) in roots.iter().zip(bounds).enumerate() {
        let nodes = preorder(g, r);
        if nodes.len() != b.len() {
            return Err(format!(
                "{} bounds for an expression of {} nodes",
                b.len(),
                nodes.len()
            ));
        }
        let ops = ops.and_then(|o| o.get(k));
        for (i, (&n, b)) in nodes.iter().zip(b).enumerate() {
            if let Some(b) = b {
                let op = ops.and_then(|o| o.get(i)).and_then(Option::as_ref);
                out.push((n, *b, op));
            }
        }
    }
    Ok(out)
}

/// A value outside its node's bounds.
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    pub node: NodeId,
    pub bound: Bound,
    /// The point, indexed like the graph's variable table.
    pub env: Vec<i64>,
    pub value: Val,
}

/// What the check walked.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// Nodes with a bound.
    pub nodes: usize,
    /// Points where the source is defined, at which every bound was tried.
    pub points: u64,
    pub exhaustive: bool,
    pub violation: Option<Violation>,
}

/// The corners of a domain: each variable at its low end, its high end and
/// 0 (when inside), combined up to 256 points.
fn corners(domain: &Domain) -> Vec<Vec<i64>> {
    let mut out: Vec<Vec<i64>> = vec![Vec::new()];
    for k in 0..domain.len() {
        let (lo, hi) = (domain.lo[k], domain.hi[k]);
        let mut choices = vec![lo, hi];
        if lo < 0 && hi > 0 {
            choices.push(0);
        }
        choices.dedup();
        if out.len() * choices.len() > 256 {
            choices.truncate(1);
        }
        out = out
            .into_iter()
            .flat_map(|p| {
                choices.iter().map(move |&c| {
                    let mut q = p.clone();
                    q.push(c);
                    q
                })
            })
            .collect();
    }
    out
}

/// The points a domain is judged at: every point when `samples` is `None`
/// (the walk policy's decision for its purpose), else its corners and then
/// that many random points (seeded); `visit` returns `true` to stop.
/// Whether the walk was exhaustive.
pub fn scan_points(
    domain: &Domain,
    seed: u64,
    samples: Option<u64>,
    mut visit: impl FnMut(&[i64]) -> bool,
) -> bool {
    let mut point = vec![0i64; domain.len()];
    match samples {
        None => {
            // Point by point in row-major order (an odometer, no division
            // per point).
            domain.decode(0, &mut point);
            for k in 0..domain.size() as u64 {
                if k > 0 {
                    domain.step(&mut point);
                }
                if visit(&point) {
                    break;
                }
            }
            true
        }
        Some(samples) => {
            for c in corners(domain) {
                if visit(&c) {
                    return false;
                }
            }
            let n = domain.len();
            domain.sample_blocks(seed, 0, samples, |_, m, block| {
                (0..m as usize)
                    .any(|p| visit(&block[p * n..(p + 1) * n]))
                    .then_some(())
            });
            false
        }
    }
}

/// The values of the bounded nodes at points of the domain of `roots` where
/// the source is defined, by the JIT above a few thousand points (compiled
/// once, with the whole source, so that a point where it is undefined is
/// skipped), else by the interpreter, which costs less than a compile
/// there (and where the JIT cannot compile). `visit` gets the environment
/// and the values in `bounded`'s order, and returns `true` to stop.
fn scan_values(
    g: &Graph,
    roots: &[NodeId],
    bounded: &[(NodeId, Bound)],
    model: Model,
    seed: u64,
    mut visit: impl FnMut(&[i64], &[Val]) -> bool,
) -> (u64, bool) {
    let domain = Domain::new(g, roots);
    let mut all: Vec<NodeId> = bounded.iter().map(|(n, _)| *n).collect();
    all.extend_from_slice(roots);
    let decision = walk::decide(Purpose::Bounds, domain.size(), g.reachable(&all).len());
    let samples = decision.samples();
    // The bounded nodes' values by the JIT unless the policy interprets
    // (compiled once, with the whole source, so that a point where it is
    // undefined is skipped; a sample is thousands of points), else by the
    // interpreter (and where the JIT cannot compile).
    let jit = (decision.first() != Some(Way::Interpreter))
        .then(|| crate::jit::CompiledEval::new(g, &all, model).ok())
        .flatten();
    let mut ev = Evaluator::new(g, roots, model);
    let mut points = 0u64;
    // One environment, scratch and value buffer for the whole walk: a walk
    // is thousands of points of a few nodes each.
    let mut env: Vec<i64> = g.vars().iter().map(|d| d.lo).collect();
    let (mut scratch, mut values, mut wide) = (EvalScratch::default(), Vec::new(), Vec::new());
    let exhaustive = scan_points(&domain, seed, samples, |point| {
        domain.fill_env(point, &mut env);
        match &jit {
            Some(j) => {
                if j.eval_into(&env, &mut scratch, &mut values).is_err() {
                    return false;
                }
            }
            None => {
                wide.clear();
                wide.extend(env.iter().map(|&v| v as i128));
                match ev.eval_all(&wide) {
                    Ok(vals) => {
                        values.clear();
                        values.extend(bounded.iter().map(|(n, _)| vals[n.index()]));
                    }
                    Err(_) => return false,
                }
            }
        }
        points += 1;
        visit(&env, &values[..bounded.len()])
    });
    (points, exhaustive)
}

/// Every node of `bounded` evaluated (under `model`) at every point of the
/// domain of `roots` where the source is defined ([`scan_points`]), against
/// its bounds; the first value outside them.
pub fn check(
    g: &Graph,
    roots: &[NodeId],
    bounded: &[(NodeId, Bound)],
    model: Model,
    seed: u64,
) -> Report {
    let mut violation = None;
    let (points, exhaustive) = scan_values(g, roots, bounded, model, seed, |env, values| {
        let found = bounded
            .iter()
            .zip(values)
            .find(|((_, b), &v)| contains(*b, v) == Some(false));
        if let Some((&(node, bound), &value)) = found {
            violation = Some(Violation {
                node,
                bound,
                env: env.to_vec(),
                value,
            });
        }
        violation.is_some()
    });
    Report {
        nodes: bounded.len(),
        points,
        exhaustive,
        violation,
    }
}

/// At the first point of the domain of `roots` ([`scan_points`]) where
/// some bounded node's bounds exclude its value, every node whose bounds
/// exclude it there, in `bounded`'s order: where [`check`] names the first,
/// the cause of a finding is the lowest of these (`crate::cause::transfer`;
/// a wrong bound and the bounds above it that inherit it miss at the same
/// point, and the walk stops there as [`check`]'s does).
pub fn violations(
    g: &Graph,
    roots: &[NodeId],
    bounded: &[(NodeId, Bound)],
    model: Model,
    seed: u64,
) -> Vec<Violation> {
    let mut found: Vec<Violation> = Vec::new();
    scan_values(g, roots, bounded, model, seed, |env, values| {
        for (&(node, bound), &value) in bounded.iter().zip(values) {
            if contains(bound, value) == Some(false) {
                found.push(Violation {
                    node,
                    bound,
                    env: env.to_vec(),
                    value,
                });
            }
        }
        !found.is_empty()
    });
    found
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

    #[test]
    fn a_bound_that_excludes_a_reachable_value_is_found_at_that_point() {
        let p = parse_program("var x in [-3, 3]\nvar y in [0, 4]\nexpr x * y + 1\n").unwrap();
        let (g, r) = (&p.graph, p.outputs[0]);
        let order = preorder(g, r);
        assert_eq!(order.len(), 5, "add, mul, x, y, 1");
        // Sound bounds of every node: nothing to report.
        let sound: Bounds = vec![vec![
            Some(Bound::Int(-11, 13)),
            Some(Bound::Int(-12, 12)),
            Some(Bound::Int(-3, 3)),
            Some(Bound::Int(0, 4)),
            Some(Bound::Int(1, 1)),
        ]];
        let nodes = per_node(g, &p.outputs, &sound).unwrap();
        let rep = check(g, &p.outputs, &nodes, model(), 1);
        assert!(
            rep.exhaustive && rep.violation.is_none() && rep.points == 35,
            "{rep:?}"
        );
        // The product's bound forgets that x may be negative.
        let mut wrong = sound.clone();
        wrong[0][1] = Some(Bound::Int(0, 12));
        let nodes = per_node(g, &p.outputs, &wrong).unwrap();
        let v = check(g, &p.outputs, &nodes, model(), 1).violation.unwrap();
        assert_eq!(v.node, order[1]);
        // The first point in row-major order where the product is negative.
        assert_eq!(v.value, Val::Int(-3));
        assert_eq!(v.env, vec![-3, 1]);
    }

    #[test]
    fn a_large_domain_is_sampled_by_the_jit_and_its_corners_tried_first() {
        let p = parse_program("var x in [-1000, 1000]\nvar y in [0, 1000]\nexpr x * y\n").unwrap();
        let wrong: Bounds = vec![vec![Some(Bound::Int(-999_999, 1_000_000)), None, None]];
        let nodes = per_node(&p.graph, &p.outputs, &wrong).unwrap();
        let rep = check(&p.graph, &p.outputs, &nodes, model(), 1);
        assert!(!rep.exhaustive);
        // Only x = -1000, y = 1000 leaves the bound: a corner.
        let v = rep.violation.unwrap();
        assert_eq!((v.env, v.value), (vec![-1000, 1000], Val::Int(-1_000_000)));
        let sound: Bounds = vec![vec![Some(Bound::Int(-1_000_000, 1_000_000)), None, None]];
        let nodes = per_node(&p.graph, &p.outputs, &sound).unwrap();
        let rep = check(&p.graph, &p.outputs, &nodes, model(), 1);
        let samples = Purpose::Bounds.limits().samples;
        assert!(rep.violation.is_none() && rep.points > samples, "{rep:?}");
    }

    #[test]
    fn each_bound_is_paired_with_the_peers_op_that_gave_it() {
        // `-x` and `min(x, y)` both as the peer's MUL (Morok's spellings):
        // one cause, whichever tileproof op spelled it.
        let p = parse_program("var x in [-3, 5]\nvar y in [0, 4]\nexpr -x + min(x, y)\n").unwrap();
        let g = &p.graph;
        let order = preorder(g, p.outputs[0]);
        let said = |n: NodeId| match g.node(n).op {
            engine::ir::Op::Add => (Some(Bound::Int(-8, 7)), Some("ADD")),
            engine::ir::Op::Neg => (Some(Bound::Int(-5, 3)), Some("MUL")),
            engine::ir::Op::Min => (Some(Bound::Int(-3, 4)), Some("MUL")),
            engine::ir::Op::Var(0) => (Some(Bound::Int(-3, 5)), Some("VAR")),
            _ => (None, None),
        };
        let b = PeerBounds {
            bounds: vec![order.iter().map(|&n| said(n).0).collect()],
            ops: Some(vec![order
                .iter()
                .map(|&n| said(n).1.map(String::from))
                .collect()]),
        };
        let nodes = per_node_ops(g, &p.outputs, &b).unwrap();
        let muls: Vec<engine::ir::Op> = nodes
            .iter()
            .filter(|(_, _, o)| o.as_deref() == Some("MUL"))
            .map(|(n, _, _)| g.node(*n).op)
            .collect();
        assert_eq!(muls.len(), 2);
        assert!(muls.contains(&engine::ir::Op::Neg) && muls.contains(&engine::ir::Op::Min));
        // x twice with the same bound and op: once; y has no bound.
        assert_eq!(order.len(), 6);
        assert_eq!(nodes.len(), 4);
        // Without ops, the same nodes and bounds, no op.
        let plain = per_node_ops(g, &p.outputs, &b.bounds.clone().into()).unwrap();
        assert!(plain.iter().all(|(_, _, o)| o.is_none()) && plain.len() == 4);
        let pairs: Vec<(NodeId, Bound)> = nodes.iter().map(|(n, b, _)| (*n, *b)).collect();
        assert_eq!(per_node(g, &p.outputs, &b.bounds).unwrap(), pairs);
    }

    #[test]
    fn ops_that_do_not_match_the_bounds_are_refused_where_read() {
        let p = parse_program("var x in [0, 3]\nexpr x + 1\n").unwrap();
        let b = PeerBounds {
            bounds: vec![vec![None, None, None]],
            ops: Some(vec![vec![None, None]]),
        };
        let e = ops_match(&b).unwrap_err();
        assert!(e.contains("ops for [2] nodes beside bounds for [3]"), "{e}");
        // Past the reading, the walk that pairs bounds with nodes names no
        // op it does not find, and never fails for the ops.
        assert!(per_node_ops(&p.graph, &p.outputs, &b).unwrap().is_empty());
        let two = PeerBounds {
            ops: Some(vec![vec![None; 3], vec![None; 3]]),
            ..b
        };
        assert!(ops_match(&two)
            .unwrap_err()
            .contains("ops for [3, 3] nodes"));
    }

    #[test]
    fn an_answer_that_does_not_match_the_trees_is_refused() {
        let p = parse_program("var x in [0, 3]\nexpr x + 1\n").unwrap();
        let short: Bounds = vec![vec![None, None]];
        assert!(per_node(&p.graph, &p.outputs, &short)
            .unwrap_err()
            .contains("2 bounds"));
        let bound = |v| serde_json::from_value::<Option<Bound>>(v);
        assert!(bound(serde_json::json!([1])).is_err());
        assert_eq!(
            bound(serde_json::json!([false, true])).unwrap(),
            Some(Bound::Bool(false, true))
        );
        assert_eq!(bound(serde_json::Value::Null).unwrap(), None);
    }
}
