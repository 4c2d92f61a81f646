//! The simplifier under test: tileproof's own engine, in process, or a
//! peer's simplifier behind the line protocol (`crate::peer`,
//! `docs/protocol.md`). Campaigns, checks, shrinking, the corpus and replay
//! take a [`Subject`], so the engine is one simplifier among others and
//! there is one code path.
//!
//! A subject declares a [`Profile`]: the ops it accepts, whether it has
//! `invalid`, and how its integers behave. Generated cases are projected
//! onto the profile ([`Profile::project`]) before the subject sees them, and
//! its answers are judged at the profile's width: a finding must be a real
//! disagreement under the subject's own semantics.

use crate::backend::{ReproducerSpec, Run, Script};
use crate::bounds::PeerBounds;
use crate::kind::Kind;
use engine::dtype::{DType, Width};
use engine::ir::{Graph, NodeId, Op, VarDecl};
use engine::op::Part;
use engine::rewrite::Simplifier;
use engine::semantics::{Model, Partial};
use rustc_hash::FxHashMap;

/// How a subject's integers behave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Integers {
    /// Mathematical integers (tinygrad). Checked at 64 bits (no generated
    /// source comes near it); a failing point is confirmed with the exact
    /// interpreter at [`Profile::confirm_width`], so that an overflow only
    /// a 64-bit check sees is never reported as the subject's.
    Unbounded,
    /// `index` arithmetic at a width, overflow assumed impossible (TVM's
    /// int32/int64 variables, tileproof's engine): a point counts only where
    /// the source is defined at that width.
    Fixed(Width),
}

/// What a subject accepts and how its answers are judged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Profile {
    /// The non-leaf ops it accepts (an answer may use any op).
    pub ops: Vec<Op>,
    /// It has the masked-lane value `invalid`, as the arm of a `where` (a
    /// gate) and under ops on gated values.
    pub invalid: bool,
    /// It also takes `invalid` anywhere else (a bare `invalid + 1`, a
    /// comparison of `invalid`): tileproof's engine does; a peer's IR
    /// (tinygrad's) builds `invalid` only as a gate.
    pub bare_invalid: bool,
    pub integers: Integers,
    /// It accepts variables of dtype bool.
    pub bool_vars: bool,
    /// It accepts `i32`/`i64` values and casts (the engine); a peer speaks
    /// `index` and `bool` only.
    pub concrete_dtypes: bool,
    /// Its own pipeline may compare a value that may be `invalid` (the
    /// engine's may). tinygrad's never does: a comparison of a gated value
    /// is not an input it is built for, so campaigns do not spend time on
    /// it, and a finding on one is `outside-input-language`.
    pub invalid_compared: bool,
    /// Its input language is affine (MLIR's affine expressions): a product
    /// has a constant factor, and a quotient or remainder a positive
    /// constant divisor. Campaigns build only such cases, and a finding on
    /// another is `outside-input-language`.
    pub affine: bool,
    /// Every quotient and remainder of its input has a positive constant
    /// divisor (Halide, whose Euclidean `/` and `%` are tileproof's floor
    /// family only there): campaigns build only such cases, and a finding
    /// on another is `outside-input-language`. Implied by `affine`.
    pub positive_divisors: bool,
    /// It computes every point of a case's domain at once (Halide realizes
    /// a Func over its whole bounded region): a source undefined at one
    /// point (an overflow) makes the computation undefined, so such a case
    /// means nothing to it and is not judged (checks::answer).
    pub defined_everywhere: bool,
    /// What the subject declares a division by zero or an out-of-range
    /// shift to do (undefined in tileproof's and TVM's semantics; an
    /// unspecified value in tinygrad's). Answers are judged under the
    /// strict model first ([`Profile::model`]); a relaxation is recorded
    /// beside that verdict ([`Profile::relaxed`]), and the peer's backend
    /// decides.
    pub partial: Partial,
}

impl Profile {
    /// The engine's profile: every op, `invalid`, every dtype, `index` at
    /// `width`.
    pub fn engine(width: Width) -> Profile {
        Profile {
            ops: Op::all().collect(),
            invalid: true,
            bare_invalid: true,
            integers: Integers::Fixed(width),
            bool_vars: true,
            concrete_dtypes: true,
            invalid_compared: true,
            affine: false,
            positive_divisors: false,
            defined_everywhere: false,
            partial: Partial::Undefined,
        }
    }

    /// [`Profile::model`] at `width`: a check judged at another width than
    /// the profile's own.
    pub fn model_at(&self, width: Width) -> Model {
        Model {
            width,
            ..self.model()
        }
    }

    /// The model answers are judged under (by the JIT oracle): strict,
    /// whatever the profile declares of partial ops (a division by zero or
    /// an out-of-range shift is undefined anywhere, as in the engine's own
    /// semantics), with the profile's integers.
    pub fn model(&self) -> Model {
        Model {
            width: self.width(),
            partial: Partial::Undefined,
            unbounded: self.integers == Integers::Unbounded,
        }
    }

    /// The profile's own, relaxed model, when it declares one that differs
    /// from the strict model (tinygrad: partial ops give an unspecified
    /// value): its verdict is recorded beside the strict one.
    pub fn relaxed(&self) -> Option<Model> {
        (self.partial != Partial::Undefined).then(|| Model {
            partial: self.partial,
            ..self.model()
        })
    }

    /// The model a failing point is confirmed under (by the interpreter):
    /// the strict model at [`Profile::confirm_width`].
    pub fn confirm_model(&self) -> Model {
        Model {
            width: self.confirm_width(),
            ..self.model()
        }
    }

    /// The width answers are checked at (by the JIT oracle).
    pub fn width(&self) -> Width {
        match self.integers {
            Integers::Unbounded => Width::W64,
            Integers::Fixed(w) => w,
        }
    }

    /// The width a failing point is confirmed at (by the interpreter):
    /// wider than any check for unbounded integers.
    pub fn confirm_width(&self) -> Width {
        match self.integers {
            Integers::Unbounded => Width(126),
            Integers::Fixed(w) => w,
        }
    }

    pub fn allows(&self, op: Op) -> bool {
        match op {
            Op::Const(_) | Op::Var(_) => true,
            Op::Invalid => self.invalid,
            Op::Cast => self.concrete_dtypes,
            op => self.ops.contains(&op),
        }
    }

    /// Every node of `roots` is something the subject accepts.
    pub fn covers(&self, g: &Graph, roots: &[NodeId]) -> bool {
        g.reachable(roots).into_iter().all(|id| {
            let n = g.node(id);
            self.allows(n.op)
                && (self.concrete_dtypes || matches!(n.dtype, DType::Index | DType::Bool))
                && (self.bool_vars || !matches!((n.op, n.dtype), (Op::Var(_), DType::Bool)))
                && (self.bare_invalid || !self.bare_invalid_operand(g, id))
                && (self.invalid_compared || !self.compares_invalid(g, id))
                && (!self.affine || affine_node(g, id))
                && (!self.positive_divisors || positive_divisor(g, id))
                && self.fits_width(g, id)
        })
    }

    /// A constant or variable bound of `id` fits the profile's width when
    /// that is fixed below 64 bits (what [`Profile::project`] cuts them to).
    fn fits_width(&self, g: &Graph, id: NodeId) -> bool {
        let Integers::Fixed(w) = self.integers else {
            return true;
        };
        if w.0 >= 64 {
            return true;
        }
        let fits = |v: i64| (w.min() as i64..=w.max() as i64).contains(&v);
        let n = g.node(id);
        match n.op {
            Op::Const(c) if n.dtype == DType::Index => fits(c),
            Op::Var(v) if n.dtype == DType::Index => {
                let d = g.var(v);
                fits(d.lo) && fits(d.hi)
            }
            _ => true,
        }
    }

    /// `id` is a comparison with an operand that may be `invalid`.
    fn compares_invalid(&self, g: &Graph, id: NodeId) -> bool {
        let n = g.node(id);
        n.op.class() == engine::op::Class::Compare
            && n.src().iter().any(|&s| g.node(s).maybe_invalid)
    }

    /// `id` takes `invalid` itself as an operand other than a `where` arm.
    fn bare_invalid_operand(&self, g: &Graph, id: NodeId) -> bool {
        let n = g.node(id);
        n.src()
            .iter()
            .enumerate()
            .any(|(i, &s)| g.node(s).op == Op::Invalid && !(n.op == Op::Where && i > 0))
    }

    /// The case rebuilt as the subject accepts it: an op it lacks becomes
    /// one of its ops of the same class and arity (a quotient stays a
    /// quotient, a remainder a remainder), or the operand it acts on;
    /// `invalid` becomes 0 when it has none; casts and concrete dtypes
    /// become `index` when it speaks `index` only; bool variables become a
    /// comparison of an index variable when it has no bool variables; at a
    /// fixed width below 64, constants and bounds are cut to it. A projected
    /// case is just another case: it need not mean what the original meant.
    /// Total: any case projects.
    pub fn project(&self, g: &Graph, roots: &[NodeId]) -> (Graph, Vec<NodeId>) {
        let mut out = Graph::new();
        let mut map: FxHashMap<NodeId, NodeId> = FxHashMap::default();
        let (lo, hi) = match self.integers {
            Integers::Fixed(w) if w.0 < 64 => (w.min() as i64, w.max() as i64),
            _ => (i64::MIN, i64::MAX),
        };
        let fit = |v: i64| v.clamp(lo, hi);
        for id in g.reachable(roots) {
            let n = g.node(id);
            let dtype = if self.concrete_dtypes || n.dtype == DType::Bool {
                n.dtype
            } else {
                DType::Index
            };
            let mut src: Vec<NodeId> = n.src().iter().map(|s| map[s]).collect();
            if self.invalid && !self.bare_invalid {
                // `invalid` stays only as the arm of a gate.
                for (i, s) in src.iter_mut().enumerate() {
                    if out.node(*s).op == Op::Invalid && !(n.op == Op::Where && i > 0) {
                        *s = out.cnst(0, DType::Index);
                    }
                }
            }
            if !self.invalid_compared && n.op.class() == engine::op::Class::Compare {
                // A comparison sees its operands with their gates opened.
                for s in src.iter_mut() {
                    if out.node(*s).maybe_invalid {
                        *s = without_invalid(&mut out, *s);
                    }
                }
            }
            if self.affine {
                make_affine(&mut out, n.op, &mut src, id);
            } else if self.positive_divisors {
                make_divisor_positive(&mut out, n.op, &mut src, id);
            }
            let new = match n.op {
                Op::Const(c) if dtype == DType::Bool => out.bool_const(c != 0),
                Op::Const(c) => {
                    let c = if dtype == DType::Index { fit(c) } else { c };
                    out.cnst(c, dtype)
                }
                Op::Var(v) => self.project_var(&mut out, g.var(v), dtype, &fit),
                Op::Invalid if self.invalid => out.invalid(),
                Op::Invalid => out.cnst(0, DType::Index),
                Op::Cast if self.concrete_dtypes => out.cast(n.dtype, src[0]),
                Op::Cast => src[0],
                op => self.project_op(&mut out, op, dtype, &src),
            };
            map.insert(id, new);
        }
        let new_roots = roots.iter().map(|r| map[r]).collect();
        (out, new_roots)
    }

    fn project_var(
        &self,
        out: &mut Graph,
        d: &VarDecl,
        dtype: DType,
        fit: &impl Fn(i64) -> i64,
    ) -> NodeId {
        let declared = |out: &mut Graph, name: &str, dt: DType, lo: i64, hi: i64| {
            match out.declare_var(name, dt, lo, hi) {
                Ok(v) => out.var_node(v),
                // A name clash with another dtype: a fresh name.
                Err(_) => {
                    let v = out
                        .declare_var(&format!("{name}_{}", out.vars().len()), dt, lo, hi)
                        .expect("a fresh name with valid bounds");
                    out.var_node(v)
                }
            }
        };
        if dtype == DType::Bool && !self.bool_vars {
            // `b` becomes `b_i != 0` over an index variable in [0, 1], or a
            // constant when the subject cannot compare either.
            let x = declared(out, &format!("{}_i", d.name), DType::Index, d.lo, d.hi);
            let zero = out.cnst(0, DType::Index);
            return match [Op::Ne, Op::Lt].into_iter().find(|&op| self.allows(op)) {
                Some(Op::Ne) => out.mk(Op::Ne, &[x, zero]),
                Some(_) => out.mk(Op::Lt, &[zero, x]),
                None => out.bool_const(d.lo != 0),
            };
        }
        let (lo, hi) = if dtype == DType::Index {
            (fit(d.lo), fit(d.hi))
        } else {
            (d.lo, d.hi)
        };
        declared(out, &d.name, dtype, lo, hi)
    }

    /// `op` over projected operands, or its stand-in.
    fn project_op(&self, out: &mut Graph, op: Op, dtype: DType, src: &[NodeId]) -> NodeId {
        let stand_in = if self.allows(op) {
            Some(op)
        } else {
            self.stand_in(op)
        };
        if let Some(s) = stand_in {
            if let Ok(id) = out.try_mk(s, None, src) {
                return id;
            }
        }
        // No op to stand in (or it does not type): an operand of its dtype
        // (the one it acts on), else a constant of that dtype.
        src.iter()
            .copied()
            .find(|&s| out.node(s).dtype == dtype)
            .unwrap_or_else(|| {
                if dtype == DType::Bool {
                    out.bool_const(false)
                } else {
                    out.cnst(0, dtype)
                }
            })
    }

    /// An op the subject has, of the same class and arity as `op`,
    /// preferring one of the same division part.
    fn stand_in(&self, op: Op) -> Option<Op> {
        let part = |o: Op| o.info().division.map(|(_, p)| p);
        let same = |o: &Op| o.class() == op.class() && o.arity() == op.arity();
        let candidates: Vec<Op> = self.ops.iter().copied().filter(same).collect();
        let by_part = |p: Option<Part>| candidates.iter().copied().find(|&o| part(o) == p);
        by_part(part(op)).or_else(|| candidates.first().copied())
    }
}

/// `id` is affine: a product with a constant factor, a quotient or
/// remainder by a positive constant, or any other node.
fn affine_node(g: &Graph, id: NodeId) -> bool {
    let n = g.node(id);
    let konst = |i: usize| g.node(n.src()[i]).as_const();
    match n.op {
        Op::Mul => konst(0).is_some() || konst(1).is_some(),
        _ => positive_divisor(g, id),
    }
}

/// `id` is a quotient or remainder by a positive constant, or no division.
fn positive_divisor(g: &Graph, id: NodeId) -> bool {
    let n = g.node(id);
    n.op.info().division.is_none() || g.node(n.src()[1]).as_const().is_some_and(|c| c > 0)
}

/// The operands of `op` made affine ([`affine_node`]): a product of two
/// non-constants gets a constant second factor, a divisor that is not a
/// positive constant becomes one (a constant's magnitude, else a small
/// constant drawn from the node's id, so that cases keep some variety).
fn make_affine(out: &mut Graph, op: Op, src: &mut [NodeId], id: NodeId) {
    let small = 2 + (id.0 % 15) as i64;
    let konst = |out: &Graph, s: NodeId| out.node(s).as_const();
    match op {
        Op::Mul if konst(out, src[0]).is_none() && konst(out, src[1]).is_none() => {
            src[1] = out.cnst(small, DType::Index);
        }
        op => make_divisor_positive(out, op, src, id),
    }
}

/// The divisor of a quotient or remainder made a positive constant (a
/// constant's magnitude, else a small constant drawn from the node's id).
fn make_divisor_positive(out: &mut Graph, op: Op, src: &mut [NodeId], id: NodeId) {
    if op.info().division.is_none() {
        return;
    }
    let c = out.node(src[1]).as_const();
    if c.is_none_or(|c| c <= 0) {
        let d = c
            .and_then(i64::checked_abs)
            .filter(|&a| a > 0)
            .unwrap_or(2 + (id.0 % 15) as i64);
        src[1] = out.cnst(d, DType::Index);
    }
}

/// `id` rebuilt in `g` with every `invalid` below it replaced by 0.
fn without_invalid(g: &mut Graph, id: NodeId) -> NodeId {
    g.rebuild(&[id], |g, _, node, _| {
        (node.op == Op::Invalid).then(|| g.cnst(0, DType::Index))
    })[0]
}

/// A subject's answer to one case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// The simplified roots (added to the case's graph) and, for the engine,
    /// the firings per rule (indexed like [`Subject::rule_names`]).
    Simplified {
        roots: Vec<NodeId>,
        counts: Vec<usize>,
        /// A rule's patterns that made its rewrite, when its peer says.
        patterns: Vec<String>,
        /// The subject's own bounds of the source's nodes, when it gave
        /// them beside its answer (a peer asked `with_bounds`): the
        /// bounds check reads them rather than ask again.
        bounds: Option<PeerBounds>,
    },
    /// The subject declined the case (a peer's `unsupported`): not a
    /// finding.
    Unsupported(String),
    /// A single rule applied alone does not rewrite this case (its pattern
    /// does not match, or its function returned None: an `apply` request's
    /// `declined`): not a finding, and not a rewrite to judge.
    Declined(String),
}

/// A subject that failed on a case: a finding of `kind` (the engine's
/// rewriter hitting its cap; a peer's error, crash, hang or garbage).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{kind}: {message}")]
pub struct Refusal {
    pub kind: Kind,
    pub message: String,
}

/// A simplifier under test.
pub trait Subject: Sync {
    /// Its name and version, for reports and corpus headers.
    fn name(&self) -> String;
    fn profile(&self) -> &Profile;
    /// Rule names, indexed like [`Answer::Simplified`]'s counts (empty for
    /// a peer: its rules are its own).
    fn rule_names(&self) -> &[String];
    /// Where its rule `rule` is defined (`file:line`), when known: what a
    /// finding blamed on it names.
    fn rule_location(&self, _rule: &str) -> Option<String> {
        None
    }
    /// Simplifies `roots` of `g`, adding the answer's nodes to `g`.
    fn simplify(&self, g: &mut Graph, roots: &[NodeId]) -> Result<Answer, Refusal>;
    /// Case `roots` of `g` was read from a text whose expressions are
    /// `exprs` (one per root), which the printer writes again for the
    /// nodes it read back ([`engine::print::expr`]): a subject that sends
    /// its cases as text takes them from here rather than print them
    /// again. Nothing by default.
    fn printed(&self, _g: &Graph, _roots: &[NodeId], _exprs: Vec<String>) {}
    /// The engine's simplifier, for the checks that only concern tileproof's
    /// own engine (its ranges, idempotence, lowering).
    fn engine(&self) -> Option<&Simplifier<'_>> {
        None
    }
    /// One of its rules (named as in [`Subject::rule_names`]) alone at the
    /// root of a case, as a subject of its own, to blame a finding's step
    /// on ([`crate::blame`]); `None` when it cannot apply its rules one by
    /// one (tileproof's engine is blamed by its trace instead).
    fn rule_alone(&self, _rule: &str) -> Option<Box<dyn Subject + '_>> {
        None
    }
    /// The stages of its entry point's pipeline, in order, the last being
    /// the entry itself (a peer's hello `stages`: MLIR's canonicalize is
    /// `construct`, `parse`, `canonicalize`); empty when it is not one.
    fn stages(&self) -> &[String] {
        &[]
    }
    /// The pipeline up to and including its stage `name`, as a subject of
    /// its own whose answer is the expressions after that stage: where in
    /// the pipeline a finding first appears; `None` for a stage it does
    /// not have.
    fn stage(&self, _name: &str) -> Option<Box<dyn Subject + '_>> {
        None
    }
    /// The options a command line needs to run this subject again (for a
    /// finding's `# reproduce:` line): `--rules FILE` for candidate rules,
    /// `--simplifier CMD` for a peer.
    fn reproduce_args(&self) -> String;
    /// The backends its own compiled code can be run on (a peer's `run`
    /// capability); empty when it has none.
    fn backends(&self) -> &[String] {
        &[]
    }
    /// Compiles `roots` of `g` literally with `backend` and evaluates them
    /// at each point (an environment indexed like `g`'s variable table).
    fn run(
        &self,
        _g: &Graph,
        _roots: &[NodeId],
        backend: &str,
        _points: &[Vec<i64>],
    ) -> Result<Run, Refusal> {
        Ok(Run::Unsupported(format!(
            "{} has no backend `{backend}`",
            self.name()
        )))
    }
    /// The bounds the subject's own range analysis gives every node of
    /// `roots`, with its own op of each node when it names them (the
    /// protocol's `bounds` request: `crate::bounds`); `None` when it gives
    /// none.
    fn bounds(&self, _g: &Graph, _roots: &[NodeId]) -> Result<Option<PeerBounds>, Refusal> {
        Ok(None)
    }

    /// A standalone script that shows a finding on `roots` (the source)
    /// with only the subject's own code; `None` when it writes none.
    fn reproducer(
        &self,
        _g: &Graph,
        _roots: &[NodeId],
        _spec: &ReproducerSpec,
    ) -> Result<Option<Script>, Refusal> {
        Ok(None)
    }
}

/// tileproof's engine as a subject.
pub struct Engine<'r> {
    pub simp: Simplifier<'r>,
    profile: Profile,
    /// The candidate rule files laid over the built-in rules.
    rule_files: Vec<String>,
}

impl<'r> Engine<'r> {
    /// The engine with `simp` (its rules, width and cap), which was loaded
    /// with the candidate `rule_files` laid over the built-in rules.
    pub fn new(simp: Simplifier<'r>, rule_files: Vec<String>) -> Engine<'r> {
        Engine {
            profile: Profile::engine(simp.width),
            simp,
            rule_files,
        }
    }

    /// The engine judged under another profile (cases projected onto it):
    /// for comparing it with a peer on the same cases.
    pub fn with_profile(mut self, profile: Profile) -> Engine<'r> {
        self.profile = profile;
        self
    }
}

/// The engine's name as a subject (what corpus headers record).
pub fn engine_name() -> String {
    format!("tileproof engine {}", env!("CARGO_PKG_VERSION"))
}

impl Subject for Engine<'_> {
    fn name(&self) -> String {
        engine_name()
    }

    fn profile(&self) -> &Profile {
        &self.profile
    }

    fn rule_names(&self) -> &[String] {
        self.simp.rule_names()
    }

    fn simplify(&self, g: &mut Graph, roots: &[NodeId]) -> Result<Answer, Refusal> {
        match self.simp.simplify(g, roots, false) {
            Ok(o) => Ok(Answer::Simplified {
                counts: o.dense_counts(self.simp.rule_names().len()),
                roots: o.roots,
                patterns: Vec::new(),
                bounds: None,
            }),
            Err(e) => Err(Refusal {
                kind: Kind::Cap,
                message: e.to_string(),
            }),
        }
    }

    fn engine(&self) -> Option<&Simplifier<'_>> {
        Some(&self.simp)
    }

    fn reproduce_args(&self) -> String {
        self.rule_files
            .iter()
            .map(|f| format!("--rules {} ", shell_quote(f)))
            .collect()
    }
}

/// `s` quoted for a POSIX shell when it needs to be.
pub fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-=:,+@".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// A subject that answers every root plus one (wrong everywhere),
/// counting the cases it is asked.
#[cfg(test)]
pub(crate) struct PlusOne {
    pub(crate) profile: Profile,
    pub(crate) asked: std::sync::atomic::AtomicUsize,
}

#[cfg(test)]
impl Subject for PlusOne {
    fn name(&self) -> String {
        "plus-one".into()
    }
    fn profile(&self) -> &Profile {
        &self.profile
    }
    fn rule_names(&self) -> &[String] {
        &[]
    }
    fn simplify(&self, g: &mut Graph, roots: &[NodeId]) -> Result<Answer, Refusal> {
        self.asked
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let one = g.cnst(1, DType::Index);
        let roots = roots.iter().map(|&r| g.mk(Op::Add, &[r, one])).collect();
        Ok(Answer::Simplified {
            roots,
            counts: Vec::new(),
            patterns: Vec::new(),
            bounds: None,
        })
    }
    fn reproduce_args(&self) -> String {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::parse::parse_program;

    fn profile(ops: &[Op], invalid: bool) -> Profile {
        Profile {
            ops: ops.to_vec(),
            invalid,
            bare_invalid: false,
            integers: Integers::Fixed(Width(32)),
            bool_vars: false,
            concrete_dtypes: false,
            invalid_compared: true,
            affine: false,
            positive_divisors: false,
            defined_everywhere: false,
            partial: Partial::Undefined,
        }
    }

    #[test]
    fn an_affine_peer_gets_constant_factors_and_positive_constant_divisors() {
        let p = parse_program(
            "var x in [-9, 9]\nvar y in [1, 5]\nexpr x * y + x // y\nexpr (x mod -3) + x ceildiv 0 + y * 4\n",
        )
        .unwrap();
        let mut prof = profile(
            &[Op::Add, Op::Mul, Op::FloorDiv, Op::Mod, Op::CeilDiv],
            false,
        );
        assert!(prof.covers(&p.graph, &p.outputs));
        prof.affine = true;
        assert!(!prof.covers(&p.graph, &p.outputs));
        let (g, roots) = prof.project(&p.graph, &p.outputs);
        let text = engine::print::program(&g, &roots);
        assert!(prof.covers(&g, &roots), "{text}");
        // Kept where already affine: a constant factor, and -3 as 3.
        assert!(text.contains("y * 4") && text.contains("x mod 3"), "{text}");
    }

    #[test]
    fn a_case_with_a_constant_or_bound_past_the_profiles_width_is_not_covered_and_projects_into_it()
    {
        let p =
            parse_program("var x in [0, 5000000000]\nexpr x + 1\nexpr 7 * -4294967296\n").unwrap();
        let prof = profile(&[Op::Add, Op::Mul], false);
        assert!(!prof.covers(&p.graph, &p.outputs));
        let (g, roots) = prof.project(&p.graph, &p.outputs);
        let text = engine::print::program(&g, &roots);
        assert!(prof.covers(&g, &roots), "{text}");
        assert!(
            text.contains("2147483647") && text.contains("-2147483648"),
            "{text}"
        );
    }

    #[test]
    fn a_positive_divisor_peer_keeps_products_and_gets_positive_constant_divisors() {
        let p = parse_program(
            "var x in [-9, 9]\nvar y in [1, 5]\nexpr x * y + x // y\nexpr (x mod -3) + x // 0 + x mod 4\n",
        )
        .unwrap();
        let mut prof = profile(&[Op::Add, Op::Mul, Op::FloorDiv, Op::Mod], false);
        assert!(prof.covers(&p.graph, &p.outputs));
        prof.positive_divisors = true;
        assert!(!prof.covers(&p.graph, &p.outputs));
        let (g, roots) = prof.project(&p.graph, &p.outputs);
        let text = engine::print::program(&g, &roots);
        assert!(prof.covers(&g, &roots), "{text}");
        // A product of two variables stays; -3 becomes 3, a positive
        // constant divisor stays.
        assert!(
            text.contains("x * y") && text.contains("x mod 3") && text.contains("x mod 4"),
            "{text}"
        );
        assert!(!text.contains("// y") && !text.contains("// 0"), "{text}");
    }

    #[test]
    fn a_projected_case_uses_only_the_profile() {
        let p = parse_program(
            "var x in [-9, 9]\nvar b: bool\nvar n: i32 in [0, 5]\n\
             expr where(b, x ceildiv 4, invalid)\nexpr i64(n) << 2\nexpr index(n % 3) + 9999999999\n",
        )
        .unwrap();
        let prof = profile(
            &[Op::Add, Op::Mul, Op::FloorDiv, Op::Mod, Op::Lt, Op::Where],
            false,
        );
        let (g, roots) = prof.project(&p.graph, &p.outputs);
        assert!(
            prof.covers(&g, &roots),
            "{}",
            engine::print::program(&g, &roots)
        );
        let text = engine::print::program(&g, &roots);
        assert!(text.contains("x // 4"), "{text}");
        assert!(text.contains("2147483647"), "{text}");
    }

    #[test]
    fn invalid_stays_only_in_gates_for_a_peer_that_gates() {
        let p = parse_program(
            "var x in [0, 9]\nexpr where(x < 3, x, invalid) + (invalid <= x ? 0 : 0)\n",
        );
        assert!(p.is_err(), "the text format has no ?:");
        let p = parse_program("var x in [0, 9]\nexpr where(x < 3, x, invalid) + where(invalid <= x, 1, 0)\nexpr invalid + 1\n")
            .unwrap();
        let prof = profile(&[Op::Add, Op::Le, Op::Lt, Op::Where], true);
        let (g, roots) = prof.project(&p.graph, &p.outputs);
        let text = engine::print::program(&g, &roots);
        assert_eq!(
            text,
            "var x in [0, 9]\nexpr where(x < 3, x, invalid) + where(0 <= x, 1, 0)\nexpr 0 + 1\n"
        );
        assert!(prof.covers(&g, &roots));
    }

    #[test]
    fn a_peer_that_never_compares_invalid_gets_its_comparisons_ungated() {
        let p = parse_program(
            "var x in [0, 9]\nexpr where(where(x < 3, x, invalid) < 2, 1, 0)\nexpr where(x < 3, x, invalid) + 1\n",
        )
        .unwrap();
        let mut prof = profile(&[Op::Add, Op::Lt, Op::Where], true);
        assert!(prof.covers(&p.graph, &p.outputs));
        prof.invalid_compared = false;
        assert!(!prof.covers(&p.graph, &p.outputs));
        let (g, roots) = prof.project(&p.graph, &p.outputs);
        assert!(prof.covers(&g, &roots));
        assert_eq!(
            engine::print::program(&g, &roots),
            "var x in [0, 9]\nexpr where(where(x < 3, x, 0) < 2, 1, 0)\nexpr where(x < 3, x, invalid) + 1\n"
        );
    }

    #[test]
    fn the_engine_profile_projects_a_case_to_itself() {
        let p = parse_program("var x in [-9, 9]\nvar n: i32 in [0, 5]\nexpr where(x < 2, x ceildiv 4, invalid)\nexpr i64(n) << 2\n")
            .unwrap();
        let (g, roots) = Profile::engine(Width::W64).project(&p.graph, &p.outputs);
        assert_eq!(
            engine::print::program(&g, &roots),
            engine::print::program(&p.graph, &p.outputs)
        );
    }

    #[test]
    fn shell_quoting_keeps_plain_words_and_quotes_the_rest() {
        assert_eq!(shell_quote("adapters/x.py"), "adapters/x.py");
        assert_eq!(
            shell_quote("python3 a.py --entry sym"),
            "'python3 a.py --entry sym'"
        );
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
