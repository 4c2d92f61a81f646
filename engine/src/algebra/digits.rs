//! Digit splits: an atom of the shape `(x // a) mod b` (also `x mod b`,
//! `x // a`, `x mod m // a`, any chain of them taking whole digits; `/`
//! and `%` alike, for either sign of `x`, since truncation is odd:
//! [`Split`]) is digit `a..a*b` of `x`. Splits of one base `x` fuse the way
//! digits do: `(x // a) mod b * s + (x // (a*b)) mod c * (s*b) == (x // a)
//! mod (b*c) * s`, down to `x` itself, which is then read into the sum
//! ([`fuse`], a step of the linear form's normalization).

use crate::algebra::linear::{build, cnst, read, terms_range, Acc, Poly};
use crate::ir::dtype::Width;
use crate::ir::{DType, Graph, NodeId, Op};
use rustc_hash::FxHashSet;
use smallvec::SmallVec;

/// Digits `lo..hi` of `base`: `(base // lo) mod (hi / lo)` (`base // lo`
/// when `hi` is `None`), with `lo | hi`, both positive. `trunc`: written
/// with `/` and `%`. Truncating division is odd (`(-x) / c == -(x / c)`,
/// `(-x) % c == -(x % c)` for `c > 0`), so a truncating split of `x` is
/// `sign(x)` times the floor split of `|x|`: every identity between splits
/// of one base that is linear in them (digit fusion, `x == (x / c) * c + x
/// % c`) holds for both families, whatever the sign of the base, as long
/// as the splits it relates are of one family. Where the base is
/// non-negative the two families agree ([`Split::floor_exact`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Split {
    pub base: NodeId,
    pub lo: i128,
    pub hi: Option<i128>,
    pub trunc: bool,
}

impl Split {
    /// The split equals the floor split of its digits: floor ops, or a
    /// non-negative base (the families then agree).
    pub fn floor_exact(&self, g: &Graph) -> bool {
        !self.trunc || g.node(self.base).vmin >= 0
    }

    /// `self` and `o` may be related by the identities between splits:
    /// one family, or both equal to floor splits.
    pub fn compatible(&self, o: &Split, g: &Graph) -> bool {
        self.trunc == o.trunc || (self.floor_exact(g) && o.floor_exact(g))
    }
}

/// The split an atom is, if any: a chain of quotients and remainders of
/// one family by positive constants, each taking whole digits of the one
/// below (`x % 20 / 2 % 2` is digits `2..4` of `x`).
pub fn split_of(g: &Graph, atom: NodeId) -> Option<Split> {
    let n = g.node(atom);
    if n.dtype != DType::Index {
        return None;
    }
    let (trunc, div, rem) = match n.op {
        Op::FloorDiv | Op::Mod => (false, Op::FloorDiv, Op::Mod),
        Op::Div | Op::Rem => (true, Op::Div, Op::Rem),
        _ => return None,
    };
    let pos_const = |id: NodeId| g.node(id).as_const().filter(|&c| c > 0).map(|c| c as i128);
    // The chain of ops from the atom down to the base.
    let mut chain: SmallVec<[(NodeId, Op, i128); 4]> = SmallVec::new();
    let mut x = atom;
    loop {
        let xn = g.node(x);
        if xn.op != div && xn.op != rem {
            break;
        }
        let Some(c) = pos_const(xn.src()[1]) else {
            break;
        };
        chain.push((x, xn.op, c));
        x = xn.src()[0];
    }
    // Digits lo..hi of the base, from the bottom up; an op that does not
    // take whole digits of the split below starts a new split on its
    // operand.
    let mut s = Split {
        base: x,
        lo: 1,
        hi: None,
        trunc,
    };
    for &(node, op, c) in chain.iter().rev() {
        let next = |s: &Split| -> Option<Split> {
            if s.hi.is_some_and(|h| (h / s.lo) % c != 0) {
                return None;
            }
            let mut t = *s;
            if op == div {
                t.lo = s.lo.checked_mul(c)?;
            } else {
                t.hi = Some(s.lo.checked_mul(c)?);
            }
            t.hi.is_none_or(|h| h > t.lo).then_some(t)
        };
        s = match next(&s) {
            Some(t) => t,
            None => next(&Split {
                base: g.node(node).src()[0],
                lo: 1,
                hi: None,
                trunc,
            })?,
        };
    }
    Some(s)
}

/// Builds a split's node (its base itself when it covers every digit).
pub fn split_node(g: &mut Graph, s: Split) -> Option<NodeId> {
    let (div, rem) = if s.trunc {
        (Op::Div, Op::Rem)
    } else {
        (Op::FloorDiv, Op::Mod)
    };
    let q = if s.lo == 1 {
        s.base
    } else {
        let l = cnst(g, s.lo)?;
        g.mk(div, &[s.base, l])
    };
    Some(match s.hi {
        None => q,
        Some(h) => {
            let m = cnst(g, h / s.lo)?;
            g.mk(rem, &[q, m])
        }
    })
}

/// Fuses the splits of each base, converts between the remainder and
/// the quotient where that saves a division, until nothing changes.
/// A split of a sum with a quotient term counts as a split of the sum that
/// quotient's numerator stands for ([`lift`]), and a split of one base as
/// a split of another where their digits agree ([`rebase`]), so that digits
/// of bases that differ by multiples fuse (XLA's
/// `(d1*2 + d0 // 64) mod 3 * 256 + d0 mod 64 * 4 + (d1*128 + d0) // 192 * 768`
/// is `d1*512 + d0*4`).
/// Returns whether anything changed.
pub fn fuse(g: &mut Graph, acc: &mut Acc) -> Option<bool> {
    let mut changed = false;
    // Each round can only read bases into the sum, which are smaller than
    // the splits they came from, so the rounds end (and a round cap stops
    // them regardless).
    for _ in 0..64 {
        let mut round = false;
        let mut splits: Group = SmallVec::new();
        for (m, &c) in &acc.terms {
            if m.len() != 1 || c == 0 {
                continue;
            }
            if let Some(s) = split_of(g, m[0]) {
                splits.push((s, m[0], c));
            }
        }
        // Without a split there is nothing to shorten, rebase or fuse.
        if splits.is_empty() {
            break;
        }
        splits.sort_unstable_by_key(|t| t.1);
        round |= shorten(g, acc, &mut splits)?;
        // Splits by base.
        let mut by_base = Groups::new();
        for (s, atom, c) in splits {
            let s = lift(g, s)?;
            group_of(&mut by_base, s.base).push((s, atom, c));
        }
        rebase(g, &mut by_base)?;
        for (base, mut group) in by_base {
            round |= fuse_group(g, acc, base, &mut group)?;
            round |= convert_group(g, acc, base, &group)?;
        }
        if !round {
            break;
        }
        changed = true;
    }
    Some(changed)
}

/// A floor split of a base `A + y // d` (one quotient term, of
/// coefficient one) is the same digits, times `d`, of `A*d + y`: for an integer `A`,
/// `A + y // d == (A*d + y) // d`. Lifted while it applies (a few times).
fn lift(g: &mut Graph, mut s: Split) -> Option<Split> {
    for _ in 0..4 {
        if s.trunc {
            break;
        }
        let Some(p) = read(g, s.base) else {
            break;
        };
        let mut quots = p.terms.iter().filter(|(m, c)| {
            *c == 1 && m.len() == 1 && {
                let n = g.node(m[0]);
                n.op == Op::FloorDiv
                    && !n.maybe_invalid
                    && g.node(n.src()[1]).as_const().is_some_and(|d| d > 1)
            }
        });
        let (Some((q, _)), None) = (quots.next(), quots.next()) else {
            break;
        };
        let qn = *g.node(q[0]);
        let (y, d) = (qn.src()[0], g.node(qn.src()[1]).as_const()? as i128);
        let mut a = p.acc();
        a.add(q.clone(), -1)?;
        let a = a.finish(g)?;
        if a.terms.is_empty() {
            break;
        }
        let mut b = Acc::default();
        b.add_poly(&a, d)?;
        crate::algebra::linear::add_read(g, &mut b, y, 1)?;
        let base = build(g, &b.finish(g)?)?;
        s = Split {
            base,
            lo: s.lo.checked_mul(d)?,
            hi: match s.hi {
                Some(h) => Some(h.checked_mul(d)?),
                None => None,
            },
            trunc: false,
        };
    }
    Some(s)
}

/// Moves splits between the groups of a few bases where they are the same
/// digits of the other base (floor splits, or equal to them): digits
/// `lo..h` of `b1` are those of `b2` when `b1 - b2` is a multiple of `h`
/// (`d0 mod 64 == (d1*128 + d0) mod 64`); digits `lo..hi` of `b1` are
/// digits `lo*m..hi*m` of `b2` when `b2 == m*b1 + r` with `0 <= r < m`
/// (`b1 == b2 // m`). Each split moves at most once.
fn rebase(g: &mut Graph, by_base: &mut Groups) -> Option<()> {
    let bases: SmallVec<[NodeId; 8]> = by_base.iter().map(|(b, _)| *b).collect();
    if bases.len() < 2 || bases.len() > 8 {
        return Some(());
    }
    let polys: Vec<Option<Poly>> = bases.iter().map(|&b| read(g, b)).collect();
    let mut moved: FxHashSet<NodeId> = FxHashSet::default();
    for (i, &b1) in bases.iter().enumerate() {
        let Some(p1) = &polys[i] else {
            continue;
        };
        let Some(group) = take_group(by_base, b1) else {
            continue;
        };
        let mut keep = Group::new();
        for (s, atom, c) in group {
            let target = if moved.contains(&atom) || !s.floor_exact(g) {
                None
            } else {
                bases.iter().zip(&polys).find_map(|(&b2, p2)| {
                    (b2 != b1).then_some(())?;
                    same_digits(g, s, p1, p2.as_ref()?, b2)
                })
            };
            match target {
                Some(t) => {
                    moved.insert(atom);
                    group_of(by_base, t.base).push((t, atom, c));
                }
                None => keep.push((s, atom, c)),
            }
        }
        if !keep.is_empty() {
            group_of(by_base, b1).extend(keep);
        }
    }
    Some(())
}

/// The digits of `s` (a split of the base read as `p1`) as a split of `b2`
/// (read as `p2`), if [`rebase`]'s conditions show they are.
fn same_digits(g: &Graph, s: Split, p1: &Poly, p2: &Poly, b2: NodeId) -> Option<Split> {
    let multiple = |p: &Poly, h: i128| p.terms.iter().all(|t| t.1 % h == 0) && p.k % h == 0;
    if let Some(h) = s.hi {
        let mut d = p1.acc();
        d.add_poly(p2, -1)?;
        if multiple(&d.finish(g)?, h) {
            return Some(Split {
                base: b2,
                trunc: false,
                ..s
            });
        }
    }
    let (t, c1) = p1.terms.first()?;
    let c2 = p2.terms.iter().find(|x| &x.0 == t)?.1;
    if c2 % c1 != 0 || c2 / c1 < 2 {
        return None;
    }
    let m = c2 / c1;
    let mut r = p2.acc();
    r.add_poly(p1, -m)?;
    let r = r.finish(g)?;
    let rr = terms_range(g, &r.terms, r.k, Width::W64)?;
    if rr.lo < 0 || rr.hi >= m {
        return None;
    }
    Some(Split {
        base: b2,
        lo: s.lo.checked_mul(m)?,
        hi: match s.hi {
            Some(h) => Some(h.checked_mul(m)?),
            None => None,
        },
        trunc: false,
    })
}

/// A split written with more divisions than its digits need (`x % 20 / 2
/// % 2` is `x / 2 % 2`) is written with the fewest.
fn shorten(g: &mut Graph, acc: &mut Acc, splits: &mut [(Split, NodeId, i128)]) -> Option<bool> {
    let mut changed = false;
    for t in splits.iter_mut() {
        let (s, atom, c) = *t;
        let mut ops = 0;
        let mut x = atom;
        while x != s.base {
            ops += 1;
            x = g.node(x).src()[0];
        }
        if ops <= (s.lo > 1) as usize + s.hi.is_some() as usize {
            continue;
        }
        let node = split_node(g, s)?;
        acc.add_atom(atom, -c)?;
        acc.add_atom(node, c)?;
        t.1 = node;
        changed = true;
    }
    Some(changed)
}

/// Splits with their atoms and coefficients in the sum.
type Group = SmallVec<[(Split, NodeId, i128); 4]>;

/// The splits of each base, in increasing order of the base (a sum has a
/// few).
type Groups = SmallVec<[(NodeId, Group); 4]>;

/// The group of `base`, made empty where there is none.
fn group_of(groups: &mut Groups, base: NodeId) -> &mut Group {
    let i = match groups.binary_search_by_key(&base, |(b, _)| *b) {
        Ok(i) => i,
        Err(i) => {
            groups.insert(i, (base, Group::new()));
            i
        }
    };
    &mut groups[i].1
}

/// The group of `base`, taken out.
fn take_group(groups: &mut Groups, base: NodeId) -> Option<Group> {
    let i = groups.binary_search_by_key(&base, |(b, _)| *b).ok()?;
    Some(groups.remove(i).1)
}

/// Digit fusion within the splits of one base: `lo..mid` with scale s and
/// `mid..hi` with scale `s * (mid / lo)` become `lo..hi` with scale s.
fn fuse_group(g: &mut Graph, acc: &mut Acc, base: NodeId, group: &mut Group) -> Option<bool> {
    let mut changed = false;
    'again: loop {
        for i in 0..group.len() {
            for j in 0..group.len() {
                let ((a, an, ca), (b, bn, cb)) = (group[i], group[j]);
                if i == j || a.hi != Some(b.lo) || !a.compatible(&b, g) {
                    continue;
                }
                if ca.checked_mul(b.lo / a.lo) != Some(cb) {
                    continue;
                }
                let fused = Split {
                    base,
                    lo: a.lo,
                    hi: b.hi,
                    trunc: a.trunc && b.trunc,
                };
                acc.add_atom(an, -ca)?;
                acc.add_atom(bn, -cb)?;
                group.retain(|t| t.1 != an && t.1 != bn);
                if fused.lo == 1 && fused.hi.is_none() {
                    add_base(g, acc, base, ca)?;
                } else {
                    let node = split_node(g, fused)?;
                    acc.add_atom(node, ca)?;
                    group.push((fused, node, ca));
                }
                changed = true;
                continue 'again;
            }
        }
        return Some(changed);
    }
}

/// Adds `c * base` to the sum, as the base's own terms.
fn add_base(g: &Graph, acc: &mut Acc, base: NodeId, c: i128) -> Option<()> {
    match read(g, base) {
        Some(p) => acc.add_poly(&p, c),
        None => acc.add_atom(base, c),
    }
}

/// Between the remainder and the quotient of one base by one divisor:
/// - both present: `x mod c * s + (x // c) * t == x * s + (x // c) * (t -
///   s*c)` (one division fewer; `x // 2 + x mod 2 == x - x // 2`);
/// - the quotient with `-s*c` and (most of) `s * x` present: `s * x - (x //
///   c) * (s*c) == (x mod c) * s` (`x - x // 8 * 8 == x mod 8`; a term of
///   `x` counts where the sum has at least `s` times it).
fn convert_group(
    g: &mut Graph,
    acc: &mut Acc,
    base: NodeId,
    group: &[(Split, NodeId, i128)],
) -> Option<bool> {
    for &(q, qn, t) in group {
        if q.hi.is_some() || acc.coef(&crate::algebra::linear::atom(qn)) != t {
            continue;
        }
        let c = q.lo;
        // A remainder by the same divisor.
        if let Some(&(_, rn, s)) = group.iter().find(|(r, rn, _)| {
            r.lo == 1
                && r.hi == Some(c)
                && r.compatible(&q, g)
                && acc.coef(&crate::algebra::linear::atom(*rn)) != 0
        }) {
            acc.add_atom(rn, -s)?;
            add_base(g, acc, base, s)?;
            acc.add_atom(qn, s.checked_mul(c)?.checked_neg()?)?;
            return Some(true);
        }
        // s * base - (base // c) * (s*c).
        if t % c != 0 {
            continue;
        }
        let s = -(t / c);
        let Some(bp) = read(g, base) else {
            continue;
        };
        // A term counts as present where the sum has at least s times it
        // (its coefficient then shrinks: `s0*7 - s0 // 3 * 12` is `s0*3 +
        // s0 mod 3 * 4`).
        let (mut present, mut missing) = (0, 0);
        for (m, f) in &bp.terms {
            let (want, have) = (f.checked_mul(s)?, acc.coef(m));
            if have == want || (have.signum() == want.signum() && have.abs() > want.abs()) {
                present += 1;
            } else {
                missing += 1;
            }
        }
        if present == 0 || missing > present {
            continue;
        }
        acc.add_poly(&bp, s.checked_neg()?)?;
        acc.add_atom(qn, -t)?;
        let r = split_node(
            g,
            Split {
                base,
                lo: 1,
                hi: Some(c),
                trunc: q.trunc,
            },
        )?;
        acc.add_atom(r, s)?;
        return Some(true);
    }
    Some(false)
}
