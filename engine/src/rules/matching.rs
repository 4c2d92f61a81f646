//! Matching a rule at a node and building its right side: the engine's
//! half of a rule (the verifier's half is the proof of the same text).
//!
//! A match binds a node to every pattern variable and a dtype to every
//! type variable. Commutative operators match in both operand orders; the
//! first binding whose guard holds (evaluated by [`super::guard`]) and
//! whose computed constants are defined gives the replacement.

use super::ast::{resolve_ty, Binding, Pat, Rule, Ty};
use super::guard::{helper, holds_at, range_at, AtMatch, GVal};
use crate::ir::dtype::Width;
use crate::ir::{DType, Graph, NodeId, Op};
use crate::meaning::interp::{self, Val};

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
        if !could_match(g, self, &self.lhs, n, SHAPE_DEPTH) {
            return None;
        }
        let mut b = self.new_binding();
        let mut found: Option<Binding> = None;
        {
            let graph: &Graph = g;
            let mut accept = |b: &mut Binding| -> bool {
                if !holds_at(graph, self, b, w) {
                    return false;
                }
                if !computed_ok(&self.rhs, graph, self, b, w) {
                    return false;
                }
                found = Some(b.clone());
                true
            };
            if !match_pat(graph, self, &self.lhs, n, &mut b, &mut accept) {
                return None;
            }
        }
        let b = found?;
        build(g, self, &self.rhs, &b, w)
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

/// The type variables one matching step bound, to unbind if it fails
/// (inline: most steps bind one or none, and a heap list per step was a
/// measurable part of matching).
type Undo = smallvec::SmallVec<[usize; 2]>;

fn ty_matches(t: Ty, d: DType, rule: &Rule, b: &mut Binding, undo: &mut Undo) -> bool {
    match t {
        Ty::Fixed(f) => f == d,
        Ty::Var(k) => match b.types[k] {
            Some(x) => x == d,
            None => {
                if !rule.tyvars[k].domain.contains(&d) {
                    return false;
                }
                b.types[k] = Some(d);
                undo.push(k);
                true
            }
        },
    }
}

/// How deep [`could_match`] looks.
const SHAPE_DEPTH: u32 = 3;

/// A quick structural test, without bindings: false only if `p` cannot
/// match `n` (ops, constants and literals disagree within `depth` levels).
/// Most rules tried at a node fail here, before a binding is allocated:
/// that is most of the rewriter's time on a large input.
fn could_match(g: &Graph, rule: &Rule, p: &Pat, n: NodeId, depth: u32) -> bool {
    let node = g.node(n);
    match p {
        Pat::Var(v) => !rule.vars[*v].is_const || node.as_const().is_some(),
        Pat::Lit(v, _) => node.as_const() == Some(*v),
        Pat::Invalid => node.op == Op::Invalid,
        Pat::Op(op, _, args) => {
            if node.op != *op {
                return false;
            }
            if depth == 0 {
                return true;
            }
            let src = node.src();
            let in_order = |s: &[NodeId]| {
                args.iter()
                    .zip(s)
                    .all(|(a, &c)| could_match(g, rule, a, c, depth - 1))
            };
            in_order(src) || (op.is_commutative() && in_order(&[src[1], src[0]]))
        }
        Pat::Computed(_) | Pat::Bound(..) | Pat::Helper(..) => true,
    }
}

type Cont<'a> = dyn FnMut(&mut Binding) -> bool + 'a;

/// Matches pattern `p` against node `n`, calling `k` for every way it
/// matches until `k` accepts (returns true). Bindings made here are undone
/// before returning false.
fn match_pat(g: &Graph, rule: &Rule, p: &Pat, n: NodeId, b: &mut Binding, k: &mut Cont) -> bool {
    crate::deep::grow(|| {
        let node = g.node(n);
        let mut undo = Undo::new();
        let ok = match p {
            Pat::Var(v) => {
                let pv = &rule.vars[*v];
                match b.nodes[*v] {
                    Some(bound) => bound == n && k(b),
                    None => {
                        if (pv.is_const && node.as_const().is_none())
                            || !ty_matches(pv.ty, node.dtype, rule, b, &mut undo)
                        {
                            false
                        } else {
                            b.nodes[*v] = Some(n);
                            let r = k(b);
                            if !r {
                                b.nodes[*v] = None;
                            }
                            r
                        }
                    }
                }
            }
            Pat::Lit(v, t) => {
                node.as_const() == Some(*v)
                    && ty_matches(*t, node.dtype, rule, b, &mut undo)
                    && k(b)
            }
            Pat::Invalid => node.op == Op::Invalid && k(b),
            Pat::Op(op, t, args) => {
                if node.op != *op || !ty_matches(*t, node.dtype, rule, b, &mut undo) {
                    false
                } else {
                    let src = node.src();
                    // Operand dtypes must agree with the pattern's too; for most
                    // ops they follow from the result, for comparisons and casts
                    // the operand patterns check them.
                    if match_seq(g, rule, args, src, b, k) {
                        true
                    } else if op.is_commutative() {
                        let swapped = [src[1], src[0]];
                        match_seq(g, rule, args, &swapped, b, k)
                    } else {
                        false
                    }
                }
            }
            Pat::Computed(_) | Pat::Bound(..) | Pat::Helper(..) => {
                unreachable!("computed constants only appear on the right")
            }
        };
        if !ok {
            for t in undo {
                b.types[t] = None;
            }
        }
        ok
    })
}

fn match_seq(
    g: &Graph,
    rule: &Rule,
    pats: &[Pat],
    nodes: &[NodeId],
    b: &mut Binding,
    k: &mut Cont,
) -> bool {
    crate::deep::grow(|| match pats.split_first() {
        None => k(b),
        Some((p, rest)) => match_pat(g, rule, p, nodes[0], b, &mut |b: &mut Binding| {
            match_seq(g, rule, rest, &nodes[1..], b, k)
        }),
    })
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
                let vals: Option<Vec<Val>> = args
                    .iter()
                    .map(|a| eval_computed(g, rule, a, b, w))
                    .collect();
                let dts: Vec<DType> = args.iter().map(|a| bound_dtype(rule, a, b)).collect();
                interp::apply(*op, resolve_ty(*t, &b.types), &vals?, &dts, w).ok()
            }
            Pat::Computed(inner) => eval_computed(g, rule, inner, b, w),
            Pat::Bound(v, hi) => {
                let (lo, h) = range_at(g.node(b.nodes[*v]?), w)?;
                Some(Val::Int(if *hi { h } else { lo }))
            }
            Pat::Helper(h, args) => {
                let mut vals = Vec::with_capacity(args.len());
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
                let src: Option<Vec<NodeId>> =
                    args.iter().map(|a| build(g, rule, a, b, w)).collect();
                let src = src?;
                let to = resolve_ty(*t, &b.types);
                g.try_mk(*op, (*op == Op::Cast).then_some(to), &src).ok()?
            }
        })
    })
}
