//! The proof cache: a proof is stored under a hash of the exact query text
//! (premise and failure conditions, in SMT-LIB), the encoding mode and
//! width, and the Z3 version, so that any change to a rule, the encoding or
//! the solver misses the cache. Only proofs are cached: failures are
//! recomputed so that their counterexamples are current.
//!
//! An entry is one line of JSON that says what it proves (the query's
//! digest, the verdict, the solver that proved it (Z3, or cvc5 where the
//! portfolio's cvc5 answered first) and its version, the encoding), and is
//! checked against the query on every read: an empty file, a directory,
//! garbage or an entry for another query is not a proof. Such an entry is
//! ignored (the query is solved again) and remembered for the report. This
//! stops accidents (a truncated write, a cache restored from another
//! version) from passing as proofs, not a forger: the digest is of public
//! text, so whoever can write the directory can write a valid entry. See
//! docs/architecture.md, "Proof cache and its trust model".

use crate::portfolio::SolverKind;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Bump when the meaning of a cached entry changes (v1 entries were bare
/// notes; a new format changes every key, so they are misses, not
/// rejections).
const FORMAT: &str = "tileproof-proof-cache-v2";
/// Every obligation of the query was unsat (and its premise satisfiable).
const VERDICT: &str = "unsat";
/// The largest file read as an entry.
const MAX_ENTRY: u64 = 64 * 1024;
/// A temporary file older than this is left over from a killed run: a
/// write takes microseconds.
const ORPHAN_AGE: Duration = Duration::from_secs(10 * 60);

/// One query, as the cache knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Query {
    key: String,
    digest: String,
    encoding: String,
}

impl Query {
    /// `encoding` names the encoding mode and width; `texts` are the exact
    /// query text (premise, then each failure condition).
    pub fn new(encoding: &str, texts: &[&str]) -> Query {
        let digest = sha256(&[], texts);
        let key = sha256(&[FORMAT, z3::full_version(), encoding], texts);
        Query {
            key,
            digest,
            encoding: encoding.to_string(),
        }
    }

    /// The file name of its entry: a hash of the format, the solver
    /// version, the encoding and the text.
    pub fn key(&self) -> &str {
        &self.key
    }
}

/// SHA-256 of length-prefixed parts, in hex.
fn sha256(head: &[&str], parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in head {
        h.update(p.as_bytes());
    }
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p.as_bytes());
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// A cache entry: what it proves.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    format: String,
    key: String,
    digest: String,
    verdict: String,
    solver: String,
    version: String,
    encoding: String,
    /// The rule first proved under this query, for a reader; not checked
    /// (two rules can share a query).
    rule: String,
}

impl Entry {
    fn of(q: &Query, rule: &str, solver: SolverKind) -> Entry {
        Entry {
            format: FORMAT.into(),
            key: q.key.clone(),
            digest: q.digest.clone(),
            verdict: VERDICT.into(),
            solver: solver.name().into(),
            version: solver.version(),
            encoding: q.encoding.clone(),
            rule: rule.into(),
        }
    }
}

/// Why a cache entry is not a proof of its query.
#[derive(Debug, thiserror::Error)]
pub enum Rejection {
    #[error("not a regular file")]
    NotAFile,
    #[error("unreadable: {0}")]
    Unreadable(#[source] std::io::Error),
    #[error("empty")]
    Empty,
    #[error("{0} bytes, too large for an entry")]
    TooLarge(u64),
    #[error("not a cache entry: {0}")]
    Malformed(#[source] serde_json::Error),
    #[error("its {field} is {found:?}, not {expected:?}")]
    Mismatch {
        field: &'static str,
        found: String,
        expected: String,
    },
}

/// Checks the entry at `path` against `q`: `Ok(false)` when there is none.
pub fn check_entry(path: &Path, q: &Query) -> Result<Option<SolverKind>, Rejection> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Rejection::Unreadable(e)),
    };
    if !meta.is_file() {
        return Err(Rejection::NotAFile);
    }
    // An entry is a few hundred bytes; a huge file is not read.
    if meta.len() > MAX_ENTRY {
        return Err(Rejection::TooLarge(meta.len()));
    }
    let text = std::fs::read_to_string(path).map_err(Rejection::Unreadable)?;
    if text.trim().is_empty() {
        return Err(Rejection::Empty);
    }
    let found: Entry = serde_json::from_str(&text).map_err(Rejection::Malformed)?;
    // Either solver's proof, at the version that runs here.
    let solver = SolverKind::ALL
        .into_iter()
        .find(|s| s.name() == found.solver)
        .unwrap_or_default();
    let expected = Entry::of(q, "", solver);
    let fields = [
        ("format", &found.format, &expected.format),
        ("key", &found.key, &expected.key),
        ("digest", &found.digest, &expected.digest),
        ("verdict", &found.verdict, &expected.verdict),
        ("solver", &found.solver, &expected.solver),
        ("version", &found.version, &expected.version),
        ("encoding", &found.encoding, &expected.encoding),
    ];
    for (field, found, expected) in fields {
        if found != expected {
            return Err(Rejection::Mismatch {
                field,
                found: found.clone(),
                expected: expected.clone(),
            });
        }
    }
    Ok(Some(solver))
}

/// A directory of cached proofs.
#[derive(Clone, Debug)]
pub struct Cache {
    dir: PathBuf,
    /// Entries that were read and are not proofs, by path.
    rejected: Arc<Mutex<BTreeMap<PathBuf, String>>>,
    orphans_removed: usize,
}

impl Cache {
    /// Opens a cache directory, removing the temporary files that killed
    /// runs left behind.
    pub fn new(dir: impl Into<PathBuf>) -> Cache {
        let dir = dir.into();
        let orphans_removed = remove_orphans(&dir, ORPHAN_AGE);
        Cache {
            dir,
            rejected: Arc::default(),
            orphans_removed,
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the entry of a query is.
    pub fn path(&self, q: &Query) -> PathBuf {
        self.dir.join(&q.key[..2]).join(format!("{}.proved", q.key))
    }

    /// Whether this query is known proved: its entry exists and says so
    /// (see [`check_entry`]). A rejected entry is remembered (see
    /// [`Cache::rejected`]) and is no proof.
    pub fn is_proved(&self, q: &Query) -> bool {
        self.proved_by(q).is_some()
    }

    /// The solver whose proof of this query the cache holds, if it holds
    /// one ([`Cache::is_proved`]).
    pub fn proved_by(&self, q: &Query) -> Option<SolverKind> {
        let path = self.path(q);
        match check_entry(&path, q) {
            Ok(by) => by,
            Err(why) => {
                self.rejected
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(path, why.to_string());
                None
            }
        }
    }

    /// The entries read so far that were not proofs, with why.
    pub fn rejected(&self) -> Vec<(PathBuf, String)> {
        let r = self.rejected.lock().unwrap_or_else(|e| e.into_inner());
        r.iter().map(|(p, w)| (p.clone(), w.clone())).collect()
    }

    /// Remembers an entry found not to be a proof elsewhere (by a worker
    /// process reading the same directory), for [`Cache::notes`].
    pub fn note_rejected(&self, path: PathBuf, why: String) {
        self.rejected
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(path, why);
    }

    /// How many orphaned temporary files opening the cache removed.
    pub fn orphans_removed(&self) -> usize {
        self.orphans_removed
    }

    /// What a user should know about this cache after a run: rejected
    /// entries and removed orphans, one line each.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        let rejected = self.rejected();
        if let Some((path, why)) = rejected.first() {
            notes.push(format!(
                "proof cache {}: {} entr{} rejected (not a proof of its query; ignored, the queries solved again), e.g. {}: {why}",
                self.dir.display(),
                rejected.len(),
                if rejected.len() == 1 { "y" } else { "ies" },
                path.display()
            ));
        }
        if self.orphans_removed > 0 {
            notes.push(format!(
                "proof cache {}: removed {} left by an interrupted run",
                self.dir.display(),
                engine::print::count(self.orphans_removed, "temporary file")
            ));
        }
        notes
    }

    /// Records a proof of `q` (of `rule`), atomically: a temporary file
    /// renamed into place, replacing whatever was there.
    pub fn record_proof(&self, q: &Query, rule: &str, solver: SolverKind) {
        static SERIAL: AtomicU64 = AtomicU64::new(0);
        let path = self.path(q);
        let Some(parent) = path.parent() else { return };
        if std::fs::create_dir_all(parent).is_err() {
            return;
        }
        let line = serde_json::to_string(&Entry::of(q, rule, solver)).expect("serializable") + "\n";
        let tmp = parent.join(format!(
            ".{}.{}.{}",
            q.key,
            std::process::id(),
            SERIAL.fetch_add(1, Ordering::Relaxed)
        ));
        if std::fs::write(&tmp, line).is_err() {
            let _ = std::fs::remove_file(&tmp);
            return;
        }
        // A rename cannot replace a directory; an empty one (a forgery or
        // debris) goes first.
        if path.is_dir() {
            let _ = std::fs::remove_dir(&path);
        }
        if std::fs::rename(&tmp, &path).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
}

/// Removes the temporary files (`.KEY.PID.N`) older than `age` in the
/// cache's subdirectories; returns how many.
fn remove_orphans(dir: &Path, age: Duration) -> usize {
    let Ok(subdirs) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for sub in subdirs.flatten() {
        let is_shard = sub.file_name().len() == 2 && sub.file_type().is_ok_and(|t| t.is_dir());
        if !is_shard {
            continue;
        }
        let Ok(files) = std::fs::read_dir(sub.path()) else {
            continue;
        };
        for f in files.flatten() {
            let orphan = is_temp_name(&f.file_name().to_string_lossy())
                && f.metadata().is_ok_and(|m| {
                    m.is_file()
                        && m.modified()
                            .is_ok_and(|t| t.elapsed().is_ok_and(|e| e > age))
                });
            if orphan && std::fs::remove_file(f.path()).is_ok() {
                removed += 1;
            }
        }
    }
    removed
}

/// Whether a file name is one of [`Cache::record_proof`]'s temporary
/// names: `.`, 64 hex digits, then `.`-separated numbers (`.KEY.PID` of
/// older versions, `.KEY.PID.N` now).
fn is_temp_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix('.') else {
        return false;
    };
    let (key, tail) = rest.split_at_checked(64).unwrap_or((rest, ""));
    key.len() == 64
        && key.bytes().all(|b| b.is_ascii_hexdigit())
        && tail.starts_with('.')
        && tail[1..]
            .split('.')
            .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "tileproof-cache-test-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    fn query() -> Query {
        Query::new("Int/8", &["(> x 0)", "(< x 0)"])
    }

    #[test]
    fn a_recorded_proof_is_read_back() {
        let dir = scratch("roundtrip");
        let cache = Cache::new(&dir);
        let q = query();
        assert!(!cache.is_proved(&q));
        cache.record_proof(&q, "r", SolverKind::Z3);
        assert!(cache.is_proved(&q));
        assert!(cache.rejected().is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn forged_or_foreign_entries_are_rejected_with_a_reason() {
        let dir = scratch("forged");
        let cache = Cache::new(&dir);
        let q = query();
        let other = Query::new("Int/8", &["(> x 0)", "(< x 1)"]);
        let path = cache.path(&q);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let entry_of_other =
            serde_json::to_string(&Entry::of(&other, "r", SolverKind::Z3)).unwrap();
        let wrong_key = entry_of_other.replace(&other.key, &q.key);
        let cases: [(&str, &str); 4] = [
            ("", "empty"),
            ("proved\n", "not a cache entry"),
            (&entry_of_other, "its key is"),
            (&wrong_key, "its digest is"),
        ];
        for (text, why) in cases {
            std::fs::write(&path, text).unwrap();
            assert!(!cache.is_proved(&q), "{text:?} passed as a proof");
            let rejected = cache.rejected();
            assert_eq!(rejected.len(), 1);
            assert!(
                rejected[0].1.starts_with(why),
                "{text:?}: {}",
                rejected[0].1
            );
        }
        std::fs::write(&path, " ".repeat(70_000)).unwrap();
        assert!(!cache.is_proved(&q));
        assert!(cache.rejected()[0].1.ends_with("too large for an entry"));
        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir(&path).unwrap();
        assert!(!cache.is_proved(&q));
        assert_eq!(cache.rejected()[0].1, "not a regular file");
        // A proof replaces the forgery.
        cache.record_proof(&q, "r", SolverKind::Z3);
        assert!(cache.is_proved(&q));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn old_temporary_files_are_removed_on_opening_and_young_ones_kept() {
        let dir = scratch("orphans");
        let key = query().key;
        let shard = dir.join(&key[..2]);
        std::fs::create_dir_all(&shard).unwrap();
        let old = shard.join(format!(".{key}.4242"));
        let young = shard.join(format!(".{key}.4243.0"));
        let other = shard.join(".keep");
        for f in [&old, &young, &other] {
            std::fs::write(f, "x").unwrap();
        }
        let hour_ago = std::time::SystemTime::now() - Duration::from_secs(3600);
        for f in [&old, &other] {
            std::fs::File::options()
                .write(true)
                .open(f)
                .unwrap()
                .set_modified(hour_ago)
                .unwrap();
        }
        let cache = Cache::new(&dir);
        assert_eq!(cache.orphans_removed(), 1);
        assert!(!old.exists() && young.exists() && other.exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
