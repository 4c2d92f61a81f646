//! Matching a rule at a node and building its right side: the engine's
//! half of a rule (the verifier's half is the proof of the same text).
//!
//! A match binds a node to every pattern variable and a dtype to every
//! type variable. Commutative operators match in both operand orders (in
//! order first; an earlier operation's order is changed only once every
//! order of the later ones failed); the first binding whose guard holds
//! (evaluated by [`super::guard`]) and whose computed constants are
//! defined gives the replacement. The left side is laid out once per rule
//! ([`Matcher`]) and matched by a loop, so a deep rule needs no stack.

use super::ast::{resolve_ty, Binding, Pat, Rule, Ty};
use super::guard::{helper, holds_at, range_at, AtMatch, GVal};
use crate::ir::dtype::Width;
use crate::ir::{DType, Graph, NodeId, Op};
use crate::meaning::interp::{self, Val};
use smallvec::SmallVec;

impl Rule {
    fn new_binding(&self) -> Binding {
        Binding {
            nodes: smallvec::smallvec![None; self.vars.len()],
            types: smallvec::smallvec![None; self.tyvars.len()],
        }
    }

    /// Tries the rule at node `n` for an engine whose `index` is 64 bits.
    pub fn apply(&self, g: &mut Graph, n: NodeId) -> Option<NodeId> {
        self.apply_at(g, n, Width::W64)
    }

    /// Tries the rule at node `n`, with `index` W bits wide: guards see
    /// ranges cut to W bits and W-bit dtype bounds, and constants on the
    /// right are computed at W bits, exactly as the proof at width W
    /// assumes. The first binding whose guard holds and whose computed
    /// constants are defined gives the replacement.
    pub fn apply_at(&self, g: &mut Graph, n: NodeId, w: Width) -> Option<NodeId> {
        Matcher::of(self).apply_at(self, g, n, w)
    }
}

/// A rule's left side laid out in pre-order, matched by a loop rather
/// than by recursion: each slot is one pattern node, read from its
/// parent's operand (swapped where a commutative parent is tried the
/// other way round). The rewriter makes one per rule once; matching a
/// rule at a node is then a walk over its slots.
#[derive(Clone, Debug)]
pub struct Matcher {
    slots: Vec<Slot>,
}

#[derive(Clone, Copy, Debug)]
struct Slot {
    what: SlotKind,
    /// The parent slot (the root's is unused) and the operand this is.
    parent: u32,
    pos: u8,
    /// An operation whose two operands may match either way round.
    commutative: bool,
}

#[derive(Clone, Copy, Debug)]
enum SlotKind {
    /// A pattern variable's first slot in pre-order: bound here, where its
    /// dtype is checked.
    Bind(usize, TyCheck),
    /// A later slot of a pattern variable: the node bound before.
    Same(usize),
    Lit(i64, TyCheck),
    Invalid,
    Op(Op, TyCheck),
}

/// A dtype check: fixed, or a type variable bound at its first check in
/// pre-order and compared at the later ones.
#[derive(Clone, Copy, Debug)]
enum TyCheck {
    Fixed(DType),
    Bind(usize),
    Same(usize),
}

impl Matcher {
    /// The slots of `rule`'s left side, in pre-order (the order the
    /// operands are matched in, whichever way round each is taken).
    pub fn of(rule: &Rule) -> Matcher {
        let mut slots = Vec::new();
        let mut var_seen = vec![false; rule.vars.len()];
        let mut ty_seen = vec![false; rule.tyvars.len()];
        let mut ty = |t: Ty| match t {
            Ty::Fixed(d) => TyCheck::Fixed(d),
            Ty::Var(k) if std::mem::replace(&mut ty_seen[k], true) => TyCheck::Same(k),
            Ty::Var(k) => TyCheck::Bind(k),
        };
        // Pre-order with an explicit stack: a generated rule may be deep.
        let mut todo: Vec<(&Pat, u32, u8)> = vec![(&rule.lhs, 0, 0)];
        while let Some((p, parent, pos)) = todo.pop() {
            let (what, commutative) = match p {
                Pat::Var(v) if std::mem::replace(&mut var_seen[*v], true) => {
                    (SlotKind::Same(*v), false)
                }
                Pat::Var(v) => (SlotKind::Bind(*v, ty(rule.vars[*v].ty)), false),
                Pat::Lit(v, t) => (SlotKind::Lit(*v, ty(*t)), false),
                Pat::Invalid => (SlotKind::Invalid, false),
                Pat::Op(op, t, args) => {
                    let me = slots.len() as u32;
                    for (i, a) in args.iter().enumerate().rev() {
                        todo.push((a, me, i as u8));
                    }
                    (
                        SlotKind::Op(*op, ty(*t)),
                        op.is_commutative() && args.len() == 2,
                    )
                }
                Pat::Computed(_) | Pat::Bound(..) | Pat::Helper(..) => {
                    unreachable!("computed constants only appear on the right")
                }
            };
            slots.push(Slot {
                what,
                parent,
                pos,
                commutative,
            });
        }
        Matcher { slots }
    }

    /// [`Rule::apply_at`] with this matcher (made from `rule`).
    pub fn apply_at(&self, rule: &Rule, g: &mut Graph, n: NodeId, w: Width) -> Option<NodeId> {
        let mut b = rule.new_binding();
        let graph: &Graph = g;
        let found = self.first(graph, rule, n, &mut b, |b| {
            holds_at(graph, rule, b, w) && computed_ok(&rule.rhs, graph, rule, b, w)
        });
        if !found {
            return None;
        }
        build(g, rule, &rule.rhs, &b, w)
    }

    /// Matches the left side at `n`, trying every way it matches (the
    /// operands of a commutative operation in order, then swapped; an
    /// earlier slot's choice before a later one's) until `accept` takes
    /// the binding, which is left in `b`.
    fn first(
        &self,
        g: &Graph,
        rule: &Rule,
        n: NodeId,
        b: &mut Binding,
        mut accept: impl FnMut(&Binding) -> bool,
    ) -> bool {
        let len = self.slots.len();
        // The node each slot matched, and whether a commutative slot's
        // operands are taken swapped; every slot from `i` on is unswapped.
        // On the stack for a rule of the usual size.
        let (mut at_buf, mut swapped_buf) = ([NodeId::NONE; 16], [false; 16]);
        let (mut at_heap, mut swapped_heap) = (Vec::new(), Vec::new());
        let (at, swapped) = if len <= 16 {
            (&mut at_buf[..len], &mut swapped_buf[..len])
        } else {
            at_heap.resize(len, NodeId::NONE);
            swapped_heap.resize(len, false);
            (&mut at_heap[..], &mut swapped_heap[..])
        };
        let mut i = 0;
        loop {
            let ok = if i == len {
                if accept(b) {
                    return true;
                }
                false
            } else {
                let s = &self.slots[i];
                let node = if i == 0 {
                    n
                } else {
                    let p = s.parent as usize;
                    let pos = if swapped[p] { 1 - s.pos } else { s.pos };
                    g.node(at[p]).src()[pos as usize]
                };
                at[i] = node;
                Matcher::check(g, rule, s.what, node, b)
            };
            if ok {
                i += 1;
                continue;
            }
            // The next way round: the latest commutative slot before `i`
            // not yet swapped is swapped, and every slot after it unswapped.
            let Some(j) = (0..i)
                .rev()
                .find(|&j| self.slots[j].commutative && !swapped[j])
            else {
                return false;
            };
            swapped[j] = true;
            for s in &mut swapped[j + 1..i] {
                *s = false;
            }
            i = j + 1;
        }
    }

    /// Whether `node` is what slot `what` asks for, binding what it binds.
    #[inline]
    fn check(g: &Graph, rule: &Rule, what: SlotKind, n: NodeId, b: &mut Binding) -> bool {
        let node = g.node(n);
        match what {
            SlotKind::Same(var) => b.nodes[var] == Some(n),
            SlotKind::Bind(var, t) => {
                if rule.vars[var].is_const && node.as_const().is_none()
                    || !ty_check(t, node.dtype, rule, b)
                {
                    return false;
                }
                b.nodes[var] = Some(n);
                true
            }
            SlotKind::Lit(v, t) => node.as_const() == Some(v) && ty_check(t, node.dtype, rule, b),
            SlotKind::Invalid => node.op == Op::Invalid,
            SlotKind::Op(op, t) => node.op == op && ty_check(t, node.dtype, rule, b),
        }
    }
}

fn ty_check(t: TyCheck, d: DType, rule: &Rule, b: &mut Binding) -> bool {
    match t {
        TyCheck::Fixed(f) => f == d,
        TyCheck::Same(k) => b.types[k] == Some(d),
        TyCheck::Bind(k) => {
            b.types[k] = Some(d);
            rule.tyvars[k].domain.contains(&d)
        }
    }
}

/// Why [`Rule::instantiate_rhs`] refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InstantiateError {
    #[error(
        "{nodes} node(s) and {types} dtype(s) for {vars} pattern and {tyvars} type variable(s)"
    )]
    Arity {
        nodes: usize,
        types: usize,
        vars: usize,
        tyvars: usize,
    },
    #[error("pattern variable `{var}` is {want}, its node {got}")]
    Dtype {
        var: String,
        want: DType,
        got: DType,
    },
    #[error("constant variable `{0}` is bound to a node that is not a constant")]
    NotConstant(String),
    #[error("the guard does not hold at the nodes' ranges")]
    Guard,
    #[error("a constant computed on the right is undefined")]
    Computed,
    #[error("the right side does not build")]
    Build,
}

impl Rule {
    /// Fires the rule under a binding given rather than matched: `nodes[i]`
    /// is the node of pattern variable `i` (the nodes a left side was
    /// instantiated from), `types[k]` the dtype of type variable `k`. The
    /// guard is evaluated at the engine's own ranges of those nodes and the
    /// right side's computed constants at width `w`, exactly as
    /// [`Rule::apply_at`] does; then the right side is built with the same
    /// node for every pattern variable. Nothing is matched, so a commutative
    /// operator cannot bind the variables another way.
    pub fn instantiate_rhs(
        &self,
        g: &mut Graph,
        nodes: &[NodeId],
        types: &[DType],
        w: Width,
    ) -> Result<NodeId, InstantiateError> {
        if nodes.len() != self.vars.len() || types.len() != self.tyvars.len() {
            return Err(InstantiateError::Arity {
                nodes: nodes.len(),
                types: types.len(),
                vars: self.vars.len(),
                tyvars: self.tyvars.len(),
            });
        }
        let b = Binding {
            nodes: nodes.iter().map(|&n| Some(n)).collect(),
            types: types.iter().map(|&d| Some(d)).collect(),
        };
        for (pv, &n) in self.vars.iter().zip(nodes) {
            let node = g.node(n);
            let want = resolve_ty(pv.ty, &b.types);
            if node.dtype != want {
                return Err(InstantiateError::Dtype {
                    var: pv.name.clone(),
                    want,
                    got: node.dtype,
                });
            }
            if pv.is_const && node.as_const().is_none() {
                return Err(InstantiateError::NotConstant(pv.name.clone()));
            }
        }
        if !holds_at(g, self, &b, w) {
            return Err(InstantiateError::Guard);
        }
        if !computed_ok(&self.rhs, g, self, &b, w) {
            return Err(InstantiateError::Computed);
        }
        build(g, self, &self.rhs, &b, w).ok_or(InstantiateError::Build)
    }
}

/// Evaluates a computed (constants-only) template at 64 bits with the ops'
/// own semantics; `None` when it overflows or divides by zero.
pub fn eval_computed(g: &Graph, rule: &Rule, p: &Pat, b: &Binding, w: Width) -> Option<Val> {
    crate::deep::grow(|| {
        match p {
            Pat::Var(v) => {
                let n = g.node(b.nodes[*v]?);
                let c = n.as_const()? as i128;
                Some(if n.dtype == DType::Bool {
                    Val::Bool(c != 0)
                } else {
                    Val::Int(c)
                })
            }
            Pat::Lit(v, t) => Some(if resolve_ty(*t, &b.types) == DType::Bool {
                Val::Bool(*v != 0)
            } else {
                Val::Int(*v as i128)
            }),
            Pat::Op(op, t, args) => {
                let vals: Option<SmallVec<[Val; 3]>> = args
                    .iter()
                    .map(|a| eval_computed(g, rule, a, b, w))
                    .collect();
                let dts: SmallVec<[DType; 3]> =
                    args.iter().map(|a| bound_dtype(rule, a, b)).collect();
                interp::apply(*op, resolve_ty(*t, &b.types), &vals?, &dts, w).ok()
            }
            Pat::Computed(inner) => eval_computed(g, rule, inner, b, w),
            Pat::Bound(v, hi) => {
                let (lo, h) = range_at(g.node(b.nodes[*v]?), w)?;
                Some(Val::Int(if *hi { h } else { lo }))
            }
            Pat::Helper(h, args) => {
                let mut vals: SmallVec<[Option<i128>; 3]> = SmallVec::new();
                for a in args {
                    match eval_computed(g, rule, a, b, w)? {
                        Val::Int(v) => vals.push(Some(v)),
                        _ => return None,
                    }
                }
                let mut d = AtMatch {
                    graph: g,
                    rule,
                    binding: b,
                    width: w,
                };
                match helper(&mut d, *h, &vals) {
                    (GVal::N(Some(x)), Some(true)) => {
                        // The helper's value must fit the dtype it stands for.
                        let (lo, hi) = w.dtype_bounds(bound_dtype(rule, p, b));
                        (lo <= x && x <= hi).then_some(Val::Int(x))
                    }
                    _ => None,
                }
            }
            Pat::Invalid => None,
        }
    })
}

/// The dtype of a pattern under a binding (every type variable is bound by
/// the time the right side is built).
fn bound_dtype(rule: &Rule, p: &Pat, b: &Binding) -> DType {
    crate::deep::grow(|| match p {
        Pat::Var(v) | Pat::Bound(v, _) => resolve_ty(rule.vars[*v].ty, &b.types),
        Pat::Lit(_, t) | Pat::Op(_, t, _) => resolve_ty(*t, &b.types),
        Pat::Invalid => DType::Index,
        Pat::Computed(inner) => bound_dtype(rule, inner, b),
        Pat::Helper(_, args) => bound_dtype(rule, &args[0], b),
    })
}

fn computed_ok(p: &Pat, g: &Graph, rule: &Rule, b: &Binding, w: Width) -> bool {
    crate::deep::grow(|| match p {
        Pat::Computed(_) => matches!(
            eval_computed(g, rule, p, b, w),
            Some(Val::Int(_) | Val::Bool(_))
        ),
        Pat::Op(_, _, args) => args.iter().all(|a| computed_ok(a, g, rule, b, w)),
        _ => true,
    })
}

/// Builds the right side under a binding.
fn build(g: &mut Graph, rule: &Rule, p: &Pat, b: &Binding, w: Width) -> Option<NodeId> {
    crate::deep::grow(|| {
        Some(match p {
            Pat::Var(v) => b.nodes[*v]?,
            Pat::Lit(v, t) => g.cnst(*v, resolve_ty(*t, &b.types)),
            Pat::Invalid => g.invalid(),
            Pat::Bound(..) | Pat::Helper(..) => {
                unreachable!("bounds and helpers are wrapped as computed constants")
            }
            Pat::Computed(inner) => {
                let t = bound_dtype(rule, inner, b);
                match eval_computed(g, rule, inner, b, w)? {
                    Val::Int(v) => g.cnst(i64::try_from(v).ok()?, t),
                    Val::Bool(x) => g.bool_const(x),
                    _ => return None,
                }
            }
            Pat::Op(op, t, args) => {
                let src: Option<SmallVec<[NodeId; 3]>> =
                    args.iter().map(|a| build(g, rule, a, b, w)).collect();
                let src = src?;
                let to = resolve_ty(*t, &b.types);
                g.try_mk(*op, (*op == Op::Cast).then_some(to), &src).ok()?
            }
        })
    })
}

#[cfg(test)]
mod tests {
    use crate::rules::RuleSet;

    /// The one rule of `rule` at the one expression of `program`, printed.
    fn applied(rule: &str, program: &str) -> Option<String> {
        let set = RuleSet::parse("t.rules", rule).expect("parses");
        let mut p = crate::text::parse::parse_program(program).expect("parses");
        let r = set.rules().next().expect("one rule");
        let out = r.apply(&mut p.graph, p.outputs[0])?;
        Some(crate::text::print::expr(&p.graph, out))
    }

    #[test]
    fn a_commutative_operation_is_matched_the_other_way_round_when_the_guard_refuses_the_first() {
        let rule = "rule r: x * y => y if vmin(x) == 1 && vmax(x) == 1\n";
        assert_eq!(
            applied(rule, "var a in [0, 9]\nvar b in [1, 1]\nexpr a * b\n").as_deref(),
            Some("a")
        );
        assert_eq!(
            applied(rule, "var a in [1, 1]\nvar b in [0, 9]\nexpr a * b\n").as_deref(),
            Some("b")
        );
    }

    #[test]
    fn an_earlier_operand_is_taken_the_other_way_round_when_a_later_one_fails() {
        // `x` is `b` only with the first sum swapped: found after the
        // second sum fails both ways with `x` as `a`.
        let rule = "rule r: (x + y) * (x + z) => x\n";
        let vars = "var a in [0, 9]\nvar b in [0, 9]\nvar c in [0, 9]\n";
        assert_eq!(
            applied(rule, &format!("{vars}expr (a + b) * (b + c)\n")).as_deref(),
            Some("b")
        );
        assert_eq!(
            applied(rule, &format!("{vars}expr (a + b) * (c + c)\n")),
            None
        );
    }

    #[test]
    fn a_repeated_variable_matches_one_node_only() {
        let rule = "rule r: x - x => 0\n";
        let vars = "var a in [0, 9]\nvar b in [0, 9]\n";
        assert_eq!(
            applied(rule, &format!("{vars}expr a - a\n")).as_deref(),
            Some("0")
        );
        assert_eq!(applied(rule, &format!("{vars}expr a - b\n")), None);
    }
}
