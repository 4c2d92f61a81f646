//! Answers to `apply` and `stage` requests, remembered by request.
//!
//! Blaming a finding asks the peer for its rules alone on the finding's
//! nodes, and a campaign meets the same small instances again and again
//! (`r0 * -1`, `x % 3` under a rule of its group): a 40-second Morok
//! campaign sent 28,620 `apply` requests, of which 12,783 were distinct.
//! A rule applied alone answers the same to the same request, so the
//! second is read from here rather than sent. Only answer lines are kept:
//! a hang, a crash or garbage is asked again (a peer may fail that way
//! only under load), and the answer is read into each caller's graph anew.
//! The memo holds at most 16 MiB of lines.

use std::collections::HashMap;
use std::sync::Mutex;

/// Bytes of requests and answers remembered, at most: then the memo starts
/// over (a campaign's repeats are near one another; its rule-alone
/// requests are a few hundred bytes, 4 KB at most in a Morok campaign).
const MAX_BYTES: usize = 16 << 20;

/// An entry's bytes beyond its lines (the map's own share, roughly).
const ENTRY_OVERHEAD: usize = 64;

/// A request and answer longer than this together are not remembered.
const MAX_ENTRY_BYTES: usize = MAX_BYTES / 64;

/// The answer line to each request line (sent with id 0), and the id it
/// answered; and the bytes they take.
#[derive(Default)]
pub(super) struct Memo {
    answers: Mutex<(HashMap<String, (u64, String)>, usize)>,
}

impl Memo {
    /// The answer to `request`, when it was asked before: its line and the
    /// id it carries.
    pub(super) fn get(&self, request: &str) -> Option<(u64, String)> {
        self.lock().0.get(request).cloned()
    }

    /// Remembers `answer` (to the request with id `id`) for `request`.
    pub(super) fn put(&self, request: String, id: u64, answer: String) {
        let key = request.len();
        let size = key + answer.len() + ENTRY_OVERHEAD;
        if size > MAX_ENTRY_BYTES {
            return;
        }
        let mut guard = self.lock();
        let (m, bytes) = &mut *guard;
        if *bytes + size > MAX_BYTES {
            m.clear();
            *bytes = 0;
        }
        if let Some((_, old)) = m.insert(request, (id, answer)) {
            *bytes -= key + old.len() + ENTRY_OVERHEAD;
        }
        *bytes += size;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (HashMap<String, (u64, String)>, usize)> {
        self.answers.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remembered_answer_is_returned_with_the_id_it_answered() {
        let m = Memo::default();
        assert_eq!(m.get("req"), None);
        m.put("req".into(), 7, "answer".into());
        assert_eq!(m.get("req"), Some((7, "answer".to_string())));
        assert_eq!(m.get("other"), None);
    }

    #[test]
    fn a_full_memo_starts_over_rather_than_growing() {
        let m = Memo::default();
        let answer = "a".repeat(1000);
        let mut i = 0;
        // Each entry: a 7-byte request, a 1000-byte answer, the overhead.
        while m.lock().1 + 7 + 1000 + ENTRY_OVERHEAD <= MAX_BYTES {
            m.put(format!("r{i:06}"), i, answer.clone());
            i += 1;
        }
        assert!(m.get("r000000").is_some());
        m.put("zzlast0".into(), 0, answer.clone());
        assert_eq!(m.get("r000000"), None);
        assert!(m.get("zzlast0").is_some());
        assert_eq!(m.lock().0.len(), 1);
        assert!(m.lock().1 <= MAX_BYTES);
    }

    #[test]
    fn an_answer_too_long_to_keep_is_asked_again() {
        let m = Memo::default();
        m.put("req".into(), 1, "a".repeat(MAX_ENTRY_BYTES));
        assert_eq!(m.get("req"), None);
    }
}
