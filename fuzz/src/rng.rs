//! Deterministic randomness, all from splitmix64 (Steele, Lea, Flood
//! 2014): a campaign's case seeds, the bytes a seed generates a case from,
//! the oracle's samples and the variants' choices. A seed is the whole
//! case, so every report reproduces from numbers alone.

pub use engine::splitmix::splitmix64;

/// A well-mixed hash of one number: splitmix64's output for state `z`.
pub fn hash64(z: u64) -> u64 {
    splitmix64(&mut { z })
}

/// The increment of wyrand's state (Wang Yi's wyrand): its `k`-th output
/// from state `s` is `wyrand(s + k * WYRAND_STEP)`.
pub const WYRAND_STEP: u64 = 0xa076_1d64_78bd_642f;

/// wyrand's output for state `s`: one 64x64->128 multiplication folded to
/// 64 bits (it passes PractRand and BigCrush), half of splitmix64's cost
/// where hundreds of millions are drawn.
#[inline]
pub fn wyrand(s: u64) -> u64 {
    let t = (s as u128) * ((s ^ 0xe703_7ed1_a0b4_28db) as u128);
    (t as u64) ^ ((t >> 64) as u64)
}

/// The seed of case number `k` of a campaign seeded with `seed`: the `k`-th
/// output of splitmix64 started at `seed` (a bijection in `k`, so distinct
/// case numbers never share a seed).
pub fn mix(seed: u64, k: u64) -> u64 {
    let mut state = seed.wrapping_add(k.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    splitmix64(&mut state)
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

/// A small deterministic random source.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        splitmix64(&mut self.0)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }

    pub fn coin(&mut self) -> bool {
        self.next_u64() & 1 == 1
    }
}
