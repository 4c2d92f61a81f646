//! Exact integer arithmetic on `i128`: both division families, gcd,
//! two's complement wrapping, shifts. The interpreter's primitives, the
//! range analysis and the algorithmic rules all compute with these; none of
//! them wraps by accident (a result that does not fit `i128` is `None`).

use crate::ir::op::Op;

/// Both operands as `i64`, where they fit and the quotient does too (not
/// `i64::MIN / -1`) and the divisor is not 0: most operands the passes and
/// the range analysis divide are small, and a 64-bit division is one
/// instruction where an `i128` one is a library call.
#[inline]
fn narrow(a: i128, b: i128) -> Option<(i64, i64)> {
    let (a, b) = (i64::try_from(a).ok()?, i64::try_from(b).ok()?);
    (b != 0 && !(a == i64::MIN && b == -1)).then_some((a, b))
}

/// The truncating quotient and remainder, every division family's start;
/// `None` for a zero divisor or a quotient `i128` cannot hold.
#[inline]
fn trunc_qr(a: i128, b: i128) -> Option<(i128, i128)> {
    match narrow(a, b) {
        Some((a, b)) => Some(((a / b) as i128, (a % b) as i128)),
        None => trunc_qr_wide(a, b),
    }
}

/// [`trunc_qr`] in 128 bits (the reference its 64-bit path is tested
/// against).
fn trunc_qr_wide(a: i128, b: i128) -> Option<(i128, i128)> {
    // i128::MIN % -1 is 0 mathematically (Rust's `%` traps on it); the
    // quotient does not fit, so there is none either way.
    Some((a.checked_div(b)?, a.checked_rem(b)?))
}

/// Truncating division (toward zero). `None` for a zero divisor or a
/// quotient `i128` cannot hold.
#[inline]
pub fn div_trunc(a: i128, b: i128) -> Option<i128> {
    trunc_qr(a, b).map(|(q, _)| q)
}

/// Truncating remainder: `a - b * div_trunc(a, b)`, sign of the dividend.
#[inline]
pub fn rem_trunc(a: i128, b: i128) -> Option<i128> {
    if a == i128::MIN && b == -1 {
        return Some(0);
    }
    trunc_qr(a, b).map(|(_, r)| r)
}

/// The truncated quotient is above the floor (a non-zero remainder of
/// the other sign than the divisor).
fn rounds_up(r: i128, b: i128) -> bool {
    r != 0 && ((r < 0) != (b < 0))
}

/// Floor division (toward negative infinity).
#[inline]
pub fn div_floor(a: i128, b: i128) -> Option<i128> {
    let (q, r) = trunc_qr(a, b)?;
    Some(if rounds_up(r, b) { q - 1 } else { q })
}

/// Floor remainder: `a - b * div_floor(a, b)`, sign of the divisor.
#[inline]
pub fn mod_floor(a: i128, b: i128) -> Option<i128> {
    let r = rem_trunc(a, b)?;
    Some(if rounds_up(r, b) { r + b } else { r })
}

/// Ceiling division (toward positive infinity).
#[inline]
pub fn div_ceil(a: i128, b: i128) -> Option<i128> {
    let (q, r) = trunc_qr(a, b)?;
    Some(if r != 0 && !rounds_up(r, b) { q + 1 } else { q })
}

/// `a.rem_euclid(d)` for `d > 0` (the floor remainder), in 64 bits where
/// both fit.
#[inline]
pub fn rem_pos(a: i128, d: i128) -> i128 {
    debug_assert!(d > 0);
    mod_floor(a, d).expect("a positive divisor")
}

/// The interval `[lo, hi]` cut to the values whose floor remainder by
/// `d > 0` is in `[a, b]` (`0 <= a <= b < d`) at its ends: the first such
/// value at or above `lo` and the last at or below `hi` (an empty result
/// has `lo > hi`), and whether every value between them has its remainder
/// in `[a, b]` (the remainder's constraint is then implied).
pub fn ends_with_residue(lo: i128, hi: i128, d: i128, a: i128, b: i128) -> (i128, i128, bool) {
    let (rl, rh) = (lo.rem_euclid(d), hi.rem_euclid(d));
    let up = match rl {
        r if r < a => lo + (a - r),
        r if r > b => lo + (d - r) + a,
        _ => lo,
    };
    let down = match rh {
        r if r > b => hi - (r - b),
        r if r < a => hi - r - (d - b),
        _ => hi,
    };
    let implied = up <= down && down - up <= b - a && up.rem_euclid(d) + (down - up) <= b;
    (up, down, implied)
}

/// Greatest common divisor, non-negative; `gcd(0, 0) == 0`.
pub fn gcd(a: i128, b: i128) -> i128 {
    let (a, b) = (a.unsigned_abs(), b.unsigned_abs());
    // In 64 bits where both magnitudes fit (the same Euclid steps).
    match (u64::try_from(a), u64::try_from(b)) {
        (Ok(a), Ok(b)) => euclid(a, b) as i128,
        _ => euclid(a, b) as i128,
    }
}

/// Euclid's algorithm on magnitudes.
fn euclid<T: Copy + PartialEq + Default + std::ops::Rem<Output = T>>(mut a: T, mut b: T) -> T {
    while b != T::default() {
        (a, b) = (b, a % b);
    }
    a
}

/// Two's complement wrap of `v` to `bits` bits.
pub fn wrap(v: i128, bits: u32) -> i128 {
    let shift = 128 - bits;
    (v << shift) >> shift
}

/// `2^k` for `0 <= k < 127`.
pub fn pow2(k: i128) -> Option<i128> {
    (0..127).contains(&k).then(|| 1i128 << k)
}

/// `n` is a positive power of two.
pub fn is_pow2(n: i128) -> bool {
    n > 0 && n & (n - 1) == 0
}

/// `k` with `2^k == n`, for a positive power of two.
pub fn log2(n: i128) -> Option<i128> {
    is_pow2(n).then(|| n.trailing_zeros() as i128)
}

/// The exact result of an integer operation (class `Arith` or `Cast`) on
/// defined operands, before the result dtype's overflow or wrap rule is
/// applied. `None` where the op itself has no result: a zero divisor, a
/// negative shift amount, or a result beyond `i128`.
pub fn exact(op: Op, a: i128, b: i128) -> Option<i128> {
    match op {
        Op::Neg => a.checked_neg(),
        Op::Cast => Some(a),
        Op::Add => a.checked_add(b),
        Op::Sub => a.checked_sub(b),
        Op::Mul => a.checked_mul(b),
        Op::Min => Some(a.min(b)),
        Op::Max => Some(a.max(b)),
        Op::Div => div_trunc(a, b),
        Op::Rem => rem_trunc(a, b),
        Op::FloorDiv => div_floor(a, b),
        Op::Mod => mod_floor(a, b),
        Op::CeilDiv => div_ceil(a, b),
        Op::Shl => a.checked_mul(pow2(b)?),
        // floor(a / 2^b): an arithmetic shift (every bit shifted out past
        // 126 leaves the sign).
        Op::Shr if b >= 0 => Some(a >> b.min(127)),
        Op::Shr => None,
        Op::BitAnd => Some(a & b),
        _ => unreachable!("{op:?} is not an integer operation"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn division_families_agree_with_their_definitions() {
        for a in -20i128..=20 {
            for b in (-6i128..=6).filter(|&b| b != 0) {
                let (qf, rf) = (div_floor(a, b).unwrap(), mod_floor(a, b).unwrap());
                assert_eq!(a, b * qf + rf);
                assert!(rf == 0 || (rf < 0) == (b < 0));
                assert!(rf.abs() < b.abs());
                let (qt, rt) = (div_trunc(a, b).unwrap(), rem_trunc(a, b).unwrap());
                assert_eq!(a, b * qt + rt);
                assert!(rt == 0 || (rt < 0) == (a < 0));
                let qc = div_ceil(a, b).unwrap();
                assert_eq!(qc, -div_floor(-a, b).unwrap());
            }
        }
        assert_eq!(rem_trunc(i128::MIN, -1), Some(0));
        assert_eq!(div_trunc(i128::MIN, -1), None);
    }

    #[test]
    fn the_64_bit_division_path_is_the_128_bit_one() {
        let edges = [
            0i128,
            1,
            2,
            3,
            7,
            64,
            1000,
            i32::MAX as i128,
            i64::MAX as i128 - 1,
            i64::MAX as i128,
            i64::MAX as i128 + 1,
            u64::MAX as i128,
            u64::MAX as i128 + 1,
            i128::MAX,
        ];
        let mut vals: Vec<i128> = Vec::new();
        for e in edges {
            vals.extend([e, -e, e.wrapping_neg().wrapping_sub(1)]);
        }
        vals.push(i128::MIN);
        vals.push(i64::MIN as i128);
        vals.extend(-40i128..=40);
        let mut s = 52u64;
        for _ in 0..1500 {
            let shift = crate::splitmix::splitmix64(&mut s) % 64;
            vals.push(((crate::splitmix::splitmix64(&mut s) as i64) >> shift) as i128);
        }
        for &a in &vals {
            for &b in &vals {
                assert_eq!(trunc_qr(a, b), trunc_qr_wide(a, b), "{a} / {b}");
                assert_eq!(
                    gcd(a, b),
                    euclid(a.unsigned_abs(), b.unsigned_abs()) as i128,
                    "gcd {a} {b}"
                );
                if b > 0 {
                    assert_eq!(rem_pos(a, b), a.rem_euclid(b), "{a} rem_euclid {b}");
                }
            }
        }
    }

    #[test]
    fn shifts_are_multiplication_and_floor_division_by_powers_of_two() {
        for a in -40i128..=40 {
            for k in 0..6 {
                assert_eq!(exact(Op::Shl, a, k), Some(a * (1 << k)));
                assert_eq!(exact(Op::Shr, a, k), div_floor(a, 1 << k));
                assert_eq!(exact(Op::BitAnd, a, (1 << k) - 1), mod_floor(a, 1 << k));
            }
        }
        assert_eq!(exact(Op::Shr, -1, 200), Some(-1));
        assert_eq!(exact(Op::Shr, 5, -1), None);
        assert_eq!(exact(Op::Shl, 1, 127), None);
    }
}
