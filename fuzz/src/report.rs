//! Upstream reports: one issue per defect of a corpus, in Markdown.
//!
//! A corpus file records its cause (`# cause:`, [`crate::cause`]). A
//! defect is a cause of one peer release (Morok's product bound shows in
//! its `symbolic`, `sym` and `symbolic_simple` entries alike), so kept
//! findings are grouped by peer, version and cause; only the findings the
//! peer's own compiled code shows to be bugs are reported (`model-only`
//! and `outside-input-language` ones are tileproof's model's). A report
//! names the code that is wrong, shows the smallest input, the peer's
//! answer, expected and actual at the point, and the reproducer kept
//! beside it (which needs only the peer), inline.

use crate::blame::rule_and_pattern;
use crate::cause::{BoundOf, Cause, Construct, Fault};
use crate::confirm::Class;
use crate::corpus::{self, Header, CAUSES_FILE};
use engine::semantics::Failure;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// A kept finding: its file, header and case.
#[derive(Clone, Debug)]
pub struct Kept {
    pub path: PathBuf,
    pub header: Header,
    /// The `var`, `expr` and `expect` lines.
    pub case: String,
    /// The case's size in characters of its `expr` lines: the smallest is
    /// the one a report shows.
    pub size: usize,
    /// The reproducer beside it (extension, text), when there is one.
    pub reproducer: Option<(String, String)>,
}

/// One defect: a cause of one peer release, with its kept findings.
#[derive(Clone, Debug)]
pub struct Defect {
    /// The peer's package (`morok`) and version.
    pub peer: String,
    pub version: String,
    pub cause: Cause,
    /// The peer's entry points that showed it (`morok.symbolic`).
    pub entries: BTreeSet<String>,
    /// Its kept findings that are bugs, smallest first.
    pub kept: Vec<Kept>,
    /// Kept findings by class.
    pub classes: BTreeMap<Class, usize>,
    /// Findings campaigns saw of it (their `causes.json`), when recorded.
    pub seen: Option<u64>,
}

/// Why a corpus could not be reported on.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("{path}: {source}")]
    Io { path: String, source: io::Error },
    #[error("{path}: {source}")]
    Corpus {
        path: String,
        source: corpus::CorpusError,
    },
}

/// What a corpus holds that no report covers: files without a cause line
/// (written before causes were recorded: `replay --reclassify` adds it),
/// and causes whose kept findings are none of them bugs.
#[derive(Clone, Debug, Default)]
pub struct Left {
    pub without_cause: Vec<PathBuf>,
    pub not_bugs: Vec<(String, Cause, Class)>,
}

/// The directories under `paths` that hold case files: each path itself,
/// and its subdirectories (`corpus/peers` holds one per peer entry).
fn corpus_dirs(paths: &[PathBuf]) -> Result<Vec<PathBuf>, ReportError> {
    let mut out = Vec::new();
    for p in paths {
        out.push(p.clone());
        if !p.is_dir() {
            continue;
        }
        let io = |source| ReportError::Io {
            path: p.display().to_string(),
            source,
        };
        let mut subs: Vec<PathBuf> = fs::read_dir(p)
            .map_err(io)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|d| d.is_dir() && !is_class_dir(d))
            .collect();
        subs.sort();
        out.extend(subs);
    }
    Ok(out)
}

/// A class subdirectory of a peer's corpus (`model-only/`), which
/// [`corpus::files`] reads with its parent.
fn is_class_dir(d: &Path) -> bool {
    d.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| Class::ALL.iter().any(|c| c.subdir() == Some(n)))
}

/// The package and version of a `# simplifier:` line (`morok.symbolic
/// 0.1.0-alpha.2` is `morok`, `0.1.0-alpha.2`, entry `morok.symbolic`).
fn peer_of(simplifier: &str) -> (String, String, String) {
    let mut words = simplifier.split_whitespace();
    let entry = words.next().unwrap_or_default().to_string();
    let version = words.next().unwrap_or_default().to_string();
    let package = entry.split('.').next().unwrap_or_default().to_string();
    (package, version, entry)
}

/// The defects of the corpora under `paths`, in the order of their peer,
/// then their layer, then their cause; and what no report covers.
pub fn gather(paths: &[PathBuf]) -> Result<(Vec<Defect>, Left), ReportError> {
    let mut defects: BTreeMap<(String, String, Cause), Defect> = BTreeMap::new();
    let mut left = Left::default();
    let mut seen_files = BTreeSet::new();
    for dir in corpus_dirs(paths)? {
        let files = if dir.is_dir() {
            corpus::files(&dir).map_err(|source| ReportError::Io {
                path: dir.display().to_string(),
                source,
            })?
        } else {
            vec![dir.clone()]
        };
        let counts = seen_counts(&dir);
        for path in files {
            if !seen_files.insert(path.clone()) {
                continue;
            }
            let program = corpus::read(&path).map_err(|source| ReportError::Corpus {
                path: path.display().to_string(),
                source,
            })?;
            let header = Header::of(&program);
            let (Some(cause), Some(simplifier)) = (header.cause.clone(), header.simplifier.clone())
            else {
                left.without_cause.push(path);
                continue;
            };
            let (peer, version, entry) = peer_of(&simplifier);
            let class = header.class().unwrap_or(Class::Unconfirmed);
            let d = defects
                .entry((peer.clone(), version.clone(), cause.clone()))
                .or_insert_with(|| Defect {
                    peer,
                    version,
                    cause: cause.clone(),
                    entries: BTreeSet::new(),
                    kept: Vec::new(),
                    classes: BTreeMap::new(),
                    seen: None,
                });
            d.entries.insert(entry);
            *d.classes.entry(class).or_default() += 1;
            if let Some(n) = counts.get(&cause.key()) {
                d.seen = Some(d.seen.unwrap_or(0) + n);
            }
            if class.is_bug() {
                d.kept.push(kept(&path, header)?);
            }
        }
    }
    let mut out = Vec::new();
    for d in defects.into_values() {
        if d.kept.is_empty() {
            let class = d
                .classes
                .keys()
                .next()
                .copied()
                .unwrap_or(Class::Unconfirmed);
            left.not_bugs
                .push((format!("{} {}", d.peer, d.version), d.cause, class));
            continue;
        }
        out.push(d);
    }
    for d in &mut out {
        d.kept
            .sort_by(|a, b| a.size.cmp(&b.size).then(a.path.cmp(&b.path)));
    }
    out.sort_by(|a, b| {
        (&a.peer, &a.version, a.cause.layer(), &a.cause).cmp(&(
            &b.peer,
            &b.version,
            b.cause.layer(),
            &b.cause,
        ))
    });
    Ok((out, left))
}

/// A kept file read for its report.
fn kept(path: &Path, header: Header) -> Result<Kept, ReportError> {
    let io = |source| ReportError::Io {
        path: path.display().to_string(),
        source,
    };
    let text = fs::read_to_string(path).map_err(io)?;
    let case: String = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| format!("{l}\n"))
        .collect();
    let size = case
        .lines()
        .filter(|l| l.starts_with("expr"))
        .map(str::len)
        .sum();
    let reproducer = corpus::reproducers_of(path).into_iter().find_map(|p| {
        let ext = p.extension()?.to_str()?.to_string();
        matches!(ext.as_str(), "py" | "rs")
            .then(|| fs::read_to_string(&p).ok().map(|t| (ext, t)))
            .flatten()
    });
    Ok(Kept {
        path: path.to_path_buf(),
        header,
        case,
        size,
        reproducer,
    })
}

/// The findings campaigns saw per cause key, from a corpus directory's
/// [`CAUSES_FILE`] (none when it has none).
fn seen_counts(dir: &Path) -> BTreeMap<String, u64> {
    let Ok(text) = fs::read_to_string(dir.join(CAUSES_FILE)) else {
        return BTreeMap::new();
    };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
        return BTreeMap::new();
    };
    v["causes"]
        .as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(k, c)| Some((k.clone(), c["count"].as_u64()?)))
                .collect()
        })
        .unwrap_or_default()
}

/// The file a defect's report is written to: the peer, a slug of the
/// cause and a hash of its key (two causes can slug alike: `L < C` and
/// `L == C`): `morok-transfer-MUL-1a2b3c.md`.
pub fn file_name(d: &Defect) -> String {
    let key = d.cause.key();
    let mut slug = String::new();
    for c in key.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            slug.push(c);
        } else if !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug: String = slug.trim_matches('-').chars().take(60).collect();
    let hash = corpus::fnv1a(format!("{} {key}", d.peer).as_bytes()) >> 40;
    format!("{}-{slug}-{hash:06x}.md", d.peer)
}

/// The report's title: the peer, and the code that is wrong.
pub fn title(d: &Defect) -> String {
    let what = match &d.cause {
        Cause::Rule { rule, fault } => {
            let does = match fault {
                Fault::Wrong => "rewrites to a wrong answer",
                Fault::Undefined => {
                    "brings an overflow or a division by zero into an answer whose source has none"
                }
            };
            match rule_and_pattern(rule) {
                (rule, Some(pattern)) => format!("rule `{rule}`, its pattern `{pattern}`, {does}"),
                (rule, None) => format!("rule `{rule}` {does}"),
            }
        }
        Cause::Transfer(op) => format!(
            "range analysis: the bounds of `{op}` exclude values the node takes while its operands' bounds hold"
        ),
        Cause::Backend {
            backend,
            construct: Construct::Literal(c),
        } => format!("{backend} backend: the literal `{c}` compiles to another value"),
        Cause::Backend {
            backend,
            construct: Construct::Op(op),
        } => format!("{backend} backend: `{op}` compiles to another value"),
        Cause::Stage { stage, subterm } => {
            format!("`{stage}` already gets `{subterm}` wrong")
        }
        Cause::Implied(BoundOf::Overflow) => {
            "a pass folds with a bound computed in arithmetic that wraps".to_string()
        }
        Cause::Implied(BoundOf::Op(op)) => {
            format!("a pass folds with a bound of `{op}` that its values leave")
        }
        Cause::Subterm { failure, shape } => match failure {
            Failure::TargetUndefined => format!("undefined answer for `{shape}`"),
            Failure::ValidityDiffers => format!("wrong validity for `{shape}`"),
            Failure::ValueDiffers => format!("wrong answer for `{shape}`"),
        },
        Cause::Introduced { ub } => format!("a rewrite introduces {ub}"),
        Cause::Misread { read } => {
            format!("a rewrite rounds {read} division and remainder another way")
        }
        Cause::Crash(site) => format!("crash at `{site}`"),
        Cause::Loop(rules) => format!("rewriting does not terminate: {}", rules.join(", ")),
        Cause::Hang => "the simplifier does not answer".into(),
        Cause::Model(part) => format!("not the peer's: tileproof's model flags {part}"),
        Cause::Shape(s) => format!("wrong answer ({s})"),
    };
    format!("[{} {}] {what}", d.peer, d.version)
}

/// The fence language of a reproducer's extension.
fn fence(ext: &str) -> &'static str {
    match ext {
        "py" => "python",
        "rs" => "rust",
        _ => "",
    }
}

/// The issue text of one defect.
pub fn render(d: &Defect) -> String {
    let first = &d.kept[0];
    let h = &first.header;
    let mut out = format!("# {}\n\n", title(d));
    out.push_str(&format!(
        "**Peer**: {} {} ({}). **Where**: {} ({}).\n\n",
        d.peer,
        d.version,
        d.entries.iter().cloned().collect::<Vec<_>>().join(", "),
        blamed(d),
        d.cause.layer().name()
    ));
    out.push_str("## Smallest input\n\n```text\n");
    for line in first.case.lines() {
        let shown = match line.strip_prefix("expect ") {
            Some(a) => format!("# the peer's answer: {a}"),
            None => line.to_string(),
        };
        out.push_str(&shown);
        out.push('\n');
    }
    out.push_str("```\n\n");
    out.push_str("## Expected and actual\n\n");
    if let Some(b) = &h.backend {
        out.push_str(&format!("- by the peer's own compiled code: {b}\n"));
    }
    if let Some(f) = &h.failure {
        out.push_str(&format!("- by tileproof's semantics: {f}\n"));
    }
    if let Some(b) = &h.bound {
        out.push_str(&format!("- {b}\n"));
    }
    if let Some(b) = &h.blame {
        out.push_str(&format!("- the step: {b}\n"));
    }
    if let Some(how) = &h.how {
        out.push_str(&format!("- how: {how}\n"));
    }
    out.push('\n');
    match &first.reproducer {
        Some((ext, text)) => {
            out.push_str(&format!(
                "## Reproducer\n\nNeeds only the pinned peer; it fails while the bug is there (`{}`).\n\n```{}\n{}```\n\n",
                corpus::reproducer_path(&first.path, ext).display(),
                fence(ext),
                text
            ));
        }
        None => out.push_str("## Reproducer\n\nNone was written beside the finding.\n\n"),
    }
    out.push_str("## How often\n\n");
    let classes: Vec<String> = d.classes.iter().map(|(c, n)| format!("{n} {c}")).collect();
    out.push_str(&format!(
        "{} kept ({}){}.\n",
        engine::print::count(d.kept.len(), "finding"),
        classes.join(", "),
        d.seen.map_or_else(String::new, |n| format!(
            "; campaigns saw {} of this cause",
            engine::print::count(n as usize, "finding")
        ))
    ));
    if d.kept.len() > 1 {
        out.push_str("\nThe other kept findings of this cause:\n\n");
        // Each with the peer's answer and how it fails: where a cause is
        // one defect shown by several of the peer's rewrites (a rule that
        // overflows, by the op it overflows at), these lines name them.
        for k in &d.kept[1..] {
            let lines = |prefix: &str| -> Vec<&str> {
                k.case
                    .lines()
                    .filter_map(|l| l.strip_prefix(prefix))
                    .collect()
            };
            out.push_str(&format!(
                "- `{}`: `{}`",
                k.path.display(),
                lines("expr ").join(" ; ")
            ));
            let answers = lines("expect ");
            if !answers.is_empty() {
                out.push_str(&format!(", answered `{}`", answers.join(" ; ")));
            }
            if let Some(how) = &k.header.how {
                out.push_str(&format!(": {how}"));
            }
            out.push('\n');
        }
    }
    out
}

/// The peer code a defect blames, in words.
fn blamed(d: &Defect) -> String {
    match &d.cause {
        Cause::Rule { rule, .. } => match rule_and_pattern(rule) {
            (rule, Some(pattern)) => format!("the pattern `{pattern}` of the rule `{rule}`"),
            (rule, None) => format!("the rule `{rule}`"),
        },
        Cause::Transfer(op) => format!("the transfer function of `{op}` in the range analysis"),
        Cause::Backend { backend, construct } => format!("the `{backend}` backend's {construct}"),
        Cause::Stage { stage, .. } => format!("the pipeline stage `{stage}`"),
        Cause::Implied(BoundOf::Overflow) => {
            "the range analysis its passes fold with: a bound whose values pass 64 bits, computed wrapping".to_string()
        }
        Cause::Implied(BoundOf::Op(op)) => {
            format!("the bound of `{op}` in the range analysis its passes fold with")
        }
        Cause::Crash(site) => format!("`{site}`"),
        Cause::Loop(rules) => format!("the rules {}", rules.join(", ")),
        Cause::Hang
        | Cause::Subterm { .. }
        | Cause::Introduced { .. }
        | Cause::Misread { .. }
        | Cause::Shape(_) => "the simplifier".into(),
        Cause::Model(_) => "tileproof's model".into(),
    }
}

/// The Markdown table of `defects` (one row each: peer, layer, what is
/// wrong, kept findings, the report's file under `dir`).
pub fn table(defects: &[Defect], dir: &str) -> String {
    let mut out = String::from(
        "| peer | layer | defect | kept | report |\n| --- | --- | --- | --- | --- |\n",
    );
    for d in defects {
        let what = title(d);
        let what = what.split_once("] ").map_or(what.as_str(), |(_, w)| w);
        out.push_str(&format!(
            "| {} {} | {} | {} | {} | [{}]({dir}/{}) |\n",
            d.peer,
            d.version,
            d.cause.layer().name(),
            what.replace('|', "\\|"),
            d.kept.len(),
            file_name(d),
            file_name(d)
        ));
    }
    out
}
