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
//! value itself. [`Enc::apply`] implements each op exactly as
//! `engine::interp::apply` documents; a test compares the two on every
//! 8-bit operand pair.

use engine::ir::{DType, Op};
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

/// An integer term in the encoding's theory.
#[derive(Clone, Debug)]
pub enum Num {
    I(Int),
    B(BV),
}

impl Num {
    pub fn int(&self) -> &Int {
        match self {
            Num::I(i) => i,
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

/// A symbolic value with its definedness and validity (see DESIGN.md).
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
}

/// The encoder for one theory and width.
#[derive(Clone, Copy, Debug)]
pub struct Enc {
    pub mode: Mode,
    /// The width W of `index`.
    pub width: u32,
}

fn t() -> Bool {
    Bool::from_bool(true)
}

fn f() -> Bool {
    Bool::from_bool(false)
}

fn and(v: &[Bool]) -> Bool {
    Bool::and(v)
}

fn or(v: &[Bool]) -> Bool {
    Bool::or(v)
}

impl Enc {
    pub fn new(mode: Mode, width: u32) -> Enc {
        Enc { mode, width }
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

    /// Inclusive value bounds of a dtype at this width.
    pub fn bounds(&self, dt: DType) -> (i128, i128) {
        engine::interp::Width(self.width).dtype_bounds(dt)
    }

    /// A numeral of dtype `dt` (which must hold it, or wrap it for BV).
    pub fn lit(&self, v: i128, dt: DType) -> Num {
        match self.mode {
            Mode::Int => Num::I(Int::from_i128(v)),
            Mode::Bv => Num::B(bv_lit(v, self.bits(dt))),
        }
    }

    /// A fresh integer constant of dtype `dt`, with the constraint that it
    /// lies in the dtype's range (for the integer theory).
    pub fn fresh_num(&self, name: &str, dt: DType) -> (Num, Bool) {
        match self.mode {
            Mode::Int => {
                let x = Int::new_const(name);
                let (lo, hi) = self.bounds(dt);
                let c = and(&[x.ge(Int::from_i128(lo)), x.le(Int::from_i128(hi))]);
                (Num::I(x), c)
            }
            Mode::Bv => (Num::B(BV::new_const(name, self.bits(dt))), t()),
        }
    }

    pub fn eq(&self, a: &Num, b: &Num) -> Bool {
        match (a, b) {
            (Num::I(x), Num::I(y)) => x.eq(y),
            (Num::B(x), Num::B(y)) => x.eq(y),
            _ => unreachable!("mixed theories"),
        }
    }

    pub fn lt(&self, a: &Num, b: &Num) -> Bool {
        match (a, b) {
            (Num::I(x), Num::I(y)) => x.lt(y),
            (Num::B(x), Num::B(y)) => x.bvslt(y),
            _ => unreachable!("mixed theories"),
        }
    }

    pub fn le(&self, a: &Num, b: &Num) -> Bool {
        match (a, b) {
            (Num::I(x), Num::I(y)) => x.le(y),
            (Num::B(x), Num::B(y)) => x.bvsle(y),
            _ => unreachable!("mixed theories"),
        }
    }

    pub fn ite(&self, c: &Bool, a: &Num, b: &Num) -> Num {
        match (a, b) {
            (Num::I(x), Num::I(y)) => Num::I(c.ite(x, y)),
            (Num::B(x), Num::B(y)) => Num::B(c.ite(x, y)),
            _ => unreachable!("mixed theories"),
        }
    }

    fn ite_term(&self, c: &Bool, a: &Term, b: &Term) -> Term {
        match (a, b) {
            (Term::N(x), Term::N(y)) => Term::N(self.ite(c, x, y)),
            (Term::B(x), Term::B(y)) => Term::B(c.ite(x, y)),
            _ => unreachable!("where arms of different kinds"),
        }
    }

    /// A defined, valid constant.
    pub fn constant(&self, v: i128, dt: DType) -> SVal {
        let val = if dt == DType::Bool {
            Term::B(Bool::from_bool(v != 0))
        } else {
            Term::N(self.lit(v, dt))
        };
        let (lo, hi) = self.bounds(dt);
        // An index literal outside W bits is an overflow, like in the
        // interpreter.
        let def = Bool::from_bool(dt != DType::Index || (lo <= v && v <= hi));
        SVal {
            def,
            inv: f(),
            unc: f(),
            val,
        }
    }

    /// The masked value.
    pub fn invalid(&self) -> SVal {
        SVal {
            def: t(),
            inv: t(),
            unc: f(),
            val: Term::N(self.lit(0, DType::Index)),
        }
    }

    /// Applies `op` with result dtype `dt` to operands whose dtypes are
    /// `arg_dts`: the SMT twin of `engine::interp::apply`.
    pub fn apply(&self, op: Op, dt: DType, args: &[SVal], arg_dts: &[DType]) -> SVal {
        let defs: Vec<Bool> = args.iter().map(|a| a.def.clone()).collect();
        let def_in = and(&defs);
        match op {
            Op::Const(_) | Op::Var(_) | Op::Invalid => unreachable!("leaves are built directly"),
            _ if op.is_int_alu() => {
                let inv = or(&args.iter().map(|a| a.inv.clone()).collect::<Vec<_>>());
                let unc = and(&[
                    inv.not(),
                    or(&args.iter().map(|a| a.unc.clone()).collect::<Vec<_>>()),
                ]);
                let all_valid = and(&args.iter().map(|a| a.valid()).collect::<Vec<_>>());
                let a = args[0].val.num();
                let (val, overflow) = if op == Op::Cast {
                    self.cast(a, arg_dts[0], dt)
                } else if op == Op::Neg {
                    self.neg(a, dt)
                } else {
                    self.binary(op, a, args[1].val.num(), dt)
                };
                // A valid zero divisor is undefined whatever the dividend.
                let div_zero = if op.is_divmod() {
                    and(&[
                        args[1].valid(),
                        self.eq(args[1].val.num(), &self.lit(0, dt)),
                    ])
                } else {
                    f()
                };
                let ub = or(&[div_zero, and(&[all_valid, overflow])]);
                SVal {
                    def: and(&[def_in, ub.not()]),
                    inv,
                    unc,
                    val: Term::N(val),
                }
            }
            Op::Lt | Op::Le | Op::Eq | Op::Ne => {
                let unc = or(&args
                    .iter()
                    .flat_map(|a| [a.inv.clone(), a.unc.clone()])
                    .collect::<Vec<_>>());
                let (a, b) = (args[0].val.num(), args[1].val.num());
                let v = match op {
                    Op::Lt => self.lt(a, b),
                    Op::Le => self.le(a, b),
                    Op::Eq => self.eq(a, b),
                    _ => self.eq(a, b).not(),
                };
                SVal {
                    def: def_in,
                    inv: f(),
                    unc,
                    val: Term::B(v),
                }
            }
            Op::Not | Op::And | Op::Or | Op::Xor => {
                let unc = or(&args.iter().map(|a| a.unc.clone()).collect::<Vec<_>>());
                let a = args[0].val.bool();
                let v = match op {
                    Op::Not => a.not(),
                    Op::And => and(&[a.clone(), args[1].val.bool().clone()]),
                    Op::Or => or(&[a.clone(), args[1].val.bool().clone()]),
                    _ => a.xor(args[1].val.bool()),
                };
                SVal {
                    def: def_in,
                    inv: f(),
                    unc,
                    val: Term::B(v),
                }
            }
            Op::Where => {
                let (c, x, y) = (&args[0], &args[1], &args[2]);
                let cv = c.val.bool();
                SVal {
                    def: def_in,
                    inv: and(&[c.unc.not(), cv.ite(&x.inv, &y.inv)]),
                    unc: or(&[c.unc.clone(), cv.ite(&x.unc, &y.unc)]),
                    val: self.ite_term(cv, &x.val, &y.val),
                }
            }
            _ => unreachable!("unhandled op {op:?}"),
        }
    }

    /// Whether an exact integer lies in a dtype's range (integer theory).
    fn int_fits(&self, v: &Int, dt: DType) -> Bool {
        let (lo, hi) = self.bounds(dt);
        and(&[v.ge(Int::from_i128(lo)), v.le(Int::from_i128(hi))])
    }

    /// The result of an exact integer computation in dtype `dt` (integer
    /// theory): `index` must fit (else overflow), `i32`/`i64` wrap.
    fn int_result(&self, exact: Int, dt: DType) -> (Num, Bool) {
        match dt {
            DType::Index => {
                let fits = self.int_fits(&exact, dt);
                (Num::I(exact), fits.not())
            }
            _ => {
                let bits = self.bits(dt);
                let half = Int::from_i128(1i128 << (bits - 1));
                let full = Int::from_i128(1i128 << bits);
                let wrapped = Int::sub(&[&Int::add(&[&exact, &half]).modulo(&full), &half]);
                (Num::I(wrapped), f())
            }
        }
    }

    fn neg(&self, a: &Num, dt: DType) -> (Num, Bool) {
        match a {
            Num::I(x) => self.int_result(x.unary_minus(), dt),
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

    /// Binary integer operations. Returns the value and the overflow
    /// condition (meaningful where both operands are valid and the divisor
    /// is non-zero).
    fn binary(&self, op: Op, a: &Num, b: &Num, dt: DType) -> (Num, Bool) {
        let (lo, _) = self.bounds(dt);
        // MIN / -1 (and //, ceildiv) is undefined in every dtype: an index
        // overflow or a concrete-type division overflow.
        let min_neg_one = || and(&[self.eq(a, &self.lit(lo, dt)), self.eq(b, &self.lit(-1, dt))]);
        match (a, b) {
            (Num::I(x), Num::I(y)) => match op {
                Op::Add => self.int_result(Int::add(&[x, y]), dt),
                Op::Sub => self.int_result(Int::sub(&[x, y]), dt),
                Op::Mul => self.int_result(Int::mul(&[x, y]), dt),
                Op::Min => (Num::I(x.le(y).ite(x, y)), f()),
                Op::Max => (Num::I(x.ge(y).ite(x, y)), f()),
                Op::Div | Op::FloorDiv | Op::CeilDiv => {
                    let q = int_quotient(op, x, y);
                    let (v, ovf) = self.int_result(q, dt);
                    (v, or(&[ovf, min_neg_one()]))
                }
                Op::Rem | Op::Mod => (Num::I(int_remainder(op, x, y)), f()),
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
                    _ => unreachable!("{op:?} is not binary arithmetic"),
                }
            }
            _ => unreachable!("mixed theories"),
        }
    }
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

/// Euclidean quotient and remainder (Z3's `div`/`mod`: 0 <= r < |y|).
fn euclid(x: &Int, y: &Int) -> (Int, Int) {
    (x.div(y), x.modulo(y))
}

/// Quotients of both families from the Euclidean one (integer theory).
pub fn int_quotient(op: Op, x: &Int, y: &Int) -> Int {
    let zero = Int::from_i64(0);
    let one = Int::from_i64(1);
    let (qe, re) = euclid(x, y);
    // Floor: Euclid agrees for y > 0; for y < 0 an inexact quotient is one
    // too high.
    let floor = or(&[y.gt(&zero), re.eq(&zero)]).ite(&qe, &Int::sub(&[&qe, &one]));
    let mf = floor_mod(x, y);
    match op {
        Op::FloorDiv => floor,
        // Truncation rounds negative inexact quotients up: floor + 1.
        Op::Div => {
            let same_sign = x.ge(&zero).eq(y.gt(&zero));
            or(&[mf.eq(&zero), same_sign]).ite(&floor, &Int::add(&[&floor, &one]))
        }
        Op::CeilDiv => mf.eq(&zero).ite(&floor, &Int::add(&[&floor, &one])),
        _ => unreachable!("{op:?} is not a quotient"),
    }
}

/// The floor remainder (sign of the divisor) from the Euclidean one.
fn floor_mod(x: &Int, y: &Int) -> Int {
    let zero = Int::from_i64(0);
    let me = x.modulo(y);
    or(&[y.gt(&zero), me.eq(&zero)]).ite(&me, &Int::add(&[&me, y]))
}

/// Remainders of both families (integer theory).
pub fn int_remainder(op: Op, x: &Int, y: &Int) -> Int {
    let zero = Int::from_i64(0);
    match op {
        Op::Mod => floor_mod(x, y),
        // Truncation: the sign of the dividend, |r| = |x| mod |y|.
        Op::Rem => x
            .ge(&zero)
            .ite(&x.modulo(y), &x.unary_minus().modulo(y).unary_minus()),
        _ => unreachable!("{op:?} is not a remainder"),
    }
}

/// Reads an integer term's value from a model, as an exact `i128` (signed
/// for bitvectors).
pub fn model_int(m: &z3::Model, n: &Num) -> Option<i128> {
    match n {
        Num::I(x) => m.eval(x, true)?.as_i128(),
        Num::B(x) => {
            let v = m.eval(x, true)?;
            let bits = x.get_size();
            let u = v.as_u64()? as i128;
            Some(engine::interp::wrap(u, bits))
        }
    }
}

/// Reads a bool term's value from a model.
pub fn model_bool(m: &z3::Model, b: &Bool) -> Option<bool> {
    m.eval(b, true)?.as_bool()
}
