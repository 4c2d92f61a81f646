//! `tileproof`: is this index-arithmetic rewrite sound?
//!
//! The command wires the engine (simplifier), the verifier (Z3 proofs) and
//! the fuzzer (JIT oracle) together; each subcommand lives in `cmd/`.

mod cmd;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "tileproof",
    version,
    about = "Soundness checking for tensor-compiler index-arithmetic rewrites"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Simplify the expressions of a file (or `-` for standard input) and
    /// print one `expr` line per result.
    Simplify(cmd::simplify::Args),
    /// Prove declarative rules sound with Z3 at widths 8, 16, 32 and 64
    /// (the built-in rules, some of them by name, or a candidate file).
    Prove(cmd::prove::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Simplify(a) => cmd::simplify::run(a),
        Command::Prove(a) => cmd::prove::run(a),
    }
}
