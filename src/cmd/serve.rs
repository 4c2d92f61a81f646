//! `tileproof serve`: tileproof's engine as a peer, speaking the line
//! protocol on standard input and output (docs/protocol.md). It lets the
//! engine, or the engine with a deliberately broken rule file, be tested
//! exactly as any other simplifier is (`tileproof fuzz --simplifier
//! 'tileproof serve --rules broken.rules'`).

use super::{exit, parse_width, rules_over_builtin};
use engine::rewrite::Simplifier;
use fuzz::subject::Engine;
use std::process::ExitCode;

#[derive(clap::Args)]
#[command(after_help = "Examples:\n  tileproof serve\n  \
tileproof fuzz --simplifier 'tileproof serve --rules broken.rules' --time 60")]
pub struct Args {
    /// A rule file laid over the built-in rules (repeatable).
    #[arg(long = "rules", value_name = "FILE")]
    pub rules: Vec<String>,
    /// The width the engine simplifies at; its profile declares `index` of
    /// that width.
    #[arg(long, default_value_t = 64)]
    pub width: u32,
}

pub fn run(a: Args) -> ExitCode {
    exit("serve", serve(a))
}

fn serve(a: Args) -> anyhow::Result<ExitCode> {
    let width = parse_width(a.width)?;
    let rules = rules_over_builtin(&a.rules)?;
    let mut simp = Simplifier::new(&rules);
    simp.width = width;
    let engine = Engine::new(simp, a.rules.clone());
    let stdin = std::io::stdin().lock();
    let stdout = std::io::stdout().lock();
    fuzz::peer::serve(&engine, env!("CARGO_PKG_VERSION"), stdin, stdout)?;
    Ok(ExitCode::SUCCESS)
}
