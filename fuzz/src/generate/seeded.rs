//! The seeded generator: the peers' own test cases, pushed just past the
//! conditions their rules rely on.
//!
//! The converted suites ([`crate::suite`]: 1,947 inputs of exactly the
//! shapes the peers' rules were written for) are the best seeds a campaign
//! against a peer could have. A case here is one seed with up to four edits,
//! each drawn from the genome:
//!
//! - the division family of one division swapped (`//` <-> `/`, `mod` <-> `%`);
//! - the sign of one constant (a divisor, an offset) flipped;
//! - one variable's range widened across zero, or to the `i32` or `i64` edge
//!   (a profile at a narrower width cuts it to its own edge);
//! - one constant moved to a dtype extreme or a neighbour of one, or to a
//!   power of two and its neighbours;
//! - the operands of one non-commutative binary op swapped;
//! - one subterm replaced by a subterm of another seed (its variables
//!   mapped onto this case's);
//! - a comparison and a `where` wrapped around a root;
//! - a root combined by an arithmetic op with a `where` on a condition it
//!   already uses.
//!
//! Seeds of every suite go to every peer: a campaign projects each case onto
//! the peer's profile like any other. Deterministic for a genome.

use super::{Case, Family};
use crate::mutate::rebuild;
use crate::suite;
use arbitrary::{Arbitrary, Unstructured};
use engine::ir::{DType, Graph, NodeId, Op};
use engine::op::{Class, Family as F};
use engine::parse::Program;

/// Most edits applied to a seed.
pub const MAX_SEED_EDITS: usize = 4;

/// A seed and its edits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeededGenome {
    /// The seed, modulo the number of seeds.
    pub seed: u32,
    /// A second seed, for splicing.
    pub other: u32,
    pub edits: Vec<Edit>,
}

/// One edit: its kind (0..8, see the module documentation), which node or
/// variable it applies to (`at`, modulo the candidates), and a value that
/// picks among its variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edit {
    pub kind: u8,
    pub at: u16,
    pub value: u16,
}

impl<'a> Arbitrary<'a> for Edit {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Edit> {
        Ok(Edit {
            kind: u.int_in_range(0..=7)?,
            at: u16::arbitrary(u)?,
            value: u16::arbitrary(u)?,
        })
    }
}

impl<'a> Arbitrary<'a> for SeededGenome {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<SeededGenome> {
        let seed = u32::arbitrary(u)?;
        let other = u32::arbitrary(u)?;
        let n = u.int_in_range(0..=MAX_SEED_EDITS)?;
        let edits = (0..n)
            .map(|_| Edit::arbitrary(u))
            .collect::<Result<_, _>>()?;
        Ok(SeededGenome { seed, other, edits })
    }
}

/// Extreme constants and their neighbours.
const EXTREMES: [i64; 12] = [
    i32::MIN as i64,
    i32::MIN as i64 + 1,
    i32::MAX as i64 - 1,
    i32::MAX as i64,
    i64::MIN,
    i64::MIN + 1,
    i64::MAX - 1,
    i64::MAX,
    -1,
    0,
    1,
    2,
];

/// An instance of a peer's own rule (`tileproof_peer` protocol's
/// `instances`): a seed as good as a suite case, since it is exactly the
/// shape the rule was written for.
#[derive(Clone)]
pub struct RuleSeed {
    /// The peer's name for the rule.
    pub rule: String,
    pub program: Program,
}

impl std::fmt::Debug for RuleSeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let roots: Vec<String> = (self.program.outputs.iter())
            .map(|&r| engine::print::expr(&self.program.graph, r))
            .collect();
        write!(f, "RuleSeed({}: {})", self.rule, roots.join(", "))
    }
}

impl SeededGenome {
    /// Builds the case: the seed, then each edit that applies (an edit that
    /// does not apply, or would not type, is skipped).
    pub fn build(&self) -> Case {
        self.build_with(&[])
    }

    /// [`SeededGenome::build`] with `rule_seeds` in the pool: when there are
    /// any, an odd `seed` picks one of them (half the cases start from the
    /// peer's own rules, the other half from the suites).
    pub fn build_with(&self, rule_seeds: &[RuleSeed]) -> Case {
        let seeds = suite::seeds();
        let pick = |i: u32| -> (String, &Program) {
            if !rule_seeds.is_empty() && i % 2 == 1 {
                let r = &rule_seeds[(i / 2) as usize % rule_seeds.len()];
                (format!("rule {}", r.rule), &r.program)
            } else {
                let (suite_name, name, p) = &seeds[i as usize % seeds.len()];
                (format!("{suite_name} {name}"), p)
            }
        };
        let (seed_name, seed) = pick(self.seed);
        let (other_name, other) = pick(self.other);
        let mut g = seed.graph.clone();
        let mut roots = seed.outputs.clone();
        let mut done = Vec::new();
        for e in self.edits.iter().take(MAX_SEED_EDITS) {
            if let Some((ng, nr, what)) = apply(&g, &roots, e, &other.graph, &other.outputs) {
                (g, roots) = (ng, nr);
                done.push(what);
            }
        }
        let family = family_of(&g, &roots);
        let spliced = if done.iter().any(|d| d.starts_with("spliced")) {
            format!(" (with {other_name})")
        } else {
            String::new()
        };
        Case {
            description: format!(
                "generator seeded: {seed_name}{spliced}; edits: {}",
                if done.is_empty() {
                    "none".to_string()
                } else {
                    done.join(", ")
                }
            ),
            graph: g,
            roots,
            family,
        }
    }
}

/// The case's nominal division family: its first division's.
fn family_of(g: &Graph, roots: &[NodeId]) -> Family {
    g.reachable(roots)
        .into_iter()
        .find_map(|id| match g.node(id).op.info().division {
            Some((F::Trunc, _)) => Some(Family::Trunc),
            Some(_) => Some(Family::Floor),
            None => None,
        })
        .unwrap_or(Family::Floor)
}

/// The `at`-th (modulo) element of `xs`.
fn nth<T: Copy>(xs: &[T], at: u16) -> Option<T> {
    (!xs.is_empty()).then(|| xs[at as usize % xs.len()])
}

/// Applies one edit; `None` when it does not apply.
fn apply(
    g: &Graph,
    roots: &[NodeId],
    e: &Edit,
    og: &Graph,
    oroots: &[NodeId],
) -> Option<(Graph, Vec<NodeId>, String)> {
    let nodes = g.reachable(roots);
    let of = |pred: &dyn Fn(NodeId) -> bool| -> Vec<NodeId> {
        nodes.iter().copied().filter(|&id| pred(id)).collect()
    };
    let same = |_: u32, d: &engine::ir::VarDecl| (d.lo, d.hi);
    match e.kind {
        0 => {
            let t = nth(&of(&|id| g.node(id).op.info().division.is_some()), e.at)?;
            let (fam, part) = g.node(t).op.info().division?;
            let to = Op::division(if fam == F::Trunc { F::Floor } else { F::Trunc }, part)?;
            let (ng, nr) = replace_op(g, roots, t, to)?;
            Some((
                ng,
                nr,
                format!("family of `{}` swapped", g.node(t).op.name()),
            ))
        }
        1 | 3 => {
            let consts = of(&|id| {
                let n = g.node(id);
                n.dtype == DType::Index && matches!(n.op, Op::Const(c) if c != 0 || e.kind == 3)
            });
            let t = nth(&consts, e.at)?;
            let Op::Const(c) = g.node(t).op else {
                return None;
            };
            let v = if e.kind == 1 {
                c.checked_neg()?
            } else if e.value.is_multiple_of(3) {
                // A power of two or a neighbour of one.
                let p = 1i64 << (e.value / 3 % 62 + 1);
                p + (e.value as i64 / 186 % 3 - 1)
            } else {
                EXTREMES[e.value as usize % EXTREMES.len()]
            };
            let (ng, nr) = rebuild(g, roots, same, |out, old, new| {
                Some(if old == t {
                    out.cnst(v, DType::Index)
                } else {
                    new
                })
            })?;
            Some((ng, nr, format!("constant {c} -> {v}")))
        }
        2 => {
            let vars: Vec<u32> = g
                .reachable_vars(roots)
                .into_iter()
                .filter(|&v| g.var(v).dtype == DType::Index)
                .collect();
            let v = nth(&vars, e.at)?;
            let d = g.var(v);
            let (lo, hi) = match e.value % 5 {
                0 => (d.lo.min(-d.hi.saturating_add(1)).min(-1), d.hi.max(1)),
                1 => (i32::MIN as i64, d.hi),
                2 => (d.lo, i32::MAX as i64),
                3 => (i64::MIN, d.hi),
                _ => (d.lo, i64::MAX),
            };
            let (ng, nr) = rebuild(
                g,
                roots,
                |u, du| if u == v { (lo, hi) } else { (du.lo, du.hi) },
                |_, _, new| Some(new),
            )?;
            Some((ng, nr, format!("{} in [{lo}, {hi}]", d.name)))
        }
        4 => {
            let t = nth(
                &of(&|id| {
                    let n = g.node(id);
                    n.op.arity() == 2 && !n.op.is_commutative() && n.op.class() != Class::Cast
                }),
                e.at,
            )?;
            let (ng, nr) = rebuild(g, roots, same, |out, old, new| {
                if old != t {
                    return Some(new);
                }
                let s = out.node(new).src().to_vec();
                out.try_mk(out.node(new).op, None, &[s[1], s[0]]).ok()
            })?;
            Some((
                ng,
                nr,
                format!("operands of `{}` swapped", g.node(t).op.name()),
            ))
        }
        5 => splice(g, roots, e, og, oroots),
        6 => {
            let r = nth(&(0..roots.len()).collect::<Vec<_>>(), e.at)?;
            let mut ng = g.clone();
            let root = roots[r];
            if ng.node(root).dtype != DType::Index {
                return None;
            }
            let c = ng.cnst(e.value as i64 % 17 - 8, DType::Index);
            let cmp = [Op::Lt, Op::Le, Op::Eq, Op::Ne][e.value as usize / 17 % 4];
            let cond = ng.mk(cmp, &[root, c]);
            let w = ng.mk(Op::Where, &[cond, root, c]);
            let mut nr = roots.to_vec();
            nr[r] = w;
            Some((ng, nr, format!("root {} wrapped in a `where`", r + 1)))
        }
        _ => {
            // A root combined with a `where` on a condition it uses.
            let conds: Vec<NodeId> = of(&|id| g.node(id).op == Op::Where)
                .into_iter()
                .map(|w| g.node(w).src()[0])
                .collect();
            let c = nth(&conds, e.at)?;
            let r = nth(&(0..roots.len()).collect::<Vec<_>>(), e.value)?;
            if g.node(roots[r]).dtype != DType::Index {
                return None;
            }
            let mut ng = g.clone();
            let ints: Vec<NodeId> = nodes
                .iter()
                .copied()
                .filter(|&id| g.node(id).dtype == DType::Index && g.node(id).op != Op::Invalid)
                .collect();
            let a = nth(&ints, e.value / 7)?;
            let b = nth(&ints, e.value / 49)?;
            let w = ng.mk(Op::Where, &[c, a, b]);
            let op = [Op::Add, Op::Sub, Op::Mul, Op::Max, Op::Min][e.value as usize % 5];
            let combined = ng.try_mk(op, None, &[roots[r], w]).ok()?;
            let mut nr = roots.to_vec();
            nr[r] = combined;
            Some((
                ng,
                nr,
                format!(
                    "root {} combined by `{}` with a `where` on its condition",
                    r + 1,
                    op.name()
                ),
            ))
        }
    }
}

/// `roots` of `g` with node `t`'s op replaced by `to` (same operands).
fn replace_op(g: &Graph, roots: &[NodeId], t: NodeId, to: Op) -> Option<(Graph, Vec<NodeId>)> {
    rebuild(
        g,
        roots,
        |_, d| (d.lo, d.hi),
        |out, old, new| {
            if old != t {
                return Some(new);
            }
            let s = out.node(new).src().to_vec();
            out.try_mk(to, None, &s).ok()
        },
    )
}

/// One `index` subterm of the case replaced by one of another seed, whose
/// `index` variables become this case's (by position, modulo their count).
fn splice(
    g: &Graph,
    roots: &[NodeId],
    e: &Edit,
    og: &Graph,
    oroots: &[NodeId],
) -> Option<(Graph, Vec<NodeId>, String)> {
    let mine: Vec<NodeId> = g
        .reachable(roots)
        .into_iter()
        .filter(|&id| g.node(id).dtype == DType::Index && g.node(id).op != Op::Invalid)
        .collect();
    let theirs: Vec<NodeId> = og
        .reachable(oroots)
        .into_iter()
        .filter(|&id| {
            let n = og.node(id);
            n.dtype == DType::Index && n.op.arity() > 0
        })
        .collect();
    let t = nth(&mine, e.at)?;
    let from = nth(&theirs, e.value)?;
    let my_vars: Vec<u32> = g
        .reachable_vars(roots)
        .into_iter()
        .filter(|&v| g.var(v).dtype == DType::Index)
        .collect();
    if my_vars.is_empty() {
        return None;
    }
    let mut their_vars = og.reachable_vars(&[from]);
    their_vars.retain(|&v| og.var(v).dtype == DType::Index);
    // Variables keep their indices through `rebuild`: the piece is built
    // into the new graph where `t` was, over this case's variables.
    let (ng, nr) = rebuild(
        g,
        roots,
        |_, d| (d.lo, d.hi),
        |out, old, new| {
            if old != t {
                return Some(new);
            }
            let mut map: rustc_hash::FxHashMap<NodeId, NodeId> = rustc_hash::FxHashMap::default();
            for id in og.reachable(&[from]) {
                let n = og.node(id);
                let built = match n.op {
                    Op::Const(c) if n.dtype == DType::Bool => out.bool_const(c != 0),
                    Op::Const(c) => out.cnst(c, n.dtype),
                    Op::Invalid => out.invalid(),
                    Op::Var(v) if n.dtype == DType::Index => {
                        let k = their_vars.iter().position(|&u| u == v)?;
                        out.var_node(my_vars[k % my_vars.len()])
                    }
                    Op::Var(_) => return None,
                    op => {
                        let src: Vec<NodeId> = n.src().iter().map(|s| map[s]).collect();
                        let cast_to = (op == Op::Cast).then_some(n.dtype);
                        out.try_mk(op, cast_to, &src).ok()?
                    }
                };
                map.insert(id, built);
            }
            map.get(&from).copied()
        },
    )?;
    Some((ng, nr, "spliced a subterm of another seed".to_string()))
}
