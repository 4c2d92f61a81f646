//! The random-expression generator.
//!
//! Trees of height at most [`MAX_EXPR_DEPTH`] over 1-4 `index` variables,
//! using every operation of the IR. Typing is by construction: every term is
//! built *at a requested dtype* and coerced when its natural type differs
//! (an integer where a bool is wanted becomes `x != 0`, a bool where an
//! integer is wanted becomes `where(b, 1, 0)`), so any genome is well typed.
//! The generators draw mostly terms of the wanted kind, so coercions stay a
//! minority of the nodes.
//! `invalid` only ever flows into `index` values (never through a cast into
//! `i32`/`i64`), since docs/semantics.md defines it as an `index` value; comparisons
//! on it (unconstrained bools) are allowed, as the semantics defines them.
//!
//! Variables are narrow (low end -10..=100, width 0..=10, as peer fuzzers
//! use) most of the time, so domains are at most 11^4 points and exhaustive;
//! occasionally wide (`[-2^b, 2^b]`) or pressed against the i32/i64 limits,
//! where the oracle samples.

use super::{
    arb_family, family_strategy, fmt_list, pick, Case, Family, MAX_EXPR_DEPTH, MAX_EXPR_ROOTS,
    MAX_EXPR_VARS,
};
use arbitrary::{Arbitrary, Unstructured};
use engine::ir::{DType, Graph, NodeId, Op};
use engine::op::Class;
use proptest::strategy::{BoxedStrategy, Just, Strategy};

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

/// An integer binary operation: one of the op table's binary arithmetic
/// ops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArithOp(pub Op);

impl ArithOp {
    pub fn all() -> Vec<ArithOp> {
        Op::int_binary().map(ArithOp).collect()
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
        use engine::op::Family as F;
        let to = match (self.0.info().division, fam) {
            (Some((F::Floor | F::Ceil, part)), Family::Trunc) => Op::division(F::Trunc, part),
            (Some((F::Trunc, part)), Family::Floor) => Op::division(F::Floor, part),
            _ => None,
        };
        to.unwrap_or(self.0)
    }
}

/// A comparison: one of the op table's comparisons.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CmpOp(pub Op);

impl CmpOp {
    pub fn all() -> Vec<CmpOp> {
        Op::of_class(Class::Compare).map(CmpOp).collect()
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
        let family = arb_family(u)?;
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
