//! Python's `math.ceil(a / b)`, `math.floor(a / b)`, `int(a / b)` on ints
//! as solver terms: the characterization of `engine::truediv` (the
//! correctly rounded double of `a / b` through the exact floor `F` of
//! `|a / b|` and its remainder), exact for operands below 2^126 in
//! magnitude, with integer arithmetic only (the pinned Z3's floating-point
//! theory converts a real to a double only for numerals). Every binade
//! the quotient can have is a case: from 2^53 up the double is `F` rounded
//! to 53 significant bits (division by a power of two: linear), below
//! it only whether the quotient rounds to `F` or to `F + 1` matters.

use crate::encode::{Enc, Num};
use engine::ir::{DType, Op};
use engine::truediv::{Magnitude, Round};
use z3::ast::Bool;

/// Operands below 2^EXACT_BITS in magnitude are encoded exactly (every
/// instance is: they fit 64 bits); beyond, the result is the caller's
/// unconstrained value, which covers Python's, so a proof stays a proof.
pub const EXACT_BITS: u32 = 126;

/// Guard bits the encoding needs beyond its operands' (`r * 2^54`).
pub const EXTRA_BITS: u32 = 57;

/// `round(a / b)` as Python computes it, in guard arithmetic `e` (whose
/// `index` is as wide as guard numbers), and where Python computes it
/// (`b != 0`; no operand of 2^126 or more reaches a double's overflow).
/// `beyond` is a fresh value and definedness for operands past the exact
/// range.
pub fn rounded_truediv(
    e: &Enc,
    a: &Num,
    b: &Num,
    round: Round,
    beyond: (Num, Bool),
) -> (Num, Bool) {
    let idx = DType::Index;
    let lit = |v: i128| e.lit(v, idx);
    let pow = |k: u32| lit(1i128 << k);
    let bin = |op: Op, x: &Num, y: &Num| e.arith(op, idx, idx, &[x.clone(), y.clone()]).0;
    let zero = lit(0);
    let limit = match a {
        Num::I(_) => EXACT_BITS,
        Num::B(_) => EXACT_BITS.min(e.bits(idx) - EXTRA_BITS + 1),
    };
    let within = |x: &Num| {
        let p = pow(limit);
        let n = bin(Op::Sub, &zero, &p);
        Bool::and(&[e.lt(&n, x), e.lt(x, &p)])
    };
    let exact = Bool::and(&[within(a), within(b)]);
    let abs = |x: &Num| e.ite(&e.lt(x, &zero), &bin(Op::Sub, &zero, x), x);
    let (ua, ub) = (abs(a), abs(b));
    // ub > 0 wherever the result is used (b != 0 is its definedness).
    let (f, r) = match (&ua, &ub) {
        // Within the exact range both fit `limit` bits unsigned: a divider
        // that wide, not one as wide as the guard's numbers, is what the
        // solver bit-blasts.
        (Num::B(x), Num::B(y)) => {
            let w = e.bits(idx);
            let (x, y) = (x.extract(limit - 1, 0), y.extract(limit - 1, 0));
            (
                Num::B(x.bvudiv(&y).zero_ext(w - limit)),
                Num::B(x.bvurem(&y).zero_ext(w - limit)),
            )
        }
        _ => (bin(Op::FloorDiv, &ua, &ub), bin(Op::Mod, &ua, &ub)),
    };
    let one = lit(1);
    let f1 = bin(Op::Add, &f, &one);
    let f_even = e.eq(&bin(Op::Mod, &f, &lit(2)), &zero);

    // F >= 2^53: F rounded to 53 significant bits, r > 0 the sticky bit.
    let sticky = e.lt(&zero, &r);
    let mut large = f.clone(); // F >= 2^limit: outside the exact range
    for ex in (53..limit).rev() {
        let s = ex - 52;
        let lo = bin(Op::FloorDiv, &f, &pow(s));
        let rem = bin(Op::Mod, &f, &pow(s));
        let half = pow(s - 1);
        let lo_odd = e.eq(&bin(Op::Mod, &lo, &lit(2)), &one);
        let up = Bool::or(&[
            e.lt(&half, &rem),
            Bool::and(&[e.eq(&rem, &half), Bool::or(&[sticky.clone(), lo_odd])]),
        ]);
        let m = e.ite(&up, &bin(Op::Add, &lo, &one), &lo);
        let rounded = bin(Op::Mul, &m, &pow(s));
        large = e.ite(&e.lt(&f, &pow(ex + 1)), &rounded, &large);
    }

    // F < 2^53, r > 0: the doubles in [F, F+1] are 2^(ex-52) apart (ex the
    // binade of F, -1 for F = 0); the quotient rounds to F when r/|b| is
    // below half that, to F+1 when (|b|-r)/|b| is, ties to the even
    // significand (F's or F+1's below binade 52, the even one of them at
    // 52). F = 0 rounds to 0 only below 2^-1075: no quotient here.
    let gap = bin(Op::Sub, &ub, &r);
    let (mut down, mut up) = (Bool::from_bool(false), Bool::from_bool(false));
    for ex in (-1i32..=52).rev() {
        let k = (53 - ex) as u32;
        let tie_even = |even: Bool| {
            if ex < 52 {
                Bool::from_bool(true)
            } else {
                even
            }
        };
        let scaled_r = bin(Op::Mul, &r, &pow(k));
        let scaled_gap = bin(Op::Mul, &gap, &pow(k));
        let d = if ex < 0 {
            Bool::from_bool(false)
        } else {
            Bool::or(&[
                e.lt(&scaled_r, &ub),
                Bool::and(&[e.eq(&scaled_r, &ub), tie_even(f_even.clone())]),
            ])
        };
        let u = Bool::or(&[
            e.lt(&scaled_gap, &ub),
            Bool::and(&[e.eq(&scaled_gap, &ub), tie_even(f_even.not())]),
        ]);
        let here = e.lt(&f, &pow((ex + 1) as u32));
        down = here.ite(&d, &down);
        up = here.ite(&u, &up);
    }
    let integral = Bool::or(&[e.le(&pow(53), &f), e.eq(&r, &zero)]);
    let whole = e.ite(&e.le(&pow(53), &f), &large, &f);
    let floor = e.ite(&integral, &whole, &e.ite(&up, &f1, &f));
    let ceil = e.ite(&integral, &whole, &e.ite(&down, &f, &f1));

    let negative = Bool::and(&[e.lt(a, &zero).xor(e.lt(b, &zero)), e.eq(a, &zero).not()]);
    let pick = |neg: bool| {
        let (which, negate) = round.of_magnitude(neg);
        let m = match which {
            Magnitude::Floor => &floor,
            Magnitude::Ceil => &ceil,
        };
        if negate {
            bin(Op::Sub, &zero, m)
        } else {
            m.clone()
        }
    };
    let value = e.ite(&negative, &pick(true), &pick(false));
    let nonzero = e.eq(b, &zero).not();
    (
        e.ite(&exact, &value, &beyond.0),
        Bool::and(&[nonzero, exact.ite(&Bool::from_bool(true), &beyond.1)]),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::Mode;
    use crate::poly::Poly;
    use z3::ast::{Int, BV};
    use z3::{SatResult, Solver};

    /// Pairs where the double's rounding matters: around 2^52..2^64, ties,
    /// signs, quotients below 1, a zero divisor.
    fn pairs() -> Vec<(i128, i128)> {
        let mut out = vec![(0, 5), (7, 0), (-7, 2), (7, -2), (-1, 3), (5, 7), (-5, -7)];
        for e in [52u32, 53, 54, 60, 62, 63] {
            for d in [-1i128, 0, 1] {
                out.push(((1i128 << e) + d, 1));
                out.push((-((1i128 << e) + d), 3));
                out.push(((1i128 << e) + d, (1i128 << e) - 1));
            }
        }
        // #17290: (2^60 + 1) / 2^60 is 1.0; half-ulp ties above 1 and 3.
        out.extend([
            ((1 << 60) + 1, 1 << 60),
            ((1 << 60) + (1 << 7), 1 << 60),
            ((1 << 60) + (1 << 7) + 1, 1 << 60),
            (-((1 << 60) + (1 << 7)), 1 << 60),
            (3 * (1 << 60) + (1 << 8), 1 << 60),
            (4 * (1 << 60) - (1 << 8), 1 << 60),
            (4 * (1 << 60) - (1 << 7), 1 << 60),
            (((1 << 53) + 1) * 2, 1),
            (((1 << 53) + 3) * 2, 1),
            (i64::MAX as i128, 3),
            (i64::MIN as i128, -1),
            (i64::MIN as i128 + 1, i64::MAX as i128),
        ]);
        out
    }

    /// The encoding, its operands pinned to each pair, has no model other
    /// than the engine's value (itself checked against CPython).
    fn agrees(mode: Mode, bits: u32) {
        let e = Enc::new(mode, bits);
        for (a, b) in pairs() {
            for round in Round::ALL {
                let (x, y, beyond) = match mode {
                    Mode::Int => (
                        Num::I(Poly::atom(Int::new_const("a"))),
                        Num::I(Poly::atom(Int::new_const("b"))),
                        Num::I(Poly::atom(Int::new_const("beyond"))),
                    ),
                    Mode::Bv => (
                        Num::B(BV::new_const("a", bits)),
                        Num::B(BV::new_const("b", bits)),
                        Num::B(BV::new_const("beyond", bits)),
                    ),
                };
                let (v, def) =
                    rounded_truediv(&e, &x, &y, round, (beyond, Bool::new_const("beyond.def")));
                let s = Solver::new();
                s.assert(e.eq(&x, &e.lit(a, DType::Index)));
                s.assert(e.eq(&y, &e.lit(b, DType::Index)));
                let want = engine::truediv::truediv(a, b, round);
                match want {
                    Some(w) => s.assert(Bool::or(&[
                        def.not(),
                        e.eq(&v, &e.lit(w, DType::Index)).not(),
                    ])),
                    None => s.assert(&def),
                }
                assert_eq!(
                    s.check(),
                    SatResult::Unsat,
                    "{round:?} of {a} / {b} ({mode:?}): want {want:?}"
                );
                if let (Round::Ceil, Some(w)) = (round, want) {
                    // and the value is a model (the premises are consistent)
                    let s = Solver::new();
                    s.assert(e.eq(&x, &e.lit(a, DType::Index)));
                    s.assert(e.eq(&y, &e.lit(b, DType::Index)));
                    s.assert(&def);
                    s.assert(e.eq(&v, &e.lit(w, DType::Index)));
                    assert_eq!(s.check(), SatResult::Sat, "{a} / {b} ({mode:?})");
                }
            }
        }
    }

    #[test]
    fn the_integer_encoding_is_pythons_rounding() {
        agrees(Mode::Int, 64);
    }

    #[test]
    fn the_bitvector_encoding_is_pythons_rounding() {
        agrees(Mode::Bv, 64 + 2 + EXTRA_BITS + 2);
    }
}
