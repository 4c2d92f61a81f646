//! Answers to `apply` and `stage` requests, remembered by request; and the
//! wire forms of the cases asked about lately, by case.
//!
//! Blaming a finding asks the peer for its rules alone on the finding's
//! nodes, and a campaign meets the same small instances again and again
//! (`r0 * -1`, `x % 3` under a rule of its group): a 40-second Morok
//! campaign sent 28,620 `apply` requests, of which 12,783 were distinct.
//! A rule applied alone answers the same to the same request, so the
//! second is read from here rather than sent. Only well-formed answers are
//! kept, as read (typed, not as their line): a hang, a crash or garbage is
//! asked again (a peer may fail that way only under load), and the answer
//! is built into each caller's graph anew. The memo holds answers whose
//! lines and requests total at most 16 MiB.

use super::codec::{wire, Wire};
use engine::ir::{Graph, NodeId};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use tileproof_adapter::Reply;

/// Bytes of requests and answers remembered, at most: then the memo starts
/// over (a campaign's repeats are near one another; its rule-alone
/// requests are a few hundred bytes, 4 KB at most in a Morok campaign).
const MAX_BYTES: usize = 16 << 20;

/// An entry's bytes beyond its lines (the map's own share, roughly).
const ENTRY_OVERHEAD: usize = 64;

/// A request and answer longer than this together are not remembered.
const MAX_ENTRY_BYTES: usize = MAX_BYTES / 64;

/// The answer to each request (its line past its id), with the bytes
/// the entry stands for; and their total.
type Answers = (HashMap<String, (Reply, usize)>, usize);

/// The memo's answers, behind a lock (see [`Answers`]).
#[derive(Default)]
pub(super) struct Memo {
    answers: Mutex<Answers>,
}

impl Memo {
    /// The answer to `request`, when it was asked before.
    pub(super) fn get(&self, request: &str) -> Option<Reply> {
        lock(&self.answers).0.get(request).map(|(r, _)| r.clone())
    }

    /// Remembers `answer` (read from a line of `line_bytes`) for `request`.
    pub(super) fn put(&self, request: String, answer: Reply, line_bytes: usize) {
        let size = request.len() + line_bytes + ENTRY_OVERHEAD;
        if size > MAX_ENTRY_BYTES {
            return;
        }
        let mut guard = lock(&self.answers);
        let (m, bytes) = &mut *guard;
        if *bytes + size > MAX_BYTES {
            m.clear();
            *bytes = 0;
        }
        if let Some((_, old)) = m.insert(request, (answer, size)) {
            *bytes -= old;
        }
        *bytes += size;
    }
}

/// Bytes of wire forms kept, at most: then the oldest are let go. A kept
/// case is asked about again after its shrink has judged every candidate
/// of its last round (each a case of its own, with its instances), and
/// the other worker's cases come in between.
const CASES_BYTES: usize = 16 << 20;

/// The wire forms of the cases asked about lately, each made once: the
/// protocol is stateless, so every request carries its case, and a case
/// asked about again (its runs on each backend after its answer, each
/// rule alone at an instance, each on a clone of the instance's graph) is
/// spliced in, not walked, printed and serialized again. A case is its
/// roots and the graph that first held them ([`Graph::holder`]): a graph
/// only grows, so a node it holds means the same as long as it lives, and
/// in each of its clones.
pub(super) struct Cases {
    recent: Mutex<Recent>,
    /// [`CASES_BYTES`], but in tests.
    budget: usize,
}

impl Default for Cases {
    fn default() -> Cases {
        Cases::within(CASES_BYTES)
    }
}

/// A case: its holder ([`Graph::holder`]) and its roots.
type CaseKey = (u64, Vec<NodeId>);

/// Cases given with their expressions printed ([`Cases::printed`]) kept
/// until their first request, at most: each worker gives one just before
/// it asks about it.
const PRINTED_CASES: usize = 64;

/// The wire forms kept, the order they came in, and their bytes; and the
/// expressions of the cases given printed that no request has asked about
/// yet, oldest first.
#[derive(Default)]
struct Recent {
    wires: HashMap<CaseKey, Arc<Wire>>,
    order: VecDeque<CaseKey>,
    bytes: usize,
    printed: VecDeque<(CaseKey, Vec<String>)>,
}

impl Cases {
    /// Keeping at most `budget` bytes of wire forms.
    fn within(budget: usize) -> Cases {
        Cases {
            recent: Mutex::default(),
            budget,
        }
    }

    /// Case `roots` of `g` is written `exprs` (one per root, as the
    /// printer writes it): its wire form, when first made, takes them
    /// rather than print them again.
    pub(super) fn printed(&self, g: &Graph, roots: &[NodeId], exprs: Vec<String>) {
        let key = (g.holder(roots), roots.to_vec());
        let mut r = lock(&self.recent);
        if r.wires.contains_key(&key) {
            return;
        }
        if r.printed.len() == PRINTED_CASES {
            r.printed.pop_front();
        }
        r.printed.push_back((key, exprs));
    }

    /// The wire form of `roots` of `g`.
    pub(super) fn of(&self, g: &Graph, roots: &[NodeId]) -> Arc<Wire> {
        let key = (g.holder(roots), roots.to_vec());
        let printed = {
            let mut r = lock(&self.recent);
            if let Some(w) = r.wires.get(&key) {
                return w.clone();
            }
            let given = r.printed.iter().position(|(k, _)| *k == key);
            given
                .and_then(|i| r.printed.remove(i))
                .map(|(_, exprs)| exprs)
        };
        let w = Arc::new(wire(g, roots, printed));
        let size = w.bytes() + ENTRY_OVERHEAD;
        // One case may take a 64th of the budget (as an answer in `Memo`).
        if size > self.budget / 64 {
            return w;
        }
        let mut r = lock(&self.recent);
        while r.bytes + size > self.budget {
            let Some(old) = r.order.pop_front() else {
                break;
            };
            if let Some(gone) = r.wires.remove(&old) {
                r.bytes -= gone.bytes() + ENTRY_OVERHEAD;
            }
        }
        if r.wires.insert(key.clone(), w.clone()).is_none() {
            r.order.push_back(key);
            r.bytes += size;
        }
        w
    }
}

/// `m` locked, taken as it is when a holder panicked: each of the memo's
/// locks guards a whole map that a panic does not leave half written.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tileproof_adapter::Request;

    #[test]
    fn a_case_asked_about_again_is_spliced_from_its_first_wire_form() {
        let p = engine::parse::parse_program("var x in [0, 3]\nexpr x + 1\nexpr x * 2\n").unwrap();
        let mut g = p.graph;
        let cases = Cases::default();
        let first = cases.of(&g, &p.outputs);
        // The graph grows (an answer built into it): the case is the same.
        g.cnst(99, engine::ir::DType::Index);
        assert!(Arc::ptr_eq(&first, &cases.of(&g, &p.outputs)));
        // So is it in a clone; other roots are another case, and so are
        // the same node ids in another graph.
        assert!(Arc::ptr_eq(&first, &cases.of(&g.clone(), &p.outputs)));
        assert!(!Arc::ptr_eq(&first, &cases.of(&g, &p.outputs[..1])));
        let other =
            engine::parse::parse_program("var y in [0, 5]\nexpr y + 1\nexpr y * 2\n").unwrap();
        assert_eq!(other.outputs, p.outputs);
        assert!(!Arc::ptr_eq(
            &first,
            &cases.of(&other.graph, &other.outputs)
        ));
    }

    #[test]
    fn a_case_given_printed_is_encoded_with_its_expressions_at_its_first_request() {
        let p = engine::parse::parse_program("var x in [0, 3]\nexpr x + 1\nexpr x * 2\n").unwrap();
        let cases = Cases::default();
        // Expressions no printer writes, to see which are taken.
        cases.printed(&p.graph, &p.outputs, vec!["a".into(), "b".into()]);
        let fields = |w: &Wire| super::super::codec::line_about(w, &Request::default());
        let first = cases.of(&p.graph.clone(), &p.outputs);
        assert!(fields(&first).contains(r#""exprs":["a","b"]"#));
        assert!(lock(&cases.recent).printed.is_empty());
        // Another case of the same graph is printed.
        let one = cases.of(&p.graph, &p.outputs[..1]);
        assert_eq!(fields(&one), fields(&wire(&p.graph, &p.outputs[..1], None)));
        // Past as many cases as are kept printed, the oldest is printed anew.
        let q = engine::parse::parse_program("var y in [0, 3]\nexpr y - 1\n").unwrap();
        cases.printed(&q.graph, &q.outputs, vec!["c".into()]);
        for _ in 0..PRINTED_CASES {
            let r = engine::parse::parse_program("var z in [0, 3]\nexpr z\n").unwrap();
            cases.printed(&r.graph, &r.outputs, vec!["d".into()]);
        }
        let q_wire = cases.of(&q.graph, &q.outputs);
        assert_eq!(fields(&q_wire), fields(&wire(&q.graph, &q.outputs, None)));
    }

    #[test]
    fn past_its_bytes_the_oldest_case_is_encoded_again() {
        // Cases of one size: variables named alike.
        let case = |i: usize| {
            engine::parse::parse_program(&format!("var v{i:04} in [0, 5]\nexpr v{i:04} + 1\n"))
                .unwrap()
        };
        let first = case(0);
        let one = wire(&first.graph, &first.outputs, None).bytes() + ENTRY_OVERHEAD;
        let cases = Cases::within(64 * one);
        let kept = cases.of(&first.graph, &first.outputs);
        let others: Vec<_> = (1..=64).map(case).collect();
        for o in &others[..63] {
            cases.of(&o.graph, &o.outputs);
        }
        // 64 cases fill the budget: the first is still there.
        assert!(Arc::ptr_eq(&kept, &cases.of(&first.graph, &first.outputs)));
        cases.of(&others[63].graph, &others[63].outputs);
        assert!(!Arc::ptr_eq(&kept, &cases.of(&first.graph, &first.outputs)));
        assert!(lock(&cases.recent).bytes <= 64 * one);
    }

    fn declined(why: &str) -> Reply {
        Reply {
            declined: Some(why.to_string()),
            ..Reply::default()
        }
    }

    #[test]
    fn a_remembered_answer_is_returned_for_its_request_alone() {
        let m = Memo::default();
        assert_eq!(m.get("req"), None);
        m.put("req".into(), declined("no"), 20);
        assert_eq!(m.get("req"), Some(declined("no")));
        assert_eq!(m.get("other"), None);
    }

    #[test]
    fn a_full_memo_starts_over_rather_than_growing() {
        let m = Memo::default();
        // Each entry: a 7-byte request, a 1000-byte line, the overhead.
        let mut i = 0;
        while lock(&m.answers).1 + 7 + 1000 + ENTRY_OVERHEAD <= MAX_BYTES {
            m.put(format!("r{i:06}"), declined("no"), 1000);
            i += 1;
        }
        assert!(m.get("r000000").is_some());
        m.put("zzlast0".into(), declined("no"), 1000);
        assert_eq!(m.get("r000000"), None);
        assert!(m.get("zzlast0").is_some());
        assert_eq!(lock(&m.answers).0.len(), 1);
        assert!(lock(&m.answers).1 <= MAX_BYTES);
    }

    #[test]
    fn an_answer_too_long_to_keep_is_asked_again() {
        let m = Memo::default();
        m.put("req".into(), declined("no"), MAX_ENTRY_BYTES);
        assert_eq!(m.get("req"), None);
    }
}
