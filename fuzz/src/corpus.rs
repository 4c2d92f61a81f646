//! The corpus: findings stored as text cases, replayed forever after.
//!
//! A corpus case is a file in the engine's text format (`var` / `expr`
//! lines, read by `engine::parse::parse_program`), so it survives changes
//! to the generators and reads well in review. Its leading `#` lines say
//! what failed and how to reproduce it:
//!
//! ```text
//! # tileproof finding: oracle
//! # failure: value-differs (root 0) at x = -3; source (1), target (-3) [...]
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

use crate::checks::{self, CheckConfig, Checked, Kind, KindSet, Validator};
use engine::dtype::Width;
use engine::ir::{Graph, NodeId, Op};
use engine::parse::{parse_program, Program};
use engine::print;
use engine::rewrite::Simplifier;
use engine::rules::RuleSet;
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
    /// Rules that fired when simplifying the case, with counts.
    pub rules: Vec<(String, usize)>,
    /// Where the case came from (generator, seed and case number, or an
    /// imported artifact).
    pub origin: String,
    /// The width the case is checked at.
    pub width: Width,
    /// The width the engine simplified at, when it differs.
    pub simplify_width: Width,
    /// The case: `var`, `expr` and (optionally) `expect` lines.
    pub body: String,
}

impl Entry {
    /// The entry for a checked case: the first failure of `kind` (or the
    /// first failure) and the rules that fired.
    pub fn from_checked(
        checked: &Checked,
        kind: Kind,
        simp: &Simplifier,
        width: Width,
        origin: String,
    ) -> Entry {
        let fail = checked.failure(kind).or(checked.failures.first()).cloned();
        Entry {
            kind,
            message: fail
                .as_ref()
                .map_or_else(String::new, |f| f.message.clone()),
            point: fail.and_then(|f| f.point),
            rules: checked.fired(simp),
            origin,
            width,
            simplify_width: simp.width,
            body: case_body(&checked.graph, &checked.src, checked.tgt.as_deref()),
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

    /// The whole file; `path` is where it will live (for the reproduce
    /// line).
    pub fn render(&self, path: &Path) -> String {
        let mut h = vec![format!("tileproof finding: {}", self.kind)];
        if !self.message.is_empty() {
            h.push(format!("failure: {}", checks::one_line(&self.message)));
        }
        if let Some(p) = &self.point {
            let parts: Vec<String> = p.iter().map(|(n, v)| format!("{n} = {v}")).collect();
            h.push(format!("point: {}", parts.join(", ")));
        }
        let rules: Vec<String> = self
            .rules
            .iter()
            .map(|(n, c)| format!("{n} ({c}x)"))
            .collect();
        h.push(format!(
            "rules: {}",
            if rules.is_empty() {
                "none fired".to_string()
            } else {
                rules.join(", ")
            }
        ));
        h.push(format!("origin: {}", self.origin));
        h.push(format!("width: {}", self.width));
        if self.simplify_width != self.width {
            h.push(format!("simplify-width: {}", self.simplify_width));
        }
        h.push(format!("reproduce: tileproof replay {}", path.display()));
        if self.body.lines().any(|l| l.starts_with("expect")) {
            h.push("expect lines: what the engine produced when this was found".into());
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

/// Writes `entry` into `dir` (created if missing), atomically.
pub fn save(dir: &Path, entry: &Entry) -> io::Result<Saved> {
    fs::create_dir_all(dir)?;
    let path = dir.join(entry.file_name());
    if path.exists() {
        return Ok(Saved { path, new: false });
    }
    write_atomic(&path, &entry.render(&path))?;
    Ok(Saved { path, new: true })
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
/// files in name order.
pub fn files(path: &Path) -> io::Result<Vec<PathBuf>> {
    if !path.is_dir() {
        fs::metadata(path)?;
        return Ok(vec![path.to_path_buf()]);
    }
    let mut out: Vec<PathBuf> = fs::read_dir(path)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "txt"))
        .collect();
    out.sort();
    Ok(out)
}

/// Reads and parses a case file; errors say `path:line:col: reason`.
pub fn read(path: &Path) -> Result<Program, String> {
    let text = fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse_program(&text).map_err(|e| format!("{}:{e}", path.display()))
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

fn header_width(p: &Program, key: &str) -> Result<Option<Width>, String> {
    match header_value(p, key) {
        None => Ok(None),
        Some(v) => match v.parse::<u32>() {
            Ok(w) if Width::ALL.contains(&Width(w)) => Ok(Some(Width(w))),
            _ => Err(format!("`# {key}: {v}` is not one of 8, 16, 32, 64")),
        },
    }
}

/// The width a case asks for in its header (`# width: 32`).
pub fn case_width(p: &Program) -> Result<Option<Width>, String> {
    header_width(p, "width")
}

/// What replaying a case found.
#[derive(Clone)]
pub struct Replay {
    /// The width the case was checked at.
    pub width: Width,
    /// The case re-simplified and checked; `checked.src` are the `expr`
    /// lines, `checked.tgt` the current engine's result.
    pub checked: Checked,
    /// Rules that fired, with counts.
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
        }
    }
}

/// The checks a replay runs: everything a campaign checks, over the whole
/// domain when it has at most 2^24 points.
pub fn replay_config(width: Width) -> CheckConfig {
    CheckConfig {
        width,
        kinds: KindSet::ALL,
        ..CheckConfig::default()
    }
}

/// Re-simplifies the `expr` lines of `p` with `rules` and the current
/// engine and checks the result at `width`: the oracle, ranges,
/// idempotence, JIT against interpreter, and the validator when given.
/// The engine simplifies at the case's `# simplify-width:` when it has one,
/// else at `width`.
pub fn replay(
    p: &Program,
    rules: &RuleSet,
    width: Width,
    validate: Option<&Validator<'_>>,
) -> Replay {
    let mut simp = Simplifier::new(rules);
    simp.width = header_width(p, "simplify-width")
        .ok()
        .flatten()
        .unwrap_or(width);
    let checked = checks::check(&p.graph, &p.outputs, &simp, &replay_config(width), validate);
    let fired = checked.fired(&simp);
    Replay {
        width,
        checked,
        fired,
    }
}

/// [`replay`] of a file, at `width` or else the width its header asks
/// for, else 64.
pub fn replay_file(
    path: &Path,
    rules: &RuleSet,
    width: Option<Width>,
    validate: Option<&Validator<'_>>,
) -> Result<Replay, String> {
    let p = read(path)?;
    let w = match width {
        Some(w) => w,
        None => case_width(&p)
            .map_err(|e| format!("{}: {e}", path.display()))?
            .unwrap_or(Width::W64),
    };
    Ok(replay(&p, rules, w, validate))
}
