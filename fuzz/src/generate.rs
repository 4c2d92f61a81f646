//! The two case generators of the fuzzer: tiled tensor views and random
//! expression trees.
//!
//! Each generator is split in two halves so that libFuzzer and the test
//! suite drive the *same* definition:
//!
//! - a **genome**: plain data ([`TiledGenome`], [`ExprGenome`], wrapped in
//!   [`Genome`]) that implements [`arbitrary::Arbitrary`] (bytes -> genome,
//!   for coverage-guided targets) and has proptest strategies
//!   ([`tiled_strategy`], [`expr_strategy`], [`strategy`]) producing the same
//!   types, so proptest can shrink a failing case field by field;
//! - [`build`]: one total function from a genome to a [`Case`], an engine
//!   graph. It accepts *any* genome value (out-of-range fields are clamped or
//!   taken modulo), so a hand-edited or mutated genome never panics.
//!
//! Campaigns need reproducibility from a single number, so
//! [`Case::from_seed`] feeds [`arbitrary::Unstructured`] with bytes from
//! splitmix64: the seed is the whole case.
//!
//! ## Tiled views ([`Generator::Tiled`])
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
//! ## Random expressions ([`Generator::Expr`])
//!
//! Trees of height at most [`MAX_EXPR_DEPTH`] over 1-4 `index` variables,
//! using every operation of the IR. Typing is by construction: every term is
//! built *at a requested dtype* and coerced when its natural type differs
//! (an integer where a bool is wanted becomes `x != 0`, a bool where an
//! integer is wanted becomes `where(b, 1, 0)`), so any genome is well typed.
//! The generators draw mostly terms of the wanted kind, so coercions stay a
//! minority of the nodes.
//! `invalid` only ever flows into `index` values (never through a cast into
//! `i32`/`i64`), since DESIGN.md defines it as an `index` value; comparisons
//! on it (unconstrained bools) are allowed, as the semantics defines them.
//!
//! Variables are narrow (low end -10..=100, width 0..=10, as peer fuzzers
//! use) most of the time, so domains are at most 11^4 points and exhaustive;
//! occasionally wide (`[-2^b, 2^b]`) or pressed against the i32/i64 limits,
//! where the oracle samples.

use arbitrary::{Arbitrary, Unstructured};
use engine::ir::{DType, Graph, NodeId, Op, VarDecl};
use proptest::strategy::{BoxedStrategy, Just, Strategy};
use rustc_hash::FxHashMap;
use std::fmt;

// ---- limits ---------------------------------------------------------------------

/// Most view operations in a tiled genome.
pub const MAX_VIEW_OPS: usize = 4;
/// Most tiling steps in a tiled genome.
pub const MAX_TILE_OPS: usize = 3;
/// Largest base tensor rank, and largest rank a view may reach.
pub const MAX_RANK: usize = 4;
/// Largest base tensor dimension.
pub const MAX_DIM: i64 = 64;
/// View operations that would grow the element count past this are skipped.
pub const MAX_VIEW_ELEMENTS: i64 = 1 << 24;
/// Upper bound on the domain (product of loop ranges) of a tiled case.
pub const MAX_TILED_DOMAIN: u128 = 1 << 32;
/// Upper bound on reachable nodes of a tiled case: trailing view operations
/// are dropped until the case fits.
pub const MAX_TILED_NODES: usize = 400;
/// Height (edges on the longest root-to-leaf path) of expression genomes.
pub const MAX_EXPR_DEPTH: usize = 6;
/// Most variables and roots of an expression genome.
pub const MAX_EXPR_VARS: usize = 4;
pub const MAX_EXPR_ROOTS: usize = 3;
/// Bytes of PRNG output behind one seed: far more than any genome consumes.
pub const SEED_BYTES: usize = 8192;

// ---- families, generators, cases --------------------------------------------------

/// Which division family a case uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Arbitrary)]
pub enum Family {
    /// `/` and `%`: truncating (C, Cranelift).
    Trunc,
    /// `//`, `mod` (and `ceildiv`): flooring (Python, tinygrad, XLA).
    Floor,
}

impl Family {
    pub const ALL: [Family; 2] = [Family::Trunc, Family::Floor];

    /// The quotient operation of the family.
    pub fn div(self) -> Op {
        match self {
            Family::Trunc => Op::Div,
            Family::Floor => Op::FloorDiv,
        }
    }

    /// The remainder operation of the family.
    pub fn rem(self) -> Op {
        match self {
            Family::Trunc => Op::Rem,
            Family::Floor => Op::Mod,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Family::Trunc => "trunc",
            Family::Floor => "floor",
        }
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The two generators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Arbitrary)]
pub enum Generator {
    /// Tensor views linearized to a buffer index, then tiled.
    Tiled,
    /// Random expression trees over every op.
    Expr,
}

impl Generator {
    pub const ALL: [Generator; 2] = [Generator::Tiled, Generator::Expr];

    pub fn name(self) -> &'static str {
        match self {
            Generator::Tiled => "tiled",
            Generator::Expr => "expr",
        }
    }
}

impl fmt::Display for Generator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One generated test case: a graph and its roots (one or more expressions,
/// a tuple like an XLA indexing map).
#[derive(Clone)]
pub struct Case {
    pub graph: Graph,
    pub roots: Vec<NodeId>,
    /// The division family the case uses. Tiled cases use only this one;
    /// expression cases too, unless their genome is `mixed` (then both
    /// appear and this is the genome's nominal family).
    pub family: Family,
    /// How the case was built, one line, for corpus headers.
    pub description: String,
}

impl Case {
    /// The case of `seed`: splitmix64 bytes through `arbitrary`, so a seed
    /// reproduces a case exactly (as long as the generator is unchanged;
    /// the corpus stores text for that reason).
    pub fn from_seed(generator: Generator, seed: u64) -> Case {
        build(&Genome::from_seed(generator, seed))
    }

    /// The case `bytes` decode to (the libFuzzer entry point). Never panics;
    /// bytes that run out decode as the smallest choices.
    pub fn from_bytes(generator: Generator, bytes: &[u8]) -> Case {
        build(&Genome::from_bytes(generator, bytes))
    }

    /// The program in the text format (`var` lines and `expr` lines).
    pub fn program(&self) -> String {
        engine::print::program(&self.graph, &self.roots)
    }

    /// The program with the description as a `#` header line: what the
    /// corpus stores.
    pub fn to_text(&self) -> String {
        format!("# {}\n{}", self.description, self.program())
    }

    /// Nodes reachable from the roots.
    pub fn node_count(&self) -> usize {
        self.graph.reachable(&self.roots).len()
    }

    /// Points in the iteration domain: the product of the ranges of the
    /// variables reachable from the roots (saturating).
    pub fn domain_size(&self) -> u128 {
        let g = &self.graph;
        let mut vars: Vec<u32> = g
            .reachable(&self.roots)
            .into_iter()
            .filter_map(|id| match g.node(id).op {
                Op::Var(v) => Some(v),
                _ => None,
            })
            .collect();
        vars.sort_unstable();
        vars.dedup();
        vars.iter().fold(1u128, |acc, &v| {
            let d = g.var(v);
            acc.saturating_mul((d.hi as i128 - d.lo as i128 + 1) as u128)
        })
    }
}

impl fmt::Debug for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `Graph` has no Debug; the text form is the readable one anyway.
        f.write_str(&self.to_text())
    }
}

impl fmt::Display for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_text())
    }
}

/// A genome of either generator.
#[derive(Clone, Debug, PartialEq, Eq, Arbitrary)]
pub enum Genome {
    Tiled(TiledGenome),
    Expr(ExprGenome),
}

impl Genome {
    pub fn generator(&self) -> Generator {
        match self {
            Genome::Tiled(_) => Generator::Tiled,
            Genome::Expr(_) => Generator::Expr,
        }
    }

    /// A genome of `generator` drawn from `u`.
    pub fn arbitrary_of(
        generator: Generator,
        u: &mut Unstructured<'_>,
    ) -> arbitrary::Result<Genome> {
        Ok(match generator {
            Generator::Tiled => Genome::Tiled(TiledGenome::arbitrary(u)?),
            Generator::Expr => Genome::Expr(ExprGenome::arbitrary(u)?),
        })
    }

    /// The genome `bytes` decode to; never fails (the custom `Arbitrary`
    /// impls only draw bounded integers, which default on exhausted input;
    /// the fallback is the empty input's genome).
    pub fn from_bytes(generator: Generator, bytes: &[u8]) -> Genome {
        Genome::arbitrary_of(generator, &mut Unstructured::new(bytes)).unwrap_or_else(|_| {
            Genome::arbitrary_of(generator, &mut Unstructured::new(&[]))
                .expect("the empty input decodes")
        })
    }

    /// The genome of `seed`.
    pub fn from_seed(generator: Generator, seed: u64) -> Genome {
        Genome::from_bytes(generator, &seed_bytes(seed, SEED_BYTES))
    }

    pub fn build(&self) -> Case {
        build(self)
    }
}

/// Builds the case a genome describes. Total: any genome value builds.
pub fn build(genome: &Genome) -> Case {
    match genome {
        Genome::Tiled(t) => t.build(),
        Genome::Expr(e) => e.build(),
    }
}

/// `len` bytes of splitmix64 output for `seed`.
pub fn seed_bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut state = seed;
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        out.extend_from_slice(&splitmix64(&mut state).to_le_bytes());
    }
    out.truncate(len);
    out
}

/// One step of splitmix64 (Steele, Lea, Flood 2014).
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A weighted choice: the index of the bucket a draw falls in. Exhausted
/// input draws 0, so bucket 0 must be the "smallest" choice (a leaf, no op).
fn pick(u: &mut Unstructured<'_>, weights: &[u32]) -> arbitrary::Result<usize> {
    let total: u32 = weights.iter().sum();
    let mut x = u.int_in_range(0..=total - 1)?;
    for (i, &w) in weights.iter().enumerate() {
        if x < w {
            return Ok(i);
        }
        x -= w;
    }
    Ok(weights.len() - 1)
}

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
        let family = Family::arbitrary(u)?;
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

fn family_strategy() -> BoxedStrategy<Family> {
    proptest::prop_oneof![Just(Family::Trunc), Just(Family::Floor)].boxed()
}

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

fn fmt_list<T: fmt::Debug>(xs: &[T]) -> String {
    let parts: Vec<String> = xs.iter().map(|x| format!("{x:?}")).collect();
    format!("[{}]", parts.join(", "))
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
                    g.mk(fam.div(), &[flat, c])
                };
                let j = if outer {
                    q
                } else {
                    let c = ix(g, s);
                    g.mk(fam.rem(), &[q, c])
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

    fn build_with(&self, nviews: usize) -> Case {
        let fam = self.family;
        // The base tensor.
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
            let mut flat: Option<NodeId> = None;
            for (&j, &st) in idx.iter().zip(&strides) {
                if st == 0 || g.node(j).as_const() == Some(0) {
                    continue;
                }
                let term = if st == 1 {
                    j
                } else {
                    let c = ix(&mut g, st);
                    g.mk(Op::Mul, &[j, c])
                };
                flat = Some(match flat {
                    None => term,
                    Some(f) => g.mk(Op::Add, &[f, term]),
                });
            }
            vec![match (flat, offset) {
                (None, o) => ix(&mut g, o),
                (Some(f), 0) => f,
                (Some(f), o) => {
                    let c = ix(&mut g, o);
                    g.mk(Op::Add, &[f, c])
                }
            }]
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
            let eligible: Vec<usize> = (0..loops.len()).filter(|&i| loops[i].size >= 2).collect();
            let (Some(&first), Some(&last)) = (eligible.first(), eligible.last()) else {
                break;
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
                name: format!("t{}", fresh + 1),
                size: k,
            };
            fresh += 2;

            let mut g2 = Graph::new();
            let o = loop_var(&mut g2, &outer.name, m);
            let i = loop_var(&mut g2, &inner.name, k);
            let kc = ix(&mut g2, k);
            let ok = g2.mk(Op::Mul, &[o, kc]);
            let repl = g2.mk(Op::Add, &[ok, i]);
            let target = loops[p].name.clone();
            roots = rebuild(&g, &roots, &mut g2, &mut |to, d| {
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
            g = g2;
            tile_desc.push(format!(
                "{what} range {p} of {n} by {k}{}",
                if gated { " (gated)" } else { "" }
            ));
            loops[p] = outer;
            if inner_last {
                loops.push(inner);
            } else {
                loops.insert(p + 1, inner);
            }
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

// ---- expression genome ----------------------------------------------------------------

/// A random expression program: variables and typed roots.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExprGenome {
    pub family: Family,
    /// Keep division ops as drawn (both families in one graph); otherwise
    /// each is mapped to `family`'s counterpart.
    pub mixed: bool,
    /// Variables r0, r1, ...; the first [`MAX_EXPR_VARS`] are used; empty
    /// means one narrow variable.
    pub vars: Vec<VarRange>,
    /// The first [`MAX_EXPR_ROOTS`] are used; empty means one `index` root `r0`.
    pub roots: Vec<Root>,
}

/// The bounds of an `index` variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VarRange {
    /// `[lo, lo + width]` with `lo` clamped to -10..=100, width to 0..=10.
    Narrow { lo: i8, width: u8 },
    /// `[-2^bits, 2^bits]`, bits clamped to 1..=62.
    Wide { bits: u8 },
    /// `width + 1` values (width clamped to 0..=10) at a dtype limit.
    NearLimit { edge: Edge, width: u8 },
}

/// A limit of a concrete dtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Arbitrary)]
pub enum Edge {
    I32Min,
    I32Max,
    I64Min,
    I64Max,
}

impl Edge {
    pub const ALL: [Edge; 4] = [Edge::I32Min, Edge::I32Max, Edge::I64Min, Edge::I64Max];

    fn value(self) -> i64 {
        match self {
            Edge::I32Min => i32::MIN as i64,
            Edge::I32Max => i32::MAX as i64,
            Edge::I64Min => i64::MIN,
            Edge::I64Max => i64::MAX,
        }
    }
}

impl VarRange {
    /// Inclusive bounds.
    pub fn bounds(&self) -> (i64, i64) {
        match *self {
            VarRange::Narrow { lo, width } => {
                let lo = (lo as i64).clamp(-10, 100);
                (lo, lo + (width as i64).min(10))
            }
            VarRange::Wide { bits } => {
                let b = 1i64 << (bits as u32).clamp(1, 62);
                (-b, b)
            }
            VarRange::NearLimit { edge, width } => {
                let w = (width as i64).min(10);
                let e = edge.value();
                if e < 0 {
                    (e, e + w)
                } else {
                    (e - w, e)
                }
            }
        }
    }
}

/// A root: the dtype it is built at and its term.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Root {
    pub dtype: IntTy,
    pub term: Term,
}

/// An integer dtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Arbitrary)]
pub enum IntTy {
    Index,
    I32,
    I64,
}

impl IntTy {
    pub const ALL: [IntTy; 3] = [IntTy::Index, IntTy::I32, IntTy::I64];

    pub fn dtype(self) -> DType {
        match self {
            IntTy::Index => DType::Index,
            IntTy::I32 => DType::I32,
            IntTy::I64 => DType::I64,
        }
    }
}

/// Picks one of `ops` from the input, consuming bytes exactly as
/// `#[derive(Arbitrary)]` does for a fieldless enum (so seeds keep their
/// cases).
fn arb_op(u: &mut Unstructured<'_>, ops: &[Op]) -> arbitrary::Result<Op> {
    let i = (u64::from(u32::arbitrary(u)?) * ops.len() as u64) >> 32;
    Ok(ops[i as usize])
}

/// An integer binary operation: one of the engine's `Op::INT_BINARY` that
/// is not a comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArithOp(pub Op);

impl ArithOp {
    pub fn all() -> Vec<ArithOp> {
        Op::INT_BINARY
            .iter()
            .filter(|o| !o.is_comparison())
            .map(|&o| ArithOp(o))
            .collect()
    }

    fn arbitrary(u: &mut Unstructured<'_>) -> arbitrary::Result<ArithOp> {
        let ops: Vec<Op> = ArithOp::all().into_iter().map(|o| o.0).collect();
        arb_op(u, &ops).map(ArithOp)
    }

    /// The engine op, with division ops mapped into `fam` unless `mixed`:
    /// quotients to the family's quotient (`ceildiv` is floor-family and
    /// becomes `/` under trunc), remainders to its remainder.
    fn op(self, fam: Family, mixed: bool) -> Op {
        if mixed {
            return self.0;
        }
        match (self.0, fam) {
            (Op::FloorDiv | Op::CeilDiv, Family::Trunc) => Op::Div,
            (Op::Mod, Family::Trunc) => Op::Rem,
            (Op::Div, Family::Floor) => Op::FloorDiv,
            (Op::Rem, Family::Floor) => Op::Mod,
            (op, _) => op,
        }
    }
}

/// A comparison: one of the engine's `Op::INT_BINARY` comparisons.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CmpOp(pub Op);

impl CmpOp {
    pub fn all() -> Vec<CmpOp> {
        Op::INT_BINARY
            .iter()
            .filter(|o| o.is_comparison())
            .map(|&o| CmpOp(o))
            .collect()
    }

    fn arbitrary(u: &mut Unstructured<'_>) -> arbitrary::Result<CmpOp> {
        let ops: Vec<Op> = CmpOp::all().into_iter().map(|o| o.0).collect();
        arb_op(u, &ops).map(CmpOp)
    }

    fn op(self) -> Op {
        self.0
    }
}

/// Binary bool operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Arbitrary)]
pub enum LogicOp {
    And,
    Or,
    Xor,
}

impl LogicOp {
    pub const ALL: [LogicOp; 3] = [LogicOp::And, LogicOp::Or, LogicOp::Xor];

    fn op(self) -> Op {
        match self {
            LogicOp::And => Op::And,
            LogicOp::Or => Op::Or,
            LogicOp::Xor => Op::Xor,
        }
    }
}

/// A constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Constant {
    /// -16..=16 as drawn (0 is a zero divisor under a division).
    Small(i8),
    /// `±2^exp`, exp clamped to 0..=62.
    Pow2 { exp: u8, neg: bool },
    /// A dtype limit moved `inward` (0..=2) toward zero.
    Edge { edge: Edge, inward: u8 },
}

impl Constant {
    pub fn value(self) -> i64 {
        match self {
            Constant::Small(v) => v as i64,
            Constant::Pow2 { exp, neg } => {
                let v = 1i64 << (exp as u32).min(62);
                if neg {
                    -v
                } else {
                    v
                }
            }
            Constant::Edge { edge, inward } => {
                let e = edge.value();
                let d = (inward as i64).min(2);
                if e < 0 {
                    e + d
                } else {
                    e - d
                }
            }
        }
    }
}

/// An expression tree. Every term builds at every dtype (see the module
/// docs for the coercions), so no combination is ill typed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Term {
    /// Variable `i % count`.
    Var(u8),
    Const(Constant),
    /// `invalid` (where an `index` value may be invalid; `0` elsewhere).
    Invalid,
    Neg(Box<Term>),
    Not(Box<Term>),
    Arith(ArithOp, Box<Term>, Box<Term>),
    /// A comparison with operands built at the given dtype.
    Cmp(CmpOp, IntTy, Box<Term>, Box<Term>),
    Logic(LogicOp, Box<Term>, Box<Term>),
    Where(Box<Term>, Box<Term>, Box<Term>),
    /// `where(cond, x, invalid)`: the gate tiling and padding produce.
    Gate(Box<Term>, Box<Term>),
    /// The operand built at the given dtype, then cast to the wanted one.
    Cast(IntTy, Box<Term>),
}

impl Term {
    /// Height: edges on the longest path to a leaf.
    pub fn depth(&self) -> usize {
        self.children()
            .iter()
            .map(|c| 1 + c.depth())
            .max()
            .unwrap_or(0)
    }

    /// Terms in the tree.
    pub fn size(&self) -> usize {
        1 + self.children().iter().map(|c| c.size()).sum::<usize>()
    }

    fn children(&self) -> Vec<&Term> {
        match self {
            Term::Var(_) | Term::Const(_) | Term::Invalid => vec![],
            Term::Neg(a) | Term::Not(a) | Term::Cast(_, a) => vec![a],
            Term::Arith(_, a, b)
            | Term::Cmp(_, _, a, b)
            | Term::Logic(_, a, b)
            | Term::Gate(a, b) => {
                vec![a, b]
            }
            Term::Where(c, a, b) => vec![c, a, b],
        }
    }
}

// ---- expression arbitrary ---------------------------------------------------------------

impl<'a> Arbitrary<'a> for ExprGenome {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let family = Family::arbitrary(u)?;
        let mixed = pick(u, &[3, 1])? == 1;
        let nvars = u.int_in_range(1..=MAX_EXPR_VARS)?;
        let vars = (0..nvars)
            .map(|_| VarRange::arbitrary(u))
            .collect::<arbitrary::Result<_>>()?;
        let nroots = 1 + pick(u, &[6, 2, 1])?;
        let roots = (0..nroots)
            .map(|_| Root::arbitrary(u))
            .collect::<arbitrary::Result<_>>()?;
        Ok(ExprGenome {
            family,
            mixed,
            vars,
            roots,
        })
    }
}

impl<'a> Arbitrary<'a> for VarRange {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(match pick(u, &[37, 2, 1])? {
            0 => VarRange::Narrow {
                lo: u.int_in_range(-10..=100)?,
                width: u.int_in_range(0..=10)?,
            },
            1 => VarRange::Wide {
                bits: if pick(u, &[1, 1])? == 0 {
                    20
                } else {
                    u.int_in_range(1..=62)?
                },
            },
            _ => VarRange::NearLimit {
                edge: Edge::arbitrary(u)?,
                width: u.int_in_range(0..=10)?,
            },
        })
    }
}

impl<'a> Arbitrary<'a> for Root {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let dtype = arb_int_ty(u, 6)?;
        Ok(Root {
            dtype,
            term: arb_term(u, 0, Kind::Int)?,
        })
    }
}

impl<'a> Arbitrary<'a> for Constant {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(match pick(u, &[8, 2, 1])? {
            0 => Constant::Small(u.int_in_range(-16..=16)?),
            1 => Constant::Pow2 {
                exp: u.int_in_range(0..=62)?,
                neg: bool::arbitrary(u)?,
            },
            _ => Constant::Edge {
                edge: Edge::arbitrary(u)?,
                inward: u.int_in_range(0..=2)?,
            },
        })
    }
}

impl<'a> Arbitrary<'a> for Term {
    /// An integer-valued tree of height at most [`MAX_EXPR_DEPTH`].
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        arb_term(u, 0, Kind::Int)
    }
}

/// What a position in a tree wants, so the generators mostly draw terms of
/// that kind: the builder would coerce any term, but every coercion adds
/// `!= 0` or `where(b, 1, 0)` noise that real compilers do not emit. A
/// small weight for the other kind keeps coercions covered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Int,
    Bool,
}

/// Leaf weights grow with depth (trees of tens of nodes); bucket 0 is the
/// leaf in every table so that exhausted input ends the recursion.
fn leaf_weight(depth: usize) -> u32 {
    1 + 2 * depth as u32
}

/// Int positions (after the leaf): arith, neg, where, gate, cast, a bool term.
const INT_WEIGHTS: [u32; 6] = [6, 1, 2, 1, 1, 1];
/// Bool positions (after the leaf): cmp, logic, not, where, an int term.
const BOOL_WEIGHTS: [u32; 5] = [4, 2, 1, 1, 1];

fn arb_int_ty(u: &mut Unstructured<'_>, index_weight: u32) -> arbitrary::Result<IntTy> {
    Ok(match pick(u, &[index_weight, 1, 1])? {
        0 => IntTy::Index,
        1 => IntTy::I32,
        _ => IntTy::I64,
    })
}

fn arb_leaf(u: &mut Unstructured<'_>, kind: Kind) -> arbitrary::Result<Term> {
    let weights: &[u32] = match kind {
        Kind::Int => &[5, 3, 1],
        // A bool leaf is a constant (true/false) or `var != 0`.
        Kind::Bool => &[1, 1],
    };
    Ok(match pick(u, weights)? {
        0 => Term::Var(u.int_in_range(0..=MAX_EXPR_VARS as u8 - 1)?),
        1 => Term::Const(Constant::arbitrary(u)?),
        _ => Term::Invalid,
    })
}

/// A term of (mostly) `kind` at `depth`; a leaf at [`MAX_EXPR_DEPTH`].
fn arb_term(u: &mut Unstructured<'_>, depth: usize, kind: Kind) -> arbitrary::Result<Term> {
    if depth >= MAX_EXPR_DEPTH {
        return arb_leaf(u, kind);
    }
    let sub = |u: &mut Unstructured<'_>, k: Kind| arb_term(u, depth + 1, k).map(Box::new);
    let lw = leaf_weight(depth);
    Ok(match kind {
        Kind::Int => {
            let [w1, w2, w3, w4, w5, w6] = INT_WEIGHTS;
            match pick(u, &[lw, w1, w2, w3, w4, w5, w6])? {
                0 => arb_leaf(u, kind)?,
                1 => Term::Arith(
                    ArithOp::arbitrary(u)?,
                    sub(u, Kind::Int)?,
                    sub(u, Kind::Int)?,
                ),
                2 => Term::Neg(sub(u, Kind::Int)?),
                3 => Term::Where(sub(u, Kind::Bool)?, sub(u, Kind::Int)?, sub(u, Kind::Int)?),
                4 => Term::Gate(sub(u, Kind::Bool)?, sub(u, Kind::Int)?),
                5 => Term::Cast(arb_int_ty(u, 1)?, sub(u, Kind::Int)?),
                _ => *sub(u, Kind::Bool)?,
            }
        }
        Kind::Bool => {
            let [w1, w2, w3, w4, w5] = BOOL_WEIGHTS;
            match pick(u, &[lw, w1, w2, w3, w4, w5])? {
                0 => arb_leaf(u, kind)?,
                1 => {
                    let op = CmpOp::arbitrary(u)?;
                    let ty = arb_int_ty(u, 4)?;
                    Term::Cmp(op, ty, sub(u, Kind::Int)?, sub(u, Kind::Int)?)
                }
                2 => Term::Logic(
                    LogicOp::arbitrary(u)?,
                    sub(u, Kind::Bool)?,
                    sub(u, Kind::Bool)?,
                ),
                3 => Term::Not(sub(u, Kind::Bool)?),
                4 => Term::Where(
                    sub(u, Kind::Bool)?,
                    sub(u, Kind::Bool)?,
                    sub(u, Kind::Bool)?,
                ),
                _ => *sub(u, Kind::Int)?,
            }
        }
    })
}

// ---- expression strategies -----------------------------------------------------------------

fn edge_strategy() -> BoxedStrategy<Edge> {
    proptest::sample::select(Edge::ALL.to_vec()).boxed()
}

fn constant_strategy() -> BoxedStrategy<Constant> {
    proptest::prop_oneof![
        8 => (-16i8..=16).prop_map(Constant::Small),
        2 => (0u8..=62, proptest::bool::ANY).prop_map(|(exp, neg)| Constant::Pow2 { exp, neg }),
        1 => (edge_strategy(), 0u8..=2).prop_map(|(edge, inward)| Constant::Edge { edge, inward }),
    ]
    .boxed()
}

fn var_range_strategy() -> BoxedStrategy<VarRange> {
    proptest::prop_oneof![
        37 => (-10i8..=100, 0u8..=10).prop_map(|(lo, width)| VarRange::Narrow { lo, width }),
        2 => proptest::prop_oneof![Just(20u8), 1u8..=62].prop_map(|bits| VarRange::Wide { bits }),
        1 => (edge_strategy(), 0u8..=10)
            .prop_map(|(edge, width)| VarRange::NearLimit { edge, width }),
    ]
    .boxed()
}

fn int_ty_strategy(index_weight: u32) -> BoxedStrategy<IntTy> {
    proptest::prop_oneof![
        index_weight => Just(IntTy::Index),
        1 => Just(IntTy::I32),
        1 => Just(IntTy::I64),
    ]
    .boxed()
}

fn leaf_strategy(kind: Kind) -> BoxedStrategy<Term> {
    let var = (0u8..MAX_EXPR_VARS as u8).prop_map(Term::Var);
    let cnst = constant_strategy().prop_map(Term::Const);
    match kind {
        Kind::Int => proptest::prop_oneof![5 => var, 3 => cnst, 1 => Just(Term::Invalid)].boxed(),
        Kind::Bool => proptest::prop_oneof![var, cnst].boxed(),
    }
}

/// Proptest strategies for integer-valued and bool-valued trees, by
/// remaining height: `levels[h]` is `(int, bool)` of height at most `h`,
/// with the weights of the `Arbitrary` impl at depth `MAX_EXPR_DEPTH - h`.
/// Built bottom-up so each level is shared (strategies are reference
/// counted), not rebuilt per use.
fn term_levels() -> Vec<(BoxedStrategy<Term>, BoxedStrategy<Term>)> {
    let mut levels = vec![(leaf_strategy(Kind::Int), leaf_strategy(Kind::Bool))];
    for h in 1..=MAX_EXPR_DEPTH {
        let (i, b) = levels[h - 1].clone();
        let lw = leaf_weight(MAX_EXPR_DEPTH - h);
        let bi = || i.clone().prop_map(Box::new);
        let bb = || b.clone().prop_map(Box::new);
        let [w1, w2, w3, w4, w5, w6] = INT_WEIGHTS;
        let int = proptest::prop_oneof![
            lw => leaf_strategy(Kind::Int),
            w1 => (proptest::sample::select(ArithOp::all()), bi(), bi())
                .prop_map(|(o, x, y)| Term::Arith(o, x, y)),
            w2 => bi().prop_map(Term::Neg),
            w3 => (bb(), bi(), bi()).prop_map(|(c, x, y)| Term::Where(c, x, y)),
            w4 => (bb(), bi()).prop_map(|(c, x)| Term::Gate(c, x)),
            w5 => (int_ty_strategy(1), bi()).prop_map(|(t, x)| Term::Cast(t, x)),
            w6 => b.clone(),
        ]
        .boxed();
        let [w1, w2, w3, w4, w5] = BOOL_WEIGHTS;
        let boolean = proptest::prop_oneof![
            lw => leaf_strategy(Kind::Bool),
            w1 => (proptest::sample::select(CmpOp::all()), int_ty_strategy(4), bi(), bi())
                .prop_map(|(o, t, x, y)| Term::Cmp(o, t, x, y)),
            w2 => (proptest::sample::select(LogicOp::ALL.to_vec()), bb(), bb())
                .prop_map(|(o, x, y)| Term::Logic(o, x, y)),
            w3 => bb().prop_map(Term::Not),
            w4 => (bb(), bb(), bb()).prop_map(|(c, x, y)| Term::Where(c, x, y)),
            w5 => i.clone(),
        ]
        .boxed();
        levels.push((int, boolean));
    }
    levels
}

/// Proptest strategy for integer-valued expression trees of height at most
/// [`MAX_EXPR_DEPTH`], with the op mix of the `Arbitrary` impl.
pub fn term_strategy() -> BoxedStrategy<Term> {
    term_levels().swap_remove(MAX_EXPR_DEPTH).0
}

/// Proptest strategy for expression genomes.
pub fn expr_strategy() -> BoxedStrategy<ExprGenome> {
    use proptest::collection::vec;
    let root = (int_ty_strategy(6), term_strategy()).prop_map(|(dtype, term)| Root { dtype, term });
    (
        family_strategy(),
        proptest::prop_oneof![3 => Just(false), 1 => Just(true)],
        vec(var_range_strategy(), 1..=MAX_EXPR_VARS),
        vec(root, 1..=MAX_EXPR_ROOTS),
    )
        .prop_map(|(family, mixed, vars, roots)| ExprGenome {
            family,
            mixed,
            vars,
            roots,
        })
        .boxed()
}

/// Proptest strategy for genomes of `generator`.
pub fn strategy(generator: Generator) -> BoxedStrategy<Genome> {
    match generator {
        Generator::Tiled => tiled_strategy().prop_map(Genome::Tiled).boxed(),
        Generator::Expr => expr_strategy().prop_map(Genome::Expr).boxed(),
    }
}

// ---- expression builder ------------------------------------------------------------------

struct ExprBuilder {
    g: Graph,
    vars: Vec<NodeId>,
    fam: Family,
    mixed: bool,
}

impl ExprBuilder {
    fn zero(&mut self, dt: DType) -> NodeId {
        self.g.cnst(0, dt)
    }

    /// An integer where a bool is wanted: `x != 0`.
    fn truthy(&mut self, x: NodeId) -> NodeId {
        let z = self.zero(self.g.node(x).dtype);
        self.g.mk(Op::Ne, &[x, z])
    }

    /// A bool where an integer is wanted: `where(b, 1, 0)`.
    fn as_int(&mut self, b: NodeId, dt: DType) -> NodeId {
        let one = self.g.cnst(1, dt);
        let z = self.zero(dt);
        self.g.mk(Op::Where, &[b, one, z])
    }

    /// Builds `t` at dtype `want`. `allow_invalid`: an `invalid` may appear
    /// here as a value (false below a cast into `i32`/`i64`).
    fn term(&mut self, t: &Term, want: DType, allow_invalid: bool) -> NodeId {
        use Term::*;
        let is_bool_valued = matches!(t, Not(_) | Cmp(..) | Logic(..));
        let is_int_valued = matches!(
            t,
            Var(_) | Invalid | Neg(_) | Arith(..) | Gate(..) | Cast(..)
        );
        if want == DType::Bool && is_int_valued {
            // Comparisons absorb invalid (into unconstrained), so it may
            // appear again below.
            let x = self.term(t, DType::Index, true);
            return self.truthy(x);
        }
        if want.is_int() && is_bool_valued {
            let b = self.term(t, DType::Bool, allow_invalid);
            return self.as_int(b, want);
        }
        // Operands whose values flow into this node's value.
        let flow = allow_invalid && want == DType::Index;
        match t {
            Var(i) => {
                let v = self.vars[*i as usize % self.vars.len()];
                if want == DType::Index {
                    v
                } else {
                    self.g.cast(want, v)
                }
            }
            Const(c) => {
                if want == DType::Bool {
                    self.g.bool_const(c.value() != 0)
                } else {
                    let (lo, hi) = want.bounds();
                    self.g.cnst(c.value().clamp(lo, hi), want)
                }
            }
            Invalid => {
                if flow {
                    self.g.invalid()
                } else {
                    self.zero(want)
                }
            }
            Neg(a) => {
                let a = self.term(a, want, flow);
                self.g.mk(Op::Neg, &[a])
            }
            Arith(op, a, b) => {
                let a = self.term(a, want, flow);
                let b = self.term(b, want, flow);
                self.g.mk(op.op(self.fam, self.mixed), &[a, b])
            }
            Cast(to, a) => {
                let a = self.term(a, to.dtype(), flow);
                self.g.cast(want, a)
            }
            Gate(c, a) => {
                let c = self.term(c, DType::Bool, true);
                let a = self.term(a, want, flow);
                let other = if flow {
                    self.g.invalid()
                } else {
                    self.zero(want)
                };
                self.g.mk(Op::Where, &[c, a, other])
            }
            Where(c, a, b) => {
                let c = self.term(c, DType::Bool, true);
                let a = self.term(a, want, flow);
                let b = self.term(b, want, flow);
                self.g.mk(Op::Where, &[c, a, b])
            }
            Not(a) => {
                let a = self.term(a, DType::Bool, true);
                self.g.mk(Op::Not, &[a])
            }
            Cmp(op, ty, a, b) => {
                let a = self.term(a, ty.dtype(), true);
                let b = self.term(b, ty.dtype(), true);
                self.g.mk(op.op(), &[a, b])
            }
            Logic(op, a, b) => {
                let a = self.term(a, DType::Bool, true);
                let b = self.term(b, DType::Bool, true);
                self.g.mk(op.op(), &[a, b])
            }
        }
    }
}

impl ExprGenome {
    /// Builds the case: variables r0, r1, ... then each root at its dtype.
    pub fn build(&self) -> Case {
        let mut ranges: Vec<VarRange> = self.vars.iter().take(MAX_EXPR_VARS).cloned().collect();
        if ranges.is_empty() {
            ranges.push(VarRange::Narrow { lo: 0, width: 0 });
        }
        let mut g = Graph::new();
        let vars: Vec<NodeId> = ranges
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let (lo, hi) = r.bounds();
                let v = g
                    .declare_var(&format!("r{i}"), DType::Index, lo, hi)
                    .expect("fresh names, non-empty bounds inside i64");
                g.var_node(v)
            })
            .collect();
        let mut b = ExprBuilder {
            g,
            vars,
            fam: self.family,
            mixed: self.mixed,
        };
        let default_root = [Root {
            dtype: IntTy::Index,
            term: Term::Var(0),
        }];
        let roots_in: &[Root] = if self.roots.is_empty() {
            &default_root
        } else {
            &self.roots[..self.roots.len().min(MAX_EXPR_ROOTS)]
        };
        let roots: Vec<NodeId> = roots_in
            .iter()
            .map(|r| b.term(&r.term, r.dtype.dtype(), true))
            .collect();
        let wide = ranges
            .iter()
            .filter(|r| !matches!(r, VarRange::Narrow { .. }))
            .count();
        let dtypes: Vec<&str> = roots_in.iter().map(|r| r.dtype.dtype().name()).collect();
        let depth = roots_in.iter().map(|r| r.term.depth()).max().unwrap_or(0);
        let description = format!(
            "expr {}{}: {} vars ({} wide or at a limit), roots {}, depth {}",
            self.family,
            if self.mixed { " (mixed families)" } else { "" },
            ranges.len(),
            wide,
            fmt_list(&dtypes).replace('"', ""),
            depth
        );
        Case {
            graph: b.g,
            roots,
            family: self.family,
            description,
        }
    }
}
