//! The corpus's text: a finding as a case file (its `#` header and its
//! `var`/`expr`/`expect` lines) and where it is written, and a missed
//! simplification's file.

use super::store::{fnv1a, write_atomic, write_script, CorpusError, Saved};
use crate::backend::Script;
use crate::cause::found::Found;
use crate::cause::Cause;
use crate::checks::{self, Checked, Kind};
use crate::confirm::{Class, Confirmation};
use crate::missed::{Direction, Missed};
use crate::subject::Subject;
use engine::dtype::Width;
use engine::ir::{Graph, NodeId, Op};
use engine::parse::Program;
use engine::print;
use std::fs;
use std::io;
use std::path::Path;

/// A finding file's header: its `# key: value` lines, typed. Written by
/// [`Entry::render`], read back by [`Header::parse`] (`replay`, `report`
/// and [`super::reclassify`] read nothing else), every line a key this
/// type knows kept as it was and any other comment line kept after them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Header {
    /// `# tileproof finding: KIND` (`None`: not a finding's file, or a kind
    /// this tileproof does not know: see `kind_text`).
    pub kind: Option<Kind>,
    pub kind_text: Option<String>,
    /// `# failure:` what failed, one line.
    pub failure: Option<String>,
    /// `# point:` where, as the input syntax writes it.
    pub point: Option<String>,
    /// `# simplifier:` the simplifier under test, name and version (and for
    /// a rule's counterexample, ` rule NAME`).
    pub simplifier: Option<String>,
    /// `# backend:` the class by the peer's compiled code, with what showed
    /// it, and one indented line per backend tried.
    pub backend: Option<String>,
    pub backends: Vec<String>,
    /// `# relaxed:` the verdict under the profile's relaxed model.
    pub relaxed: Option<String>,
    /// `# rules:` the rules that fired, with counts.
    pub rules: Option<String>,
    /// `# cause:` the defect the finding is filed under ([`Cause::key`]).
    pub cause: Option<Cause>,
    /// `# blame:` the rule's step that fails alone, and its instance.
    pub blame: Option<String>,
    /// `# bound:` the peer's bound that excludes a value its node takes.
    pub bound: Option<String>,
    /// `# how:` where an unattributed cause shows (the op that overflows,
    /// the constant that wrapped).
    pub how: Option<String>,
    /// `# origin:` where the case came from.
    pub origin: Option<String>,
    /// `# width:` and `# simplify-width:`, as written.
    pub width: Option<String>,
    pub simplify_width: Option<String>,
    /// `# reproduce:` the command that replays it.
    pub reproduce: Option<String>,
    /// `# expect lines: ...`: the case's `expect` lines are the answer
    /// when it was found.
    pub expect_note: bool,
    /// Any other comment line, in order.
    pub other: Vec<String>,
}

/// The `# expect lines` note.
const EXPECT_NOTE: &str = "expect lines: what the simplifier produced when this was found";

impl Header {
    /// Reads the header lines of a case (without their `#`, as
    /// [`Program::header`] holds them).
    pub fn parse(lines: &[String]) -> Header {
        let mut h = Header::default();
        let mut in_backend = false;
        for line in lines {
            let line = line.trim_end();
            if in_backend && line.starts_with("  ") {
                h.backends.push(line.trim().to_string());
                continue;
            }
            in_backend = false;
            let Some((key, value)) = line.split_once(':') else {
                h.other.push(line.to_string());
                continue;
            };
            let value = value.trim().to_string();
            match key.trim() {
                "tileproof finding" => {
                    h.kind = Kind::from_name(&value);
                    h.kind_text = Some(value);
                }
                "failure" => h.failure = Some(value),
                "point" => h.point = Some(value),
                "simplifier" => h.simplifier = Some(value),
                "backend" => {
                    h.backend = Some(value);
                    in_backend = true;
                }
                "relaxed" => h.relaxed = Some(value),
                "rules" => h.rules = Some(value),
                "cause" => match Cause::parse(&value) {
                    Some(c) => h.cause = Some(c),
                    None => h.other.push(line.to_string()),
                },
                "blame" => h.blame = Some(value),
                "bound" => h.bound = Some(value),
                "how" => h.how = Some(value),
                "origin" => h.origin = Some(value),
                "width" => h.width = Some(value),
                "simplify-width" => h.simplify_width = Some(value),
                "reproduce" => h.reproduce = Some(value),
                "expect lines" => h.expect_note = true,
                _ => h.other.push(line.to_string()),
            }
        }
        h
    }

    /// The header of a parsed case.
    pub fn of(p: &Program) -> Header {
        Header::parse(&p.header)
    }

    /// The class the `# backend:` line records.
    pub fn class(&self) -> Option<Class> {
        let b = self.backend.as_deref()?;
        Class::from_name(b.split([' ', ':']).next().unwrap_or_default())
    }

    /// The header as `# ` lines, each newline-terminated.
    pub fn render(&self) -> String {
        fn put(h: &mut Vec<String>, key: &str, v: Option<&str>) {
            if let Some(v) = v {
                h.push(format!("{key}: {}", checks::one_line(v)));
            }
        }
        let mut h: Vec<String> = Vec::new();
        put(&mut h, "tileproof finding", self.kind_text.as_deref());
        put(&mut h, "failure", self.failure.as_deref());
        put(&mut h, "point", self.point.as_deref());
        put(&mut h, "simplifier", self.simplifier.as_deref());
        put(&mut h, "backend", self.backend.as_deref());
        if self.backend.is_some() {
            h.extend(
                self.backends
                    .iter()
                    .map(|l| format!("  {}", checks::one_line(l))),
            );
        }
        put(&mut h, "relaxed", self.relaxed.as_deref());
        put(&mut h, "rules", self.rules.as_deref());
        let cause = self.cause.as_ref().map(Cause::key);
        put(&mut h, "cause", cause.as_deref());
        put(&mut h, "blame", self.blame.as_deref());
        put(&mut h, "bound", self.bound.as_deref());
        put(&mut h, "how", self.how.as_deref());
        put(&mut h, "origin", self.origin.as_deref());
        put(&mut h, "width", self.width.as_deref());
        put(&mut h, "simplify-width", self.simplify_width.as_deref());
        put(&mut h, "reproduce", self.reproduce.as_deref());
        if self.expect_note {
            h.push(EXPECT_NOTE.to_string());
        }
        h.extend(self.other.iter().cloned());
        h.iter().map(|l| format!("# {l}\n")).collect()
    }
}

/// The command that replays a case file: `tileproof replay ARGS PATH`
/// (`args`: the options that run its simplifier again, each followed by a
/// space).
pub fn replay_line(args: &str, path: &Path) -> String {
    format!(
        "tileproof replay {args}{}",
        crate::subject::shell_quote(&path.display().to_string())
    )
}

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
    /// The defect it is filed under, with what showed it (the rule's step
    /// that fails alone, the bound that is wrong).
    pub cause: Found,
    /// `cause`'s detail ([`Found::detail`]), made once for the header and
    /// the campaign's summary.
    pub detail: Option<String>,
    /// A standalone script that shows the bug with only the peer's own
    /// code, written beside the case (`NAME.py`).
    pub reproducer: Option<Script>,
}

impl Entry {
    /// The entry for a checked case, filed under `cause`: the first failure
    /// of `kind` (or the first failure) and the rules that fired.
    /// `case` is the case's text as it was checked (its `var` and `expr`
    /// lines: the text the check read back); the answer's `expect` lines
    /// are added to it.
    pub fn from_checked(
        checked: &Checked,
        case: String,
        kind: Kind,
        subject: &dyn Subject,
        width: Width,
        origin: String,
        cause: Found,
    ) -> Entry {
        let fail = checked.failure(kind).or(checked.failures.first()).cloned();
        Entry {
            kind,
            message: fail
                .as_ref()
                .map_or_else(String::new, |f| f.message.clone()),
            point_text: fail.as_ref().and_then(|f| f.shown.clone()),
            point: fail.and_then(|f| f.point),
            rules: checked.fired(subject.rule_names()),
            origin,
            width,
            simplify_width: subject.engine().map_or(width, |s| s.width),
            subject: subject.name(),
            reproduce_args: subject.reproduce_args(),
            body: case + &expect_lines(&checked.graph, checked.tgt.as_deref().unwrap_or(&[])),
            class: checked.class.clone(),
            relaxed: checked.relaxed.as_ref().map(|r| r.header()),
            detail: cause.detail(),
            cause,
            reproducer: None,
        }
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

    /// The header this finding's file gets at `path`.
    pub fn header(&self, path: &Path) -> Header {
        let rules: Vec<String> = self
            .rules
            .iter()
            .map(|(n, c)| format!("{n} ({c}x)"))
            .collect();
        let say_rules = !rules.is_empty()
            || self.reproduce_args.starts_with("--rules")
            || self.reproduce_args.is_empty();
        Header {
            kind: Some(self.kind),
            kind_text: Some(self.kind.name().to_string()),
            failure: (!self.message.is_empty()).then(|| self.message.clone()),
            point: self.point_text.clone(),
            simplifier: Some(self.subject.clone()),
            backend: self.class.as_ref().map(|c| c.header()),
            backends: self
                .class
                .as_ref()
                .map(|c| c.backends.clone())
                .unwrap_or_default(),
            relaxed: self.relaxed.clone(),
            rules: say_rules.then(|| {
                if rules.is_empty() {
                    "none fired".to_string()
                } else {
                    rules.join(", ")
                }
            }),
            cause: Some(self.cause.cause.clone()),
            blame: self.cause.blame.as_ref().and(self.detail.clone()),
            bound: self.cause.wrong_bound.as_ref().map(|b| b.line()),
            how: self.cause.how.clone(),
            origin: Some(self.origin.clone()),
            width: Some(self.width.to_string()),
            simplify_width: (self.simplify_width != self.width)
                .then(|| self.simplify_width.to_string()),
            reproduce: Some(replay_line(&self.reproduce_args, path)),
            expect_note: self.body.lines().any(|l| l.starts_with("expect")),
            other: Vec::new(),
        }
    }

    /// The whole file; `path` is where it will live (for the reproduce
    /// line).
    pub fn render(&self, path: &Path) -> String {
        format!("{}{}", self.header(path).render(), self.body)
    }
}

/// Writes `entry` into `dir` (created if missing; into its class's
/// subdirectory for the classes kept apart from the bugs, `model-only`
/// and `outside-input-language`), atomically, and its reproducer beside
/// it. A file of its name already there is left as it is (the same case
/// found again).
pub fn save(dir: &Path, entry: &Entry) -> io::Result<Saved> {
    let dir = match entry.class.as_ref().and_then(|c| c.class.subdir()) {
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

/// The case as text: the variables either form uses, one `expr` line per
/// source root and one `expect` line per target root.
pub fn case_body(g: &Graph, src: &[NodeId], tgt: Option<&[NodeId]>) -> String {
    case_text(g, src, tgt).0
}

/// [`case_body`], with the source roots' expressions as written there
/// (printed once: a shrink candidate's requests send them).
pub fn case_text(g: &Graph, src: &[NodeId], tgt: Option<&[NodeId]>) -> (String, Vec<String>) {
    let exprs: Vec<String> = src.iter().map(|&r| print::expr(g, r)).collect();
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
    for e in &exprs {
        out.push_str(&format!("expr {e}\n"));
    }
    (out + &expect_lines(g, tgt.unwrap_or(&[])), exprs)
}

/// One `expect` line per answer root.
fn expect_lines(g: &Graph, tgt: &[NodeId]) -> String {
    tgt.iter()
        .map(|&r| format!("expect {}\n", print::expr(g, r)))
        .collect()
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

/// The width a header line asks for (`# width: 32`), checked.
pub(super) fn header_width(
    value: Option<&str>,
    path: &Path,
    key: &str,
) -> Result<Option<Width>, CorpusError> {
    match value {
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
    header_width(Header::of(p).width.as_deref(), path, "width")
}
