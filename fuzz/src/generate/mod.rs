//! The case generators of the fuzzer: tiled tensor views, random
//! expression trees, split sums (the canonical simplifiers' territory) and
//! the peers' own test cases, edited (seeded).
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
//! The tiled-view generator is [`tiled`], the expression generator [`expr`],
//! the fused-HLO generator [`hlo`].

mod expr;
pub mod hlo;
mod seeded;
mod splitsum;
mod tiled;

pub use expr::*;
pub use hlo::HloGenome;
pub use seeded::*;
pub use splitsum::*;
pub use tiled::*;

use crate::rng::seed_bytes;
use arbitrary::{Arbitrary, Unstructured};
use engine::ir::{Graph, NodeId};
pub use engine::op::Family;
use proptest::strategy::{BoxedStrategy, Just, Strategy};
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

/// The division family of a case: truncating (`/ %`, C and Cranelift) or
/// floor (`// mod`, and `ceildiv`: Python, tinygrad, XLA), drawn as the
/// derive of a two-variant enum would (so seeds keep their cases).
pub(crate) fn arb_family(u: &mut Unstructured<'_>) -> arbitrary::Result<Family> {
    let i = (u64::from(u32::arbitrary(u)?) * 2) >> 32;
    Ok(Family::PAIRED[i as usize])
}

/// The generators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Arbitrary)]
pub enum Generator {
    /// Tensor views linearized to a buffer index, then tiled.
    Tiled,
    /// Random expression trees over every op.
    Expr,
    /// Comparisons, min/max, where and products over split sums of both
    /// division families (the canonical simplifiers' territory).
    SplitSum,
    /// The peers' own test cases, edited just past their rules' conditions.
    Seeded,
    /// XLA's indexing maps of chains of HLO ops, composed (either
    /// direction, range and runtime variables, constraints).
    Hlo,
}

impl Generator {
    pub const ALL: [Generator; 5] = [
        Generator::Tiled,
        Generator::Expr,
        Generator::SplitSum,
        Generator::Seeded,
        Generator::Hlo,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Generator::Tiled => "tiled",
            Generator::Expr => "expr",
            Generator::SplitSum => "splitsum",
            Generator::Seeded => "seeded",
            Generator::Hlo => "hlo",
        }
    }

    pub fn by_name(s: &str) -> Option<Generator> {
        Generator::ALL.into_iter().find(|g| g.name() == s)
    }

    /// Its cases' roots are always integers (the index generators); the
    /// others may have a comparison for a root.
    pub fn int_roots(self) -> bool {
        matches!(self, Generator::Tiled | Generator::Expr | Generator::Hlo)
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

    /// [`Case::from_seed`] with a peer's rule instances among the seeded
    /// generator's seeds ([`SeededGenome::build_with`]).
    pub fn from_seed_with(generator: Generator, seed: u64, rule_seeds: &[RuleSeed]) -> Case {
        build_with(&Genome::from_seed(generator, seed), rule_seeds)
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
        crate::oracle::Domain::new(&self.graph, &self.roots).size()
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

/// A genome of any generator.
#[derive(Clone, Debug, PartialEq, Eq, Arbitrary)]
pub enum Genome {
    Tiled(TiledGenome),
    Expr(ExprGenome),
    SplitSum(SplitSumGenome),
    Seeded(SeededGenome),
    Hlo(HloGenome),
}

impl Genome {
    pub fn generator(&self) -> Generator {
        match self {
            Genome::Tiled(_) => Generator::Tiled,
            Genome::Expr(_) => Generator::Expr,
            Genome::SplitSum(_) => Generator::SplitSum,
            Genome::Seeded(_) => Generator::Seeded,
            Genome::Hlo(_) => Generator::Hlo,
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
            Generator::SplitSum => Genome::SplitSum(SplitSumGenome::arbitrary(u)?),
            Generator::Seeded => Genome::Seeded(SeededGenome::arbitrary(u)?),
            Generator::Hlo => Genome::Hlo(HloGenome::arbitrary(u)?),
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
    build_with(genome, &[])
}

/// [`build`] with a peer's rule instances among the seeded generator's
/// seeds.
pub fn build_with(genome: &Genome, rule_seeds: &[RuleSeed]) -> Case {
    match genome {
        Genome::Tiled(t) => t.build(),
        Genome::Expr(e) => e.build(),
        Genome::SplitSum(s) => s.build(),
        Genome::Seeded(s) => s.build_with(rule_seeds),
        Genome::Hlo(h) => h.build(),
    }
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

pub(crate) fn family_strategy() -> BoxedStrategy<Family> {
    proptest::prop_oneof![Just(Family::Trunc), Just(Family::Floor)].boxed()
}

pub(crate) fn fmt_list<T: fmt::Debug>(xs: &[T]) -> String {
    let parts: Vec<String> = xs.iter().map(|x| format!("{x:?}")).collect();
    format!("[{}]", parts.join(", "))
}

/// Proptest strategy for genomes of `generator`.
pub fn strategy(generator: Generator) -> BoxedStrategy<Genome> {
    match generator {
        Generator::Tiled => tiled_strategy().prop_map(Genome::Tiled).boxed(),
        Generator::Expr => expr_strategy().prop_map(Genome::Expr).boxed(),
        // Drawn from a seed: their fields are bounded choices, not
        // quantities proptest could shrink meaningfully.
        g @ (Generator::SplitSum | Generator::Seeded | Generator::Hlo) => {
            proptest::prelude::any::<u64>()
                .prop_map(move |s| Genome::from_seed(g, s))
                .boxed()
        }
    }
}
