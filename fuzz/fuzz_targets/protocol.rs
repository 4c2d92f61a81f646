//! cargo-fuzz target `protocol`: bytes as an adapter's stdout -> the
//! bounded line reader -> every protocol message tileproof reads (hello,
//! answer, `run`, `reproducer`, `rules`, `instances`;
//! `fuzz::targets::protocol`): garbage is fine, panics are not.
//!
//! Built by `cargo fuzz` (which passes `--cfg fuzzing`) this is a
//! libFuzzer target; built by plain `cargo build` it is a small program
//! that replays the inputs (files, or directories of files) named on its
//! command line, e.g. a crash artifact or a libFuzzer corpus.
#![cfg_attr(fuzzing, no_main)]

#[cfg(fuzzing)]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    fuzz::targets::protocol(data);
});

#[cfg(not(fuzzing))]
fn main() -> std::process::ExitCode {
    fuzz::targets::replay_inputs("protocol", fuzz::targets::protocol)
}
