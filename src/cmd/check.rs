//! `tileproof check`: translation validation of one concrete rewrite.

use engine::dtype::Width;
use engine::parse::Program;
use std::process::ExitCode;
use std::time::Duration;
use verify::check::{check, CheckResult};

#[derive(clap::Args)]
pub struct Args {
    /// A file with `var` lines, `expr` lines (the source) and as many
    /// `expect` lines (the target), or `-` for standard input.
    pub file: String,
    /// Width of `index` (8, 16, 32, 64); default: the file's `# width:`
    /// header, else 64.
    #[arg(long)]
    pub width: Option<u32>,
    /// Per-query timeout in seconds.
    #[arg(long, default_value_t = 10.0)]
    pub timeout: f64,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The width a file asks for in its header (`# width: 8`).
pub fn header_width(p: &Program) -> Option<u32> {
    p.header.iter().find_map(|l| {
        l.trim()
            .strip_prefix("width:")
            .and_then(|w| w.trim().parse().ok())
    })
}

pub fn run(a: Args) -> ExitCode {
    let prog = match super::read_program(&a.file) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(1);
        }
    };
    if prog.expects.len() != prog.outputs.len() {
        eprintln!(
            "{}: {} `expr` line(s) but {} `expect` line(s); check compares them pairwise",
            a.file,
            prog.outputs.len(),
            prog.expects.len()
        );
        return ExitCode::from(1);
    }
    let width = a.width.or_else(|| header_width(&prog)).unwrap_or(64);
    if ![8, 16, 32, 64].contains(&width) {
        eprintln!("width {width} is not one of 8, 16, 32, 64");
        return ExitCode::from(1);
    }
    if !(a.timeout > 0.0) {
        eprintln!("the timeout must be positive");
        return ExitCode::from(1);
    }
    let r = check(
        &prog.graph,
        &prog.outputs,
        &prog.expects,
        width,
        Duration::from_secs_f64(a.timeout),
    );
    if a.json {
        println!(
            "{}",
            serde_json::json!({ "file": a.file, "width": width, "result": r })
        );
    } else {
        match &r {
            CheckResult::Equivalent { method } => {
                println!("refines: every point of the domain agrees at width {width} ({method})")
            }
            CheckResult::Vacuous => {
                println!(
                    "refines vacuously: the source is undefined at every point at width {width}"
                )
            }
            CheckResult::Unknown { reason } => println!("unknown at width {width}: {reason}"),
            CheckResult::Counterexample {
                failure,
                method,
                point,
                confirmed,
            } => {
                println!("counterexample at width {width} ({method}): {failure}");
                let p: Vec<String> = point.iter().map(|(n, v)| format!("{n} = {v}")).collect();
                println!("  point: {}", p.join(", "));
                let env: Vec<i128> = point.iter().map(|p| p.1).collect();
                print!("{}", super::node_values(&prog, &env, Width(width)));
                match confirmed {
                    Ok(v) => println!("  confirmed by the interpreter: {v}"),
                    Err(e) => println!("  NOT confirmed by the interpreter: {e}"),
                }
            }
        }
    }
    match r {
        CheckResult::Equivalent { .. } | CheckResult::Vacuous => ExitCode::SUCCESS,
        _ => ExitCode::from(2),
    }
}
