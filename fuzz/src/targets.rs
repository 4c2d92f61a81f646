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
use crate::peer::lines::{self, BadLine, Line};
use crate::subject::Engine;
use crate::{peer, peer_rules};
use engine::rewrite::Simplifier;
use engine::rules::builtin;
use engine::walk::Limits;
use std::sync::OnceLock;

/// Checks for one libFuzzer input: the JIT oracle within
/// [`Limits::FUZZ_INPUT`], ranges at 8 points, idempotence; no
/// JIT-versus-interpreter probe (a second compilation per input) and no
/// SMT. Single-threaded: libFuzzer runs one input at a time, and its
/// executions per second are what finds bugs; campaigns check more.
pub fn target_config() -> CheckConfig {
    CheckConfig {
        limits: Limits::FUZZ_INPUT,
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

/// The longest line the `protocol` target reads: small, so that
/// libFuzzer's inputs reach the over-long path too.
pub const PROTOCOL_MAX_LINE: usize = 1 << 12;

/// bytes -> an adapter's stdout: read in lines of at most
/// [`PROTOCOL_MAX_LINE`] bytes as tileproof reads a peer's
/// (`lines::read_line`), each line then read as every message of the
/// protocol (a hello; an answer to a two-expression case as trees or
/// text; `run`, `reproducer`, `rules` and `instances` answers). Garbage
/// is fine, panics (and stack overflows, and an answer built past its
/// node budget) are not.
pub fn protocol(bytes: &[u8]) {
    let mut p = engine::parse::parse_program(
        "var r0 in [0, 7]\nvar r1 in [-4, 4]\nvar c: bool\n\
         expr where(c, (r0 * 4 + r1) // 4, invalid)\nexpr r0 < r1\n",
    )
    .expect("the protocol target's case reads");
    let mut r = bytes;
    let mut buf = Vec::new();
    loop {
        match lines::read_line(&mut r, PROTOCOL_MAX_LINE, &mut buf) {
            Ok(Line::Text(line)) => {
                peer::read_every_way(&mut p.graph, &p.outputs, &line);
                if let Ok(r) = serde_json::from_str::<tileproof_adapter::Reply>(&line) {
                    let _ = peer_rules::rules_of(&r);
                    let _ = peer_rules::instances_of(&r);
                }
            }
            // Not read past, as from an adapter.
            Ok(Line::Bad(BadLine::TooLong { .. }) | Line::End) | Err(_) => return,
            Ok(Line::Bad(_)) => {}
        }
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

/// Every binary operator of the op table as a chain of `n` terms: an
/// infix one as `x op x op ... op x` (flat, left-associated), a call one
/// (`min`, `max`) as `min(x, min(x, ...))` (nested `n` deep); `int` is the
/// operand of an integer or comparison operator, `boolean` of a logic one.
/// Each with its spelling. Long inputs reach each stage's limits: the
/// `parse` target's seeds and the every-command chain test.
pub fn operator_chains(n: usize, int: &str, boolean: &str) -> Vec<(&'static str, String)> {
    engine::op::OPS
        .iter()
        .filter(|(_, info)| info.arity == 2)
        .filter_map(|(op, info)| {
            let operand = if op.class() == engine::op::Class::Logic {
                boolean
            } else {
                int
            };
            if let Some(spelled) = op.infix() {
                return Some((spelled, vec![operand; n].join(&format!(" {spelled} "))));
            }
            let engine::op::Syntax::Call(name) = info.syntax else {
                return None;
            };
            let mut chain = format!("{name}({operand}, ").repeat(n.saturating_sub(1));
            chain.push_str(operand);
            chain.push_str(&")".repeat(n.saturating_sub(1)));
            Some((name, chain))
        })
        .collect()
}

/// Seed inputs for the `parse` target, `(file name, text)`: a program of
/// each operator's 30,000-term chain, 100,000 nested parentheses, and an
/// XLA map with a 30,000-term result. libFuzzer grows its inputs a few
/// bytes at a time (in 5 minutes to about 3 KB), never to the lengths where
/// the parser and the rewriter once overflowed their stacks (26,000 and
/// 14,000 terms); it mutates a seed at the seed's own length.
pub fn parse_seeds() -> Vec<(String, String)> {
    const N: usize = 30_000;
    let vars = "var x in [0, 100]\nvar b: bool\n";
    let mut seeds: Vec<(String, String)> = operator_chains(N, "x", "b")
        .into_iter()
        .enumerate()
        .map(|(i, (_, chain))| (format!("chain-{i:02}"), format!("{vars}expr {chain}\n")))
        .collect();
    let deep = 100_000;
    seeds.push((
        "nested".into(),
        format!("{vars}expr {}x{}\n", "(".repeat(deep), ")".repeat(deep)),
    ));
    seeds.push((
        "xla-map".into(),
        format!(
            "(d0, d1) -> ({}),\ndomain:\nd0 in [0, 31],\nd1 in [0, 3]\n",
            vec!["d0 floordiv 4 + d1"; N].join(" + ")
        ),
    ));
    seeds
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
