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
    /// Lower `index` to i32/i64 (after simplifying): print every lowered
    /// node with its dtype, each root and its gate, and check the lowered
    /// program against the source with the JIT.
    Lower(cmd::lower::Args),
    /// Prove declarative rules sound with Z3 at widths 8, 16, 32 and 64
    /// (the built-in rules, some of them by name, or a candidate file).
    Prove(cmd::prove::Args),
    /// Check that the `expect` lines of a file refine its `expr` lines at
    /// every point of the variables' bounds (translation validation).
    Check(cmd::check::Args),
    /// Compose indexing maps (each map's results the next one's
    /// dimensions), simplify the composition, check it against the chain
    /// applied map by map, and print it as a map.
    Compose(cmd::compose::Args),
    /// Run a fuzz campaign: generated cases simplified and checked by the
    /// JIT oracle (and Z3 on a sample); findings are shrunk into corpus/.
    Fuzz(cmd::campaign::Args),
    /// Replay corpus cases with the current engine (JIT oracle, interpreter
    /// checks and Z3); fails naming each case that fails.
    Replay(cmd::replay::Args),
    /// Turn a libFuzzer crash artifact into a text corpus case.
    Import(cmd::import::Args),
    /// Write one upstream report per defect of a corpus (its kept
    /// findings grouped by peer release and cause), and their table.
    Report(cmd::report::Args),
    /// Serve tileproof's engine over the peer protocol on standard input
    /// and output, so it can be tested as a peer (docs/protocol.md).
    Serve(cmd::serve::Args),
    /// Print throughput figures: simplify, oracle, campaign.
    Bench(cmd::bench::Args),
    /// The soundness gate CI runs: prove every rule at every width (from
    /// the proof cache when nothing changed), replay the corpus, validate
    /// every algorithmic firing of a fixed-seed run, and run a smoke
    /// campaign of each generator; exit 0 only if all of it holds.
    Gate(cmd::gate::Args),
    /// Serve solver checks to the tileproof that started it, one JSON
    /// line each way (a check whose deadline must hold runs there, and
    /// the process is killed at the deadline).
    #[command(name = "solver-worker", hide = true)]
    SolverWorker,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if !matches!(cli.command, Command::SolverWorker) {
        // A check whose deadline must hold runs in a worker process.
        if let Ok(exe) = std::env::current_exe() {
            verify::worker::install(exe);
        }
    }
    let code = match cli.command {
        Command::SolverWorker => match verify::remote::serve() {
            Ok(()) => ExitCode::SUCCESS,
            Err(_) => ExitCode::from(1),
        },
        Command::Simplify(a) => cmd::simplify::run(a),
        Command::Lower(a) => cmd::lower::run(a),
        Command::Prove(a) => cmd::prove::run(a),
        Command::Check(a) => cmd::check::run(a),
        Command::Compose(a) => cmd::compose::run(a),
        Command::Fuzz(a) => cmd::campaign::run(a),
        Command::Replay(a) => cmd::replay::run(a),
        Command::Import(a) => cmd::import::run(a),
        Command::Report(a) => cmd::report::run(a),
        Command::Serve(a) => cmd::serve::run(a),
        Command::Bench(a) => cmd::bench::run(a),
        Command::Gate(a) => cmd::gate::run(a),
    };
    verify::worker::shutdown();
    code
}
