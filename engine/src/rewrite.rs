//! The rewriter: bottom-up to a fixed point, with a hard cap.
//!
//! Children are simplified before their parent; at each node the rule
//! groups are tried in order (first match wins), and whatever a rule
//! produces is simplified again, until no rule applies. Results are
//! memoized per node, so a shared subterm is simplified once and the result
//! is a fixed point: no rule applies anywhere in it.
//!
//! After the declarative groups, the algorithmic division rules of
//! [`crate::divmod`] (`fold_divmod_general`'s eight sub-rules) are tried at
//! every division node; their firings are recorded like declarative ones,
//! under the sub-rule's name (after the declarative names in
//! [`Simplifier::rule_names`]).
//!
//! The cap bounds the total number of firings of one call. Hitting it is an
//! error naming the rules that kept firing; the rewriter never returns a
//! half-simplified result as if it were done.

use crate::dtype::Width;
use crate::ir::{Graph, NodeId};
use crate::rules::RuleSet;
use rustc_hash::FxHashMap;
use std::collections::VecDeque;
use std::fmt;

/// One rule application.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Firing {
    /// Index into [`Simplifier::rule_names`].
    pub rule: usize,
    pub before: NodeId,
    pub after: NodeId,
}

/// What a simplification produced.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    pub roots: Vec<NodeId>,
    /// Firings per rule, indexed like [`Simplifier::rule_names`].
    pub counts: Vec<usize>,
    /// Every firing in order, when tracing was asked for.
    pub trace: Vec<Firing>,
}

impl Outcome {
    /// `(rule name, count)` for every rule that fired, most frequent first.
    pub fn fired<'a>(&self, s: &'a Simplifier) -> Vec<(&'a str, usize)> {
        let mut v: Vec<(&str, usize)> = self
            .counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| (s.rule_names()[i].as_str(), c))
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        v
    }

    pub fn total_firings(&self) -> usize {
        self.counts.iter().sum()
    }
}

/// The rewriter hit its cap: some rules keep rewriting each other's output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CapError {
    pub cap: usize,
    /// The rules that fired most among the last firings, with counts.
    pub looping: Vec<(String, usize)>,
}

impl fmt::Display for CapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "rewriter hit its cap of {} firings; rules that kept firing:",
            self.cap
        )?;
        for (name, n) in &self.looping {
            write!(f, " {name} ({n}x)")?;
        }
        Ok(())
    }
}

impl std::error::Error for CapError {}

/// Rules to apply, with dispatch tables by root op.
pub struct Simplifier<'r> {
    rules: &'r RuleSet,
    names: Vec<String>,
    /// Per group: rule indices (into `flat`) by root op (its position in
    /// the op table), and the rules whose left side is a bare variable
    /// (tried on every node).
    dispatch: Vec<(Vec<Vec<usize>>, Vec<usize>)>,
    flat: Vec<(usize, usize)>,
    /// Maximum firings per call.
    pub cap: usize,
    /// Also run the algorithmic rules ([`crate::divmod`]) after the
    /// declarative groups. On by default.
    pub algorithmic: bool,
    /// Number of declarative rules: algorithmic rule `i` is recorded as
    /// `declarative + i`.
    declarative: usize,
    /// The width `index` has where the result will run: guards, bounds and
    /// computed constants are judged at it, as the proofs at that width
    /// assume. 64 unless the target's index is narrower.
    pub width: Width,
}

/// How many firings one simplification may take before it is declared
/// non-terminating.
pub const DEFAULT_CAP: usize = 100_000;

/// How many of the most recent firings a cap error looks at.
const CAP_WINDOW: usize = 1_000;

impl<'r> Simplifier<'r> {
    pub fn new(rules: &'r RuleSet) -> Simplifier<'r> {
        let mut names = Vec::new();
        let mut flat = Vec::new();
        let mut dispatch = Vec::new();
        for (gi, group) in rules.groups.iter().enumerate() {
            let mut by_op: Vec<Vec<usize>> = vec![Vec::new(); crate::op::OPS.len()];
            let mut any = Vec::new();
            for (ri, rule) in group.rules.iter().enumerate() {
                let idx = flat.len();
                flat.push((gi, ri));
                names.push(rule.name.clone());
                match rule.root_op() {
                    Some(op) => by_op[op.index()].push(idx),
                    None => any.push(idx),
                }
            }
            dispatch.push((by_op, any));
        }
        let declarative = names.len();
        names.extend(crate::divmod::RULES.iter().map(|s| s.to_string()));
        Simplifier {
            rules,
            names,
            dispatch,
            flat,
            cap: DEFAULT_CAP,
            algorithmic: true,
            declarative,
            width: Width::W64,
        }
    }

    /// Rule names, indexed like [`Firing::rule`] and [`Outcome::counts`].
    pub fn rule_names(&self) -> &[String] {
        &self.names
    }

    /// Simplifies `roots`. With `trace`, every firing is recorded.
    pub fn simplify(
        &self,
        g: &mut Graph,
        roots: &[NodeId],
        trace: bool,
    ) -> Result<Outcome, CapError> {
        let mut run = Run {
            s: self,
            memo: FxHashMap::default(),
            out: Outcome {
                roots: Vec::new(),
                counts: vec![0; self.names.len()],
                trace: Vec::new(),
            },
            recent: VecDeque::new(),
            trace,
            fired: 0,
        };
        let mut new_roots = Vec::with_capacity(roots.len());
        for &r in roots {
            new_roots.push(run.rewrite(g, r)?);
        }
        run.out.roots = new_roots;
        Ok(run.out)
    }

    /// The first rule (in group order) that fires at `n`, and its result.
    fn first_match(&self, g: &mut Graph, n: NodeId) -> Option<(usize, NodeId)> {
        let op = g.node(n).op;
        let key = op.index();
        for (by_op, any) in &self.dispatch {
            let candidates = by_op[key].as_slice();
            // Keep file order across the two lists.
            let mut i = 0;
            let mut j = 0;
            while i < candidates.len() || j < any.len() {
                let take_any = j < any.len() && (i == candidates.len() || any[j] < candidates[i]);
                let idx = if take_any {
                    j += 1;
                    any[j - 1]
                } else {
                    i += 1;
                    candidates[i - 1]
                };
                let (gi, ri) = self.flat[idx];
                let rule = &self.rules.groups[gi].rules[ri];
                if let Some(out) = rule.apply_at(g, n, self.width) {
                    if out != n {
                        return Some((idx, out));
                    }
                }
            }
        }
        if self.algorithmic && op.is_divmod() {
            if let Some((i, out)) = crate::divmod::fold_divmod_general(g, n, self.width) {
                return Some((self.declarative + i, out));
            }
        }
        None
    }
}

struct Run<'s, 'r> {
    s: &'s Simplifier<'r>,
    memo: FxHashMap<NodeId, NodeId>,
    out: Outcome,
    recent: VecDeque<usize>,
    trace: bool,
    fired: usize,
}

impl Run<'_, '_> {
    fn rewrite(&mut self, g: &mut Graph, n: NodeId) -> Result<NodeId, CapError> {
        if let Some(&r) = self.memo.get(&n) {
            return Ok(r);
        }
        let mut cur = self.rebuild(g, n)?;
        while let Some((rule, next)) = self.s.first_match(g, cur) {
            self.record(rule, cur, next)?;
            cur = self.rebuild(g, next)?;
        }
        self.memo.insert(n, cur);
        self.memo.insert(cur, cur);
        Ok(cur)
    }

    /// `n` with its operands simplified.
    fn rebuild(&mut self, g: &mut Graph, n: NodeId) -> Result<NodeId, CapError> {
        let src: Vec<NodeId> = g.node(n).src().to_vec();
        if src.is_empty() {
            return Ok(n);
        }
        let mut new = Vec::with_capacity(src.len());
        for s in src {
            new.push(self.rewrite(g, s)?);
        }
        Ok(g.with_src(n, &new))
    }

    fn record(&mut self, rule: usize, before: NodeId, after: NodeId) -> Result<(), CapError> {
        self.out.counts[rule] += 1;
        self.fired += 1;
        if self.trace {
            self.out.trace.push(Firing {
                rule,
                before,
                after,
            });
        }
        if self.recent.len() == CAP_WINDOW {
            self.recent.pop_front();
        }
        self.recent.push_back(rule);
        if self.fired > self.s.cap {
            let mut counts: FxHashMap<usize, usize> = FxHashMap::default();
            for &r in &self.recent {
                *counts.entry(r).or_default() += 1;
            }
            let mut looping: Vec<(String, usize)> = counts
                .into_iter()
                .map(|(r, c)| (self.s.names[r].clone(), c))
                .collect();
            looping.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            return Err(CapError {
                cap: self.s.cap,
                looping,
            });
        }
        Ok(())
    }
}
