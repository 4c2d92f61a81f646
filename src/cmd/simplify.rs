//! `tileproof simplify`: run the engine on a file.

use engine::ir::{Graph, NodeId};
use engine::print;
use engine::rewrite::Simplifier;
use serde_json::json;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Input file, in the text format or an XLA indexing map (detected, or
    /// see `--input-format`), or `-` for standard input.
    pub file: String,
    /// Print one JSON object: outputs, div/mod counts before and after,
    /// ranges and rule fire counts.
    #[arg(long)]
    pub json: bool,
    /// Print every rewrite step (as `#` comment lines) before the result.
    #[arg(long)]
    pub trace: bool,
    /// A rule file laid over the built-in rules (repeatable), as for
    /// `tileproof fuzz` and `replay`: shows what a candidate rule does (a
    /// group the engine does not have is tried after the built-in ones).
    #[arg(long = "rules", value_name = "FILE")]
    pub rules: Vec<String>,
    /// Output syntax: `text` (`expr` lines) or `xla` (an indexing map).
    /// Default: the input's.
    #[arg(long, value_enum, value_name = "SYNTAX")]
    pub format: Option<super::Syntax>,
    /// The input's syntax (default: detected; a file whose first line is
    /// `(dims)[symbols] -> (...)` is an XLA indexing map).
    #[arg(long, value_enum, value_name = "SYNTAX")]
    pub input_format: Option<super::Syntax>,
}

/// Ops of either division family among the distinct nodes of `roots`.
fn count_divmod(g: &Graph, roots: &[NodeId]) -> usize {
    fuzz::missed::Cost::of(g, roots).divmod
}

pub fn run(a: Args) -> ExitCode {
    let (mut prog, map) = match super::read_input(&a.file, a.input_format) {
        Ok(i) => (i.program, i.map),
        Err(e) => {
            eprintln!("tileproof simplify: {e:#}");
            return ExitCode::from(1);
        }
    };
    let xla_out = match a.format {
        Some(f) => f == super::Syntax::Xla,
        None => map.is_some(),
    };
    let rules = match super::rules_over_builtin(&a.rules) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("tileproof simplify: {e:#}");
            return ExitCode::from(1);
        }
    };
    let simp = Simplifier::new(&rules);
    let before = count_divmod(&prog.graph, &prog.outputs);
    let out = match simp.simplify(&mut prog.graph, &prog.outputs, a.trace) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{}: {e}", a.file);
            return ExitCode::from(1);
        }
    };
    let g = &prog.graph;
    if a.trace {
        for f in &out.trace {
            println!(
                "# {}: {}  =>  {}",
                simp.rule_names()[f.rule],
                print::expr(g, f.before),
                print::expr(g, f.after)
            );
        }
    }
    if a.json {
        let range = |r: &NodeId, hi: bool| {
            let n = g.node(*r);
            if n.range_empty() {
                serde_json::Value::Null
            } else {
                json!(if hi { n.vmax } else { n.vmin })
            }
        };
        let fired: serde_json::Map<String, serde_json::Value> = out
            .fired(&simp)
            .into_iter()
            .map(|(name, n)| (name.to_string(), json!(n)))
            .collect();
        let v = json!({
            "outputs": out.roots.iter().map(|&r| print::expr(g, r)).collect::<Vec<_>>(),
            "divmod_before": before,
            "divmod_after": count_divmod(g, &out.roots),
            "vmin": out.roots.iter().map(|r| range(r, false)).collect::<Vec<_>>(),
            "vmax": out.roots.iter().map(|r| range(r, true)).collect::<Vec<_>>(),
            "rules_fired": fired,
        });
        println!("{v}");
    } else if xla_out {
        // Printing needs the map's variable kinds; a text-format input is
        // printed as a map of its variables, all dimensions.
        let mut m = match map {
            Some(mut m) => {
                m.program.graph = prog.graph.clone();
                m
            }
            None => engine::xla::XlaMap {
                dims: prog.graph.vars().iter().map(|d| d.name.clone()).collect(),
                syms: Vec::new(),
                rts: Vec::new(),
                program: prog.clone(),
            },
        };
        match engine::xla::print_map(&mut m, &out.roots) {
            Ok(p) => {
                if p == engine::xla::Printed::KnownEmpty {
                    eprintln!("{}: {}", a.file, engine::xla::Printed::EMPTY_REASON);
                }
                print!("{}", p.text());
            }
            Err(e) => {
                eprintln!("{}: {e}", a.file);
                return ExitCode::from(1);
            }
        }
    } else {
        let declared = prog.constraints.clone();
        print!(
            "{}",
            print::result_lines(&mut prog.graph, &out.roots, &declared)
        );
    }
    ExitCode::SUCCESS
}
