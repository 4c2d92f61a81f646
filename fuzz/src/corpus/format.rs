//! The corpus's text: a finding as a case file (its `#` header and its
//! `var`/`expr`/`expect` lines), and a missed simplification's file.

use super::store::{fnv1a, CorpusError};
use crate::backend::Script;
use crate::checks::{self, Checked, Kind};
use crate::confirm::Confirmation;
use crate::missed::{Direction, Missed};
use crate::subject::Subject;
use engine::dtype::Width;
use engine::ir::{Graph, NodeId, Op};
use engine::parse::Program;
use engine::print;
use engine::semantics::Failure;
use std::path::Path;

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

/// The value of a `# key: value` header line.
pub fn header_value<'p>(p: &'p Program, key: &str) -> Option<&'p str> {
    p.header.iter().find_map(|l| {
        l.trim()
            .strip_prefix(key)
            .and_then(|r| r.strip_prefix(':'))
            .map(str::trim)
    })
}

pub(super) fn header_width(
    p: &Program,
    path: &Path,
    key: &str,
) -> Result<Option<Width>, CorpusError> {
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
