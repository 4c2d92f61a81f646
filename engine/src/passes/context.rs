//! Context substitution: a condition used inside what it guards.
//!
//! - In an `&&` chain each operand holds wherever the chain does, so inside
//!   the other operands it is `true`: an identical node becomes `true`, its
//!   negation `false` (`b0 && (b0 && b1) -> b0 && b1`, `x < y && (y <= x ||
//!   b) -> x < y && b`). Dually in an `||` chain an operand is `false`
//!   inside the others (`b0 || (b0 || b1) -> b0 || b1`).
//! - In `where(c, t, f)` (any dtype, any `f`), `c` and each conjunct of `c`
//!   are `true` inside `t`; `c` and each disjunct of `c` are `false` inside
//!   `f` (`where(x < y, z, where(x < y, w, x) + 3) -> where(x < y, z, x +
//!   3)`).
//!
//! - An equality with a constant that holds in an arm pins what it
//!   compares: inside that arm the node is the constant (`where(x == 17,
//!   x + y, y) -> where(x == 17, y + 17, y)`), and an arm that the
//!   substitution turns into the other arm makes the `where` that arm
//!   (`where(x == 17, 17, x) -> x`).
//! - `max(a, where(c, t, a)) -> where(c, max(a, t), a)` (and `min`), so
//!   that the condition reaches `a` (`max(x, where(x == 17, 1, x)) -> x`).
//!
//! An atom is matched up to negation and the complement of a comparison:
//! `!a` is the negation of `a`, `y <= x` of `x < y`, `x != y` of `x == y`
//! (and `y == x` is `x == y`). After a substitution the rebuilt parents
//! fold constant `!`, `&&`, `||` and `where` conditions.
//!
//! **Lemma** (why this refines, docs/semantics.md). Let `a` be a bool node
//! that is never unconstrained (bools are never invalid), so at every
//! point it is a value. Let `e'` be `e` with `a` replaced by `v` (and its
//! negation by `!v`) and constants folded. At every point where `a` is `v`,
//! `e'` refines `e`: replacing a node by its own value changes nothing, and
//! folding `false && u -> false` (and its kin) only fixes what is
//! unconstrained or drops operands. Hence:
//!
//! - `where(c, t, f)` with `c` never unconstrained: where `c` holds both
//!   select `t`, and `t'` refines `t` there (every conjunct of `c` is true
//!   there); where it fails, both select `f` and `f'` refines `f`.
//! - an `&&` chain never unconstrained: the operands are rewritten one at a
//!   time, each under the others as they are by then. Where the others
//!   hold, `p'` refines `p`, which is then a value, so both chains are that
//!   value. Where one of them is false, both chains are false, provided
//!   `p'` is a value there too: `p'` is built from subterms of `p` and
//!   constants, and it is checked never unconstrained. Dually for `||`.
//!
//! What is left is definedness: undefinedness is whole-evaluation, and the
//! hardware evaluates an arm (or operand) also where the context does not
//! hold. Removed nodes only make the target more defined; a rebuilt parent
//! (`x + 3` out of `where(..) + 3`) is new, and [`fits_new`] checks every
//! new node against the *global* ranges. An arm that may be unconstrained
//! is left alone: `fits_new` judges ranges only, and a new `u + 3` of an
//! unconstrained `u` would overflow.
//!
//! **Cost.** Each substitution walks at most [`BUDGET`] nodes and gives up
//! beyond; the facts of a chain are counted once, so that an operand is
//! looked up "under the others" without rebuilding the others' facts.
//! Nothing recurses on depth. Algorithmic: every firing is recorded under
//! [`RULES`] and validated by the gate.

use crate::algebra::defined::fits_new;
use crate::ir::dtype::Width;
use crate::ir::{DType, Graph, NodeId, Op};
use rustc_hash::{FxHashMap, FxHashSet};

/// The sub-rule names, in the order [`rewrite`] returns indices into.
pub const RULES: [&str; 6] = [
    "context_and",
    "context_or",
    "context_where",
    "context_where_same_arms",
    "context_minmax_where",
    "context_where_swap",
];

const AND: usize = 0;
const OR: usize = 1;
const WHERE: usize = 2;
const SAME_ARMS: usize = 3;
const MINMAX: usize = 4;
const SWAP: usize = 5;

/// How many nodes one substitution may visit before it gives up.
const BUDGET: usize = 256;

/// How many conjuncts (disjuncts) of a `where` condition are used as facts.
const MAX_FACTS: usize = 64;

/// How many `!` are looked through to find an atom.
const MAX_NOTS: usize = 4;

/// A bool node up to negation: a node, or a comparison read as `a < b` or
/// `a == b` (operands ordered by id).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Atom {
    Node(NodeId),
    Lt(NodeId, NodeId),
    Eq(NodeId, NodeId),
}

/// `n` as (atom, polarity): `n` is the atom when the polarity is true, its
/// negation otherwise.
fn atom(g: &Graph, mut n: NodeId) -> (Atom, bool) {
    let mut pol = true;
    for _ in 0..MAX_NOTS {
        let node = g.node(n);
        if node.op != Op::Not {
            break;
        }
        pol = !pol;
        n = node.src()[0];
    }
    let node = g.node(n);
    match node.op {
        Op::Lt | Op::Le | Op::Eq | Op::Ne => {
            let (a, b) = (node.src()[0], node.src()[1]);
            match node.op {
                Op::Lt => (Atom::Lt(a, b), pol),
                // a <= b is !(b < a).
                Op::Le => (Atom::Lt(b, a), !pol),
                Op::Eq => (Atom::Eq(a.min(b), a.max(b)), pol),
                _ => (Atom::Eq(a.min(b), a.max(b)), !pol),
            }
        }
        _ => (Atom::Node(n), pol),
    }
}

/// Facts about atoms, counted per value so that one operand's own fact can
/// be set aside (its value "under the others").
#[derive(Default)]
struct Known {
    counts: FxHashMap<Atom, [u32; 2]>,
    /// Nodes pinned to a constant (`x == 17` holds, or `x != 17` fails).
    values: FxHashMap<NodeId, i64>,
}

impl Known {
    /// Records that node `n` is `v`.
    fn add(&mut self, g: &Graph, n: NodeId, v: bool) {
        let (a, pol) = atom(g, n);
        self.counts.entry(a).or_default()[(v == pol) as usize] += 1;
    }

    /// Also records the value an equality that is `v` pins (`x == 17`
    /// true, `x != 17` false): the compared node is then that constant.
    fn add_value(&mut self, g: &Graph, n: NodeId, v: bool) {
        let (a, pol) = atom(g, n);
        if let Atom::Eq(l, r) = a {
            if v == pol {
                let (ln, rn) = (g.node(l), g.node(r));
                match (ln.as_const(), rn.as_const()) {
                    (None, Some(k)) => self.values.insert(l, k),
                    (Some(k), None) => self.values.insert(r, k),
                    _ => None,
                };
            }
        }
    }

    fn remove(&mut self, g: &Graph, n: NodeId, v: bool) {
        let (a, pol) = atom(g, n);
        if let Some(c) = self.counts.get_mut(&a) {
            c[(v == pol) as usize] -= 1;
        }
    }

    /// The value of atom `a` by the facts but `own` (an atom and the value
    /// its own fact gives it); `None` when unknown or contradictory.
    fn value(&self, a: Atom, own: Option<(Atom, bool)>) -> Option<bool> {
        let mut c = *self.counts.get(&a)?;
        if let Some((oa, ov)) = own {
            if oa == a {
                c[ov as usize] -= 1;
            }
        }
        match (c[0] > 0, c[1] > 0) {
            (true, false) => Some(false),
            (false, true) => Some(true),
            _ => None,
        }
    }

    /// The value of bool node `n` by the facts but `own`.
    fn node_value(&self, g: &Graph, n: NodeId, own: Option<(Atom, bool)>) -> Option<bool> {
        if g.node(n).dtype != DType::Bool || matches!(g.node(n).op, Op::Const(_)) {
            return None;
        }
        let (a, pol) = atom(g, n);
        self.value(a, own).map(|v| v == pol)
    }
}

/// Tries the context substitutions at `n`: an `&&`/`||` chain root
/// (`root`) or a `where`.
pub fn rewrite(g: &mut Graph, n: NodeId, root: bool, w: Width) -> Option<(usize, NodeId)> {
    match g.node(n).op {
        Op::And | Op::Or if root => chain(g, n, w),
        Op::Where => select(g, n, w).or_else(|| swap(g, n)),
        Op::Min | Op::Max => minmax(g, n),
        _ => None,
    }
}

/// Each operand of an `&&` (`||`) chain under the others: true (false)
/// inside them.
fn chain(g: &mut Graph, n: NodeId, w: Width) -> Option<(usize, NodeId)> {
    let node = *g.node(n);
    if node.maybe_unconstrained || node.maybe_invalid {
        return None;
    }
    let is_and = node.op == Op::And;
    let (parts, _) = g.chain_operands(n, node.op, usize::MAX);
    let mut known = Known::default();
    for &p in &parts {
        known.add(g, p, is_and);
    }
    let mut out: Vec<Option<NodeId>> = parts.iter().map(|&p| Some(p)).collect();
    let mut changed = false;
    for slot in out.iter_mut() {
        let p = slot.expect("every operand is present until it is visited");
        let (a, pol) = atom(g, p);
        let own = Some((a, is_and == pol));
        let Some(np) = subst(g, p, &known, own) else {
            continue;
        };
        if np == p || g.node(np).maybe_unconstrained || g.node(np).maybe_invalid {
            continue;
        }
        changed = true;
        known.remove(g, p, is_and);
        match g.node(np).as_const() {
            // The identity drops out; the absorbing value decides the chain.
            Some(c) if (c != 0) == is_and => *slot = None,
            Some(_) => return Some((if is_and { AND } else { OR }, np)),
            None => {
                known.add(g, np, is_and);
                *slot = Some(np);
            }
        }
    }
    if !changed {
        return None;
    }
    let mut kept = out.into_iter().flatten();
    let first = kept.next()?;
    let result = kept.fold(first, |acc, p| g.mk(node.op, &[acc, p]));
    if result == n || !fits_new(g, n, result, w) {
        return None;
    }
    Some((if is_and { AND } else { OR }, result))
}

/// `where(c, t, f)`: `c` true inside `t`, false inside `f`.
fn select(g: &mut Graph, n: NodeId, w: Width) -> Option<(usize, NodeId)> {
    let node = *g.node(n);
    let (c, t, f) = (node.src()[0], node.src()[1], node.src()[2]);
    let cn = *g.node(c);
    if cn.maybe_unconstrained || cn.maybe_invalid {
        return None;
    }
    let facts = |g: &Graph, v: bool, chain_op: Op| -> Known {
        let mut known = Known::default();
        known.add(g, c, v);
        known.add_value(g, c, v);
        if cn.op == chain_op {
            // A prefix of the chain is still a set of true facts.
            for p in g.chain_operands(c, chain_op, MAX_FACTS).0 {
                known.add(g, p, v);
                known.add_value(g, p, v);
            }
        }
        known
    };
    let (kt, kf) = (facts(g, true, Op::And), facts(g, false, Op::Or));
    let arm = |g: &mut Graph, e: NodeId, known: &Known| -> NodeId {
        let en = g.node(e);
        if en.maybe_unconstrained || matches!(en.op, Op::Const(_) | Op::Invalid) {
            return e;
        }
        subst(g, e, known, None).unwrap_or(e)
    };
    // One arm is the other under the condition: where that arm is
    // selected the other has its value, so the other is the whole (the
    // other must not be unconstrained: the substitution only refines it).
    for (keep, other, known) in [(f, t, &kt), (t, f, &kf)] {
        if !g.node(keep).maybe_unconstrained && arm(g, keep, known) == other && keep != other {
            return Some((SAME_ARMS, keep));
        }
    }
    let nt = arm(g, t, &kt);
    let nf = arm(g, f, &kf);
    if nt == t && nf == f {
        return None;
    }
    let result = g.mk(Op::Where, &[c, nt, nf]);
    if result == n || !fits_new(g, n, result, w) {
        return None;
    }
    Some((WHERE, result))
}

/// `where(c, where(d, a, b), where(d, e, f))` is `where(d, where(c, a, e),
/// where(c, b, f))` (both select by the pair of conditions, never invalid
/// nor unconstrained; a `where` is always defined), done where the new
/// inner pairs share their head, so that the declarative `where_factor_*`
/// rules take it out (Halide's `select(c, x / y, z / y)` after its signed
/// division was expanded), and the old pairs do not, so that it never
/// swaps back.
fn swap(g: &mut Graph, n: NodeId) -> Option<(usize, NodeId)> {
    let node = *g.node(n);
    let (c, t, f) = (node.src()[0], node.src()[1], node.src()[2]);
    let (tn, fnode) = (*g.node(t), *g.node(f));
    if tn.op != Op::Where || fnode.op != Op::Where || tn.src()[0] != fnode.src()[0] {
        return None;
    }
    let d = tn.src()[0];
    let clean = |x: NodeId| {
        let xn = g.node(x);
        !xn.maybe_invalid && !xn.maybe_unconstrained
    };
    if c == d || !clean(c) || !clean(d) {
        return None;
    }
    let (a, b, e, h) = (tn.src()[1], tn.src()[2], fnode.src()[1], fnode.src()[2]);
    let shared = |p: NodeId, q: NodeId| {
        let (pn, qn) = (g.node(p), g.node(q));
        if pn.op != qn.op {
            return false;
        }
        let (ps, qs) = (pn.src(), qn.src());
        match pn.op {
            Op::Neg => true,
            Op::Add | Op::Mul | Op::Sub => ps[0] == qs[0] || ps[1] == qs[1],
            Op::Mod | Op::FloorDiv => ps[1] == qs[1],
            _ => false,
        }
    };
    if !(shared(a, e) && shared(b, h)) || (shared(a, b) && shared(e, h)) {
        return None;
    }
    let ae = g.mk(Op::Where, &[c, a, e]);
    let bh = g.mk(Op::Where, &[c, b, h]);
    Some((SWAP, g.mk(Op::Where, &[d, ae, bh])))
}

/// `root` with every bool node whose value `known` gives (but `own`)
/// replaced by it, constants folded upwards. `None` when the walk would
/// visit more than [`BUDGET`] nodes. Iterative: no recursion on depth.
fn subst(g: &mut Graph, root: NodeId, known: &Known, own: Option<(Atom, bool)>) -> Option<NodeId> {
    if known.counts.is_empty() && known.values.is_empty() {
        return None;
    }
    // Post-order over the nodes not replaced outright.
    let mut order: Vec<(NodeId, Option<Fixed>)> = Vec::new();
    let mut seen: FxHashSet<NodeId> = FxHashSet::default();
    let mut stack = vec![(root, false)];
    while let Some((id, ready)) = stack.pop() {
        if ready {
            order.push((id, None));
            continue;
        }
        if !seen.insert(id) {
            continue;
        }
        if seen.len() > BUDGET {
            return None;
        }
        if let Some(v) = known.node_value(g, id, own) {
            order.push((id, Some(Fixed::Bool(v))));
            continue;
        }
        if let Some(&k) = known.values.get(&id) {
            order.push((id, Some(Fixed::Int(k))));
            continue;
        }
        stack.push((id, true));
        stack.extend(g.node(id).src().iter().rev().map(|&s| (s, false)));
    }
    let mut new: FxHashMap<NodeId, NodeId> = FxHashMap::default();
    for (id, v) in order {
        let out = match v {
            Some(Fixed::Bool(v)) => g.bool_const(v),
            Some(Fixed::Int(k)) => {
                let dtype = g.node(id).dtype;
                g.cnst(k, dtype)
            }
            None => {
                let node = *g.node(id);
                let src: Vec<NodeId> = node.src().iter().map(|s| new[s]).collect();
                if src.as_slice() == node.src() {
                    id
                } else {
                    fold(g, id, &src)
                }
            }
        };
        new.insert(id, out);
    }
    Some(new[&root])
}

/// What a node is replaced by.
#[derive(Clone, Copy)]
enum Fixed {
    Bool(bool),
    Int(i64),
}

/// `min(a, where(c, t, a)) -> where(c, min(a, t), a)` (and with the arms
/// or operands swapped, and for `max`): where `c` holds both are `min(a,
/// t)`, where it fails both are `min(a, a)`, which is `a` (invalid or
/// unconstrained with it). `c` must not be unconstrained (the source would
/// be invalid where `a` is, the target unconstrained). No node is added,
/// and `min`/`max` are never undefined; inside the arm the condition then
/// pins what it compares (`where(x == 17, max(x, 1), x)` becomes
/// `where(x == 17, 17, x)`, then `x`).
fn minmax(g: &mut Graph, n: NodeId) -> Option<(usize, NodeId)> {
    let node = *g.node(n);
    for (a, b) in [
        (node.src()[0], node.src()[1]),
        (node.src()[1], node.src()[0]),
    ] {
        let bn = *g.node(b);
        if bn.op != Op::Where {
            continue;
        }
        let (c, t, f) = (bn.src()[0], bn.src()[1], bn.src()[2]);
        let cn = g.node(c);
        if cn.maybe_unconstrained || cn.maybe_invalid {
            continue;
        }
        let out = if f == a {
            let m = g.mk(node.op, &[a, t]);
            g.mk(Op::Where, &[c, m, a])
        } else if t == a {
            let m = g.mk(node.op, &[a, f]);
            g.mk(Op::Where, &[c, a, m])
        } else {
            continue;
        };
        return Some((MINMAX, out));
    }
    None
}

/// Node `id` over new operands `src`, with a constant `!`, `&&`, `||`
/// operand or `where` condition folded.
fn fold(g: &mut Graph, id: NodeId, src: &[NodeId]) -> NodeId {
    let k = |g: &Graph, s: NodeId| g.node(s).as_const().map(|c| c != 0);
    match g.node(id).op {
        Op::Not => {
            if let Some(c) = k(g, src[0]) {
                return g.bool_const(!c);
            }
        }
        op @ (Op::And | Op::Or) => {
            // The absorbing value of the op, and its identity.
            let absorbing = op == Op::Or;
            for i in 0..2 {
                match k(g, src[i]) {
                    Some(c) if c == absorbing => return g.bool_const(absorbing),
                    Some(_) => return src[1 - i],
                    None => {}
                }
            }
        }
        Op::Where => {
            if let Some(c) = k(g, src[0]) {
                return if c { src[1] } else { src[2] };
            }
        }
        // A pinned operand meeting a constant (`max(-1, 6)` once `x == -1`
        // is known) folds, so that the arms can compare equal.
        op @ (Op::Min | Op::Max) => {
            let (a, b) = (g.node(src[0]).as_const(), g.node(src[1]).as_const());
            if let (Some(a), Some(b)) = (a, b) {
                let v = if op == Op::Min { a.min(b) } else { a.max(b) };
                let dtype = g.node(id).dtype;
                return g.cnst(v, dtype);
            }
        }
        _ => {}
    }
    g.with_src(id, src)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::simp;

    const B: &str = "var b0: bool\nvar b1: bool\nvar b2: bool";
    const XY: &str = "var x in [-8, 8]\nvar y in [-8, 8]\nvar z in [-8, 8]\nvar w in [-8, 8]\nvar b1: bool\nvar b2: bool";

    #[test]
    fn a_conjunct_is_true_inside_the_other_conjuncts() {
        assert_eq!(simp(B, "b0 && (b0 && b1)"), "b0 && b1");
        assert_eq!(simp(B, "b1 && b2 && !(b1 ^ true)"), "b1 && b2");
        assert_eq!(simp(XY, "x < y && (x < y || b2 || b1)"), "x < y");
    }

    #[test]
    fn an_arm_that_is_the_other_once_the_pinned_value_folds_is_the_whole() {
        assert_eq!(simp(XY, "max(where(x == -1, 1, x), 6)"), "max(x, 6)");
        assert_eq!(simp(XY, "min(where(x == 1, -1, x), -6)"), "min(x, -6)");
        // max(-1, 0) is 0, not 1: the arms differ and the where stays.
        assert_ne!(simp(XY, "max(where(x == -1, 1, x), 0)"), "max(x, 0)");
    }

    #[test]
    fn the_complement_of_a_conjunct_is_false_inside_the_others() {
        let out = simp(XY, "x < y && (y <= x || b2 || b1)");
        assert!(!out.contains("y <= x") && out.contains("b1"), "{out}");
        let out = simp(XY, "x == y && (x != y || b2 || b1)");
        assert!(!out.contains("!="), "{out}");
        assert_eq!(simp(B, "b0 && !b0"), "false");
    }

    #[test]
    fn a_disjunct_is_false_inside_the_other_disjuncts() {
        assert_eq!(simp(B, "b0 || (b0 || b1)"), "b0 || b1");
        assert_eq!(
            simp(B, "b0 || (b0 && b1 || b2 && b1) && (b0 || b2) || b2"),
            "b0 || b2"
        );
    }

    #[test]
    fn a_where_condition_is_known_in_each_arm() {
        assert_eq!(
            simp(XY, "where(x < y, z, where(x < y, w, x) + 3)"),
            "where(x < y, z, x + 3)"
        );
        assert_eq!(
            simp(XY, "where(x < y, where(x < y, w, x) + 3, z)"),
            "where(x < y, w + 3, z)"
        );
        assert_eq!(
            simp(XY, "where(x < y, z, where(y <= x, x, w) // 2)"),
            "where(x < y, z, x // 2)"
        );
        // Each conjunct of the condition holds in the true arm.
        assert_eq!(
            simp(XY, "where(x < y && b1, where(b1, z, w), x)"),
            "where(x < y && b1, z, x)"
        );
    }

    #[test]
    fn a_new_node_must_be_defined_where_the_context_fails() {
        use crate::ir::dtype::Width;
        use crate::text::parse::parse_program;
        // In the false arm w + 1 replaces where(x < y, x, w) + 1; at w = MAX
        // (where x < y selects x) w + 1 would overflow: left alone.
        let src = "var x in [0, 3]\nvar y in [0, 3]\nvar w in [0, 9223372036854775807]\nexpr where(x < y, 0, where(x < y, x, w) + 1)\n";
        let mut p = parse_program(src).unwrap();
        assert_eq!(rewrite(&mut p.graph, p.outputs[0], true, Width::W64), None);
    }

    #[test]
    fn a_condition_that_may_be_unconstrained_is_not_a_fact() {
        use crate::ir::dtype::Width;
        use crate::text::parse::parse_program;
        let src = "var x in [0, 3]\nvar y in [0, 3]\nexpr where(where(y < 2, x, invalid) < 1, 5, where(where(y < 2, x, invalid) < 1, 6, 7))\n";
        let mut p = parse_program(src).unwrap();
        assert_eq!(rewrite(&mut p.graph, p.outputs[0], true, Width::W64), None);
    }

    #[test]
    fn an_equality_condition_pins_its_operand_in_the_arm() {
        let v = "var x in [-20, 20]\nvar y in [-20, 20]";
        assert_eq!(
            simp(v, "where(x == 17, x + y, y)"),
            "where(x == 17, y + 17, y)"
        );
        // The arm that is the other under the condition is the whole.
        assert_eq!(simp(v, "where(x == 17, 17, x)"), "x");
        assert_eq!(simp(v, "where(x != 3, x, 3)"), "x");
    }

    #[test]
    fn min_or_max_with_a_where_that_keeps_its_operand_moves_into_the_arm() {
        let v = "var x in [-20, 20]";
        assert_eq!(simp(v, "max(x, where(x == 17, 1, x))"), "x");
        assert_eq!(simp(v, "min(x, where(x == -17, -1, x))"), "x");
        assert_eq!(
            simp(v, "max(x, where(x == -1, 1, x))"),
            "where(x == -1, 1, x)"
        );
    }
}
