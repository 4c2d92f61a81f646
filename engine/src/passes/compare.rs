//! Comparisons of `index` expressions through the linear form.
//!
//! `a < b`, `a <= b`, `a == b` and `a != b` are read as one linear form
//! `e = a - b` compared with 0 (`a <= b` as `e - 1 < 0`), normalized like a
//! sum ([`crate::algebra::linear`]: like terms cancel, splits fuse, a quotient and
//! its base become a remainder), then:
//!
//! - **decided** when the range of `e` (interval arithmetic over its atoms)
//!   settles it;
//! - **divided** by a common factor: for an integer `A`, `g*A + s < 0` iff
//!   `A + floor(s / g) < 0` (`x*2 >= 3` is `1 < x`), and `g*A + s == 0`
//!   has no solution unless `g` divides `s`;
//! - **tile strides**: when the terms split as `g*A + r` with `floor(r / g)`
//!   one value `b` over `r`'s range (a tile offset below its stride),
//!   `g*A + r < 0` iff `A + b < 0` (`x*8 + y < 16` is `x < 2` for `y` in
//!   `[0, 8)`);
//! - **non-negative terms**: `sum c_i t_i < m` with every `c_i >= m > 0`
//!   and every `t_i >= 0` holds iff every `t_i` is 0, iff `sum t_i < 1`;
//! - a remainder pinned to a value takes its numerator's constant along
//!   (`(x + 31) mod 32 == 31` is `x mod 32 == 0`);
//! - written back with the positive terms on one side and the negative on
//!   the other, the constant where it needs no node (`x <= y` for
//!   `x - y - 1 < 0`).
//!
//! Like the linear form's, these are algorithmic rewrites validated per
//! firing, and apply only where neither operand can be invalid (a
//! comparison of an invalid operand is unconstrained, and these move
//! terms between operands).

use crate::algebra::defined::fits_new;
use crate::algebra::linear::{self, terms_range, Mono, Poly};
use crate::algebra::minmax;
use crate::algebra::relation::{relation, write, Rel};
use crate::ir::arith::{div_floor, gcd};
use crate::ir::dtype::Width;
use crate::ir::{DType, Graph, NodeId, Op};

/// The sub-rule names, in the order [`rewrite`] returns indices into.
pub const RULES: [&str; 2] = ["linear_compare", "linear_compare_decided"];

const COMPARE: usize = 0;
const DECIDED: usize = 1;

/// Tries the comparison rewrites at `n`.
pub fn rewrite(g: &mut Graph, n: NodeId, w: Width) -> Option<(usize, NodeId)> {
    let (rel, mut p) = relation(g, n)?;
    if let Some(v) = decide(g, rel, &p, w) {
        let out = g.bool_const(v);
        return Some((DECIDED, out));
    }
    // Whether a step below changed `p`: an unchanged `p` is undecided
    // still (`decide` reads only `p` and its atoms' ranges), not asked
    // again.
    let mut changed = false;
    if has_chain(g, &p) {
        if let Some(v) = decide_ordered(g, rel, &p, w) {
            let out = g.bool_const(v);
            return Some((DECIDED, out));
        }
        if rel == Rel::Lt {
            match through_chains(g, p, w)? {
                Ok(q) => {
                    p = q;
                    changed = true;
                }
                Err(v) => {
                    let out = g.bool_const(v);
                    return Some((DECIDED, out));
                }
            }
        }
    }
    let p = match rel {
        Rel::Lt => reduce_lt(g, p, w, &mut changed),
        Rel::Eq | Rel::Ne => match reduce_eq(p, &mut changed) {
            Ok(p) => match pinned_remainder(g, &p) {
                Some(q) => {
                    changed = true;
                    q
                }
                None => p,
            },
            Err(()) => {
                let out = g.bool_const(rel == Rel::Ne);
                return Some((DECIDED, out));
            }
        },
    };
    if changed {
        if let Some(v) = decide(g, rel, &p, w) {
            let out = g.bool_const(v);
            return Some((DECIDED, out));
        }
    }
    let out = write(g, rel, &p)?;
    if out == n || !fits_new(g, n, out, w) {
        return None;
    }
    Some((COMPARE, out))
}

/// The comparison's value when the range of `e` settles it.
fn decide(g: &Graph, rel: Rel, p: &Poly, w: Width) -> Option<bool> {
    let r = terms_range(g, &p.terms, p.k, w)?;
    match rel {
        Rel::Lt if r.hi < 0 => Some(true),
        Rel::Lt if r.lo >= 0 => Some(false),
        Rel::Eq | Rel::Ne if r.lo > 0 || r.hi < 0 => Some(rel == Rel::Ne),
        Rel::Eq | Rel::Ne if r.lo == 0 && r.hi == 0 => Some(rel == Rel::Eq),
        _ => None,
    }
}

/// `p` has a `min`/`max` term.
fn has_chain(g: &Graph, p: &Poly) -> bool {
    p.terms
        .iter()
        .any(|(m, _)| m.len() == 1 && matches!(g.node(m[0]).op, Op::Min | Op::Max))
}

/// The comparison's value when [`minmax::nonneg`] shows `e >= 0` or `e <=
/// -1` (`e >= 1` or `e <= -1` for an equality): through the arms of its
/// `min`/`max` terms (`x <= max(x, y)`, `min(x, 20) < min(x, 19)`).
fn decide_ordered(g: &mut Graph, rel: Rel, p: &Poly, w: Width) -> Option<bool> {
    let shifted = |p: &Poly, s: i128, k: i128| Poly {
        terms: p.terms.iter().map(|(m, c)| (m.clone(), c * s)).collect(),
        k: p.k * s + k,
    };
    // e <= -1: -e - 1 >= 0.
    let below = minmax::nonneg(g, &shifted(p, -1, -1), w)?;
    match rel {
        Rel::Lt => {
            if below {
                return Some(true);
            }
            minmax::nonneg(g, p, w)?.then_some(false)
        }
        Rel::Eq | Rel::Ne => {
            if below || minmax::nonneg(g, &shifted(p, 1, -1), w)? {
                Some(rel == Rel::Ne)
            } else {
                None
            }
        }
    }
}

/// `e < 0` through a `min`/`max` term `c * m` of `e`: where the term is a
/// minimum of `c * arm_i` (`m` a `min` and `c > 0`, or a `max` and `c <
/// 0`), `e < 0` iff some `e_i < 0` (`e_i`: the term replaced by `c *
/// arm_i`); where it is a maximum, iff every `e_i < 0`. An `e_i` that is
/// decided drops out (or decides `e`); one left is `e` itself, several
/// are the chain of those arms (`min(x, 11) < 10` is `x < 10`,
/// `min(z, y) < min(y + 5, x)` is `min(z, y) < x`). `Err(v)`: decided.
fn through_chains(g: &mut Graph, mut p: Poly, w: Width) -> Option<Result<Poly, bool>> {
    for _ in 0..4 {
        let mut changed = false;
        for (m, c) in p.terms.clone() {
            let [a] = m[..] else {
                continue;
            };
            let Some(ch) = minmax::read_chain(g, a, false) else {
                continue;
            };
            let min_like = (ch.op == Op::Min) == (c > 0);
            let mut kept = Vec::new();
            let mut kept_q = Vec::new();
            for arm in &ch.arms {
                let mut q = p.acc();
                q.add(m.clone(), -c)?;
                q.add_poly(arm, c)?;
                let q = q.finish(g)?;
                let never = minmax::nonneg(g, &q, w)?;
                let always = !never && {
                    let neg = Poly {
                        terms: q.terms.iter().map(|(m, c)| (m.clone(), -c)).collect(),
                        k: -q.k - 1,
                    };
                    minmax::nonneg(g, &neg, w)?
                };
                match (min_like, never, always) {
                    (true, _, true) => return Some(Err(true)),
                    (false, true, _) => return Some(Err(false)),
                    (true, true, _) | (false, _, true) => {}
                    _ => {
                        kept.push(arm.clone());
                        kept_q.push(q);
                    }
                }
            }
            if kept.len() == ch.arms.len() {
                continue;
            }
            match kept.len() {
                0 => return Some(Err(!min_like)),
                1 => p = kept_q.pop().expect("one arm"),
                _ => {
                    let node = minmax::build_chain(
                        g,
                        &minmax::Chain {
                            op: ch.op,
                            arms: kept,
                        },
                    )?;
                    let mut q = p.acc();
                    q.add(m.clone(), -c)?;
                    q.add_atom(node, c)?;
                    p = q.finish(g)?;
                }
            }
            changed = true;
            break;
        }
        if !changed {
            break;
        }
    }
    Some(Ok(p))
}

/// `e < 0` in its smallest equivalent form: divided by the coefficients'
/// gcd, then by a tile stride, then non-negative terms to 0/1.
/// `changed` is set when the result is not `p`.
fn reduce_lt(g: &Graph, p: Poly, w: Width, changed: &mut bool) -> Poly {
    let mut p = reduce_lt_once(g, p, w, changed);
    if let Some(q) = non_negative_terms(g, &p, w) {
        p = q;
        *changed = true;
    }
    // A lone quotient against a constant: compare its numerator (a few
    // times: the numerator may be a quotient again).
    for _ in 0..4 {
        match through_quotient(g, &p) {
            Some(q) => {
                *changed = true;
                p = reduce_lt_once(g, q, w, changed);
            }
            None => break,
        }
    }
    p
}

/// [`reduce_lt`]'s first steps: the gcd, then a tile stride.
fn reduce_lt_once(g: &Graph, mut p: Poly, w: Width, changed: &mut bool) -> Poly {
    // g*A + k < 0 iff A + floor(k/g) < 0.
    let cg = p.coef_gcd();
    if cg > 1 {
        for t in &mut p.terms {
            t.1 /= cg;
        }
        p.k = div_floor(p.k, cg).expect("cg > 0");
        *changed = true;
    }
    if let Some(q) = tile_stride(g, &p, w) {
        p = q;
        *changed = true;
    }
    p
}

/// `x // d + k < 0` (`x // d < C`) iff `x < C*d`; `-(x // d) + k < 0`
/// (`x // d >= M`) iff `x >= M*d`. For `/` (truncating), `x / d >= M` iff
/// `x >= M*d` when `M > 0`, else iff `x >= (M-1)*d + 1`. `d > 0`.
fn through_quotient(g: &Graph, p: &Poly) -> Option<Poly> {
    let [(m, c)] = &p.terms[..] else {
        return None;
    };
    let [q] = m[..] else {
        return None;
    };
    let qn = g.node(q);
    let trunc = match qn.op {
        Op::FloorDiv => false,
        Op::Div => true,
        _ => return None,
    };
    let d = g.node(qn.src()[1]).as_const().filter(|&d| d > 0)? as i128;
    let x = linear::read(g, qn.src()[0])?;
    // q >= M as x >= bound(M).
    let bound = |m: i128| -> Option<i128> {
        if trunc && m <= 0 {
            m.checked_sub(1)?.checked_mul(d)?.checked_add(1)
        } else {
            m.checked_mul(d)
        }
    };
    let mut acc = x.acc();
    match c {
        // q < C iff !(q >= C) iff x < bound(C): x - bound(C) < 0.
        1 => {
            let b = bound(p.k.checked_neg()?)?;
            acc.k = acc.k.checked_sub(b)?;
        }
        // q >= k + 1 iff x >= bound(k + 1): bound - x - 1 < 0.
        -1 => {
            let b = bound(p.k.checked_add(1)?)?;
            acc = Poly::constant(0).acc();
            acc.add_poly(&x, -1)?;
            acc.k = acc.k.checked_add(b)?.checked_sub(1)?;
        }
        _ => return None,
    }
    acc.finish(g)
}

/// g*A + r < 0 iff A + floor(r/g) < 0 for integer A, so when floor(r/g)
/// is one value b over r's range, the terms of r drop out: `A + b < 0`.
/// The terms are tried largest coefficient first; A takes a prefix of
/// them (as short as works), r the rest with the constant.
fn tile_stride(g: &Graph, p: &Poly, w: Width) -> Option<Poly> {
    if p.terms.len() < 2 {
        return None;
    }
    let mut order: Vec<usize> = (0..p.terms.len()).collect();
    order.sort_by(|&i, &j| p.terms[j].1.abs().cmp(&p.terms[i].1.abs()).then(i.cmp(&j)));
    let mut prefix_gcd = 0;
    for cut in 1..order.len() {
        prefix_gcd = gcd(prefix_gcd, p.terms[order[cut - 1]].1);
        if prefix_gcd <= 1 {
            return None;
        }
        let rest: Vec<(Mono, i128)> = order[cut..].iter().map(|&i| p.terms[i].clone()).collect();
        let Some(r) = terms_range(g, &rest, p.k, w) else {
            continue;
        };
        let (b1, b2) = (div_floor(r.lo, prefix_gcd)?, div_floor(r.hi, prefix_gcd)?);
        if b1 != b2 {
            continue;
        }
        let mut terms: linear::PolyTerms = order[..cut]
            .iter()
            .map(|&i| (p.terms[i].0.clone(), p.terms[i].1 / prefix_gcd))
            .collect();
        terms.sort_by(|a, b| linear::mono_cmp(g, &a.0, &b.0));
        return Some(Poly { terms, k: b1 });
    }
    None
}

/// `sum c_i t_i + k < 0` with every `c_i >= -k > 0` and every `t_i >= 0`:
/// true iff every `t_i` is 0, i.e. `sum t_i < 1`.
fn non_negative_terms(g: &Graph, p: &Poly, w: Width) -> Option<Poly> {
    let m = p.k.checked_neg()?;
    if m <= 0 || p.terms.is_empty() {
        return None;
    }
    if p.k == -1 && p.terms.iter().all(|t| t.1 == 1) {
        return None;
    }
    for (mono, c) in &p.terms {
        if *c < m || linear::mono_range(g, mono, w)?.lo < 0 {
            return None;
        }
    }
    Some(Poly {
        terms: p.terms.iter().map(|(m, _)| (m.clone(), 1)).collect(),
        k: -1,
    })
}

/// `n mod d == v` for `0 <= v < d` with a constant `j` in `n`: the offset
/// moves to the pinned value, `(n - j) mod d == (v - j) mod d` (Halide's
/// `(x + 31) mod 32 == 31` is `x mod 32 == 0`).
fn pinned_remainder(g: &mut Graph, p: &Poly) -> Option<Poly> {
    let [(m, c)] = &p.terms[..] else {
        return None;
    };
    let [a] = m[..] else {
        return None;
    };
    let an = *g.node(a);
    if an.op != Op::Mod || an.maybe_invalid || c.abs() != 1 {
        return None;
    }
    let d = g.node(an.src()[1]).as_const().filter(|&d| d > 0)? as i128;
    let v = -p.k * c;
    if !(0..d).contains(&v) {
        return None;
    }
    let n = linear::read(g, an.src()[0])?;
    if n.k == 0 || n.terms.is_empty() {
        return None;
    }
    let base = linear::build(
        g,
        &Poly {
            terms: n.terms.clone(),
            k: 0,
        },
    )?;
    let dn = g.cnst(i64::try_from(d).ok()?, DType::Index);
    let atom = g.mk(Op::Mod, &[base, dn]);
    Some(Poly {
        terms: smallvec::smallvec![(crate::algebra::linear::atom(atom), 1)],
        k: -(v - n.k).rem_euclid(d),
    })
}

/// `e == 0` divided by the gcd of its coefficients (`Err` when that does
/// not divide the constant: no solution), with the first term positive.
fn reduce_eq(mut p: Poly, changed: &mut bool) -> Result<Poly, ()> {
    let cg = p.coef_gcd();
    if cg > 1 {
        if p.k % cg != 0 {
            return Err(());
        }
        for t in &mut p.terms {
            t.1 /= cg;
        }
        p.k /= cg;
        *changed = true;
    }
    if p.terms.first().is_some_and(|t| t.1 < 0) {
        for t in &mut p.terms {
            t.1 = -t.1;
        }
        p.k = -p.k;
        *changed = true;
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use crate::testing::simp;

    #[test]
    fn a_comparison_left_unchanged_by_the_reductions_is_left_undecided() {
        use super::{decide, reduce_eq, reduce_lt, Rel};
        use crate::algebra::relation::relation;
        use crate::ir::dtype::Width;
        let mut exprs = String::new();
        let sides = [
            "x",
            "y",
            "z",
            "x * 2",
            "y * 3 - 1",
            "x + y",
            "z mod 4",
            "x // 3",
            "y - z * 4 + 2",
            "x * 8 + z",
            "7",
            "-3",
            "x * y",
            "(x + 5) mod 8",
            "16",
        ];
        for a in sides {
            for b in sides {
                for op in ["<", "<=", "==", "!="] {
                    exprs.push_str(&format!("expr {a} {op} {b}\n"));
                }
            }
        }
        let text = format!("var x in [0, 9]\nvar y in [-9, 9]\nvar z in [0, 7]\n{exprs}");
        let mut p = crate::parse::parse_program(&text).unwrap();
        let g = &mut p.graph;
        let mut unchanged = 0;
        for &o in &p.outputs {
            let Some((rel, e)) = relation(g, o) else {
                continue;
            };
            if decide(g, rel, &e, Width::W64).is_some() {
                continue;
            }
            let mut changed = false;
            let q = match rel {
                Rel::Lt => reduce_lt(g, e.clone(), Width::W64, &mut changed),
                _ => match reduce_eq(e.clone(), &mut changed) {
                    Ok(q) => q,
                    Err(()) => continue,
                },
            };
            if !changed {
                unchanged += 1;
                assert_eq!(q, e, "{}", crate::print::expr(g, o));
                assert_eq!(decide(g, rel, &q, Width::W64), None);
            }
        }
        assert!(unchanged >= 100, "{unchanged}");
    }

    #[test]
    fn like_terms_cancel_across_a_comparison() {
        let v = "var x in [-20, 20]\nvar y in [-20, 20]\nvar z in [-20, 20]";
        assert_eq!(simp(v, "x + y < x + z"), "y < z");
        assert_eq!(simp(v, "x - y < x - z"), "z < y");
        assert_eq!(simp(v, "x + 2 < y + 3"), "x <= y");
        assert_eq!(simp(v, "x + 5 < y + 10"), "x < y + 5");
        assert_eq!(simp(v, "10 - x == 0"), "x == 10");
    }

    #[test]
    fn common_factors_and_strides_divide_out() {
        let v = "var x in [-20, 20]";
        assert_eq!(simp(v, "x * 2 >= 3"), "1 < x");
        assert_eq!(simp(v, "x * 3 == -10"), "false");
        assert_eq!(simp(v, "x * 3 != -10"), "true");
        let v = "var x in [0, 100]\nvar y in [0, 7]";
        assert_eq!(simp(v, "x * 8 + y < 16"), "x < 2");
        let v = "var x in [-50, 50]";
        assert_eq!(simp(v, "x // 2 <= 1"), "x < 4");
    }

    #[test]
    fn a_quotient_against_its_base_is_a_remainder() {
        let v = "var x in [-50, 50]\nvar y in [-50, 50]";
        assert_eq!(simp(v, "x // 8 * 8 < x - y"), "y < x mod 8");
    }

    #[test]
    fn a_comparison_is_written_with_the_constants_it_already_has() {
        let v = "var x in [-20, 20]\nvar y in [-20, 20]";
        assert_eq!(simp(v, "x <= (x + 2) // 4 * 4"), "(x + 2) mod 4 <= 2");
        assert_eq!(
            simp(v, "x - y <= (x + 2) // 4 * 4"),
            "(x + 2) mod 4 <= y + 2"
        );
    }

    #[test]
    fn comparisons_of_chains_are_decided_arm_by_arm() {
        let v = "var x in [-20, 20]\nvar y in [-20, 20]\nvar z in [-20, 20]";
        assert_eq!(simp(v, "x <= max(x, y)"), "true");
        assert_eq!(simp(v, "max(x, y) < min(y, z)"), "false");
        assert_eq!(simp(v, "min(x, 20) < min(x, 19)"), "false");
        assert_eq!(simp(v, "max(x, 23) + 3 < max(x, 18)"), "false");
    }

    #[test]
    fn arms_a_comparison_decides_drop_out() {
        let v = "var x in [-20, 20]\nvar y in [-20, 20]\nvar z in [-20, 20]";
        assert_eq!(simp(v, "min(x, 11) < 10"), "x < 10");
        assert_eq!(simp(v, "x + 1 < max(x, 8)"), "x < 7");
        assert_eq!(simp(v, "max(x, y) <= y"), "x <= y");
        assert_eq!(simp(v, "min(z, y) < min(y, x)"), "z < min(x, y)");
        assert_eq!(simp(v, "min(z, y) < min(y + 5, x)"), "min(y, z) < x");
    }

    #[test]
    fn a_pinned_remainder_takes_the_offset_along() {
        let v = "var x in [-40, 40]";
        assert_eq!(simp(v, "(x + 31) mod 32 == 31"), "x mod 32 == 0");
        assert_eq!(simp(v, "(x + 3) mod 14 != 1"), "x mod 14 != 12");
    }

    #[test]
    fn non_negative_terms_below_their_smallest_coefficient_are_all_zero() {
        let v = "var a in [0, 3]\nvar b in [0, 3]";
        assert_eq!(simp(v, "a * 3 + b * 4 < 1"), "a + b < 1");
    }
}
