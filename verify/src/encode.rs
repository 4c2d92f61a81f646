//! The SMT encoding of the semantics: the Z3 mirror of `engine::interp`.
//!
//! Two encodings of one semantics:
//!
//! - [`Mode::Bv`]: bit-exact bitvectors, each value as wide as its dtype
//!   (`index` is W bits). `bvsdiv`/`bvsrem` truncate and are unspecified at
//!   zero in SMT-LIB, so division by zero and `MIN / -1` are marked undefined
//!   explicitly; floor and ceiling division get a sign fix-up; overflow of
//!   `index` arithmetic uses Z3's no-overflow predicates.
//! - [`Mode::Int`]: mathematical integers bounded to the width: every `index`
//!   value is an `Int` that must lie in the signed W-bit range (outside it is
//!   an overflow), `i32`/`i64` wrap by Euclidean modulo. Z3's `div`/`mod` are
//!   Euclidean, so both division families are built from them with `ite` on
//!   the signs. Bitvector division by a symbolic divisor does not finish at
//!   32 and 64 bits; this encoding does.
//!
//! Every value is an [`SVal`]: defined (no undefined behaviour in it or
//! below it: undefined is whole-evaluation), invalid, unconstrained, and the
//! value itself. What an op does with invalid, unconstrained and undefined
//! is `engine::semantics`, written once; this module provides its
//! primitives on Z3 terms ([`Enc::apply`] runs it), and a test compares the
//! result with the interpreter on every 8-bit operand pair.

use crate::poly::Poly;
use engine::dtype::Width;
use engine::ir::{DType, Op};
use engine::ranges::MAX_SHIFT;
use engine::semantics::{self, Model, Partial, Prims, Sem, Ub, Value};
use z3::ast::{Bool, Int, BV};

/// Which theory encodes integers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mode {
    /// Bit-exact bitvectors.
    Bv,
    /// Integers bounded to the width.
    Int,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Bv => "bitvector",
            Mode::Int => "bounded-integer",
        }
    }
}

/// An integer term in the encoding's theory: a polynomial over integer
/// atoms (see [`crate::poly`]) or a bitvector.
#[derive(Clone, Debug)]
pub enum Num {
    I(Poly),
    B(BV),
}

impl Num {
    pub fn poly(&self) -> &Poly {
        match self {
            Num::I(p) => p,
            Num::B(_) => unreachable!("bitvector where an integer was expected"),
        }
    }

    pub fn bv(&self) -> &BV {
        match self {
            Num::B(b) => b,
            Num::I(_) => unreachable!("integer where a bitvector was expected"),
        }
    }
}

/// A value: an integer or a bool term.
#[derive(Clone, Debug)]
pub enum Term {
    N(Num),
    B(Bool),
}

impl Term {
    pub fn num(&self) -> &Num {
        match self {
            Term::N(n) => n,
            Term::B(_) => unreachable!("bool where an integer was expected"),
        }
    }

    pub fn bool(&self) -> &Bool {
        match self {
            Term::B(b) => b,
            Term::N(_) => unreachable!("integer where a bool was expected"),
        }
    }
}

/// A symbolic value with its definedness and validity (docs/semantics.md).
#[derive(Clone, Debug)]
pub struct SVal {
    /// No undefined behaviour in this node or any node below it.
    pub def: Bool,
    /// A masked lane (integers only; always false for bools).
    pub inv: Bool,
    /// Computed from an invalid operand: any value is acceptable.
    pub unc: Bool,
    pub val: Term,
}

impl SVal {
    /// Neither invalid nor unconstrained.
    pub fn valid(&self) -> Bool {
        Bool::and(&[self.inv.not(), self.unc.not()])
    }

    /// The flags and value, as the semantics sees them.
    pub fn sem(&self) -> Sem<Num, Bool> {
        Sem {
            inv: self.inv.clone(),
            unc: self.unc.clone(),
            val: match &self.val {
                Term::N(n) => Value::Int(n.clone()),
                Term::B(b) => Value::Bool(b.clone()),
            },
        }
    }

    fn from_sem(def: Bool, s: Sem<Num, Bool>) -> SVal {
        SVal {
            def,
            inv: s.inv,
            unc: s.unc,
            val: match s.val {
                Value::Int(n) => Term::N(n),
                Value::Bool(b) => Term::B(b),
            },
        }
    }
}

/// The encoder for one theory and width.
#[derive(Clone, Copy, Debug)]
pub struct Enc {
    pub mode: Mode,
    /// The width W of `index`.
    pub width: u32,
    /// What partial ops do (undefined, except for a peer that says
    /// otherwise).
    pub partial: Partial,
    /// `index` stands for the unbounded integers ([`Model::unbounded`]).
    pub unbounded: bool,
    /// Where `index` values lie (integer theory: the width's range, a
    /// symbolic one, or none).
    pub index: IndexRange,
    /// How a remainder by a symbolic divisor is written (integer theory).
    pub remainders: Remainders,
}

/// How the integer theory writes a remainder by a symbolic divisor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Remainders {
    /// Its numerator less a multiple of the divisor (Euclid's
    /// decomposition), so that a remainder taken again, or a quotient
    /// taken, by a divisor of that divisor splits like any multiple:
    /// `(x mod (C*K)) mod C` is `(x - C*K*q) mod C`, which is `x mod C`.
    Decomposed,
    /// The Euclidean remainder's atom, whose bounds the solver knows:
    /// where no remainder is divided again the easier term (issue 39's
    /// `(x * C0) % C1 => (x % (C1 / C0)) * C0`: 3 s, against 20 s and
    /// more decomposed).
    Atom,
}

/// Where the integer theory's `index` values lie.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexRange {
    /// The signed range of the encoding's width.
    Width,
    /// Width-generic: `[MIN, MAX]` for a symbolic `MAX >= 127` and
    /// `MIN = -MAX - 1`, so one query stands for every width `W >= 8` at
    /// once (`width` is then nominal: see [`Enc::generic`]).
    Generic,
    /// Nowhere bounded: `index` is the mathematical integers, as a peer
    /// whose integers are unbounded (tinygrad's Python ints) computes
    /// them; nothing overflows (see [`Enc::unbounded_integers`]).
    Unbounded,
}

/// The symbol of `index`'s MAX in a width-generic query.
pub const INDEX_MAX: &str = "index.MAX";

fn f() -> Bool {
    Bool::from_bool(false)
}

/// Conjunction, folding constants (so that the always-valid parts of a
/// query add nothing to it).
fn and(v: &[Bool]) -> Bool {
    if v.iter().any(|b| b.as_bool() == Some(false)) {
        return f();
    }
    let rest: Vec<&Bool> = v.iter().filter(|b| b.as_bool() != Some(true)).collect();
    match rest.as_slice() {
        [] => Bool::from_bool(true),
        [one] => (*one).clone(),
        _ => Bool::and(&rest),
    }
}

/// Disjunction, folding constants.
fn or(v: &[Bool]) -> Bool {
    if v.iter().any(|b| b.as_bool() == Some(true)) {
        return Bool::from_bool(true);
    }
    let rest: Vec<&Bool> = v.iter().filter(|b| b.as_bool() != Some(false)).collect();
    match rest.as_slice() {
        [] => f(),
        [one] => (*one).clone(),
        _ => Bool::or(&rest),
    }
}

fn not(a: &Bool) -> Bool {
    match a.as_bool() {
        Some(b) => Bool::from_bool(!b),
        None => a.not(),
    }
}

impl Enc {
    pub fn new(mode: Mode, width: u32) -> Enc {
        Enc {
            mode,
            width,
            partial: Partial::Undefined,
            unbounded: false,
            index: IndexRange::Width,
            remainders: Remainders::Decomposed,
        }
    }

    /// The width-generic encoding: bounded integers whose `index` bounds
    /// are symbolic (`MIN = -MAX - 1`, `MAX >= 127`), so that an unsat
    /// query is a proof at every width `W >= 8` (each such width's bounds
    /// are one model of the symbols). Only for queries that nothing else
    /// ties to a width: no shift, `&` or cast (their semantics count bits),
    /// no `index` literal outside the 8-bit range; the nominal width 64 is
    /// what the semantics' width-dependent cases would see, and they are
    /// excluded by [`crate::prove::width_generic_obstacle`].
    pub fn generic() -> Enc {
        Enc {
            index: IndexRange::Generic,
            ..Enc::new(Mode::Int, 64)
        }
    }

    /// The unbounded-integer encoding: `index` is the mathematical
    /// integers (no value overflows, an unconstrained operand is any
    /// integer: [`Model::unbounded`]), both division families exact, so
    /// an unsat query is a proof for a peer whose integers are unbounded
    /// even where every fixed width has a counterexample that wraps.
    /// Only for queries no width enters: no shift or `&` (their semantics
    /// count bits), no guard reading `index`'s bounds
    /// ([`crate::prove::unbounded_obstacle`]); the nominal width 64 is
    /// what a counterexample is realized at.
    pub fn unbounded_integers() -> Enc {
        Enc {
            index: IndexRange::Unbounded,
            unbounded: true,
            ..Enc::new(Mode::Int, 64)
        }
    }

    /// Width-generic ([`IndexRange::Generic`]).
    pub fn is_generic(&self) -> bool {
        self.index == IndexRange::Generic
    }

    /// `index` unbounded ([`IndexRange::Unbounded`]).
    pub fn is_unbounded_integers(&self) -> bool {
        self.index == IndexRange::Unbounded
    }

    /// The cache's and the SMT-LIB files' name of this encoding.
    pub fn label(&self) -> String {
        match self.index {
            IndexRange::Generic => format!("{:?}/generic", self.mode),
            IndexRange::Unbounded => format!("{:?}/unbounded", self.mode),
            IndexRange::Width => format!("{:?}/{}", self.mode, self.width),
        }
    }

    /// The encoding of model `m`.
    pub fn of_model(mode: Mode, m: Model) -> Enc {
        Enc {
            mode,
            width: m.width.0,
            partial: m.partial,
            unbounded: m.unbounded,
            index: IndexRange::Width,
            remainders: Remainders::Decomposed,
        }
    }

    /// The model this encoding encodes.
    pub fn model(&self) -> Model {
        Model {
            width: Width(self.width),
            partial: self.partial,
            unbounded: self.unbounded,
        }
    }

    /// Bits of a dtype's values in this encoding.
    pub fn bits(&self, dt: DType) -> u32 {
        match dt {
            DType::Index => self.width,
            DType::I32 => 32,
            DType::I64 => 64,
            DType::Bool => 1,
        }
    }

    /// Inclusive value bounds of a dtype at this width; for `index` in a
    /// width-generic encoding, the bounds every width `W >= 8` includes
    /// (the 8-bit ones): the symbolic bounds are [`Enc::bound_nums`]; in
    /// the unbounded-integer encoding, the nominal width's (what a
    /// counterexample is realized at: `index` itself has none).
    pub fn bounds(&self, dt: DType) -> (i128, i128) {
        if self.index == IndexRange::Generic && dt == DType::Index {
            return engine::dtype::Width(8).dtype_bounds(dt);
        }
        engine::dtype::Width(self.width).dtype_bounds(dt)
    }

    /// Inclusive value bounds of a dtype as terms: numerals, or for
    /// `index` in a width-generic encoding `-MAX - 1` and `MAX`; `None`
    /// for `index` in the unbounded-integer encoding.
    pub fn bound_nums(&self, dt: DType) -> Option<(Num, Num)> {
        if self.index == IndexRange::Unbounded && dt == DType::Index {
            return None;
        }
        if self.index == IndexRange::Generic && dt == DType::Index {
            let max = Poly::atom(Int::new_const(INDEX_MAX));
            let min = max
                .neg()
                .and_then(|m| m.sub(&Poly::constant(1)))
                .expect("-MAX - 1 has small coefficients");
            return Some((Num::I(min), Num::I(max)));
        }
        let (lo, hi) = self.bounds(dt);
        Some((self.lit(lo, dt), self.lit(hi, dt)))
    }

    /// Whether `n` lies within dtype `dt`'s bounds (always, for `index`
    /// in the unbounded-integer encoding).
    pub fn fits(&self, n: &Num, dt: DType) -> Bool {
        match self.bound_nums(dt) {
            Some((lo, hi)) => and(&[self.le(&lo, n), self.le(n, &hi)]),
            None => Bool::from_bool(true),
        }
    }

    /// What a width-generic query assumes of its width: `MAX >= 127`
    /// (widths of 8 bits and more); true otherwise.
    pub fn width_premise(&self) -> Bool {
        if self.index != IndexRange::Generic {
            return Bool::from_bool(true);
        }
        Int::new_const(INDEX_MAX).ge(Int::from_i64(127))
    }

    /// A numeral of dtype `dt` (which must hold it, or wrap it for BV).
    pub fn lit(&self, v: i128, dt: DType) -> Num {
        match self.mode {
            Mode::Int => Num::I(Poly::constant(v)),
            Mode::Bv => Num::B(bv_lit(v, self.bits(dt))),
        }
    }

    /// A fresh integer constant of dtype `dt`, with the constraint that it
    /// lies in the dtype's range (for the integer theory).
    pub fn fresh_num(&self, name: &str, dt: DType) -> (Num, Bool) {
        match self.mode {
            Mode::Int => {
                let x = Num::I(Poly::atom(Int::new_const(name)));
                let c = self.fits(&x, dt);
                (x, c)
            }
            Mode::Bv => (
                Num::B(BV::new_const(name, self.bits(dt))),
                Bool::from_bool(true),
            ),
        }
    }

    pub fn eq(&self, a: &Num, b: &Num) -> Bool {
        match (a, b) {
            (Num::I(x), Num::I(y)) => match diff(x, y) {
                Some(d) => Bool::from_bool(d == 0),
                None => x.to_int().eq(y.to_int()),
            },
            (Num::B(x), Num::B(y)) => x.eq(y),
            _ => unreachable!("mixed theories"),
        }
    }

    pub fn lt(&self, a: &Num, b: &Num) -> Bool {
        match (a, b) {
            (Num::I(x), Num::I(y)) => match diff(x, y) {
                Some(d) => Bool::from_bool(d < 0),
                None => x.to_int().lt(y.to_int()),
            },
            (Num::B(x), Num::B(y)) => x.bvslt(y),
            _ => unreachable!("mixed theories"),
        }
    }

    pub fn le(&self, a: &Num, b: &Num) -> Bool {
        match (a, b) {
            (Num::I(x), Num::I(y)) => match diff(x, y) {
                Some(d) => Bool::from_bool(d <= 0),
                None => x.to_int().le(y.to_int()),
            },
            (Num::B(x), Num::B(y)) => x.bvsle(y),
            _ => unreachable!("mixed theories"),
        }
    }

    pub fn ite(&self, c: &Bool, a: &Num, b: &Num) -> Num {
        match (a, b) {
            (Num::I(x), Num::I(y)) => Num::I(poly_ite(c, x, y)),
            (Num::B(x), Num::B(y)) => Num::B(c.ite(x, y)),
            _ => unreachable!("mixed theories"),
        }
    }

    /// A defined, valid constant.
    pub fn constant(&self, v: i128, dt: DType) -> SVal {
        let mut p = Smt::new(*self);
        let s = semantics::constant(&mut p, v, dt);
        SVal::from_sem(p.defined(), s)
    }

    /// The masked value.
    pub fn invalid(&self) -> SVal {
        let mut p = Smt::new(*self);
        let s = semantics::invalid(&mut p);
        SVal::from_sem(p.defined(), s)
    }

    /// Applies `op` with result dtype `dt` to operands whose dtypes are
    /// `arg_dts`, by `engine::semantics::apply`: defined where every
    /// operand is and none of the op's undefined conditions holds.
    pub fn apply(&self, op: Op, dt: DType, args: &[SVal], arg_dts: &[DType]) -> SVal {
        let mut p = Smt::new(*self);
        let sems: Vec<Sem<Num, Bool>> = args.iter().map(SVal::sem).collect();
        let r = semantics::apply(&mut p, op, dt, &sems, arg_dts);
        let mut defs: Vec<Bool> = args.iter().map(|a| a.def.clone()).collect();
        defs.push(p.defined());
        SVal::from_sem(and(&defs), r)
    }

    /// Where defined `t` fails to refine defined `s` (`engine::semantics::
    /// refinement`): (validity differs, value differs). `dt` is the
    /// source's dtype.
    pub fn refinement(&self, s: &SVal, t: &SVal, dt: DType) -> (Bool, Bool) {
        let mut p = Smt::new(*self);
        semantics::refinement(&mut p, &s.sem(), &t.sem(), dt)
    }

    /// The result of an exact integer computation in dtype `dt` (integer
    /// theory): `index` must fit (else overflow), `i32`/`i64` wrap.
    fn int_result(&self, exact: Poly, dt: DType) -> (Num, Bool) {
        let e = Num::I(exact.clone());
        let fits = self.fits(&e, dt);
        match dt {
            DType::Index => (e, not(&fits)),
            _ => {
                if let Some(c) = exact.as_const() {
                    return (self.lit(engine::arith::wrap(c, self.bits(dt)), dt), f());
                }
                // In range, the value is itself (keeping its structure);
                // out of range, the Euclidean wrap.
                let bits = self.bits(dt);
                let half = Int::from_i128(1i128 << (bits - 1));
                let full = Int::from_i128(1i128 << bits);
                let x = exact.to_int();
                let wrapped = Int::sub(&[&Int::add(&[&x, &half]).modulo(&full), &half]);
                (Num::I(poly_ite(&fits, &exact, &Poly::atom(wrapped))), f())
            }
        }
    }

    /// `2^k` for a shift amount `k` (integer theory): a constant, or
    /// [`pow2_term`].
    fn pow2(&self, k: &Poly) -> Poly {
        match k.as_const() {
            Some(c) => Poly::constant(engine::arith::pow2(c.clamp(0, MAX_SHIFT)).unwrap_or(1)),
            None => Poly::atom(pow2_term(&k.to_int())),
        }
    }

    /// An integer op on valid operands: the semantics' `arith` primitive.
    pub fn arith(&self, op: Op, dt: DType, from: DType, args: &[Num]) -> (Num, Bool) {
        let a = &args[0];
        match op {
            Op::Cast => return self.cast(a, from, dt),
            Op::Neg => return self.neg(a, dt),
            _ => {}
        }
        let b = &args[1];
        let bounds = self.bound_nums(dt);
        // MIN / -1 (and //, ceildiv) has no result in any dtype: an index
        // overflow or a concrete-type division overflow. The unbounded
        // integers have no MIN.
        let min_neg_one = || match &bounds {
            Some((lo, _)) => and(&[self.eq(a, lo), self.eq(b, &self.lit(-1, dt))]),
            None => f(),
        };
        match (a, b) {
            (Num::I(x), Num::I(y)) => match op {
                Op::Add => self.int_result(padd(x, y), dt),
                Op::Sub => self.int_result(psub(x, y), dt),
                Op::Mul => self.int_result(pmul(x, y), dt),
                Op::Min => (Num::I(poly_ite(&self.le(a, b), x, y)), f()),
                Op::Max => (Num::I(poly_ite(&self.le(b, a), x, y)), f()),
                Op::Div | Op::FloorDiv | Op::CeilDiv => {
                    // A quotient of a value that fits its dtype, by a
                    // non-zero divisor, fits it too except MIN / -1 (every
                    // family: |q| <= |x| for |y| = 1, and |q| <=
                    // ceil(|x| / 2) otherwise), so that is its overflow: no
                    // range test of a nonlinear quotient for the solver to
                    // refute. The range is still worth knowing (a quotient
                    // feeds sums that must not overflow): it is stated as
                    // a fact, that theorem's instance.
                    let q = Num::I(int_quotient(op, x, y));
                    let zero = self.lit(0, dt);
                    let hyp = and(&[
                        self.fits(a, dt),
                        not(&self.eq(b, &zero)),
                        not(&min_neg_one()),
                    ]);
                    if bounds.is_some() {
                        note_fact(or(&[not(&hyp), self.fits(&q, dt)]));
                    }
                    (q, min_neg_one())
                }
                Op::Mod if fault::euclidean_mod() => (Num::I(euclid(x, y).1), f()),
                Op::Rem | Op::Mod => (Num::I(int_division(op, x, y, self.remainders)), f()),
                Op::Shl => self.int_result(pmul(x, &self.pow2(y)), dt),
                Op::Shr => (Num::I(int_quotient(Op::FloorDiv, x, &self.pow2(y))), f()),
                Op::BitAnd => (Num::I(self.int_bitand(x, y, dt)), f()),
                _ => unreachable!("{op:?} is not binary arithmetic"),
            },
            (Num::B(x), Num::B(y)) => {
                let index = dt == DType::Index;
                let zero = bv_lit(0, x.get_size());
                // Overflow of index arithmetic: the exact result, computed
                // one bit (sums) or twice as wide (products), must survive
                // truncation back to W bits. (Z3 4.8.12's
                // bvmul_no_underflow misjudges -127 * -1 at 8 bits: the
                // semantics test caught it.)
                let bits = x.get_size();
                let exact_ovf = |wide: BV, extra: u32| -> Bool {
                    if !index {
                        return f();
                    }
                    let back = wide.extract(bits - 1, 0).sign_ext(extra);
                    back.eq(&wide).not()
                };
                match op {
                    Op::Add => (
                        Num::B(x.bvadd(y)),
                        exact_ovf(x.sign_ext(1).bvadd(y.sign_ext(1)), 1),
                    ),
                    Op::Sub => (
                        Num::B(x.bvsub(y)),
                        exact_ovf(x.sign_ext(1).bvsub(y.sign_ext(1)), 1),
                    ),
                    Op::Mul => (
                        Num::B(x.bvmul(y)),
                        exact_ovf(x.sign_ext(bits).bvmul(y.sign_ext(bits)), bits),
                    ),
                    Op::Min => (Num::B(x.bvsle(y).ite(x, y)), f()),
                    Op::Max => (Num::B(x.bvsge(y).ite(x, y)), f()),
                    Op::Div | Op::FloorDiv | Op::CeilDiv => {
                        let q = x.bvsdiv(y);
                        let r = x.bvsrem(y);
                        let inexact = r.eq(&zero).not();
                        let same_sign = x.bvslt(&zero).eq(y.bvslt(&zero));
                        let one = bv_lit(1, x.get_size());
                        let v = match op {
                            Op::Div => q,
                            Op::FloorDiv => {
                                and(&[inexact, same_sign.not()]).ite(&q.bvsub(&one), &q)
                            }
                            _ => and(&[inexact, same_sign]).ite(&q.bvadd(&one), &q),
                        };
                        (Num::B(v), min_neg_one())
                    }
                    Op::Rem => (Num::B(x.bvsrem(y)), f()),
                    Op::Mod => (Num::B(x.bvsmod(y)), f()),
                    Op::Shl => {
                        let v = x.bvshl(y);
                        // Bits shifted out past the sign: shifting back
                        // does not restore the value.
                        let ovf = if index { v.bvashr(y).eq(x).not() } else { f() };
                        (Num::B(v), ovf)
                    }
                    Op::Shr => (Num::B(x.bvashr(y)), f()),
                    Op::BitAnd => (Num::B(x.bvand(y)), f()),
                    _ => unreachable!("{op:?} is not binary arithmetic"),
                }
            }
            _ => unreachable!("mixed theories"),
        }
    }

    /// `x & y` in the integer theory: through bitvectors of the dtype's
    /// width (both values fit it). A mask `2^j - 1` on either side is read
    /// as the floor remainder by `2^j`, which the solver handles far better:
    /// directly when the mask is a constant, and as a choice among the
    /// masks when `y` is symbolic (a rule's `x & (C - 1)`), over the
    /// bitvector form for every other `y`. Both readings are the same
    /// integer.
    fn int_bitand(&self, x: &Poly, y: &Poly, dt: DType) -> Poly {
        let mask_of = |p: &Poly| {
            p.as_const()
                .filter(|&m| m == -1 || (m >= 0 && engine::arith::is_pow2(m + 1)))
        };
        let by_mask = |other: &Poly, mask: i128| {
            if mask == -1 {
                other.clone()
            } else {
                int_remainder(Op::Mod, other, &Poly::constant(mask + 1))
            }
        };
        if let Some(m) = mask_of(y) {
            return by_mask(x, m);
        }
        if let Some(m) = mask_of(x) {
            return by_mask(y, m);
        }
        let bits = self.bits(dt);
        let mut v = Poly::atom(bitand_term(&x.to_int(), &y.to_int(), bits));
        let yt = y.to_int();
        for j in (0..bits - 1).rev() {
            let mask = (1i128 << j) - 1;
            let is_mask = yt.eq(Int::from_i128(mask));
            v = Poly::atom(is_mask.ite(&by_mask(x, mask).to_int(), &v.to_int()));
        }
        v
    }

    fn neg(&self, a: &Num, dt: DType) -> (Num, Bool) {
        match a {
            Num::I(x) => self.int_result(psub(&Poly::default(), x), dt),
            Num::B(x) => {
                let min = bv_lit(self.bounds(dt).0, x.get_size());
                let ovf = if dt == DType::Index { x.eq(&min) } else { f() };
                (Num::B(x.bvneg()), ovf)
            }
        }
    }

    /// A cast from `from` to `to`: wrapping into `i32`/`i64`, checked into
    /// `index`.
    fn cast(&self, a: &Num, from: DType, to: DType) -> (Num, Bool) {
        match a {
            Num::I(x) => self.int_result(x.clone(), to),
            Num::B(x) => {
                let (fb, tb) = (self.bits(from), self.bits(to));
                let v = match fb.cmp(&tb) {
                    std::cmp::Ordering::Equal => x.clone(),
                    std::cmp::Ordering::Less => x.sign_ext(tb - fb),
                    std::cmp::Ordering::Greater => x.extract(tb - 1, 0),
                };
                let ovf = if to == DType::Index && fb > tb {
                    // Narrowing into index: the value must survive the trip.
                    v.sign_ext(fb - tb).eq(x).not()
                } else {
                    f()
                };
                (Num::B(v), ovf)
            }
        }
    }
}

thread_local! {
    /// Facts recorded by the encoding on this thread since the last
    /// [`take_facts`]: instances of theorems about integers (valid
    /// formulas), which a query may assume.
    static FACTS: std::cell::RefCell<Vec<Bool>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Records a fact, unless it is trivially true.
fn note_fact(b: Bool) {
    if b.as_bool() != Some(true) {
        FACTS.with(|f| f.borrow_mut().push(b));
    }
}

/// The facts recorded since the last call: every one is valid, so a query
/// built on this thread may assume them (and one that does not want them
/// drops them by calling this first).
pub fn take_facts() -> Vec<Bool> {
    FACTS.with(|f| std::mem::take(&mut *f.borrow_mut()))
}

/// The semantics' primitives on Z3 terms, collecting the conditions under
/// which the node is undefined.
struct Smt {
    enc: Enc,
    ub: Vec<Bool>,
}

impl Smt {
    fn new(enc: Enc) -> Smt {
        Smt {
            enc,
            ub: Vec::new(),
        }
    }

    /// None of the recorded undefined conditions holds.
    fn defined(&self) -> Bool {
        not(&or(&self.ub))
    }
}

impl Prims for Smt {
    type I = Num;
    type B = Bool;

    fn model(&self) -> Model {
        self.enc.model()
    }
    fn bool_lit(&mut self, b: bool) -> Bool {
        Bool::from_bool(b)
    }
    fn int_lit(&mut self, v: i128, dt: DType) -> Num {
        self.enc.lit(v, dt)
    }
    fn not(&mut self, a: &Bool) -> Bool {
        not(a)
    }
    fn and(&mut self, a: &Bool, b: &Bool) -> Bool {
        and(&[a.clone(), b.clone()])
    }
    fn or(&mut self, a: &Bool, b: &Bool) -> Bool {
        or(&[a.clone(), b.clone()])
    }
    fn xor(&mut self, a: &Bool, b: &Bool) -> Bool {
        match (a.as_bool(), b.as_bool()) {
            (Some(x), Some(y)) => Bool::from_bool(x != y),
            (Some(false), _) => b.clone(),
            (_, Some(false)) => a.clone(),
            (Some(true), _) => not(b),
            (_, Some(true)) => not(a),
            _ => a.xor(b),
        }
    }
    fn select_int(&mut self, c: &Bool, a: &Num, b: &Num) -> Num {
        match c.as_bool() {
            Some(true) => a.clone(),
            Some(false) => b.clone(),
            None => self.enc.ite(c, a, b),
        }
    }
    fn select_bool(&mut self, c: &Bool, a: &Bool, b: &Bool) -> Bool {
        match (c.as_bool(), a.as_bool(), b.as_bool()) {
            (Some(true), ..) => a.clone(),
            (Some(false), ..) => b.clone(),
            (_, Some(x), Some(y)) if x == y => a.clone(),
            _ => c.ite(a, b),
        }
    }
    fn lt(&mut self, a: &Num, b: &Num, _: DType) -> Bool {
        self.enc.lt(a, b)
    }
    fn le(&mut self, a: &Num, b: &Num, _: DType) -> Bool {
        self.enc.le(a, b)
    }
    fn eq(&mut self, a: &Num, b: &Num, _: DType) -> Bool {
        self.enc.eq(a, b)
    }
    fn arith(&mut self, op: Op, dt: DType, arg_dt: DType, args: &[Num]) -> (Num, Bool) {
        self.enc.arith(op, dt, arg_dt, args)
    }
    fn undefined(&mut self, cond: Bool, _: Ub) {
        if cond.as_bool() != Some(false) {
            self.ub.push(cond);
        }
    }
}

/// `2^k` for a symbolic shift amount, as a choice among the amounts
/// `[0, MAX_SHIFT]` (any shift outside `[0, bits)` of its dtype is
/// undefined, so the value there is irrelevant: 1). One term for every
/// dtype, so that the range proofs can state facts about the very term the
/// encoding uses.
pub fn pow2_term(k: &Int) -> Int {
    let mut v = Int::from_i64(1);
    for j in (1..=MAX_SHIFT).rev() {
        let c = k.eq(Int::from_i64(j as i64));
        v = c.ite(&Int::from_i128(1i128 << j), &v);
    }
    v
}

/// `x & y` for integers that fit `bits` bits: through bitvectors of that
/// width and back (signed). One term, so that the range proofs can state
/// facts about the very term the encoding uses.
pub fn bitand_term(x: &Int, y: &Int, bits: u32) -> Int {
    BV::from_int(x, bits)
        .bvand(BV::from_int(y, bits))
        .to_int(true)
}

/// A bitvector numeral of `bits` bits holding `v` modulo 2^bits (two's
/// complement), for any width.
pub fn bv_lit(v: i128, bits: u32) -> BV {
    if let Ok(x) = i64::try_from(v) {
        // Z3 reduces a numeral modulo 2^bits.
        return BV::from_i64(x, bits);
    }
    let mag = v.unsigned_abs();
    let mag = if bits >= 128 {
        mag
    } else {
        mag & ((1u128 << bits) - 1)
    };
    let m = BV::from_str(bits, &mag.to_string()).expect("decimal numeral");
    if v < 0 {
        m.bvneg()
    } else {
        m
    }
}

/// Exact polynomial arithmetic; if a coefficient overflows `i128` (far
/// beyond any width), the Z3 operation on the terms as an opaque atom. A
/// result grown large (a long chain) becomes one atom, so that every later
/// node refers to its term instead of copying it.
fn padd(x: &Poly, y: &Poly) -> Poly {
    bounded(x.add(y)).unwrap_or_else(|| Poly::atom(Int::add(&[x.to_int(), y.to_int()])))
}

fn psub(x: &Poly, y: &Poly) -> Poly {
    bounded(x.sub(y)).unwrap_or_else(|| Poly::atom(Int::sub(&[x.to_int(), y.to_int()])))
}

fn pmul(x: &Poly, y: &Poly) -> Poly {
    bounded(x.mul(y)).unwrap_or_else(|| Poly::atom(Int::mul(&[x.to_int(), y.to_int()])))
}

fn bounded(p: Option<Poly>) -> Option<Poly> {
    p.map(|p| {
        if p.is_large() {
            Poly::atom(p.to_int())
        } else {
            p
        }
    })
}

/// `x - y` when it is a constant.
fn diff(x: &Poly, y: &Poly) -> Option<i128> {
    x.sub(y)?.as_const()
}

/// `ite(c, x, y)` that keeps structure where it can: arms that differ by a
/// constant `k` become `y + k * ite(c, 1, 0)`.
fn poly_ite(c: &Bool, x: &Poly, y: &Poly) -> Poly {
    if let Some(b) = c.as_bool() {
        return if b { x.clone() } else { y.clone() };
    }
    match diff(x, y) {
        Some(0) => x.clone(),
        Some(k) => padd(y, &pmul(&Poly::bit(c), &Poly::constant(k))),
        None => Poly::atom(c.ite(&x.to_int(), &y.to_int())),
    }
}

/// The Euclidean quotient and remainder of `x` by `y` (Z3's `div`/`mod`:
/// `0 <= r < |y|`), after taking off the part of `x` that the divisor
/// divides: `(y*Q + R) div y == Q + R div y`, `(y*Q + R) mod y == R mod y`.
fn euclid(x: &Poly, y: &Poly) -> (Poly, Poly) {
    // A symbolic divisor: bring the multiples of it hidden in constants
    // into view first.
    let reduced = if y.as_const().is_none() {
        x.reduce_constants(y)
    } else {
        None
    };
    let x = reduced.as_ref().unwrap_or(x);
    let (q0, r0) = match x.split(y) {
        Some((q, r)) => (q, r),
        None => (Poly::default(), x.clone()),
    };
    if r0.as_const() == Some(0) || r0.is_remainder_by(y) {
        return (q0, r0);
    }
    let (rt, yt) = (r0.to_int(), y.to_int());
    let (qt, rmt) = (rt.div(&yt), rt.modulo(&yt));
    if y.as_const().is_none() {
        use crate::poly::{note_nonlinear, Nonlinear};
        note_nonlinear(Nonlinear::Div(qt.clone(), rt.clone(), yt.clone(), false));
        note_nonlinear(Nonlinear::Div(rmt.clone(), rt.clone(), yt.clone(), true));
    }
    let (qe, re) = (Poly::atom(qt), Poly::atom(rmt));
    (padd(&q0, &qe), re)
}

/// Both division families from the Euclidean pair (integer theory): floor
/// differs from Euclid by one where the divisor is negative and the
/// division inexact; truncation and ceiling differ from floor by one where
/// they round up. The adjustments are 0/1 atoms, so a quotient keeps the
/// structure of its numerator (`(y*Q + R) / y` stays `Q + ...`).
fn int_division(op: Op, x: &Poly, y: &Poly, remainders: Remainders) -> Poly {
    let zero = Poly::default();
    let (qe, re) = euclid(x, y);
    let (xn, yn, rn) = (Num::I(x.clone()), Num::I(y.clone()), Num::I(re.clone()));
    let enc = Enc::new(Mode::Int, 64);
    let lt0 = |v: &Num| enc.lt(v, &Num::I(zero.clone()));
    let is0 = |v: &Num| enc.eq(v, &Num::I(zero.clone()));
    let one = Poly::constant(1);
    // Floor: Euclid agrees unless y < 0 and the division is inexact.
    let floor_adj = and(&[lt0(&yn), is0(&rn).not()]);
    let floor_q = psub(&qe, &poly_ite(&floor_adj, &one, &zero));
    let floor_r = padd(&re, &pmul(y, &poly_ite(&floor_adj, &one, &zero)));
    let fr = Num::I(floor_r.clone());
    // Truncation rounds up where the quotient is negative and inexact.
    let trunc_adj = and(&[is0(&fr).not(), lt0(&xn).eq(lt0(&yn)).not()]);
    let trunc_q = padd(&floor_q, &poly_ite(&trunc_adj, &one, &zero));
    // A remainder by a symbolic divisor, decomposed ([`Remainders`]);
    // the conditions above keep the atom, which the solver bounds.
    let symbolic = y.as_const().is_none() && remainders == Remainders::Decomposed;
    match op {
        Op::FloorDiv => floor_q,
        Op::Mod if symbolic => psub(x, &pmul(y, &floor_q)),
        Op::Mod => floor_r,
        Op::Div => trunc_q,
        Op::Rem if symbolic => psub(x, &pmul(y, &trunc_q)),
        Op::Rem => psub(&floor_r, &pmul(y, &poly_ite(&trunc_adj, &one, &zero))),
        Op::CeilDiv => padd(&floor_q, &poly_ite(&is0(&fr).not(), &one, &zero)),
        _ => unreachable!("{op:?} is not a division"),
    }
}

/// A deliberate fault in the integer encoding, for the test that shows the
/// cvc5 cross-check catches a wrong encoding in one solver's query
/// (`verify/tests/cross_check.rs`). Off unless a test turns it on.
pub mod fault {
    use std::sync::atomic::{AtomicBool, Ordering};

    static EUCLIDEAN_MOD: AtomicBool = AtomicBool::new(false);

    /// While on, the integer theory reads `a mod b` as the Euclidean
    /// remainder (never negative), which is wrong for negative divisors.
    pub fn set_euclidean_mod(on: bool) {
        EUCLIDEAN_MOD.store(on, Ordering::SeqCst);
    }

    pub(crate) fn euclidean_mod() -> bool {
        EUCLIDEAN_MOD.load(Ordering::Relaxed)
    }
}

/// Quotients of both families (integer theory).
pub fn int_quotient(op: Op, x: &Poly, y: &Poly) -> Poly {
    int_division(op, x, y, Remainders::Decomposed)
}

/// Remainders of both families (integer theory).
pub fn int_remainder(op: Op, x: &Poly, y: &Poly) -> Poly {
    int_division(op, x, y, Remainders::Decomposed)
}

/// Reads an integer term's value from a model, as an exact `i128` (signed
/// for bitvectors).
pub fn model_int(m: &z3::Model, n: &Num) -> Option<i128> {
    match n {
        Num::I(x) => m.eval(&x.to_int(), true)?.as_i128(),
        Num::B(x) => {
            let bits = x.get_size();
            let word = |b: &BV| m.eval(b, true)?.as_u64();
            // Up to 128 bits, read in two 64-bit halves.
            let u = if bits <= 64 {
                word(x)? as u128
            } else {
                let high = word(&x.extract(bits.min(128) - 1, 64))? as u128;
                (high << 64) | word(&x.extract(63, 0))? as u128
            };
            Some(engine::arith::wrap(u as i128, bits.min(128)))
        }
    }
}

/// Reads a bool term's value from a model.
pub fn model_bool(m: &z3::Model, b: &Bool) -> Option<bool> {
    m.eval(b, true)?.as_bool()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `C1 / C0` brings `C1 = C0 * (C1 div C0) + (C1 mod C0)` into view;
    /// the remainder it leaves is already one by `C0`, so the quotient
    /// holds no `(C1 mod C0) div C0` (always 0: it made issue 39's rule
    /// take 28 s instead of 11 s in Z3 4.8.12).
    #[test]
    fn a_remainder_by_the_divisor_is_not_divided_by_it_again() {
        let c1 = Poly::constant_atom(Int::new_const("C1"));
        let c0 = Poly::constant_atom(Int::new_const("C0"));
        for op in [Op::Div, Op::FloorDiv, Op::Rem, Op::Mod] {
            let t = int_division(op, &c1, &c0, Remainders::Decomposed)
                .to_int()
                .to_string();
            assert!(
                t.contains("(div C1 C0)") || t.contains("(mod C1 C0)"),
                "{op:?}: {t}"
            );
            assert!(!t.contains("(div (mod C1 C0) C0)"), "{op:?}: {t}");
            assert!(!t.contains("(mod (mod C1 C0) C0)"), "{op:?}: {t}");
        }
    }
}
