//! Variants: programs a campaign derives from each generated case and
//! checks as well, aimed at the two places where rule guards matter most
//! and the generators rarely go.
//!
//! Measured on 4,000 cases of each generator (seed 1, built-in rules):
//! tiled cases never have a variable below zero, so a truncating rule
//! whose sign guard is too weak (`(a*C + b) % N => b % N` guarded by
//! `vmin(b) >= 0` alone) fires hundreds of times a minute and is never
//! wrong on them; and after simplification, maybe-invalid values that are
//! not a plain `where(c, x, invalid)` gate occur in 8% of expression cases
//! but almost never under an operation that discards its operand, so
//! `x * 0 => 0` without `valid(x)` goes unnoticed. Hence two variants:
//!
//! - [`Variant::Signed`]: the case with some variables' ranges shifted to
//!   straddle zero (`[0, 7]` becomes `[-4, 3]`): negative numerators for
//!   the truncating division family, as padding offsets and flips produce.
//! - [`Variant::Extremes`]: constants and variable ranges drawn from the
//!   pool of the subject's width: its MIN, MAX and their neighbours, 0, ±1,
//!   powers of two and their neighbours, tile sizes; ranges crossing zero,
//!   starting at MIN, ending at MAX, or the whole dtype. Rewrites that
//!   negate, subtract or compare with a constant go wrong there, and the
//!   generators seldom go there.
//! - [`Variant::Discard`]: the *simplified* form with one subterm `t` put in
//!   a context that a rule can discard it from (`t * 0`, `t % 1`, `0 // t`,
//!   `t - t`, `t && false`, ...), preferring subterms that may be invalid
//!   and are not a plain gate: exactly where docs/semantics.md's `x * 0` example
//!   applies.
//!
//! A variant is just another program: the oracle compares it with its own
//! simplification, so it need not be equivalent to the case it came from.
//! Choices are drawn from the case's seed, so variants are as reproducible
//! as cases; the corpus stores their text like any other finding.

pub use crate::rng::Rng;
use engine::ir::{DType, Graph, NodeId, Op, VarDecl};
use std::fmt;

/// The kinds of derived program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    Signed,
    Discard,
    Extremes,
}

impl Variant {
    pub const ALL: [Variant; 3] = [Variant::Signed, Variant::Discard, Variant::Extremes];

    pub fn name(self) -> &'static str {
        match self {
            Variant::Signed => "signed",
            Variant::Discard => "discard",
            Variant::Extremes => "extremes",
        }
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Rebuilds the part of `g` reachable from `roots` in a fresh graph, with
/// variable bounds from `bounds` (ranges are recomputed) and each rebuilt
/// node passed through `wrap(graph, old id, new id)`. `None` when a bound
/// is empty or out of its dtype, or a node no longer type-checks.
pub fn rebuild(
    g: &Graph,
    roots: &[NodeId],
    bounds: impl Fn(u32, &VarDecl) -> (i64, i64),
    mut wrap: impl FnMut(&mut Graph, NodeId, NodeId) -> Option<NodeId>,
) -> Option<(Graph, Vec<NodeId>)> {
    let mut out = Graph::new();
    for (v, d) in g.vars().iter().enumerate() {
        let (lo, hi) = bounds(v as u32, d);
        out.declare_var(&d.name, d.dtype, lo, hi).ok()?;
    }
    let mut map = vec![NodeId::NONE; g.len()];
    for id in g.reachable(roots) {
        let n = g.node(id);
        let new = match n.op {
            Op::Const(c) if n.dtype == DType::Bool => out.bool_const(c != 0),
            Op::Const(c) => out.cnst(c, n.dtype),
            Op::Var(v) => out.var_node(v),
            Op::Invalid => out.invalid(),
            op => {
                let src: Vec<NodeId> = n.src().iter().map(|s| map[s.index()]).collect();
                let cast_to = (op == Op::Cast).then_some(n.dtype);
                out.try_mk(op, cast_to, &src).ok()?
            }
        };
        map[id.index()] = wrap(&mut out, id, new)?;
    }
    let roots = roots.iter().map(|r| map[r.index()]).collect();
    Some((out, roots))
}

/// The pool of constants at `width`: the extremes and their neighbours, 0,
/// ±1, ±2, a few powers of two (and their neighbours, and negated), tile
/// sizes.
pub fn constant_pool(width: engine::dtype::Width, rng: &mut Rng) -> Vec<i64> {
    let (min, max) = (width.min() as i64, width.max() as i64);
    let mut pool = vec![
        min,
        min + 1,
        min + 2,
        max - 2,
        max - 1,
        max,
        0,
        1,
        -1,
        2,
        -2,
    ];
    pool.extend([3, 4, 8, 16, 32, 64, 128, 256]);
    for _ in 0..4 {
        let p = 1i64 << (1 + rng.below(width.0 as usize - 2));
        pool.extend([p - 1, p, p + 1, -p]);
    }
    pool
}

/// The case with one or two of its `index` constants replaced from the
/// [`constant_pool`] of `width`, or one of its `index` variables given an
/// extreme range (crossing zero, starting at MIN, ending at MAX, or the
/// whole dtype), or both. `None` when it has neither constants nor
/// variables.
pub fn extremes(
    g: &Graph,
    roots: &[NodeId],
    rng: &mut Rng,
    width: engine::dtype::Width,
) -> Option<(Graph, Vec<NodeId>)> {
    let nodes = g.reachable(roots);
    let consts: Vec<NodeId> = nodes
        .iter()
        .copied()
        .filter(|&id| g.node(id).dtype == DType::Index && matches!(g.node(id).op, Op::Const(_)))
        .collect();
    let vars: Vec<u32> = g
        .reachable_vars(roots)
        .into_iter()
        .filter(|&v| g.var(v).dtype == DType::Index)
        .collect();
    if consts.is_empty() && vars.is_empty() {
        return None;
    }
    let pool = constant_pool(width, rng);
    let mut replaced: Vec<(NodeId, i64)> = Vec::new();
    let what = rng.below(3);
    if !consts.is_empty() && (what != 1 || vars.is_empty()) {
        for _ in 0..1 + rng.below(2) {
            replaced.push((consts[rng.below(consts.len())], pool[rng.below(pool.len())]));
        }
    }
    let mut ranged: Option<(u32, i64, i64)> = None;
    if !vars.is_empty() && (what != 0 || consts.is_empty()) {
        let v = vars[rng.below(vars.len())];
        let d = g.var(v);
        let (min, max) = (width.min() as i64, width.max() as i64);
        let span = (d.hi as i128 - d.lo as i128).clamp(0, 1 << 20) as i64;
        ranged = Some(match rng.below(4) {
            0 => (v, -(span / 2) - 1, span / 2 + 1),
            1 => (v, min, min + span),
            2 => (v, max - span, max),
            _ => (v, min, max),
        });
    }
    rebuild(
        g,
        roots,
        |v, d| match ranged {
            Some((u, lo, hi)) if u == v => (lo, hi),
            _ => (d.lo, d.hi),
        },
        |out, old, new| {
            Some(match replaced.iter().find(|(id, _)| *id == old) {
                Some(&(_, c)) => out.cnst(c, DType::Index),
                None => new,
            })
        },
    )
}

/// The case with a random nonempty subset of its integer variables that
/// never go below zero shifted to straddle zero. `None` when there is no
/// such variable.
pub fn signed(g: &Graph, roots: &[NodeId], rng: &mut Rng) -> Option<(Graph, Vec<NodeId>)> {
    let used: Vec<u32> = g
        .reachable(roots)
        .into_iter()
        .filter_map(|id| match g.node(id).op {
            Op::Var(v) if g.var(v).dtype != DType::Bool && g.var(v).lo >= 0 => Some(v),
            _ => None,
        })
        .collect();
    if used.is_empty() {
        return None;
    }
    let mut pick: Vec<bool> = used.iter().map(|_| rng.coin()).collect();
    if !pick.contains(&true) {
        pick[rng.below(used.len())] = true;
    }
    let shift = |v: u32, d: &VarDecl| -> (i64, i64) {
        match used.iter().position(|&u| u == v) {
            Some(i) if pick[i] => {
                // [lo, hi] -> the same span with its middle at zero.
                let s = d.lo as i128 + (d.hi as i128 - d.lo as i128 + 1) / 2;
                ((d.lo as i128 - s) as i64, (d.hi as i128 - s) as i64)
            }
            _ => (d.lo, d.hi),
        }
    };
    rebuild(g, roots, shift, |_, _, new| Some(new))
}

/// `t` is a maybe-invalid integer value that is not simply a gate
/// `where(c, x, invalid)` (nor `invalid` itself): the gate-pushing rules
/// cannot move its masking out of the way.
fn tangled(g: &Graph, id: NodeId) -> bool {
    let n = g.node(id);
    n.dtype.is_int()
        && n.maybe_invalid
        && n.op != Op::Invalid
        && !(n.op == Op::Where && g.node(n.src()[2]).op == Op::Invalid)
}

/// `roots` (a simplified form) with one subterm put in a context a rule may
/// discard it from. `None` when there is no subterm to choose.
pub fn discard(g: &Graph, roots: &[NodeId], rng: &mut Rng) -> Option<(Graph, Vec<NodeId>)> {
    let all: Vec<NodeId> = g
        .reachable(roots)
        .into_iter()
        .filter(|&id| !matches!(g.node(id).op, Op::Const(_) | Op::Invalid))
        .collect();
    if all.is_empty() {
        return None;
    }
    let tangled_nodes: Vec<NodeId> = all.iter().copied().filter(|&id| tangled(g, id)).collect();
    let target = if !tangled_nodes.is_empty() && rng.coin() {
        tangled_nodes[rng.below(tangled_nodes.len())]
    } else {
        all[rng.below(all.len())]
    };
    let dtype = g.node(target).dtype;
    let ctx = if dtype == DType::Bool {
        rng.below(BOOL_CONTEXTS)
    } else {
        rng.below(INT_CONTEXTS)
    };
    rebuild(
        g,
        roots,
        |_, d| (d.lo, d.hi),
        |out, old, new| {
            if old != target {
                return Some(new);
            }
            Some(if dtype == DType::Bool {
                bool_context(out, ctx, new)
            } else {
                int_context(out, ctx, new, dtype)
            })
        },
    )
}

const INT_CONTEXTS: usize = 11;
const BOOL_CONTEXTS: usize = 5;

/// Context number `k` around the integer term `t`.
fn int_context(g: &mut Graph, k: usize, t: NodeId, dt: DType) -> NodeId {
    let c = |g: &mut Graph, v: i64| g.cnst(v, dt);
    match k {
        0 => {
            let z = c(g, 0);
            g.mk(Op::Mul, &[t, z])
        }
        1 => {
            let one = c(g, 1);
            g.mk(Op::Rem, &[t, one])
        }
        2 => {
            let one = c(g, 1);
            g.mk(Op::Mod, &[t, one])
        }
        3 => {
            let m1 = c(g, -1);
            g.mk(Op::Rem, &[t, m1])
        }
        4 => {
            let m1 = c(g, -1);
            g.mk(Op::Mod, &[t, m1])
        }
        5 => g.mk(Op::Sub, &[t, t]),
        6 => {
            let z = c(g, 0);
            g.mk(Op::Div, &[z, t])
        }
        7 => {
            let z = c(g, 0);
            g.mk(Op::FloorDiv, &[z, t])
        }
        8 => {
            let z = c(g, 0);
            g.mk(Op::Rem, &[z, t])
        }
        9 => {
            let z = c(g, 0);
            g.mk(Op::Mod, &[z, t])
        }
        _ => {
            // where(t < t, 1, t): a comparison of t with itself decides it
            let lt = g.mk(Op::Lt, &[t, t]);
            let one = c(g, 1);
            g.mk(Op::Where, &[lt, one, t])
        }
    }
}

/// Context number `k` around the bool term `t`.
fn bool_context(g: &mut Graph, k: usize, t: NodeId) -> NodeId {
    match k {
        0 => {
            let f = g.bool_const(false);
            g.mk(Op::And, &[t, f])
        }
        1 => {
            let tr = g.bool_const(true);
            g.mk(Op::Or, &[t, tr])
        }
        2 => {
            let n = g.mk(Op::Not, &[t]);
            g.mk(Op::And, &[t, n])
        }
        3 => {
            let n = g.mk(Op::Not, &[t]);
            g.mk(Op::Or, &[t, n])
        }
        _ => g.mk(Op::Xor, &[t, t]),
    }
}
