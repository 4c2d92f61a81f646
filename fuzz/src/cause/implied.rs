//! A range analysis the peer does not expose, read from its folds.
//!
//! MLIR's `canonicalize` folds `e floordiv C` to a constant when the bounds
//! it computes for `e` lie in one block of `C`, and `e mod C` to `e - q*C`
//! when they lie in block `q`; its bound of a `mod` is wrong, and each
//! expression holding one is a finding of another shape. A fold to `k`
//! needs `e` in `[k*C, k*C + C - 1]` (ceildiv: `[(k-1)*C + 1, k*C]`; a mod
//! folded to `e - q*C`: `[q*C, q*C + C - 1]`): where `e` takes a value
//! outside, the stage folded with a bound of `e` that excludes it, and the
//! defect is that bound, by `e`'s op, whatever expression held it.
//!
//! Keyed by `e`'s op, nodes that change nothing (`x * 1`, `x // 1`, `x +
//! 0`) looked through; or as [`BoundOf::Overflow`] where a node of `e` has
//! values past 64 bits over the integers: a bound computed in 64-bit
//! arithmetic wraps there (MLIR's flattened sum), whichever op is on top.
//! A fold whose answer overflows at every point cannot be read for the
//! block it chose; where the numerator's values pass 64 bits, it is that
//! wrapped bound too ([`undefined_fold`]).
//!
//! A quotient or remainder of a sum is split first (`(a + b*C) // C` is
//! `a // C + b`): where the stage does not fold the whole, the part its
//! multiples of `C` leave, `a // C` (or `a mod C`), is asked alone.
//!
//! Read only from a stage after the first (one the earlier stages get
//! right): MLIR's first stage builds the expressions with no ranges at
//! all, so a wrong fold there is not a bound's.

use super::{BoundOf, Cause};
use crate::bounds::{self, Bound};
use crate::checks::{self, CheckConfig, Checked};
use crate::kind::Kind;
use crate::oracle::Domain;
use crate::subject::Subject;
use engine::interp;
use engine::ir::ranges::{self, Range};
use engine::ir::{DType, Graph, NodeId, Op};
use engine::semantics::Model;
use engine::walk::{self, Purpose};

/// The interval the answer `a` for `e op c` (c > 0) needs `e` in: a
/// quotient folded to a constant, a remainder folded to `e` less a
/// multiple of `c` (written so, or `shift`: `a - e`, the same at every
/// point sampled, for an answer that rewrote `e` too).
fn needed(
    g: &Graph,
    op: Op,
    e: NodeId,
    c: i64,
    a: NodeId,
    shift: Option<i128>,
) -> Option<(i64, i64)> {
    let c = i128::from(c);
    match (op, g.node(a).op) {
        (Op::FloorDiv, Op::Const(k)) => Some(block(i128::from(k), c)),
        (Op::CeilDiv, Op::Const(k)) => {
            Some(in_64_bits((i128::from(k) - 1) * c + 1, i128::from(k) * c))
        }
        (Op::Mod, _) => {
            // `e`, `e + d` or `d + e` as written, else as sampled.
            let written = match g.node(a).src() {
                _ if a == e => Some(0),
                [x, y] if g.node(a).op == Op::Add && *x == e => {
                    g.node(*y).as_const().map(i128::from)
                }
                [x, y] if g.node(a).op == Op::Add && *y == e => {
                    g.node(*x).as_const().map(i128::from)
                }
                _ => None,
            };
            shifted_block(written.or(shift)?, c)
        }
        _ => None,
    }
}

/// Block `q` of `c`: the values `e` whose quotient by `c` is `q`.
fn block(q: i128, c: i128) -> (i64, i64) {
    in_64_bits(q * c, q * c + c - 1)
}

/// The block `e` must lie in for `e mod c` to be `e + d` (`d` a multiple
/// of `c`).
fn shifted_block(d: i128, c: i128) -> Option<(i64, i64)> {
    (d % c == 0).then(|| block(-d / c, c))
}

/// Far past 64 bits, and far from i128's own overflow.
const FAR: i128 = 1 << 100;

/// What of `[lo, hi]` a 64-bit value can be: clamped to them, and empty
/// (`[1, 0]`) where every value leaves it.
fn in_64_bits(lo: i128, hi: i128) -> (i64, i64) {
    let (min, max) = (i128::from(i64::MIN), i128::from(i64::MAX));
    if lo > max || hi < min {
        return (1, 0);
    }
    (lo.clamp(min, max) as i64, hi.clamp(min, max) as i64)
}

/// What the fold's bound of `e` in `n` was of, when `e` leaves `block`
/// (the interval the fold needed) at some point walked: the lowest node
/// under `e` that leaves the interval carried down to it, or the overflow.
fn left(
    g: &Graph,
    n: NodeId,
    e: NodeId,
    block: (i64, i64),
    model: Model,
    seed: u64,
) -> Option<BoundOf> {
    let found = bounds::violations(g, &[n], &[(e, Bound::Int(block.0, block.1))], model, seed);
    if found.is_empty() {
        return None;
    }
    Some(match bound_key(g, e) {
        BoundOf::Overflow => BoundOf::Overflow,
        _ => bound_key(g, lowest_violated(g, n, e, block, model, seed)),
    })
}

/// A point of `domain` as the interpreter takes it.
fn wide_env(domain: &Domain, g: &Graph, point: &[i64]) -> Vec<i128> {
    domain
        .env(g, point)
        .iter()
        .map(|&v| i128::from(v))
        .collect()
}

/// `m` as `e op c`: a quotient or remainder by a constant `c > 0`.
fn by_constant(g: &Graph, m: NodeId) -> Option<(Op, NodeId, i64)> {
    let node = g.node(m);
    if !matches!(node.op, Op::FloorDiv | Op::CeilDiv | Op::Mod) {
        return None;
    }
    let [e, c] = *node.src() else { return None };
    let c = g.node(c).as_const().filter(|&v| v > 0)?;
    Some((node.op, e, c))
}

/// `a - e`, when it is one value at every point sampled from `n`'s domain
/// where both are defined (and some are).
fn constant_shift(
    g: &Graph,
    n: NodeId,
    e: NodeId,
    a: NodeId,
    model: Model,
    seed: u64,
) -> Option<i128> {
    let domain = Domain::new(g, &[n]);
    let samples = walk::decide(Purpose::Reading, domain.size(), 0).samples();
    let mut seen: Option<i128> = None;
    let mut differs = false;
    bounds::scan_points(&domain, seed, samples, |point| {
        let env = wide_env(&domain, g, point);
        let (Ok(ev), Ok(av)) = (
            interp::eval(g, &[e], &env, model),
            interp::eval(g, &[a], &env, model),
        ) else {
            return false;
        };
        let (interp::Val::Int(x), interp::Val::Int(y)) = (av[0], ev[0]) else {
            differs = true;
            return true;
        };
        differs |= seen.is_some_and(|s| s != x - y);
        seen = Some(x - y);
        differs
    });
    if differs {
        return None;
    }
    seen
}

/// Terms of a sum tried apart, at most.
const MAX_TERMS: usize = 16;

/// Whether a node of `e` takes values past 64 bits over the integers
/// (exact interval arithmetic from the variables' ranges).
fn passes_64_bits(g: &Graph, e: NodeId) -> bool {
    let mut exact: rustc_hash::FxHashMap<NodeId, Range> = rustc_hash::FxHashMap::default();
    let mut wraps = false;
    for n in g.reachable(&[e]) {
        let node = g.node(n);
        let r = match node.op {
            Op::Var(v) => Range::new(i128::from(g.var(v).lo), i128::from(g.var(v).hi)),
            Op::Const(c) => Range::point(i128::from(c)),
            Op::Invalid => Range::point(0),
            op => {
                let args: Vec<Range> = node.src().iter().map(|s| exact[s]).collect();
                ranges::transfer(op, &args)
            }
        };
        let r = Range::new(r.lo.clamp(-FAR, FAR), r.hi.clamp(-FAR, FAR));
        wraps |= node.dtype != DType::Bool
            && (r.lo < i128::from(i64::MIN) || r.hi > i128::from(i64::MAX));
        exact.insert(n, r);
    }
    wraps
}

/// What a wrong bound of `e` is of: [`BoundOf::Overflow`] where a node of
/// `e` takes values past 64 bits over the integers, else `e`'s op, nodes
/// that change nothing looked through.
fn bound_key(g: &Graph, e: NodeId) -> BoundOf {
    if passes_64_bits(g, e) {
        return BoundOf::Overflow;
    }
    let mut at = e;
    loop {
        let node = g.node(at);
        let neutral = match (node.op, node.src()) {
            (Op::Mul | Op::FloorDiv | Op::Div, [x, c]) if g.node(*c).as_const() == Some(1) => {
                Some(*x)
            }
            (Op::Mul, [c, x]) if g.node(*c).as_const() == Some(1) => Some(*x),
            (Op::Add | Op::Sub, [x, c]) if g.node(*c).as_const() == Some(0) => Some(*x),
            (Op::Add, [c, x]) if g.node(*c).as_const() == Some(0) => Some(*x),
            _ => None,
        };
        match neutral {
            Some(x) => at = x,
            None => return BoundOf::Op(node.op.name().to_string()),
        }
    }
}

/// The cause of `n` (a subterm `stage` gets wrong alone; `at_n`: its
/// check by the stage, whose graph holds `n` under its own id): the bound of its numerator the stage's fold needed, when the
/// numerator takes a value outside it; else that of the part of a sum
/// numerator its multiples of the divisor leave; else of a remainder it
/// holds, read in context; else the wrapped bound of a fold whose answer
/// overflows everywhere.
pub fn implied(
    stage: &dyn Subject,
    at_n: &Checked,
    n: NodeId,
    cfg: &CheckConfig,
    model: Model,
) -> Option<Cause> {
    let cfg = cfg.only(Kind::Oracle);
    let answered = Answered {
        checked: at_n,
        cfg: &cfg,
        model,
    };
    answered
        .folded(n)
        .or_else(|| {
            let mut g = at_n.graph.clone();
            let rest = rest_of_sum(&mut g, n)?;
            let at_rest = checks::check(&g, &[rest], stage, &cfg, None);
            Answered {
                checked: &at_rest,
                ..answered
            }
            .folded(rest)
        })
        .or_else(|| answered.in_context(n))
        .or_else(|| answered.undefined_fold(n))
}

/// Remainders in a context tried, at most.
const MAX_IN_CONTEXT: usize = 8;

/// `e op C` (a quotient or remainder of a sum) with the terms of `e` that
/// are multiples of `C` taken away, when some are and some are not.
fn rest_of_sum(g: &mut Graph, n: NodeId) -> Option<NodeId> {
    let (op, e, c) = by_constant(g, n).filter(|(op, _, _)| *op != Op::CeilDiv)?;
    let d = g.node(n).src()[1];
    let (terms, all) = g.chain_operands(e, Op::Add, MAX_TERMS);
    let multiple = |g: &Graph, t: NodeId| {
        let tn = g.node(t);
        match (tn.op, tn.src()) {
            (Op::Const(k), _) => k % c == 0,
            (Op::Mul, [a, b]) => [*a, *b]
                .iter()
                .any(|&f| g.node(f).as_const().is_some_and(|k| k % c == 0)),
            _ => false,
        }
    };
    let rest: Vec<NodeId> = terms.iter().copied().filter(|&t| !multiple(g, t)).collect();
    if !all || rest.is_empty() || rest.len() == terms.len() {
        return None;
    }
    let sum = rest[1..]
        .iter()
        .fold(rest[0], |acc, &t| g.mk(Op::Add, &[acc, t]));
    Some(g.mk(op, &[sum, d]))
}

/// A stage's answer for a subterm (`checked`: its check, the answer's
/// nodes added to its graph), read for the bound the stage folded with.
#[derive(Clone, Copy)]
struct Answered<'a> {
    checked: &'a Checked,
    cfg: &'a CheckConfig,
    model: Model,
}

impl Answered<'_> {
    /// [`implied`] of `n` whose answer by the stage overflows at every point
    /// sampled where `n` is defined (`-(x * 12 mod 13)` over 62-bit `x`
    /// folded to `x * -12 + q * 13` with `q * 13` past 64 bits), holding a
    /// quotient or remainder by a constant whose numerator takes values past
    /// 64 bits: the stage chose its block from a bound computed wrapping, and
    /// no value of the answer can say which block.
    fn undefined_fold(&self, n: NodeId) -> Option<Cause> {
        let (g, model) = (&self.checked.graph, self.model);
        let wrapped_fold = g
            .reachable(&[n])
            .into_iter()
            .any(|m| by_constant(g, m).is_some_and(|(_, e, _)| passes_64_bits(g, e)));
        if !wrapped_fold {
            return None;
        }
        let a = *self.checked.tgt.as_ref()?.first()?;
        let domain = Domain::new(g, &[n]);
        let samples = walk::decide(Purpose::Reading, domain.size(), 0).samples();
        let (mut source_defined, mut answer_defined) = (false, false);
        bounds::scan_points(&domain, self.cfg.seed, samples, |point| {
            let env = wide_env(&domain, g, point);
            if interp::eval(g, &[n], &env, model).is_ok() {
                source_defined = true;
                answer_defined |= interp::eval(g, &[a], &env, model).is_ok();
            }
            answer_defined
        });
        (source_defined && !answer_defined).then_some(Cause::Implied(BoundOf::Overflow))
    }

    /// [`implied`] of a remainder `m = e mod C` folded inside `n` (under a
    /// negation, a sum, a product by a constant: `n` is linear in `m`): the
    /// stage's answer for `n` is `n` with `m` replaced by `e - q*C`, read from
    /// values (`n` with `m` as `e` and as `e + 1` gives `m`'s coefficient).
    fn in_context(&self, n: NodeId) -> Option<Cause> {
        let (cfg, model) = (self.cfg, self.model);
        let a = *self.checked.tgt.as_ref()?.first()?;
        let mut g = self.checked.graph.clone();
        let mods: Vec<(NodeId, NodeId, i64)> = g
            .reachable(&[n])
            .into_iter()
            .filter_map(|m| match by_constant(&g, m) {
                Some((Op::Mod, e, c)) if m != n => Some((m, e, c)),
                _ => None,
            })
            .take(MAX_IN_CONTEXT)
            .collect();
        for (m, e, c) in mods {
            let one = g.cnst(1, g.node(e).dtype);
            let e1 = g.mk(Op::Add, &[e, one]);
            let at =
                |g: &mut Graph, by: NodeId| g.rebuild(&[n], |_, x, _, _| (x == m).then_some(by))[0];
            let (as_e, as_e1) = (at(&mut g, e), at(&mut g, e1));
            let (Some(coefficient), Some(moved)) = (
                constant_shift(&g, n, as_e, as_e1, model, cfg.seed),
                constant_shift(&g, n, as_e, a, model, cfg.seed),
            ) else {
                continue;
            };
            if coefficient == 0 || moved % coefficient != 0 {
                continue;
            }
            let Some(block) = shifted_block(moved / coefficient, i128::from(c)) else {
                continue;
            };
            if let Some(bound) = left(&g, n, e, block, model, cfg.seed) {
                return Some(Cause::Implied(bound));
            }
        }
        None
    }

    /// [`implied`] of `n` itself: its fold by the stage.
    fn folded(&self, n: NodeId) -> Option<Cause> {
        let (g, cfg, model) = (&self.checked.graph, self.cfg, self.model);
        let (op, e, c) = by_constant(g, n)?;
        let a = *self.checked.tgt.as_ref()?.first()?;
        let shift = (op == Op::Mod)
            .then(|| constant_shift(g, n, e, a, model, cfg.seed))
            .flatten();
        let block = needed(g, op, e, c, a, shift)?;
        left(g, n, e, block, model, cfg.seed).map(Cause::Implied)
    }
}

/// The lowest node under `e` that leaves the interval the fold needed of
/// `e`, carried down through multiplication by and addition of constants
/// (`e = x * 4` needed in `[4, 7]` needs `x` in `[1, 1]`): the bound that
/// is wrong is the lowest one the fold relied on, not the product that
/// carried it (MLIR's `x mod 7 * 2 // 4` is its bound of the `mod`).
fn lowest_violated(
    g: &Graph,
    n: NodeId,
    e: NodeId,
    (lo, hi): (i64, i64),
    model: Model,
    seed: u64,
) -> NodeId {
    let (mut at, mut lo, mut hi) = (e, i128::from(lo), i128::from(hi));
    loop {
        let node = g.node(at);
        let konst = |x: NodeId| g.node(x).as_const().map(i128::from);
        let down = match (node.op, node.src()) {
            (Op::Mul, [x, k]) | (Op::Mul, [k, x]) if konst(*k).is_some_and(|k| k != 0) => {
                // x * k in [lo, hi]: x in [lo / k, hi / k] rounded in
                // (the ends swapped for k < 0).
                let k = konst(*k).unwrap_or(1);
                let (a, b) = if k > 0 { (lo, hi) } else { (hi, lo) };
                let floor = |v: i128| v.div_euclid(k) - i128::from(k < 0 && v.rem_euclid(k) != 0);
                let ceil =
                    |v: i128| -((-v).div_euclid(k) - i128::from(k < 0 && (-v).rem_euclid(k) != 0));
                Some((*x, ceil(a), floor(b)))
            }
            (Op::Add, [x, d]) | (Op::Add, [d, x]) if konst(*d).is_some() => {
                let d = konst(*d).unwrap_or(0);
                Some((*x, lo - d, hi - d))
            }
            (Op::Sub, [x, d]) if konst(*d).is_some() => {
                let d = konst(*d).unwrap_or(0);
                Some((*x, lo + d, hi + d))
            }
            // x // k in [lo, hi]: x in [lo * k, hi * k + k - 1].
            (Op::FloorDiv, [x, k]) if konst(*k).is_some_and(|k| k > 0) => {
                let k = konst(*k).unwrap_or(1);
                Some((*x, lo * k, hi * k + k - 1))
            }
            (Op::Div, [x, one]) if konst(*one) == Some(1) => Some((*x, lo, hi)),
            _ => None,
        };
        let Some((x, xlo, xhi)) = down else {
            return at;
        };
        if matches!(g.node(x).op, Op::Var(_) | Op::Const(_)) || xlo > xhi {
            return at;
        }
        let (blo, bhi) = in_64_bits(xlo, xhi);
        let below = bounds::violations(g, &[n], &[(x, Bound::Int(blo, bhi))], model, seed);
        if below.is_empty() {
            return at;
        }
        (at, lo, hi) = (x, xlo.clamp(-FAR, FAR), xhi.clamp(-FAR, FAR));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::parse::parse_program;

    fn key(text: &str) -> BoundOf {
        let p = parse_program(text).unwrap();
        bound_key(&p.graph, p.outputs[0])
    }

    #[test]
    fn a_numerator_whose_values_pass_64_bits_is_keyed_by_the_overflow_not_its_top_op() {
        // The product passes 64 bits under the sum: MLIR's flattened sum
        // wraps, whichever op holds it.
        assert_eq!(
            key("var x in [0, 3]\nvar y in [0, 7]\nexpr x * 4611686018427387904 + y\n"),
            BoundOf::Overflow
        );
        assert_eq!(
            key("var x in [0, 3]\nexpr x * 4611686018427387904\n"),
            BoundOf::Overflow
        );
        assert_eq!(
            key("var x in [0, 3]\nexpr x * 1000 + 7\n"),
            BoundOf::Op("add".into())
        );
    }

    #[test]
    fn a_fold_that_needed_a_product_in_a_block_is_the_bound_of_what_was_multiplied() {
        // `(x mod 7 * 2) // 4` folded to 1 needs the product in [4, 7], so
        // the `mod` in [2, 3]: both leave it, and the wrong bound is the
        // lower one's.
        let p = parse_program("var x in [-9, 9]\nexpr (x mod 7 * 2) // 4\n").unwrap();
        let (g, n) = (&p.graph, p.outputs[0]);
        let e = g.node(n).src()[0];
        let m = g.node(e).src()[0];
        let model = Model::from(engine::dtype::Width::W64);
        assert_eq!(lowest_violated(g, n, e, (4, 7), model, 0), m);
        assert_eq!(bound_key(g, m), BoundOf::Op("mod".into()));
        // Where the product's values fit, the product is as low as it goes.
        assert_eq!(lowest_violated(g, n, e, (0, 12), model, 0), e);
    }

    #[test]
    fn nodes_that_change_nothing_are_looked_through() {
        let m = BoundOf::Op("mod".into());
        assert_eq!(key("var x in [-9, 9]\nexpr x mod 7 * 1\n"), m);
        assert_eq!(key("var x in [-9, 9]\nexpr x mod 7 // 1 + 0\n"), m);
    }
}
