//! One module per subcommand, plus the input helpers they share.

pub mod bench;
pub mod check;
pub mod fuzz;
pub mod gate;
pub mod import;
pub mod junit;
pub mod lower;
pub mod prove;
pub mod replay;
pub mod simplify;

use engine::parse::{parse_program, Program};
use std::io::Read;

/// Reads a file (or standard input for `-`) and parses it, reporting errors
/// as `file:line:col: reason`.
pub fn read_program(path: &str) -> Result<Program, String> {
    let text = read_text(path)?;
    parse_program(&text).map_err(|e| format!("{path}:{e}"))
}

/// Reads a file, or standard input for `-`.
pub fn read_text(path: &str) -> Result<String, String> {
    if path == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| format!("<stdin>: {e}"))?;
        Ok(s)
    } else {
        std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))
    }
}

/// The value of every node of both sides at a point, one per line, source
/// first: what a failing point looks like from the inside.
pub fn node_values(p: &Program, env: &[i128], w: engine::dtype::Width) -> String {
    use engine::interp::eval_all;
    use engine::print;
    let mut out = String::new();
    for (label, roots) in [("source", &p.outputs), ("target", &p.expects)] {
        if roots.is_empty() {
            continue;
        }
        out.push_str(&format!("  {label}:\n"));
        match eval_all(&p.graph, roots, env, w) {
            Ok(vals) => {
                let rows: Vec<(String, String)> = p
                    .graph
                    .reachable(roots)
                    .into_iter()
                    .filter(|&id| {
                        !matches!(
                            p.graph.node(id).op,
                            engine::ir::Op::Const(_) | engine::ir::Op::Invalid
                        )
                    })
                    .map(|id| {
                        let mut text = print::expr(&p.graph, id);
                        if text.len() > 70 {
                            text.truncate(67);
                            text.push_str("...");
                        }
                        (text, vals[id.index()].to_string())
                    })
                    .collect();
                let width = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
                for (text, val) in rows {
                    out.push_str(&format!("    {text:<width$} = {val}\n"));
                }
            }
            Err(u) => out.push_str(&format!(
                "    undefined: {} at {}\n",
                u.reason,
                print::expr(&p.graph, u.node)
            )),
        }
    }
    out
}
