//! splitmix64 (Steele, Lea, Flood 2014): the one deterministic random
//! source of the workspace (a utility below every layer). The engine samples
//! a composition's domain with it, the verifier orders its counterexample
//! search, and the fuzz crate draws every case from it: a seed reproduces
//! everything.

/// One step of splitmix64: advances `state` and returns its output.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
