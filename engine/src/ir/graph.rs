//! The IR: a hash-consed DAG of typed nodes.
//!
//! Every node lives in a [`Graph`] arena and is identified by a [`NodeId`].
//! Building a node that is structurally equal to an existing one returns the
//! existing id, so "the same subterm" and "the same node" coincide: a rule
//! pattern that uses a variable twice compares ids, not trees.
//!
//! Children are always built before their parents, so increasing id order is
//! a topological order; the interpreter and the printers rely on that.
//!
//! The value range (`vmin`/`vmax`) and the may-be-invalid flag of a node are
//! computed once, when the node is built (see [`crate::ir::ranges`]).

use crate::ir::dtype::DType;
use crate::ir::op::Class;
use crate::ir::op::Op;
use crate::ir::ranges;
use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Index of a node in its [`Graph`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

impl NodeId {
    /// Padding for unused operand slots.
    pub const NONE: NodeId = NodeId(u32::MAX);

    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The structural identity of a node: what hash-consing compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    pub op: Op,
    pub dtype: DType,
    pub src: [NodeId; 3],
}

/// A node with its analysis results.
#[derive(Clone, Copy, Debug)]
pub struct Node {
    pub op: Op,
    pub dtype: DType,
    src: [NodeId; 3],
    /// Lower bound of every value the node takes where it is a valid value.
    /// `vmin > vmax` means the node never is (it is always invalid, or always
    /// undefined).
    pub vmin: i64,
    pub vmax: i64,
    /// An `invalid` leaf is reachable from this node, so it may evaluate to
    /// invalid (or, for comparisons and bools, to an unconstrained value).
    pub maybe_invalid: bool,
    /// The node may evaluate to an unconstrained value: a comparison of a
    /// possibly invalid operand is below it (see `interp::apply`).
    pub maybe_unconstrained: bool,
    /// Canonical-order keys (see [`Graph::canonical_cmp`]): the index of
    /// the leftmost variable (following first operands), and the height.
    lead: u32,
    height: u32,
}

impl Node {
    pub fn src(&self) -> &[NodeId] {
        &self.src[..self.op.arity()]
    }

    pub fn key(&self) -> Key {
        Key {
            op: self.op,
            dtype: self.dtype,
            src: self.src,
        }
    }

    /// The range is empty: the node is never a valid value.
    pub fn range_empty(&self) -> bool {
        self.vmin > self.vmax
    }

    pub fn as_const(&self) -> Option<i64> {
        match self.op {
            Op::Const(c) => Some(c),
            _ => None,
        }
    }
}

/// A declared variable: a loop range, grid index or runtime value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct VarDecl {
    pub name: String,
    pub dtype: DType,
    pub lo: i64,
    pub hi: i64,
}

/// A misuse of the builder: wrong operand count or dtypes.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TypeError(pub String);

/// The arena holding every node and the variable table.
pub struct Graph {
    nodes: Vec<Node>,
    dedup: FxHashMap<Key, NodeId>,
    vars: Vec<VarDecl>,
    var_by_name: FxHashMap<String, u32>,
    /// This graph's identity ([`Graph::holder`]).
    uid: u64,
    /// The graph it was cloned from, when it is a clone ([`Graph::holder`]).
    origin: Option<Arc<Origin>>,
}

/// The graph a clone was cloned from: its identity and its node count
/// then (the clone's nodes below it are the original's, numbered the
/// same), and where that graph came from in turn.
struct Origin {
    uid: u64,
    len: usize,
    /// Links from here to the first graph (at most [`MAX_ORIGINS`]).
    depth: usize,
    origin: Option<Arc<Origin>>,
}

/// Origins a graph keeps: a clone of a clone of ... (a blame that moves
/// an instance, a shrink) forgets the older ones.
const MAX_ORIGINS: usize = 32;

/// The next graph's identity.
static NEXT_UID: AtomicU64 = AtomicU64::new(0);

fn next_uid() -> u64 {
    NEXT_UID.fetch_add(1, Ordering::Relaxed)
}

impl Default for Graph {
    fn default() -> Graph {
        Graph {
            nodes: Vec::new(),
            dedup: FxHashMap::default(),
            vars: Vec::new(),
            var_by_name: FxHashMap::default(),
            uid: next_uid(),
            origin: None,
        }
    }
}

/// A clone keeps the original's room for new nodes: a graph is cloned to
/// be rewritten (each simplification of a parsed program starts from a
/// clone), and an exact-size arena was reallocated at the first node a
/// rewrite added. (A table's clone keeps its buckets already.)
impl Clone for Graph {
    fn clone(&self) -> Graph {
        let mut nodes = Vec::with_capacity(self.nodes.capacity());
        nodes.extend_from_slice(&self.nodes);
        Graph {
            nodes,
            dedup: self.dedup.clone(),
            vars: self.vars.clone(),
            var_by_name: self.var_by_name.clone(),
            // The clone grows apart from the original: a node id names
            // another node in each once both add nodes.
            uid: next_uid(),
            origin: {
                let older = self.origin.clone().filter(|o| o.depth < MAX_ORIGINS);
                Some(Arc::new(Origin {
                    uid: self.uid,
                    len: self.nodes.len(),
                    depth: older.as_ref().map_or(0, |o| o.depth) + 1,
                    origin: older,
                }))
            },
        }
    }
}

impl Graph {
    pub fn new() -> Graph {
        Graph::default()
    }

    /// An empty graph with room for `nodes` nodes.
    pub fn with_capacity(nodes: usize) -> Graph {
        Graph {
            nodes: Vec::with_capacity(nodes),
            dedup: FxHashMap::with_capacity_and_hasher(nodes, Default::default()),
            ..Graph::default()
        }
    }

    /// The identity (one no other graph of this process has; a clone gets
    /// its own) of the first graph, among this one and those it was
    /// cloned from (in turn), that held every node `roots` reach, numbered
    /// as here: what is derived from `roots` (their text, their wire form)
    /// is the same in every graph that names that holder for them, so two
    /// clones of one graph share it for the nodes they were cloned with. A
    /// graph only grows: nodes and variables are never changed or removed,
    /// so what is derived from its nodes holds as long as the process runs.
    pub fn holder(&self, roots: &[NodeId]) -> u64 {
        // Operands come before their nodes: the highest root bounds every
        // node the roots reach.
        let Some(top) = roots.iter().map(|r| r.index()).max() else {
            return self.uid;
        };
        let mut holder = self.uid;
        let mut link = self.origin.as_deref();
        while let Some(o) = link.filter(|o| top < o.len) {
            holder = o.uid;
            link = o.origin.as_deref();
        }
        holder
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.index()]
    }

    pub fn vars(&self) -> &[VarDecl] {
        &self.vars
    }

    pub fn var(&self, v: u32) -> &VarDecl {
        &self.vars[v as usize]
    }

    pub fn var_named(&self, name: &str) -> Option<u32> {
        self.var_by_name.get(name).copied()
    }

    /// Declares a variable. Redeclaring a name with the same dtype and bounds
    /// returns the existing one; with different ones it is an error.
    pub fn declare_var(
        &mut self,
        name: &str,
        dtype: DType,
        lo: i64,
        hi: i64,
    ) -> Result<u32, TypeError> {
        if let Some(&v) = self.var_by_name.get(name) {
            let d = &self.vars[v as usize];
            if d.dtype == dtype && d.lo == lo && d.hi == hi {
                return Ok(v);
            }
            return Err(TypeError(format!(
                "variable `{name}` is already declared with other bounds"
            )));
        }
        if lo > hi {
            return Err(TypeError(format!(
                "variable `{name}` has an empty range [{lo}, {hi}]"
            )));
        }
        let (tlo, thi) = dtype.bounds();
        if lo < tlo || hi > thi {
            return Err(TypeError(format!(
                "bounds of `{name}` do not fit its dtype {dtype}"
            )));
        }
        let v = self.vars.len() as u32;
        self.vars.push(VarDecl {
            name: name.to_string(),
            dtype,
            lo,
            hi,
        });
        self.var_by_name.insert(name.to_string(), v);
        Ok(v)
    }

    /// The node of a declared variable.
    pub fn var_node(&mut self, v: u32) -> NodeId {
        let dtype = self.vars[v as usize].dtype;
        self.intern(Op::Var(v), dtype, &[])
    }

    pub fn cnst(&mut self, value: i64, dtype: DType) -> NodeId {
        debug_assert!(
            {
                let (lo, hi) = dtype.bounds();
                lo <= value && value <= hi
            },
            "constant {value} does not fit {dtype}"
        );
        self.intern(Op::Const(value), dtype, &[])
    }

    pub fn bool_const(&mut self, b: bool) -> NodeId {
        self.intern(Op::Const(b as i64), DType::Bool, &[])
    }

    pub fn invalid(&mut self) -> NodeId {
        self.intern(Op::Invalid, DType::Index, &[])
    }

    /// Builds (or finds) a node after checking operand count and dtypes.
    /// For `Cast` the dtype argument is the target dtype; for every other op
    /// it is derived from the operands.
    pub fn try_mk(
        &mut self,
        op: Op,
        cast_to: Option<DType>,
        src: &[NodeId],
    ) -> Result<NodeId, TypeError> {
        let dtype = self.result_dtype(op, cast_to, src)?;
        Ok(self.intern(op, dtype, src))
    }

    /// [`Graph::try_mk`] for callers that construct well-typed terms by
    /// design (the rewriter, generators); a type error here is a bug.
    pub fn mk(&mut self, op: Op, src: &[NodeId]) -> NodeId {
        match self.try_mk(op, None, src) {
            Ok(id) => id,
            Err(e) => panic!("ill-typed node {op:?}: {e}"),
        }
    }

    pub fn cast(&mut self, to: DType, x: NodeId) -> NodeId {
        match self.try_mk(Op::Cast, Some(to), &[x]) {
            Ok(id) => id,
            Err(e) => panic!("ill-typed cast: {e}"),
        }
    }

    /// The dtype a node of `op` over `src` has, or why it is ill-typed.
    pub fn result_dtype(
        &self,
        op: Op,
        cast_to: Option<DType>,
        src: &[NodeId],
    ) -> Result<DType, TypeError> {
        if src.len() != op.arity() {
            return Err(TypeError(format!(
                "`{}` takes {} operands, got {}",
                op.name(),
                op.arity(),
                src.len()
            )));
        }
        let mut dts = [DType::Index; 3];
        for (d, &s) in dts.iter_mut().zip(src) {
            *d = self.node(s).dtype;
        }
        let dt = &dts[..src.len()];
        let need_int = |d: DType| -> Result<(), TypeError> {
            if d.is_int() {
                Ok(())
            } else {
                Err(TypeError(format!(
                    "`{}` needs integer operands, got bool",
                    op.name()
                )))
            }
        };
        let need_bool = |d: DType| -> Result<(), TypeError> {
            if d == DType::Bool {
                Ok(())
            } else {
                Err(TypeError(format!(
                    "`{}` needs bool operands, got {d}",
                    op.name()
                )))
            }
        };
        let same = |a: DType, b: DType| -> Result<(), TypeError> {
            if a == b {
                Ok(())
            } else {
                Err(TypeError(format!(
                    "`{}` mixes {a} and {b}; insert a cast",
                    op.name()
                )))
            }
        };
        match op.class() {
            Class::Leaf => Err(TypeError(
                "leaves are built with their own constructors".into(),
            )),
            Class::Cast => {
                need_int(dt[0])?;
                match cast_to {
                    Some(t) if t.is_int() => Ok(t),
                    _ => Err(TypeError("casts go between integer dtypes".into())),
                }
            }
            Class::Arith => {
                for &d in dt {
                    need_int(d)?;
                }
                for &d in &dt[1..] {
                    same(dt[0], d)?;
                }
                Ok(dt[0])
            }
            Class::Compare => {
                need_int(dt[0])?;
                need_int(dt[1])?;
                same(dt[0], dt[1])?;
                Ok(DType::Bool)
            }
            Class::Logic => {
                for &d in dt {
                    need_bool(d)?;
                }
                Ok(DType::Bool)
            }
            Class::Select => {
                need_bool(dt[0])?;
                same(dt[1], dt[2])?;
                Ok(dt[1])
            }
        }
    }

    /// Hash-consing: returns the existing node with this key or appends one,
    /// computing its range and invalid flag from its (already built) operands.
    ///
    /// Operands of a commutative op are put in canonical order first, so
    /// `a + b` and `b + a` are one node whichever a rule or parser built.
    pub(crate) fn intern(&mut self, op: Op, dtype: DType, src: &[NodeId]) -> NodeId {
        let mut s = [NodeId::NONE; 3];
        s[..src.len()].copy_from_slice(src);
        if op.is_commutative() && self.canonical_cmp(s[1], s[0]) == std::cmp::Ordering::Less {
            s.swap(0, 1);
        }
        let key = Key { op, dtype, src: s };
        if let Some(&id) = self.dedup.get(&key) {
            return id;
        }
        let (vmin, vmax) = node_range(self, op, dtype, src);
        let maybe_invalid = op == Op::Invalid || src.iter().any(|&c| self.node(c).maybe_invalid);
        let maybe_unconstrained = src.iter().any(|&c| {
            let n = self.node(c);
            n.maybe_unconstrained || (op.is_comparison() && n.maybe_invalid)
        });
        let id = NodeId(u32::try_from(self.nodes.len()).expect("graph exceeds 2^32 nodes"));
        let (lead, height) = match op {
            Op::Var(v) => (v, 0),
            Op::Const(_) => (u32::MAX - 1, 0),
            Op::Invalid => (u32::MAX, 0),
            _ => {
                let first = self.node(s[0]);
                let h = src.iter().map(|&c| self.node(c).height).max().unwrap_or(0);
                (first.lead, h + 1)
            }
        };
        self.nodes.push(Node {
            op,
            dtype,
            src: s,
            vmin,
            vmax,
            maybe_invalid,
            maybe_unconstrained,
            lead,
            height,
        });
        self.dedup.insert(key, id);
        id
    }

    /// The canonical operand order of commutative ops: a total order on
    /// nodes that depends only on their structure and the variables'
    /// declaration order (not on build order), so that one expression gets
    /// one operand order whatever built it. Constants come last (the seed's
    /// convention, `x + 5`); otherwise terms are ordered by their leftmost
    /// variable (`r1*8000 + r2*16`), then by height (`a + a*4`), op, dtype
    /// and operands.
    pub fn canonical_cmp(&self, a: NodeId, b: NodeId) -> std::cmp::Ordering {
        use std::cmp::Ordering::*;
        if a == b {
            return Equal;
        }
        let (na, nb) = (self.node(a), self.node(b));
        let rank = |n: &Node| match n.op {
            Op::Const(_) => 2,
            Op::Invalid => 1,
            _ => 0,
        };
        let by_rank = rank(na).cmp(&rank(nb));
        if by_rank != Equal {
            return by_rank;
        }
        if let (Op::Const(x), Op::Const(y)) = (na.op, nb.op) {
            return x.cmp(&y).then(na.dtype.cmp(&nb.dtype));
        }
        let op_key = |n: &Node| (n.op.name(), n.op.arity());
        na.lead
            .cmp(&nb.lead)
            .then(na.height.cmp(&nb.height))
            .then(op_key(na).cmp(&op_key(nb)))
            .then(na.dtype.cmp(&nb.dtype))
            .then_with(|| {
                for (&x, &y) in na.src().iter().zip(nb.src()) {
                    let c = self.canonical_cmp(x, y);
                    if c != Equal {
                        return c;
                    }
                }
                // Same structure all the way down is the same node
                // (hash-consing); distinct leaves differ above.
                Equal
            })
    }

    /// Rebuilds `id` with new operands (same op and dtype).
    pub fn with_src(&mut self, id: NodeId, src: &[NodeId]) -> NodeId {
        let n = *self.node(id);
        if n.src() == src {
            return id;
        }
        self.intern(n.op, n.dtype, src)
    }

    /// The operands of the `op` chain at `n` (`n` itself if it is not one),
    /// left to right, at most `max` of them, and whether that is all of
    /// them. Iterative; a caller that needs the whole chain gives up on a
    /// long one rather than walk it at every node.
    pub fn chain_operands(&self, n: NodeId, op: Op, max: usize) -> (Vec<NodeId>, bool) {
        let mut parts = Vec::new();
        let mut stack = vec![n];
        while let Some(x) = stack.pop() {
            if parts.len() >= max {
                return (parts, false);
            }
            let xn = self.node(x);
            if xn.op == op {
                stack.push(xn.src()[1]);
                stack.push(xn.src()[0]);
            } else {
                parts.push(x);
            }
        }
        (parts, true)
    }

    /// Every node reachable from `roots`, in increasing (topological) order.
    /// Costs time in the size of the sub-graph, not of the graph: the
    /// rewriter asks this of small sub-expressions of large graphs.
    pub fn reachable(&self, roots: &[NodeId]) -> Vec<NodeId> {
        let mut out = Vec::new();
        self.walk_down(roots, |id| out.push(id));
        out.reverse();
        out
    }

    /// The number of distinct nodes below `n`, itself included: the cost
    /// the passes compare candidate forms by. [`Graph::reachable`]'s count,
    /// without building the list.
    pub fn size(&self, n: NodeId) -> usize {
        self.size_of(&[n])
    }

    /// The number of distinct nodes below any of `roots`, themselves
    /// included.
    pub fn size_of(&self, roots: &[NodeId]) -> usize {
        let mut count = 0;
        self.walk_down(roots, |_| count += 1);
        count
    }

    /// Calls `f` on every node reachable from `roots`, each once, in
    /// decreasing id order. An operand's id is below its parent's, so a
    /// max-heap pops every parent of a node before the node, and a node
    /// pushed twice comes out twice in a row: no visited set is needed.
    pub(crate) fn walk_down(&self, roots: &[NodeId], mut f: impl FnMut(NodeId)) {
        // The heap's buffer is the thread's, reused: the passes ask the
        // size of small expressions often, and allocating a heap per walk
        // was most of what that cost.
        thread_local! {
            static BUF: std::cell::Cell<Vec<NodeId>> = const { std::cell::Cell::new(Vec::new()) };
        }
        let mut heap = std::collections::BinaryHeap::from(BUF.with(|b| b.take()));
        heap.extend(roots.iter().copied());
        let mut last = None;
        while let Some(id) = heap.pop() {
            if last == Some(id) {
                continue;
            }
            last = Some(id);
            f(id);
            heap.extend(self.node(id).src().iter().copied());
        }
        let buf = heap.into_vec();
        if buf.capacity() <= 1 << 12 {
            BUF.with(|b| b.set(buf));
        }
    }

    /// The variables `roots` reach, in declaration order.
    pub fn reachable_vars(&self, roots: &[NodeId]) -> Vec<u32> {
        self.reachable_vars_and_size(roots).0
    }

    /// The variables `roots` reach, in declaration order, and the number
    /// of nodes they reach ([`Graph::size_of`]): one walk for both.
    pub fn reachable_vars_and_size(&self, roots: &[NodeId]) -> (Vec<u32>, usize) {
        let (mut vars, mut count) = (Vec::new(), 0);
        self.walk_down(roots, |id| {
            count += 1;
            if let Op::Var(v) = self.node(id).op {
                vars.push(v);
            }
        });
        // Ids follow creation order, not declaration order: sort.
        vars.sort_unstable();
        vars.dedup();
        (vars, count)
    }

    /// The nodes below `root` (itself included) that are not `done`,
    /// operands first, in the order a recursive walk visits them (operand 0's
    /// subgraph first). Passes that memoize per node compute these in this
    /// order, so that each step finds its operands done and the depth of a
    /// graph is not limited by the thread's stack.
    pub fn post_order(&self, root: NodeId, done: impl Fn(NodeId) -> bool) -> Vec<NodeId> {
        self.post_order_within(root, usize::MAX, done)
            .expect("no bound")
    }

    /// [`Self::post_order`], or `None` as soon as it passes `max` nodes: a
    /// pass that walks what is below each node gives up on a large one
    /// after `max` steps, so that it costs linear time over a deep graph.
    pub fn post_order_within(
        &self,
        root: NodeId,
        max: usize,
        done: impl Fn(NodeId) -> bool,
    ) -> Option<Vec<NodeId>> {
        let mut seen: rustc_hash::FxHashSet<NodeId> = rustc_hash::FxHashSet::default();
        let mut out = Vec::new();
        // (node, its operands are out)
        let mut stack = vec![(root, false)];
        while let Some((id, ready)) = stack.pop() {
            if ready {
                out.push(id);
                continue;
            }
            if done(id) || !seen.insert(id) {
                continue;
            }
            if seen.len() > max {
                return None;
            }
            stack.push((id, true));
            stack.extend(self.node(id).src().iter().rev().map(|&s| (s, false)));
        }
        Some(out)
    }

    /// `roots` rebuilt bottom-up: each node as `swap` builds it (from the
    /// node, its old node and its rebuilt operands), else as it was over
    /// its rebuilt operands (itself where they did not change).
    pub fn rebuild(
        &mut self,
        roots: &[NodeId],
        mut swap: impl FnMut(&mut Graph, NodeId, &Node, &[NodeId]) -> Option<NodeId>,
    ) -> Vec<NodeId> {
        let mut map: FxHashMap<NodeId, NodeId> = FxHashMap::default();
        for n in self.reachable(roots) {
            let node = *self.node(n);
            let src: Vec<NodeId> = node.src().iter().map(|s| map[s]).collect();
            let new = match swap(self, n, &node, &src) {
                Some(m) => m,
                None => self.with_src(n, &src),
            };
            map.insert(n, new);
        }
        roots.iter().map(|r| map[r]).collect()
    }

    /// Copies the subgraph of `roots` in `from` into `self`, mapping
    /// variables by name (declaring those `self` lacks).
    pub fn import(&mut self, from: &Graph, roots: &[NodeId]) -> Result<Vec<NodeId>, TypeError> {
        self.substitute(from, roots, |g, v| {
            let d = from.var(v);
            let nv = g.declare_var(&d.name, d.dtype, d.lo, d.hi)?;
            Ok(g.var_node(nv))
        })
    }

    /// Copies the subgraph of `roots` in `from` into `self`, each variable
    /// of `from` replaced by the node `var` gives for it (the variable's
    /// dtype, or the copy is ill-typed: an error).
    pub fn substitute(
        &mut self,
        from: &Graph,
        roots: &[NodeId],
        mut var: impl FnMut(&mut Graph, u32) -> Result<NodeId, TypeError>,
    ) -> Result<Vec<NodeId>, TypeError> {
        let mut map: FxHashMap<NodeId, NodeId> = FxHashMap::default();
        for id in from.reachable(roots) {
            let n = from.node(id);
            let new = match n.op {
                Op::Var(v) => {
                    let x = var(self, v)?;
                    if self.node(x).dtype != n.dtype {
                        return Err(TypeError(format!(
                            "`{}` ({}) replaced by a {}",
                            from.var(v).name,
                            n.dtype,
                            self.node(x).dtype
                        )));
                    }
                    x
                }
                _ => {
                    let src: Vec<NodeId> = n.src().iter().map(|s| map[s]).collect();
                    self.intern(n.op, n.dtype, &src)
                }
            };
            map.insert(id, new);
        }
        Ok(roots.iter().map(|r| map[r]).collect())
    }
}

/// The range of a node of `op` over operands `src` (already in `g`), by
/// the transfer functions of [`crate::ir::ranges`].
fn node_range(g: &Graph, op: Op, dtype: DType, src: &[NodeId]) -> (i64, i64) {
    let mut args = [ranges::Range::point(0); 3];
    for (a, &s) in args.iter_mut().zip(src) {
        let n = g.node(s);
        *a = ranges::Range::new(n.vmin as i128, n.vmax as i128);
    }
    let args = &args[..src.len()];
    let exact = match op {
        Op::Const(c) => ranges::Range::point(c as i128),
        Op::Var(v) => {
            let d = g.var(v);
            ranges::Range::new(d.lo as i128, d.hi as i128)
        }
        Op::Invalid => ranges::Range::empty(),
        _ => ranges::transfer(op, args),
    };
    let r = ranges::clamp(&exact, dtype);
    if r.is_empty() {
        (1, 0)
    } else {
        (r.lo as i64, r.hi as i64)
    }
}

#[cfg(test)]
mod tests {
    use crate::ir::Op;
    use crate::text::parse::parse_program;

    #[test]
    fn a_graph_keeps_its_identity_as_it_grows_and_a_clone_has_its_own() {
        let p = parse_program("var x in [0, 9]\nexpr x + 1\n").unwrap();
        let mut g = p.graph;
        let uid = g.uid;
        g.cnst(7, crate::ir::DType::Index);
        assert_eq!(g.uid, uid);
        let h = g.clone();
        assert_ne!(h.uid, uid);
        assert_ne!(super::Graph::new().uid, uid);
    }

    #[test]
    fn clones_share_a_holder_for_the_nodes_they_were_cloned_with() {
        let p = parse_program("var x in [0, 9]\nexpr x + 1\n").unwrap();
        let g = p.graph;
        let root = p.outputs[0];
        let (mut a, mut b) = (g.clone(), g.clone());
        let deeper = a.clone();
        for h in [&a, &b, &deeper] {
            assert_eq!(h.holder(&[root]), g.uid);
        }
        // Nodes added after the clone are each clone's own, though their
        // ids are the same.
        let na = a.cnst(5, crate::ir::DType::Index);
        let nb = b.cnst(6, crate::ir::DType::Index);
        assert_eq!(na, nb);
        assert_eq!(a.holder(&[na]), a.uid);
        assert_eq!(b.holder(&[nb]), b.uid);
        assert_eq!(a.holder(&[root, na]), a.uid);
        assert_eq!(g.holder(&[]), g.uid);
    }

    #[test]
    fn rebuild_swaps_the_nodes_asked_and_rebuilds_only_what_is_above_them() {
        let p = parse_program("var x in [0, 9]\nvar y in [0, 9]\nexpr (x + 1) * y + x\n").unwrap();
        let mut g = p.graph;
        let root = p.outputs[0];
        let nodes = g.reachable(&[root]);
        // Nothing swapped: the same node.
        assert_eq!(g.rebuild(&[root], |_, _, _, _| None), vec![root]);
        // Every `x` by `x * 2`: the nodes above it are rebuilt over it.
        let x = nodes
            .iter()
            .copied()
            .find(|&n| matches!(g.node(n).op, Op::Var(v) if g.var(v).name == "x"))
            .unwrap();
        let two = g.cnst(2, g.node(x).dtype);
        let doubled = g.mk(Op::Mul, &[x, two]);
        let new = g.rebuild(&[root], |_, n, _, _| (n == x).then_some(doubled))[0];
        // (A commutative op's operands come out in the graph's order.)
        assert_eq!(crate::text::print::expr(&g, new), "x * 2 + (x * 2 + 1) * y");
    }
}
