//! Index dtype lowering (seed 000 §5, Morok's three phases): the abstract
//! `index` type becomes `i32` or `i64`.
//!
//! 1. **Leaves**: an `index` constant or variable is wrapped: its concrete
//!    form is the constant in, or a cast of the variable to, the dtype its
//!    range selects (`i32` when it fits, else `i64`).
//! 2. **Upward**: an `index` op over wrapped operands becomes the same op
//!    on operands cast to `least_upper(select(result range), operand
//!    dtypes)`, wrapped again: every intermediate gets a dtype that holds
//!    all its values, so no concrete op wraps where the abstract one is
//!    defined. A `where` takes the least upper dtype of its arms (it never
//!    widens); a comparison compares at the least upper dtype of its sides.
//! 3. **Terminals**: wrappers are stripped at the roots; a root
//!    `where(c, idx, invalid)` becomes the pair (idx, gate = c).
//!
//! The three phases run as one memoized bottom-up pass ([`lower`]): a
//! wrapper is only ever looked at by its parent, so it is kept implicit
//! (each lowered node carries its concrete node and dtype).
//!
//! `invalid` anywhere but in the false arm of a root `where` cannot be
//! lowered (there is no concrete masked value) and is an error; the
//! simplifier's invalid rules move gates to the root first.

use crate::ir::{DType, Graph, NodeId, Op};
use rustc_hash::FxHashMap;
use std::fmt;

/// The concrete dtype for a range: `i32` if every value fits, else `i64`.
pub fn select_dtype(lo: i64, hi: i64) -> DType {
    if lo >= i32::MIN as i64 && hi <= i32::MAX as i64 {
        DType::I32
    } else {
        DType::I64
    }
}

/// `i64` if either is, else `i32`.
pub fn least_upper(a: DType, b: DType) -> DType {
    if a == DType::I64 || b == DType::I64 {
        DType::I64
    } else {
        DType::I32
    }
}

/// One lowered root: its concrete value and, for a gated root, the gate
/// (the lane is valid where the gate holds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Terminal {
    pub value: NodeId,
    pub gate: Option<NodeId>,
}

/// Why a program could not be lowered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LowerError(pub String);

impl fmt::Display for LowerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LowerError {}

/// How dtypes are chosen. [`Select::Ranges`] is the lowering; the other is
/// a deliberately wrong selection for tests that must see it caught.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Select {
    /// `i32` where the node's range fits, else `i64` (with least upper
    /// bounds over operands).
    Ranges,
    /// Always `i32`, ignoring ranges: wrong where an intermediate overflows.
    ForceI32,
}

/// Lowers `roots` of `g`, adding the concrete nodes to `g`. Roots of dtype
/// bool are lowered too (their comparisons compare concrete values).
pub fn lower(g: &mut Graph, roots: &[NodeId], select: Select) -> Result<Vec<Terminal>, LowerError> {
    let mut l = Lower {
        select,
        memo: FxHashMap::default(),
    };
    let mut out = Vec::with_capacity(roots.len());
    for &r in roots {
        let n = *g.node(r);
        let t = match (n.op, n.src()) {
            (Op::Where, &[c, x, inv]) if g.node(inv).op == Op::Invalid => Terminal {
                value: l.node(g, x)?.0,
                gate: Some(l.node(g, c)?.0),
            },
            _ => Terminal {
                value: l.node(g, r)?.0,
                gate: None,
            },
        };
        out.push(t);
    }
    Ok(out)
}

/// The abstract values the lowered roots `ts` of `roots` stand for, each
/// in its root's dtype: `where(gate, index(value), invalid)` (or
/// `index(value)`) for an `index` root, the value itself for a bool or a
/// concrete (`i32`, `i64`) root: what the lowered program is compared
/// with. A concrete root is not cast to `index`: at a narrow width that
/// cast could overflow where the root never had to fit (`i32(-129)` at
/// 8 bits).
pub fn as_roots(g: &mut Graph, roots: &[NodeId], ts: &[Terminal]) -> Vec<NodeId> {
    roots
        .iter()
        .zip(ts)
        .map(|(&root, t)| {
            let dtype = g.node(root).dtype;
            let v = if dtype == DType::Index && g.node(t.value).dtype != DType::Index {
                g.cast(DType::Index, t.value)
            } else {
                t.value
            };
            match t.gate {
                None => v,
                Some(c) => {
                    let inv = g.invalid();
                    g.mk(Op::Where, &[c, v, inv])
                }
            }
        })
        .collect()
}

struct Lower {
    select: Select,
    /// Abstract node -> (concrete node, its dtype).
    memo: FxHashMap<NodeId, (NodeId, DType)>,
}

impl Lower {
    fn pick(&self, lo: i64, hi: i64) -> DType {
        match self.select {
            Select::Ranges => select_dtype(lo, hi),
            Select::ForceI32 => DType::I32,
        }
    }

    /// `x` (concrete, of dtype `from`) as `to`.
    fn cast(g: &mut Graph, x: NodeId, from: DType, to: DType) -> NodeId {
        if from == to {
            return x;
        }
        // A constant is re-typed rather than cast (the leaf rule again).
        if let Some(c) = g.node(x).as_const() {
            if to != DType::Bool {
                return g.cnst(c, to);
            }
        }
        g.cast(to, x)
    }

    fn node(&mut self, g: &mut Graph, id: NodeId) -> Result<(NodeId, DType), LowerError> {
        if let Some(&r) = self.memo.get(&id) {
            return Ok(r);
        }
        // Operands first (each step then finds its operands memoized), so
        // a deep graph is lowered without deep recursion.
        for n in g.post_order(id, |n| self.memo.contains_key(&n)) {
            let r = self.lower_node(g, n)?;
            self.memo.insert(n, r);
        }
        Ok(self.memo[&id])
    }

    /// Lowers one node whose operands are lowered.
    fn lower_node(&mut self, g: &mut Graph, id: NodeId) -> Result<(NodeId, DType), LowerError> {
        let n = *g.node(id);
        let src: Vec<NodeId> = n.src().to_vec();
        let r = match n.op {
            Op::Invalid => {
                return Err(LowerError(
                    "`invalid` below a root: only a root `where(c, x, invalid)` can be lowered (to x with gate c)"
                        .into(),
                ))
            }
            // Phase 1: leaves take the dtype their range selects.
            Op::Const(c) if n.dtype == DType::Index => {
                let dt = self.pick(c, c);
                (g.cnst(c, dt), dt)
            }
            Op::Var(_) if n.dtype == DType::Index => {
                let dt = self.pick(n.vmin, n.vmax);
                (g.cast(dt, id), dt)
            }
            Op::Const(_) | Op::Var(_) => (id, n.dtype),
            // A cast to index is exact: the wrapped operand already holds
            // the value. A cast from index to a concrete type converts the
            // concrete operand.
            Op::Cast => {
                let (x, dx) = self.node(g, src[0])?;
                if n.dtype == DType::Index {
                    (x, dx)
                } else {
                    (g.cast(n.dtype, x), n.dtype)
                }
            }
            Op::Where => {
                let (c, _) = self.node(g, src[0])?;
                let (a, da) = self.node(g, src[1])?;
                let (b, db) = self.node(g, src[2])?;
                let dt = if n.dtype == DType::Index {
                    least_upper(da, db)
                } else {
                    n.dtype
                };
                let a = Self::cast(g, a, da, dt);
                let b = Self::cast(g, b, db, dt);
                (g.mk(Op::Where, &[c, a, b]), dt)
            }
            op if op.is_comparison() => {
                let (a, da) = self.node(g, src[0])?;
                let (b, db) = self.node(g, src[1])?;
                let dt = if da == db { da } else { least_upper(da, db) };
                let a = Self::cast(g, a, da, dt);
                let b = Self::cast(g, b, db, dt);
                (g.mk(op, &[a, b]), DType::Bool)
            }
            // Phase 2: an index op over wrapped operands, at the least
            // upper dtype of its result's range and its operands.
            op if n.dtype == DType::Index => {
                let lowered: Vec<(NodeId, DType)> =
                    src.iter().map(|&s| self.node(g, s)).collect::<Result<_, _>>()?;
                let mut dt = self.pick(n.vmin.min(n.vmax), n.vmax.max(n.vmin));
                for &(_, d) in &lowered {
                    dt = least_upper(dt, d);
                }
                // A shift amount must lie below the bits of the dtype the
                // shift runs in: one that can reach 32 needs i64.
                if op.is_shift() && g.node(src[1]).vmax >= 32 {
                    dt = DType::I64;
                }
                if self.select == Select::ForceI32 {
                    dt = DType::I32;
                }
                let args: Vec<NodeId> = lowered.iter().map(|&(x, d)| Self::cast(g, x, d, dt)).collect();
                (g.mk(op, &args), dt)
            }
            // Concrete and bool ops: operands are lowered, the op stays.
            op => {
                let args: Vec<NodeId> = src
                    .iter()
                    .map(|&s| self.node(g, s).map(|r| r.0))
                    .collect::<Result<_, _>>()?;
                (g.mk(op, &args), n.dtype)
            }
        };
        Ok(r)
    }
}

/// The lowered program as text: every lowered node with its dtype (in
/// topological order, leaves first), then one `expr` line per root with its
/// dtype, and its `gate` when it has one.
pub fn show(g: &Graph, terminals: &[Terminal]) -> String {
    use crate::text::print::expr;
    let mut out = String::new();
    let roots: Vec<NodeId> = terminals
        .iter()
        .flat_map(|t| std::iter::once(t.value).chain(t.gate))
        .collect();
    // One short line per node and at most NODE_ROWS of them: a long chain
    // printed node by node in full would be quadratic in its length.
    const NODE_ROWS: usize = 1000;
    out.push_str("# lowered nodes (dtype, node):\n");
    let listed: Vec<NodeId> = g
        .reachable(&roots)
        .into_iter()
        .filter(|&id| !matches!(g.node(id).op, Op::Const(_) | Op::Var(_)))
        .collect();
    for &id in listed.iter().take(NODE_ROWS) {
        let line = crate::text::print::expr_short(g, id, 120);
        out.push_str(&format!("#   {:<5} {line}\n", g.node(id).dtype.name()));
    }
    if listed.len() > NODE_ROWS {
        out.push_str(&format!(
            "#   ... and {} not shown\n",
            crate::text::print::count(listed.len() - NODE_ROWS, "more node")
        ));
    }
    for t in terminals {
        out.push_str(&format!(
            "expr {}    # {}\n",
            expr(g, t.value),
            g.node(t.value).dtype
        ));
        if let Some(c) = t.gate {
            out.push_str(&format!("gate {}\n", expr(g, c)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::dtype::Width;
    use crate::meaning::interp::first_failure;
    use crate::text::parse::parse_program;

    /// Lowers the program's roots and compares lowered and abstract at
    /// every point with the interpreter; `Err` names the first failing
    /// point.
    fn lower_and_compare(text: &str, select: Select) -> Result<(Graph, Vec<Terminal>), Vec<i128>> {
        let mut p = parse_program(text).unwrap();
        let ts = lower(&mut p.graph, &p.outputs, select).unwrap();
        let tgt = as_roots(&mut p.graph, &p.outputs, &ts);
        if let Some((point, _)) = first_failure(&p.graph, &p.outputs, &tgt, Width::W64) {
            return Err(point);
        }
        Ok((p.graph, ts))
    }

    #[test]
    fn a_gated_root_becomes_its_index_and_gate() {
        let (g, ts) = lower_and_compare(
            "var r in [0, 9]\nexpr where(r < 8, r * 4 + 1, invalid)\n",
            Select::Ranges,
        )
        .unwrap();
        assert_eq!(ts.len(), 1);
        let gate = ts[0].gate.expect("a gate");
        assert_eq!(crate::text::print::expr(&g, gate), "i32(r) < i32(8)");
        assert_eq!(
            crate::text::print::expr(&g, ts[0].value),
            "i32(r) * i32(4) + i32(1)"
        );
        assert_eq!(g.node(ts[0].value).dtype, DType::I32);
    }

    #[test]
    fn an_intermediate_past_i32_is_computed_in_i64() {
        // The result fits i32, the product does not.
        let text = "var r in [0, 4000]\nexpr (r * 1000000) // 1000000\n";
        let (g, ts) = lower_and_compare(text, Select::Ranges).unwrap();
        let v = g.node(ts[0].value);
        assert_eq!(v.dtype, DType::I64);
        assert_eq!(g.node(v.src()[0]).dtype, DType::I64);
        // Forcing i32 there wraps the product: caught.
        assert!(lower_and_compare(text, Select::ForceI32).is_err());
    }

    #[test]
    fn invalid_below_a_root_is_an_error_not_a_panic() {
        let mut p = parse_program("var r in [0, 9]\nexpr where(r < 8, r, invalid) + 1\n").unwrap();
        assert!(lower(&mut p.graph, &p.outputs, Select::Ranges).is_err());
    }
}
