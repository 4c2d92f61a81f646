//! cargo-fuzz target `parse`: bytes -> text -> read, print, read back,
//! simplify (`fuzz::targets::parse`): errors are fine, panics are not.
//!
//! Built by `cargo fuzz` (which passes `--cfg fuzzing`) this is a
//! libFuzzer target; built by plain `cargo build` it is a small program
//! that replays the inputs (files, or directories of files) named on its
//! command line, e.g. a crash artifact or a libFuzzer corpus.
#![cfg_attr(fuzzing, no_main)]

#[cfg(fuzzing)]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    fuzz::targets::parse(data);
});

#[cfg(not(fuzzing))]
fn main() -> std::process::ExitCode {
    fuzz::targets::replay_inputs("parse", fuzz::targets::parse)
}
