//! A program's domain: the box of its variables' bounds, cut by
//! constraints `E in [LO, HI]` (an XLA indexing map's constraint lines, the
//! text format's `constraint` lines; docs/semantics.md, "Domains").
//!
//! What a constraint means is written here once, in the language every
//! part already implements: a point of the box where some constraint fails
//! is outside the domain, and each result there is a masked lane. The
//! program's roots are its results under the domain's membership
//! predicate, `where(member, r, invalid)` ([`gate`]); the interpreter, the
//! SMT encodings and the JIT evaluate that, the engine simplifies it
//! (knowing, inside the arm, that the constraints hold), and a check
//! compares it: two programs whose domains differ differ in which lanes are
//! invalid, at a point that a counterexample names. [`split`] reads a gated
//! program back as constraints and results, for printing.

use crate::ir::{DType, Graph, NodeId, Op};

/// `expr in [lo, hi]`, inclusive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Constraint {
    pub expr: NodeId,
    pub lo: i64,
    pub hi: i64,
}

/// Why roots cannot be put under a domain.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum GateError {
    #[error("a constraint applies to `index` results; result {0} is a {1}")]
    NotIndex(usize, DType),
    #[error("a constraint's expression must be an `index`, not a {0}")]
    ExprNotIndex(DType),
}

/// The bool node that holds exactly at the points of the domain: the
/// conjunction, in order, of `e == lo` (a single point) or `lo <= e && e <=
/// hi` over the constraints; `true` for none.
pub fn member(g: &mut Graph, cs: &[Constraint]) -> Result<NodeId, GateError> {
    let mut acc: Option<NodeId> = None;
    for c in cs {
        let t = g.node(c.expr).dtype;
        if t != DType::Index {
            return Err(GateError::ExprNotIndex(t));
        }
        let lo = g.cnst(c.lo, DType::Index);
        let fact = if c.lo == c.hi {
            g.mk(Op::Eq, &[c.expr, lo])
        } else {
            let hi = g.cnst(c.hi, DType::Index);
            let a = g.mk(Op::Le, &[lo, c.expr]);
            let b = g.mk(Op::Le, &[c.expr, hi]);
            g.mk(Op::And, &[a, b])
        };
        acc = Some(match acc {
            Some(x) => g.mk(Op::And, &[x, fact]),
            None => fact,
        });
    }
    Ok(acc.unwrap_or_else(|| g.bool_const(true)))
}

/// Each root under the domain: `where(member, r, invalid)`; the roots
/// themselves when there is no constraint.
pub fn gate(g: &mut Graph, cs: &[Constraint], roots: &[NodeId]) -> Result<Vec<NodeId>, GateError> {
    if cs.is_empty() {
        return Ok(roots.to_vec());
    }
    if let Some((i, t)) = roots
        .iter()
        .map(|&r| g.node(r).dtype)
        .enumerate()
        .find(|(_, t)| *t != DType::Index)
    {
        return Err(GateError::NotIndex(i + 1, t));
    }
    let m = member(g, cs)?;
    let inv = g.invalid();
    Ok(roots
        .iter()
        .map(|&r| g.mk(Op::Where, &[m, r, inv]))
        .collect())
}

/// Where a point at which two roots differ in validity lies, when they are
/// results over domains (docs/semantics.md, "Domains"): the source's
/// valid and the target's invalid is a point the target dropped; the other
/// way round, one it added.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Moved {
    Dropped,
    Added,
}

impl Moved {
    /// From whether each root is invalid at the point; `None` unless
    /// exactly one is.
    pub fn of(src_invalid: bool, tgt_invalid: bool) -> Option<Moved> {
        match (src_invalid, tgt_invalid) {
            (false, true) => Some(Moved::Dropped),
            (true, false) => Some(Moved::Added),
            _ => None,
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Moved::Dropped => {
                "the point is in the source's domain and not in the target's: dropped"
            }
            Moved::Added => "the point is in the target's domain and not in the source's: added",
        }
    }
}

/// A program read as results over a domain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Split {
    /// The results, valid exactly where the constraints hold (none: the
    /// whole box).
    Map {
        constraints: Vec<Constraint>,
        results: Vec<NodeId>,
    },
    /// Every root is `invalid`: no point is in the domain.
    Empty,
}

/// Why roots cannot be read as results over one domain.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SplitError {
    #[error("the results are not all valid on the same points (each must be `where(C, E, invalid)` with one C, or none)")]
    Mixed,
    #[error("the results' gate has a conjunct that is not a comparison (`<`, `<=`, `==`) of `index` values")]
    NotConstraints,
}

/// Reads `roots` back as constraints and results: every root
/// `where(c, r, invalid)` with one `c`, a conjunction of comparisons
/// (`<`, `<=`, `==`, either side a constant, or a `!` of one), each of them
/// a bound of an expression (several bounds of one expression are one
/// constraint; a missing side is the expression's range); or no root
/// gated. The inverse of [`gate`] up to how the engine rewrote `c`.
/// Builds `a - b` for a comparison of two non-constants. The constraints
/// come in the order `declared` has their expressions, then the others in
/// the order of the conjunction.
pub fn split(
    g: &mut Graph,
    roots: &[NodeId],
    declared: &[Constraint],
) -> Result<Split, SplitError> {
    let inv = |g: &Graph, n: NodeId| g.node(n).op == Op::Invalid;
    if !roots.is_empty() && roots.iter().all(|&r| inv(g, r)) {
        return Ok(Split::Empty);
    }
    let gated = |g: &Graph, r: NodeId| {
        let n = g.node(r);
        (n.op == Op::Where && inv(g, n.src()[2])).then(|| (n.src()[0], n.src()[1]))
    };
    let parts: Vec<Option<(NodeId, NodeId)>> = roots.iter().map(|&r| gated(g, r)).collect();
    if parts.iter().all(Option::is_none) {
        return Ok(Split::Map {
            constraints: Vec::new(),
            results: roots.to_vec(),
        });
    }
    let Some(Some((cond, _))) = parts.first().copied() else {
        return Err(SplitError::Mixed);
    };
    let mut results = Vec::with_capacity(roots.len());
    for p in &parts {
        match p {
            Some((c, r)) if *c == cond => results.push(*r),
            _ => return Err(SplitError::Mixed),
        }
    }
    let (conjuncts, _) = g.chain_operands(cond, Op::And, usize::MAX);
    let mut cs: Vec<(NodeId, Option<i64>, Option<i64>)> = Vec::new();
    for f in conjuncts {
        let Some((e, lo, hi)) = bound(g, f) else {
            match decided(g, f) {
                Some(true) => continue,
                // A conjunct that holds nowhere (`0 == 1`, the constraint
                // of a variable with an empty range): no point.
                Some(false) => return Ok(Split::Empty),
                None => return Err(SplitError::NotConstraints),
            }
        };
        match cs.iter_mut().find(|c| c.0 == e) {
            Some(c) => {
                c.1 = max_opt(c.1, lo);
                c.2 = min_opt(c.2, hi);
            }
            None => cs.push((e, lo, hi)),
        }
    }
    cs.sort_by_key(|c| {
        declared
            .iter()
            .position(|d| d.expr == c.0)
            .unwrap_or(usize::MAX)
    });
    let constraints = cs
        .into_iter()
        .map(|(e, lo, hi)| {
            let n = g.node(e);
            Constraint {
                expr: e,
                lo: lo.unwrap_or(n.vmin),
                hi: hi.unwrap_or(n.vmax),
            }
        })
        .collect();
    Ok(Split::Map {
        constraints,
        results,
    })
}

fn max_opt(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, y) => x.or(y),
    }
}

fn min_opt(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    }
}

/// One conjunct as a bound of an `index` expression: `(e, lo, hi)`.
fn bound(g: &mut Graph, f: NodeId) -> Option<(NodeId, Option<i64>, Option<i64>)> {
    let n = *g.node(f);
    // `!(a < b)` is `b <= a`, `!(a <= b)` is `b < a`.
    let (op, a, b) = match n.op {
        Op::Not => {
            let m = *g.node(n.src()[0]);
            let (a, b) = (m.src().first().copied()?, m.src().get(1).copied()?);
            match m.op {
                Op::Lt => (Op::Le, b, a),
                Op::Le => (Op::Lt, b, a),
                _ => return None,
            }
        }
        Op::Lt | Op::Le | Op::Eq => (n.op, n.src()[0], n.src()[1]),
        _ => return None,
    };
    if g.node(a).dtype != DType::Index {
        return None;
    }
    let (ca, cb) = (g.node(a).as_const(), g.node(b).as_const());
    // `e OP k` as the bounds of `e`; `k OP e` flipped.
    let (e, k, e_left) = match (ca, cb) {
        (_, Some(k)) if ca.is_none() => (a, k, true),
        (Some(k), None) => (b, k, false),
        // `a + ka OP b + kb` is `a - b OP kb - ka`.
        (None, None) => {
            let ((a, ka), (b, kb)) = (peel(g, a), peel(g, b));
            (
                g.try_mk(Op::Sub, None, &[a, b]).ok()?,
                kb.checked_sub(ka)?,
                true,
            )
        }
        _ => return None,
    };
    Some(match (op, e_left) {
        (Op::Eq, _) => (e, Some(k), Some(k)),
        (Op::Le, true) => (e, None, Some(k)),
        (Op::Lt, true) => (e, None, Some(k.checked_sub(1)?)),
        (Op::Le, false) => (e, Some(k), None),
        (Op::Lt, false) => (e, Some(k.checked_add(1)?), None),
        _ => return None,
    })
}

/// A conjunct's value when it is a constant or compares two constants.
fn decided(g: &Graph, f: NodeId) -> Option<bool> {
    let n = g.node(f);
    if n.dtype == DType::Bool {
        if let Some(v) = n.as_const() {
            return Some(v != 0);
        }
    }
    let (&[a, b], op) = (n.src(), n.op) else {
        return None;
    };
    let (a, b) = (g.node(a).as_const()?, g.node(b).as_const()?);
    match op {
        Op::Lt => Some(a < b),
        Op::Le => Some(a <= b),
        Op::Eq => Some(a == b),
        _ => None,
    }
}

/// `x + k` as `(x, k)`; any other node `n` as `(n, 0)`.
fn peel(g: &Graph, n: NodeId) -> (NodeId, i64) {
    let node = g.node(n);
    match (node.op, node.src()) {
        (Op::Add, &[x, k]) => match g.node(k).as_const() {
            Some(k) => (x, k),
            None => (n, 0),
        },
        _ => (n, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gated_program_splits_back_into_its_constraints() {
        let mut g = Graph::new();
        let d0 = g.declare_var("d0", DType::Index, 0, 20).unwrap();
        let s0 = g.declare_var("s0", DType::Index, 0, 5).unwrap();
        let (d0, s0) = (g.var_node(d0), g.var_node(s0));
        let sum = g.mk(Op::Add, &[d0, s0]);
        let seven = g.cnst(7, DType::Index);
        let m = g.mk(Op::Mod, &[d0, seven]);
        let cs = [
            Constraint {
                expr: sum,
                lo: 0,
                hi: 20,
            },
            Constraint {
                expr: m,
                lo: 3,
                hi: 3,
            },
        ];
        let roots = gate(&mut g, &cs, &[d0, s0]).unwrap();
        assert_eq!(
            split(&mut g, &roots, &cs).unwrap(),
            Split::Map {
                constraints: cs.to_vec(),
                results: vec![d0, s0],
            }
        );
        // A comparison of two expressions, as the engine writes one
        // (`d0 < s0 + 3`), is a bound of their difference.
        let three = g.cnst(3, DType::Index);
        let rhs = g.mk(Op::Add, &[s0, three]);
        let lt = g.mk(Op::Lt, &[d0, rhs]);
        let inv = g.invalid();
        let r = g.mk(Op::Where, &[lt, d0, inv]);
        let diff = g.mk(Op::Sub, &[d0, s0]);
        assert_eq!(
            split(&mut g, &[r], &[]).unwrap(),
            Split::Map {
                constraints: vec![Constraint {
                    expr: diff,
                    lo: -5,
                    hi: 2,
                }],
                results: vec![d0],
            }
        );
        // One result not under the domain: not a map.
        assert_eq!(split(&mut g, &[roots[0], s0], &[]), Err(SplitError::Mixed));
        let inv = g.invalid();
        assert_eq!(split(&mut g, &[inv, inv], &[]), Ok(Split::Empty));
    }

    #[test]
    fn a_bool_result_cannot_be_gated() {
        let mut g = Graph::new();
        let x = g.declare_var("x", DType::Index, 0, 3).unwrap();
        let x = g.var_node(x);
        let t = g.bool_const(true);
        let c = [Constraint {
            expr: x,
            lo: 1,
            hi: 2,
        }];
        assert_eq!(
            gate(&mut g, &c, &[x, t]),
            Err(GateError::NotIndex(2, DType::Bool))
        );
    }
}
