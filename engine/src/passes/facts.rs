//! Conjunctions and disjunctions of linear facts.
//!
//! Each comparison of a chain of `&&` (or of `||`) is read as a fact about
//! a linear *key* ([`crate::algebra::relation`], divided by the gcd of its
//! coefficients and signed so that its first coefficient is positive): an
//! interval `lo <= key <= hi` and points `key != v`. The facts about one
//! key are combined:
//!
//! - `&&`: their intersection, cut to the key's own range; empty is
//!   `false` (`x < 1 && 0 < x`), a single point is `key == v`
//!   (`x == 1 && x != 2`), an interval that holds everywhere drops out;
//!   a pinned quotient and its remainder are one fact about the base
//!   (`x // 8 == 3 && x mod 8 == 4` is `x == 28`);
//! - `||`: the complement of the union is the intersection of the
//!   complements: empty is `true` (`x < 1 || 0 < x`), a single point `v` is
//!   `key != v` (`x == 2 || x != 1`).
//!
//! The chain is written back in its order, each key's combined facts where
//! its first fact was. Other operands of the chain stay as they are.
//! Algorithmic, validated per firing; comparisons of possibly invalid
//! operands are not facts (they are unconstrained there).

use crate::algebra::defined::fits_new;
use crate::algebra::digits::{split_of, Split};
use crate::algebra::linear::{self, terms_range, Mono, Poly};
use crate::algebra::relation::{read_rel, relation, write, Read, Rel};
use crate::ir::arith::{div_floor, ends_with_residue, gcd};
use crate::ir::dtype::Width;
use crate::ir::{DType, Graph, NodeId, Op};

/// The sub-rule names, in the order [`rewrite`] returns indices into.
pub const RULES: [&str; 2] = ["linear_facts_and", "linear_facts_or"];

/// What is known about a key.
#[derive(Clone, Debug)]
struct Fact {
    key: Vec<(Mono, i128)>,
    lo: i128,
    hi: i128,
    /// Points excluded (inside `lo..=hi`).
    not: Vec<i128>,
    /// Position of the key's first fact in the chain.
    first: usize,
}

impl Fact {
    fn empty(&self) -> bool {
        self.lo > self.hi
    }

    /// Moves the bounds past excluded points at the edges, and forgets
    /// points outside.
    fn tidy(&mut self) {
        loop {
            if self.not.contains(&self.lo) && self.lo <= self.hi {
                self.lo += 1;
            } else if self.not.contains(&self.hi) && self.lo <= self.hi {
                self.hi -= 1;
            } else {
                break;
            }
        }
        let (lo, hi) = (self.lo, self.hi);
        self.not.retain(|&v| lo <= v && v <= hi);
        self.not.sort_unstable();
        self.not.dedup();
    }
}

/// Tries the fact rewrites at a chain root `n` (an `&&` or `||` whose
/// parent is not the same op).
pub fn rewrite(g: &mut Graph, n: NodeId, w: Width) -> Option<(usize, NodeId)> {
    let node = *g.node(n);
    let (is_and, rule) = match node.op {
        Op::And => (true, 0),
        Op::Or => (false, 1),
        _ => return None,
    };
    // The operands of the chain, in order (iteratively: chains are long).
    let mut parts: Vec<NodeId> = Vec::new();
    let mut stack = vec![n];
    while let Some(x) = stack.pop() {
        let xn = g.node(x);
        if xn.op == node.op {
            stack.push(xn.src()[1]);
            stack.push(xn.src()[0]);
        } else {
            parts.push(x);
        }
    }
    // Facts by key, in order of first appearance; other operands kept.
    let mut facts: Vec<Fact> = Vec::new();
    let mut kept: Vec<(usize, NodeId)> = Vec::new();
    let mut changed = false;
    for (i, &x) in parts.iter().enumerate() {
        let read = relation(g, x).and_then(|(rel, p)| read_rel(rel, &p));
        let (key, lo, hi, not) = match read {
            None => {
                kept.push((i, x));
                continue;
            }
            // A conjunct that always holds drops out of `&&`; one that
            // never holds decides it (dually for `||`).
            Some(Read::Const(v)) => {
                if v == is_and {
                    changed = true;
                    continue;
                }
                return Some((rule, g.bool_const(v)));
            }
            Some(Read::In(key, lo, hi)) => (key, lo, hi, None),
            Some(Read::Not(key, v)) => (key, i128::MIN / 4, i128::MAX / 4, Some(v)),
        };
        // For `||`, work with the complement: `!(a || b) == !a && !b`.
        let pieces: Vec<(i128, i128, Option<i128>)> = if is_and {
            vec![(lo, hi, not)]
        } else {
            match not {
                // !(key != v) is key == v.
                Some(v) => vec![(v, v, None)],
                None if lo == hi => vec![(i128::MIN / 4, i128::MAX / 4, Some(lo))],
                None if lo <= i128::MIN / 8 => vec![(hi + 1, i128::MAX / 4, None)],
                None if hi >= i128::MAX / 8 => vec![(i128::MIN / 4, lo - 1, None)],
                // A bounded interval's complement is two pieces.
                None => {
                    kept.push((i, x));
                    continue;
                }
            }
        };
        let at = match facts.iter().position(|f| f.key == key) {
            Some(at) => {
                changed = true;
                at
            }
            None => {
                let r = terms_range(g, &key, 0, w)?;
                facts.push(Fact {
                    key,
                    lo: r.lo,
                    hi: r.hi,
                    not: Vec::new(),
                    first: i,
                });
                facts.len() - 1
            }
        };
        let f = &mut facts[at];
        for (lo, hi, not) in pieces {
            f.lo = f.lo.max(lo);
            f.hi = f.hi.min(hi);
            f.not.extend(not);
        }
        f.tidy();
    }
    if is_and {
        changed |= pinned_digits(g, &mut facts, w);
        while merged_congruence(g, &mut facts) {
            changed = true;
        }
        changed |= narrowed_by_residue(g, &mut facts);
    }
    // Decided: an empty intersection.
    if facts.iter().any(Fact::empty) {
        return Some((rule, g.bool_const(!is_and)));
    }
    if !changed {
        return None;
    }
    // The chain again, each key's facts at its first position.
    let mut items: Vec<(usize, NodeId)> = kept;
    for f in &facts {
        let r = terms_range(g, &f.key, 0, w)?;
        let mut conds: Vec<NodeId> = Vec::new();
        if is_and {
            conds.extend(write_and(g, f, r.lo, r.hi)?);
        } else {
            // The union is the complement of this intersection.
            match write_or(g, f, r.lo, r.hi)? {
                Some(c) => conds.push(c),
                None => return Some((rule, g.bool_const(true))),
            }
        }
        items.extend(conds.into_iter().map(|c| (f.first, c)));
    }
    items.sort_by_key(|t| t.0);
    // The same operands regrouped is no simplification, and the rewriter's
    // operand order would group them back: no firing.
    let mut same: Vec<NodeId> = items.iter().map(|t| t.1).collect();
    let mut before = parts.clone();
    same.sort_unstable();
    before.sort_unstable();
    if same == before {
        return None;
    }
    let op = node.op;
    let out = match items.first() {
        None => g.bool_const(is_and),
        Some(&(_, first)) => items[1..]
            .iter()
            .fold(first, |acc, &(_, c)| g.mk(op, &[acc, c])),
    };
    if out == n || !fits_new(g, n, out, w) {
        return None;
    }
    Some((rule, out))
}

/// The comparisons that say `lo <= key <= hi` and `key != v` for the
/// excluded points, leaving out what the key's range `rlo..=rhi` says.
fn write_and(g: &mut Graph, f: &Fact, rlo: i128, rhi: i128) -> Option<Vec<NodeId>> {
    let mut out = Vec::new();
    let key = |k: i128, s: i128| Poly {
        terms: f.key.iter().map(|(m, c)| (m.clone(), c * s)).collect(),
        k,
    };
    if f.lo == f.hi {
        out.push(write(g, Rel::Eq, &key(-f.lo, 1))?);
        return Some(out);
    }
    if f.lo > rlo {
        // lo <= key: lo - key - 1 < 0.
        out.push(write(g, Rel::Lt, &key(f.lo - 1, -1))?);
    }
    if f.hi < rhi {
        // key <= hi: key - hi - 1 < 0.
        out.push(write(g, Rel::Lt, &key(-f.hi - 1, 1))?);
    }
    for &v in &f.not {
        out.push(write(g, Rel::Ne, &key(-v, 1))?);
    }
    Some(out)
}

/// The one comparison whose set is the complement of `f` (itself the
/// complement of a union): `Ok(None)` when that union holds everywhere;
/// `None` when it takes more than one comparison.
fn write_or(g: &mut Graph, f: &Fact, rlo: i128, rhi: i128) -> Option<Option<NodeId>> {
    let key = |k: i128, s: i128| Poly {
        terms: f.key.iter().map(|(m, c)| (m.clone(), c * s)).collect(),
        k,
    };
    let (lo, hi) = (f.lo.max(rlo), f.hi.min(rhi));
    if lo > hi {
        return Some(None);
    }
    if !f.not.is_empty() {
        return None;
    }
    if lo == hi {
        return Some(Some(write(g, Rel::Ne, &key(-lo, 1))?));
    }
    if lo <= rlo {
        // complement of key <= hi: hi < key, i.e. hi - key < 0... as
        // -key + hi < 0.
        return Some(Some(write(g, Rel::Lt, &key(hi, -1))?));
    }
    if hi >= rhi {
        // complement of lo <= key: key < lo.
        return Some(Some(write(g, Rel::Lt, &key(-lo, 1))?));
    }
    None
}

/// A quotient pinned to one value and its remainder bounded are one
/// interval of the base: `x // d == a && lo <= x mod d <= hi` is `a*d + lo
/// <= x <= a*d + hi`. Replaces the two facts by one about the base's key.
fn pinned_digits(g: &Graph, facts: &mut Vec<Fact>, w: Width) -> bool {
    let single = |f: &Fact| -> Option<Split> {
        let [(m, 1)] = &f.key[..] else {
            return None;
        };
        let [a] = m[..] else {
            return None;
        };
        split_of(g, a).filter(|s| s.floor_exact(g))
    };
    for i in 0..facts.len() {
        let Some(q) = single(&facts[i]) else {
            continue;
        };
        if q.hi.is_some() || facts[i].lo != facts[i].hi || !facts[i].not.is_empty() {
            continue;
        }
        let d = q.lo;
        let Some(j) = (0..facts.len()).find(|&j| {
            single(&facts[j]).is_some_and(|r| {
                r.base == q.base && r.lo == 1 && r.hi == Some(d) && facts[j].not.is_empty()
            })
        }) else {
            continue;
        };
        let Some(base) = linear::read(g, q.base) else {
            continue;
        };
        if base.terms.is_empty() || g.node(q.base).dtype != DType::Index {
            continue;
        }
        let a = facts[i].lo;
        let (rlo, rhi) = (facts[j].lo.max(0), facts[j].hi.min(d - 1));
        // base = s*G*key + kb in [a*d + rlo, a*d + rhi].
        let gg = base.terms.iter().fold(0, |x, t| gcd(x, t.1));
        let s = if base.terms[0].1 < 0 { -1 } else { 1 };
        let (l, h) = (a * d + rlo - base.k, a * d + rhi - base.k);
        let (l, h) = if s > 0 { (l, h) } else { (-h, -l) };
        let (Some(lo), Some(hi)) = (div_ceil(l, gg), div_floor(h, gg)) else {
            continue;
        };
        let key: Vec<(Mono, i128)> = base
            .terms
            .iter()
            .map(|(m, c)| (m.clone(), c / gg * s))
            .collect();
        let Some(r) = terms_range(g, &key, 0, w) else {
            continue;
        };
        let first = facts[i].first.min(facts[j].first);
        let fact = Fact {
            key,
            lo: lo.max(r.lo),
            hi: hi.min(r.hi),
            not: Vec::new(),
            first,
        };
        let (i, j) = (i.max(j), i.min(j));
        facts.remove(i);
        facts.remove(j);
        facts.push(fact);
        return true;
    }
    false
}

/// Two pinned remainders of one base are one congruence (the Chinese
/// remainder theorem): `x mod 2 == 0 && x mod 3 == 0` is `x mod 6 == 0`
/// (XLA's constraint merge), `x mod 2 == 1 && x mod 4 == 3` is `x mod 4 ==
/// 3`, and `x mod 2 == 0 && x mod 4 == 1` holds nowhere (an empty domain).
fn merged_congruence(g: &mut Graph, facts: &mut Vec<Fact>) -> bool {
    // `base mod d == a` with a floor remainder by a positive constant.
    let pinned = |g: &Graph, f: &Fact| -> Option<(NodeId, i128, i128)> {
        let [(m, 1)] = &f.key[..] else {
            return None;
        };
        let [atom] = m[..] else {
            return None;
        };
        if f.lo != f.hi || !f.not.is_empty() || !g.node(atom).op.is_divmod() {
            return None;
        }
        let s = split_of(g, atom).filter(|s| s.floor_exact(g) && s.lo == 1)?;
        let d = s.hi.filter(|&d| (1..=1 << 16).contains(&d))?;
        (g.node(s.base).dtype == DType::Index).then_some((s.base, d, f.lo))
    };
    if facts.len() < 2 {
        return false;
    }
    for i in 0..facts.len() {
        let Some((base, d1, a1)) = pinned(g, &facts[i]) else {
            continue;
        };
        let Some((j, d2, a2)) = (i + 1..facts.len()).find_map(|j| {
            pinned(g, &facts[j]).and_then(|(b, d, a)| (b == base).then_some((j, d, a)))
        }) else {
            continue;
        };
        let first = facts[i].first.min(facts[j].first);
        let step = gcd(d1, d2);
        let fact = if (a1 - a2).rem_euclid(step) != 0 {
            // No point meets both: an empty fact decides the chain.
            Fact {
                lo: 1,
                hi: 0,
                first,
                ..facts[i].clone()
            }
        } else {
            let l = d1 / step * d2;
            let Some(a) = (0..d2 / step)
                .map(|k| a1 + k * d1)
                .find(|x| (x - a2).rem_euclid(d2) == 0)
            else {
                continue;
            };
            let Ok(lc) = i64::try_from(l) else {
                continue;
            };
            let lc = g.cnst(lc, DType::Index);
            let m = g.mk(Op::Mod, &[base, lc]);
            let a = a.rem_euclid(l);
            Fact {
                key: vec![(Mono::from_slice(&[m]), 1)],
                lo: a,
                hi: a,
                not: Vec::new(),
                first,
            }
        };
        facts.remove(j);
        facts.remove(i);
        facts.push(fact);
        return true;
    }
    false
}

/// An interval of a base whose remainder is bounded ends at values with
/// that remainder: `x mod 8 == 0 && x < 10` is `x mod 8 == 0 && x < 9`
/// (XLA narrows a variable's range by its mod constraint), and a remainder
/// that the narrowed interval implies drops out (`x mod 8 == 4 && 24 <= x
/// && x < 32` is `x == 28`). Only an interval the chain states is narrowed:
/// no conjunct is added.
fn narrowed_by_residue(g: &Graph, facts: &mut Vec<Fact>) -> bool {
    let mut changed = false;
    let mut i = 0;
    while i < facts.len() {
        let residue = {
            let f = &facts[i];
            match (&f.key[..], f.not.is_empty()) {
                ([(m, 1)], true) if m.len() == 1 && g.node(m[0]).op.is_divmod() => {
                    split_of(g, m[0]).filter(|s| s.floor_exact(g) && s.lo == 1)
                }
                _ => None,
            }
        };
        let Some((base, d)) = residue.and_then(|s| Some((s.base, s.hi?))) else {
            i += 1;
            continue;
        };
        let (a, b) = (facts[i].lo.max(0), facts[i].hi.min(d - 1));
        if a > b {
            i += 1;
            continue;
        }
        let whole = vec![(Mono::from_slice(&[base]), 1)];
        let Some(j) = facts
            .iter()
            .position(|f| f.key == whole && f.not.is_empty())
        else {
            i += 1;
            continue;
        };
        let (lo, hi) = (facts[j].lo, facts[j].hi);
        let (up, down, implied) = ends_with_residue(lo, hi, d, a, b);
        if (up, down) != (lo, hi) {
            facts[j].lo = up;
            facts[j].hi = down;
            changed = true;
        }
        if implied {
            facts.remove(i);
            changed = true;
            continue;
        }
        i += 1;
    }
    changed
}

fn div_ceil(a: i128, b: i128) -> Option<i128> {
    crate::ir::arith::div_ceil(a, b)
}

#[cfg(test)]
mod tests {
    use crate::testing::simp;

    #[test]
    fn contradictions_are_false_and_tautologies_true() {
        let v = "var x in [-20, 20]\nvar y in [-20, 20]";
        assert_eq!(simp(v, "x < 1 && 0 < x"), "false");
        assert_eq!(simp(v, "x <= y && y < x"), "false");
        assert_eq!(simp(v, "x == y && x != y"), "false");
        assert_eq!(simp(v, "x < 1 || 0 < x"), "true");
        assert_eq!(simp(v, "x == y || x != y"), "true");
        assert_eq!(simp(v, "x != 1 || x != 2"), "true");
    }

    #[test]
    fn facts_about_one_key_combine() {
        let v = "var x in [-20, 20]\nvar s in [0, 9]\nvar b: bool";
        assert_eq!(simp(v, "x == 1 && x != 2"), "x == 1");
        assert_eq!(simp(v, "x == 2 || x != 1"), "x != 1");
        assert_eq!(simp(v, "s < 5 && s < 6"), "s < 5");
        assert_eq!(simp(v, "b && x < 3 && x < 5"), "x < 3 && b");
    }

    #[test]
    fn a_pinned_quotient_and_its_remainder_are_one_interval() {
        let v = "var x in [-100, 100]";
        assert_eq!(simp(v, "x // 8 == 3 && x mod 8 == 4"), "x == 28");
        assert_eq!(simp(v, "x // 10 == 5 && x mod 10 < 7"), "x < 57 && 49 < x");
    }

    #[test]
    fn pinned_remainders_of_one_base_are_one_congruence() {
        let v = "var x in [-50, 50]";
        assert_eq!(simp(v, "x mod 2 == 0 && x mod 3 == 0"), "x mod 6 == 0");
        assert_eq!(simp(v, "x mod 2 == 1 && x mod 4 == 3"), "x mod 4 == 3");
        assert_eq!(simp(v, "x mod 2 == 0 && x mod 4 == 1"), "false");
        assert_eq!(
            simp(v, "(x + 1) mod 4 == 2 && (x + 1) mod 6 == 4"),
            "x mod 12 == 9"
        );
        // The offset is read into the remainder first: one base.
        assert_eq!(
            simp(v, "x mod 2 == 0 && (x + 1) mod 3 == 0"),
            "x mod 6 == 2"
        );
        // Remainders of different bases stay apart.
        let v = "var x in [-50, 50]\nvar y in [-50, 50]";
        assert_eq!(
            simp(v, "x mod 2 == 0 && (x + y) mod 3 == 0"),
            "x mod 2 == 0 && (x + y) mod 3 == 0"
        );
    }

    #[test]
    fn an_interval_of_a_base_ends_where_its_remainder_is_allowed() {
        let v = "var x in [0, 100]";
        // XLA: d0 mod 8 in [0, 0] with d0 in [0, 9] is d0 in [0, 8].
        assert_eq!(simp(v, "x mod 8 == 0 && x < 10"), "x < 9 && x mod 8 == 0");
        // Both ends move; a remainder interval, not only a point.
        assert_eq!(
            simp(v, "x mod 10 < 3 && 13 < x && x < 58"),
            "x < 53 && 19 < x && x mod 10 < 3"
        );
        // A remainder the interval implies drops out.
        assert_eq!(simp(v, "x mod 8 == 4 && 23 < x && x < 32"), "x == 28");
        assert_eq!(
            simp(v, "x mod 10 < 5 && 20 < x && x < 29"),
            "x < 25 && 20 < x"
        );
        // No value left: false.
        assert_eq!(simp(v, "x mod 8 == 7 && 8 < x && x < 15"), "false");
        // No interval stated: nothing is added.
        assert_eq!(simp(v, "x mod 8 == 0 && x != 4"), "x != 4 && x mod 8 == 0");
    }
}
