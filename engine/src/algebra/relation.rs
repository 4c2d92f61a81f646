//! Comparisons of `index` operands as linear relations, and the facts they
//! state: `a < b`, `a <= b`, `a == b` and `a != b` read as one linear form
//! `e = a - b` compared with 0 ([`relation`]), written back with the
//! positive terms on one side and the negative on the other ([`write`]),
//! and read as a fact about a linear key ([`read_rel`]). The comparison,
//! fact and gate passes all read relations here.

use crate::algebra::digits::fuse;
use crate::algebra::linear::{self, read_acc, Mono, Poly};
use crate::ir::arith::{div_floor, gcd};
use crate::ir::{DType, Graph, NodeId, Op};
use smallvec::SmallVec;

/// What is compared with 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rel {
    /// `e < 0`.
    Lt,
    /// `e == 0`.
    Eq,
    /// `e != 0`.
    Ne,
}

/// A comparison of two `index` operands that cannot be invalid, as `e REL
/// 0` with `e` normalized (`a <= b` as `a - b - 1 < 0`).
pub fn relation(g: &mut Graph, n: NodeId) -> Option<(Rel, Poly)> {
    let node = *g.node(n);
    if !node.op.is_comparison() || node.maybe_invalid {
        return None;
    }
    let (a, b) = (node.src()[0], node.src()[1]);
    if g.node(a).dtype != DType::Index {
        return None;
    }
    let mut e = read_acc(g, a)?;
    linear::add_read(g, &mut e, b, -1)?;
    let rel = match node.op {
        Op::Lt => Rel::Lt,
        Op::Le => {
            e.k = e.k.checked_sub(1)?;
            Rel::Lt
        }
        Op::Eq => Rel::Eq,
        Op::Ne => Rel::Ne,
        _ => return None,
    };
    fuse(g, &mut e)?;
    Some((rel, e.finish(g)?))
}

/// Writes `e REL 0` back as a comparison of two sums with positive
/// coefficients: of the equivalent forms (`P < N + 3` or `P <= N + 2`, the
/// constant on either side), the one with the fewest nodes (a constant the
/// sides already hold costs none), the first on a tie.
pub fn write(g: &mut Graph, rel: Rel, p: &Poly) -> Option<NodeId> {
    let pos = Poly {
        terms: p.terms.iter().filter(|t| t.1 > 0).cloned().collect(),
        k: 0,
    };
    let neg = Poly {
        terms: p
            .terms
            .iter()
            .filter(|t| t.1 < 0)
            .map(|(m, c)| (m.clone(), -c))
            .collect(),
        k: 0,
    };
    let forms = forms(rel, p.k, pos.terms.is_empty(), neg.terms.is_empty())?;
    // Most sides are plain sums: each form's size is then known without
    // building the forms that lose.
    if !p.terms.is_empty()
        && linear::builds_as_plain_sum(&pos.terms)
        && linear::builds_as_plain_sum(&neg.terms)
    {
        write_plain(g, &forms, &pos, &neg)
    } else {
        write_built(g, &forms, pos, neg)
    }
}

/// A form of `P - N + k REL 0`: the comparison's op and the constants on
/// `P`'s side and on `N`'s.
type Form = (Op, i128, i128);

/// The forms [`write`] weighs, in its order: `<` with `k` (or `==`, `!=`),
/// then `<=` with `k + 1`; each with the constant on the side where it is
/// positive (the usual way), then on the other.
fn forms(rel: Rel, k: i128, pos_empty: bool, neg_empty: bool) -> Option<SmallVec<[Form; 4]>> {
    let (ops, count) = match rel {
        Rel::Lt => ([(Op::Lt, k), (Op::Le, k.checked_add(1)?)], 2),
        Rel::Eq => ([(Op::Eq, k); 2], 1),
        Rel::Ne => ([(Op::Ne, k); 2], 1),
    };
    let mut out = SmallVec::new();
    for &(op, k) in &ops[..count] {
        let first = if k > 0 { (k, 0) } else { (0, k.checked_neg()?) };
        // A constant alone on a side with no terms costs one node; on the
        // other side it costs at least that side's sum node, so the second
        // placement can only tie, and a tie keeps the first: not weighed.
        let alone = if k > 0 { pos_empty } else { neg_empty };
        let second = if k != 0 && !alone {
            Some((first.1.checked_neg()?, first.0.checked_neg()?))
        } else {
            None
        };
        for (lk, rk) in std::iter::once(first).chain(second) {
            out.push((op, lk, rk));
        }
    }
    Some(out)
}

/// [`write`] by building every form's sides and weighing their sizes.
fn write_built(g: &mut Graph, forms: &[Form], mut pos: Poly, mut neg: Poly) -> Option<NodeId> {
    // Each side with each constant is built once: the forms share them.
    let mut built: SmallVec<[(bool, i128, NodeId); 4]> = SmallVec::new();
    let mut side = |g: &mut Graph, positive: bool, k: i128| -> Option<NodeId> {
        if let Some(&(_, _, n)) = built.iter().find(|t| t.0 == positive && t.1 == k) {
            return Some(n);
        }
        // One side's terms, with each constant in turn (set, not copied).
        let s = if positive { &mut pos } else { &mut neg };
        s.k = k;
        let n = linear::build(g, s)?;
        built.push((positive, k, n));
        Some(n)
    };
    let mut best: Option<(usize, (Op, NodeId, NodeId))> = None;
    for &(op, lk, rk) in forms {
        let l = side(g, true, lk)?;
        let r = side(g, false, rk)?;
        let cost = 1 + g.size_of(&[l, r]);
        if best.is_none_or(|b| cost < b.0) {
            best = Some((cost, (op, l, r)));
        }
    }
    best.map(|(_, (op, l, r))| g.mk(op, &[l, r]))
}

/// [`write`] where both sides build as plain sums
/// ([`linear::builds_as_plain_sum`]): a side with constant `k` is its sum
/// `S` (no terms: the constant alone), or `S + k`. Each form's size is the
/// nodes below the two sums plus `S + k` and `k` where they are not among
/// them: only the winner is built.
fn write_plain(g: &mut Graph, forms: &[Form], pos: &Poly, neg: &Poly) -> Option<NodeId> {
    // Building a form needs each of its constants as a node.
    if forms
        .iter()
        .any(|f| i64::try_from(f.1).is_err() || i64::try_from(f.2).is_err())
    {
        return None;
    }
    let mut sum = |s: &Poly| -> Option<Option<NodeId>> {
        if s.terms.is_empty() {
            Some(None)
        } else {
            linear::build(g, s).map(Some)
        }
    };
    let (ps, ns) = (sum(pos)?, sum(neg)?);
    let roots: SmallVec<[NodeId; 2]> = ps.into_iter().chain(ns).collect();
    let below = Below::of(g, &roots);
    let mut best: Option<(usize, Form)> = None;
    for &form in forms {
        let cost = 1 + below.count + below.adds(ps, form.1) + below.adds(ns, form.2);
        if best.is_none_or(|b| cost < b.0) {
            best = Some((cost, form));
        }
    }
    let (_, (op, lk, rk)) = best?;
    let l = with_constant(g, ps, lk)?;
    let r = with_constant(g, ns, rk)?;
    Some(g.mk(op, &[l, r]))
}

/// What a form's size depends on beyond its sides' sums: how many nodes
/// are below them, and which constants and `sum + constant` nodes are
/// among those.
struct Below {
    count: usize,
    consts: SmallVec<[i128; 8]>,
    sums: SmallVec<[(NodeId, i128); 4]>,
}

impl Below {
    fn of(g: &Graph, roots: &[NodeId]) -> Below {
        let mut b = Below {
            count: 0,
            consts: SmallVec::new(),
            sums: SmallVec::new(),
        };
        let index_const = |n: NodeId| {
            let n = g.node(n);
            (n.dtype == DType::Index).then(|| n.as_const()).flatten()
        };
        g.walk_down(roots, |id| {
            b.count += 1;
            let n = g.node(id);
            if n.dtype != DType::Index {
                return;
            }
            match n.op {
                Op::Const(v) => b.consts.push(v.into()),
                Op::Add => {
                    let [x, y] = [n.src()[0], n.src()[1]];
                    if let Some(v) = index_const(y) {
                        b.sums.push((x, v.into()));
                    }
                    if let Some(v) = index_const(x) {
                        b.sums.push((y, v.into()));
                    }
                }
                _ => {}
            }
        });
        b
    }

    /// The nodes side `s` (its sum, `None` with no terms) with constant
    /// `k` adds: the constant alone, or `s + k` and `k`, where not below
    /// (only one side of a form holds a non-zero constant, and a side
    /// with no terms has one with the other's zero: the two sides never
    /// add the same node).
    fn adds(&self, s: Option<NodeId>, k: i128) -> usize {
        let new_const = !self.consts.contains(&k) as usize;
        match s {
            None => new_const,
            Some(_) if k == 0 => 0,
            Some(s) => new_const + !self.sums.contains(&(s, k)) as usize,
        }
    }
}

/// A plain side built with constant `k`, as [`linear::build`] builds it:
/// `S + k`, `S` for 0, the constant alone with no terms.
fn with_constant(g: &mut Graph, s: Option<NodeId>, k: i128) -> Option<NodeId> {
    match s {
        None => linear::cnst(g, k),
        Some(s) if k == 0 => Some(s),
        Some(s) => {
            let kn = linear::cnst(g, k)?;
            Some(g.mk(Op::Add, &[s, kn]))
        }
    }
}

/// `e REL 0` as (key, interval of the key where it holds, or the point it
/// excludes). `None` for a relation with no terms.
pub enum Read {
    /// `lo <= key <= hi`.
    In(Vec<(Mono, i128)>, i128, i128),
    /// `key != v`.
    Not(Vec<(Mono, i128)>, i128),
    /// Never or always.
    Const(bool),
}

/// Reads `e REL 0`: `e = G*s*key + k` with `key` the terms divided by their
/// gcd `G > 0` and signed `s` so that the first coefficient is positive.
pub fn read_rel(rel: Rel, p: &Poly) -> Option<Read> {
    if p.terms.is_empty() {
        return None;
    }
    let gg = p.terms.iter().fold(0, |a, t| gcd(a, t.1));
    let s = if p.terms[0].1 < 0 { -1 } else { 1 };
    let key: Vec<(Mono, i128)> = p
        .terms
        .iter()
        .map(|(m, c)| (m.clone(), c / gg * s))
        .collect();
    let k = p.k;
    const INF: i128 = i128::MAX / 4;
    Some(match rel {
        // s*G*key + k < 0.
        Rel::Lt if s > 0 => Read::In(key, -INF, div_floor(-k - 1, gg)?),
        Rel::Lt => Read::In(key, div_floor(k, gg)? + 1, INF),
        Rel::Eq | Rel::Ne => {
            // s*G*key == -k.
            if k % gg != 0 {
                return Some(Read::Const(rel == Rel::Ne));
            }
            let v = -k / gg * s;
            if rel == Rel::Eq {
                Read::In(key, v, v)
            } else {
                Read::Not(key, v)
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::{forms, linear, relation, write_built, write_plain, Poly, Rel};
    use crate::ir::NodeId;
    use crate::text::parse::parse_program;

    #[test]
    fn a_plain_form_weighed_without_building_the_losers_is_the_one_building_them_all_picks() {
        // Sides whose nodes hold constants, sums with a constant and
        // products, so that forms tie and share nodes.
        let sides = [
            "x",
            "y",
            "x * 2",
            "x * y",
            "x + y",
            "(x + 1) // 2",
            "(y + -1) mod 3",
            "(x + 1) * (y + 2)",
            "x // 4 + z",
            "(x * 2 + 1) // 3 + y",
            "max(x + 1, y)",
        ];
        let mut text = String::from("var x in [0, 9]\nvar y in [-9, 9]\nvar z in [0, 9]\n");
        for a in sides {
            for b in sides {
                text.push_str(&format!("expr {a} < {b}\nexpr {a} + 1 <= {b}\n"));
            }
        }
        let mut prog = parse_program(&text).unwrap();
        let g = &mut prog.graph;
        let mut plain = 0;
        for i in 0..g.len() {
            let Some((_, p)) = relation(g, NodeId(i as u32)) else {
                continue;
            };
            for rel in [Rel::Lt, Rel::Eq, Rel::Ne] {
                for k in -3..=3 {
                    let p = Poly {
                        terms: p.terms.clone(),
                        k: p.k + k,
                    };
                    let side = |s: i128| Poly {
                        terms: p
                            .terms
                            .iter()
                            .filter(|t| t.1 * s > 0)
                            .map(|(m, c)| (m.clone(), c * s))
                            .collect(),
                        k: 0,
                    };
                    let (pos, neg) = (side(1), side(-1));
                    if p.terms.is_empty()
                        || !linear::builds_as_plain_sum(&pos.terms)
                        || !linear::builds_as_plain_sum(&neg.terms)
                    {
                        continue;
                    }
                    let f = forms(rel, p.k, pos.terms.is_empty(), neg.terms.is_empty()).unwrap();
                    let fast = write_plain(g, &f, &pos, &neg);
                    let built = write_built(g, &f, pos, neg);
                    assert_eq!(
                        fast,
                        built,
                        "{:?} {rel:?}",
                        crate::text::print::expr(g, NodeId(i as u32))
                    );
                    plain += 1;
                }
            }
        }
        assert!(plain > 1000, "{plain}");
    }
}
