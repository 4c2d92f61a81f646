//! The semantics, written once.
//!
//! What every op does with invalid lanes, unconstrained values and
//! undefined behaviour is defined here, over a small trait of primitives
//! ([`Prims`]: literals, boolean connectives, selection, comparisons, and
//! the integer ops' values with their overflow conditions). Three
//! implementations provide the primitives and nothing else:
//!
//! - the reference interpreter ([`crate::meaning::interp`]) on exact `i128`s and
//!   `bool`s: the definition;
//! - the verifier (`verify::encode`) on Z3 terms, bit-exact bitvectors or
//!   integers bounded to the width;
//! - the fuzzer's JIT (`fuzz::jit`) on Cranelift values, folding what is
//!   known at compile time.
//!
//! A test compares the three on every op of [`crate::ir::op::OPS`] for every
//! 8-bit operand pair and every operand state (`tests/semantics_agree.rs`).
//!
//! ## The rules (docs/semantics.md)
//!
//! A value is a masked lane (`inv`), unconstrained (`unc`: computed from an
//! invalid operand, only ever used under its gate, so any value is
//! acceptable in its place), or a defined integer or bool (`val`).
//! Undefined behaviour is whole-evaluation: [`Prims::undefined`] records a
//! condition under which the evaluation as a whole is undefined, wherever
//! the node sits (both arms of a `where` are evaluated).
//!
//! - Integer ops: an invalid operand makes the result invalid; otherwise
//!   an unconstrained operand makes it unconstrained; otherwise the exact
//!   result, which for `index` must fit W bits (else overflow) and for
//!   `i32`/`i64` wraps. A cast to `i32`/`i64` wraps; a cast to `index` must
//!   fit W bits.
//! - Division and remainder (both families): a divisor that is the valid
//!   value 0 is undefined, whatever the dividend (even invalid). The
//!   quotient `MIN / -1` (`/`, `//`, `ceildiv`) is undefined: an `index`
//!   overflow or, in `i32`/`i64`, [`Ub::DivOverflow`]. `MIN % -1` and
//!   `MIN mod -1` are 0.
//! - Shifts: an amount outside `[0, bits)` of the dtype (`index`: W) is
//!   undefined, whatever the shifted value; `a << b` is `a * 2^b` (an
//!   `index` overflow if it does not fit), `a >> b` is `floor(a / 2^b)`.
//! - Unconstrained operands: an op is undefined if it is undefined for
//!   some value the unconstrained operand could take (a division by an
//!   unconstrained divisor could divide by 0; `U + 1` could overflow), and
//!   otherwise its result is unconstrained. This keeps every op monotone
//!   under refinement, so rules proved one at a time compose.
//! - Comparisons: an invalid or unconstrained operand gives unconstrained.
//! - `! && || ^`: an unconstrained operand gives unconstrained.
//! - `where(c, a, b)`: unconstrained if `c` is, else the selected arm.
//! - Constants: an `index` constant outside W bits is an overflow.
//!
//! ## Partial ops ([`Partial`])
//!
//! A division by zero and a shift by an amount out of range are undefined
//! in the contract (C's answer, and TVM's). A peer whose own semantics make
//! them total (tinygrad: its z3 model divides totally, and its rewriter
//! moves any op into a gated lane) declares [`Partial::Unspecified`]: there
//! they give an unconstrained value instead (invalid still wins), and
//! since that value is *some* value, `false && u` is false and `true || u`
//! true there (under the contract an unconstrained bool stays
//! unconstrained through `&&` and `||`, the semantics the rules are proved
//! under). A peer whose `index` is the unbounded integers
//! (tinygrad again) is judged at a finite width only because points are:
//! under [`Model::unbounded`] an unconstrained operand never makes an op
//! overflow (there is no MIN to divide by -1, no MAX to pass). The
//! [`Model`] an evaluation runs under is the width of `index` and these two
//! choices.
//!
//! [`refinement`] is the other half of the contract: where a target fails
//! to refine a source.

use crate::ir::dtype::{DType, Width};
use crate::ir::op::{Class, Op};
use std::fmt;

/// What a partial op (a division by zero, a shift by an amount out of
/// range) does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Partial {
    /// Undefined behaviour (the contract's semantics).
    #[default]
    Undefined,
    /// An unconstrained value (a peer whose partial ops are total).
    Unspecified,
}

impl Partial {
    pub const ALL: [Partial; 2] = [Partial::Undefined, Partial::Unspecified];

    /// The name in the protocol and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Partial::Undefined => "undefined",
            Partial::Unspecified => "unspecified",
        }
    }

    pub fn by_name(s: &str) -> Option<Partial> {
        Partial::ALL.into_iter().find(|p| p.name() == s)
    }
}

/// What an evaluation depends on besides the graph and the point: the
/// width of `index`, what partial ops do, and whether `index` stands for
/// the unbounded integers. A bare [`Width`] is the contract's model at that
/// width.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Model {
    pub width: Width,
    pub partial: Partial,
    /// `index` is the mathematical integers (a peer's, tinygrad's), judged
    /// at `width` only because points are: an unconstrained operand is any
    /// integer, and no value of it makes an op overflow. A concrete value
    /// beyond `width` still cannot be judged and stays an overflow.
    pub unbounded: bool,
}

impl From<Width> for Model {
    fn from(width: Width) -> Model {
        Model {
            width,
            partial: Partial::Undefined,
            unbounded: false,
        }
    }
}

/// Why an evaluation is undefined.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Ub {
    /// Division or remainder by zero.
    DivByZero,
    /// `MIN / -1` in a concrete dtype (the quotient does not fit).
    DivOverflow,
    /// An `index` value outside the signed W-bit range.
    IndexOverflow,
    /// A shift amount outside `[0, bits)`.
    ShiftAmount,
}

impl Ub {
    pub const ALL: [Ub; 4] = [
        Ub::DivByZero,
        Ub::DivOverflow,
        Ub::IndexOverflow,
        Ub::ShiftAmount,
    ];
}

impl fmt::Display for Ub {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Ub::DivByZero => "division by zero",
            Ub::DivOverflow => "MIN / -1 overflows",
            Ub::IndexOverflow => "index overflow",
            Ub::ShiftAmount => "shift amount out of range",
        })
    }
}

/// Which refinement obligation fails, in the order they are checked
/// (docs/semantics.md, "Soundness").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Failure {
    /// The target is undefined where the source is defined.
    TargetUndefined,
    /// One side is invalid where the other is not.
    ValidityDiffers,
    /// Both valid, different values (or the target unconstrained).
    ValueDiffers,
}

impl Failure {
    pub const ALL: [Failure; 3] = [
        Failure::TargetUndefined,
        Failure::ValidityDiffers,
        Failure::ValueDiffers,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Failure::TargetUndefined => "target-undefined",
            Failure::ValidityDiffers => "validity-differs",
            Failure::ValueDiffers => "value-differs",
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An integer or a bool, in some implementation's terms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value<I, B> {
    Int(I),
    Bool(B),
}

/// One node's result: whether it is a masked lane, whether it is
/// unconstrained (never both), and its value (meaningful only where it is
/// neither).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sem<I, B> {
    pub inv: B,
    pub unc: B,
    pub val: Value<I, B>,
}

impl<I, B> Sem<I, B> {
    pub fn int(&self) -> &I {
        match &self.val {
            Value::Int(i) => i,
            Value::Bool(_) => unreachable!("a bool where an integer was expected"),
        }
    }

    pub fn bool(&self) -> &B {
        match &self.val {
            Value::Bool(b) => b,
            Value::Int(_) => unreachable!("an integer where a bool was expected"),
        }
    }
}

/// The primitives an implementation of the semantics provides. Everything
/// about invalid, unconstrained and undefined is decided by [`apply`] from
/// these; what differs between implementations (exact integers, bitvectors
/// with overflow predicates, integers bounded to the width, Cranelift
/// values that must never trap) stays inside them.
pub trait Prims {
    /// An integer value.
    type I: Clone;
    /// A condition, also the value of a bool.
    type B: Clone;

    /// The width `index` has.
    /// The model this implementation evaluates under.
    fn model(&self) -> Model;
    fn width(&self) -> Width {
        self.model().width
    }
    /// What partial ops do.
    fn partial(&self) -> Partial {
        self.model().partial
    }
    /// Whether `index` stands for the unbounded integers ([`Model`]).
    fn unbounded(&self) -> bool {
        self.model().unbounded
    }
    fn bool_lit(&mut self, b: bool) -> Self::B;
    /// An integer literal of dtype `dt` (which holds it).
    fn int_lit(&mut self, v: i128, dt: DType) -> Self::I;
    fn not(&mut self, a: &Self::B) -> Self::B;
    fn and(&mut self, a: &Self::B, b: &Self::B) -> Self::B;
    fn or(&mut self, a: &Self::B, b: &Self::B) -> Self::B;
    fn xor(&mut self, a: &Self::B, b: &Self::B) -> Self::B;
    fn select_int(&mut self, c: &Self::B, a: &Self::I, b: &Self::I) -> Self::I;
    fn select_bool(&mut self, c: &Self::B, a: &Self::B, b: &Self::B) -> Self::B;
    /// `a < b` on integers of dtype `dt`.
    fn lt(&mut self, a: &Self::I, b: &Self::I, dt: DType) -> Self::B;
    /// `a <= b` on integers of dtype `dt`.
    fn le(&mut self, a: &Self::I, b: &Self::I, dt: DType) -> Self::B;
    /// `a == b` on integers of dtype `dt`.
    fn eq(&mut self, a: &Self::I, b: &Self::I, dt: DType) -> Self::B;
    /// An integer op (class `Arith` or `Cast`) on valid operands of dtype
    /// `arg_dt`, with result dtype `dt`: the value (wrapped into `i32` or
    /// `i64`), and the condition under which the op has no result in `dt`
    /// (for `index`: the exact result does not fit W bits; for a quotient
    /// in any dtype: `MIN / -1`). Where [`apply`] marks the op undefined
    /// for another reason (a zero divisor, a shift amount out of range) the
    /// value is unspecified, but computing it must not trap.
    fn arith(&mut self, op: Op, dt: DType, arg_dt: DType, args: &[Self::I]) -> (Self::I, Self::B);
    /// The evaluation is undefined where `cond` holds, for `reason`.
    /// [`apply`] calls this in a fixed order, so implementations that name
    /// the first reason agree on it.
    fn undefined(&mut self, cond: Self::B, reason: Ub);
}

/// A result with both flags false.
pub fn valid<P: Prims>(p: &mut P, val: Value<P::I, P::B>) -> Sem<P::I, P::B> {
    Sem {
        inv: p.bool_lit(false),
        unc: p.bool_lit(false),
        val,
    }
}

/// A constant leaf: an `index` constant outside W bits is an overflow.
pub fn constant<P: Prims>(p: &mut P, v: i128, dt: DType) -> Sem<P::I, P::B> {
    if dt == DType::Bool {
        let b = p.bool_lit(v != 0);
        return valid(p, Value::Bool(b));
    }
    if dt == DType::Index && !p.width().fits(v) {
        let t = p.bool_lit(true);
        p.undefined(t, Ub::IndexOverflow);
    }
    let i = p.int_lit(v, dt);
    valid(p, Value::Int(i))
}

/// The `invalid` leaf.
pub fn invalid<P: Prims>(p: &mut P) -> Sem<P::I, P::B> {
    let zero = p.int_lit(0, DType::Index);
    Sem {
        inv: p.bool_lit(true),
        unc: p.bool_lit(false),
        val: Value::Int(zero),
    }
}

/// Neither invalid nor unconstrained.
pub fn is_valid<P: Prims>(p: &mut P, s: &Sem<P::I, P::B>) -> P::B {
    let either = p.or(&s.inv, &s.unc);
    p.not(&either)
}

fn any<'a, P: Prims>(p: &mut P, bs: impl IntoIterator<Item = &'a P::B>) -> P::B
where
    P::B: 'a,
{
    let mut acc = p.bool_lit(false);
    for b in bs {
        acc = p.or(&acc, b);
    }
    acc
}

/// The overflow reason of an op with no result in `dt`.
/// Where a partial op has no result (`cond`): undefined, or an
/// unconstrained result, as the model says.
fn partial<P: Prims>(p: &mut P, cond: P::B, reason: Ub, unc: &mut P::B) {
    match p.partial() {
        Partial::Undefined => p.undefined(cond, reason),
        Partial::Unspecified => *unc = p.or(unc, &cond),
    }
}

fn overflow(dt: DType) -> Ub {
    if dt == DType::Index {
        Ub::IndexOverflow
    } else {
        Ub::DivOverflow
    }
}

/// Applies a non-leaf op with result dtype `dt` to operands of dtypes
/// `arg_dts`, recording its undefined conditions with
/// [`Prims::undefined`].
pub fn apply<P: Prims>(
    p: &mut P,
    op: Op,
    dt: DType,
    args: &[Sem<P::I, P::B>],
    arg_dts: &[DType],
) -> Sem<P::I, P::B> {
    match op.class() {
        Class::Leaf => unreachable!("leaves are built with `constant` and `invalid`"),
        Class::Arith | Class::Cast => integer(p, op, dt, args, arg_dts),
        Class::Compare => {
            let unc = any(p, args.iter().flat_map(|a| [&a.inv, &a.unc]));
            let (a, b, d) = (args[0].int(), args[1].int(), arg_dts[0]);
            let v = match op {
                Op::Lt => p.lt(a, b, d),
                Op::Le => p.le(a, b, d),
                Op::Eq => p.eq(a, b, d),
                Op::Ne => {
                    let e = p.eq(a, b, d);
                    p.not(&e)
                }
                _ => unreachable!("{op:?} is not a comparison"),
            };
            Sem {
                inv: p.bool_lit(false),
                unc,
                val: Value::Bool(v),
            }
        }
        Class::Logic => {
            let mut unc = any(p, args.iter().map(|a| &a.unc));
            if p.partial() == Partial::Unspecified && matches!(op, Op::And | Op::Or) {
                // Where an unspecified value is some value (a peer's total
                // model), `false && u` is false and `true || u` true for
                // every u: a constrained dominant operand decides.
                let dominant = op == Op::Or;
                let mut decided = p.bool_lit(false);
                for a in args {
                    let v = if dominant {
                        a.bool().clone()
                    } else {
                        p.not(a.bool())
                    };
                    let constrained = p.not(&a.unc);
                    let d = p.and(&constrained, &v);
                    decided = p.or(&decided, &d);
                }
                let undecided = p.not(&decided);
                unc = p.and(&unc, &undecided);
            }
            let a = args[0].bool();
            let v = match op {
                Op::Not => p.not(a),
                Op::And => p.and(a, args[1].bool()),
                Op::Or => p.or(a, args[1].bool()),
                Op::Xor => p.xor(a, args[1].bool()),
                _ => unreachable!("{op:?} is not boolean logic"),
            };
            Sem {
                inv: p.bool_lit(false),
                unc,
                val: Value::Bool(v),
            }
        }
        Class::Select => {
            let (c, x, y) = (&args[0], &args[1], &args[2]);
            let cv = c.bool();
            let arm_unc = p.select_bool(cv, &x.unc, &y.unc);
            let unc = p.or(&c.unc, &arm_unc);
            let arm_inv = p.select_bool(cv, &x.inv, &y.inv);
            let constrained = p.not(&c.unc);
            let inv = p.and(&constrained, &arm_inv);
            let val = match (&x.val, &y.val) {
                (Value::Int(a), Value::Int(b)) => Value::Int(p.select_int(cv, a, b)),
                (Value::Bool(a), Value::Bool(b)) => Value::Bool(p.select_bool(cv, a, b)),
                _ => unreachable!("where arms of different kinds"),
            };
            Sem { inv, unc, val }
        }
    }
}

/// Integer ops (class `Arith` and `Cast`).
fn integer<P: Prims>(
    p: &mut P,
    op: Op,
    dt: DType,
    args: &[Sem<P::I, P::B>],
    arg_dts: &[DType],
) -> Sem<P::I, P::B> {
    let inv = any(p, args.iter().map(|a| &a.inv));
    let mut some_unc = any(p, args.iter().map(|a| &a.unc));
    let not_inv = p.not(&inv);
    // The operands' values, on the stack (integer ops take one or two).
    let first = args[0].int().clone();
    let second = args
        .get(1)
        .map_or_else(|| first.clone(), |b| b.int().clone());
    let both = [first, second];
    let vals = &both[..args.len()];
    // The second operand alone can make the op undefined (a divisor, a
    // shift amount): whatever the first operand is, even invalid.
    if op.is_divmod() {
        let d = &args[1];
        let d_valid = is_valid(p, d);
        let zero = p.int_lit(0, dt);
        let is_zero = p.eq(&vals[1], &zero, dt);
        let valid_zero = p.and(&d_valid, &is_zero);
        // An unconstrained divisor could be 0.
        let c = p.or(&valid_zero, &d.unc);
        partial(p, c, Ub::DivByZero, &mut some_unc);
        // An unconstrained dividend could be MIN (unbounded `index` has
        // none).
        if op.is_quotient() && !(dt == DType::Index && p.unbounded()) {
            let minus_one = p.int_lit(-1, dt);
            let is_m1 = p.eq(&vals[1], &minus_one, dt);
            let c = p.and(&d_valid, &is_m1);
            let c = p.and(&c, &args[0].unc);
            p.undefined(c, overflow(dt));
        }
    }
    if op.is_shift() {
        let k = &args[1];
        let k_valid = is_valid(p, k);
        let bits = p.width().bits(dt) as i128;
        let (zero, last) = (p.int_lit(0, dt), p.int_lit(bits - 1, dt));
        let below = p.lt(&vals[1], &zero, dt);
        let above = p.lt(&last, &vals[1], dt);
        let out = p.or(&below, &above);
        let c = p.and(&k_valid, &out);
        // An unconstrained amount could be out of range.
        let c = p.or(&c, &k.unc);
        partial(p, c, Ub::ShiftAmount, &mut some_unc);
    }
    let unc = p.and(&not_inv, &some_unc);
    let (val, no_result) = p.arith(op, dt, arg_dts[0], vals);
    let not_valid = p.or(&inv, &some_unc);
    let all_valid = p.not(&not_valid);
    let c = p.and(&all_valid, &no_result);
    p.undefined(c, overflow(dt));
    if dt == DType::Index && !p.unbounded() {
        let u = unconstrained_overflow(p, op, args, arg_dts, vals);
        let c = p.and(&not_inv, &u);
        p.undefined(c, Ub::IndexOverflow);
    }
    Sem {
        inv,
        unc,
        val: Value::Int(val),
    }
}

/// Whether some value of the unconstrained operand(s) of an `index` op (no
/// operand invalid) makes it overflow: `-U`; `U + b`, `U - b` unless
/// `b == 0`; `b - U` unless `b == -1` (`b - U` spans `[b - MAX, b + MAX +
/// 1]`); `U * b` unless `b` is 0 or 1; `U << k` unless `k == 0`; two
/// unconstrained operands; a cast into `index` from a type wider than W
/// bits. Min, max, `>>` and `&` never overflow; divisions are handled with
/// their divisor.
fn unconstrained_overflow<P: Prims>(
    p: &mut P,
    op: Op,
    args: &[Sem<P::I, P::B>],
    arg_dts: &[DType],
    vals: &[P::I],
) -> P::B {
    let dt = arg_dts[0];
    // Operand i is the valid value v.
    let is = |p: &mut P, i: usize, v: i128| {
        let l = p.int_lit(v, dt);
        let e = p.eq(&vals[i], &l, dt);
        let constrained = p.not(&args[i].unc);
        p.and(&constrained, &e)
    };
    // Unconstrained `i` where the other operand is none of `ok` values.
    let one_side = |p: &mut P, i: usize, ok: &[i128]| {
        let mut c = args[i].unc.clone();
        for &v in ok {
            let hit = is(p, 1 - i, v);
            let miss = p.not(&hit);
            c = p.and(&c, &miss);
        }
        c
    };
    let both = |p: &mut P| p.and(&args[0].unc, &args[1].unc);
    let sides = |p: &mut P, a: P::B, b: P::B, both: P::B| {
        let x = p.or(&a, &b);
        p.or(&x, &both)
    };
    match op {
        Op::Neg => args[0].unc.clone(),
        Op::Add => {
            let (l, r, b) = (one_side(p, 0, &[0]), one_side(p, 1, &[0]), both(p));
            sides(p, l, r, b)
        }
        Op::Sub => {
            let (l, r, b) = (one_side(p, 0, &[0]), one_side(p, 1, &[-1]), both(p));
            sides(p, l, r, b)
        }
        Op::Mul => {
            let (l, r, b) = (one_side(p, 0, &[0, 1]), one_side(p, 1, &[0, 1]), both(p));
            sides(p, l, r, b)
        }
        Op::Shl => one_side(p, 0, &[0]),
        Op::Cast => {
            let w = p.width();
            let (lo, hi) = w.dtype_bounds(arg_dts[0]);
            let (ilo, ihi) = w.dtype_bounds(DType::Index);
            let wide = p.bool_lit(lo < ilo || hi > ihi);
            p.and(&args[0].unc, &wide)
        }
        _ => p.bool_lit(false),
    }
}

/// Where a defined target `t` fails to refine a defined source `s` (docs/semantics.md,
/// "soundness"): `(validity, value)`: the target is invalid where the
/// source is not or the other way round (an unconstrained source allows
/// anything); the source is a valid value and the target is not that value
/// (a different one, or unconstrained). `dt` is the source's dtype.
pub fn refinement<P: Prims>(
    p: &mut P,
    s: &Sem<P::I, P::B>,
    t: &Sem<P::I, P::B>,
    dt: DType,
) -> (P::B, P::B) {
    let constrained = p.not(&s.unc);
    let inv_differs = p.xor(&s.inv, &t.inv);
    let validity = p.and(&constrained, &inv_differs);
    let differ = match (&s.val, &t.val) {
        (Value::Int(a), Value::Int(b)) => {
            let e = p.eq(a, b, dt);
            p.not(&e)
        }
        (Value::Bool(a), Value::Bool(b)) => p.xor(a, b),
        _ => p.bool_lit(true),
    };
    let s_valid = is_valid(p, s);
    let t_not_inv = p.not(&t.inv);
    let t_bad = p.or(&t.unc, &differ);
    let v = p.and(&t_not_inv, &t_bad);
    let value = p.and(&s_valid, &v);
    (validity, value)
}
