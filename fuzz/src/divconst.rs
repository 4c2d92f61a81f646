//! Division by a constant as a multiply-high and a shift, proved for every
//! dividend it is used on.
//!
//! The oracle divides by constants on every point (a tiled index is full of
//! `// 64` and `mod 16`); a hardware division costs tens of cycles. A
//! divisor known at compile time becomes a multiplication by a "magic"
//! number (Granlund and Montgomery, *Division by Invariant Integers using
//! Multiplication*, PLDI 1994, Theorem 4.2; Hacker's Delight ch. 10):
//!
//! if `2^(N+l) <= m*d <= 2^(N+l) + 2^l`, then `floor(n/d) =
//! floor(m*n / 2^(N+l))` for every integer `0 <= n < 2^N`.
//!
//! Here `N = 63` (a non-negative `i64`, or the magnitude-like `a ^ (a >> 63)`
//! of any `i64`: see [`crate::jit`]'s floor division), `l = ceil(log2 d)`
//! and `m = ceil(2^(63+l) / d)`, which fits 64 bits. The theorem's
//! condition is checked exactly in `u128` for each divisor when the code is
//! compiled ([`magic63`] returns `None` where it fails, and the caller
//! keeps the hardware division), so each emitted quotient is exact by the
//! theorem, not only on tested values. `floor(m*n / 2^(63+l))` is computed
//! as `umulhi(n, m) >> (l - 1)` (nested floors: `floor(floor(x/2^64)/2^(l-1))
//! = floor(x/2^(63+l))`).

/// `q = umulhi(n, mul) >> shift` is `floor(n / d)` for every `n < 2^63`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Magic {
    pub mul: u64,
    pub shift: u32,
}

/// The magic number of an unsigned division by `d` of dividends below
/// 2^63, if Granlund and Montgomery's condition holds for it (it does for
/// every `d` in `2..2^63`; the check is what makes the lowering proved
/// rather than assumed). `None` for `d < 2` or `d >= 2^63`.
pub fn magic63(d: u64) -> Option<Magic> {
    if !(2..=i64::MAX as u64).contains(&d) {
        return None;
    }
    // ceil(log2 d), in 1..=63.
    let l = 64 - (d - 1).leading_zeros();
    let p = 1u128 << (63 + l);
    let m = p.div_ceil(d as u128);
    // m*d < 2^127: m <= 2^64 and d < 2^63.
    let md = m * d as u128;
    let holds = m <= u64::MAX as u128 && p <= md && md <= p + (1u128 << l);
    holds.then_some(Magic {
        mul: m as u64,
        shift: l - 1,
    })
}

impl Magic {
    /// The quotient the emitted code computes, for `n < 2^63`.
    pub fn quotient(self, n: u64) -> u64 {
        (((n as u128 * self.mul as u128) >> 64) as u64) >> self.shift
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Dividends where a wrong multiplier shows first: around multiples of
    /// `d`, and at the ends of the range.
    fn edges(d: u64) -> Vec<u64> {
        let top = i64::MAX as u64;
        let mut v = vec![0, 1, 2, d - 1, d, d + 1, top, top - 1, top - d, top / 2];
        let last = top / d * d;
        for k in [last, last.saturating_sub(d)] {
            v.extend([k.saturating_sub(1), k, k.saturating_add(1).min(top)]);
        }
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let n = x >> 1;
            v.extend([n, n / d * d, (n / d * d).saturating_sub(1)]);
        }
        v
    }

    #[test]
    fn magic_quotient_is_the_floor_quotient_at_edges_of_every_small_and_power_of_two_divisor() {
        let divisors = (2..=1000u64)
            .chain((1..63).map(|k| 1u64 << k))
            .chain((2..63).flat_map(|k| [(1u64 << k) - 1, (1u64 << k) + 1]))
            .chain([
                i64::MAX as u64,
                i64::MAX as u64 - 1,
                641,
                6700417,
                1_000_000_007,
            ]);
        for d in divisors {
            let m = magic63(d).unwrap_or_else(|| panic!("no magic number for {d}"));
            for n in edges(d) {
                assert_eq!(m.quotient(n), n / d, "{n} / {d} with {m:?}");
            }
        }
    }

    #[test]
    fn magic_is_refused_outside_its_divisors() {
        assert_eq!(magic63(0), None);
        assert_eq!(magic63(1), None);
        assert_eq!(magic63(1 << 63), None);
        assert_eq!(magic63(u64::MAX), None);
    }
}
