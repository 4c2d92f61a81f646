//! Residues (Halide's modulus-remainder analysis).
//!
//! Every `index` node gets a fact `value ≡ r (mod m)` that holds at every
//! point where the node is a defined value (`m == 0`: the value is `r`;
//! `m == 1`: nothing is known). Constants are exact; `+ - *` and negation
//! combine facts (`(m1, r1) * (m2, r2)` is `(gcd(m1 m2, m1 r2, m2 r1), r1
//! r2)`); `min`, `max` and the arms of a `where` join (`gcd(m1, m2, r1 -
//! r2)`: both values are in it); `a mod c` and `a % c` keep `gcd(m, c)`
//! (both differ from `a` by a multiple of `c`). Index arithmetic is exact
//! where it is defined (an overflow is undefined), so the facts are facts
//! of the integers. The residue pass ([`crate::passes::residue`]) rewrites
//! with them.

use crate::ir::arith::gcd;
use crate::ir::ranges::Range;
use crate::ir::{DType, Graph, NodeId, Op};
use rustc_hash::FxHashMap;

/// Nodes one analysis may visit: beyond it the answer is "nothing known",
/// so that a chain of remainders costs linear time, not quadratic.
const BUDGET: usize = 64;

/// `value ≡ r (mod m)`; `m == 0`: the value is `r`. Normalized: `0 <= r < m`
/// when `m > 0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Res {
    pub m: i128,
    pub r: i128,
}

const TOP: Res = Res { m: 1, r: 0 };

/// Moduli stay below this, so products of two never overflow `i128`.
const LIMIT: i128 = 1 << 62;

pub fn norm(m: Option<i128>, r: Option<i128>) -> Res {
    match (m, r) {
        (Some(m), Some(r)) if m.abs() < LIMIT && r.abs() < LIMIT => {
            let m = m.abs();
            if m == 0 {
                Res { m, r }
            } else {
                Res {
                    m,
                    r: r.rem_euclid(m),
                }
            }
        }
        _ => TOP,
    }
}

pub fn join(a: Res, b: Res) -> Res {
    norm(Some(gcd(gcd(a.m, b.m), a.r - b.r)), Some(a.r))
}

pub fn add(a: Res, b: Res) -> Res {
    norm(Some(gcd(a.m, b.m)), Some(a.r + b.r))
}

pub fn mul(a: Res, b: Res) -> Res {
    norm(
        Some(gcd(gcd(a.m * b.m, a.m * b.r), b.m * a.r)),
        Some(a.r * b.r),
    )
}

/// The residue of `e mod c` / `e % c` (`c > 0`), from `e`'s.
pub fn rem(op: Op, a: Res, c: i128) -> Res {
    if a.m == 0 {
        let v = if op == Op::Mod {
            a.r.rem_euclid(c)
        } else {
            a.r % c
        };
        return Res { m: 0, r: v };
    }
    norm(Some(gcd(a.m, c)), Some(a.r))
}

/// The residue of `n`, with `facts` overriding what the analysis would
/// find for the nodes they name. `TOP` beyond [`BUDGET`] nodes.
pub fn residue(g: &Graph, n: NodeId, facts: &FxHashMap<NodeId, Res>) -> Res {
    let mut memo: FxHashMap<NodeId, Res> = FxHashMap::default();
    let mut stack = vec![(n, false)];
    let mut visited = 0;
    while let Some((id, expanded)) = stack.pop() {
        if memo.contains_key(&id) {
            continue;
        }
        let node = g.node(id);
        if let Some(&f) = facts.get(&id) {
            memo.insert(id, f);
            continue;
        }
        if node.dtype != DType::Index {
            memo.insert(id, TOP);
            continue;
        }
        let src = node.src();
        if !expanded {
            visited += 1;
            if visited > BUDGET {
                return TOP;
            }
            stack.push((id, true));
            for &s in src {
                if !memo.contains_key(&s) {
                    stack.push((s, false));
                }
            }
            continue;
        }
        let arg = |i: usize| memo[&src[i]];
        let cnst = |i: usize| g.node(src[i]).as_const().map(|c| c as i128);
        let res = match node.op {
            Op::Const(c) => Res { m: 0, r: c as i128 },
            Op::Add => add(arg(0), arg(1)),
            Op::Sub => add(arg(0), norm(Some(arg(1).m), Some(-arg(1).r))),
            Op::Neg => norm(Some(arg(0).m), Some(-arg(0).r)),
            Op::Mul => mul(arg(0), arg(1)),
            Op::Min | Op::Max => join(arg(0), arg(1)),
            Op::Where => {
                // An invalid arm contributes no value.
                match (g.node(src[1]).op, g.node(src[2]).op) {
                    (Op::Invalid, Op::Invalid) => TOP,
                    (Op::Invalid, _) => arg(2),
                    (_, Op::Invalid) => arg(1),
                    _ => join(arg(1), arg(2)),
                }
            }
            Op::Mod | Op::Rem => match cnst(1) {
                Some(c) if c > 0 => rem(node.op, arg(0), c),
                _ => TOP,
            },
            Op::Shl => match cnst(1) {
                Some(k) if (0..62).contains(&k) => mul(arg(0), Res { m: 0, r: 1 << k }),
                _ => TOP,
            },
            _ => TOP,
        };
        memo.insert(id, res);
    }
    memo.get(&n).copied().unwrap_or(TOP)
}

/// The values `e mod c` (`c > 0`) can take given `e`'s residue: `None`
/// when that is all of `[0, c)`.
pub fn mod_values(a: Res, c: i128) -> Option<Range> {
    let g = if a.m == 0 { c } else { gcd(a.m, c) };
    if g <= 1 {
        return None;
    }
    let r = a.r.rem_euclid(g);
    Some(Range::new(r, c - g + r))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn residues_combine_through_sums_products_and_joins() {
        let x = TOP;
        let k = |r| Res { m: 0, r };
        // x * 9 + 1 ≡ 1 (mod 9); y * 6 - 2 ≡ 4 (mod 6); joined: 1 (mod 3).
        let a = add(mul(x, k(9)), k(1));
        assert_eq!(a, Res { m: 9, r: 1 });
        let b = add(mul(x, k(6)), k(-2));
        assert_eq!(b, Res { m: 6, r: 4 });
        assert_eq!(join(a, b), Res { m: 3, r: 1 });
        assert_eq!(join(k(3), k(5)), Res { m: 2, r: 1 });
        assert_eq!(rem(Op::Mod, Res { m: 12, r: 7 }, 8), Res { m: 4, r: 3 });
    }
}
