//! One module per subcommand (`campaign` is `tileproof fuzz`), plus what
//! they share: the input helpers and the flags here, case reports
//! (`cases`), proof runs and their printing (`proofs`), campaign summaries
//! (`summary`), JUnit (`junit`) and the `say!` macro (`output`). No command
//! imports another. Commands parse arguments, call the library crates and
//! print; errors become messages here (`anyhow`).

pub mod bench;
pub mod campaign;
pub mod check;
pub mod compose;
pub mod gate;
pub mod import;
pub mod lower;
pub mod prove;
pub mod replay;
pub mod report;
pub mod serve;
pub mod simplify;

// What several commands share (no command imports another).
mod cases;
mod junit;
mod output;
mod proofs;
mod summary;

use ::fuzz::peer::Peer;
use ::fuzz::subject::Engine;
use engine::rewrite::Simplifier;
use engine::rules::RuleSet;
use std::time::Duration;

/// The syntax of an input file (`--input-format`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syntax {
    /// `var`, `expr` and `expect` lines.
    Text,
    /// An XLA indexing map: `(d0, d1)[s0] -> (...)`, then its domain.
    Xla,
}

impl From<Syntax> for engine::input::Syntax {
    fn from(s: Syntax) -> Self {
        match s {
            Syntax::Text => engine::input::Syntax::Text,
            Syntax::Xla => engine::input::Syntax::Xla,
        }
    }
}

/// Reads a file (or standard input for `-`) in `syntax`, else in the
/// syntax detected (`engine::input`, the one detector every command uses),
/// reporting errors as `file:line:col: reason`.
pub fn read_input(path: &str, syntax: Option<Syntax>) -> anyhow::Result<engine::input::Input> {
    let text = read_text(path)?;
    engine::input::read(&text, syntax.map(Into::into)).map_err(|e| anyhow::anyhow!("{path}:{e}"))
}

/// Reads a file, or standard input for `-` (read once, however often it
/// is named).
pub fn read_text(path: &str) -> anyhow::Result<String> {
    Ok(::fuzz::corpus::read_text(std::path::Path::new(path))?)
}

/// The rule files named, read: `(path, text)`.
pub fn read_rule_files(paths: &[String]) -> anyhow::Result<Vec<(String, String)>> {
    paths
        .iter()
        .map(|p| Ok((p.clone(), read_text(p)?)))
        .collect()
}

/// The rule files named, read by the one loader every command uses
/// (`engine::rules::load_candidates`); its notes (a group the engine does
/// not have) go to standard error.
pub fn load_rule_files(paths: &[String]) -> anyhow::Result<engine::rules::Loaded> {
    let loaded = engine::rules::load_candidates(&read_rule_files(paths)?)?;
    for note in &loaded.notes {
        eprintln!("tileproof: note: {note}");
    }
    Ok(loaded)
}

/// The built-in rules with the rule files named laid over them.
pub fn rules_over_builtin(paths: &[String]) -> anyhow::Result<RuleSet> {
    Ok(load_rule_files(paths)?.engine)
}

/// The simplifier under test, as `fuzz`, `replay`, `check` and `bench` take
/// it: tileproof's engine (with candidate rule files laid over its rules),
/// or a peer behind the line protocol.
#[derive(clap::Args, Clone, Debug)]
pub struct SubjectArgs {
    /// Test this simplifier instead of tileproof's engine: a command that
    /// speaks the peer protocol (docs/protocol.md), started with `sh -c`
    /// (e.g. `python3 adapters/tinygrad_adapter.py`).
    #[arg(long, value_name = "CMD")]
    pub simplifier: Option<String>,
    /// Adapter processes a peer runs at once (default: one per core). A
    /// campaign runs at least as many workers, since each waits on its
    /// adapter: the peer, not tileproof, bounds a campaign's rate.
    #[arg(long, value_name = "N", requires = "simplifier")]
    pub peer_jobs: Option<usize>,
    #[command(flatten)]
    pub limits: PeerLimits,
    /// A rule file laid over the built-in rules (repeatable): a rule named
    /// like a built-in one replaces it, others join their group (a group
    /// the engine does not have is tried after the built-in ones). With
    /// `--simplifier`, the rules of the engine that looks for the peer's
    /// missed simplifications (`fuzz`, `check`).
    #[arg(long = "rules", value_name = "FILE")]
    pub rules: Vec<String>,
    /// Do not run a peer's findings on its backends (its own compiled
    /// code); they are then `unconfirmed`. By default every finding against
    /// a peer whose adapter offers backends is confirmed there and
    /// classified (wrong-value, trap, compile-error, model-only, ...).
    #[arg(long, requires = "simplifier")]
    pub no_confirm: bool,
    /// With `--simplifier`: the simplifier under test is that peer's rule
    /// NAME alone, applied once at the root (the protocol's `apply`
    /// request): how `prove --simplifier` counterexamples are replayed.
    #[arg(long, value_name = "NAME", requires = "simplifier")]
    pub peer_rule: Option<String>,
    /// With `--simplifier`: the simplifier under test is that peer's
    /// pipeline up to its stage NAME (one of its hello's `stages`; the
    /// protocol's `stage` request): where in the pipeline a finding first
    /// appears.
    #[arg(
        long,
        value_name = "NAME",
        requires = "simplifier",
        conflicts_with = "peer_rule"
    )]
    pub peer_stage: Option<String>,
}

/// The limits of a peer's adapter, as every command that starts one takes
/// them (`fuzz`, `check`, `replay`, `prove --simplifier`).
#[derive(clap::Args, Clone, Debug)]
pub struct PeerLimits {
    /// Seconds a peer may take on one request before it counts as a hang
    /// (it is then killed and restarted).
    #[arg(
        long,
        default_value_t = 10.0,
        value_name = "SECONDS",
        requires = "simplifier"
    )]
    pub peer_timeout: f64,
    /// The longest line, in bytes, read from a peer's adapter (its hello
    /// and every answer): a longer one is `garbage` (the adapter is killed
    /// and restarted). docs/protocol.md lists every limit.
    #[arg(long, default_value_t = ::fuzz::peer::lines::DEFAULT_MAX_LINE, value_name = "BYTES", requires = "simplifier")]
    pub peer_max_line: usize,
}

impl PeerLimits {
    /// Starts the adapter `cmd` within these limits.
    pub fn start(&self, cmd: &str) -> anyhow::Result<Peer> {
        let t = parse_seconds("--peer-timeout", self.peer_timeout)?;
        anyhow::ensure!(self.peer_max_line > 0, "--peer-max-line must be at least 1");
        Ok(Peer::start_bounded(cmd, t, self.peer_max_line)?)
    }
}

/// A loaded simplifier under test.
#[allow(
    clippy::large_enum_variant,
    reason = "one value per command: boxing the peer would only add a deref at each use"
)]
pub enum Under {
    /// The engine's rules, and the candidate files they were loaded with.
    Engine(RuleSet, Vec<String>),
    Peer(Peer),
}

impl SubjectArgs {
    pub fn load(&self) -> anyhow::Result<Under> {
        match &self.simplifier {
            Some(cmd) => {
                anyhow::ensure!(self.peer_jobs != Some(0), "--peer-jobs must be at least 1");
                let mut peer = self.limits.start(cmd)?;
                if let Some(n) = self.peer_jobs {
                    peer = peer.with_processes(n);
                }
                // Its rules by name, so that a campaign says which it reached.
                if peer.has_rules() {
                    let names = ::fuzz::peer_rules::list(&peer)
                        .map_err(|e| anyhow::anyhow!("{cmd}: its rules: {e}"))?
                        .into_iter()
                        .map(|r| ::fuzz::peer::KnownRule {
                            reachable: r.not_instantiable.is_none(),
                            location: r.location,
                            name: r.name,
                        })
                        .collect();
                    peer = peer.with_rule_names(names);
                }
                let backends = ::fuzz::subject::Subject::backends(&peer);
                eprintln!(
                    "tileproof: testing {} (`{cmd}`), judged at width {} under the strict model{}",
                    ::fuzz::subject::Subject::name(&peer),
                    ::fuzz::subject::Subject::profile(&peer).width(),
                    if backends.is_empty() {
                        "; it offers no backend: findings stay unconfirmed".to_string()
                    } else if self.no_confirm {
                        "; --no-confirm: findings stay unconfirmed".to_string()
                    } else {
                        format!(
                            "; findings confirmed on its backends: {}",
                            backends.join(", ")
                        )
                    }
                );
                Ok(Under::Peer(peer))
            }
            None => Ok(Under::Engine(
                rules_over_builtin(&self.rules)?,
                self.rules.clone(),
            )),
        }
    }
}

impl Under {
    /// The peer's rule `name` alone as the subject (`--peer-rule`), when
    /// one is named; an error for a peer that does not apply single rules.
    pub fn rule_subject(
        &self,
        name: Option<&str>,
    ) -> anyhow::Result<Option<::fuzz::peer::PeerPart<'_>>> {
        match (self, name) {
            (Under::Peer(p), Some(n)) => {
                anyhow::ensure!(
                    p.has_rules(),
                    "--peer-rule: {} does not apply single rules (its hello has no `\"rules\": true`)",
                    ::fuzz::subject::Subject::name(p)
                );
                Ok(Some(::fuzz::peer::PeerPart::rule(p, n)))
            }
            _ => Ok(None),
        }
    }

    /// The peer's pipeline up to its stage `name` as the subject
    /// (`--peer-stage`), when one is named; an error for a stage the peer
    /// does not have.
    pub fn stage_subject(
        &self,
        name: Option<&str>,
    ) -> anyhow::Result<Option<Box<dyn ::fuzz::subject::Subject + '_>>> {
        match (self, name) {
            (Under::Peer(p), Some(n)) => {
                use ::fuzz::subject::Subject;
                let stage = p.stage(n).ok_or_else(|| {
                    anyhow::anyhow!(
                        "--peer-stage: {} has no stage `{n}` (its hello's stages: {})",
                        p.name(),
                        if p.stages().is_empty() {
                            "none".to_string()
                        } else {
                            p.stages().join(", ")
                        }
                    )
                })?;
                Ok(Some(stage))
            }
            _ => Ok(None),
        }
    }

    /// The engine as a subject simplifying at `width` (for a peer: `None`).
    pub fn engine(&self, width: engine::dtype::Width) -> Option<Engine<'_>> {
        match self {
            Under::Engine(rules, files) => {
                let mut simp = Simplifier::new(rules);
                simp.width = width;
                Some(Engine::new(simp, files.clone()))
            }
            Under::Peer(_) => None,
        }
    }

    /// How findings are confirmed on the subject's own compiled code: on
    /// every backend of a peer that offers some, unless `--no-confirm`.
    pub fn confirm(&self, no_confirm: bool) -> ::fuzz::classify::Confirm {
        match self {
            Under::Peer(p) if !no_confirm && !::fuzz::subject::Subject::backends(p).is_empty() => {
                ::fuzz::classify::Confirm::All
            }
            _ => ::fuzz::classify::Confirm::Off,
        }
    }

    /// The model answers are judged under at `width`: the engine's at that
    /// width, a peer's at its own.
    pub fn model(&self, width: engine::dtype::Width) -> engine::semantics::Model {
        match self {
            Under::Engine(..) => width.into(),
            Under::Peer(p) => ::fuzz::subject::Subject::profile(p).model(),
        }
    }
}

/// A width of `index` the checks support.
pub fn parse_width(w: u32) -> anyhow::Result<engine::dtype::Width> {
    let w = engine::dtype::Width(w);
    anyhow::ensure!(
        engine::dtype::Width::ALL.contains(&w),
        "width {w} is not one of 8, 16, 32, 64"
    );
    Ok(w)
}

/// A positive, finite number of seconds.
pub fn parse_timeout(t: f64) -> anyhow::Result<Duration> {
    parse_seconds("the timeout", t)
}

/// A positive number of seconds a `Duration` can hold (`what` names the
/// flag in the error).
pub fn parse_seconds(what: &str, t: f64) -> anyhow::Result<Duration> {
    let bad =
        || anyhow::anyhow!("{what} must be a positive number of seconds below 1.8e19, not {t}");
    if t > 0.0 {
        Duration::try_from_secs_f64(t).map_err(|_| bad())
    } else {
        Err(bad())
    }
}

/// Writes a report file atomically (`fuzz::corpus::write_atomic`: a
/// temporary file in the same directory, synced, renamed into place): a
/// reader, or a run killed half-way, never sees a partial report.
pub fn write_atomically(path: &str, text: &str) -> anyhow::Result<()> {
    ::fuzz::corpus::write_atomic(std::path::Path::new(path), text)
        .map_err(|e| anyhow::anyhow!("{path}: {e}"))
}

/// Removes the reports a run will write: one left by an earlier run must
/// not say "pass" for this one if it is interrupted (they are written, each
/// atomically, at the end).
pub fn remove_stale_reports<'p>(paths: impl Iterator<Item = &'p String>) -> anyhow::Result<()> {
    for path in paths {
        match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                anyhow::bail!("{path}: cannot remove the previous report: {e}")
            }
            _ => {}
        }
    }
    Ok(())
}

/// Runs a command body, turning an error into a message and exit status 1.
pub fn exit(name: &str, r: anyhow::Result<std::process::ExitCode>) -> std::process::ExitCode {
    match r {
        Ok(code) => code,
        Err(e) => {
            eprintln!("tileproof {name}: {e:#}");
            std::process::ExitCode::from(1)
        }
    }
}

/// A directory name for a peer's findings: its name without the version
/// (`tinygrad.sym 0.14.0` -> `tinygrad.sym`), in safe characters.
pub fn peer_dir_name(name: &str) -> String {
    name.split_whitespace()
        .next()
        .unwrap_or("peer")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}
