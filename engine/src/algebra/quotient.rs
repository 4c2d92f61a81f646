//! Quotients by a constant inside the linear form: read apart so that
//! equal ones combine, written back in their cheapest form.
//!
//! A *quotient atom* is `n // d` with `d > 0` a constant (also `n / d`
//! where `n >= 0`: truncation is then floor division). In a sum it is read
//! in its **residue form**, and so is a remainder atom `n mod d` (which
//! drops the multiples, `(A*d + r) mod d == r mod d`, so that a quotient
//! and a remainder of one numerator still share it): every coefficient of `n` reduced to its
//! centered residue (`|r| <= d/2`) and the constant to `[0, d)`, the
//! multiples taken out into the sum, since for an integer `A`, `(A*d + r)
//! // d == A + r // d`: `(x*47 + 17) // 16` is `x*3 + 1 + (1 - x) // 16`,
//! so that `(x + 5) // 3 - (x + 2) // 3` is `1`.
//!
//! It is written back in the cheapest of its equivalent forms (fewest
//! nodes; the plain build first on a tie):
//!
//! - **merged**: the sum's constant, and the terms of the sum that the
//!   numerator also has, go back into one quotient with coefficient `s =
//!   ±1` (the first in canonical order): `T + s * (n // d) == s * ((n +
//!   s*T*d) // d)` for `T` a multiple of nothing in particular (any integer
//!   combination): `(y + 1) // 2 + 1` is `(y + 3) // 2`, `x*2 + (x*2 + y)
//!   // 5` is `(x*12 + y) // 5`;
//! - **negated**: `-(n // d) == (d - 1 - n) // d` (floor), so `-((y + 1)
//!   // 2)` is `-y // 2` and `x - x // 2 + 3` is `(x + 7) // 2`;
//! - **a difference** of two quotients by one `d` (the only two of the
//!   sum, coefficients `s` and `-s`): `(a + b) // d - a // d == (a mod d +
//!   b) // d` (TVM's form: `(x + 5) // 3 - x // 3` is `(x mod 3 + 5) //
//!   3`), either way round.
//!
//! Every identity is exact in floor division for any signs; a truncating
//! atom is only taken apart, merged or paired where every numerator
//! involved is non-negative (there the families agree), and never
//! negated. Algorithmic: these are steps of the linear form's
//! normalization, recorded and validated as its firings.

use crate::algebra::defined::fits_new;
use crate::algebra::linear::{self, terms_range, Acc, Poly};
use crate::ir::dtype::Width;
use crate::ir::{Graph, NodeId, Op};

/// A quotient atom `num op d` (or, with `rem`, a remainder atom).
#[derive(Clone, Copy, Debug)]
struct Quot {
    num: NodeId,
    d: i128,
    /// Written with `/` or `%` (the numerator is then non-negative).
    trunc: bool,
    rem: bool,
}

impl Quot {
    fn of(g: &Graph, atom: NodeId) -> Option<Quot> {
        let q = Quot::any(g, atom)?;
        (!q.rem).then_some(q)
    }

    /// A quotient or a remainder atom.
    fn any(g: &Graph, atom: NodeId) -> Option<Quot> {
        let n = g.node(atom);
        if n.maybe_invalid || n.dtype != crate::ir::DType::Index {
            return None;
        }
        let (trunc, rem) = match n.op {
            Op::FloorDiv => (false, false),
            Op::Div => (true, false),
            Op::Mod => (false, true),
            Op::Rem => (true, true),
            _ => return None,
        };
        let (num, dn) = (n.src()[0], n.src()[1]);
        let d = g.node(dn).as_const().filter(|&d| d > 1)? as i128;
        if trunc && g.node(num).vmin < 0 {
            return None;
        }
        Some(Quot { num, d, trunc, rem })
    }

    fn op(&self) -> Op {
        match (self.trunc, self.rem) {
            (false, false) => Op::FloorDiv,
            (true, false) => Op::Div,
            (false, true) => Op::Mod,
            (true, true) => Op::Rem,
        }
    }
}

/// A numerator `p` a truncating quotient may have: never negative.
fn non_negative(g: &Graph, p: &Poly, w: Width) -> bool {
    terms_range(g, &p.terms, p.k, w).is_some_and(|r| r.lo >= 0)
}

/// A numerator with a multiple of `d` in it (a term or the constant):
/// division by `d` takes that out again (`fold_divmod_general`'s
/// `factor_remainder`), so a merge must not build one.
pub(crate) fn splits_again(p: &Poly, d: i128) -> bool {
    p.terms.iter().any(|(_, c)| c % d == 0) || (p.k != 0 && p.k % d == 0)
}

/// `p op d` as a node (`None` when `p` is a constant: then the caller's
/// numerator folds, which it does not expect).
fn quotient_node(g: &mut Graph, p: &Poly, q: Quot) -> Option<NodeId> {
    if p.terms.is_empty() {
        return None;
    }
    let n = linear::build(g, p)?;
    let d = g.cnst(i64::try_from(q.d).ok()?, crate::ir::DType::Index);
    Some(g.mk(q.op(), &[n, d]))
}

/// Reads the quotient and remainder atoms of `acc` in their residue form
/// (a remainder loses the multiples: `(A*d + r) mod d == r mod d`).
/// Returns whether anything changed.
pub(crate) fn residues(g: &mut Graph, acc: &mut Acc, w: Width) -> Option<bool> {
    let atoms: Vec<(NodeId, i128, Quot)> = acc
        .terms
        .iter()
        .filter(|(m, c)| **c != 0 && m.len() == 1)
        .filter_map(|(m, c)| Some((m[0], *c, Quot::any(g, m[0])?)))
        .collect();
    let mut changed = false;
    for (atom, c, q) in atoms {
        let Some(n) = linear::read(g, q.num) else {
            continue;
        };
        let mut rest = Acc::default();
        let mut out = Acc::default();
        for (m, f) in &n.terms {
            // The centered residue: a small negative coefficient stays.
            let mut r = f.rem_euclid(q.d);
            if 2 * r > q.d {
                r -= q.d;
            }
            rest.add(m.clone(), r)?;
            out.add(m.clone(), ((f - r) / q.d).checked_mul(c)?)?;
        }
        rest.k = n.k.rem_euclid(q.d);
        out.k = n.k.div_euclid(q.d).checked_mul(c)?;
        if out.terms.values().all(|&v| v == 0) && out.k == 0 {
            continue;
        }
        let rest = rest.finish(g)?;
        if q.trunc && !non_negative(g, &rest, w) {
            continue;
        }
        acc.add_atom(atom, -c)?;
        match quotient_node(g, &rest, q) {
            Some(node) => acc.add_atom(node, c)?,
            // A constant residue numerator r is in [0, d): r // d == 0,
            // r mod d == r.
            None if q.rem => acc.k = acc.k.checked_add(rest.k.checked_mul(c)?)?,
            None => {}
        }
        if !q.rem {
            for (m, f) in out.terms {
                acc.add(m, f)?;
            }
            acc.k = acc.k.checked_add(out.k)?;
        }
        changed = true;
    }
    Some(changed)
}

/// The quotient atoms of `p` (single-atom terms), in its order.
fn quotients(g: &Graph, p: &Poly) -> Vec<(usize, Quot)> {
    p.terms
        .iter()
        .enumerate()
        .filter(|(_, (m, _))| m.len() == 1)
        .filter_map(|(i, (m, _))| Some((i, Quot::of(g, m[0])?)))
        .collect()
}

/// The cheapest node equal to `p` (see the module documentation) that
/// [`fits_new`] against `source`; the plain build when none does better.
pub(crate) fn build(g: &mut Graph, p: &Poly, source: NodeId, w: Width) -> Option<NodeId> {
    let plain = linear::build(g, p)?;
    // Without a quotient atom nothing pairs or merges: the plain build is
    // the only candidate (most sums; the rest below was most of their
    // normalization's time).
    if p.terms
        .iter()
        .all(|(m, _)| m.len() != 1 || Quot::of(g, m[0]).is_none())
    {
        return Some(plain);
    }
    let mut best = (g.size(plain), plain);
    let mut polys = vec![p.clone()];
    polys.extend(paired(g, p, w));
    for (i, q) in polys.iter().enumerate() {
        let mut cands = merged(g, q, w);
        if i > 0 {
            cands.extend(linear::build(g, q));
        }
        for c in cands {
            let cost = g.size(c);
            if cost < best.0 && fits_new(g, source, c, w) {
                best = (cost, c);
            }
        }
    }
    Some(best.1)
}

/// `p` with its two quotient atoms by one divisor, of coefficients `s` and
/// `-s`, made one: `s * (n1 // d) - s * (n2 // d) == s * ((n2 mod d + (n1 -
/// n2)) // d)`, and the same with the roles swapped.
fn paired(g: &mut Graph, p: &Poly, w: Width) -> Vec<Poly> {
    let qs = quotients(g, p);
    let mut out = Vec::new();
    for (a, (i, qi)) in qs.iter().enumerate() {
        for (j, qj) in qs.iter().skip(a + 1) {
            if qi.d != qj.d || qi.trunc != qj.trunc {
                continue;
            }
            // The only two by this divisor.
            if qs
                .iter()
                .filter(|(_, q)| q.d == qi.d && q.trunc == qi.trunc)
                .count()
                != 2
            {
                return out;
            }
            let (ci, cj) = (p.terms[*i].1, p.terms[*j].1);
            if ci != -cj {
                continue;
            }
            for (hi, lo, s) in [(*qi, *qj, ci), (*qj, *qi, cj)] {
                if let Some(r) = pair(g, p, hi, lo, s, w) {
                    out.push(r);
                }
            }
            return out;
        }
    }
    out
}

/// `p` with `s * (hi // d) - s * (lo // d)` replaced by `s * ((lo mod d +
/// (hi - lo)) // d)`.
fn pair(g: &mut Graph, p: &Poly, hi: Quot, lo: Quot, s: i128, w: Width) -> Option<Poly> {
    let nh = linear::read(g, hi.num)?;
    let nl = linear::read(g, lo.num)?;
    let mut b = nh.acc();
    b.add_poly(&nl, -1)?;
    let rop = if hi.trunc { Op::Rem } else { Op::Mod };
    let dn = g.cnst(i64::try_from(hi.d).ok()?, crate::ir::DType::Index);
    let m = g.mk(rop, &[lo.num, dn]);
    b.add_atom(m, 1)?;
    let num = b.finish(g)?;
    if hi.trunc && !non_negative(g, &num, w) {
        return None;
    }
    let node = quotient_node(g, &num, hi)?;
    let (ah, al) = (g.mk(hi.op(), &[hi.num, dn]), g.mk(lo.op(), &[lo.num, dn]));
    let mut acc = p.acc();
    acc.add_atom(ah, -s)?;
    acc.add_atom(al, s)?;
    acc.add_atom(node, s)?;
    acc.finish(g)
}

/// The merged and negated forms of `p`'s first quotient atom of
/// coefficient ±1, as nodes.
fn merged(g: &mut Graph, p: &Poly, w: Width) -> Vec<NodeId> {
    let mut out = Vec::new();
    let Some((i, q)) = quotients(g, p)
        .into_iter()
        .find(|(i, _)| p.terms[*i].1.abs() == 1)
    else {
        return out;
    };
    let s = p.terms[i].1;
    let Some(n) = linear::read(g, q.num) else {
        return out;
    };
    let mut rest = p.clone();
    rest.terms.remove(i);
    // What goes in: nothing, the constant, the terms the numerator has,
    // both.
    let mut ins: Vec<Poly> = vec![Poly::constant(0)];
    if rest.k != 0 {
        ins.push(Poly::constant(rest.k));
    }
    let shared: linear::PolyTerms = rest
        .terms
        .iter()
        .filter(|(m, _)| n.terms.iter().any(|(nm, _)| nm == m))
        .cloned()
        .collect();
    if !shared.is_empty() {
        ins.push(Poly {
            terms: shared.clone(),
            k: 0,
        });
        if rest.k != 0 {
            ins.push(Poly {
                terms: shared,
                k: rest.k,
            });
        }
    }
    for t in ins {
        let Some(c) = merge(g, &rest, &n, &t, q, s, w) else {
            continue;
        };
        out.extend(c);
    }
    out
}

/// `rest + s * (n // d)` with `t` (part of `rest`) moved into the
/// quotient, as nodes: with coefficient `s`, and (floor, `s == -1`)
/// negated.
fn merge(
    g: &mut Graph,
    rest: &Poly,
    n: &Poly,
    t: &Poly,
    q: Quot,
    s: i128,
    w: Width,
) -> Option<Vec<NodeId>> {
    let mut outer = rest.acc();
    outer.add_poly(t, -1)?;
    let outer = outer.finish(g)?;
    // s * (n // d) + t == s * ((n + s*t*d) // d).
    let mut num = n.acc();
    num.add_poly(t, s.checked_mul(q.d)?)?;
    let num = num.finish(g)?;
    let mut out = Vec::new();
    let with = |g: &mut Graph, atom: NodeId, c: i128| -> Option<NodeId> {
        let mut acc = outer.acc();
        acc.add_atom(atom, c)?;
        linear::build(g, &acc.finish(g)?)
    };
    if (!q.trunc || non_negative(g, &num, w)) && !splits_again(&num, q.d) {
        if let Some(atom) = quotient_node(g, &num, q) {
            out.extend(with(g, atom, s));
        }
    }
    if s == -1 && !q.trunc {
        // -(num // d) == (d - 1 - num) // d.
        let mut neg = Acc::default();
        neg.add_poly(&num, -1)?;
        neg.k = neg.k.checked_add(q.d - 1)?;
        let neg = neg.finish(g)?;
        if splits_again(&neg, q.d) {
            return Some(out);
        }
        if let Some(atom) = quotient_node(g, &neg, q) {
            out.extend(with(g, atom, 1));
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use crate::testing::simp;

    const V: &str = "var x in [-50, 50]\nvar y in [-50, 50]";

    #[test]
    fn quotients_differing_by_whole_multiples_combine() {
        assert_eq!(simp(V, "(x + 5) // 3 - (x + 2) // 3"), "1");
        assert_eq!(simp(V, "(x * 12 + y) // 5 - (x * 2 + y) // 5"), "x * 2");
        // A remainder is read the same way, so the two still recombine.
        assert_eq!(
            simp(V, "(x * 31 + 1) mod 18 + (x * 31 + 1) // 18 * 18"),
            "x * 31 + 1"
        );
        // A small negative coefficient stays as it is.
        assert_eq!(simp(V, "y - (y - x) // 5 * 5"), "x + (y - x) mod 5");
    }

    #[test]
    fn a_quotient_takes_in_what_makes_it_smaller() {
        assert_eq!(simp(V, "(x * 47 + 17) // 16"), "(x * 47 + 17) // 16");
        // Whole multiples of the divisor leave a lone quotient.
        assert_eq!(simp(V, "(x + 4) // 2"), "x // 2 + 2");
        assert_eq!(simp(V, "(y + 1) // 2 + 1"), "(y + 3) // 2");
        assert_eq!(simp(V, "x * 2 + (x * 2 + y) // 5"), "(x * 12 + y) // 5");
        assert_eq!(simp(V, "x // 2 + (x mod 2 + 7) // 2"), "(x + 7) // 2");
    }

    #[test]
    fn a_negated_quotient_is_a_quotient_of_the_negation() {
        assert_eq!(simp(V, "1 - (y + 1) // 2 - 1"), "-y // 2");
        assert_eq!(simp(V, "1 - (0 - y) // 5"), "(y + 9) // 5");
        // A quotient of a negated quotient is one quotient.
        assert_eq!(simp(V, "(x * -1 // 2 - 1) // 2"), "(-2 - x) // 4");
    }

    #[test]
    fn two_quotients_by_one_divisor_are_one() {
        assert_eq!(simp(V, "(x + 5) // 3 - x // 3"), "(x mod 3 + 5) // 3");
        assert_eq!(simp(V, "(x + y) // 3 - x // 3"), "(x mod 3 + y) // 3");
        assert_eq!(simp(V, "(x + 5) // 2 - (x - 2) // 2"), "x mod 2 + 3");
        let v = "var x in [0, 50]";
        assert_eq!(simp(v, "(x + 5) / 3 - x / 3"), "(x % 3 + 5) / 3");
    }
}
