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

use std::collections::HashMap;
use std::sync::Mutex;

/// Requests remembered, at most: then the memo starts over (a campaign's
/// repeats are near one another).
const MAX_ENTRIES: usize = 16_384;

/// The answer line to each request line (sent with id 0), and the id it
/// answered.
#[derive(Default)]
pub(super) struct Memo {
    answers: Mutex<HashMap<String, (u64, String)>>,
}

impl Memo {
    /// The answer to `request`, when it was asked before: its line and the
    /// id it carries.
    pub(super) fn get(&self, request: &str) -> Option<(u64, String)> {
        self.lock().get(request).cloned()
    }

    /// Remembers `answer` (to the request with id `id`) for `request`.
    pub(super) fn put(&self, request: String, id: u64, answer: String) {
        let mut m = self.lock();
        if m.len() >= MAX_ENTRIES {
            m.clear();
        }
        m.insert(request, (id, answer));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (u64, String)>> {
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
        for i in 0..MAX_ENTRIES {
            m.put(format!("r{i}"), i as u64, String::new());
        }
        m.put("last".into(), 0, String::new());
        assert_eq!(m.get("r0"), None);
        assert!(m.get("last").is_some());
        assert_eq!(m.lock().len(), 1);
    }
}
