//! A constant the peer computed in wrapping arithmetic: a rewrite that
//! folds constants into a new one (`(x // a + c) // b` to `(x + c*a) //
//! (a*b)`) or negates and offsets one at the type's edge (`x == MIN` read
//! as `x - MIN == 0`) with no check that the result fits the type. The
//! answer is wrong over the integers, but only by the wrap: one defect
//! whatever the rewrite folded.

use crate::checks::{self, CheckConfig, Checked};
use crate::kind::Kind;
use crate::oracle::Domain;
use crate::subject::Subject;
use engine::dtype::Width;
use engine::interp::{self, PointCheck};
use engine::ir::{DType, Graph, NodeId, Op};
use engine::semantics::Model;
use engine::walk::{self, Purpose};
use std::collections::HashSet;

/// Constant combinations tried.
const MAX_TRIES: usize = 256;
/// Unwrapped candidates kept per constant of the answer.
const PER_CONSTANT: usize = 8;

/// How `checked`'s answer (of a peer that failed it) wrapped a constant,
/// when that is all that is wrong with it: a constant of the answer is
/// the wrap of one the source's constants make (a product or sum of two
/// or three of them), and with the unwrapped value the answer is right;
/// else the source has a constant at the type's edge (`MIN`, `MAX`, next
/// to them) and `subject` answers right once it is moved inward.
pub(super) fn wrapped(
    subject: &dyn Subject,
    checked: &Checked,
    model: Model,
    cfg: &CheckConfig,
) -> Option<String> {
    folded(checked, model, cfg.seed).or_else(|| edge(subject, checked, cfg))
}

/// The answer's constants that, replaced by unwrapped values they are the
/// wrap of, make it right.
fn folded(checked: &Checked, model: Model, seed: u64) -> Option<String> {
    let w = model.width;
    // An unwrapped value of a 64-bit fold does not fit a constant node.
    let f = checked.oracle.as_ref()?.failure.as_ref()?;
    let tgt = checked.tgt.as_deref()?;
    if w.0 >= 64 {
        return None;
    }
    let mut g = checked.graph.clone();
    let in_src: HashSet<NodeId> = g.reachable(&checked.src).into_iter().collect();
    let constant = |g: &Graph, n: NodeId| match g.node(n).op {
        Op::Const(c) if g.node(n).dtype != DType::Bool => Some(c as i128),
        _ => None,
    };
    let mut made: Vec<i128> = in_src.iter().filter_map(|&n| constant(&g, n)).collect();
    made.sort_unstable();
    made.dedup();
    let made = products_and_sums(&made);
    let modulus = 1i128 << w.0;
    let wrap = |v: i128| (v - w.min()).rem_euclid(modulus) + w.min();
    let options: Vec<(NodeId, Vec<i128>)> = g
        .reachable(tgt)
        .into_iter()
        .filter_map(|n| {
            let c = constant(&g, n)?;
            let cands: Vec<i128> = made
                .iter()
                .copied()
                .filter(|&v| !w.fits(v) && i64::try_from(v).is_ok() && wrap(v) == c)
                .take(PER_CONSTANT)
                .collect();
            (!cands.is_empty()).then_some((n, cands))
        })
        .collect();
    if options.is_empty() {
        return None;
    }
    let points = judged_points(&g, &checked.src, &f.env, seed);
    let wide = Model {
        width: Width(126),
        ..model
    };
    // Each constant unwrapped or not, the all-wrapped choice aside.
    let choices: usize = options.iter().map(|(_, c)| c.len() + 1).product();
    (1..choices.min(MAX_TRIES)).find_map(|mut k| {
        let mut by: Vec<(NodeId, i64)> = Vec::new();
        for (n, cands) in &options {
            let pick = k % (cands.len() + 1);
            k /= cands.len() + 1;
            if pick > 0 {
                by.push((*n, cands[pick - 1] as i64));
            }
        }
        let unwrapped = g.rebuild(tgt, |g, n, node, _| {
            let (_, v) = by.iter().find(|(m, _)| *m == n)?;
            Some(g.cnst(*v, node.dtype))
        });
        let right = points.iter().all(|env| {
            let wide_env: Vec<i128> = env.iter().map(|&v| v as i128).collect();
            let s = interp::eval(&g, &checked.src, &wide_env, model);
            let t = interp::eval(&g, &unwrapped, &wide_env, wide);
            s.is_err() || matches!(interp::check_point(s, t), PointCheck::Refines)
        });
        right.then(|| {
            let each: Vec<String> = by
                .iter()
                .map(|&(n, v)| format!("`{}` is {v} wrapped", checks::short_expr(&g, n)))
                .collect();
            format!(
                "a folded constant wraps: {}; unwrapped, the answer is right",
                each.join(", ")
            )
        })
    })
}

/// The values two or three of `cs` make (their products, sums and one
/// product plus the third), with their negations.
fn products_and_sums(cs: &[i128]) -> Vec<i128> {
    let mut out = Vec::new();
    for (i, &a) in cs.iter().enumerate() {
        for &b in &cs[i..] {
            out.extend([a * b, a + b, a - b, b - a]);
            for &c in cs {
                out.extend([a * b * c, a * b + c, a * b - c]);
            }
        }
    }
    let neg: Vec<i128> = out.iter().map(|v| -v).collect();
    out.extend(neg);
    out.sort_unstable();
    out.dedup();
    out
}

/// The failing point and a sample of the domain (every point of a small
/// one).
fn judged_points(g: &Graph, src: &[NodeId], failing: &[i64], seed: u64) -> Vec<Vec<i64>> {
    let domain = Domain::new(g, src);
    let samples = walk::decide(Purpose::Reading, domain.size(), 0).samples();
    let mut out = vec![failing.to_vec()];
    crate::bounds::scan_points(&domain, seed, samples, |point| {
        out.push(domain.env(g, point));
        false
    });
    out
}

/// The source's constants at the type's edge, when `subject` answers
/// right once each is moved inward (halved).
fn edge(subject: &dyn Subject, checked: &Checked, cfg: &CheckConfig) -> Option<String> {
    let w = cfg.width;
    let mut g = checked.graph.clone();
    let at_edge = |v: i64| {
        let v = v as i128;
        v <= w.min() + 1 || v >= w.max() - 1
    };
    let edges: Vec<NodeId> = g
        .reachable(&checked.src)
        .into_iter()
        .filter(|&n| {
            g.node(n).dtype != DType::Bool && matches!(g.node(n).op, Op::Const(c) if at_edge(c))
        })
        .collect();
    if edges.is_empty() {
        return None;
    }
    let moved = g.rebuild(&checked.src, |g, n, node, _| {
        let Op::Const(c) = node.op else { return None };
        edges.contains(&n).then(|| g.cnst(c / 2, node.dtype))
    });
    let cfg = cfg.only(Kind::Oracle);
    let c = checks::check(&g, &moved, subject, &cfg, None);
    (c.tgt.is_some() && !c.failed(Kind::Oracle)).then(|| {
        let shown: Vec<String> = edges.iter().map(|&n| checks::short_expr(&g, n)).collect();
        format!(
            "a constant at the type's edge wraps: with `{}` halved, the answer is right",
            shown.join("`, `")
        )
    })
}
