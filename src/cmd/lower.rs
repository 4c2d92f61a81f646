//! `tileproof lower`: index dtype lowering of a file's expressions.

use engine::lower::{as_roots, lower, show, Select};
use engine::rewrite::Simplifier;
use engine::rules::builtin;
use fuzz::oracle::{check_cheapest, OracleConfig};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Input file, in the text format or an XLA indexing map (detected, or
    /// see `--input-format`), or `-` for standard input.
    pub file: String,
    /// Lower the expressions as written, without simplifying them first.
    #[arg(long)]
    pub raw: bool,
    /// Do not compare the lowered program with the abstract one.
    #[arg(long)]
    pub no_check: bool,
    /// The input's syntax (default: detected; a file whose first line is
    /// `(dims)[symbols] -> (...)` is an XLA indexing map).
    #[arg(long, value_enum, value_name = "SYNTAX")]
    pub input_format: Option<super::Syntax>,
}

pub fn run(a: Args) -> ExitCode {
    let mut prog = match super::read_input(&a.file, a.input_format) {
        Ok(i) => i.program,
        Err(e) => {
            eprintln!("tileproof lower: {e:#}");
            return ExitCode::from(1);
        }
    };
    let mut roots = prog.outputs.clone();
    if !a.raw {
        match Simplifier::new(builtin()).simplify(&mut prog.graph, &roots, false) {
            Ok(o) => roots = o.roots,
            Err(e) => {
                eprintln!("{}: {e}", a.file);
                return ExitCode::from(1);
            }
        }
    }
    let g = &mut prog.graph;
    let terminals = match lower(g, &roots, Select::Ranges) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{}: {e}", a.file);
            return ExitCode::from(1);
        }
    };
    print!("{}", show(g, &terminals));
    if a.no_check {
        return ExitCode::SUCCESS;
    }
    // The lowered program, with its concrete widths (i32 wraps in 32
    // bits), against the abstract one over the whole domain (sampled when
    // large).
    let tgt = as_roots(g, &prog.outputs, &terminals);
    match check_cheapest(g, &prog.outputs, &tgt, &OracleConfig::default()) {
        Ok((rep, by)) if rep.refines() => {
            println!("# checked by {by} against the source: {rep}");
            ExitCode::SUCCESS
        }
        Ok((rep, by)) => {
            eprintln!("{}: the lowered program differs ({by}): {rep}", a.file);
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!(
                "{}: the JIT cannot compile the lowered program: {e}",
                a.file
            );
            ExitCode::from(1)
        }
    }
}
