//! The canonical linear form of `index` expressions.
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
//! Every pass that does arithmetic on sums reads and builds them here;
//! digit splits are [`crate::algebra::digits`], quotients
//! [`crate::algebra::quotient`], and whether a result is defined
//! [`crate::algebra::defined`].

use crate::algebra::defined::rng;
use crate::ir::arith::gcd;
use crate::ir::dtype::Width;
use crate::ir::ranges::{transfer, Range};
use crate::ir::{DType, Graph, NodeId, Op};
use crate::smallmap::SmallMap;
use smallvec::{smallvec, SmallVec};
use std::cmp::Ordering;

/// A sum, product or negation of `index`: its operands are read into its
/// own linear form, so they are inner sums, not linear roots.
#[inline]
pub fn is_linear_op(op: Op, dtype: DType) -> bool {
    dtype == DType::Index && matches!(op, Op::Add | Op::Sub | Op::Neg | Op::Mul)
}

// ---- the form ---------------------------------------------------------------------

/// A product of atoms in canonical order (an atom may repeat); never empty
/// in a [`Poly`] term. Inline: nearly every monomial is one or two atoms,
/// and the passes build and drop them by the thousand.
pub type Mono = SmallVec<[NodeId; 4]>;

/// The monomial of one atom.
pub fn atom(a: NodeId) -> Mono {
    smallvec![a]
}

/// `sum c_i * m_i + k`: distinct monomials, non-zero coefficients, in
/// canonical order; every coefficient and `k` fit 64 bits.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Poly {
    pub terms: PolyTerms,
    pub k: i128,
}

/// A poly's terms: most sums have a few, held without a heap allocation.
pub type PolyTerms = SmallVec<[(Mono, i128); 4]>;

/// A poly under construction: monomial -> coefficient.
#[derive(Clone, Debug, Default)]
pub struct Acc {
    pub terms: Terms,
    pub k: i128,
}

/// Monomial -> coefficient, in the order the monomials were first added
/// (a coefficient may be 0).
pub type Terms = SmallMap<Mono, i128, 4>;

impl Acc {
    pub fn add(&mut self, m: Mono, c: i128) -> Option<()> {
        if c == 0 {
            return Some(());
        }
        if m.is_empty() {
            self.k = self.k.checked_add(c)?;
            return Some(());
        }
        let e = self.terms.entry(m);
        *e = e.checked_add(c)?;
        Some(())
    }

    /// Adds `c * a` for one atom `a`.
    pub fn add_atom(&mut self, a: NodeId, c: i128) -> Option<()> {
        self.add(atom(a), c)
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
        let mut terms: PolyTerms = self.terms.into_iter().filter(|t| t.1 != 0).collect();
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
            terms: PolyTerms::new(),
            k,
        }
    }

    pub fn is_const(&self) -> bool {
        self.terms.is_empty()
    }

    pub fn acc(&self) -> Acc {
        let mut a = Acc {
            terms: Terms::default(),
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

    /// The terms as (node, coefficient), for a poly whose monomials are one
    /// atom each ([`read_shallow`]'s).
    pub fn atoms(&self) -> impl Iterator<Item = (NodeId, i128)> + '_ {
        self.terms.iter().map(|(m, c)| {
            debug_assert_eq!(m.len(), 1, "a shallow read's monomial");
            (m[0], *c)
        })
    }

    /// The same monomials with coefficients `f(i, c_i)` (`i` the term's
    /// index), those that become 0 dropped (the order stays canonical), and
    /// the constant `k`.
    pub fn map_coefs(&self, k: i128, mut f: impl FnMut(usize, i128) -> i128) -> Poly {
        let terms = self
            .terms
            .iter()
            .enumerate()
            .map(|(i, (m, c))| (m.clone(), f(i, *c)))
            .filter(|t| t.1 != 0)
            .collect();
        Poly { terms, k }
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
    if let Some(p) = read_leaf(g, root) {
        return Some(p);
    }
    read_at(g, root, 0)?.finish(g)
}

/// The form of an `index` atom or constant (most operands read), as
/// [`read_at`] and [`Acc::finish`] give it, without the accumulator.
#[inline]
fn read_leaf(g: &Graph, root: NodeId) -> Option<Poly> {
    if g.node(root).dtype != DType::Index {
        return None;
    }
    match kind(g, root) {
        Kind::Atom => Some(Poly {
            terms: smallvec![(atom(root), 1)],
            k: 0,
        }),
        Kind::Const(v) => Some(Poly::constant(v)),
        _ => None,
    }
}

/// Reads an `index` expression into an [`Acc`], to be added to.
pub fn read_acc(g: &Graph, root: NodeId) -> Option<Acc> {
    read_at(g, root, 0)
}

/// Adds `c` times `b`'s linear form to `acc`: `acc.add_poly(&read(g,
/// b)?, c)`, with an atom or a constant (most right-hand sides of a
/// comparison, most arms) added as itself, not read into a poly of its own
/// first (the same term added at the same place, the same overflow).
pub fn add_read(g: &Graph, acc: &mut Acc, b: NodeId, c: i128) -> Option<()> {
    if g.node(b).dtype == DType::Index {
        match kind(g, b) {
            Kind::Atom => return acc.add_atom(b, c),
            Kind::Const(v) => {
                acc.k = acc.k.checked_add(v.checked_mul(c)?)?;
                return Some(());
            }
            _ => {}
        }
    }
    acc.add_poly(&read(g, b)?, c)
}

/// [`read`] without expanding products: a product of two non-constants is
/// one atom, so every monomial is one node ([`Poly::atoms`]). The division
/// rules read this way: they match a term by the node it is (`x*(n+1)` is
/// a multiple of the divisor `n+1`, which the expanded `x*n + x` hides) and
/// judge its range as that node's.
pub fn read_shallow(g: &Graph, root: NodeId) -> Option<Poly> {
    if let Some(p) = read_leaf(g, root) {
        return Some(p);
    }
    read_at(g, root, PRODUCT_DEPTH)?.finish(g)
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
    // An atom or a constant is its own form (most operands the passes
    // read): the walk below would find just that.
    match kind(g, root) {
        Kind::Atom => {
            acc.add_atom(root, 1)?;
            return Some(acc);
        }
        Kind::Const(v) => {
            acc.k = v;
            return Some(acc);
        }
        Kind::Product(..) => return read_dag(g, root, depth, acc),
        _ => {}
    }
    if let Some(leaves) = tree_leaves(g, root) {
        let mut leaves = leaves?;
        // The order the walk below reaches them in: decreasing id, each
        // leaf's parents in decreasing id.
        leaves.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
        let mut i = 0;
        while i < leaves.len() {
            let n = leaves[i].0;
            let mut c = 0i128;
            while i < leaves.len() && leaves[i].0 == n {
                c = c.checked_add(leaves[i].2)?;
                i += 1;
            }
            if c != 0 {
                add_leaf(g, &mut acc, n, c, depth)?;
            }
        }
        return Some(acc);
    }
    read_dag(g, root, depth, acc)
}

/// [`read_at`]'s walk over any linear part, shared nodes and all.
fn read_dag(g: &Graph, root: NodeId, depth: u32, mut acc: Acc) -> Option<Acc> {
    // Every node of the linear part below `root`, with its coefficient.
    let mut coef: SmallMap<NodeId, i128, 8> = SmallMap::new();
    let mut stack: SmallVec<[NodeId; 8]> = smallvec![root];
    coef.insert(root, 0);
    while let Some(n) = stack.pop() {
        let kids: [Option<NodeId>; 2] = match kind(g, n) {
            Kind::Add(a, b) | Kind::Sub(a, b) => [Some(a), Some(b)],
            Kind::Neg(a) | Kind::Scale(a, _) => [Some(a), None],
            _ => [None, None],
        };
        for c in kids.into_iter().flatten() {
            if coef.insert(c, 0) {
                stack.push(c);
            }
        }
    }
    let mut nodes: SmallVec<[NodeId; 8]> = coef.keys().copied().collect();
    nodes.sort_unstable_by(|a, b| b.cmp(a));
    coef.insert(root, 1);
    for n in nodes {
        let c = *coef.get(&n).expect("collected above");
        if c == 0 {
            continue;
        }
        let mut push = |x: NodeId, f: i128| -> Option<()> {
            let e = coef.get_mut(&x).expect("collected above");
            *e = e.checked_add(f)?;
            Some(())
        };
        match kind(g, n) {
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
            Kind::Const(_) | Kind::Product(..) | Kind::Atom => add_leaf(g, &mut acc, n, c, depth)?,
        }
    }
    Some(acc)
}

/// Adds `c` times the leaf `n` of a linear part (a constant, a product of
/// non-constants, an atom) to `acc`.
fn add_leaf(g: &Graph, acc: &mut Acc, n: NodeId, c: i128, depth: u32) -> Option<()> {
    match kind(g, n) {
        Kind::Const(v) => acc.k = acc.k.checked_add(c.checked_mul(v)?)?,
        Kind::Product(a, b) => match expand(g, a, b, depth) {
            Some(p) => {
                for (m, f) in p.terms {
                    acc.add(m, f.checked_mul(c)?)?;
                }
                acc.k = acc.k.checked_add(p.k.checked_mul(c)?)?;
            }
            None => acc.add_atom(n, c)?,
        },
        _ => acc.add_atom(n, c)?,
    }
    Some(())
}

/// The inner nodes (sums, differences, negations, scalings) of a linear
/// part that this many or fewer make up are looked at as a tree first.
const TREE_NODES: usize = 16;

/// The leaves of the linear part at `root` as (leaf, parent, coefficient
/// through that parent) when no inner node has two parents (most sums): a
/// node's coefficient is then the product along its one path, computed by
/// the same steps as [`read_at`]'s walk (a leaf may still have several
/// parents, and is summed over them). Inner nodes of coefficient 0 are not
/// entered, as there. `None`: an inner node is shared (or there are more
/// than [`TREE_NODES`]), for the walk; `Some(None)`: a coefficient leaves
/// `i128`, where the walk fails too.
#[allow(clippy::type_complexity)]
fn tree_leaves(g: &Graph, root: NodeId) -> Option<Option<SmallVec<[(NodeId, NodeId, i128); 8]>>> {
    let mut inner: SmallVec<[NodeId; TREE_NODES]> = SmallVec::new();
    let mut leaves: SmallVec<[(NodeId, NodeId, i128); 8]> = SmallVec::new();
    let mut stack: SmallVec<[(NodeId, i128); 8]> = smallvec![(root, 1)];
    while let Some((n, c)) = stack.pop() {
        if inner.contains(&n) || inner.len() == TREE_NODES {
            return None;
        }
        inner.push(n);
        let kids: [Option<(NodeId, Option<i128>)>; 2] = match kind(g, n) {
            Kind::Add(a, b) => [Some((a, Some(c))), Some((b, Some(c)))],
            Kind::Sub(a, b) => [Some((a, Some(c))), Some((b, c.checked_neg()))],
            Kind::Neg(a) => [Some((a, c.checked_neg())), None],
            Kind::Scale(a, f) => [Some((a, c.checked_mul(f))), None],
            // `root` is an inner node, and so is every node pushed.
            _ => unreachable!("an inner node"),
        };
        for (x, f) in kids.into_iter().flatten() {
            let Some(f) = f else {
                return Some(None);
            };
            match kind(g, x) {
                Kind::Add(..) | Kind::Sub(..) | Kind::Neg(_) | Kind::Scale(..) => {
                    if f != 0 {
                        stack.push((x, f));
                    }
                }
                _ => leaves.push((x, n, f)),
            }
        }
    }
    Some(Some(leaves))
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
            v.push((Mono::new(), p.k));
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

pub fn cnst(g: &mut Graph, v: i128) -> Option<NodeId> {
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
    let mut best = (g.size(plain), plain);
    for s in [cg, -cg] {
        let inner: Vec<(Mono, i128)> = p.terms.iter().map(|(m, c)| (m.clone(), c / s)).collect();
        let sum = build_terms(g, &inner, 0, true)?;
        let sn = cnst(g, s)?;
        let mut node = g.mk(Op::Mul, &[sum, sn]);
        if p.k != 0 {
            let kn = cnst(g, p.k)?;
            node = g.mk(Op::Add, &[node, kn]);
        }
        let cost = g.size(node);
        if cost < best.0 {
            best = (cost, node);
        }
    }
    Some(best.1)
}

/// Whether [`build`] writes `terms` (every coefficient positive), with any
/// constant `k`, as their plain sum in order with `k` added last: no atom
/// is in two monomials (nothing to factor out) and two or more terms have
/// no common factor. Then the form with `k != 0` is exactly
/// `Add(form with 0, k)`, and its size is known without building it.
pub fn builds_as_plain_sum(terms: &[(Mono, i128)]) -> bool {
    if terms.iter().any(|t| t.1 <= 0) {
        return false;
    }
    if terms.len() < 2 {
        return true;
    }
    let shared = terms.iter().enumerate().any(|(i, (m, _))| {
        terms[i + 1..]
            .iter()
            .any(|(o, _)| m.iter().any(|a| o.contains(a)))
    });
    !shared && terms.iter().fold(0, |a, t| gcd(a, t.1)) == 1
}

/// `terms` and `k` built, the atom shared by the most monomials factored
/// out; `both_signs`: the factored sum is built with either sign and the
/// smaller kept (`x * (1 - y)`, not `-(x * (y - 1))`), else with its
/// leading term positive.
fn build_terms(g: &mut Graph, terms: &[(Mono, i128)], k: i128, both_signs: bool) -> Option<NodeId> {
    // Factor the atom shared by the most monomials (at least two).
    let mut count: SmallMap<NodeId, usize, 8> = SmallMap::new();
    if terms.len() > 1 {
        for (m, _) in terms {
            let mut seen: Mono = m.clone();
            seen.dedup();
            for a in seen {
                *count.entry(a) += 1;
            }
        }
    }
    let best = count
        .iter()
        .filter(|(_, &c)| c >= 2)
        .max_by(|(a, ca), (b, cb)| ca.cmp(cb).then_with(|| g.canonical_cmp(**b, **a)))
        .map(|(&a, _)| a);
    let Some(a) = best else {
        let mut items: SmallVec<[(NodeId, i128); 8]> = SmallVec::new();
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
        let cost = g.size(node);
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

// ---- recognizing a built sum ------------------------------------------------------

/// Whether `n` is a sum of plain atoms exactly as [`build`] builds its own
/// linear form: then reading and building it again gives `n` back, which
/// the linear pass can tell without building it (most sums it is asked
/// about). Plain atoms are what no sum rewrite looks into: not a
/// quotient or remainder by a positive constant, a `min` or a `max` (nor
/// a sum, product or constant). A term's monomial is a plain atom or the
/// product of two plain atoms that are no divisions (`x * y`, `x * x`:
/// read as the monomial of both, which the sum rewrites do not look into,
/// and built as their product in canonical order, the order hash-consing
/// stores a product's operands in).
/// The shape: the positive terms added in canonical order, the negative
/// ones subtracted in canonical order, the constant added last; with no
/// positive term `k - a - b` or `-a - b` (`a * -2 - b`); a term `t` or
/// `t * c`; no atom in two terms (else [`build`] factors it out); the
/// coefficients' gcd 1 when there are two terms or more (else [`build`]
/// weighs the factored shape). `false` says nothing.
pub fn is_built_plain(g: &Graph, n: NodeId) -> bool {
    let node = g.node(n);
    if node.dtype != DType::Index || node.maybe_invalid {
        return false;
    }
    let (body, k) = match (node.op, index_const(g, node.src().get(1).copied())) {
        (Op::Add, Some(k)) if k != 0 => (node.src()[0], k),
        _ => (n, 0),
    };
    let mut pos: SmallVec<[(Mono, i128); 8]> = SmallVec::new();
    let mut neg: SmallVec<[(Mono, i128); 8]> = SmallVec::new();
    // The subtracted terms, last first, down to the head.
    let mut cur = body;
    while let Some([l, r]) = linear_pair(g, cur, Op::Sub) {
        match plain_term(g, r) {
            Some((t, c)) if c > 0 => neg.push((t, -c)),
            _ => return false,
        }
        cur = l;
    }
    neg.reverse();
    if !added_terms(g, cur, &mut pos) {
        pos.clear();
        // No positive term: `k - ...` (with no constant added on top) or
        // the first negative term.
        if k != 0 {
            return false;
        }
        let head = g.node(cur);
        if head.dtype != DType::Index {
            return false;
        }
        match head.op {
            Op::Const(h) if h != 0 && !neg.is_empty() => {}
            Op::Neg => match plain_mono(g, head.src()[0]) {
                Some(m) => neg.insert(0, (m, -1)),
                None => return false,
            },
            _ => match plain_term(g, cur) {
                Some((t, c)) if c <= -2 => neg.insert(0, (t, c)),
                _ => return false,
            },
        }
    }
    let increasing = |ts: &[(Mono, i128)]| {
        ts.windows(2)
            .all(|w| mono_cmp(g, &w[0].0, &w[1].0) == Ordering::Less)
    };
    if !increasing(&pos) || !increasing(&neg) {
        return false;
    }
    let all = || pos.iter().chain(&neg);
    let products = all().any(|t| t.0.len() > 1);
    if products {
        // No atom in two terms (an atom repeated within one product is
        // one monomial's).
        let shared = all().enumerate().any(|(i, (m, _))| {
            all()
                .skip(i + 1)
                .any(|(o, _)| m.iter().any(|a| o.contains(a)))
        });
        if shared {
            return false;
        }
    } else if pos.iter().any(|p| neg.iter().any(|q| q.0 == p.0)) {
        return false;
    }
    // A division by a positive constant is what the sum rewrites read
    // apart; alone among the sum's divisions, of a numerator the sum does
    // not hold, and (a quotient) with no constant to merge into it or sign
    // to turn, nothing pairs, fuses or merges with it. Beside a product
    // term: not told here.
    if let Some((d, c)) = all().find(|t| t.0.len() == 1 && is_digit_atom(g, t.0[0])) {
        let (d, c) = (d[0], *c);
        let divisions = all()
            .filter(|t| t.0.len() == 1 && g.node(t.0[0]).op.is_divmod())
            .count();
        let num = g.node(d).src()[0];
        if products
            || divisions > 1
            || all().any(|t| t.0[..] == [num])
            || (g.node(d).op.is_quotient() && (c == -1 || (c == 1 && k != 0)))
        {
            return false;
        }
    }
    all().count() < 2 || all().fold(0, |a, t| gcd(a, t.1)) == 1
}

/// Whether `n` is `a * S` exactly as [`build`] builds the linear form it
/// reads as (`a*S` expanded; `x * (y + 10)`, `(y - z) * x`): `a` a
/// variable, `S` a sum [`is_built_plain`] tells, of variables and products
/// of two, every coefficient 1 or -1, a term added, `a` in none of them.
/// Then `a` is in every term of the expanded form and every other atom in
/// one, so [`build`] factors `a` out and builds the rest as `S` is, and
/// keeps it: negated, the factored sum is no smaller (its one constant is
/// one node either way, and its additions and subtractions swap, with one
/// negation more where nothing was subtracted), and `-(a * S')` has a
/// node more. `false` says nothing.
pub fn is_built_factored(g: &Graph, n: NodeId) -> bool {
    let Some([x, y]) = linear_pair(g, n, Op::Mul) else {
        return false;
    };
    let var = |t: NodeId| matches!(g.node(t).op, Op::Var(_)) && g.node(t).dtype == DType::Index;
    let (a, s) = if var(x) { (x, y) } else { (y, x) };
    if g.node(n).maybe_invalid
        || !var(a)
        || !matches!(g.node(s).op, Op::Add | Op::Sub)
        || !is_built_plain(g, s)
    {
        return false;
    }
    // The sum's leaves, each with whether it is added.
    let mut todo: SmallVec<[(NodeId, bool); 8]> = smallvec![(s, true)];
    let mut added = false;
    while let Some((t, plus)) = todo.pop() {
        let node = g.node(t);
        match node.op {
            Op::Add => todo.extend([(node.src()[0], plus), (node.src()[1], plus)]),
            Op::Sub => todo.extend([(node.src()[0], plus), (node.src()[1], !plus)]),
            Op::Const(_) => {}
            Op::Var(_) if t != a => added |= plus,
            Op::Mul if node.src().iter().all(|&f| var(f) && f != a) => added |= plus,
            _ => return false,
        }
    }
    added
}

/// The value of `x` when it is an `index` constant.
fn index_const(g: &Graph, x: Option<NodeId>) -> Option<i128> {
    let n = g.node(x?);
    (n.dtype == DType::Index)
        .then(|| n.as_const())
        .flatten()
        .map(i128::from)
}

/// The operands of `x` when it is an `index` node of `op`.
fn linear_pair(g: &Graph, x: NodeId, op: Op) -> Option<[NodeId; 2]> {
    let n = g.node(x);
    (n.op == op && n.dtype == DType::Index).then(|| [n.src()[0], n.src()[1]])
}

/// An atom no sum rewrite looks into (see [`is_built_plain`]).
fn is_plain_atom(g: &Graph, x: NodeId) -> bool {
    let n = g.node(x);
    n.dtype == DType::Index
        && !is_linear_op(n.op, n.dtype)
        && (n.op.info().division.is_none() || !by_positive_constant(g, n) || is_digit_atom(g, x))
        && !matches!(n.op, Op::Const(_) | Op::Min | Op::Max)
}

/// The monomial of a term's node as [`is_built_plain`] takes it: a plain
/// atom, or the product of two plain atoms that are no divisions (its
/// operands in the canonical order its monomial has).
fn plain_mono(g: &Graph, x: NodeId) -> Option<Mono> {
    if is_plain_atom(g, x) {
        return Some(atom(x));
    }
    let [a, b] = linear_pair(g, x, Op::Mul)?;
    plain_product(g, a, b)
}

/// The monomial of `a * b` when both are plain atoms that are no
/// divisions ([`plain_mono`]).
fn plain_product(g: &Graph, a: NodeId, b: NodeId) -> Option<Mono> {
    let factor = |t: NodeId| is_plain_atom(g, t) && g.node(t).op.info().division.is_none();
    (factor(a) && factor(b) && g.canonical_cmp(b, a) != Ordering::Less).then(|| smallvec![a, b])
}

/// A quotient or remainder of a plain atom (itself no division) by a
/// positive constant: one division, one digit split.
fn is_digit_atom(g: &Graph, x: NodeId) -> bool {
    let n = g.node(x);
    n.op.is_divmod() && by_positive_constant(g, n) && {
        let num = n.src()[0];
        !g.node(num).op.is_divmod() && is_plain_atom(g, num)
    }
}

/// A division or remainder by a positive constant: the only ones the sum
/// rewrites read apart (quotient atoms, digit splits); `y // z` or
/// `x mod -9` is an atom like any other there.
fn by_positive_constant(g: &Graph, n: &crate::ir::Node) -> bool {
    g.node(n.src()[1]).as_const().is_some_and(|d| d > 0)
}

/// A term as [`assemble`] writes it: its monomial's node `t`
/// ([`plain_mono`], coefficient 1) or `t * c` with `c` not 1 or 0.
fn plain_term(g: &Graph, x: NodeId) -> Option<(Mono, i128)> {
    // A product is told once: by a constant (`t * c`, whose constant is
    // no plain atom) or a product monomial.
    let Some([t, b]) = linear_pair(g, x, Op::Mul) else {
        return is_plain_atom(g, x).then(|| (atom(x), 1));
    };
    match index_const(g, Some(b)) {
        Some(0 | 1) => None,
        Some(c) => plain_mono(g, t).map(|m| (m, c)),
        None => plain_product(g, t, b).map(|m| (m, 1)),
    }
}

/// The positive terms of a chain of additions at `x` (each `t` or `t * c`,
/// `c >= 2`) pushed in the order [`assemble`] added them; `false` when `x`
/// is not such a chain. Addition is commutative, so hash-consing stored
/// each step's operands in canonical order: the chain is the operand that
/// is an addition, or either when both are terms (the caller checks the
/// order).
fn added_terms(g: &Graph, x: NodeId, out: &mut SmallVec<[(Mono, i128); 8]>) -> bool {
    // A chain as long as the input: its depth must not be the stack's.
    crate::deep::grow(|| added_terms_at(g, x, out))
}

fn added_terms_at(g: &Graph, x: NodeId, out: &mut SmallVec<[(Mono, i128); 8]>) -> bool {
    let positive = |x: NodeId| plain_term(g, x).filter(|t| t.1 > 0);
    if let Some(t) = positive(x) {
        out.push(t);
        return true;
    }
    let Some([a, b]) = linear_pair(g, x, Op::Add) else {
        return false;
    };
    match (positive(a), positive(b)) {
        (Some(ta), Some(tb)) => {
            let (p, q) = if mono_cmp(g, &ta.0, &tb.0) == Ordering::Less {
                (ta, tb)
            } else {
                (tb, ta)
            };
            out.push(p);
            out.push(q);
            true
        }
        (Some(t), None) if added_terms(g, b, out) => {
            out.push(t);
            true
        }
        (None, Some(t)) if added_terms(g, a, out) => {
            out.push(t);
            true
        }
        _ => false,
    }
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
    range_of(g, terms.iter().map(|(m, c)| (m, *c)), k, w)
}

/// The range of `sum c * m + k` over `terms`, by interval arithmetic.
fn range_of<'a>(
    g: &Graph,
    terms: impl Iterator<Item = (&'a Mono, i128)>,
    k: i128,
    w: Width,
) -> Option<Range> {
    let (mut lo, mut hi) = (k, k);
    for (m, c) in terms {
        let r = mono_range(g, m, w)?;
        let (p, q) = (r.lo.checked_mul(c)?, r.hi.checked_mul(c)?);
        lo = lo.checked_add(p.min(q))?;
        hi = hi.checked_add(p.max(q))?;
    }
    Some(Range::new(lo, hi))
}

/// The range of `p` with its coefficients mapped by `f` (term index,
/// coefficient) and its constant `k`: [`terms_range`] of
/// `p.map_coefs(k, f)`, without building that poly (its zero terms left
/// out alike).
pub fn mapped_range(
    g: &Graph,
    p: &Poly,
    k: i128,
    mut f: impl FnMut(usize, i128) -> i128,
    w: Width,
) -> Option<Range> {
    let terms = p.terms.iter().enumerate().map(|(i, (m, c))| (m, f(i, *c)));
    range_of(g, terms.filter(|t| t.1 != 0), k, w)
}

#[cfg(test)]
mod tests {
    use super::{build, is_built_plain, read, read_at, read_dag, tree_leaves, Acc, PRODUCT_DEPTH};
    use crate::ir::NodeId;
    use crate::text::parse::parse_program;

    #[test]
    fn a_linear_part_read_as_a_tree_is_what_the_shared_walk_reads() {
        let big = "4611686018427387904";
        let exprs = [
            "x + y - z".to_string(),
            "x * 2 + x * 3 - 7".into(),
            "x + x".into(),
            "-(x - y) + y * 3 + 1".into(),
            "x * 0 + y".into(),
            "(x - y) * 0 - z".into(),
            "(x + 1) * (y - 2) + x * y".into(),
            "(x + y) * (x - y) - x * x + 4".into(),
            "x // 4 * 4 + x mod 4 - 2".into(),
            "(x + y) * 3 + (x + y) * -3 + z".into(),
            format!("x * {big} * {big} * 4 + y"),
            format!("(x - x) * {big} * {big} * 4 + y"),
            format!("x * {big} - x * {big} + y * {big} * 2"),
            format!("(x + y) * {big} * 4 - y * {big} * 4"),
            "x + y + z + x + y + z + x + y + z + x + y + z + x + y + z + x + y + z + 1".into(),
            "max(x, y) - min(x, y) + (x + 1) // 2 * 2".into(),
        ];
        let mut text = String::from("var x in [0, 9]\nvar y in [-9, 9]\nvar z in [0, 9]\n");
        for e in &exprs {
            text.push_str(&format!("expr {e}\n"));
        }
        let g = parse_program(&text).unwrap().graph;
        let terms = |a: Option<Acc>| a.map(|a| (a.terms.into_iter().collect::<Vec<_>>(), a.k));
        let mut trees = 0;
        for i in 0..g.len() {
            let n = NodeId(i as u32);
            let inner = matches!(
                g.node(n).op,
                crate::ir::Op::Add | crate::ir::Op::Sub | crate::ir::Op::Neg
            ) || g.node(n).op == crate::ir::Op::Mul
                && g.node(n)
                    .src()
                    .iter()
                    .any(|&s| g.node(s).as_const().is_some());
            if !inner {
                continue;
            }
            trees += tree_leaves(&g, n).is_some() as usize;
            for depth in [0, PRODUCT_DEPTH] {
                assert_eq!(
                    terms(read_at(&g, n, depth)),
                    terms(read_dag(&g, n, depth, Acc::default())),
                    "{}",
                    crate::text::print::expr(&g, n)
                );
            }
        }
        assert!(trees >= 40, "{trees}");
    }

    #[test]
    fn an_atom_or_a_constant_reads_as_the_accumulator_gives_it() {
        use super::{read_leaf, read_shallow};
        let big = i64::MAX;
        let text = format!(
            "var x in [0, 9]\nvar y in [-9, 9]\nvar b in [0, 1]\n\
             expr x + y * 3 - 4 < y // 2\nexpr x * y - {big} == -{big} - 1\nexpr max(x, y) mod 3 <= b\n"
        );
        let p = parse_program(&text).unwrap();
        let g = &p.graph;
        let mut leaves = 0;
        for n in 0..g.len() {
            let n = NodeId(n as u32);
            let deep = read_at(g, n, 0).and_then(|a| a.finish(g));
            let shallow = read_at(g, n, PRODUCT_DEPTH).and_then(|a| a.finish(g));
            assert_eq!(read(g, n), deep, "{n:?}");
            assert_eq!(read_shallow(g, n), shallow, "{n:?}");
            if let Some(l) = read_leaf(g, n) {
                leaves += 1;
                assert_eq!(Some(l), deep, "{n:?}");
            }
            // A read form added to nothing and finished is itself (a chain's
            // arm of scale 1 is read once).
            if let Some(p) = deep {
                let mut a = Acc::default();
                a.add_poly(&p, 1).unwrap();
                assert_eq!(a.finish(g), Some(p), "{n:?}");
            }
        }
        assert!(leaves >= 8, "{leaves}");
    }

    #[test]
    fn adding_a_read_atom_or_constant_directly_is_adding_its_read_poly() {
        use super::{add_read, read_acc};
        let big = i64::MAX;
        let text = format!(
            "var x in [0, 9]\nvar y in [-9, 9]\nvar z in [0, 9]\nvar b in [0, 1]\n\
             expr x + y * 3 - 4 < z\nexpr x < {big}\nexpr -{big} - 1 + x < -{big} - 1\n\
             expr x * y + 2 == y // 3\nexpr z mod 4 - x != 7\nexpr max(x, y) <= x - 1\n\
             expr (x + {big}) * 2 < x\nexpr b < x\nexpr x * 3 - y <= x * y\n"
        );
        let p = parse_program(&text).unwrap();
        let g = &p.graph;
        let mut direct = 0;
        for a in 0..g.len() {
            let a = NodeId(a as u32);
            let Some(base) = read_acc(g, a) else {
                continue;
            };
            for b in 0..g.len() {
                let b = NodeId(b as u32);
                for c in [-1, 1, 0, 3, -7, i128::MAX, i128::MIN] {
                    let (mut x, mut y) = (base.clone(), base.clone());
                    let full = read(g, b).and_then(|rb| x.add_poly(&rb, c));
                    let short = add_read(g, &mut y, b, c);
                    assert_eq!(full, short, "{a:?} + {b:?} * {c}");
                    if full.is_some() {
                        let terms = |t: &Acc| {
                            t.terms
                                .iter()
                                .map(|(m, c)| (m.clone(), *c))
                                .collect::<Vec<_>>()
                        };
                        assert_eq!((terms(&x), x.k), (terms(&y), y.k), "{a:?} + {b:?} * {c}");
                        direct += usize::from(g.node(b).src().is_empty());
                    }
                }
            }
        }
        assert!(direct >= 100, "{direct}");
    }

    /// Every node of `src`'s graph that is recognized as built is what
    /// building its linear form gives; the outputs' recognition returned.
    fn recognized(src: &str) -> Vec<bool> {
        let text = format!("var x in [0, 9]\nvar y in [-9, 9]\nvar z in [0, 9]\n{src}");
        let mut p = parse_program(&text).unwrap();
        let g = &mut p.graph;
        for i in 0..g.len() {
            let n = NodeId(i as u32);
            if is_built_plain(g, n) {
                let f = read(g, n).unwrap();
                assert_eq!(build(g, &f), Some(n), "node {i} of {src}");
            }
        }
        p.outputs
            .iter()
            .map(|&o| is_built_plain(&p.graph, o))
            .collect()
    }

    #[test]
    fn a_sum_in_its_built_shape_is_recognized_without_building() {
        let built = "expr x + 3\nexpr x - y\nexpr x * 2 - y * 3 + 5\nexpr -x\nexpr x * -2\nexpr 5 - x - z\nexpr -x - z\nexpr x + y + z + 7";
        assert_eq!(recognized(built), vec![true; 8]);
    }

    #[test]
    fn a_division_by_a_non_constant_is_an_atom_of_a_built_sum() {
        // The sum rewrites read apart only divisions by positive constants.
        let built = "expr y // z + x\nexpr x - y mod z\nexpr y / z + 1\nexpr x mod -9 * 2 + y";
        assert_eq!(recognized(built), vec![true; 4]);
    }

    #[test]
    fn one_division_by_a_constant_with_nothing_to_merge_with_is_an_atom_of_a_built_sum() {
        let built = "expr y mod 4 + 1\nexpr x // 4 * 4\nexpr 3 - y mod 4\nexpr x // 3 + y";
        assert_eq!(recognized(built), vec![true; 4]);
        // A constant to merge into the quotient, a negated quotient, two
        // divisions, the numerator beside its remainder, a sum numerator.
        let changed = "expr x // 2 + 1\nexpr y - x // 2\nexpr x mod 4 + x // 4\nexpr x - x mod 4\nexpr (x + 1) mod 4 + y";
        assert_eq!(recognized(changed), vec![false; 5]);
    }

    #[test]
    fn a_sum_of_products_of_two_plain_atoms_in_its_built_shape_is_recognized() {
        let built = "expr x * y\nexpr x * x * 3\nexpr x * y + z\nexpr z - x * y * 2\nexpr -(x * y)\nexpr x * y * -2 - z\nexpr x * y + 4\nexpr y // 2 * x + z";
        assert_eq!(
            recognized(built),
            vec![true, true, true, true, true, true, true, false]
        );
        // An atom in two terms (factored out), a product of three, a
        // product beside a digit atom, a common factor.
        let changed = "expr x * y + x\nexpr x * y * z\nexpr x * y + z // 4\nexpr x * y * 2 + z * 4\nexpr x * y - y * z";
        assert_eq!(recognized(changed), vec![false; 5]);
    }

    #[test]
    fn a_sum_building_would_change_is_not_recognized() {
        let changed = "expr 3 + x + 1\nexpr x + x\nexpr x * 2 + y * 4\nexpr x - x\nexpr x * 1\nexpr x - 3\nexpr x // 2 + 1\nexpr (x + y) * 2\nexpr x * -1\nexpr y - x + z - 4";
        assert_eq!(recognized(changed), vec![false; 10]);
    }
}
