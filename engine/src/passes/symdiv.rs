//! Division by a symbolic divisor (TVM's `(x*z + y) // z -> x + y // z`,
//! tinygrad's `(d*a*20 + b) // (d*5) -> a*4 + b // (d*5)`, TVM's
//! canonical `x * 32 * x mod x -> 0`).
//!
//! At `n // d`, `n mod d`, `n / d` or `n % d` with a divisor that is not a
//! constant, both are read as linear forms ([`crate::algebra::linear`]):
//!
//! - **a multiple**: `n == q * d` for a constant `q` is `q` (remainder 0);
//! - **multiples of a monomial divisor** `d = c * m` leave the division:
//!   `n = Q*d + R` with `Q` collecting every term `f * M` with `m` inside
//!   `M` and `c | f`; then `n // d == Q + R // d` and `n mod d == R mod d`
//!   for any `d != 0` (floor division by `d` is exact on a multiple of
//!   `d`); truncation only where `n` and `R` have one sign (there it is
//!   floor division of `|n|` by `|d|`, up to signs);
//! - **a common factor** `G` (a constant times a monomial) of every term of
//!   the numerator and of the divisor cancels: `(G*R) // (G*D) == R // D`
//!   (the same rational, so the same rounding, in either family, whatever
//!   the sign of `G`) and `(G*R) mod (G*D) == G * (R mod D)`.
//!
//! `G != 0` wherever the source is defined (its divisor `G*D` is not 0),
//! and so is the new divisor `D`: [`fits_new_dividing`] accepts it as a
//! divisor for that reason only. Algorithmic, recorded under [`RULES`] and
//! validated per firing; only where neither operand can be invalid (terms
//! are dropped and duplicated).

use crate::algebra::defined::{fits_new_dividing, rng};
use crate::algebra::linear::{self, terms_range, Acc, Mono, Poly};
use crate::ir::arith::gcd;
use crate::ir::dtype::Width;
use crate::ir::{DType, Graph, NodeId, Op};

/// The sub-rule names, in the order [`rewrite`] returns indices into.
pub const RULES: [&str; 1] = ["symbolic_divisor"];

/// Tries the rewrite at `n`, a division of either family by a non-constant.
pub fn rewrite(g: &mut Graph, n: NodeId, w: Width) -> Option<(usize, NodeId)> {
    let node = *g.node(n);
    let (is_div, trunc) = match node.op {
        Op::FloorDiv => (true, false),
        Op::Mod => (false, false),
        Op::Div => (true, true),
        Op::Rem => (false, true),
        _ => return None,
    };
    if node.dtype != DType::Index {
        return None;
    }
    let (x, y) = (node.src()[0], node.src()[1]);
    if g.node(x).maybe_invalid || g.node(y).maybe_invalid || g.node(y).as_const().is_some() {
        return None;
    }
    let pn = linear::read(g, x)?;
    let pd = linear::read(g, y)?;
    if pd.terms.is_empty() {
        return None;
    }
    let (out, divisor) = match multiple_of(&pn, &pd) {
        Some(q) => (
            linear::build(g, &Poly::constant(if is_div { q } else { 0 }))?,
            None,
        ),
        None => divide(g, node.op, is_div, trunc, x, y, &pn, &pd, w)?,
    };
    let new_divisors: Vec<NodeId> = divisor.into_iter().collect();
    if out == n || !fits_new_dividing(g, n, out, w, &new_divisors) {
        return None;
    }
    Some((0, out))
}

/// `q` with `n == q * d`, when there is one (`d` has a term).
fn multiple_of(n: &Poly, d: &Poly) -> Option<i128> {
    let (m0, c0) = &d.terms[0];
    let f0 = n.terms.iter().find(|t| &t.0 == m0)?.1;
    if f0 % c0 != 0 || n.terms.len() != d.terms.len() {
        return None;
    }
    let q = f0 / c0;
    let same = n
        .terms
        .iter()
        .zip(&d.terms)
        .all(|((mn, f), (md, c))| mn == md && c.checked_mul(q) == Some(*f))
        && d.k.checked_mul(q) == Some(n.k);
    same.then_some(q)
}

/// `(Q, R)` with `n == Q * d + R`: `Q` collects the terms `f * M` of `n`
/// with `m` inside `M` and `c | f`, for a monomial divisor `d = c * m`
/// (nothing for another divisor).
fn split_multiples(g: &Graph, n: &Poly, d: &Poly) -> Option<(Poly, Poly)> {
    let mut q = Acc::default();
    let mut r = Acc {
        k: n.k,
        ..Acc::default()
    };
    match &d.terms[..] {
        [(m, c)] if d.k == 0 => {
            for (mn, f) in &n.terms {
                match without(mn, m) {
                    Some(rest) if f % c == 0 => q.add(rest, f / c)?,
                    _ => r.add(mn.clone(), *f)?,
                }
            }
        }
        _ => {
            for (mn, f) in &n.terms {
                r.add(mn.clone(), *f)?;
            }
        }
    }
    Some((q.finish(g)?, r.finish(g)?))
}

/// `n` with each remainder `a mod e` by the divisor (`e == d` or `e ==
/// -d`; `%` for `/`) written as `a - e * (a // e)` (exact in either
/// family), for a monomial divisor: `x - x mod y` is `(x // y) * y`.
/// `None` when there is none.
fn expand_remainders(g: &mut Graph, n: &Poly, d: &Poly, trunc: bool) -> Option<Poly> {
    let [(dm, dc)] = &d.terms[..] else {
        return None;
    };
    if d.k != 0 {
        return None;
    }
    let (qop, rop) = if trunc {
        (Op::Div, Op::Rem)
    } else {
        (Op::FloorDiv, Op::Mod)
    };
    let mut acc = n.acc();
    let mut any = false;
    for (m, f) in &n.terms {
        let [atom] = m[..] else {
            continue;
        };
        let an = *g.node(atom);
        if an.op != rop || an.maybe_invalid {
            continue;
        }
        let (a, e) = (an.src()[0], an.src()[1]);
        let Some(pe) = linear::read(g, e) else {
            continue;
        };
        let s = match &pe.terms[..] {
            [(em, ec)] if pe.k == 0 && em == dm && (ec == dc || *ec == -dc) => ec / dc,
            _ => continue,
        };
        let Some(pa) = linear::read(g, a) else {
            continue;
        };
        // f * (a mod e) == f * a - f * s * c * (m * (a // e)).
        let qn = g.mk(qop, &[a, e]);
        let mut qm = dm.clone();
        qm.push(qn);
        qm.sort_by(|x, y| g.canonical_cmp(*x, *y));
        acc.add(m.clone(), -f)?;
        acc.add_poly(&pa, *f)?;
        acc.add(qm, f.checked_mul(s)?.checked_mul(*dc)?.checked_neg()?)?;
        any = true;
    }
    if !any {
        return None;
    }
    acc.finish(g)
}

/// `m` with the atoms of `part` taken out once each, if they are all in it.
fn without(m: &Mono, part: &Mono) -> Option<Mono> {
    let mut rest = m.clone();
    for a in part {
        let i = rest.iter().position(|x| x == a)?;
        rest.remove(i);
    }
    Some(rest)
}

/// The atoms two monomials share (as multisets).
fn shared(a: &Mono, b: &Mono) -> Mono {
    let mut rest = b.clone();
    let mut out = Mono::new();
    for x in a {
        if let Some(i) = rest.iter().position(|y| y == x) {
            rest.remove(i);
            out.push(*x);
        }
    }
    out
}

/// `Q + R op d` with the multiples of a monomial divisor taken out, and
/// the common factor of `R` and `d` cancelled; with the new divisor `D`
/// (`d == G * D`) when there is one.
#[allow(clippy::too_many_arguments)]
fn divide(
    g: &mut Graph,
    op: Op,
    is_div: bool,
    trunc: bool,
    x: NodeId,
    y: NodeId,
    pn: &Poly,
    pd: &Poly,
    w: Width,
) -> Option<(NodeId, Option<NodeId>)> {
    // Multiples of a monomial divisor c * m; with the numerator's
    // remainders by the divisor written out when that makes it a multiple.
    let (q, r) = match expand_remainders(g, pn, pd, trunc) {
        Some(e) => match split_multiples(g, &e, pd)? {
            (q, r) if r.terms.is_empty() && r.k == 0 => (q, r),
            _ => split_multiples(g, pn, pd)?,
        },
        None => split_multiples(g, pn, pd)?,
    };
    let (mut q, mut r) = (q, r);
    let mut took = !q.terms.is_empty() || q.k != 0;
    if took && trunc && (!r.terms.is_empty() || r.k != 0) {
        // Truncation is floor division of |n| by |d| up to signs: unless
        // the division is exact, n and R must have one sign.
        let nr = rng(g, x, w);
        let rr = terms_range(g, &r.terms, r.k, w)?;
        if !((nr.lo >= 0 && rr.lo >= 0) || (nr.hi <= 0 && rr.hi <= 0)) {
            (q, r, took) = (Poly::constant(0), pn.clone(), false);
        }
    }
    // The common factor G = gc * gm of R's terms (and constant) and d's.
    let mut gc = pd.k;
    let mut gm: Option<Mono> = None;
    for (m, c) in r.terms.iter().chain(&pd.terms) {
        gc = gcd(gc, *c);
        gm = Some(match gm {
            None => m.clone(),
            Some(s) => shared(&s, m),
        });
    }
    gc = gcd(gc, r.k);
    let mut gm = gm.unwrap_or_default();
    if r.k != 0 || pd.k != 0 {
        gm.clear();
    }
    let cancels = gc > 1 || !gm.is_empty();
    if !took && !cancels {
        return None;
    }
    let mut new_divisor = None;
    let rem_part = if r.terms.is_empty() && r.k == 0 {
        None
    } else if cancels {
        let over = |p: &Poly| -> Option<Poly> {
            let mut a = Acc::default();
            for (m, c) in &p.terms {
                a.add(without(m, &gm)?, c / gc)?;
            }
            a.k = a.k.checked_add(p.k / gc)?;
            a.finish(g)
        };
        let (r2, d2) = (over(&r)?, over(pd)?);
        let (rn, dn) = (linear::build(g, &r2)?, linear::build(g, &d2)?);
        new_divisor = Some(dn);
        let node = g.mk(op, &[rn, dn]);
        if is_div {
            Some(Poly {
                terms: smallvec::smallvec![(crate::algebra::linear::atom(node), 1)],
                k: 0,
            })
        } else {
            // G * (R' mod D').
            let mut m = gm.clone();
            m.push(node);
            m.sort_by(|a, b| g.canonical_cmp(*a, *b));
            Some(Poly {
                terms: smallvec::smallvec![(m, gc)],
                k: 0,
            })
        }
    } else {
        let rn = linear::build(g, &r)?;
        let node = g.mk(op, &[rn, y]);
        Some(Poly {
            terms: smallvec::smallvec![(crate::algebra::linear::atom(node), 1)],
            k: 0,
        })
    };
    let mut total = Acc::default();
    if is_div {
        total.add_poly(&q, 1)?;
    }
    if let Some(p) = &rem_part {
        total.add_poly(p, 1)?;
    }
    Some((linear::build(g, &total.finish(g)?)?, new_divisor))
}

#[cfg(test)]
mod tests {
    use crate::testing::simp;

    #[test]
    fn multiples_of_a_symbolic_divisor_leave_the_division() {
        let v = "var x in [-16, 16]\nvar y in [-16, 16]\nvar z in [1, 16]";
        assert_eq!(simp(v, "(x * z + y) // z"), "x + y // z");
        assert_eq!(simp(v, "(x * z + y) mod z"), "y mod z");
        assert_eq!(simp(v, "(x * z * 2 + y) // (z * 2)"), "x + y // (z * 2)");
        // Truncation only where the numerator and what is left share a sign.
        let v = "var x in [0, 16]\nvar y in [0, 16]\nvar z in [1, 16]";
        assert_eq!(simp(v, "(x * z + y) / z"), "x + y / z");
        let v = "var x in [-16, 16]\nvar y in [0, 16]\nvar z in [1, 16]";
        assert_eq!(simp(v, "(x * z + y) / z"), "(x * z + y) / z");
    }

    #[test]
    fn a_multiple_of_the_divisor_is_its_factor() {
        let v = "var x in [-16, 16]";
        assert_eq!(simp(v, "x * 32 * x mod x"), "0");
        assert_eq!(simp(v, "(x * 2 + 1) // (-1 - x * 2)"), "-1");
        assert_eq!(simp(v, "(x * 2 + 1) % (x * 2 + 1)"), "0");
    }

    #[test]
    fn a_numerator_less_its_remainder_is_a_multiple() {
        let v = "var x in [-16, 16]\nvar y in [1, 16]";
        assert_eq!(simp(v, "(x - x mod y) mod y"), "0");
        assert_eq!(simp(v, "(x - x mod (y * -1)) mod y"), "0");
        assert_eq!(simp(v, "(x + x * -1 mod y) mod y"), "0");
        assert_eq!(simp(v, "(x - x % y) % y"), "0");
        assert_eq!(simp(v, "(x - x mod y) // y"), "x // y");
    }

    #[test]
    fn an_exact_truncating_division_needs_no_sign() {
        let v = "var x in [-16, 16]\nvar y in [-16, 16]";
        assert_eq!(simp(v, "x * (x * 32) % x"), "0");
        assert_eq!(simp(v, "x * (y * 2) * 3 / (y * 3)"), "x * 2");
    }

    #[test]
    fn a_common_factor_of_numerator_and_divisor_cancels() {
        let v = "var x in [-16, 16]\nvar y in [-16, 16]\nvar z in [-16, 16]";
        assert_eq!(simp(v, "x * 2 * x * y // (4 * x * x * x)"), "y // (x * 2)");
        assert_eq!(simp(v, "x * 32 * x mod (x * y)"), "x * (x * 32 mod y)");
        assert_eq!(simp(v, "x * (y * 2) * 3 // (y * 3 * z)"), "x * 2 // z");
        // The factor's monomial divides the divisor to a constant.
        assert_eq!(
            simp(v, "y * x * 32 * (x * z) mod (y * (x * 6))"),
            "x * (x * z mod 3) * y * 2"
        );
        let v = "var a in [-10, 10]\nvar d1 in [1, 10]\nvar b in [-10, 10]\nvar d2 in [-10, -1]";
        assert_eq!(
            simp(v, "(3 * a * d1 + 9 * b * d1) // (3 * d1 * d2)"),
            "(a + b * 3) // d2"
        );
    }
}
