//! Fuzzing: generators, the Cranelift JIT oracle, campaigns, the corpus.
//!
//! - [`jit`]: compiles engine graphs to native code with the exact
//!   semantics of `engine::interp` (single-point evaluator for tests).
//! - [`oracle`]: compiles an original and a simplified form into one
//!   function that checks refinement over the whole iteration domain.

pub mod jit;
pub mod oracle;
