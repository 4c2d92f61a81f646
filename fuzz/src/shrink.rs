//! Graph-level shrinking: a failing case is reduced, one edit at a time,
//! while it still fails the same check, so that what lands in the corpus is
//! a few lines a reviewer can read rather than a 300-node tiled index.
//!
//! It works on an [`engine::parse::Program`] (not on a generator's genome),
//! so generated cases, imported libFuzzer artifacts and corpus files all
//! shrink the same way, and the result is independent of the generators.
//!
//! Edits, tried in this order (the ones that remove most first):
//!
//! 1. drop a root of a tuple;
//! 2. replace a node (closest to the roots first) by one of its operands of
//!    the same dtype, or by a small constant (`0`, `1`, `-1`; `false`,
//!    `true`); a variable also by its bounds, which removes the variable;
//! 3. shrink a constant toward 0 (`0`, `±1`, half, one step closer);
//! 4. shrink a variable's bounds toward a small range (either half).
//!
//! An edit is kept only if the result is strictly smaller by the measure of
//! [`size`] (so shrinking terminates) and the predicate still holds.
//! Greedy to a fixed point, with a budget on predicate evaluations, because
//! each evaluation simplifies and JIT-compiles the candidate.

use engine::ir::{DType, Graph, NodeId, Op};
use engine::parse::Program;

/// What the shrinker did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShrinkStats {
    /// Predicate evaluations.
    pub steps: usize,
    /// Edits kept.
    pub accepted: usize,
    /// The step budget ran out before a fixed point.
    pub exhausted: bool,
}

/// The measure shrinking decreases, compared lexicographically: roots,
/// operation nodes, variables, the sum of variable spans, the sum of
/// constant magnitudes, the sum of the variables' bound magnitudes.
pub fn size(p: &Program) -> (usize, usize, usize, u128, u128, u128) {
    let g = &p.graph;
    let (mut ops, mut vars, mut span, mut consts, mut dist) = (0, 0, 0u128, 0u128, 0u128);
    for id in g.reachable(&p.outputs) {
        match g.node(id).op {
            Op::Var(v) => {
                let d = g.var(v);
                vars += 1;
                span = span.saturating_add((d.hi as i128 - d.lo as i128) as u128);
                dist = dist
                    .saturating_add(d.lo.unsigned_abs() as u128)
                    .saturating_add(d.hi.unsigned_abs() as u128);
            }
            Op::Const(c) => consts = consts.saturating_add(c.unsigned_abs() as u128),
            Op::Invalid => {}
            _ => ops += 1,
        }
    }
    (p.outputs.len(), ops, vars, span, consts, dist)
}

/// Shrinks `p` while `fails` holds, with at most `max_steps` evaluations of
/// `fails` on candidates (and one more on the input when no edit is
/// accepted). The result has no `expect` lines (they would no longer match)
/// and keeps the header.
pub fn shrink(
    p: &Program,
    mut fails: impl FnMut(&Program) -> bool,
    max_steps: usize,
) -> (Program, ShrinkStats) {
    let s = shrink_judged(p, |q| fails(q).then_some(()), max_steps);
    (s.program, s.stats)
}

/// A shrink's result, with what the judge said of it.
pub struct Shrunk<T> {
    pub program: Program,
    /// The judge's answer for `program`: kept from the step that accepted
    /// it, or asked of the input when no edit was accepted (`None`: the
    /// judge rejects the input too).
    pub judged: Option<T>,
    pub stats: ShrinkStats,
}

/// Shrinks `p` while `judge` accepts (answers `Some`), with at most
/// `max_steps` evaluations of it on candidates, and keeps the answer for
/// the result: what a caller learns judging a candidate (its check, its
/// cause) is not computed again for the case it keeps.
pub fn shrink_judged<T>(
    p: &Program,
    mut judge: impl FnMut(&Program) -> Option<T>,
    max_steps: usize,
) -> Shrunk<T> {
    let mut stats = ShrinkStats::default();
    let mut spec = Spec::of(p);
    let input = spec.build(None).unwrap_or_else(|| Program {
        graph: p.graph.clone(),
        outputs: p.outputs.clone(),
        expects: Vec::new(),
        header: p.header.clone(),
        // The roots carry their constraints (gated, docs/semantics.md).
        constraints: Vec::new(),
        expect_constraints: None,
    });
    let mut cur_size = size(&input);
    let mut cur = (input, None);
    let done = |(program, judged): (Program, Option<T>),
                stats,
                judge: &mut dyn FnMut(&Program) -> Option<T>| {
        let judged = judged.or_else(|| judge(&program));
        Shrunk {
            program,
            judged,
            stats,
        }
    };
    loop {
        let mut progress = false;
        let mut cands = spec.candidates();
        let mut i = 0;
        while i < cands.len() {
            let Some(next) = spec.build(Some(&cands[i])) else {
                i += 1;
                continue;
            };
            let next_size = size(&next);
            if next_size >= cur_size {
                i += 1;
                continue;
            }
            if stats.steps >= max_steps {
                stats.exhausted = true;
                return done(cur, stats, &mut judge);
            }
            stats.steps += 1;
            if let Some(answer) = judge(&next) {
                stats.accepted += 1;
                progress = true;
                spec = Spec::of(&next);
                cands = spec.candidates();
                cur = (next, Some(answer));
                cur_size = next_size;
                // Stay at `i`: the edits before it were just tried (on a
                // slightly larger program); the next round retries them.
            } else {
                i += 1;
            }
        }
        if !progress {
            return done(cur, stats, &mut judge);
        }
    }
}

/// A node of the program being shrunk, with operands as indices into
/// [`Spec::nodes`] (topological order).
#[derive(Clone, Debug)]
struct SNode {
    op: Op,
    dtype: DType,
    src: Vec<usize>,
}

/// One candidate edit.
#[derive(Clone, Debug)]
enum Edit {
    DropRoot(usize),
    /// Replace node `.0` by node `.1` (an operand).
    Operand(usize, usize),
    /// Replace node `.0` by a constant of its dtype.
    Const(usize, i64),
    /// New bounds for variable `.0`.
    Bounds(u32, i64, i64),
}

/// The reachable part of a program, detached from its graph so that edits
/// can rebuild a fresh graph (with ranges recomputed for new bounds).
struct Spec {
    vars: Vec<engine::ir::VarDecl>,
    nodes: Vec<SNode>,
    roots: Vec<usize>,
    header: Vec<String>,
}

impl Spec {
    fn of(p: &Program) -> Spec {
        let g = &p.graph;
        let order = g.reachable(&p.outputs);
        let mut index = vec![usize::MAX; g.len()];
        let mut nodes = Vec::with_capacity(order.len());
        for (i, &id) in order.iter().enumerate() {
            index[id.index()] = i;
            let n = g.node(id);
            nodes.push(SNode {
                op: n.op,
                dtype: n.dtype,
                src: n.src().iter().map(|s| index[s.index()]).collect(),
            });
        }
        Spec {
            vars: g.vars().to_vec(),
            nodes,
            roots: p.outputs.iter().map(|r| index[r.index()]).collect(),
            header: p.header.clone(),
        }
    }

    /// Candidate edits, most reducing first.
    fn candidates(&self) -> Vec<Edit> {
        let mut out = Vec::new();
        if self.roots.len() > 1 {
            out.extend((0..self.roots.len()).map(Edit::DropRoot));
        }
        for i in (0..self.nodes.len()).rev() {
            let n = &self.nodes[i];
            match n.op {
                Op::Const(_) | Op::Invalid => continue,
                Op::Var(v) => {
                    let d = &self.vars[v as usize];
                    for k in unique([0i64.clamp(d.lo, d.hi), d.lo, d.hi]) {
                        out.push(Edit::Const(i, k));
                    }
                    continue;
                }
                _ => {}
            }
            let mut seen = Vec::new();
            for &s in &n.src {
                if self.nodes[s].dtype == n.dtype && !seen.contains(&s) {
                    seen.push(s);
                    out.push(Edit::Operand(i, s));
                }
            }
            let ks: &[i64] = if n.dtype == DType::Bool {
                &[0, 1]
            } else {
                &[0, 1, -1]
            };
            out.extend(ks.iter().map(|&k| Edit::Const(i, k)));
        }
        for (i, n) in self.nodes.iter().enumerate() {
            let Op::Const(c) = n.op else { continue };
            if n.dtype == DType::Bool || c == 0 {
                continue;
            }
            let ks = unique([0, c.signum(), -c.signum(), c / 2, c - c.signum()]);
            out.extend(
                ks.into_iter()
                    .filter(|k| k.unsigned_abs() < c.unsigned_abs())
                    .map(|k| Edit::Const(i, k)),
            );
        }
        for n in &self.nodes {
            let Op::Var(v) = n.op else { continue };
            let d = &self.vars[v as usize];
            if d.dtype == DType::Bool || d.lo == d.hi {
                continue;
            }
            let half = ((d.hi as i128 - d.lo as i128) / 2) as i64;
            // Keep the half nearer zero first: small values read best.
            let low = Edit::Bounds(v, d.lo, (d.lo as i128 + half as i128) as i64);
            let high = Edit::Bounds(v, (d.hi as i128 - half as i128) as i64, d.hi);
            if d.hi <= 0 {
                out.extend([high, low]);
            } else {
                out.extend([low, high]);
            }
        }
        // Then move whole ranges halfway toward zero (same span).
        for n in &self.nodes {
            let Op::Var(v) = n.op else { continue };
            let d = &self.vars[v as usize];
            let shift = if d.lo > 0 {
                -((d.lo as i128 + 1) / 2)
            } else if d.hi < 0 {
                (-(d.hi as i128) + 1) / 2
            } else {
                continue;
            };
            let (lo, hi) = (d.lo as i128 + shift, d.hi as i128 + shift);
            out.push(Edit::Bounds(v, lo as i64, hi as i64));
        }
        out
    }

    /// The program with `edit` applied (or as it is), in a fresh graph;
    /// `None` when the edit does not type-check.
    fn build(&self, edit: Option<&Edit>) -> Option<Program> {
        let mut g = Graph::new();
        for (v, d) in self.vars.iter().enumerate() {
            let (lo, hi) = match edit {
                Some(&Edit::Bounds(ev, lo, hi)) if ev as usize == v => (lo, hi),
                _ => (d.lo, d.hi),
            };
            g.declare_var(&d.name, d.dtype, lo, hi).ok()?;
        }
        let mut map: Vec<NodeId> = Vec::with_capacity(self.nodes.len());
        for (i, n) in self.nodes.iter().enumerate() {
            let id = match edit {
                Some(&Edit::Operand(at, s)) if at == i => map[s],
                Some(&Edit::Const(at, k)) if at == i => constant(&mut g, k, n.dtype)?,
                _ => match n.op {
                    Op::Const(c) => constant(&mut g, c, n.dtype)?,
                    Op::Var(v) => g.var_node(v),
                    Op::Invalid => g.invalid(),
                    op => {
                        let src: Vec<NodeId> = n.src.iter().map(|&s| map[s]).collect();
                        let cast_to = (op == Op::Cast).then_some(n.dtype);
                        g.try_mk(op, cast_to, &src).ok()?
                    }
                },
            };
            map.push(id);
        }
        let outputs: Vec<NodeId> = self
            .roots
            .iter()
            .enumerate()
            .filter(|(k, _)| !matches!(edit, Some(&Edit::DropRoot(d)) if d == *k))
            .map(|(_, &r)| map[r])
            .collect();
        Some(Program {
            graph: g,
            outputs,
            expects: Vec::new(),
            header: self.header.clone(),
            // The roots carry their constraints (gated, docs/semantics.md).
            constraints: Vec::new(),
            expect_constraints: None,
        })
    }
}

/// The distinct values of `ks`, in order.
fn unique<const N: usize>(ks: [i64; N]) -> Vec<i64> {
    let mut out = Vec::with_capacity(N);
    for k in ks {
        if !out.contains(&k) {
            out.push(k);
        }
    }
    out
}

/// A constant of `dtype`, if `k` fits it.
fn constant(g: &mut Graph, k: i64, dtype: DType) -> Option<NodeId> {
    let (lo, hi) = dtype.bounds();
    if k < lo || k > hi {
        return None;
    }
    Some(match dtype {
        DType::Bool => g.bool_const(k != 0),
        dt => g.cnst(k, dt),
    })
}
