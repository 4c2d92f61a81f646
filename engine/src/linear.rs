//! The canonical linear form of `index` expressions, and the rewrites built
//! on it.
//!
//! An expression is read as a sum of (constant coefficient x monomial)
//! terms plus a constant ([`Poly`]), the way TVM's canonical simplifier,
//! XLA's affine expressions and MLIR's affine maps see index arithmetic. A
//! monomial is a product of *atoms*: anything that is not a sum, a
//! difference, a negation or a product (a variable, a division, a `min`,
//! a `where`, ...). Like terms are merged, constants folded, and the terms
//! kept in a total order (the graph's canonical order on their atoms), so
//! that two equal sums build one node. Products of sums are expanded (up to
//! a size bound) so that terms cancel across them, and common factors are
//! taken out again when the sum is built.
//!
//! A *split* is an atom of the shape `(x // a) mod b` (also `x mod b`,
//! `x // a`, `x mod m // a`, any chain of them taking whole digits; `/`
//! and `%` alike, for either sign of `x`, since truncation is odd:
//! [`Split`]): digit `a..a*b` of `x`. Splits of one base `x` fuse the way digits do:
//! `(x // a) mod b * s + (x // (a*b)) mod c * (s*b) == (x // a) mod (b*c) * s`,
//! down to `x` itself, which is then read into the sum.
//!
//! Every rewrite here is algorithmic: the rewriter records each firing
//! under the sub-rule's name ([`RULES`]) and the gate validates every one
//! (SMT over the bounds, the JIT over the domain), like
//! [`crate::divmod`]'s. The identities are stated as schemas in
//! `verify/lemmas/linear.rules`.
//!
//! Soundness beyond the identities:
//! - a rewrite drops, duplicates and moves terms, so it applies only where
//!   no term can be invalid (nor, therefore, unconstrained);
//! - every node the result adds must have an exact range inside the
//!   width's `index` range, and a new division must divide by a divisor the
//!   source divides by ([`fits_new`]), so that the result is defined
//!   wherever the source is.

use crate::arith::gcd;
use crate::dtype::Width;
use crate::ir::{DType, Graph, NodeId, Op};
use crate::ranges::{transfer, Range};
use rustc_hash::{FxHashMap, FxHashSet};
use std::cmp::Ordering;

/// The sub-rule names, in the order [`rewrite`] returns indices into.
pub const RULES: [&str; 2] = ["linear_normalize", "linear_nested_quotient"];

/// Index of each sub-rule in [`RULES`].
const NORMALIZE: usize = 0;
const NESTED_QUOTIENT: usize = 1;

/// Tries the linear form's rewrites at `n`: `(index into RULES, result)`.
/// `root`: `n` is a linear root (the rewriter's notion: its parent is not a
/// sum, product or negation), where a sum is normalized.
pub fn rewrite(g: &mut Graph, n: NodeId, root: bool, w: Width) -> Option<(usize, NodeId)> {
    let node = *g.node(n);
    if node.maybe_invalid {
        return None;
    }
    if root && crate::rewrite::is_linear_op(node.op, node.dtype) {
        return normalize(g, n, w).map(|r| (NORMALIZE, r));
    }
    if matches!(node.op, Op::FloorDiv | Op::Div) && node.dtype == DType::Index {
        return nested_quotient(g, n, w).map(|r| (NESTED_QUOTIENT, r));
    }
    None
}

/// A quotient whose numerator holds a quotient term: for an integer `A`
/// and `d, e > 0`, `A + y // d == (A*d + y) // d`, so
/// `(A + y // d) // e == (A*d + y) // (d*e)` (`(s0*2 + s1//64)//3` is
/// `(s0*128 + s1)//192`): one division instead of two. A negated term is
/// a quotient too: `-(y // d) == (d - 1 - y) // d`, and so is a floor
/// division by a negative `e`: `n // e == (-n) // (-e)` (`s0 // 2 // -7`
/// is `(1 - s0) // 14`). Only where the
/// result would not be split back (no multiple of `d*e` in its numerator:
/// [`crate::quotient::splits_again`]), with exactly one such term of
/// coefficient 1. `/` stays `/` where both numerators are
/// non-negative (then `/` is `//`).
fn nested_quotient(g: &mut Graph, n: NodeId, w: Width) -> Option<NodeId> {
    let node = *g.node(n);
    let mut e = g
        .node(node.src()[1])
        .as_const()
        .filter(|&e| !(-1..=1).contains(&e))? as i128;
    let x = node.src()[0];
    if node.op == Op::Div && (g.node(x).vmin < 0 || e < 0) {
        return None;
    }
    let mut p = read(g, x)?;
    // By a negative divisor: n // e == (-n) // (-e).
    if e < 0 {
        e = e.checked_neg()?;
        let mut neg = Acc::default();
        neg.add_poly(&p, -1)?;
        p = neg.finish(g)?;
    }
    let mut inner = p.terms.iter().filter(|(m, c)| {
        c.abs() == 1
            && m.len() == 1
            && split_of(g, m[0]).is_some_and(|s| s.hi.is_none() && s.lo > 1 && s.floor_exact(g))
    });
    let (q, c) = inner.next()?;
    if inner.next().is_some() {
        return None;
    }
    let s = split_of(g, q[0])?;
    let d = s.lo;
    let mut a = p.acc();
    a.add(q.clone(), -c)?;
    let a = a.finish(g)?;
    if a.terms.is_empty() && a.k == 0 && *c == 1 {
        return None;
    }
    // A negated quotient is a quotient: -(y // d) == (d - 1 - y) // d.
    let mut num = Acc::default();
    num.add_poly(&a, d)?;
    num.add_poly(&read(g, s.base)?, *c)?;
    if *c == -1 {
        num.k = num.k.checked_add(d - 1)?;
    }
    let num = num.finish(g)?;
    let de = d.checked_mul(e)?;
    if crate::quotient::splits_again(&num, de) {
        return None;
    }
    let nb = build(g, &num)?;
    let op = if node.op == Op::Div && g.node(nb).vmin >= 0 {
        Op::Div
    } else {
        Op::FloorDiv
    };
    let de = cnst(g, de)?;
    let out = g.mk(op, &[nb, de]);
    if out == n || !fits_new(g, n, out, w) {
        return None;
    }
    Some(out)
}

// ---- the form ---------------------------------------------------------------------

/// A product of atoms in canonical order (an atom may repeat); never empty
/// in a [`Poly`] term.
pub type Mono = Vec<NodeId>;

/// `sum c_i * m_i + k`: distinct monomials, non-zero coefficients, in
/// canonical order; every coefficient and `k` fit 64 bits.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Poly {
    pub terms: Vec<(Mono, i128)>,
    pub k: i128,
}

/// A poly under construction: monomial -> coefficient.
#[derive(Clone, Debug, Default)]
pub struct Acc {
    pub terms: FxHashMap<Mono, i128>,
    pub k: i128,
}

impl Acc {
    pub fn add(&mut self, m: Mono, c: i128) -> Option<()> {
        if c == 0 {
            return Some(());
        }
        if m.is_empty() {
            self.k = self.k.checked_add(c)?;
            return Some(());
        }
        let e = self.terms.entry(m).or_insert(0);
        *e = e.checked_add(c)?;
        Some(())
    }

    /// Adds `c * p`.
    pub fn add_poly(&mut self, p: &Poly, c: i128) -> Option<()> {
        for (m, f) in &p.terms {
            self.add(m.clone(), f.checked_mul(c)?)?;
        }
        self.k = self.k.checked_add(p.k.checked_mul(c)?)?;
        Some(())
    }

    /// The coefficient of a monomial (0 when absent).
    pub fn coef(&self, m: &Mono) -> i128 {
        self.terms.get(m).copied().unwrap_or(0)
    }

    /// The finished poly: zero terms dropped, canonical order; `None` if a
    /// coefficient leaves 64 bits.
    pub fn finish(self, g: &Graph) -> Option<Poly> {
        let mut terms: Vec<(Mono, i128)> = self.terms.into_iter().filter(|t| t.1 != 0).collect();
        if terms.iter().any(|t| !fits64(t.1)) || !fits64(self.k) {
            return None;
        }
        terms.sort_by(|a, b| mono_cmp(g, &a.0, &b.0));
        Some(Poly { terms, k: self.k })
    }
}

impl Poly {
    pub fn constant(k: i128) -> Poly {
        Poly {
            terms: Vec::new(),
            k,
        }
    }

    pub fn is_const(&self) -> bool {
        self.terms.is_empty()
    }

    pub fn acc(&self) -> Acc {
        let mut a = Acc {
            terms: FxHashMap::default(),
            k: self.k,
        };
        for (m, c) in &self.terms {
            a.terms.insert(m.clone(), *c);
        }
        a
    }

    /// The gcd of the coefficients (not the constant); 0 for a constant.
    pub fn coef_gcd(&self) -> i128 {
        self.terms.iter().fold(0, |a, t| gcd(a, t.1))
    }
}

fn fits64(v: i128) -> bool {
    i64::MIN as i128 <= v && v <= i64::MAX as i128
}

/// The canonical order of monomials: atom by atom in the graph's canonical
/// order, then the shorter first.
pub fn mono_cmp(g: &Graph, a: &Mono, b: &Mono) -> Ordering {
    for (&x, &y) in a.iter().zip(b) {
        let c = g.canonical_cmp(x, y);
        if c != Ordering::Equal {
            return c;
        }
    }
    a.len().cmp(&b.len())
}

// ---- reading ----------------------------------------------------------------------

/// Products of sums are expanded at most this many levels deep, and only
/// while the expansion has at most [`PRODUCT_TERMS`] terms; a larger
/// product stays one atom.
const PRODUCT_DEPTH: u32 = 3;
const PRODUCT_TERMS: usize = 16;

/// How a node contributes to the linear form of its parent.
enum Kind {
    Const(i128),
    Add(NodeId, NodeId),
    Sub(NodeId, NodeId),
    Neg(NodeId),
    /// `x * c`.
    Scale(NodeId, i128),
    /// A product of two non-constants.
    Product(NodeId, NodeId),
    Atom,
}

fn kind(g: &Graph, n: NodeId) -> Kind {
    let node = g.node(n);
    if node.dtype != DType::Index {
        return Kind::Atom;
    }
    let s = node.src();
    match node.op {
        Op::Const(c) => Kind::Const(c as i128),
        Op::Add => Kind::Add(s[0], s[1]),
        Op::Sub => Kind::Sub(s[0], s[1]),
        Op::Neg => Kind::Neg(s[0]),
        Op::Mul => match (g.node(s[0]).as_const(), g.node(s[1]).as_const()) {
            (_, Some(c)) => Kind::Scale(s[0], c as i128),
            (Some(c), _) => Kind::Scale(s[1], c as i128),
            _ => Kind::Product(s[0], s[1]),
        },
        _ => Kind::Atom,
    }
}

/// Reads an `index` expression as a [`Poly`]; `None` if a coefficient
/// leaves 64 bits (or the node is not `index`).
pub fn read(g: &Graph, root: NodeId) -> Option<Poly> {
    read_at(g, root, 0)?.finish(g)
}

/// Reads an `index` expression into an [`Acc`], to be added to.
pub fn read_acc(g: &Graph, root: NodeId) -> Option<Acc> {
    read_at(g, root, 0)
}

/// The linear form of `root`, unfinished. The sub-graph of sums, products
/// by constants and negations below `root` is a DAG: each node's
/// coefficient is the sum over its parents, so nodes are visited parents
/// first (decreasing id: a node is built after its operands) and each once,
/// whatever the sharing.
fn read_at(g: &Graph, root: NodeId, depth: u32) -> Option<Acc> {
    if g.node(root).dtype != DType::Index {
        return None;
    }
    let mut acc = Acc::default();
    let mut coef: FxHashMap<NodeId, i128> = FxHashMap::default();
    let mut nodes = Vec::new();
    let mut stack = vec![root];
    coef.insert(root, 0);
    while let Some(n) = stack.pop() {
        nodes.push(n);
        let kids: [Option<NodeId>; 2] = match kind(g, n) {
            Kind::Add(a, b) | Kind::Sub(a, b) => [Some(a), Some(b)],
            Kind::Neg(a) | Kind::Scale(a, _) => [Some(a), None],
            _ => [None, None],
        };
        for c in kids.into_iter().flatten() {
            if let std::collections::hash_map::Entry::Vacant(e) = coef.entry(c) {
                e.insert(0);
                stack.push(c);
            }
        }
    }
    nodes.sort_unstable_by(|a, b| b.cmp(a));
    coef.insert(root, 1);
    for n in nodes {
        let c = coef[&n];
        if c == 0 {
            continue;
        }
        let mut push = |x: NodeId, f: i128| -> Option<()> {
            let e = coef.get_mut(&x).expect("collected above");
            *e = e.checked_add(f)?;
            Some(())
        };
        match kind(g, n) {
            Kind::Const(v) => acc.k = acc.k.checked_add(c.checked_mul(v)?)?,
            Kind::Add(a, b) => {
                push(a, c)?;
                push(b, c)?;
            }
            Kind::Sub(a, b) => {
                push(a, c)?;
                push(b, c.checked_neg()?)?;
            }
            Kind::Neg(a) => push(a, c.checked_neg()?)?,
            Kind::Scale(a, f) => push(a, c.checked_mul(f)?)?,
            Kind::Product(a, b) => match expand(g, a, b, depth) {
                Some(p) => {
                    for (m, f) in p.terms {
                        acc.add(m, f.checked_mul(c)?)?;
                    }
                    acc.k = acc.k.checked_add(p.k.checked_mul(c)?)?;
                }
                None => acc.add(vec![n], c)?,
            },
            Kind::Atom => acc.add(vec![n], c)?,
        }
    }
    Some(acc)
}

/// `a * b` as a poly, when small enough.
fn expand(g: &Graph, a: NodeId, b: NodeId, depth: u32) -> Option<Acc> {
    if depth >= PRODUCT_DEPTH {
        return None;
    }
    let pa = read_at(g, a, depth + 1)?;
    let pb = read_at(g, b, depth + 1)?;
    let size = |p: &Acc| p.terms.len() + (p.k != 0) as usize;
    if size(&pa) * size(&pb) > PRODUCT_TERMS {
        return None;
    }
    let with_k = |p: &Acc| -> Vec<(Mono, i128)> {
        let mut v: Vec<(Mono, i128)> = p.terms.iter().map(|(m, c)| (m.clone(), *c)).collect();
        if p.k != 0 {
            v.push((Vec::new(), p.k));
        }
        v
    };
    let mut out = Acc::default();
    for (ma, ca) in with_k(&pa) {
        for (mb, cb) in with_k(&pb) {
            let mut m: Mono = ma.iter().chain(&mb).copied().collect();
            m.sort_by(|x, y| g.canonical_cmp(*x, *y));
            out.add(m, ca.checked_mul(cb)?)?;
        }
    }
    Some(out)
}

// ---- building ---------------------------------------------------------------------

fn cnst(g: &mut Graph, v: i128) -> Option<NodeId> {
    Some(g.cnst(i64::try_from(v).ok()?, DType::Index))
}

/// The node of a monomial: its atoms multiplied left to right.
fn mono_node(g: &mut Graph, m: &[NodeId]) -> NodeId {
    let mut it = m.iter().copied();
    let first = it.next().expect("a monomial has an atom");
    it.fold(first, |acc, a| g.mk(Op::Mul, &[acc, a]))
}

/// Builds a poly in canonical shape: common atoms factored out of products
/// (`x*y + x*10` is `x * (y + 10)`), then the positive terms summed in
/// order, the negative ones subtracted (`a - b*2`), the constant last
/// (`+ k`); with no positive term, `k - a` or `-a - b`.
pub fn build(g: &mut Graph, p: &Poly) -> Option<NodeId> {
    let plain = build_terms(g, &p.terms, p.k, true)?;
    // The terms' common factor taken out (`(y - z) * 5 + 3`), either sign,
    // when that is smaller.
    let cg = p.coef_gcd();
    if p.terms.len() < 2 || cg <= 1 {
        return Some(plain);
    }
    let mut best = (size(g, plain), plain);
    for s in [cg, -cg] {
        let inner: Vec<(Mono, i128)> = p.terms.iter().map(|(m, c)| (m.clone(), c / s)).collect();
        let sum = build_terms(g, &inner, 0, true)?;
        let sn = cnst(g, s)?;
        let mut node = g.mk(Op::Mul, &[sum, sn]);
        if p.k != 0 {
            let kn = cnst(g, p.k)?;
            node = g.mk(Op::Add, &[node, kn]);
        }
        let cost = size(g, node);
        if cost < best.0 {
            best = (cost, node);
        }
    }
    Some(best.1)
}

/// Number of distinct nodes below `n` (a cost).
fn size(g: &Graph, n: NodeId) -> usize {
    g.reachable(&[n]).len()
}

/// `terms` and `k` built, the atom shared by the most monomials factored
/// out; `both_signs`: the factored sum is built with either sign and the
/// smaller kept (`x * (1 - y)`, not `-(x * (y - 1))`), else with its
/// leading term positive.
fn build_terms(g: &mut Graph, terms: &[(Mono, i128)], k: i128, both_signs: bool) -> Option<NodeId> {
    // Factor the atom shared by the most monomials (at least two).
    let mut count: FxHashMap<NodeId, usize> = FxHashMap::default();
    for (m, _) in terms {
        let mut seen: Vec<NodeId> = m.clone();
        seen.dedup();
        for a in seen {
            *count.entry(a).or_default() += 1;
        }
    }
    let best = count
        .iter()
        .filter(|(_, &c)| c >= 2)
        .max_by(|(a, ca), (b, cb)| ca.cmp(cb).then_with(|| g.canonical_cmp(**b, **a)))
        .map(|(&a, _)| a);
    let Some(a) = best else {
        let mut items: Vec<(NodeId, i128)> = Vec::new();
        for (m, c) in terms {
            let node = mono_node(g, m);
            items.push((node, *c));
        }
        return assemble(g, &items, k);
    };
    let mut inner: Vec<(Mono, i128)> = Vec::new();
    let mut inner_k = 0i128;
    let mut rest: Vec<(Mono, i128)> = Vec::new();
    for (m, c) in terms {
        match m.iter().position(|&x| x == a) {
            Some(i) => {
                let mut cof = m.clone();
                cof.remove(i);
                if cof.is_empty() {
                    inner_k += c;
                } else {
                    inner.push((cof, *c));
                }
            }
            None => rest.push((m.clone(), *c)),
        }
    }
    inner.sort_by(|x, y| mono_cmp(g, &x.0, &y.0));
    // The factored sum leads with a positive term: x * (y - z), not
    // x * (z - y) negated... unless all of it is negative.
    let neg = match inner.first() {
        Some((_, c)) => *c < 0,
        None => inner_k < 0,
    };
    let first = if neg { -1 } else { 1 };
    let signs: &[i128] = if both_signs {
        &[first, -first]
    } else {
        &[first]
    };
    let mut best: Option<(usize, NodeId)> = None;
    for &sign in signs {
        let flipped: Vec<(Mono, i128)> = inner.iter().map(|(m, c)| (m.clone(), c * sign)).collect();
        let cof = build_terms(g, &flipped, inner_k * sign, false)?;
        let prod = g.mk(Op::Mul, &[a, cof]);
        let mut items: Vec<(NodeId, i128)> = vec![(prod, sign)];
        for (m, c) in &rest {
            let node = mono_node(g, m);
            items.push((node, *c));
        }
        items.sort_by(|x, y| g.canonical_cmp(x.0, y.0));
        let node = assemble(g, &items, k)?;
        let cost = size(g, node);
        if best.is_none_or(|b| cost < b.0) {
            best = Some((cost, node));
        }
    }
    best.map(|b| b.1)
}

/// `sum c_i * t_i + k` from built terms, in the order given.
fn assemble(g: &mut Graph, items: &[(NodeId, i128)], k: i128) -> Option<NodeId> {
    let scaled = |g: &mut Graph, t: NodeId, c: i128| -> Option<NodeId> {
        if c == 1 {
            Some(t)
        } else {
            let cn = cnst(g, c)?;
            Some(g.mk(Op::Mul, &[t, cn]))
        }
    };
    let mut sum: Option<NodeId> = None;
    for &(t, c) in items.iter().filter(|t| t.1 > 0) {
        let term = scaled(g, t, c)?;
        sum = Some(match sum {
            None => term,
            Some(s) => g.mk(Op::Add, &[s, term]),
        });
    }
    let mut negs = items.iter().filter(|t| t.1 < 0).copied();
    if sum.is_none() {
        if k != 0 {
            sum = Some(cnst(g, k)?);
        } else if let Some((t, c)) = negs.next() {
            sum = Some(if c == -1 {
                g.mk(Op::Neg, &[t])
            } else {
                scaled(g, t, c)?
            });
        }
        let mut s = sum.unwrap_or(cnst(g, 0)?);
        for (t, c) in negs {
            let term = scaled(g, t, c.checked_neg()?)?;
            s = g.mk(Op::Sub, &[s, term]);
        }
        return Some(s);
    }
    let mut s = sum.expect("a positive term");
    for (t, c) in negs {
        let term = scaled(g, t, c.checked_neg()?)?;
        s = g.mk(Op::Sub, &[s, term]);
    }
    if k != 0 {
        let kn = cnst(g, k)?;
        s = g.mk(Op::Add, &[s, kn]);
    }
    Some(s)
}

// ---- definedness of a result ------------------------------------------------------

/// A node's range at width `w` (a defined `index` value fits W bits); the
/// empty range when it never has a value.
pub fn rng(g: &Graph, id: NodeId, w: Width) -> Range {
    let n = g.node(id);
    let (tlo, thi) = w.dtype_bounds(n.dtype);
    let (lo, hi) = ((n.vmin as i128).max(tlo), (n.vmax as i128).min(thi));
    if n.range_empty() || lo > hi {
        Range::empty()
    } else {
        Range::new(lo, hi)
    }
}

/// Every node of `result` that `source` does not contain has an exact range
/// (interval arithmetic from the source's nodes, whose values are defined
/// wherever the source is) inside W-bit `index`, no new leaf but
/// constants, and every new division divides by a node the source divides
/// by (so it is not zero wherever the source is defined). Then the result
/// is defined wherever the source is.
///
/// The walk starts at the result and stops at nodes of the source, so it
/// costs the size of the new part, plus (only when the new part reaches a
/// node it cannot place) the size of the source.
pub fn fits_new(g: &Graph, source: NodeId, result: NodeId, w: Width) -> bool {
    fits_new_dividing(g, source, result, w, &[])
}

/// [`fits_new`], where a new division may also divide by one of
/// `divisors`: nodes the caller has shown to be non-zero wherever the
/// source is defined (a factor `D` of a divisor `G * D` of the source).
pub fn fits_new_dividing(
    g: &Graph,
    source: NodeId,
    result: NodeId,
    w: Width,
    divisors: &[NodeId],
) -> bool {
    let mut old: Option<FxHashSet<NodeId>> = None;
    let extra = divisors;
    let mut divisors: Option<FxHashSet<NodeId>> = None;
    // The nodes of the result above the source's: found top-down.
    let mut new_nodes: Vec<NodeId> = Vec::new();
    let mut seen: FxHashSet<NodeId> = FxHashSet::default();
    let mut stack = vec![result];
    let is_old = |id: NodeId, old: &mut Option<FxHashSet<NodeId>>| -> bool {
        if id == source {
            return true;
        }
        if id > source {
            // Built after the source: not a node of it.
            return false;
        }
        old.get_or_insert_with(|| g.reachable(&[source]).into_iter().collect())
            .contains(&id)
    };
    while let Some(id) = stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        let n = g.node(id);
        if matches!(n.op, Op::Const(_)) {
            new_nodes.push(id);
            continue;
        }
        if is_old(id, &mut old) {
            continue;
        }
        if matches!(n.op, Op::Var(_) | Op::Invalid) {
            return false;
        }
        new_nodes.push(id);
        stack.extend_from_slice(n.src());
    }
    new_nodes.sort_unstable();
    let mut exact: FxHashMap<NodeId, Range> = FxHashMap::default();
    for id in new_nodes {
        let n = g.node(id);
        let r = match n.op {
            Op::Const(c) => Range::point(c as i128),
            op => {
                let args: Vec<Range> = n
                    .src()
                    .iter()
                    .map(|s| exact.get(s).copied().unwrap_or_else(|| rng(g, *s, w)))
                    .collect();
                if op.is_divmod() && args[1].contains(0) {
                    let d = n.src()[1];
                    let divs = divisors.get_or_insert_with(|| {
                        g.reachable(&[source])
                            .into_iter()
                            .filter(|&x| g.node(x).op.is_divmod())
                            .map(|x| g.node(x).src()[1])
                            .collect()
                    });
                    if !divs.contains(&d) && !extra.contains(&d) {
                        return false;
                    }
                }
                if op.is_shift() {
                    return false;
                }
                transfer(op, &args)
            }
        };
        if n.dtype == DType::Index && !r.is_empty() {
            let (lo, hi) = w.dtype_bounds(DType::Index);
            if r.lo < lo || r.hi > hi {
                return false;
            }
        }
        exact.insert(id, r);
    }
    true
}

// ---- splits -----------------------------------------------------------------------

/// Digits `lo..hi` of `base`: `(base // lo) mod (hi / lo)` (`base // lo`
/// when `hi` is `None`), with `lo | hi`, both positive. `trunc`: written
/// with `/` and `%`. Truncating division is odd (`(-x) / c == -(x / c)`,
/// `(-x) % c == -(x % c)` for `c > 0`), so a truncating split of `x` is
/// `sign(x)` times the floor split of `|x|`: every identity between splits
/// of one base that is linear in them (digit fusion, `x == (x / c) * c + x
/// % c`) holds for both families, whatever the sign of the base, as long
/// as the splits it relates are of one family. Where the base is
/// non-negative the two families agree ([`Split::floor_exact`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Split {
    pub base: NodeId,
    pub lo: i128,
    pub hi: Option<i128>,
    pub trunc: bool,
}

impl Split {
    /// The split equals the floor split of its digits: floor ops, or a
    /// non-negative base (the families then agree).
    pub fn floor_exact(&self, g: &Graph) -> bool {
        !self.trunc || g.node(self.base).vmin >= 0
    }

    /// `self` and `o` may be related by the identities between splits:
    /// one family, or both equal to floor splits.
    pub fn compatible(&self, o: &Split, g: &Graph) -> bool {
        self.trunc == o.trunc || (self.floor_exact(g) && o.floor_exact(g))
    }
}

/// The split an atom is, if any: a chain of quotients and remainders of
/// one family by positive constants, each taking whole digits of the one
/// below (`x % 20 / 2 % 2` is digits `2..4` of `x`).
pub fn split_of(g: &Graph, atom: NodeId) -> Option<Split> {
    let n = g.node(atom);
    if n.dtype != DType::Index {
        return None;
    }
    let (trunc, div, rem) = match n.op {
        Op::FloorDiv | Op::Mod => (false, Op::FloorDiv, Op::Mod),
        Op::Div | Op::Rem => (true, Op::Div, Op::Rem),
        _ => return None,
    };
    let pos_const = |id: NodeId| g.node(id).as_const().filter(|&c| c > 0).map(|c| c as i128);
    // The chain of ops from the atom down to the base.
    let mut chain: Vec<(NodeId, Op, i128)> = Vec::new();
    let mut x = atom;
    loop {
        let xn = g.node(x);
        if xn.op != div && xn.op != rem {
            break;
        }
        let Some(c) = pos_const(xn.src()[1]) else {
            break;
        };
        chain.push((x, xn.op, c));
        x = xn.src()[0];
    }
    // Digits lo..hi of the base, from the bottom up; an op that does not
    // take whole digits of the split below starts a new split on its
    // operand.
    let mut s = Split {
        base: x,
        lo: 1,
        hi: None,
        trunc,
    };
    for &(node, op, c) in chain.iter().rev() {
        let next = |s: &Split| -> Option<Split> {
            if s.hi.is_some_and(|h| (h / s.lo) % c != 0) {
                return None;
            }
            let mut t = *s;
            if op == div {
                t.lo = s.lo.checked_mul(c)?;
            } else {
                t.hi = Some(s.lo.checked_mul(c)?);
            }
            t.hi.is_none_or(|h| h > t.lo).then_some(t)
        };
        s = match next(&s) {
            Some(t) => t,
            None => next(&Split {
                base: g.node(node).src()[0],
                lo: 1,
                hi: None,
                trunc,
            })?,
        };
    }
    Some(s)
}

/// Builds a split's node (its base itself when it covers every digit).
pub fn split_node(g: &mut Graph, s: Split) -> Option<NodeId> {
    let (div, rem) = if s.trunc {
        (Op::Div, Op::Rem)
    } else {
        (Op::FloorDiv, Op::Mod)
    };
    let q = if s.lo == 1 {
        s.base
    } else {
        let l = cnst(g, s.lo)?;
        g.mk(div, &[s.base, l])
    };
    Some(match s.hi {
        None => q,
        Some(h) => {
            let m = cnst(g, h / s.lo)?;
            g.mk(rem, &[q, m])
        }
    })
}

/// Fuses the splits of each base, converts between the remainder and
/// the quotient where that saves a division, until nothing changes.
/// A split of a sum with a quotient term counts as a split of the sum that
/// quotient's numerator stands for ([`lift`]), and a split of one base as
/// a split of another where their digits agree ([`rebase`]), so that digits
/// of bases that differ by multiples fuse (XLA's
/// `(d1*2 + d0 // 64) mod 3 * 256 + d0 mod 64 * 4 + (d1*128 + d0) // 192 * 768`
/// is `d1*512 + d0*4`).
/// Returns whether anything changed.
pub fn fuse(g: &mut Graph, acc: &mut Acc) -> Option<bool> {
    let mut changed = false;
    // Each round can only read bases into the sum, which are smaller than
    // the splits they came from, so the rounds end (and a round cap stops
    // them regardless).
    for _ in 0..64 {
        let mut round = false;
        let mut splits: Vec<(Split, NodeId, i128)> = Vec::new();
        for (m, &c) in &acc.terms {
            if m.len() != 1 || c == 0 {
                continue;
            }
            if let Some(s) = split_of(g, m[0]) {
                splits.push((s, m[0], c));
            }
        }
        splits.sort_unstable_by_key(|t| t.1);
        round |= shorten(g, acc, &mut splits)?;
        // Splits by base.
        let mut by_base: FxHashMap<NodeId, Vec<(Split, NodeId, i128)>> = FxHashMap::default();
        for (s, atom, c) in splits {
            let s = lift(g, s)?;
            by_base.entry(s.base).or_default().push((s, atom, c));
        }
        rebase(g, &mut by_base)?;
        let mut bases: Vec<NodeId> = by_base.keys().copied().collect();
        bases.sort_unstable();
        for base in bases {
            let mut group = by_base.remove(&base).expect("listed");
            round |= fuse_group(g, acc, base, &mut group)?;
            round |= convert_group(g, acc, base, &group)?;
        }
        if !round {
            break;
        }
        changed = true;
    }
    Some(changed)
}

/// A floor split of a base `A + y // d` (one quotient term, of
/// coefficient one) is the same digits, times `d`, of `A*d + y`: for an integer `A`,
/// `A + y // d == (A*d + y) // d`. Lifted while it applies (a few times).
fn lift(g: &mut Graph, mut s: Split) -> Option<Split> {
    for _ in 0..4 {
        if s.trunc {
            break;
        }
        let Some(p) = read(g, s.base) else {
            break;
        };
        let mut quots = p.terms.iter().filter(|(m, c)| {
            *c == 1 && m.len() == 1 && {
                let n = g.node(m[0]);
                n.op == Op::FloorDiv
                    && !n.maybe_invalid
                    && g.node(n.src()[1]).as_const().is_some_and(|d| d > 1)
            }
        });
        let (Some((q, _)), None) = (quots.next(), quots.next()) else {
            break;
        };
        let qn = *g.node(q[0]);
        let (y, d) = (qn.src()[0], g.node(qn.src()[1]).as_const()? as i128);
        let mut a = p.acc();
        a.add(q.clone(), -1)?;
        let a = a.finish(g)?;
        if a.terms.is_empty() {
            break;
        }
        let mut b = Acc::default();
        b.add_poly(&a, d)?;
        b.add_poly(&read(g, y)?, 1)?;
        let base = build(g, &b.finish(g)?)?;
        s = Split {
            base,
            lo: s.lo.checked_mul(d)?,
            hi: match s.hi {
                Some(h) => Some(h.checked_mul(d)?),
                None => None,
            },
            trunc: false,
        };
    }
    Some(s)
}

/// Moves splits between the groups of a few bases where they are the same
/// digits of the other base (floor splits, or equal to them): digits
/// `lo..h` of `b1` are those of `b2` when `b1 - b2` is a multiple of `h`
/// (`d0 mod 64 == (d1*128 + d0) mod 64`); digits `lo..hi` of `b1` are
/// digits `lo*m..hi*m` of `b2` when `b2 == m*b1 + r` with `0 <= r < m`
/// (`b1 == b2 // m`). Each split moves at most once.
fn rebase(
    g: &mut Graph,
    by_base: &mut FxHashMap<NodeId, Vec<(Split, NodeId, i128)>>,
) -> Option<()> {
    let mut bases: Vec<NodeId> = by_base.keys().copied().collect();
    if bases.len() < 2 || bases.len() > 8 {
        return Some(());
    }
    bases.sort_unstable();
    let polys: Vec<Option<Poly>> = bases.iter().map(|&b| read(g, b)).collect();
    let mut moved: FxHashSet<NodeId> = FxHashSet::default();
    for (i, &b1) in bases.iter().enumerate() {
        let Some(p1) = &polys[i] else {
            continue;
        };
        let Some(group) = by_base.remove(&b1) else {
            continue;
        };
        let mut keep = Vec::new();
        for (s, atom, c) in group {
            let target = if moved.contains(&atom) || !s.floor_exact(g) {
                None
            } else {
                bases.iter().zip(&polys).find_map(|(&b2, p2)| {
                    (b2 != b1).then_some(())?;
                    same_digits(g, s, p1, p2.as_ref()?, b2)
                })
            };
            match target {
                Some(t) => {
                    moved.insert(atom);
                    by_base.entry(t.base).or_default().push((t, atom, c));
                }
                None => keep.push((s, atom, c)),
            }
        }
        if !keep.is_empty() {
            by_base.entry(b1).or_default().extend(keep);
        }
    }
    Some(())
}

/// The digits of `s` (a split of the base read as `p1`) as a split of `b2`
/// (read as `p2`), if [`rebase`]'s conditions show they are.
fn same_digits(g: &Graph, s: Split, p1: &Poly, p2: &Poly, b2: NodeId) -> Option<Split> {
    let multiple = |p: &Poly, h: i128| p.terms.iter().all(|t| t.1 % h == 0) && p.k % h == 0;
    if let Some(h) = s.hi {
        let mut d = p1.acc();
        d.add_poly(p2, -1)?;
        if multiple(&d.finish(g)?, h) {
            return Some(Split {
                base: b2,
                trunc: false,
                ..s
            });
        }
    }
    let (t, c1) = p1.terms.first()?;
    let c2 = p2.terms.iter().find(|x| &x.0 == t)?.1;
    if c2 % c1 != 0 || c2 / c1 < 2 {
        return None;
    }
    let m = c2 / c1;
    let mut r = p2.acc();
    r.add_poly(p1, -m)?;
    let r = r.finish(g)?;
    let rr = terms_range(g, &r.terms, r.k, Width::W64)?;
    if rr.lo < 0 || rr.hi >= m {
        return None;
    }
    Some(Split {
        base: b2,
        lo: s.lo.checked_mul(m)?,
        hi: match s.hi {
            Some(h) => Some(h.checked_mul(m)?),
            None => None,
        },
        trunc: false,
    })
}

/// A split written with more divisions than its digits need (`x % 20 / 2
/// % 2` is `x / 2 % 2`) is written with the fewest.
fn shorten(g: &mut Graph, acc: &mut Acc, splits: &mut [(Split, NodeId, i128)]) -> Option<bool> {
    let mut changed = false;
    for t in splits.iter_mut() {
        let (s, atom, c) = *t;
        let mut ops = 0;
        let mut x = atom;
        while x != s.base {
            ops += 1;
            x = g.node(x).src()[0];
        }
        if ops <= (s.lo > 1) as usize + s.hi.is_some() as usize {
            continue;
        }
        let node = split_node(g, s)?;
        acc.add(vec![atom], -c)?;
        acc.add(vec![node], c)?;
        t.1 = node;
        changed = true;
    }
    Some(changed)
}

/// Digit fusion within the splits of one base: `lo..mid` with scale s and
/// `mid..hi` with scale `s * (mid / lo)` become `lo..hi` with scale s.
fn fuse_group(
    g: &mut Graph,
    acc: &mut Acc,
    base: NodeId,
    group: &mut Vec<(Split, NodeId, i128)>,
) -> Option<bool> {
    let mut changed = false;
    'again: loop {
        for i in 0..group.len() {
            for j in 0..group.len() {
                let ((a, an, ca), (b, bn, cb)) = (group[i], group[j]);
                if i == j || a.hi != Some(b.lo) || !a.compatible(&b, g) {
                    continue;
                }
                if ca.checked_mul(b.lo / a.lo) != Some(cb) {
                    continue;
                }
                let fused = Split {
                    base,
                    lo: a.lo,
                    hi: b.hi,
                    trunc: a.trunc && b.trunc,
                };
                acc.add(vec![an], -ca)?;
                acc.add(vec![bn], -cb)?;
                group.retain(|t| t.1 != an && t.1 != bn);
                if fused.lo == 1 && fused.hi.is_none() {
                    add_base(g, acc, base, ca)?;
                } else {
                    let node = split_node(g, fused)?;
                    acc.add(vec![node], ca)?;
                    group.push((fused, node, ca));
                }
                changed = true;
                continue 'again;
            }
        }
        return Some(changed);
    }
}

/// Adds `c * base` to the sum, as the base's own terms.
fn add_base(g: &Graph, acc: &mut Acc, base: NodeId, c: i128) -> Option<()> {
    match read(g, base) {
        Some(p) => acc.add_poly(&p, c),
        None => acc.add(vec![base], c),
    }
}

/// Between the remainder and the quotient of one base by one divisor:
/// - both present: `x mod c * s + (x // c) * t == x * s + (x // c) * (t -
///   s*c)` (one division fewer; `x // 2 + x mod 2 == x - x // 2`);
/// - the quotient with `-s*c` and (most of) `s * x` present: `s * x - (x //
///   c) * (s*c) == (x mod c) * s` (`x - x // 8 * 8 == x mod 8`; a term of
///   `x` counts where the sum has at least `s` times it).
fn convert_group(
    g: &mut Graph,
    acc: &mut Acc,
    base: NodeId,
    group: &[(Split, NodeId, i128)],
) -> Option<bool> {
    for &(q, qn, t) in group {
        if q.hi.is_some() || acc.coef(&vec![qn]) != t {
            continue;
        }
        let c = q.lo;
        // A remainder by the same divisor.
        if let Some(&(_, rn, s)) = group.iter().find(|(r, rn, _)| {
            r.lo == 1 && r.hi == Some(c) && r.compatible(&q, g) && acc.coef(&vec![*rn]) != 0
        }) {
            acc.add(vec![rn], -s)?;
            add_base(g, acc, base, s)?;
            acc.add(vec![qn], s.checked_mul(c)?.checked_neg()?)?;
            return Some(true);
        }
        // s * base - (base // c) * (s*c).
        if t % c != 0 {
            continue;
        }
        let s = -(t / c);
        let Some(bp) = read(g, base) else {
            continue;
        };
        // A term counts as present where the sum has at least s times it
        // (its coefficient then shrinks: `s0*7 - s0 // 3 * 12` is `s0*3 +
        // s0 mod 3 * 4`).
        let (mut present, mut missing) = (0, 0);
        for (m, f) in &bp.terms {
            let (want, have) = (f.checked_mul(s)?, acc.coef(m));
            if have == want || (have.signum() == want.signum() && have.abs() > want.abs()) {
                present += 1;
            } else {
                missing += 1;
            }
        }
        if present == 0 || missing > present {
            continue;
        }
        acc.add_poly(&bp, s.checked_neg()?)?;
        acc.add(vec![qn], -t)?;
        let r = split_node(
            g,
            Split {
                base,
                lo: 1,
                hi: Some(c),
                trunc: q.trunc,
            },
        )?;
        acc.add(vec![r], s)?;
        return Some(true);
    }
    Some(false)
}

// ---- normalization ----------------------------------------------------------------

/// The canonical form of the sum rooted at `n`: like terms merged,
/// constants folded, splits fused, in canonical order. `None` when `n` is
/// already in it (or it cannot be built within the width).
fn normalize(g: &mut Graph, n: NodeId, w: Width) -> Option<NodeId> {
    let mut acc = read_at(g, n, 0)?;
    crate::quotient::residues(g, &mut acc, w)?;
    fuse(g, &mut acc)?;
    crate::minmax::in_sum(g, &mut acc, w)?;
    let p = acc.finish(g)?;
    let out = crate::quotient::build(g, &p, n, w)?;
    if out == n || !fits_new(g, n, out, w) {
        return None;
    }
    Some(out)
}

/// The range of a monomial's value at width `w`, by interval arithmetic
/// over its atoms' ranges.
pub fn mono_range(g: &Graph, m: &[NodeId], w: Width) -> Option<Range> {
    let mut r = Range::point(1);
    for &a in m {
        let ar = rng(g, a, w);
        if ar.is_empty() {
            return None;
        }
        r = transfer(Op::Mul, &[r, ar]);
    }
    Some(r)
}

/// The range of `sum c_i * m_i + k` (without its constant when `with_k` is
/// false), by interval arithmetic; `None` when a term never has a value or
/// a bound leaves `i128`.
pub fn terms_range(g: &Graph, terms: &[(Mono, i128)], k: i128, w: Width) -> Option<Range> {
    let (mut lo, mut hi) = (k, k);
    for (m, c) in terms {
        let r = mono_range(g, m, w)?;
        let (p, q) = (r.lo.checked_mul(*c)?, r.hi.checked_mul(*c)?);
        lo = lo.checked_add(p.min(q))?;
        hi = hi.checked_add(p.max(q))?;
    }
    Some(Range::new(lo, hi))
}

#[cfg(test)]
mod tests {
    use crate::testing::simp;

    #[test]
    fn like_terms_cancel_across_a_difference() {
        let v = "var x in [0, 9]\nvar y in [0, 9]\nvar z in [0, 9]";
        assert_eq!(simp(v, "(x + y) - (x + z)"), "y - z");
        assert_eq!(simp(v, "(x - 10) + (10 - z)"), "x - z");
        assert_eq!(simp(v, "x - (x + y)"), "-y");
        assert_eq!(simp(v, "x * 3 - x"), "x * 2");
    }

    #[test]
    fn common_factors_come_out_of_products() {
        let v = "var x in [0, 9]\nvar y in [0, 9]\nvar z in [0, 9]";
        assert_eq!(simp(v, "x * y + x * 10"), "x * (y + 10)");
        assert_eq!(simp(v, "(x - y) * z + y * z"), "x * z");
    }

    #[test]
    fn a_sum_is_built_in_its_smallest_equivalent_shape() {
        let v = "var x in [0, 9]\nvar y in [0, 9]\nvar z in [0, 9]";
        // The terms' common factor comes out, with the cheaper sign.
        assert_eq!(simp(v, "(x - y) * -2"), "(y - x) * 2");
        assert_eq!(simp(v, "x * 3 + y * 9"), "(x + y * 3) * 3");
        assert_eq!(
            simp(v, "y * 5 - (y + z) // 2 * 10"),
            "((y + z) mod 2 - z) * 5"
        );
        // A factored atom's cofactor with the cheaper sign.
        assert_eq!(simp(v, "x - x * y"), "x * (1 - y)");
    }

    #[test]
    fn digits_fuse_at_any_depth() {
        let v = "var x in [0, 10000]";
        assert_eq!(simp(v, "x mod 4 + (x // 4 mod 3) * 4"), "x mod 12");
        assert_eq!(simp(v, "x // 4 mod 3 + (x // 12) * 3"), "x // 4");
        assert_eq!(
            simp(v, "x // 3 mod 224 * 3 + x mod 3 + x // 672 * 672"),
            "x"
        );
        assert_eq!(simp(v, "x mod 4 * 3 + x // 4 mod 2 * 12"), "x mod 8 * 3");
        assert_eq!(simp(v, "x mod 4 * -2 + x // 4 mod 2 * -8"), "x mod 8 * -2");
        let v = "var r0 in [0, 7]\nvar r1 in [0, 7]";
        assert_eq!(simp(v, "(r0*2 + r1//4)*4 + r1 mod 4"), "r0 * 8 + r1");
    }

    #[test]
    fn digits_of_bases_that_differ_by_multiples_fuse() {
        // XLA's SimplifyReshape3: d1*2 + d0 // 64 is (d1*128 + d0) // 64,
        // and d0 mod 64 is (d1*128 + d0) mod 64.
        let v = "var d1 in [0, 3071]\nvar d0 in [0, 127]";
        assert_eq!(
            simp(
                v,
                "(d1 * 2 + d0 // 64) mod 3 * 256 + d0 mod 64 * 4 + (d1 * 128 + d0) // 192 * 768"
            ),
            "d1 * 512 + d0 * 4"
        );
        // d0 // 1536 is (d0*128 + d1) // 196608 for d1 in [0, 128).
        let v = "var d0 in [0, 3071]\nvar d1 in [0, 127]";
        assert_eq!(
            simp(v, "d0 // 1536 * 786432 + (d0 * 2 + d1 // 64) // 3 mod 1024 * 768 + (d0 * 2 + d1 // 64) mod 3 * 256 + d1 mod 64 * 4"),
            "d0 * 512 + d1 * 4"
        );
    }

    #[test]
    fn a_quotient_against_more_than_its_base_is_a_remainder() {
        let v = "var d0 in [0, 1]\nvar s0 in [0, 3]";
        assert_eq!(
            simp(v, "d0 - s0 // 3 * 12 + s0 * 7"),
            "d0 + s0 * 3 + s0 mod 3 * 4"
        );
    }

    #[test]
    fn truncating_digits_fuse_for_either_sign() {
        // Truncating splits are odd in their base: the identities hold.
        let v = "var x in [-50, 50]\nvar y in [-50, 50]";
        assert_eq!(simp(v, "x - x / 3 * 3"), "x % 3");
        assert_eq!(simp(v, "x % 3 + (x / 6 * 6 + x / 3 % 2 * 3)"), "x");
        assert_eq!(simp(v, "y - (y + x) / 5 * 5"), "(x + y) % 5 - x");
        // A split written with more divisions than its digits need.
        assert_eq!(simp(v, "x % 20 / 2 % 2 * 2"), "x / 2 % 2 * 2");
        // The families do not mix on a signed base.
        assert_eq!(simp(v, "x - x // 3 * 3 + x % 3"), "x mod 3 + x % 3");
    }

    #[test]
    fn a_quotient_of_a_quotient_term_is_one_division() {
        let v = "var s0 in [0, 100]\nvar s1 in [0, 127]";
        assert_eq!(
            simp(v, "(s0 * 2 + s1 // 64) // 3"),
            "(s0 * 128 + s1) // 192"
        );
        assert_eq!(simp(v, "(s0 * 2 + s1 // 64) / 3"), "(s0 * 128 + s1) / 192");
        // A coefficient that is a multiple of the divisor comes out instead.
        let v = "var s0 in [0, 100]\nvar s1 in [0, 1000]";
        assert_eq!(simp(v, "(s0 * 3 + s1 // 64) // 3"), "s0 + s1 // 192");
        // A negated inner quotient, a negative outer divisor.
        let v = "var s0 in [0, 1233]";
        assert_eq!(simp(v, "s0 // 2 // -7"), "(1 - s0) // 14");
    }

    #[test]
    fn a_remainder_and_its_quotient_share_one_division() {
        let v = "var x in [-50, 50]";
        assert_eq!(simp(v, "x // 3 + x mod 3"), "x - x // 3 * 2");
        // By 2 it is a ceiling: the declarative `floor_half_ceil`.
        assert_eq!(simp(v, "x // 2 + x mod 2"), "(x + 1) // 2");
        assert_eq!(simp(v, "x - x // 8 * 8"), "x mod 8");
    }
}
