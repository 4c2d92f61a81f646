//! `min` and `max` through the linear form.
//!
//! A chain of one op (`min(min(a, b), c)`) is read as its set of arms, each
//! a linear form ([`crate::algebra::linear`]). Then:
//!
//! - **duplicates and dominated arms** drop out: for `min`, an arm `b` with
//!   `b - a >= 0` everywhere (the range of the difference's linear form) is
//!   never the minimum (`min(x + 1, x + 10)`, `min(x, (x + 3) // 4 * 4)`);
//! - **a common factor** comes out: `min(g*a, g*b) == g * min(a, b)` for
//!   `g > 0`, `max` for `g < 0` (`min(x * 4 + 8, y * 4) == min(x + 2, y) * 4`);
//! - **a common divisor** comes out: for `d > 0`, `x // d` is monotone, so
//!   `min(x // d + k, y // d) == min(x + k*d, y) // d` (and `/` without
//!   constants; a negative divisor turns `min` into `max`);
//! - **common terms** move between the arms and the sum around them:
//!   `T + min(a_i) == (T - S) + min(a_i + S)` for any `S`; per monomial, `S`
//!   is chosen to leave the most coefficients zero (`min(x, y - z) + z ==
//!   min(x + z, y)`, `min(x + 2, y + 3) - 2 == min(x, y + 1)`), and in a sum
//!   with several `min`/`max` terms each is first put in a canonical offset
//!   (its arms' smallest coefficients taken out) so that equal ones cancel
//!   (`min(x, y) - min(x + 10, y + 10) == -10`);
//! - `min(a, b) + max(a, b) == a + b`.
//!
//! Algorithmic, validated per firing; only where no arm can be invalid
//! (arms are dropped and duplicated).

use crate::algebra::digits::fuse;
use crate::algebra::linear::{self, terms_range, Acc, Mono, Poly};
use crate::ir::arith::gcd;
use crate::ir::dtype::Width;
use crate::ir::{DType, Graph, NodeId, Op};

/// Chains longer than this are left alone (dominance compares every pair).
const MAX_ARMS: usize = 16;

/// A `min` or `max` of linear arms.
#[derive(Clone, Debug)]
pub struct Chain {
    pub op: Op,
    pub arms: Vec<Poly>,
}

fn flip(op: Op) -> Op {
    if op == Op::Min {
        Op::Max
    } else {
        Op::Min
    }
}

/// Reads a `min`/`max` chain rooted at `n`: its arms' linear forms. With
/// `flatten`, an arm `c * op'(b_j) + r` that is itself a chain of the same
/// effective op (`op' == op` for `c > 0`, the other op for `c < 0`:
/// `c * max(b_j) == min(c * b_j)`) contributes its arms `c * b_j + r`
/// (`min(x, min(x, y) + 1)` has the arms `x`, `x + 1`, `y + 1`).
pub fn read_chain(g: &Graph, n: NodeId, flatten: bool) -> Option<Chain> {
    let node = g.node(n);
    if !matches!(node.op, Op::Min | Op::Max) || node.dtype != DType::Index || node.maybe_invalid {
        return None;
    }
    let mut arms = Vec::new();
    // (node, scale, offset): the arm is `scale * node + offset`.
    let mut stack: Vec<(NodeId, i128, Option<Poly>)> = vec![(n, 1, None)];
    while let Some((x, scale, off)) = stack.pop() {
        let xn = g.node(x);
        let op = if scale > 0 { node.op } else { flip(node.op) };
        if xn.op == op {
            stack.push((xn.src()[1], scale, off.clone()));
            stack.push((xn.src()[0], scale, off));
            continue;
        }
        let arm = if scale == 1 && off.is_none() {
            // The arm's own form: read once, not read, copied and
            // finished again.
            linear::read(g, x)?
        } else {
            let mut acc = Acc::default();
            linear::add_read(g, &mut acc, x, scale)?;
            if let Some(o) = &off {
                acc.add_poly(o, 1)?;
            }
            acc.finish(g)?
        };
        if flatten {
            if let Some((inner, c, rest)) = nested_chain(g, &arm, node.op) {
                stack.push((inner, c, Some(rest)));
                continue;
            }
        }
        arms.push(arm);
        if arms.len() > MAX_ARMS {
            return None;
        }
    }
    Some(Chain { op: node.op, arms })
}

/// The one chain term `c * m` of `p` whose effective op is `op` (`m`'s
/// own op for `c > 0`, the other for `c < 0`), with the rest of `p`.
fn nested_chain(g: &Graph, p: &Poly, op: Op) -> Option<(NodeId, i128, Poly)> {
    let mut found = p.terms.iter().enumerate().filter(|(_, (m, c))| {
        let [a] = m[..] else {
            return false;
        };
        let an = g.node(a);
        matches!(an.op, Op::Min | Op::Max) && !an.maybe_invalid && (an.op == op) == (*c > 0)
    });
    let (i, (m, c)) = found.next()?;
    if found.next().is_some() {
        return None;
    }
    let (a, c) = (m[0], *c);
    let mut rest = p.clone();
    rest.terms.remove(i);
    Some((a, c, rest))
}

/// `a - b` as a poly.
fn diff(g: &Graph, a: &Poly, b: &Poly) -> Option<Poly> {
    let mut acc = a.acc();
    acc.add_poly(b, -1)?;
    acc.finish(g)
}

/// How many differences one [`nonneg`] question may look at, and how many
/// chains deep it may look: a bounded amount of work per question.
const NONNEG_BUDGET: usize = 64;
const NONNEG_DEPTH: u32 = 4;

/// `p >= 0` wherever `p` is defined. Shown by the range of `p` (its splits
/// fused: a quotient against its base is a remainder, whose range is
/// known), else through one of its `min`/`max` terms `c * m`: where the
/// term is a minimum of `c * arm_i` (`m` a `min` and `c > 0`, or a `max`
/// and `c < 0`), `p >= 0` iff every `p_i` (the term replaced by `c *
/// arm_i`) is; where it is a maximum, iff some `p_i` is (this direction
/// only: sufficient). Sufficient, not necessary: `false` is "not shown".
pub fn nonneg(g: &mut Graph, p: &Poly, w: Width) -> Option<bool> {
    let mut budget = NONNEG_BUDGET;
    nonneg_in(g, p, w, &mut budget, NONNEG_DEPTH)
}

fn nonneg_in(g: &mut Graph, p: &Poly, w: Width, budget: &mut usize, depth: u32) -> Option<bool> {
    if *budget == 0 {
        return Some(false);
    }
    *budget -= 1;
    let mut acc = p.acc();
    fuse(g, &mut acc)?;
    let p = acc.finish(g)?;
    if terms_range(g, &p.terms, p.k, w).is_some_and(|r| r.lo >= 0) {
        return Some(true);
    }
    if depth == 0 {
        return Some(false);
    }
    // A minimum first (exact), else a maximum.
    for want_min in [true, false] {
        for (m, c) in &p.terms {
            let [a] = m[..] else {
                continue;
            };
            let op = g.node(a).op;
            let min_like = (op == Op::Min) == (*c > 0);
            if !matches!(op, Op::Min | Op::Max) || min_like != want_min {
                continue;
            }
            let Some(ch) = read_chain(g, a, true) else {
                continue;
            };
            let mut any = false;
            for arm in &ch.arms {
                let mut q = p.acc();
                q.add(m.clone(), -c)?;
                q.add_poly(arm, *c)?;
                let q = q.finish(g)?;
                let holds = nonneg_in(g, &q, w, budget, depth - 1)?;
                if want_min && !holds {
                    return Some(false);
                }
                if holds && !want_min {
                    return Some(true);
                }
                any |= holds;
            }
            return Some(any);
        }
    }
    Some(false)
}

/// `a >= b` everywhere (`at_least`) or `a <= b` everywhere.
fn ordered(g: &mut Graph, a: &Poly, b: &Poly, at_least: bool, w: Width) -> Option<bool> {
    let d = if at_least {
        diff(g, a, b)?
    } else {
        diff(g, b, a)?
    };
    nonneg(g, &d, w)
}

/// Drops dominated arms (for `min`, an arm at least another everywhere;
/// of equal arms, all but the last).
fn prune(g: &mut Graph, c: &mut Chain, w: Width) -> Option<bool> {
    let mut changed = false;
    let mut i = 0;
    while i < c.arms.len() && c.arms.len() > 1 {
        let mut drop_i = false;
        for j in 0..c.arms.len() {
            if i == j {
                continue;
            }
            let (ai, aj) = (c.arms[i].clone(), c.arms[j].clone());
            if ordered(g, &ai, &aj, c.op == Op::Min, w)? {
                drop_i = true;
                break;
            }
        }
        if drop_i {
            c.arms.remove(i);
            changed = true;
        } else {
            i += 1;
        }
    }
    Some(changed)
}

/// Every coefficient and constant of every arm, their gcd (0 when all zero).
fn arms_gcd(c: &Chain) -> i128 {
    c.arms.iter().fold(0, |a, p| gcd(gcd(a, p.coef_gcd()), p.k))
}

/// The arms' canonical offset: per monomial (and the constant), the
/// smallest coefficient over the arms (a monomial an arm lacks counts as
/// 0). `min(a_i) == offset + min(a_i - offset)`.
fn offset(g: &Graph, c: &Chain) -> Option<Poly> {
    let mut monos: Vec<Mono> = Vec::new();
    for p in &c.arms {
        for (m, _) in &p.terms {
            if !monos.contains(m) {
                monos.push(m.clone());
            }
        }
    }
    let coef = |p: &Poly, m: &Mono| -> i128 {
        p.terms.iter().find(|t| &t.0 == m).map(|t| t.1).unwrap_or(0)
    };
    let mut acc = Acc::default();
    for m in monos {
        let lo = c.arms.iter().map(|p| coef(p, &m)).min()?;
        acc.add(m, lo)?;
    }
    acc.k = c.arms.iter().map(|p| p.k).min()?;
    acc.finish(g)
}

/// Subtracts `s` from every arm.
pub fn shift(g: &Graph, c: &Chain, s: &Poly) -> Option<Chain> {
    let arms = c
        .arms
        .iter()
        .map(|p| diff(g, p, s))
        .collect::<Option<Vec<_>>>()?;
    Some(Chain { op: c.op, arms })
}

/// The chain with outer terms `outer` around it (`outer + coef *
/// min(arms)`), terms moved so that the most coefficients are zero: per
/// monomial `m`, `outer_m + coef * min(a_i,m)` is written `(outer_m -
/// coef*t) + coef * min(a_i,m + t)` with `t` among the values that zero one
/// of them; ties keep `t = 0` first, then the smaller `t`. For the
/// constant, every tied `t` is a variant (returned in that order): which
/// one builds smallest depends on the shape around it (`2 - max(x, 2)`
/// against `-max(x - 2, 0)`), so the caller builds each.
fn balance(g: &Graph, c: &Chain, outer: &Poly, coef: i128) -> Option<Vec<(Chain, Poly)>> {
    let mut monos: Vec<Option<Mono>> = vec![None];
    for p in c.arms.iter().chain(std::iter::once(outer)) {
        for (m, _) in &p.terms {
            if !monos.contains(&Some(m.clone())) {
                monos.push(Some(m.clone()));
            }
        }
    }
    let coef_of = |p: &Poly, m: &Option<Mono>| -> i128 {
        match m {
            None => p.k,
            Some(m) => p.terms.iter().find(|t| &t.0 == m).map(|t| t.1).unwrap_or(0),
        }
    };
    let mut move_in = Acc::default();
    let mut constant_ts: Vec<i128> = vec![0];
    for m in &monos {
        let o = coef_of(outer, m);
        let a: Vec<i128> = c.arms.iter().map(|p| coef_of(p, m)).collect();
        // An arm that is a bare constant costs one node whatever its
        // value, so its constant counts as zero (`max(y, -1) + 4` stays,
        // not `max(y + 1, 0) + 3`).
        let bare: Vec<bool> = c
            .arms
            .iter()
            .map(|p| m.is_none() && p.terms.is_empty())
            .collect();
        let zeros = |t: i128| {
            (o.checked_sub(coef.saturating_mul(t)) == Some(0)) as usize
                + a.iter()
                    .zip(&bare)
                    .filter(|&(&x, &b)| b || x + t == 0)
                    .count()
        };
        let mut cands: Vec<i128> = vec![0];
        if o % coef == 0 {
            cands.push(o / coef);
        }
        cands.extend(a.iter().map(|x| -x));
        let order = |&x: &i128, &y: &i128| {
            zeros(x)
                .cmp(&zeros(y))
                .then((x == 0).cmp(&(y == 0)))
                .then(y.cmp(&x))
        };
        let best = cands.iter().copied().max_by(order).expect("candidates");
        if m.is_none() {
            cands.sort_by(|x, y| order(y, x));
            cands.dedup();
            constant_ts = cands
                .into_iter()
                .filter(|&t| zeros(t) == zeros(best))
                .collect();
            continue;
        }
        if best != 0 {
            move_in.add(m.clone().unwrap_or_default(), best)?;
        }
    }
    let mut variants = Vec::new();
    for k in constant_ts {
        let mut mv = move_in.clone();
        if k != 0 {
            mv.add(Mono::default(), k)?;
        }
        let t = mv.finish(g)?;
        // Arms gain t, the outside loses coef * t.
        let arms = shift(g, c, &negate(&t))?;
        let mut out = outer.acc();
        out.add_poly(&t, coef.checked_neg()?)?;
        variants.push((arms, out.finish(g)?));
    }
    Some(variants)
}

/// Builds a chain: its arms in canonical order, folded left.
pub fn build_chain(g: &mut Graph, c: &Chain) -> Option<NodeId> {
    let mut nodes = c
        .arms
        .iter()
        .map(|p| linear::build(g, p))
        .collect::<Option<Vec<_>>>()?;
    nodes.sort_by(|a, b| g.canonical_cmp(*a, *b));
    nodes.dedup();
    let first = nodes[0];
    Some(
        nodes[1..]
            .iter()
            .fold(first, |acc, &x| g.mk(c.op, &[acc, x])),
    )
}

/// `min(a_i)` or `-max(-a_i)`, whichever is smaller; with every arm's
/// quotients by one divisor taken out when they can be.
fn build_best(g: &mut Graph, c: &Chain) -> Option<NodeId> {
    let direct = build_chain(g, c)?;
    let mut best = (g.size(direct), direct);
    let negated = Chain {
        op: flip(c.op),
        arms: c.arms.iter().map(negate).collect(),
    };
    if let Some(inner) = build_chain(g, &negated) {
        let alt = g.mk(Op::Neg, &[inner]);
        let s = g.size(alt);
        if s < best.0 {
            best = (s, alt);
        }
    }
    if let Some(alt) = through_divisor(g, c) {
        let s = g.size(alt);
        if s < best.0 {
            best = (s, alt);
        }
    }
    Some(best.1)
}

fn negate(p: &Poly) -> Poly {
    Poly {
        terms: p.terms.iter().map(|(m, c)| (m.clone(), -c)).collect(),
        k: -p.k,
    }
}

/// Every arm `x_i // d + k_i` (one op, one constant `d`): for `d > 0`,
/// `min(x_i // d + k_i) == min(x_i + k_i*d) // d` (floor division is
/// monotone); for `/` only without constants. `d < 0` turns `min` into
/// `max`.
fn through_divisor(g: &mut Graph, c: &Chain) -> Option<NodeId> {
    let mut qop: Option<(Op, i128)> = None;
    let mut nums: Vec<Poly> = Vec::new();
    for arm in &c.arms {
        let [(m, 1)] = &arm.terms[..] else {
            return None;
        };
        let [q] = m[..] else {
            return None;
        };
        let qn = g.node(q);
        if !matches!(qn.op, Op::FloorDiv | Op::Div) {
            return None;
        }
        let d = g.node(qn.src()[1]).as_const()? as i128;
        if d == 0 {
            return None;
        }
        match qop {
            None => qop = Some((qn.op, d)),
            Some(x) if x == (qn.op, d) => {}
            _ => return None,
        }
        if qn.op == Op::Div && arm.k != 0 {
            return None;
        }
        let mut num = linear::read(g, qn.src()[0])?.acc();
        num.k = num.k.checked_add(arm.k.checked_mul(d)?)?;
        nums.push(num.finish(g)?);
    }
    let (op, d) = qop?;
    let inner = Chain {
        op: if d > 0 { c.op } else { flip(c.op) },
        arms: nums,
    };
    let x = build_chain(g, &inner)?;
    let dn = g.cnst(i64::try_from(d).ok()?, DType::Index);
    Some(g.mk(op, &[x, dn]))
}

/// `outer + coef * op(arms)` in its smallest form, as a node: the chain
/// pruned; then, for a factor `s` among 1, -1 and the arms' common factor
/// `g` (either sign), `coef*s * op'(arms / s)` (`op'` flipped for a
/// negative `s`) with terms balanced against `outer`; the smallest built.
pub fn simplest(g: &mut Graph, mut c: Chain, outer: &Poly, coef: i128, w: Width) -> Option<NodeId> {
    prune(g, &mut c, w)?;
    if c.arms.len() == 1 {
        let mut acc = outer.acc();
        acc.add_poly(&c.arms[0], coef)?;
        return linear::build(g, &acc.finish(g)?);
    }
    let cg = arms_gcd(&c);
    let mut factors = vec![1, -1];
    if cg > 1 {
        factors.extend([cg, -cg]);
    }
    let mut best: Option<(usize, NodeId)> = None;
    for s in factors {
        let inner = Chain {
            op: if s > 0 { c.op } else { flip(c.op) },
            arms: c
                .arms
                .iter()
                .map(|p| Poly {
                    terms: p.terms.iter().map(|(m, x)| (m.clone(), x / s)).collect(),
                    k: p.k / s,
                })
                .collect(),
        };
        let Some(cs) = coef.checked_mul(s) else {
            continue;
        };
        let Some(variants) = balance(g, &inner, outer, cs) else {
            continue;
        };
        for (inner, rest) in variants {
            let Some(node) = build_best(g, &inner) else {
                continue;
            };
            let mut acc = rest.acc();
            acc.add_atom(node, cs)?;
            let Some(total) = acc.finish(g).and_then(|p| linear::build(g, &p)) else {
                continue;
            };
            let cost = g.size(total);
            if best.is_none_or(|b| cost < b.0) {
                best = Some((cost, total));
            }
        }
    }
    best.map(|b| b.1)
}

/// In a sum: `min`/`max` terms that are equal up to an offset merge
/// (each is compared in its canonical offset), `min(a, b) + max(a, b)` is
/// `a + b`, and then either the one `min`/`max` term with coefficient 1 or
/// -1 takes the sum's other terms that make it smaller ([`balance`]), or,
/// with several, each is written in its own simplest form. Returns whether
/// the sum changed.
pub fn in_sum(g: &mut Graph, acc: &mut Acc, w: Width) -> Option<bool> {
    let is_chain =
        |g: &Graph, m: &Mono| m.len() == 1 && matches!(g.node(m[0]).op, Op::Min | Op::Max);
    let chains: Vec<(NodeId, i128)> = acc
        .terms
        .iter()
        .filter(|(m, c)| **c != 0 && is_chain(g, m))
        .map(|(m, c)| (m[0], *c))
        .collect();
    if chains.is_empty() {
        return Some(false);
    }
    // Each chain as offset + canonical residual; equal residuals merge.
    let mut groups: Vec<(Chain, i128)> = Vec::new();
    let mut outer = acc.clone();
    for &(node, coef) in &chains {
        let Some(c) = read_chain(g, node, false) else {
            return Some(false);
        };
        outer.add_atom(node, -coef)?;
        let off = offset(g, &c)?;
        let canon = shift(g, &c, &off)?;
        outer.add_poly(&off, coef)?;
        match groups
            .iter_mut()
            .find(|(x, _)| x.op == canon.op && same_arms(&x.arms, &canon.arms))
        {
            Some(grp) => grp.1 += coef,
            None => groups.push((canon, coef)),
        }
    }
    groups.retain(|t| t.1 != 0);
    // min(a, b) + max(a, b) == a + b.
    'pairs: loop {
        for i in 0..groups.len() {
            for j in 0..groups.len() {
                let ((x, cx), (y, cy)) = (&groups[i], &groups[j]);
                if x.op == Op::Min
                    && y.op == Op::Max
                    && cx == cy
                    && x.arms.len() == 2
                    && same_arms(&x.arms, &y.arms)
                {
                    let c = *cx;
                    outer.add_poly(&x.arms[0], c)?;
                    outer.add_poly(&x.arms[1], c)?;
                    let (i, j) = (i.max(j), i.min(j));
                    groups.remove(i);
                    groups.remove(j);
                    continue 'pairs;
                }
            }
        }
        break;
    }
    // Each chain written against what is around it, in canonical order.
    let mut built: Vec<(NodeId, Chain, i128)> = Vec::new();
    for (c, coef) in groups {
        let node = build_chain(g, &c)?;
        built.push((node, c, coef));
    }
    built.sort_by(|a, b| g.canonical_cmp(a.0, b.0));
    let mut out = outer;
    for (node, c, coef) in built {
        let around = out.finish(g)?;
        let total = simplest(g, c, &around, coef, w)?;
        out = linear::read(g, total)?.acc();
        let _ = node;
    }
    let before = acc.clone().finish(g)?;
    let after = out.clone().finish(g)?;
    *acc = out;
    Some(before != after)
}

/// The same arms, in any order.
fn same_arms(a: &[Poly], b: &[Poly]) -> bool {
    a.len() == b.len() && a.iter().all(|x| b.contains(x)) && b.iter().all(|x| a.contains(x))
}
