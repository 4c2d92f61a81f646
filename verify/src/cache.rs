//! The proof cache: a proof is stored under a hash of the exact query text
//! (premise and failure conditions, in SMT-LIB), the encoding mode and
//! width, and the Z3 version, so that any change to a rule, the encoding or
//! the solver misses the cache. Only proofs are cached: failures are
//! recomputed so that their counterexamples are current.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Bump when the meaning of a cached entry changes.
const FORMAT: &str = "tileproof-proof-cache-v1";

/// A directory of cached proofs.
#[derive(Clone, Debug)]
pub struct Cache {
    dir: PathBuf,
}

impl Cache {
    pub fn new(dir: impl Into<PathBuf>) -> Cache {
        Cache { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The key of a query.
    pub fn key(parts: &[&str]) -> String {
        let mut h = Sha256::new();
        h.update(FORMAT.as_bytes());
        h.update(z3::full_version().as_bytes());
        for p in parts {
            h.update((p.len() as u64).to_le_bytes());
            h.update(p.as_bytes());
        }
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(&key[..2]).join(format!("{key}.proved"))
    }

    /// Whether this query is known proved.
    pub fn is_proved(&self, key: &str) -> bool {
        self.path(key).exists()
    }

    /// Records a proof (atomically: a temporary file renamed into place).
    pub fn record_proof(&self, key: &str, note: &str) {
        let path = self.path(key);
        let Some(parent) = path.parent() else { return };
        if std::fs::create_dir_all(parent).is_err() {
            return;
        }
        let tmp = parent.join(format!(".{key}.{}", std::process::id()));
        if std::fs::write(&tmp, note).is_ok() {
            let _ = std::fs::rename(&tmp, &path);
        }
    }
}
