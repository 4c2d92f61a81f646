//! Python's integer true division rounded back to an integer:
//! `math.ceil(a / b)`, `math.floor(a / b)`, `int(a / b)` for Python ints.
//!
//! CPython's `int / int` (`long_true_divide`) is the double nearest the
//! exact rational `a / b` (ties to even), not `float(a) / float(b)`; it
//! raises `ZeroDivisionError` for `b == 0` and `OverflowError` when that
//! double would overflow. So these differ from the exact ceiling, floor or
//! truncation wherever `a / b` is within half a unit in the last place of
//! an integer (possible from `|a / b| >= 1` once `|b|` exceeds 2^53, or
//! `|a / b| >= 2^52` for any `b`): the bug tinygrad PR #17290 fixed.
//!
//! The double is characterized through the exact floor `F` of `|a / b|`
//! and its remainder `r` (`|a| = F*|b| + r`): at `F >= 2^53` it is `F`
//! rounded to 53 significant bits with `r > 0` as the sticky bit, an
//! integer; below, the doubles between `F` and `F + 1` are `2^(e-52)`
//! apart (`e` the binade of `F`, -1 for `F = 0`), so only whether the
//! quotient rounds to `F`, to `F + 1` or in between decides the result.
//! `verify` encodes the same characterization for the solver.

/// How the double is turned back into an integer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Round {
    /// `math.ceil`.
    Ceil,
    /// `math.floor`.
    Floor,
    /// `int()`: towards zero.
    Trunc,
}

impl Round {
    pub const ALL: [Round; 3] = [Round::Ceil, Round::Floor, Round::Trunc];

    /// The guard helper's name.
    pub fn helper_name(self) -> &'static str {
        match self {
            Round::Ceil => "ceil_truediv",
            Round::Floor => "floor_truediv",
            Round::Trunc => "trunc_truediv",
        }
    }

    /// Which rounding of the magnitude `|a / b|`'s double gives the
    /// result, and whether it is then negated, for a quotient of sign
    /// `negative` (the doubles are symmetric about 0).
    pub fn of_magnitude(self, negative: bool) -> (Magnitude, bool) {
        match (self, negative) {
            (Round::Ceil, false) => (Magnitude::Ceil, false),
            (Round::Ceil, true) => (Magnitude::Floor, true),
            (Round::Floor, false) => (Magnitude::Floor, false),
            (Round::Floor, true) => (Magnitude::Ceil, true),
            (Round::Trunc, n) => (Magnitude::Floor, n),
        }
    }
}

/// The floor or the ceiling of the magnitude's double.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Magnitude {
    Floor,
    Ceil,
}

/// Quotients whose floor is at least this are rounded to integers.
pub const INTEGRAL_FROM: u128 = 1 << 53;

/// The floor and ceiling of the double nearest `ua / ub` (`ub > 0`).
/// (Every quotient of `u128`s is far below the doubles' overflow, and far
/// above their underflow: `ua / ub >= 2^-128` when not 0.)
pub fn rounded_magnitude(ua: u128, ub: u128) -> (u128, u128) {
    let (f, r) = (ua / ub, ua % ub);
    if f >= INTEGRAL_FROM {
        // 53 significant bits, r > 0 the sticky bit below them.
        let e = 127 - f.leading_zeros();
        let s = e - 52;
        let (lo, rem) = (f >> s, f & ((1u128 << s) - 1));
        let half = 1u128 << (s - 1);
        let up = rem > half || (rem == half && (r > 0 || lo & 1 == 1));
        let m = (lo + up as u128) << s;
        return (m, m);
    }
    if r == 0 {
        return (f, f);
    }
    // The doubles in [F, F+1] are 2^(e-52) apart: the quotient rounds to
    // F when r/ub is below half of that (2^(e-53)), to F+1 when (ub-r)/ub
    // is; a tie goes to the even significand, which is F's (or F+1's)
    // unless e = 52, where the candidates are F and F+1 themselves.
    let e: i32 = if f == 0 {
        -1
    } else {
        127 - f.leading_zeros() as i32
    };
    let k = (53 - e) as u32; // 1..=54
    let cmp = |n: u128| -> std::cmp::Ordering {
        // n * 2^k against ub, without overflowing.
        match n.checked_mul(1u128 << k) {
            Some(v) => v.cmp(&ub),
            None => std::cmp::Ordering::Greater,
        }
    };
    use std::cmp::Ordering::{Equal, Less};
    // F = 0 rounds to 0 only below 2^-1075, which no u128 quotient is.
    let down = f > 0 && (cmp(r) == Less || (cmp(r) == Equal && (e < 52 || f & 1 == 0)));
    let up = cmp(ub - r) == Less || (cmp(ub - r) == Equal && (e < 52 || f & 1 == 1));
    if down {
        (f, f)
    } else if up {
        (f + 1, f + 1)
    } else {
        (f, f + 1)
    }
}

/// `round(a / b)` as Python computes it for ints (`math.ceil(a / b)` for
/// [`Round::Ceil`]); `None` where Python raises (`b == 0`) or the result
/// does not fit `i128`.
pub fn truediv(a: i128, b: i128, round: Round) -> Option<i128> {
    if b == 0 {
        return None;
    }
    let (fl, ce) = rounded_magnitude(a.unsigned_abs(), b.unsigned_abs());
    let negative = (a < 0) != (b < 0) && a != 0;
    let (which, negate) = round.of_magnitude(negative);
    let m = match which {
        Magnitude::Floor => fl,
        Magnitude::Ceil => ce,
    };
    if negate {
        0i128.checked_sub_unsigned(m)
    } else {
        i128::try_from(m).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_quotients_are_the_exact_rounding() {
        for a in -50i128..=50 {
            for b in (-7i128..=7).filter(|&b| b != 0) {
                let q = a as f64 / b as f64;
                assert_eq!(
                    truediv(a, b, Round::Ceil),
                    Some(q.ceil() as i128),
                    "{a}/{b}"
                );
                assert_eq!(
                    truediv(a, b, Round::Floor),
                    Some(q.floor() as i128),
                    "{a}/{b}"
                );
                assert_eq!(
                    truediv(a, b, Round::Trunc),
                    Some(q.trunc() as i128),
                    "{a}/{b}"
                );
            }
        }
    }

    #[test]
    fn a_zero_divisor_is_no_value() {
        assert_eq!(truediv(5, 0, Round::Ceil), None);
    }

    #[test]
    fn a_quotient_half_an_ulp_above_an_integer_rounds_down_to_it() {
        // (2^53 + 1) / 1 is 2^53 as a double (tie to even); 2^60 + 1 over
        // 2^60 is 1.0, so its ceiling is 1, not 2 (#17290's bug).
        assert_eq!(truediv((1 << 53) + 1, 1, Round::Ceil), Some(1 << 53));
        assert_eq!(truediv((1 << 60) + 1, 1 << 60, Round::Ceil), Some(1));
        assert_eq!(truediv(-(1 << 60) - 1, 1 << 60, Round::Floor), Some(-1));
    }
}
