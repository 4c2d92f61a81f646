//! cargo-fuzz target `expr_tree`: bytes -> `Case::from_bytes(Expr)` -> simplify -> JIT oracle and the other checks; panics on a finding.
//!
//! Built by `cargo fuzz` (which passes `--cfg fuzzing`) this is a
//! libFuzzer target; built by plain `cargo build` it is a small program
//! that replays the inputs (files, or directories of files) named on its
//! command line, e.g. a crash artifact or a libFuzzer corpus.
#![cfg_attr(fuzzing, no_main)]

#[cfg(fuzzing)]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    fuzz::targets::graph(fuzz::generate::Generator::Expr, data);
});

#[cfg(not(fuzzing))]
fn main() -> std::process::ExitCode {
    fuzz::targets::replay_inputs("expr_tree", |data| {
        fuzz::targets::graph(fuzz::generate::Generator::Expr, data)
    })
}
