//! The library half of `tileproof`: the glue between the verifier (SMT) and
//! the fuzzer (JIT oracle) that the commands and the tests share. The
//! engine, `verify` and `fuzz` know nothing of each other beyond the engine;
//! this is the one place where their answers are combined.

pub mod decide;
pub mod gate;
