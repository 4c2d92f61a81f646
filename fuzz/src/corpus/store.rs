//! Where corpus files live: written atomically (a temporary file in the
//! same directory, synced, then renamed), named after what they found and
//! a hash of their case, read back, listed.

use crate::backend::Script;
use crate::cause::Cause;
use crate::confirm::Class;
use engine::input::Syntax;
use engine::parse::ParseError;
use engine::parse::Program;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

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

/// Writes the reproducer of the case at `case` beside it, with its
/// attachments.
pub(super) fn write_script(case: &Path, script: &Script) -> io::Result<()> {
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

/// The file a campaign adds its causes' counts to, beside its findings:
/// how many findings of each cause it saw (most are counted, not kept).
pub const CAUSES_FILE: &str = "causes.json";

/// How many findings of one cause a campaign saw.
#[derive(Clone, Debug)]
pub struct CauseCount {
    pub cause: Cause,
    pub count: u64,
}

/// Adds a campaign's counts (`campaign`: what it was, one line) to `dir`'s
/// [`CAUSES_FILE`]: per cause key, the total and each campaign's count.
pub fn record_causes(dir: &Path, campaign: &str, counts: &[CauseCount]) -> io::Result<()> {
    let path = dir.join(CAUSES_FILE);
    let mut v: serde_json::Value = fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_else(|| serde_json::json!({ "causes": {} }));
    let causes = v["causes"]
        .as_object_mut()
        .ok_or_else(|| io::Error::other(format!("{}: no `causes` object", path.display())))?;
    for c in counts {
        let e = causes
            .entry(c.cause.key())
            .or_insert_with(|| serde_json::json!({ "count": 0, "campaigns": [] }));
        let total = e["count"].as_u64().unwrap_or(0) + c.count;
        e["count"] = total.into();
        if let Some(list) = e["campaigns"].as_array_mut() {
            list.push(serde_json::json!({ "campaign": campaign, "count": c.count }));
        }
    }
    fs::create_dir_all(dir)?;
    let text = serde_json::to_string_pretty(&v).map_err(io::Error::other)?;
    write_atomic(&path, &format!("{text}\n"))
}
