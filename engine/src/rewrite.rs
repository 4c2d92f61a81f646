//! The rewriter: bottom-up to a fixed point, with a hard cap.
//!
//! Children are simplified before their parent; at each node the rule
//! groups are tried in order (first match wins), and whatever a rule
//! produces is simplified again, until no rule applies. Results are
//! memoized per node, so a shared subterm is simplified once and the result
//! is a fixed point: no rule applies anywhere in it.
//!
//! After the declarative groups come the algorithmic passes, in the order
//! of their registry ([`crate::passes::PASSES`]), each where its row says
//! it applies. Their firings are recorded like declarative ones, under the
//! sub-rule's name (after the declarative names in
//! [`Simplifier::rule_names`]), so that the gate validates each one.
//!
//! **Roots of chains.** A sum is read into its linear form whole, at its
//! root: the outermost `+ - *` (or negation) of an `index` expression, the
//! one whose parent is not itself a sum, product or negation (or that is a
//! root of the call). Its inner sums are simplified by the declarative
//! rules only; the root's normalization then rewrites the whole sum at
//! once. That is what keeps a sum of N terms linear: normalizing every
//! partial sum of a chain would read N partial forms of up to N terms
//! each. Chains of `&&`, `||`, `min` and `max` are read whole at their root
//! the same way. A node is memoized per context (root or inner), since it
//! may be both.
//!
//! **Iterative.** The traversal keeps its own stack, so the size of an
//! expression is not limited by the thread's stack.
//!
//! The cap bounds the total number of firings of one call. Hitting it is an
//! error naming the cycle (the rules of the window the last firings
//! repeat, in order) and the rules that kept firing; the rewriter never
//! returns a half-simplified result as if it were done.

use crate::algebra::linear::is_linear_op;
use crate::ir::dtype::DType;
use crate::ir::dtype::Width;
use crate::ir::{Graph, NodeId, Op};
use crate::passes::{Pass, PASSES};
use crate::rules::ast::{Pat, Ty};
use crate::rules::guard::{range_at, requires_one_value};
use crate::rules::matching::Matcher;
use crate::rules::shape::{Shape, Site, KIND_PAIRS};
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
    /// `(rule, firings)` for every rule that fired (`rule` indexed like
    /// [`Simplifier::rule_names`]), in the order each first fired. Sparse:
    /// most calls fire a few rules, and a zeroed count per rule was a
    /// tenth of a small call's time ([`Outcome::dense_counts`] for the
    /// table).
    pub counts: Vec<(usize, usize)>,
    /// Every firing in order, when tracing was asked for.
    pub trace: Vec<Firing>,
}

impl Outcome {
    /// `(rule name, count)` for every rule that fired, most frequent first.
    pub fn fired<'a>(&self, s: &'a Simplifier) -> Vec<(&'a str, usize)> {
        let mut v: Vec<(&str, usize)> = self
            .counts
            .iter()
            .map(|&(i, c)| (s.rule_names()[i].as_str(), c))
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        v
    }

    pub fn total_firings(&self) -> usize {
        self.counts.iter().map(|&(_, c)| c).sum()
    }

    /// Firings per rule of `rules` (indexed like
    /// [`Simplifier::rule_names`]); empty when no rule fired.
    pub fn dense_counts(&self, rules: usize) -> Vec<usize> {
        if self.counts.is_empty() {
            return Vec::new();
        }
        let mut dense = vec![0; rules];
        for &(r, c) in &self.counts {
            dense[r] += c;
        }
        dense
    }
}

/// The rewriter hit its cap: some rules keep rewriting each other's output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CapError {
    pub cap: usize,
    /// The cycle: the rules of the window the last firings repeat, in the
    /// order they fire (empty when the last firings do not repeat one).
    pub cycle: Vec<String>,
    /// The rules that fired most among the last firings, with counts.
    pub looping: Vec<(String, usize)>,
}

impl fmt::Display for CapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rewriter hit its cap of {} firings", self.cap)?;
        if !self.cycle.is_empty() {
            write!(f, ", repeating the cycle {}", self.cycle.join(" -> "))?;
        }
        write!(f, "; rules that kept firing:")?;
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
    /// Per root op (its position in the op table) and kinds of its first
    /// two operands ([`Site::kinds`]; at `op * KIND_PAIRS + kinds`): the
    /// rules that may match such a node (those of that root op whose
    /// operand patterns admit those kinds, and those whose left side is a
    /// bare variable), in group order and file order within a group, each
    /// with its index into `flat` and its shape. One list per op and kinds,
    /// not one per group: the first match wins either way; a rule left out
    /// of a list is one whose shape refuses every node it stands for.
    dispatch: Vec<Vec<(usize, Shape)>>,
    /// Per op (its position in the op table): a leaf of that op no rule
    /// can match (its dispatch lists are empty; no pass reads a leaf), so
    /// an operand that is one is its own result, not visited (a constant,
    /// with the built-in rules).
    fixed_leaf: Vec<bool>,
    /// Per op and dtype (at `op * DType::ALL.len() + dtype`): a leaf of
    /// that op and dtype that only rules asking `vmin(x) == vmax(x)` of it
    /// may match (`int_decided`, with the built-in rules): one whose range
    /// at the width has two values or more is its own result, not visited
    /// (most variables).
    one_value_leaf: Vec<bool>,
    flat: Vec<(usize, usize)>,
    /// Per rule (indexed like `flat`): its left side laid out for matching.
    matchers: Vec<Matcher>,
    /// Maximum firings per call, plus [`CAP_PER_NODE`] for every distinct
    /// node of the input.
    pub cap: usize,
    /// Also run the algorithmic passes ([`crate::passes`]) after the
    /// declarative groups. On by default.
    pub algorithmic: bool,
    /// Number of declarative rules: algorithmic rule `i` is recorded as
    /// `declarative + i`.
    declarative: usize,
    /// Per rule (indexed like `names`): its result is a canonical form,
    /// not taken twice at one node ([`crate::passes::Pass::canonicalizing`]).
    canonical: Vec<bool>,
    /// The algorithmic passes, in the order they are tried: the registry
    /// ([`PASSES`]), or another list (a test's).
    passes: &'r [Pass],
    /// The width `index` has where the result will run: guards, bounds and
    /// computed constants are judged at it, as the proofs at that width
    /// assume. 64 unless the target's index is narrower.
    pub width: Width,
}

/// How many firings one simplification may take before it is declared
/// non-terminating.
pub const DEFAULT_CAP: usize = 100_000;

/// Firings allowed per distinct input node on top of the cap: a legitimate
/// simplification does work in proportion to its input (one firing per link
/// of a chain is common), so a large generated kernel must not read as a
/// loop; a real loop still stops after a bounded number of firings.
pub const CAP_PER_NODE: usize = 8;

/// How many of the most recent firings a cap error looks at.
const CAP_WINDOW: usize = 1_000;

/// The longest cycle a cap error names.
const MAX_CYCLE: usize = 32;

/// The shortest window the last firings repeat (each of the last
/// firings, a few periods' worth, equals the one a period before it), in
/// firing order from its first rule in the set's order; empty when there
/// is none.
fn repeating_window(recent: &VecDeque<usize>) -> Vec<usize> {
    let n = recent.len();
    (1..=MAX_CYCLE.min(n / 4))
        .find(|&p| {
            let span = (4 * p).max(64).min(n);
            (n - span + p..n).all(|i| recent[i] == recent[i - p])
        })
        .map(|p| {
            // One rotation whichever firing the cap fell on: the window
            // starts at its first rule in the set's order.
            let mut w: Vec<usize> = recent.range(n - p..).copied().collect();
            let first = (0..p).min_by_key(|&i| w[i]).unwrap_or(0);
            w.rotate_left(first);
            w
        })
        .unwrap_or_default()
}

/// Whether `child`, an operand of `parent`, is read as part of its
/// parent's whole (an inner sum of a sum, a link of a `&&`, `||`, `min` or
/// `max` chain) rather than as a root of its own.
fn is_inner(parent: &crate::ir::Node, child: &crate::ir::Node) -> bool {
    (is_linear_op(parent.op, parent.dtype) && is_linear_op(child.op, child.dtype))
        || (matches!(parent.op, Op::And | Op::Or | Op::Min | Op::Max) && child.op == parent.op)
}

impl<'r> Simplifier<'r> {
    pub fn new(rules: &'r RuleSet) -> Simplifier<'r> {
        Simplifier::with_passes(rules, &PASSES)
    }

    /// The rewriter with `rules` and, after them, the algorithmic `passes`
    /// instead of the registry's (how a test builds a pass that loops).
    pub fn with_passes(rules: &'r RuleSet, passes: &'r [Pass]) -> Simplifier<'r> {
        let mut names = Vec::new();
        let mut flat = Vec::new();
        let mut matchers = Vec::new();
        let mut by_op: Vec<Vec<(usize, Shape)>> =
            vec![Vec::new(); crate::ir::op::OPS.len() * KIND_PAIRS];
        for (gi, group) in rules.groups.iter().enumerate() {
            for (ri, rule) in group.rules.iter().enumerate() {
                let idx = flat.len();
                flat.push((gi, ri));
                matchers.push(Matcher::of(rule));
                names.push(rule.name.clone());
                let shape = Shape::of(rule);
                let ops: Vec<usize> = match rule.root_op() {
                    Some(op) => vec![op.index()],
                    None => (0..crate::ir::op::OPS.len())
                        .filter(|&i| shape.admits_op(crate::ir::op::OPS[i].0))
                        .collect(),
                };
                for op in ops {
                    for kinds in (0..KIND_PAIRS).filter(|&k| shape.admits_kinds(k)) {
                        by_op[op * KIND_PAIRS + kinds].push((idx, shape.clone()));
                    }
                }
            }
        }
        let declarative = names.len();
        let fixed_leaf = crate::ir::op::OPS
            .iter()
            .map(|(op, _)| {
                let i = op.index() * KIND_PAIRS;
                op.arity() == 0 && by_op[i..i + KIND_PAIRS].iter().all(Vec::is_empty)
            })
            .collect::<Vec<bool>>();
        let one_value_leaf = crate::ir::op::OPS
            .iter()
            .flat_map(|(op, _)| DType::ALL.map(|d| (*op, d)))
            .map(|(op, d)| {
                let i = op.index() * KIND_PAIRS;
                op.arity() == 0
                    && by_op[i..i + KIND_PAIRS].iter().flatten().all(|(idx, _)| {
                        let (gi, ri) = flat[*idx];
                        let rule = &rules.groups[gi].rules[ri];
                        let Pat::Var(v) = rule.lhs else {
                            return false;
                        };
                        let var = &rule.vars[v];
                        // A rule whose variable cannot bind the leaf.
                        let binds = (!var.is_const || matches!(op, Op::Const(_)))
                            && !matches!(var.ty, Ty::Fixed(t) if t != d);
                        !binds
                            || rule
                                .guard
                                .as_ref()
                                .is_some_and(|g| requires_one_value(g, v))
                    })
            })
            .collect();
        let mut canonical = vec![false; declarative];
        for pass in passes {
            names.extend(pass.rules.iter().map(|s| s.to_string()));
            canonical.extend(pass.rules.iter().map(|_| pass.canonicalizing));
        }
        Simplifier {
            rules,
            names,
            dispatch: by_op,
            fixed_leaf,
            one_value_leaf,
            flat,
            matchers,
            cap: DEFAULT_CAP,
            algorithmic: true,
            declarative,
            canonical,
            passes,
            width: Width::W64,
        }
    }

    /// The pass algorithmic rule `rule` (indexed like
    /// [`Simplifier::rule_names`]) belongs to, and its index among the
    /// pass's rules.
    pub fn pass_of(&self, rule: usize) -> Option<(&'r Pass, usize)> {
        let mut base = self.declarative;
        for pass in self.passes {
            if rule < base + pass.rules.len() {
                return (rule >= base).then_some((pass, rule - base));
            }
            base += pass.rules.len();
        }
        None
    }

    /// Whether a firing of algorithmic rule `rule` from `before` to
    /// `after` (nodes of `g`) decreases what its pass says it does
    /// ([`crate::passes::Decreases`]); `None` for a declarative rule.
    pub fn check_decrease(
        &self,
        g: &mut Graph,
        rule: usize,
        before: NodeId,
        after: NodeId,
    ) -> Option<Result<(), String>> {
        let (pass, i) = self.pass_of(rule)?;
        let d = pass.decreases[i];
        Some(
            d.check(g, pass, before, after, self.width)
                .map_err(|why| format!("it states that it decreases {}, but {why}", d.name())),
        )
    }

    /// Rule names, indexed like [`Firing::rule`] and the rules of [`Outcome::counts`].
    pub fn rule_names(&self) -> &[String] {
        &self.names
    }

    /// Whether rule `rule` (indexed like [`Simplifier::rule_names`]) is an
    /// algorithmic pass's ([`crate::passes::PASSES`]), not a declarative
    /// rule's: its firings are validated one by one, not proved once.
    pub fn is_algorithmic(&self, rule: usize) -> bool {
        rule >= self.declarative
    }

    /// Rule `rule` puts a node into a canonical form: if its result comes
    /// back at the same node (another rule undid part of it), it is not
    /// taken again, so the two cannot loop.
    fn is_canonicalizing(&self, rule: usize) -> bool {
        self.canonical[rule]
    }

    /// Simplifies `roots`. With `trace`, every firing is recorded.
    pub fn simplify(
        &self,
        g: &mut Graph,
        roots: &[NodeId],
        trace: bool,
    ) -> Result<Outcome, CapError> {
        // The memo, the stack and the recent firings are the thread's,
        // reused from call to call: allocating them per call was a large
        // part of simplifying a small expression.
        let mut scratch = SCRATCH.with(|s| s.take()).unwrap_or_default();
        scratch.memo.clear();
        scratch.recent.clear();
        let mut run = Run {
            s: self,
            memo: &mut scratch.memo,
            out: Outcome::default(),
            recent: &mut scratch.recent,
            trace,
            fired: 0,
            limit: None,
            input: roots,
            stack: &mut scratch.stack,
        };
        let mut new_roots = Vec::with_capacity(roots.len());
        let mut result = Ok(());
        // One stack check for the call: the rules' and passes' recursive
        // steps inside it then only compare the stack pointer with its
        // floor (`deep::grow`), rather than each asking for the stack anew.
        crate::deep::grow(|| {
            for &r in roots {
                match run.rewrite(g, r) {
                    Ok(n) => new_roots.push(n),
                    Err(e) => {
                        result = Err(e);
                        break;
                    }
                }
            }
        });
        let mut out = std::mem::take(&mut run.out);
        // A large input's buffers are not kept: clearing them would cost
        // every later small call their size.
        if scratch.memo.capacity() <= SCRATCH_KEPT {
            SCRATCH.with(|s| s.set(Some(scratch)));
        }
        result?;
        out.roots = new_roots;
        Ok(out)
    }

    /// Whether `leaf`, an operand, is its own result without a visit: no
    /// rule can match a leaf of its op, or only rules that need its range
    /// to be one value, and it is not.
    #[inline]
    fn is_own_result(&self, leaf: &crate::ir::Node) -> bool {
        let op = leaf.op.index();
        self.fixed_leaf[op]
            || (self.one_value_leaf[op * DType::ALL.len() + leaf.dtype as usize]
                && range_at(leaf, self.width).is_none_or(|(lo, hi)| lo != hi))
    }

    /// The first rule (in group order) that fires at `n`, and its result.
    /// `root`: `n` is a linear root (see the module documentation), where
    /// the linear form's rules apply.
    fn first_match(&self, g: &mut Graph, n: NodeId, root: bool) -> Option<(usize, NodeId)> {
        let op = g.node(n).op;
        let site = Site::of(g, n, self.width);
        let key = op.index() * KIND_PAIRS + site.kinds();
        for (idx, shape) in &self.dispatch[key] {
            if !shape.admits(&site) {
                continue;
            }
            let (gi, ri) = self.flat[*idx];
            let rule = &self.rules.groups[gi].rules[ri];
            if let Some(out) = self.matchers[*idx].apply_at(rule, g, n, self.width) {
                if out != n {
                    return Some((*idx, out));
                }
            }
        }
        if !self.algorithmic {
            return None;
        }
        // A pass that returns its input has not fired.
        let mut base = self.declarative;
        for pass in self.passes {
            if pass.at.applies(op, root) {
                if let Some((i, out)) = (pass.run)(g, n, root, self.width) {
                    if out != n {
                        return Some((base + i, out));
                    }
                }
            }
            base += pass.rules.len();
        }
        None
    }
}

/// One node being simplified: its children are simplified first (into
/// `src`), then rules are tried at it; a rule's result replaces `cur` and
/// is simplified in turn.
struct Frame {
    /// The node asked for (its result is memoized under it).
    orig: NodeId,
    /// The node whose operands are being simplified.
    cur: NodeId,
    /// `orig` is a linear root.
    root: bool,
    /// Operands simplified so far.
    next: usize,
    src: [NodeId; 3],
    /// Results of the canonicalizing rules at this node so far: one coming
    /// back means another rule undid it, and it is not taken again.
    canon: Vec<NodeId>,
}

impl Frame {
    fn new(n: NodeId, root: bool) -> Frame {
        Frame {
            orig: n,
            cur: n,
            root,
            next: 0,
            src: [NodeId::NONE; 3],
            canon: Vec::new(),
        }
    }
}

/// A thread's buffers for [`Simplifier::simplify`], kept between calls.
#[derive(Default)]
struct Scratch {
    memo: FxHashMap<(NodeId, bool), NodeId>,
    recent: VecDeque<usize>,
    stack: Vec<Frame>,
}

/// The largest memo (in entries) a thread keeps between calls.
const SCRATCH_KEPT: usize = 1 << 12;

thread_local! {
    static SCRATCH: std::cell::Cell<Option<Scratch>> = const { std::cell::Cell::new(None) };
}

struct Run<'s, 'r> {
    s: &'s Simplifier<'r>,
    /// (node, is a linear root) -> result.
    memo: &'s mut FxHashMap<(NodeId, bool), NodeId>,
    out: Outcome,
    recent: &'s mut VecDeque<usize>,
    trace: bool,
    fired: usize,
    /// The cap of this call (see [`Simplifier::cap`]), counted once the
    /// firings pass the fixed cap: below it the count of input nodes
    /// cannot matter, and most calls never get there.
    limit: Option<usize>,
    /// The call's roots, whose nodes the cap counts (nodes never change, so
    /// the count is the same whenever it is taken).
    input: &'s [NodeId],
    stack: &'s mut Vec<Frame>,
}

impl Run<'_, '_> {
    /// Simplifies `n` as a root of the call (a linear root).
    fn rewrite(&mut self, g: &mut Graph, n: NodeId) -> Result<NodeId, CapError> {
        if let Some(&r) = self.memo.get(&(n, true)) {
            return Ok(r);
        }
        let mut stack = std::mem::take(self.stack);
        stack.clear();
        stack.push(Frame::new(n, true));
        let result = self.run(g, &mut stack);
        *self.stack = stack;
        result
    }

    fn run(&mut self, g: &mut Graph, stack: &mut Vec<Frame>) -> Result<NodeId, CapError> {
        loop {
            let top = stack.last_mut().expect("the stack holds the call's root");
            let node = *g.node(top.cur);
            let src = node.src();
            if top.next < src.len() {
                let c = src[top.next];
                if self.s.is_own_result(g.node(c)) {
                    top.src[top.next] = c;
                    top.next += 1;
                    continue;
                }
                let child_root = !is_inner(&node, g.node(c));
                match self.memo.get(&(c, child_root)) {
                    Some(&r) => {
                        top.src[top.next] = r;
                        top.next += 1;
                    }
                    None => stack.push(Frame::new(c, child_root)),
                }
                continue;
            }
            let rebuilt = g.with_src(top.cur, &top.src[..src.len()]);
            let found = self.s.first_match(g, rebuilt, top.root);
            let found = match found {
                Some((rule, next)) if self.s.is_canonicalizing(rule) => {
                    if top.canon.contains(&next) {
                        None
                    } else {
                        top.canon.push(next);
                        Some((rule, next))
                    }
                }
                other => other,
            };
            match found {
                Some((rule, next)) => {
                    top.cur = next;
                    top.next = 0;
                    self.record(g, rule, rebuilt, next)?;
                }
                None => {
                    let done = stack.pop().expect("a frame is on the stack");
                    self.memo.insert((done.orig, done.root), rebuilt);
                    // Most nodes come back as they were: one entry then.
                    if rebuilt != done.orig {
                        self.memo.insert((rebuilt, done.root), rebuilt);
                    }
                    match stack.last_mut() {
                        None => return Ok(rebuilt),
                        Some(parent) => {
                            parent.src[parent.next] = rebuilt;
                            parent.next += 1;
                        }
                    }
                }
            }
        }
    }

    fn record(
        &mut self,
        g: &Graph,
        rule: usize,
        before: NodeId,
        after: NodeId,
    ) -> Result<(), CapError> {
        match self.out.counts.iter_mut().find(|(r, _)| *r == rule) {
            Some((_, c)) => *c += 1,
            None => self.out.counts.push((rule, 1)),
        }
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
        if self.fired <= self.s.cap {
            return Ok(());
        }
        let (cap, input) = (self.s.cap, self.input);
        let limit = *self.limit.get_or_insert_with(|| {
            cap.saturating_add(CAP_PER_NODE.saturating_mul(g.reachable(input).len()))
        });
        if self.fired > limit {
            let mut counts: FxHashMap<usize, usize> = FxHashMap::default();
            for &r in self.recent.iter() {
                *counts.entry(r).or_default() += 1;
            }
            let mut looping: Vec<(String, usize)> = counts
                .into_iter()
                .map(|(r, c)| (self.s.names[r].clone(), c))
                .collect();
            looping.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            let cycle = repeating_window(self.recent)
                .into_iter()
                .map(|r| self.s.names[r].clone())
                .collect();
            return Err(CapError {
                cap: limit,
                cycle,
                looping,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Simplifier;
    use crate::ir::Op;
    use crate::rules::{builtin, RuleSet};

    /// `rule` alone, without the passes, on the one expression of `program`.
    fn simplify_with(rules: &RuleSet, program: &str) -> String {
        let mut p = crate::text::parse::parse_program(program).unwrap();
        let mut s = Simplifier::new(rules);
        s.algorithmic = false;
        let out = s.simplify(&mut p.graph, &p.outputs, false).unwrap();
        crate::text::print::expr(&p.graph, out.roots[0])
    }

    #[test]
    fn a_constant_operand_is_not_visited_when_no_rule_can_match_a_constant() {
        let rules = builtin();
        let s = Simplifier::new(rules);
        // The built-in rules with a bare root variable refuse constants by
        // their guards (`!is_const(x)`); variables they may fold.
        assert!(s.fixed_leaf[Op::Const(0).index()]);
        assert!(!s.fixed_leaf[Op::Var(0).index()]);
    }

    #[test]
    fn a_variable_operand_is_visited_only_where_its_range_is_one_value() {
        use crate::ir::dtype::DType;
        let at = |op: Op, d: DType| op.index() * DType::ALL.len() + d as usize;
        let s = Simplifier::new(builtin());
        // Only `int_decided` (and the bool rules, which a typed variable
        // keeps from an `index` one) can match a bare variable.
        assert!(s.one_value_leaf[at(Op::Var(0), DType::Index)]);
        assert!(!s.one_value_leaf[at(Op::Var(0), DType::Bool)]);
        let out = |text: &str| {
            let mut p = crate::text::parse::parse_program(text).unwrap();
            let o = s.simplify(&mut p.graph, &p.outputs, false).unwrap();
            crate::text::print::expr(&p.graph, o.roots[0])
        };
        assert_eq!(
            out("var x in [0, 9]\nvar y in [3, 3]\nexpr x * 7 + y\n"),
            "x * 7 + 3"
        );
        assert_eq!(
            out("var x in [0, 9]\nvar y in [3, 4]\nexpr x * 7 + y\n"),
            "x * 7 + y"
        );
    }

    #[test]
    fn a_bare_variable_rule_without_a_one_value_guard_sees_every_variable() {
        let rules = RuleSet::parse(
            "t.rules",
            "rule neg: x => 0 if vmax(x) < 0 && !is_const(x)\n",
        )
        .unwrap();
        let s = Simplifier::new(&rules);
        let at = Op::Var(0).index() * crate::ir::dtype::DType::ALL.len();
        assert!(!s.one_value_leaf[at]);
        assert_eq!(
            simplify_with(&rules, "var x in [0, 9]\nvar y in [-9, -1]\nexpr x + y\n"),
            "x + 0"
        );
    }

    #[test]
    fn a_rule_that_can_match_a_constant_still_sees_constant_operands() {
        let rules = RuleSet::parse(
            "t.rules",
            "rule five: x => 0 if vmin(x) == 5 && vmax(x) == 5\n",
        )
        .unwrap();
        assert!(!Simplifier::new(&rules).fixed_leaf[Op::Const(0).index()]);
        assert_eq!(
            simplify_with(&rules, "var y in [0, 9]\nexpr y + 5\n"),
            "y + 0"
        );
    }
}
