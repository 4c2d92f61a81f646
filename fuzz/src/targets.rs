//! The bodies of the cargo-fuzz targets in `fuzz/fuzz_targets/`, kept in
//! the library so that the targets are three lines each, the test suite can
//! call them, and `tileproof import` decodes an artifact exactly as the
//! target that found it did.
//!
//! A target panics on a finding: that is how libFuzzer learns of one (it
//! saves the input as a crash artifact, which `tileproof import` turns into
//! a text corpus case).

use crate::checks::{self, CheckConfig, KindSet};
use crate::generate::{Case, Generator};
use crate::subject::Engine;
use engine::rewrite::Simplifier;
use engine::rules::builtin;
use std::sync::OnceLock;

/// Checks for one libFuzzer input: the JIT oracle over every domain up to
/// 2^16 points (else 1024 samples), ranges at 8 points, idempotence; no
/// JIT-versus-interpreter probe (a second compilation per input) and no
/// SMT. Single-threaded: libFuzzer runs one input at a time, and its
/// executions per second are what finds bugs; campaigns check more.
pub fn target_config() -> CheckConfig {
    CheckConfig {
        max_exhaustive: 1 << 16,
        samples: 1 << 10,
        probe_points: 8,
        parallel: false,
        kinds: KindSet::ALL
            .without(checks::Kind::Validate)
            .without(checks::Kind::Jit),
        ..CheckConfig::default()
    }
}

fn engine() -> &'static Engine<'static> {
    static S: OnceLock<Engine<'static>> = OnceLock::new();
    S.get_or_init(|| Engine::new(Simplifier::new(builtin()), Vec::new()))
}

/// bytes -> `Case::from_bytes(generator)` -> simplify -> checks; panics with
/// the failure and the case's text on a finding.
pub fn graph(generator: Generator, bytes: &[u8]) {
    let case = Case::from_bytes(generator, bytes);
    let checked = checks::check(&case.graph, &case.roots, engine(), &target_config(), None);
    if let Some(f) = checked.failures.first() {
        panic!("tileproof finding: {f}\n{}", case.program());
    }
}

/// bytes -> text -> the one input reader (the text format or an XLA map,
/// as detected) -> print -> read back -> simplify -> print: errors are
/// fine, panics (and stack overflows) are not, and what the printer writes
/// must read back. Every stage a command takes text through, so a long
/// input (libFuzzer's `-max_len`) reaches each one's limits.
pub fn parse(bytes: &[u8]) {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return;
    };
    let Ok(input) = engine::input::read(text, None) else {
        return;
    };
    let mut p = input.program;
    let printed = engine::print::program(&p.graph, &p.outputs);
    if let Err(e) = engine::parse::parse_program(&printed) {
        panic!("the printed program does not read back: {e}\n{printed}");
    }
    if let Ok(out) = Simplifier::new(builtin()).simplify(&mut p.graph, &p.outputs, false) {
        let _ = engine::print::program(&p.graph, &out.roots);
    }
}

/// The `parse` target's libFuzzer dictionary: every token of the text
/// format (`engine::parse::tokens`, from the op table, so it cannot fall
/// behind a new op), one quoted entry per line. libFuzzer's dictionary
/// syntax knows only `\\`, `\"` and `\xHH` escapes (a `\n` makes it refuse
/// the whole file), so every byte outside printable ASCII is `\xHH`.
pub fn parse_dictionary() -> String {
    let mut out = String::new();
    for t in engine::parse::tokens() {
        out.push('"');
        for b in t.bytes() {
            match b {
                b'\\' => out.push_str("\\\\"),
                b'"' => out.push_str("\\\""),
                0x20..=0x7e => out.push(b as char),
                _ => out.push_str(&format!("\\x{b:02X}")),
            }
        }
        out.push_str("\"\n");
    }
    out
}

/// The `main` of a target built without libFuzzer: runs `body` on every
/// input named on the command line (a file, or a directory's files) and
/// reports each as ok or failed. Exit status 1 if any failed, 2 on a usage
/// error: so a crash artifact can be reproduced on stable Rust.
pub fn replay_inputs(name: &str, body: impl Fn(&[u8])) -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() || args.iter().any(|a| a == "-h" || a == "--help") {
        eprintln!(
            "usage: {name} INPUT...\n\n\
             Runs the `{name}` fuzz target once on each input file (or each file of a\n\
             directory). This build has no libFuzzer; to fuzz, run `cargo fuzz run {name}`."
        );
        return std::process::ExitCode::from(2);
    }
    let mut failed = 0;
    let mut inputs = Vec::new();
    for a in &args {
        let p = std::path::Path::new(a);
        if p.is_dir() {
            match std::fs::read_dir(p) {
                Ok(rd) => {
                    let mut files: Vec<_> = rd
                        .filter_map(|e| e.ok().map(|e| e.path()))
                        .filter(|p| p.is_file())
                        .collect();
                    files.sort();
                    inputs.extend(files);
                }
                Err(e) => {
                    eprintln!("{a}: {e}");
                    failed += 1;
                }
            }
        } else {
            inputs.push(p.to_path_buf());
        }
    }
    for p in &inputs {
        let bytes = match std::fs::read(p) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("{}: {e}", p.display());
                failed += 1;
                continue;
            }
        };
        match checks::catch(|| body(&bytes)) {
            Ok(()) => println!("ok   {}", p.display()),
            Err(msg) => {
                failed += 1;
                println!("FAIL {}: {msg}", p.display());
            }
        }
    }
    if failed > 0 {
        std::process::ExitCode::from(1)
    } else {
        std::process::ExitCode::SUCCESS
    }
}
