//! The corpus: findings stored as text cases, replayed forever after.
//!
//! A corpus case is a file in the engine's text format (`var` / `expr`
//! lines, read by `engine::parse::parse_program`), so it survives changes
//! to the generators and reads well in review. Its leading `#` lines say
//! what failed and how to reproduce it:
//!
//! ```text
//! # tileproof finding: oracle
//! # failure: value-differs (output 1) at x = -3; source (1), target (-3) [...]
//! # point: x = -3
//! # rules: rem_drop_multiple (1x)
//! # origin: generator expr, seed 7, case 42 (case seed 0x...)
//! # width: 64
//! # reproduce: tileproof replay corpus/oracle-5f0c8e2a91.txt
//! var x in [-3, 3]
//! expr (x * 4 + 1) % 4
//! expect 1 % 4
//! ```
//!
//! The `expect` lines record what the engine produced when the case was
//! found (so `tileproof check` on the file shows the original
//! counterexample); [`replay`] ignores them and re-simplifies the `expr`
//! lines with the current engine. The `# width:` line is the width the case
//! is checked at (`tileproof check` reads it too).
//!
//! Files are named after what they found plus a hash of their `var`/`expr`
//! lines (`oracle-5f0c8e2a91.txt`), so the same shrunk case found twice is
//! one file. They are written atomically (a temporary file in the same
//! directory, synced, then renamed), so a campaign killed with `kill -9`
//! leaves either the whole case or nothing, and never a torn file.

use crate::backend::{ReproducerSpec, Script};
use crate::checks::{self, CheckConfig, Checked, Kind, KindSet, ValidationVerdict, Validator};
use crate::classify::{classify, Confirm};
use crate::confirm::{Class, Confirmation};
use crate::missed::{Direction, Hunt, Hunter, Missed};
use crate::subject::{Engine, Subject};
use engine::dtype::Width;
use engine::input::Syntax;
use engine::interp;
use engine::ir::{Graph, NodeId, Op};
use engine::parse::ParseError;
use engine::parse::Program;
use engine::print;
use engine::rewrite::Simplifier;
use engine::rules::RuleSet;
use engine::semantics::Failure;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Everything a corpus file says about a finding.
#[derive(Clone, Debug)]
pub struct Entry {
    pub kind: Kind,
    /// One line: what failed.
    pub message: String,
    pub point: Option<Vec<(String, i64)>>,
    /// The point as the input syntax writes it (a bool as `true`/`false`),
    /// for the `# point:` header.
    pub point_text: Option<String>,
    /// Rules that fired when simplifying the case, with counts.
    pub rules: Vec<(String, usize)>,
    /// Where the case came from (generator, seed and case number, or an
    /// imported artifact).
    pub origin: String,
    /// The width the case is checked at.
    pub width: Width,
    /// The width the engine simplified at, when it differs.
    pub simplify_width: Width,
    /// The simplifier under test (name and version).
    pub subject: String,
    /// The options that run it again (`--rules FILE `, `--simplifier CMD `),
    /// for the reproduce line.
    pub reproduce_args: String,
    /// The case: `var`, `expr` and (optionally) `expect` lines.
    pub body: String,
    /// For a finding against a peer: its class by the peer's own compiled
    /// code (the `# backend:` header line).
    pub class: Option<Confirmation>,
    /// The verdict under the profile's relaxed model (`# relaxed:`).
    pub relaxed: Option<String>,
    /// The cause signature ([`crate::bucket::signature`], or
    /// [`crate::bucket::rule_signature`] once blamed on a rule).
    pub bucket: String,
    /// The rule the finding is blamed on, and its instance
    /// ([`crate::blame`]).
    pub blame: Option<crate::bucket::Blame>,
    /// A standalone script that shows the bug with only the peer's own
    /// code, written beside the case (`NAME.py`).
    pub reproducer: Option<Script>,
}

impl Entry {
    /// The entry for a checked case: the first failure of `kind` (or the
    /// first failure) and the rules that fired.
    pub fn from_checked(
        checked: &Checked,
        kind: Kind,
        subject: &dyn Subject,
        width: Width,
        origin: String,
    ) -> Entry {
        let fail = checked.failure(kind).or(checked.failures.first()).cloned();
        let failure = (kind == Kind::Oracle)
            .then(|| checked.oracle.as_ref().and_then(|o| o.failure.as_ref()))
            .flatten()
            .map(|f| f.failure);
        // A failure about one node (a peer's bounds of it) has that node's
        // shape for its cause, not the whole case's.
        let cause: Vec<NodeId> = match fail.as_ref().and_then(|f| f.node) {
            Some(n) => vec![n],
            None => checked.src.clone(),
        };
        Entry {
            kind,
            message: fail
                .as_ref()
                .map_or_else(String::new, |f| f.message.clone()),
            point_text: fail
                .as_ref()
                .and_then(|f| f.point.as_ref())
                .map(|p| print::point(&checked.graph, p)),
            point: fail.and_then(|f| f.point),
            rules: checked.fired(subject.rule_names()),
            origin,
            width,
            simplify_width: subject.engine().map_or(width, |s| s.width),
            subject: subject.name(),
            reproduce_args: subject.reproduce_args(),
            body: case_body(&checked.graph, &checked.src, checked.tgt.as_deref()),
            class: checked.class.clone(),
            relaxed: checked.relaxed.as_ref().map(|r| r.header()),
            bucket: crate::bucket::signature(
                &checked.graph,
                &cause,
                kind,
                failure,
                checked.class.as_ref().map(|c| c.class),
            ),
            reproducer: None,
            blame: None,
        }
    }

    /// Blames the finding on `b`'s rule: its cause is that rule, whatever
    /// shape the case has (`failure`: how the oracle's answer failed).
    pub fn blame_on(&mut self, b: crate::bucket::Blame, failure: Option<Failure>) {
        self.bucket = crate::bucket::rule_signature(
            self.kind,
            failure,
            self.class.as_ref().map(|c| c.class),
            &b.rule,
        );
        self.blame = Some(b);
    }

    /// The subdirectory of a peer's corpus this finding is kept in: its
    /// class's, for the classes kept apart from the bugs (`model-only`,
    /// `outside-input-language`).
    pub fn subdir(&self) -> Option<&'static str> {
        self.class.as_ref().and_then(|c| c.class.subdir())
    }

    /// The file name: the kind and a hash of the `var`/`expr` lines.
    pub fn file_name(&self) -> String {
        let key: String = self
            .body
            .lines()
            .filter(|l| !l.starts_with("expect"))
            .map(|l| format!("{l}\n"))
            .collect();
        format!("{}-{:010x}.txt", self.kind, fnv1a(key.as_bytes()) >> 24)
    }

    /// The whole file; `path` is where it will live (for the reproduce
    /// line).
    pub fn render(&self, path: &Path) -> String {
        let mut h = vec![format!("tileproof finding: {}", self.kind)];
        if !self.message.is_empty() {
            h.push(format!("failure: {}", checks::one_line(&self.message)));
        }
        if let Some(p) = &self.point_text {
            h.push(format!("point: {p}"));
        }
        h.push(format!("simplifier: {}", self.subject));
        if let Some(c) = &self.class {
            h.push(format!("backend: {}", checks::one_line(&c.header())));
            for line in &c.backends {
                h.push(format!("  {}", checks::one_line(line)));
            }
        }
        if let Some(r) = &self.relaxed {
            h.push(format!("relaxed: {}", checks::one_line(r)));
        }
        let rules: Vec<String> = self
            .rules
            .iter()
            .map(|(n, c)| format!("{n} ({c}x)"))
            .collect();
        if !rules.is_empty()
            || self.reproduce_args.starts_with("--rules")
            || self.reproduce_args.is_empty()
        {
            h.push(format!(
                "rules: {}",
                if rules.is_empty() {
                    "none fired".to_string()
                } else {
                    rules.join(", ")
                }
            ));
        }
        if let Some(b) = &self.blame {
            h.push(format!(
                "blame: {}, applied alone, fails the same way on: {}",
                b.rule,
                b.instance.lines().collect::<Vec<_>>().join("; ")
            ));
        }
        h.push(format!("origin: {}", self.origin));
        h.push(format!("width: {}", self.width));
        if self.simplify_width != self.width {
            h.push(format!("simplify-width: {}", self.simplify_width));
        }
        h.push(format!(
            "reproduce: tileproof replay {}{}",
            self.reproduce_args,
            crate::subject::shell_quote(&path.display().to_string())
        ));
        if self.body.lines().any(|l| l.starts_with("expect")) {
            h.push("expect lines: what the simplifier produced when this was found".into());
        }
        let mut out = String::new();
        for line in h {
            out.push_str("# ");
            out.push_str(&line);
            out.push('\n');
        }
        out.push_str(&self.body);
        out
    }
}

/// The peer's reproducer script for a confirmed bug of `checked`, when it
/// writes one; a failure to get it becomes a note.
pub fn reproducer(
    subject: &dyn Subject,
    checked: &checks::Checked,
    note: &mut Option<String>,
) -> Option<Script> {
    let c = checked.class.as_ref()?;
    if !matches!(
        c.class,
        Class::WrongValue | Class::Trap | Class::CompileError | Class::PeerCrash
    ) {
        return None;
    }
    let backend = match c.class {
        Class::PeerCrash => None,
        _ => Some(c.backend.clone()?),
    };
    let env = c.env.clone().or_else(|| {
        checked
            .failures
            .iter()
            .find_map(|f| f.env.clone())
            .or_else(|| Some(checked.graph.vars().iter().map(|d| d.lo).collect()))
    })?;
    let spec = ReproducerSpec {
        backend,
        env,
        expected: c.expected.clone(),
        class: c.class.name().to_string(),
        kind: checked
            .failures
            .first()
            .map_or(String::new(), |f| f.kind.name().to_string()),
    };
    match subject.reproducer(&checked.graph, &checked.src, &spec) {
        Ok(script) => script,
        Err(e) => {
            *note = Some(format!("no reproducer: {e}"));
            None
        }
    }
}

/// The case as text: the variables either form uses, one `expr` line per
/// source root and one `expect` line per target root.
pub fn case_body(g: &Graph, src: &[NodeId], tgt: Option<&[NodeId]>) -> String {
    let all: Vec<NodeId> = src.iter().chain(tgt.unwrap_or(&[])).copied().collect();
    let used: Vec<u32> = g
        .reachable(&all)
        .into_iter()
        .filter_map(|id| match g.node(id).op {
            Op::Var(v) => Some(v),
            _ => None,
        })
        .collect();
    let mut out = String::new();
    for (v, d) in g.vars().iter().enumerate() {
        if used.contains(&(v as u32)) {
            out.push_str(&print::var_decl(d));
            out.push('\n');
        }
    }
    for &r in src {
        out.push_str(&format!("expr {}\n", print::expr(g, r)));
    }
    for &r in tgt.unwrap_or(&[]) {
        out.push_str(&format!("expect {}\n", print::expr(g, r)));
    }
    out
}

/// A missed simplification's file ([`crate::missed`]): the source as
/// `expr` lines, the cheaper answer as `expect` lines (so `tileproof check
/// FILE` checks it again), the other answer, costs, proof and rules in the
/// header; `model`: the peer's semantics in words.
pub fn missed_file(m: &Missed, peer: &str, model: &str, width: Width) -> String {
    let mut out = match m.direction {
        Direction::EngineCheaper => format!(
            "# missed simplification (not a bug): tileproof's engine is cheaper than {peer} on this input, under its semantics ({model})\n"
        ),
        Direction::PeerCheaper => format!(
            "# missed simplification of tileproof's engine (not a bug of the peer): {peer} is cheaper than tileproof's engine on this input, under its semantics ({model})\n"
        ),
    };
    out.push_str(&format!("# simplifier: {peer}\n"));
    out.push_str(&format!(
        "# peer's answer ({}): {}\n",
        m.peer_cost,
        m.show(&m.peer)
    ));
    out.push_str(&format!(
        "# tileproof's answer ({}): {}\n",
        m.engine_cost,
        m.show(&m.engine)
    ));
    let whose = m.direction.proved();
    out.push_str(&format!("# proof{whose}: {}: {}\n", m.verdict, m.proof));
    for c in &m.causes {
        out.push_str(&format!("# rule: {c}\n"));
    }
    if let Some(p) = &m.proposal {
        if p.module.is_some() {
            out.push_str(&format!(
                "# proposed for {}: the .{} file beside this one ({})\n",
                p.language.name(),
                p.language.extension(),
                p.language.describe()
            ));
        }
        for why in &p.untranslated {
            out.push_str(&format!("# not proposed: {why}\n"));
        }
    }
    out.push_str(&format!("# width: {}\n", width.0));
    out.push_str(&case_body(&m.graph, &m.src, Some(m.cheaper())));
    out
}

/// Writes a missed simplification's file `text` into `dir`, named after its
/// cause `key` and its text's hash, and the file proposing its rules to
/// the peer beside it (`module`: its extension and text).
pub fn save_missed(
    dir: &Path,
    key: &str,
    text: &str,
    module: Option<(&str, &str)>,
) -> Result<PathBuf, String> {
    let slug: String = key
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '-'
            }
        })
        .take(60)
        .collect();
    let path = dir.join(format!("{slug}-{:010x}.txt", fnv1a(text.as_bytes()) >> 24));
    fs::create_dir_all(dir)
        .and_then(|_| match module {
            Some((ext, m)) => write_atomic(&reproducer_path(&path, ext), m),
            None => Ok(()),
        })
        .and_then(|_| write_atomic(&path, text))
        .map(|_| path.clone())
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// 64-bit FNV-1a: a stable hash (file names must not change between builds
/// or platforms, which rules out `std`'s and Fx's hashers).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// A corpus file written (or found already there).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Saved {
    pub path: PathBuf,
    /// False when a file of that name already existed (the same case was
    /// found before); it is left as it was.
    pub new: bool,
}

/// Writes `entry` into `dir` (created if missing; its class's
/// subdirectory for a finding kept apart from the bugs), atomically, and
/// its reproducer beside it.
pub fn save(dir: &Path, entry: &Entry) -> io::Result<Saved> {
    let dir = match entry.subdir() {
        Some(sub) => dir.join(sub),
        None => dir.to_path_buf(),
    };
    fs::create_dir_all(&dir)?;
    let path = dir.join(entry.file_name());
    if path.exists() {
        return Ok(Saved { path, new: false });
    }
    if let Some(script) = &entry.reproducer {
        write_script(&path, script)?;
    }
    write_atomic(&path, &entry.render(&path))?;
    Ok(Saved { path, new: true })
}

/// Writes the reproducer of the case at `case` beside it, with its
/// attachments.
fn write_script(case: &Path, script: &Script) -> io::Result<()> {
    for a in &script.attachments {
        write_atomic(&reproducer_path(case, &a.extension), &a.text)?;
    }
    write_atomic(&reproducer_path(case, &script.extension), &script.text)
}

/// Where the reproducer of the case at `case` lives: beside it, under the
/// extension its adapter named (`.py`, `.rs`).
pub fn reproducer_path(case: &Path, extension: &str) -> PathBuf {
    case.with_extension(extension)
}

/// The reproducers kept beside the case at `case`, with their
/// attachments: the files of its stem with another extension than the
/// case's own.
pub fn reproducers_of(case: &Path) -> Vec<PathBuf> {
    let (Some(dir), Some(stem)) = (case.parent(), case.file_stem()) else {
        return Vec::new();
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let mut out: Vec<PathBuf> = fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_stem() == Some(stem)
                        && p.extension().is_some_and(|x| {
                            x != "txt" && Script::valid_extension(&x.to_string_lossy())
                        })
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// Writes `text` to `path` through a temporary file in the same directory
/// (a rename is atomic only within one file system), synced before the
/// rename so that a crash right after cannot leave an empty file.
pub fn write_atomic(path: &Path, text: &str) -> io::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map_or_else(|| "case".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(
        ".{name}.tmp-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result?;
    // Make the rename itself durable (best effort: not every platform can
    // open a directory).
    if let Ok(d) = fs::File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Whether `path` is a temporary file left by [`write_atomic`].
pub fn is_temp_file(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with('.') && n.contains(".tmp-"))
}

/// The case files `path` names: the file itself, or a directory's `*.txt`
/// files in name order, then those of its class subdirectories (a peer's
/// `model-only/` and `outside-input-language/` findings).
pub fn files(path: &Path) -> io::Result<Vec<PathBuf>> {
    if !path.is_dir() {
        fs::metadata(path)?;
        return Ok(vec![path.to_path_buf()]);
    }
    let txt = |dir: &Path| -> io::Result<Vec<PathBuf>> {
        let mut out: Vec<PathBuf> = fs::read_dir(dir)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "txt"))
            .collect();
        out.sort();
        Ok(out)
    };
    let mut out = txt(path)?;
    for sub in Class::ALL.iter().filter_map(|c| c.subdir()) {
        let d = path.join(sub);
        if d.is_dir() {
            out.extend(txt(&d)?);
        }
    }
    Ok(out)
}

/// Why a case file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum CorpusError {
    #[error("{path}: {source}")]
    Io { path: String, source: io::Error },
    /// A syntax or type error, with its line and column.
    #[error("{path}:{err}")]
    Parse { path: String, err: ParseError },
    #[error("{path}: `# {key}: {value}` is not one of 8, 16, 32, 64")]
    Width {
        path: String,
        key: String,
        value: String,
    },
}

/// Reads a file, or standard input for `-`. Standard input is read once
/// and kept, so that every reader of `-` in a process sees the same text
/// (the replay reads a case's header for its width, then the case).
pub fn read_text(path: &Path) -> Result<String, CorpusError> {
    static STDIN: std::sync::OnceLock<Result<String, (io::ErrorKind, String)>> =
        std::sync::OnceLock::new();
    let shown = path.display().to_string();
    let text = if shown == "-" {
        STDIN
            .get_or_init(|| {
                let mut s = String::new();
                io::Read::read_to_string(&mut io::stdin(), &mut s)
                    .map(|_| s)
                    .map_err(|e| (e.kind(), e.to_string()))
            })
            .clone()
            .map_err(|(kind, msg)| io::Error::new(kind, msg))
    } else {
        fs::read_to_string(path)
    };
    text.map_err(|source| CorpusError::Io {
        path: shown,
        source,
    })
}

/// Reads and parses a case file (`-`: standard input) in `syntax`, else
/// in the syntax detected (`engine::input`: a case file, or an XLA
/// indexing map); errors say `path:line:col: reason`.
pub fn read_as(path: &Path, syntax: Option<Syntax>) -> Result<Program, CorpusError> {
    let text = read_text(path)?;
    engine::input::read(&text, syntax)
        .map(|i| i.program)
        .map_err(|err| CorpusError::Parse {
            path: path.display().to_string(),
            err,
        })
}

/// [`read_as`] in the syntax detected.
pub fn read(path: &Path) -> Result<Program, CorpusError> {
    read_as(path, None)
}

/// The value of a `# key: value` header line.
pub fn header_value<'p>(p: &'p Program, key: &str) -> Option<&'p str> {
    p.header.iter().find_map(|l| {
        l.trim()
            .strip_prefix(key)
            .and_then(|r| r.strip_prefix(':'))
            .map(str::trim)
    })
}

fn header_width(p: &Program, path: &Path, key: &str) -> Result<Option<Width>, CorpusError> {
    match header_value(p, key) {
        None => Ok(None),
        Some(v) => match v.parse::<u32>() {
            Ok(w) if Width::ALL.contains(&Width(w)) => Ok(Some(Width(w))),
            _ => Err(CorpusError::Width {
                path: path.display().to_string(),
                key: key.to_string(),
                value: v.to_string(),
            }),
        },
    }
}

/// The width a case asks for in its header (`# width: 32`).
pub fn case_width(p: &Program, path: &Path) -> Result<Option<Width>, CorpusError> {
    header_width(p, path, "width")
}

/// What replaying a case found.
#[derive(Clone)]
pub struct Replay {
    /// The width the case was checked at.
    pub width: Width,
    /// The case re-simplified and checked; `checked.src` are the `expr`
    /// lines, `checked.tgt` the simplifier's answer.
    pub checked: Checked,
    /// Rules that fired, with counts (the engine's).
    pub fired: Vec<(String, usize)>,
}

impl Replay {
    pub fn ok(&self) -> bool {
        self.checked.ok()
    }

    /// The original (`outputs`) and simplified (`expects`) forms in one
    /// program, e.g. for printing every node's value at the failing point.
    pub fn program(&self) -> Program {
        Program {
            graph: self.checked.graph.clone(),
            outputs: self.checked.src.clone(),
            expects: self.checked.tgt.clone().unwrap_or_default(),
            header: Vec::new(),
            constraints: Vec::new(),
            expect_constraints: None,
        }
    }
}

/// The checks a replay runs: everything a campaign checks, within the
/// campaign's limits ([`engine::walk::Limits::CASE`]).
pub fn replay_config(width: Width) -> CheckConfig {
    CheckConfig {
        width,
        kinds: KindSet::ALL,
        ..CheckConfig::default()
    }
}

/// Who replays a case.
#[derive(Clone, Copy)]
pub enum Replayer<'a> {
    /// tileproof's engine with these rules (loaded with the candidate
    /// `rule_files` laid over the built-in ones), simplifying at each
    /// case's `# simplify-width:` (else the width it is checked at).
    Engine {
        rules: &'a RuleSet,
        rule_files: &'a [String],
    },
    /// A simplifier under test, as it is; `confirm`: its findings are run
    /// on its backends and classified ([`crate::confirm`]); `missed`: a
    /// sound answer is looked at for a missed simplification
    /// ([`crate::missed`]).
    Subject {
        subject: &'a dyn Subject,
        confirm: bool,
        missed: Option<&'a Hunter<'a>>,
    },
}

/// Re-simplifies the `expr` lines of `p` and checks the answer at `width`:
/// the oracle and the validator when given; for the engine also ranges,
/// idempotence, the JIT against the interpreter and lowering.
pub fn replay(
    p: &Program,
    path: &Path,
    who: Replayer<'_>,
    width: Width,
    validate: Option<&Validator<'_>>,
) -> Result<Replay, CorpusError> {
    let cfg = replay_config(width);
    let checked = match who {
        Replayer::Engine { rules, rule_files } => {
            let mut simp = Simplifier::new(rules);
            simp.width = header_width(p, path, "simplify-width")?.unwrap_or(width);
            let engine = Engine::new(simp, rule_files.to_vec());
            checks::check(&p.graph, &p.outputs, &engine, &cfg, validate)
        }
        Replayer::Subject {
            subject, confirm, ..
        } => {
            let mut c = checks::check(&p.graph, &p.outputs, subject, &cfg, validate);
            let confirm = if confirm { Confirm::All } else { Confirm::Off };
            classify(subject, &mut c, &confirm, width);
            c
        }
    };
    let fired = match who {
        Replayer::Engine { rules, .. } => checked.fired(Simplifier::new(rules).rule_names()),
        Replayer::Subject { subject, .. } => checked.fired(subject.rule_names()),
    };
    Ok(Replay {
        width,
        checked,
        fired,
    })
}

/// [`replay`] of a file, at `width` or else the width its header asks for,
/// else 64.
pub fn replay_file(
    path: &Path,
    who: Replayer<'_>,
    width: Option<Width>,
    validate: Option<&Validator<'_>>,
) -> Result<Replay, CorpusError> {
    let p = read(path)?;
    let w = match width {
        Some(w) => w,
        None => case_width(&p, path)?.unwrap_or(Width::W64),
    };
    replay(&p, path, who, w, validate)
}

impl<'a> Replayer<'a> {
    /// The model answers are judged under at width `w` (the width a case
    /// is replayed at): the contract's for the engine, the profile's for a
    /// peer.
    pub fn model(&self, w: engine::dtype::Width) -> engine::semantics::Model {
        match self {
            Replayer::Engine { .. } => w.into(),
            Replayer::Subject { subject, .. } => engine::semantics::Model {
                width: w,
                ..subject.profile().model()
            },
        }
    }

    /// The name of the simplifier replayed against, as headers record it.
    pub fn name(&self) -> String {
        match self {
            Replayer::Engine { .. } => crate::subject::engine_name(),
            Replayer::Subject { subject, .. } => subject.name(),
        }
    }

    /// The engine with `rules` (no candidate files).
    pub fn engine(rules: &'a RuleSet) -> Replayer<'a> {
        Replayer::Engine {
            rules,
            rule_files: &[],
        }
    }
}

/// What replaying one case file found (what `replay`, `check` and `gate`
/// print).
#[derive(Clone, Debug, serde::Serialize)]
pub struct CaseReport {
    pub path: String,
    /// The width it was checked at (`None`: the file could not be read).
    pub width: Option<u32>,
    pub ok: bool,
    /// The kind the file's header records (`# tileproof finding: KIND`;
    /// `None` also when it names no kind this tileproof knows).
    pub recorded: Option<Kind>,
    /// The simplifier the header records (`# simplifier: NAME VERSION`).
    pub recorded_subject: Option<String>,
    /// The class the header records (`# backend: CLASS ...`).
    pub recorded_class: Option<Class>,
    /// The kinds of the checks that failed now (empty when ok).
    pub found: Vec<Kind>,
    /// The simplifier's answer, one expression per root (empty when it
    /// failed or declined).
    pub answer: Vec<String>,
    /// Why the simplifier gave no answer that was not a finding: its
    /// `unsupported` or `declined` reason, or that it failed on a source
    /// that means nothing at any point (`None` when it answered, or
    /// failed with a finding). A replay fails on it all the same: a kept
    /// case must be answered.
    pub unsupported: Option<String>,
    /// The validator's verdict, when it ran.
    pub smt: Option<ValidationVerdict>,
    /// Every point of the domain was shown to refine: the JIT oracle
    /// walked the whole domain, or the validator proved it (`equivalent`,
    /// `vacuous`). An `ok` case that is not `proved` was sampled, with no
    /// proof (the validator unknown or off).
    pub proved: bool,
    /// For a finding against a peer: its class now.
    pub class: Option<Class>,
    /// The class with what showed it (the `# backend:` line it would get),
    /// and one line per backend tried.
    pub backend: Option<String>,
    pub backends: Vec<String>,
    /// The verdict under the profile's relaxed model (`# relaxed:`).
    pub relaxed: Option<String>,
    /// For a confirmed bug of a peer: the peer's reproducer script.
    #[serde(skip)]
    pub reproducer: Option<Script>,
    /// For a sound answer of a peer, when asked: what the engine makes of
    /// the same input under the peer's semantics.
    pub missed: Option<Hunt>,
    /// The one-line summary, saying what was checked: `ok   FILE at width
    /// W (JIT: exhaustive, 12 points; SMT: equivalent)` or `FAIL FILE ...`.
    pub line: String,
    /// For a failure: the failed checks, the point, and every node's value
    /// there in both forms (newline-terminated lines; empty when ok).
    pub detail: String,
    pub seconds: f64,
}

impl CaseReport {
    fn new(path: String) -> CaseReport {
        CaseReport {
            path,
            width: None,
            ok: false,
            recorded: None,
            recorded_subject: None,
            recorded_class: None,
            found: Vec::new(),
            answer: Vec::new(),
            unsupported: None,
            smt: None,
            proved: false,
            class: None,
            backend: None,
            backends: Vec::new(),
            relaxed: None,
            reproducer: None,
            missed: None,
            line: String::new(),
            detail: String::new(),
            seconds: 0.0,
        }
    }

    /// The verdict: what `check` and `replay` agree on.
    pub fn verdict(&self) -> CaseVerdict {
        match (self.ok, self.proved) {
            (true, true) => CaseVerdict::Proved,
            (true, false) => CaseVerdict::Sampled,
            (false, _) => CaseVerdict::Fails,
        }
    }
}

/// What replaying a case showed, in one word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CaseVerdict {
    /// Every point refines (walked whole, or proved by the validator).
    Proved,
    /// Nothing failed, but the domain was sampled and not proved.
    Sampled,
    /// A check failed.
    Fails,
}

impl CaseVerdict {
    pub fn name(self) -> &'static str {
        match self {
            CaseVerdict::Proved => "proved",
            CaseVerdict::Sampled => "sampled",
            CaseVerdict::Fails => "fails",
        }
    }
}

/// Replays one file: simplified again by `who`, checked by the JIT oracle
/// (and, for the engine, the interpreter checks), and validated by
/// `validate` when given. The width is `width`, else the file's
/// `# width:`, else the subject's. The file is read in `syntax`, else in
/// the syntax detected. Never fails: an unreadable file is a failed
/// report.
pub fn replay_case(
    path: &Path,
    syntax: Option<Syntax>,
    who: Replayer<'_>,
    width: Option<Width>,
    validate: Option<&Validator<'_>>,
) -> CaseReport {
    let start = std::time::Instant::now();
    match read_as(path, syntax) {
        Ok(prog) => judge(&prog, path, who, width, validate),
        Err(e) => {
            let mut rep = CaseReport::new(path.display().to_string());
            rep.line = format!("FAIL {e}");
            rep.seconds = start.elapsed().as_secs_f64();
            rep
        }
    }
}

/// The one judgement of a case's `expr` lines simplified by `who` (what
/// `replay` and `check --simplifier` both print): the checks of
/// [`replay`], the validator, the class of a finding against a peer, and
/// for a failure every node's value at the failing point. `path` labels
/// the report and resolves a `# simplify-width:` header.
pub fn judge(
    prog: &Program,
    path: &Path,
    who: Replayer<'_>,
    width: Option<Width>,
    validate: Option<&Validator<'_>>,
) -> CaseReport {
    let start = std::time::Instant::now();
    let mut rep = CaseReport::new(path.display().to_string());
    rep.recorded = header_value(prog, "tileproof finding").and_then(Kind::from_name);
    rep.recorded_subject = header_value(prog, "simplifier").map(str::to_string);
    rep.recorded_class = header_value(prog, "backend")
        .and_then(|b| Class::from_name(b.split([' ', ':']).next().unwrap_or_default()));
    let r = (|| {
        let default = match who {
            Replayer::Engine { .. } => Width::W64,
            Replayer::Subject { subject, .. } => subject.profile().width(),
        };
        let w = match width {
            Some(w) => w,
            None => case_width(prog, path)?.unwrap_or(default),
        };
        replay(prog, path, who, w, validate)
    })();
    let r = match r {
        Ok(r) => r,
        Err(e) => {
            rep.line = format!("FAIL {e}");
            rep.seconds = start.elapsed().as_secs_f64();
            return rep;
        }
    };
    let w = r.width;
    rep.width = Some(w.0);
    for f in &r.checked.failures {
        if !rep.found.contains(&f.kind) {
            rep.found.push(f.kind);
        }
    }
    if let Some(t) = &r.checked.tgt {
        rep.answer = t
            .iter()
            .map(|&id| print::expr(&r.checked.graph, id))
            .collect();
    }
    if let Some(c) = &r.checked.class {
        rep.class = Some(c.class);
        rep.backend = Some(c.header());
        rep.backends = c.backends.clone();
    }
    rep.relaxed = r.checked.relaxed.as_ref().map(|x| x.header());
    if let Replayer::Subject {
        subject,
        confirm: true,
        ..
    } = who
    {
        let mut note = None;
        rep.reproducer = reproducer(subject, &r.checked, &mut note);
        if let Some(n) = note {
            rep.detail.push_str(&format!("  note: {n}\n"));
        }
    }
    let val = r.checked.validation.as_ref();
    rep.smt = val.map(|v| v.verdict);
    let jit = r.checked.oracle.as_ref();
    rep.proved =
        jit.is_some_and(|o| o.exhaustive_pass()) || val.is_some_and(|v| v.verdict.proves());
    let smt = match val {
        None if validate.is_some() && r.checked.unsupported.is_none() => {
            "no SMT: simplification failed".to_string()
        }
        None => "no SMT".to_string(),
        Some(v) if v.verdict == checks::ValidationVerdict::Unknown => format!(
            "SMT unknown: {}",
            v.detail.as_deref().unwrap_or("no reason given")
        ),
        Some(v) => format!("SMT: {}", v.verdict),
    };
    let smt_note = match jit {
        Some(o) => format!(" (JIT: {}; {smt})", o.coverage()),
        None => format!(" ({smt})"),
    };
    if let Some(why) = &r.checked.unsupported {
        // A peer that declines a case it once answered: nothing to check,
        // and nothing proved either.
        rep.unsupported = Some(why.clone());
        rep.line = format!(
            "FAIL {} at width {w}: the simplifier declined it ({})",
            path.display(),
            checks::one_line(why)
        );
        rep.seconds = start.elapsed().as_secs_f64();
        return rep;
    }
    if let (
        Replayer::Subject {
            missed: Some(h), ..
        },
        true,
        Some(t),
    ) = (who, r.ok(), &r.checked.tgt)
    {
        rep.missed = Some(h.hunt_settled(&r.checked.graph, &r.checked.src, t));
    }
    if r.ok() {
        rep.ok = true;
        rep.line = format!("ok   {} at width {w}{smt_note}", path.display());
        rep.seconds = start.elapsed().as_secs_f64();
        return rep;
    }
    rep.line = format!("FAIL {} at width {w}{smt_note}", path.display());
    failure_detail(&mut rep, &r, val);
    rep.seconds = start.elapsed().as_secs_f64();
    rep
}

/// A failing case's detail: each failure, the peer's classes, and the
/// failing point with every node's value there (from the checks, else from
/// the validator).
fn failure_detail(rep: &mut CaseReport, r: &Replay, val: Option<&checks::Validation>) {
    let w = r.width;
    let d = &mut rep.detail;
    for f in &r.checked.failures {
        d.push_str(&format!("  {f}\n"));
    }
    if let Some(b) = &rep.backend {
        d.push_str(&format!("  backend: {b}\n"));
        for line in &rep.backends {
            d.push_str(&format!("    {line}\n"));
        }
    }
    if let Some(x) = &rep.relaxed {
        d.push_str(&format!("  relaxed: {x}\n"));
    }
    // The failing point: from the checks, else from the validator.
    let env: Option<Vec<i128>> = r
        .checked
        .failures
        .iter()
        .find_map(|f| f.env.as_ref())
        .map(|e| e.iter().map(|&v| v as i128).collect())
        .or_else(|| val.and_then(|v| v.point.clone()));
    if let Some(env) = env {
        let p = r.program();
        let named: Vec<(String, i128)> = p
            .graph
            .vars()
            .iter()
            .zip(&env)
            .map(|(d, &v)| (d.name.clone(), v))
            .collect();
        d.push_str(&format!("  point: {}\n", print::point(&p.graph, &named)));
        let show = |roots: &[NodeId]| {
            crate::checks::show_eval(&p.graph, &interp::eval(&p.graph, roots, &env, w))
        };
        d.push_str(&format!(
            "  results: source {}, target {}\n",
            show(&p.outputs),
            show(&p.expects)
        ));
        d.push_str(
            "  every node at that point (source: the `expr` lines, target: the simplifier's answer):\n",
        );
        d.push_str(&node_values(&p, &env, w));
    }
}

/// Rewrites a kept finding against a peer with its class as `rep` (a
/// [`judge`] of it) found it: its `# backend:` and `# relaxed:` lines
/// replaced, the file moved into its class's subdirectory of the peer's
/// corpus (or out of it), its reproducer written beside it (or a stale one
/// removed). Returns where the file is now.
pub fn reclassify(path: &Path, rep: &CaseReport) -> io::Result<PathBuf> {
    let text = fs::read_to_string(path)?;
    let mut lines: Vec<String> = Vec::new();
    let mut in_backend = false;
    for line in text.lines() {
        if line.starts_with("# backend:") {
            in_backend = true;
            continue;
        }
        if in_backend && line.starts_with("#   ") {
            continue;
        }
        in_backend = false;
        if line.starts_with("# relaxed:") {
            continue;
        }
        lines.push(line.to_string());
    }
    let mut header = Vec::new();
    if let Some(b) = &rep.backend {
        header.push(format!("# backend: {}", checks::one_line(b)));
        for l in &rep.backends {
            header.push(format!("#   {}", checks::one_line(l)));
        }
    }
    if let Some(r) = &rep.relaxed {
        header.push(format!("# relaxed: {}", checks::one_line(r)));
    }
    let at = lines
        .iter()
        .position(|l| l.starts_with("# simplifier:"))
        .map_or(0, |i| i + 1);
    lines.splice(at..at, header);
    let dir = path.parent().unwrap_or(Path::new("."));
    let in_subdir = dir
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| Class::ALL.iter().any(|c| c.subdir() == Some(n)));
    let base = if in_subdir {
        dir.parent().unwrap_or(Path::new("."))
    } else {
        dir
    };
    let new_dir = match rep.class.and_then(Class::subdir) {
        Some(sub) => base.join(sub),
        None => base.to_path_buf(),
    };
    fs::create_dir_all(&new_dir)?;
    let new_path = new_dir.join(path.file_name().unwrap_or_default());
    let (old_shown, new_shown) = (path.display().to_string(), new_path.display().to_string());
    let mut out = String::new();
    for l in &lines {
        if l.starts_with("# reproduce:") {
            out.push_str(&l.replace(&old_shown, &new_shown));
        } else {
            out.push_str(l);
        }
        out.push('\n');
    }
    write_atomic(&new_path, &out)?;
    let old_scripts = reproducers_of(path);
    for old in reproducers_of(&new_path) {
        let _ = fs::remove_file(old);
    }
    if let Some(script) = &rep.reproducer {
        write_script(&new_path, script)?;
    }
    if new_path != path {
        fs::remove_file(path)?;
        for old in old_scripts {
            let _ = fs::remove_file(old);
        }
    }
    Ok(new_path)
}

/// The value of every node of both sides at a point, one per line, source
/// first: what a failing point looks like from the inside.
pub fn node_values(p: &Program, env: &[i128], w: Width) -> String {
    /// Nodes listed per side: the ones nearest the roots.
    const NODE_ROWS: usize = 1000;
    let mut out = String::new();
    for (label, roots) in [("source", &p.outputs), ("target", &p.expects)] {
        if roots.is_empty() {
            continue;
        }
        out.push_str(&format!("  {label}:\n"));
        match interp::eval_all(&p.graph, roots, env, w) {
            Ok(vals) => {
                let shown: Vec<NodeId> = p
                    .graph
                    .reachable(roots)
                    .into_iter()
                    .filter(|&id| !matches!(p.graph.node(id).op, Op::Const(_) | Op::Invalid))
                    .collect();
                // Each text is cut short before it is printed whole, so a
                // long chain costs its length, not its length squared.
                let rows: Vec<(String, String)> = shown
                    .iter()
                    .take(NODE_ROWS)
                    .map(|&id| {
                        (
                            checks::short_expr(&p.graph, id),
                            vals[id.index()].to_string(),
                        )
                    })
                    .collect();
                let width = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
                for (text, val) in rows {
                    out.push_str(&format!("    {text:<width$} = {val}\n"));
                }
                if shown.len() > NODE_ROWS {
                    out.push_str(&format!(
                        "    ... and {} not shown\n",
                        print::count(shown.len() - NODE_ROWS, "more node")
                    ));
                }
            }
            Err(u) => out.push_str(&format!(
                "    undefined: {} at {}\n",
                u.reason,
                checks::short_expr(&p.graph, u.node)
            )),
        }
    }
    out
}
