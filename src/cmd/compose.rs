//! `tileproof compose`: compose indexing maps (a fusion's chain), simplify
//! the composed map, check it, and print it as a map.

use super::{exit, parse_timeout};
use anyhow::Context;
use engine::compose::{check, compose, is_identity, Checked};
use engine::dtype::Width;
use engine::rewrite::Simplifier;
use engine::xla::{print_map, Printed, XlaMap};
use std::process::ExitCode;
use tileproof::decide::decide;
use verify::check::CheckResult;

#[derive(clap::Args)]
#[command(
    after_help = "The maps are listed in the order they apply to an index: each map's \
results are the next map's dimensions. For output-to-input maps that is from the root towards \
the parameter (the consumer's map first); for input-to-output maps, the producer's first.\n\n\
Two checks, both required: the composed map, simplified, is the chain applied map by map at \
every point of its box (a sample of --points points when the box is larger), and the simplified \
map equals the unsimplified composition on exactly the same domain (SMT, or every point).\n\n\
Exit status: 0 composed, simplified and both checks passed; 2 a check failed or is unknown; \
1 other errors.\n\nExample (XLA's documentation: two reshapes that cancel):\n  \
tileproof compose docs/examples/xla-reshape2.map docs/examples/xla-reshape1.map"
)]
pub struct Args {
    /// The maps (XLA indexing-map syntax), at least two, in the order they
    /// apply; `-` reads one from standard input.
    #[arg(required = true, num_args = 2.., value_name = "MAP")]
    pub maps: Vec<String>,
    /// A rule file laid over the built-in rules (repeatable), as for
    /// `simplify`.
    #[arg(long = "rules", value_name = "FILE")]
    pub rules: Vec<String>,
    /// Points at which the composition is checked against the chain when
    /// its box has more (else every point is).
    #[arg(long, default_value_t = 100_000, value_name = "N")]
    pub points: u64,
    /// Per-query timeout in seconds for the SMT check.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    pub timeout: f64,
    /// Print one JSON object (the map, the checks) instead of the map.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: Args) -> ExitCode {
    exit("compose", run_compose(a))
}

fn run_compose(a: Args) -> anyhow::Result<ExitCode> {
    let mut maps: Vec<XlaMap> = Vec::new();
    for path in &a.maps {
        let input = super::read_input(path, Some(super::Syntax::Xla))?;
        maps.push(
            input
                .map
                .with_context(|| format!("{path}: not an indexing map"))?,
        );
    }
    anyhow::ensure!(a.points > 0, "--points must be at least 1");
    let timeout = parse_timeout(a.timeout)?;
    let rules = super::rules_over_builtin(&a.rules)?;
    let composed =
        compose(&maps).with_context(|| format!("composing {}", a.maps.join(", then ")))?;
    let mut m = composed.map.clone();
    let raw = m.program.outputs.clone();
    let out = Simplifier::new(&rules)
        .simplify(&mut m.program.graph, &raw, false)
        .map_err(|e| anyhow::anyhow!("simplifying the composed map: {e}"))?;
    let w = Width::W64;
    let chain = check(&composed, &maps, &m.program.graph, &out.roots, w, a.points);
    let proof = decide(&m.program.graph, &raw, &out.roots, w, timeout);
    let printed = print_map(&mut m, &out.roots).map_err(|e| anyhow::anyhow!("{e}"))?;
    if printed == Printed::KnownEmpty {
        eprintln!("tileproof compose: {}", Printed::EMPTY_REASON);
    }
    let printed = printed.text();
    let identity = is_identity(&m.program.graph, &m.dims, &out.roots);
    let proved = matches!(proof, CheckResult::Equivalent { .. } | CheckResult::Vacuous);
    let chain_line = match &chain {
        Ok(Checked { points, exhaustive }) => format!(
            "the maps applied one by one agree at {} ({points} points)",
            if *exhaustive {
                "every point of the box"
            } else {
                "a sample of the box"
            }
        ),
        Err(mm) => format!(
            "the composition differs from the maps applied one by one at {}: they give {}, it gives {}",
            mm.point
                .iter()
                .map(|(n, v)| format!("{n} = {v}"))
                .collect::<Vec<_>>()
                .join(", "),
            show(&mm.chain),
            show(&mm.composed)
        ),
    };
    if a.json {
        println!(
            "{}",
            serde_json::json!({
                "maps": a.maps,
                "map": printed,
                "identity": identity,
                "chain": chain_line,
                "chain_ok": chain.is_ok(),
                "simplification": proof,
            })
        );
    } else {
        // The checks as comment lines: the output still reads as a map.
        println!("# composed: {}", a.maps.join(", then "));
        println!("# chain: {chain_line}");
        println!("# simplification: {}", proof_line(&proof));
        if identity {
            println!("# the composition is the identity");
        }
        print!("{printed}");
    }
    Ok(if chain.is_ok() && proved {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}

fn show(r: &Option<Vec<i128>>) -> String {
    match r {
        Some(v) => format!(
            "({})",
            v.iter().map(i128::to_string).collect::<Vec<_>>().join(", ")
        ),
        None => "outside the domain".to_string(),
    }
}

fn proof_line(r: &CheckResult) -> String {
    match r {
        CheckResult::Equivalent { method } => {
            format!("proved equal to the unsimplified composition on the same domain ({method})")
        }
        CheckResult::Vacuous => "vacuous: no point of the domain".to_string(),
        CheckResult::Unknown { reason } => format!("unknown (not proved): {reason}"),
        CheckResult::Counterexample { failure, point, .. } => format!(
            "refuted: {failure} at {}",
            point
                .iter()
                .map(|(n, v)| format!("{n} = {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}
