//! `tileproof import`: a libFuzzer crash artifact (the raw bytes a
//! cargo-fuzz target was given) to a text corpus case.
//!
//! The bytes decode exactly as in the target (`Case::from_bytes`); the case
//! then goes through the campaign's checks (plus Z3), and the first failure
//! is shrunk and written like a campaign finding. Text outlives the bytes:
//! an artifact means nothing once the generator changes, its case does.

use super::output::say;
use super::{exit, parse_timeout, parse_width, rules_over_builtin};
use engine::parse::Program;
use engine::rewrite::Simplifier;
use fuzz::cause::backend::LiteralCache;
use fuzz::checks::{self, CheckConfig, Validator};
use fuzz::classify::Confirm;
use fuzz::corpus;
use fuzz::finding::Preparer;
use fuzz::generate::{Case, Generator};
use fuzz::subject::Engine;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use tileproof::decide::validator;

#[derive(clap::Args)]
#[command(
    after_help = "Exit status: 0 a case was written; 2 the input passes every check (nothing \
written), or arguments clap rejects; 1 other errors.\n\nExample:\n  \
tileproof import fuzz/artifacts/tiled_graph/crash-3f2a... --corpus corpus/"
)]
pub struct Args {
    /// The artifact: the input bytes of a crash.
    pub artifact: PathBuf,
    /// The generator the bytes are for: tiled (target tiled_graph) or expr
    /// (target expr_tree). Default: from the artifact's path.
    #[arg(long, value_name = "GEN")]
    pub generator: Option<String>,
    /// Where the case is written.
    #[arg(long, default_value = "corpus", value_name = "DIR")]
    pub corpus: PathBuf,
    /// Width of `index` to check at.
    #[arg(long, default_value_t = 64)]
    pub width: u32,
    /// Checks the shrinker may run (0: keep the case as decoded).
    #[arg(long, default_value_t = 2000, value_name = "N")]
    pub shrink_steps: usize,
    /// Z3 timeout per query, in seconds.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    pub timeout: f64,
    /// Skip the SMT validation.
    #[arg(long)]
    pub no_smt: bool,
    /// A rule file laid over the built-in rules (repeatable).
    #[arg(long = "rules", value_name = "FILE")]
    pub rules: Vec<String>,
}

pub fn run(a: Args) -> ExitCode {
    exit("import", import(a))
}

/// The generator named, or the one whose target's name is in the path.
fn generator_of(a: &Args) -> anyhow::Result<Generator> {
    match a.generator.as_deref() {
        Some("tiled") => return Ok(Generator::Tiled),
        Some("expr") => return Ok(Generator::Expr),
        Some(g) => anyhow::bail!("unknown generator `{g}` (use tiled or expr)"),
        None => {}
    }
    let p = a.artifact.to_string_lossy();
    match (p.contains("tiled_graph"), p.contains("expr_tree")) {
        (true, false) => Ok(Generator::Tiled),
        (false, true) => Ok(Generator::Expr),
        _ => anyhow::bail!(
            "cannot tell the generator from `{p}`; give --generator tiled or --generator expr"
        ),
    }
}

fn import(a: Args) -> anyhow::Result<ExitCode> {
    let generator = generator_of(&a)?;
    let width = parse_width(a.width)?;
    let timeout = parse_timeout(a.timeout)?;
    let rules = rules_over_builtin(&a.rules)?;
    let bytes =
        std::fs::read(&a.artifact).map_err(|e| anyhow::anyhow!("{}: {e}", a.artifact.display()))?;
    let case = checks::catch(|| Case::from_bytes(generator, &bytes))
        .map_err(|e| anyhow::anyhow!("decoding the artifact panicked: {e}"))?;
    let mut simp = Simplifier::new(&rules);
    simp.width = width;
    let simp = Engine::new(simp, a.rules.clone());
    let cfg = CheckConfig {
        width,
        ..CheckConfig::default()
    };
    let smt = validator(width, timeout);
    let validator: Option<&Validator<'_>> = (!a.no_smt).then_some(&smt as &Validator<'_>);
    let checked = checks::check(&case.graph, &case.roots, &simp, &cfg, validator);
    let Some(first) = checked.failures.first() else {
        say!(
            "{}: the {generator} case it decodes to passes every check; nothing written \
             (the bug may be fixed, or the artifact is for the other generator)",
            a.artifact.display()
        );
        say!("{}", case.program());
        return Ok(ExitCode::from(2));
    };
    for f in &checked.failures {
        say!("{f}");
    }
    let program = Program {
        graph: case.graph.clone(),
        outputs: case.roots.clone(),
        expects: Vec::new(),
        header: Vec::new(),
        constraints: Vec::new(),
        expect_constraints: None,
    };
    let origin = format!(
        "libFuzzer artifact {} ({} bytes, generator {generator})",
        a.artifact.display(),
        bytes.len()
    );
    let literals = LiteralCache::default();
    let preparer = Preparer {
        subject: &simp,
        check: &cfg,
        // The engine's findings have no backend to be classified on.
        confirm: &Confirm::Off,
        validator,
        shrink_steps: a.shrink_steps,
        deadline: None,
        literals: &literals,
    };
    let prepared = preparer.prepare_one(&program, first.kind, origin);
    if let Some(n) = &prepared.note {
        say!("note: {n}");
    }
    let saved = corpus::save(&a.corpus, &prepared.entry)
        .map_err(|e| anyhow::anyhow!("cannot write to {}: {e}", a.corpus.display()))?;
    say!(
        "{} {}{}",
        if saved.new {
            "wrote"
        } else {
            "already in the corpus:"
        },
        saved.path.display(),
        prepared
            .stats
            .map_or_else(String::new, |s| format!(" (shrunk in {} checks)", s.steps))
    );
    let _ = write!(std::io::stdout(), "{}", prepared.entry.body);
    Ok(ExitCode::SUCCESS)
}
