//! The tiled-view generator.
//!
//! Modelled on what tinygrad's ShapeTracker and XLA's indexing maps emit: a
//! base tensor (rank 1-4, dims 1-64, contiguous or arbitrary strides), 0-4
//! view operations (reshape, permute, expand, pad, shrink, flip, stride), a
//! loop variable per dimension of the final view, and the index mapped back
//! through the views to the buffer. Reshape is linearize + delinearize with
//! the case's division family; pad adds `lo <= i` / `i < hi` conditions that
//! gate the root as `where(valid, idx, invalid)`. Then 1-3 tiling steps
//! substitute a loop variable by `outer*k + inner` (split, upcast on the
//! innermost range, unroll on the outermost), gating with
//! `where(outer*k + inner < n, idx, invalid)` when `k` does not divide `n`.
//!
//! Limits: at most [`MAX_TILED_NODES`] reachable nodes; the view's element
//! count stays at most [`MAX_VIEW_ELEMENTS`] (2^24) and each split multiplies
//! a range by less than 2, so the domain stays below 2^27 (documented bound:
//! [`MAX_TILED_DOMAIN`] = 2^32); typical domains are far below 2^20.
//!

use super::{
    arb_family, family_strategy, fmt_list, pick, Case, Family, MAX_DIM, MAX_RANK, MAX_TILED_NODES,
    MAX_TILE_OPS, MAX_VIEW_ELEMENTS, MAX_VIEW_OPS,
};
use arbitrary::{Arbitrary, Unstructured};
use engine::ir::{DType, Graph, NodeId, Op, VarDecl};
use proptest::strategy::{BoxedStrategy, Just, Strategy};
use rustc_hash::FxHashMap;

// ---- tiled genome -----------------------------------------------------------------

/// A tensor, the views taken of it, and the tiling of the final loops.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TiledGenome {
    pub family: Family,
    pub tensor: TensorGenome,
    /// Applied in order (the first one to the base tensor). At most
    /// [`MAX_VIEW_OPS`] are used.
    pub views: Vec<ViewOp>,
    /// Applied in order to the loop ranges. At most [`MAX_TILE_OPS`] are used.
    pub tiles: Vec<TileOp>,
    /// Emit one root per base dimension (an XLA-style tuple of indices)
    /// instead of one flat buffer offset.
    pub tuple: bool,
}

/// The base tensor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorGenome {
    /// Dims, clamped to 1..=64; the first [`MAX_RANK`] are used; empty means `[1]`.
    pub shape: Vec<u8>,
    pub strides: Strides,
    /// Extra buffer offset.
    pub offset: u8,
}

/// Strides of the base tensor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Strides {
    /// Row-major, densely packed.
    Contiguous,
    /// One stride per dim (missing ones are 1). Negative strides get the
    /// offset that keeps the buffer's lowest address at `offset`, like a
    /// flipped view.
    Custom(Vec<i8>),
}

/// A view operation (tinygrad's movement ops). Fields are raw; the builder
/// normalizes them against the current shape, and skips an operation that
/// does nothing or would exceed [`MAX_VIEW_ELEMENTS`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ViewOp {
    /// To rank `1 + rank % 4` with the same element count: prime factor `i`
    /// of the count goes to dim `assign[i % len] % rank` (all to dim 0 when
    /// `assign` is empty).
    Reshape { rank: u8, assign: Vec<u8> },
    /// The permutation that stably sorts `keys` (padded with 0 to the rank).
    Permute { keys: Vec<u8> },
    /// Broadcast a size-1 dim (the `dim % count`-th one) to
    /// `2 + (size - 2) % 7`; without one, unsqueeze at `dim % (rank + 1)`
    /// first. The index of a broadcast dim is ignored (stride 0).
    Expand { dim: u8, size: u8 },
    /// (before, after) per dim, each clamped to 0..=4.
    Pad { amounts: Vec<(u8, u8)> },
    /// (cut from the start, cut from the end) per dim, clamped so that at
    /// least one element remains.
    Shrink { cuts: Vec<(u8, u8)> },
    /// Reverse the dims whose bit is set.
    Flip { mask: u8 },
    /// Take every k-th element per dim, k clamped to 1..=4.
    Stride { steps: Vec<u8> },
}

/// A tiling step on the loop ranges: replace a range of size n by
/// `outer*k + inner`.
///
/// For all three, `k` is clamped to 2..=n-1 (2 for n = 2); with `exact` it
/// becomes the largest divisor of n in 2..=k, or the smallest divisor of n
/// when there is none; otherwise the split is gated when k does not divide n.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TileOp {
    /// Split the `range % count`-th range (of size >= 2) in place.
    Split { range: u8, k: u8, exact: bool },
    /// Split the innermost range; the inner part becomes the last range.
    Upcast { k: u8, exact: bool },
    /// Split the outermost range; the inner part becomes the last range.
    Unroll { k: u8, exact: bool },
}
impl<'a> Arbitrary<'a> for TiledGenome {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let family = arb_family(u)?;
        let tensor = TensorGenome::arbitrary(u)?;
        let nviews = u.int_in_range(0..=MAX_VIEW_OPS)?;
        let views = (0..nviews)
            .map(|_| ViewOp::arbitrary(u))
            .collect::<arbitrary::Result<_>>()?;
        let ntiles = u.int_in_range(1..=MAX_TILE_OPS)?;
        let tiles = (0..ntiles)
            .map(|_| TileOp::arbitrary(u))
            .collect::<arbitrary::Result<_>>()?;
        let tuple = pick(u, &[7, 1])? == 1;
        Ok(TiledGenome {
            family,
            tensor,
            views,
            tiles,
            tuple,
        })
    }
}

/// Dims: mostly small, often powers of two, sometimes anything up to 64, so
/// that domains stay exhaustively checkable most of the time.
fn arb_dim(u: &mut Unstructured<'_>) -> arbitrary::Result<u8> {
    Ok(match pick(u, &[5, 3, 2])? {
        0 => u.int_in_range(1..=8)?,
        1 => *u.choose(&POW2_DIMS)?,
        _ => u.int_in_range(1..=MAX_DIM as u8)?,
    })
}

const POW2_DIMS: [u8; 6] = [2, 4, 8, 16, 32, 64];

impl<'a> Arbitrary<'a> for TensorGenome {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let rank = u.int_in_range(1..=MAX_RANK)?;
        let shape = (0..rank)
            .map(|_| arb_dim(u))
            .collect::<arbitrary::Result<Vec<_>>>()?;
        let strides = if pick(u, &[3, 1])? == 0 {
            Strides::Contiguous
        } else {
            Strides::Custom(
                (0..rank)
                    .map(|_| u.int_in_range(-8i8..=64))
                    .collect::<arbitrary::Result<_>>()?,
            )
        };
        let offset = if pick(u, &[3, 1])? == 0 {
            0
        } else {
            u.int_in_range(0..=64)?
        };
        Ok(TensorGenome {
            shape,
            strides,
            offset,
        })
    }
}

fn arb_bytes(u: &mut Unstructured<'_>, n: usize, lo: u8, hi: u8) -> arbitrary::Result<Vec<u8>> {
    (0..n).map(|_| u.int_in_range(lo..=hi)).collect()
}

impl<'a> Arbitrary<'a> for ViewOp {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(match pick(u, &[3, 2, 2, 3, 2, 1, 1])? {
            0 => {
                let rank = u.int_in_range(0..=3)?;
                let n = u.int_in_range(0..=8)?;
                ViewOp::Reshape {
                    rank,
                    assign: arb_bytes(u, n, 0, 3)?,
                }
            }
            1 => ViewOp::Permute {
                keys: arb_bytes(u, MAX_RANK, 0, 255)?,
            },
            2 => ViewOp::Expand {
                dim: u.int_in_range(0..=3)?,
                size: u.int_in_range(2..=8)?,
            },
            3 => ViewOp::Pad {
                amounts: (0..MAX_RANK)
                    .map(|_| {
                        Ok(if pick(u, &[1, 1])? == 0 {
                            (0, 0)
                        } else {
                            (u.int_in_range(0..=3)?, u.int_in_range(0..=3)?)
                        })
                    })
                    .collect::<arbitrary::Result<_>>()?,
            },
            4 => ViewOp::Shrink {
                cuts: (0..MAX_RANK)
                    .map(|_| Ok((u.int_in_range(0..=4)?, u.int_in_range(0..=4)?)))
                    .collect::<arbitrary::Result<_>>()?,
            },
            5 => ViewOp::Flip {
                mask: u.int_in_range(1..=15)?,
            },
            _ => ViewOp::Stride {
                steps: arb_bytes(u, MAX_RANK, 1, 3)?,
            },
        })
    }
}

impl<'a> Arbitrary<'a> for TileOp {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let which = pick(u, &[3, 2, 1])?;
        let exact = pick(u, &[2, 1])? == 0;
        Ok(match which {
            0 => TileOp::Split {
                range: u.int_in_range(0..=7)?,
                k: u.int_in_range(2..=16)?,
                exact,
            },
            1 => TileOp::Upcast {
                k: u.int_in_range(2..=8)?,
                exact,
            },
            _ => TileOp::Unroll {
                k: u.int_in_range(2..=8)?,
                exact,
            },
        })
    }
}

// ---- tiled strategies ---------------------------------------------------------------

fn dim_strategy() -> BoxedStrategy<u8> {
    proptest::prop_oneof![
        5 => 1u8..=8,
        3 => proptest::sample::select(POW2_DIMS.to_vec()),
        2 => 1u8..=MAX_DIM as u8,
    ]
    .boxed()
}

fn tensor_strategy() -> BoxedStrategy<TensorGenome> {
    (1..=MAX_RANK)
        .prop_flat_map(|rank| {
            (
                proptest::collection::vec(dim_strategy(), rank),
                proptest::prop_oneof![
                    3 => Just(Strides::Contiguous),
                    1 => proptest::collection::vec(-8i8..=64, rank).prop_map(Strides::Custom),
                ],
                proptest::prop_oneof![3 => Just(0u8), 1 => 0u8..=64],
            )
        })
        .prop_map(|(shape, strides, offset)| TensorGenome {
            shape,
            strides,
            offset,
        })
        .boxed()
}

fn view_op_strategy() -> BoxedStrategy<ViewOp> {
    use proptest::collection::vec;
    let pad = proptest::prop_oneof![Just((0u8, 0u8)), (0u8..=3, 0u8..=3)];
    proptest::prop_oneof![
        3 => (0u8..=3, vec(0u8..=3, 0..=8))
            .prop_map(|(rank, assign)| ViewOp::Reshape { rank, assign }),
        2 => vec(proptest::num::u8::ANY, MAX_RANK).prop_map(|keys| ViewOp::Permute { keys }),
        2 => (0u8..=3, 2u8..=8).prop_map(|(dim, size)| ViewOp::Expand { dim, size }),
        3 => vec(pad, MAX_RANK).prop_map(|amounts| ViewOp::Pad { amounts }),
        2 => vec((0u8..=4, 0u8..=4), MAX_RANK).prop_map(|cuts| ViewOp::Shrink { cuts }),
        1 => (1u8..=15).prop_map(|mask| ViewOp::Flip { mask }),
        1 => vec(1u8..=3, MAX_RANK).prop_map(|steps| ViewOp::Stride { steps }),
    ]
    .boxed()
}

fn tile_op_strategy() -> BoxedStrategy<TileOp> {
    let exact = proptest::prop_oneof![2 => Just(true), 1 => Just(false)];
    (0usize..6, 0u8..=7, 2u8..=16, 2u8..=8, exact)
        .prop_map(|(which, range, ks, k, exact)| match which {
            0..=2 => TileOp::Split {
                range,
                k: ks,
                exact,
            },
            3 | 4 => TileOp::Upcast { k, exact },
            _ => TileOp::Unroll { k, exact },
        })
        .boxed()
}

/// Proptest strategy for tiled genomes, with the distributions of the
/// `Arbitrary` impl (and shrinking toward fewer, simpler operations).
pub fn tiled_strategy() -> BoxedStrategy<TiledGenome> {
    use proptest::collection::vec;
    (
        family_strategy(),
        tensor_strategy(),
        vec(view_op_strategy(), 0..=MAX_VIEW_OPS),
        vec(tile_op_strategy(), 1..=MAX_TILE_OPS),
        proptest::prop_oneof![7 => Just(false), 1 => Just(true)],
    )
        .prop_map(|(family, tensor, views, tiles, tuple)| TiledGenome {
            family,
            tensor,
            views,
            tiles,
            tuple,
        })
        .boxed()
}

// ---- tiled builder ------------------------------------------------------------------

/// A view operation resolved against the shape it applies to.
#[derive(Clone, Debug)]
enum Norm {
    Reshape {
        from: Vec<i64>,
        to: Vec<i64>,
    },
    /// `new[k] = old[perm[k]]`.
    Permute {
        perm: Vec<usize>,
    },
    /// Broadcast dim `dim`; `insert`: it was inserted (unsqueezed) first.
    Expand {
        dim: usize,
        insert: bool,
    },
    Pad {
        amounts: Vec<(i64, i64)>,
        from: Vec<i64>,
    },
    Shrink {
        lo: Vec<i64>,
    },
    Flip {
        dims: Vec<usize>,
        from: Vec<i64>,
    },
    Stride {
        steps: Vec<i64>,
    },
}

fn elements(shape: &[i64]) -> i64 {
    shape.iter().product()
}

fn prime_factors(mut n: i64) -> Vec<i64> {
    let mut f = Vec::new();
    let mut p = 2;
    while p * p <= n {
        while n % p == 0 {
            f.push(p);
            n /= p;
        }
        p += 1;
    }
    if n > 1 {
        f.push(n);
    }
    f
}

/// Resolves `op` against `shape`: the resolved op, the new shape and a
/// description, or `None` when it changes nothing or exceeds the budget.
fn normalize(op: &ViewOp, shape: &[i64]) -> Option<(Norm, Vec<i64>, String)> {
    let rank = shape.len();
    let res = match op {
        ViewOp::Reshape { rank: r, assign } => {
            let r = 1 + (*r as usize) % MAX_RANK;
            let mut to = vec![1i64; r];
            for (i, p) in prime_factors(elements(shape)).into_iter().enumerate() {
                let d = if assign.is_empty() {
                    0
                } else {
                    assign[i % assign.len()] as usize % r
                };
                to[d] *= p;
            }
            if to == shape {
                return None;
            }
            let desc = format!("reshape {}", fmt_list(&to));
            (
                Norm::Reshape {
                    from: shape.to_vec(),
                    to: to.clone(),
                },
                to,
                desc,
            )
        }
        ViewOp::Permute { keys } => {
            let mut perm: Vec<usize> = (0..rank).collect();
            perm.sort_by_key(|&k| (keys.get(k).copied().unwrap_or(0), k));
            if perm.iter().enumerate().all(|(i, &p)| i == p) {
                return None;
            }
            let to = perm.iter().map(|&p| shape[p]).collect();
            let desc = format!("permute {}", fmt_list(&perm));
            (Norm::Permute { perm }, to, desc)
        }
        ViewOp::Expand { dim, size } => {
            let n = 2 + (size.saturating_sub(2) as i64) % 7;
            let ones: Vec<usize> = (0..rank).filter(|&d| shape[d] == 1).collect();
            let mut to = shape.to_vec();
            let (d, insert) = if !ones.is_empty() {
                (ones[*dim as usize % ones.len()], false)
            } else if rank < MAX_RANK {
                let d = *dim as usize % (rank + 1);
                to.insert(d, 1);
                (d, true)
            } else {
                return None;
            };
            to[d] = n;
            let desc = if insert {
                format!("unsqueeze+expand dim {d} to {n}")
            } else {
                format!("expand dim {d} to {n}")
            };
            (Norm::Expand { dim: d, insert }, to, desc)
        }
        ViewOp::Pad { amounts } => {
            let amounts: Vec<(i64, i64)> = (0..rank)
                .map(|d| {
                    let (b, a) = amounts.get(d).copied().unwrap_or((0, 0));
                    ((b as i64).min(4), (a as i64).min(4))
                })
                .collect();
            if amounts.iter().all(|&p| p == (0, 0)) {
                return None;
            }
            let to = (0..rank)
                .map(|d| shape[d] + amounts[d].0 + amounts[d].1)
                .collect();
            let desc = format!("pad {}", fmt_list(&amounts));
            (
                Norm::Pad {
                    amounts,
                    from: shape.to_vec(),
                },
                to,
                desc,
            )
        }
        ViewOp::Shrink { cuts } => {
            let mut lo = Vec::with_capacity(rank);
            let mut to = Vec::with_capacity(rank);
            let mut ranges = Vec::with_capacity(rank);
            for (d, &s) in shape.iter().enumerate() {
                let (cl, ch) = cuts.get(d).copied().unwrap_or((0, 0));
                let l = (cl as i64).min(s - 1);
                let h = s - (ch as i64).min(s - 1 - l);
                lo.push(l);
                to.push(h - l);
                ranges.push((l, h));
            }
            if to == shape {
                return None;
            }
            let desc = format!("shrink {}", fmt_list(&ranges));
            (Norm::Shrink { lo }, to, desc)
        }
        ViewOp::Flip { mask } => {
            let dims: Vec<usize> = (0..rank)
                .filter(|&d| mask & (1 << d) != 0 && shape[d] > 1)
                .collect();
            if dims.is_empty() {
                return None;
            }
            let desc = format!("flip {}", fmt_list(&dims));
            (
                Norm::Flip {
                    dims,
                    from: shape.to_vec(),
                },
                shape.to_vec(),
                desc,
            )
        }
        ViewOp::Stride { steps } => {
            let steps: Vec<i64> = (0..rank)
                .map(|d| (steps.get(d).copied().unwrap_or(1) as i64).clamp(1, 4))
                .collect();
            let to: Vec<i64> = (0..rank)
                .map(|d| (shape[d] + steps[d] - 1) / steps[d])
                .collect();
            if steps.iter().all(|&k| k == 1) {
                return None;
            }
            let desc = format!("stride {}", fmt_list(&steps));
            (Norm::Stride { steps }, to, desc)
        }
    };
    (elements(&res.1) <= MAX_VIEW_ELEMENTS).then_some(res)
}

fn ix(g: &mut Graph, v: i64) -> NodeId {
    g.cnst(v, DType::Index)
}

/// Maps the indices of the view after `op` to the indices before it,
/// collecting validity conditions (pad) in `conds`.
fn back(
    g: &mut Graph,
    fam: Family,
    op: &Norm,
    idx: Vec<NodeId>,
    conds: &mut Vec<NodeId>,
) -> Vec<NodeId> {
    match op {
        Norm::Reshape { from, to } => {
            // Linearize in the new shape (row-major), outermost term first.
            let mut flat: Option<NodeId> = None;
            let mut st = elements(to);
            for (k, &s) in to.iter().enumerate() {
                st /= s;
                if s == 1 {
                    continue;
                }
                let term = if st == 1 {
                    idx[k]
                } else {
                    let c = ix(g, st);
                    g.mk(Op::Mul, &[idx[k], c])
                };
                flat = Some(match flat {
                    None => term,
                    Some(f) => g.mk(Op::Add, &[f, term]),
                });
            }
            let flat = flat.unwrap_or_else(|| ix(g, 0));
            // Delinearize in the old shape: (flat // st) mod s, without the
            // mod on the outermost non-trivial dim.
            let mut out = Vec::with_capacity(from.len());
            let mut st = elements(from);
            let mut outer = true;
            for &s in from {
                st /= s;
                if s == 1 {
                    out.push(ix(g, 0));
                    continue;
                }
                let q = if st == 1 {
                    flat
                } else {
                    let c = ix(g, st);
                    g.mk(fam.quotient(), &[flat, c])
                };
                let j = if outer {
                    q
                } else {
                    let c = ix(g, s);
                    g.mk(fam.remainder().expect("a paired family"), &[q, c])
                };
                outer = false;
                out.push(j);
            }
            out
        }
        Norm::Permute { perm } => {
            let mut out = vec![NodeId::NONE; idx.len()];
            for (k, &p) in perm.iter().enumerate() {
                out[p] = idx[k];
            }
            out
        }
        Norm::Expand { dim, insert } => {
            let mut out = idx;
            if *insert {
                out.remove(*dim);
            } else {
                out[*dim] = ix(g, 0);
            }
            out
        }
        Norm::Pad { amounts, from } => idx
            .iter()
            .enumerate()
            .map(|(d, &i)| {
                let (b, a) = amounts[d];
                if b > 0 {
                    let c = ix(g, b);
                    conds.push(g.mk(Op::Le, &[c, i]));
                }
                if a > 0 {
                    let c = ix(g, b + from[d]);
                    conds.push(g.mk(Op::Lt, &[i, c]));
                }
                if b > 0 {
                    let c = ix(g, b);
                    g.mk(Op::Sub, &[i, c])
                } else {
                    i
                }
            })
            .collect(),
        Norm::Shrink { lo } => idx
            .iter()
            .zip(lo)
            .map(|(&i, &l)| {
                if l > 0 {
                    let c = ix(g, l);
                    g.mk(Op::Add, &[i, c])
                } else {
                    i
                }
            })
            .collect(),
        Norm::Flip { dims, from } => {
            let mut out = idx;
            for &d in dims {
                let c = ix(g, from[d] - 1);
                out[d] = g.mk(Op::Sub, &[c, out[d]]);
            }
            out
        }
        Norm::Stride { steps } => idx
            .iter()
            .zip(steps)
            .map(|(&i, &k)| {
                if k > 1 {
                    let c = ix(g, k);
                    g.mk(Op::Mul, &[i, c])
                } else {
                    i
                }
            })
            .collect(),
    }
}

/// Copies the subgraph of `roots` into `to`, building each variable with
/// `var`: substitution (a variable replaced by an expression) and renaming
/// in one walk. Nodes the roots do not reach are left behind.
fn rebuild(
    from: &Graph,
    roots: &[NodeId],
    to: &mut Graph,
    var: &mut dyn FnMut(&mut Graph, &VarDecl) -> NodeId,
) -> Vec<NodeId> {
    let mut map = vec![NodeId::NONE; from.len()];
    for id in from.reachable(roots) {
        let n = from.node(id);
        let new = match n.op {
            Op::Var(v) => var(to, from.var(v)),
            Op::Const(c) => to.cnst(c, n.dtype),
            Op::Invalid => to.invalid(),
            Op::Cast => to.cast(n.dtype, map[n.src()[0].index()]),
            op => {
                let src: Vec<NodeId> = n.src().iter().map(|s| map[s.index()]).collect();
                to.mk(op, &src)
            }
        };
        map[id.index()] = new;
    }
    roots.iter().map(|r| map[r.index()]).collect()
}

/// Declares (or finds) a loop variable `[0, size-1]` and returns its node.
fn loop_var(g: &mut Graph, name: &str, size: i64) -> NodeId {
    let v = g
        .declare_var(name, DType::Index, 0, size - 1)
        .expect("loop variables are declared once with one range");
    g.var_node(v)
}

fn gate(g: &mut Graph, cond: NodeId, x: NodeId) -> NodeId {
    let inv = g.invalid();
    g.mk(Op::Where, &[cond, x, inv])
}

/// A loop range during tiling: a scratch variable name and its size.
#[derive(Clone, Debug)]
struct Loop {
    name: String,
    size: i64,
}

/// The split factor of an exact split of `n` near `k`: the largest divisor
/// of `n` in `2..=k`, else the smallest divisor above 1 (`n` itself when it
/// is prime: a size-1 outer range, as upcasting a whole axis leaves).
fn exact_factor(n: i64, k: i64) -> i64 {
    (2..=k.min(n))
        .rev()
        .find(|d| n % d == 0)
        .or_else(|| (2..=n).find(|d| n % d == 0))
        .unwrap_or(k)
}

impl TiledGenome {
    /// Builds the case; drops trailing view operations while the result has
    /// more than [`MAX_TILED_NODES`] nodes.
    pub fn build(&self) -> Case {
        let mut nviews = self.views.len().min(MAX_VIEW_OPS);
        loop {
            let case = self.build_with(nviews);
            if case.node_count() <= MAX_TILED_NODES || nviews == 0 {
                return case;
            }
            nviews -= 1;
        }
    }

    /// The base tensor: its shape, strides, and the offset that keeps
    /// every address of a negative stride in bounds.
    fn layout(&self) -> (Vec<i64>, Vec<i64>, i64) {
        let mut base: Vec<i64> = self
            .tensor
            .shape
            .iter()
            .take(MAX_RANK)
            .map(|&d| (d as i64).clamp(1, MAX_DIM))
            .collect();
        if base.is_empty() {
            base.push(1);
        }
        let strides: Vec<i64> = match &self.tensor.strides {
            Strides::Contiguous => {
                let mut st = vec![1i64; base.len()];
                for d in (0..base.len().saturating_sub(1)).rev() {
                    st[d] = st[d + 1] * base[d + 1];
                }
                st
            }
            Strides::Custom(s) => (0..base.len())
                .map(|d| s.get(d).copied().unwrap_or(1) as i64)
                .collect(),
        };
        let offset = self.tensor.offset as i64
            + base
                .iter()
                .zip(&strides)
                .filter(|(_, &st)| st < 0)
                .map(|(&s, &st)| -st * (s - 1))
                .sum::<i64>();
        (base, strides, offset)
    }

    fn build_with(&self, nviews: usize) -> Case {
        let fam = self.family;
        let (base, strides, offset) = self.layout();
        let mut desc = format!(
            "tiled {}: tensor {} strides {}",
            fam,
            fmt_list(&base),
            fmt_list(&strides)
        );
        if offset != 0 {
            desc.push_str(&format!(" offset {offset}"));
        }

        // Forward over the views: resolved ops and the final shape.
        let mut shape = base.clone();
        let mut ops = Vec::new();
        let mut view_desc = Vec::new();
        for op in self.views.iter().take(nviews) {
            if let Some((norm, to, d)) = normalize(op, &shape) {
                ops.push(norm);
                shape = to;
                view_desc.push(d);
            }
        }
        if !view_desc.is_empty() {
            desc.push_str(&format!("; views {}", view_desc.join(", ")));
        }

        // Backward from the loop variables of the final view to the buffer.
        let mut g = Graph::new();
        let mut loops: Vec<Loop> = shape
            .iter()
            .enumerate()
            .map(|(i, &s)| Loop {
                name: format!("l{i}"),
                size: s,
            })
            .collect();
        let mut idx: Vec<NodeId> = loops
            .iter()
            .map(|l| loop_var(&mut g, &l.name, l.size))
            .collect();
        let mut conds = Vec::new();
        for op in ops.iter().rev() {
            idx = back(&mut g, fam, op, idx, &mut conds);
        }
        let mut roots: Vec<NodeId> = if self.tuple {
            idx.clone()
        } else {
            vec![flat_address(&mut g, &idx, &strides, offset)]
        };
        if let Some((&first, rest)) = conds.split_first() {
            let valid = rest.iter().fold(first, |acc, &c| g.mk(Op::And, &[acc, c]));
            roots = roots.iter().map(|&r| gate(&mut g, valid, r)).collect();
        }

        // Tiling: substitute a range by outer*k + inner, gating when k does
        // not divide its size.
        let mut tile_desc = Vec::new();
        let mut fresh = 0;
        for t in self.tiles.iter().take(MAX_TILE_OPS) {
            let Some((g2, r2, d)) = apply_tile(&g, &roots, &mut loops, t, &mut fresh) else {
                break;
            };
            g = g2;
            roots = r2;
            tile_desc.push(d);
        }
        if !tile_desc.is_empty() {
            desc.push_str(&format!("; tiles {}", tile_desc.join(", ")));
        }
        if self.tuple {
            desc.push_str("; tuple of base indices");
        }

        // Final graph: loops named r0, r1, ... in loop order.
        let mut fin = Graph::new();
        let pos: FxHashMap<&str, usize> = loops
            .iter()
            .enumerate()
            .map(|(i, l)| (l.name.as_str(), i))
            .collect();
        for (i, l) in loops.iter().enumerate() {
            loop_var(&mut fin, &format!("r{i}"), l.size);
        }
        let roots = rebuild(&g, &roots, &mut fin, &mut |to, d| {
            let i = pos[d.name.as_str()];
            loop_var(to, &format!("r{i}"), d.hi + 1)
        });
        Case {
            graph: fin,
            roots,
            family: fam,
            description: desc,
        }
    }
}

/// Tiles one range of `loops` (in `g`'s `roots`): substitutes it by
/// `outer * k + inner`, gating the roots where `k` does not divide its
/// size. The new graph, its roots, and the step described; `None` when no
/// range is large enough to tile.
fn apply_tile(
    g: &Graph,
    roots: &[NodeId],
    loops: &mut Vec<Loop>,
    t: &TileOp,
    fresh: &mut usize,
) -> Option<(Graph, Vec<NodeId>, String)> {
    let eligible: Vec<usize> = (0..loops.len()).filter(|&i| loops[i].size >= 2).collect();
    let (Some(&first), Some(&last)) = (eligible.first(), eligible.last()) else {
        return None;
    };
    let (what, p, k, exact, inner_last) = match *t {
        TileOp::Split { range, k, exact } => (
            "split",
            eligible[range as usize % eligible.len()],
            k,
            exact,
            false,
        ),
        TileOp::Upcast { k, exact } => ("upcast", last, k, exact, true),
        TileOp::Unroll { k, exact } => ("unroll", first, k, exact, true),
    };
    let n = loops[p].size;
    // k = n would leave a size-1 outer range; only a range of 2 has
    // no other choice.
    let mut k = (k as i64).clamp(2, (n - 1).max(2));
    if exact {
        k = exact_factor(n, k);
    }
    let m = (n + k - 1) / k;
    let outer = Loop {
        name: format!("t{fresh}"),
        size: m,
    };
    let inner = Loop {
        name: format!("t{}", *fresh + 1),
        size: k,
    };
    *fresh += 2;

    let mut g2 = Graph::new();
    let o = loop_var(&mut g2, &outer.name, m);
    let i = loop_var(&mut g2, &inner.name, k);
    let kc = ix(&mut g2, k);
    let ok = g2.mk(Op::Mul, &[o, kc]);
    let repl = g2.mk(Op::Add, &[ok, i]);
    let target = loops[p].name.clone();
    let mut roots = rebuild(g, roots, &mut g2, &mut |to, d| {
        if d.name == target {
            repl
        } else {
            loop_var(to, &d.name, d.hi + 1)
        }
    });
    let gated = m * k != n;
    if gated {
        let nc = ix(&mut g2, n);
        let inside = g2.mk(Op::Lt, &[repl, nc]);
        roots = roots.iter().map(|&r| gate(&mut g2, inside, r)).collect();
    }
    let desc = format!(
        "{what} range {p} of {n} by {k}{}",
        if gated { " (gated)" } else { "" }
    );
    loops[p] = outer;
    if inner_last {
        loops.push(inner);
    } else {
        loops.insert(p + 1, inner);
    }
    Some((g2, roots, desc))
}

/// The flat address of a tensor element: the sum of each index times its
/// stride, plus the offset (zero strides and constant-zero indices left out).
fn flat_address(g: &mut Graph, idx: &[NodeId], strides: &[i64], offset: i64) -> NodeId {
    let mut flat: Option<NodeId> = None;
    for (&j, &st) in idx.iter().zip(strides) {
        if st == 0 || g.node(j).as_const() == Some(0) {
            continue;
        }
        let term = if st == 1 {
            j
        } else {
            let c = ix(g, st);
            g.mk(Op::Mul, &[j, c])
        };
        flat = Some(match flat {
            None => term,
            Some(f) => g.mk(Op::Add, &[f, term]),
        });
    }
    match (flat, offset) {
        (None, o) => ix(g, o),
        (Some(f), 0) => f,
        (Some(f), o) => {
            let c = ix(g, o);
            g.mk(Op::Add, &[f, c])
        }
    }
}
