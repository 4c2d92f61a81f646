//! The split-sum generator: the canonical simplifier's territory.
//!
//! TVM's canonical form is built from split sums (`x // 4 * 4 + x mod 4`,
//! `(x * 3 + 1) // 8 * c`), and so are most of tinygrad's rules; the other
//! generators rarely meet one with signed numerators, negative divisors or a
//! remainder of the other family. A case here is one comparison (all six,
//! either operand order), `min`, `max`, `where`, product with a constant or
//! bare sum over one or two sums of terms `c * ((k * x + o) op d)`, where
//! `op` is any quotient or remainder of either division family (or none)
//! and `d` may be negative; a `split` term is a quotient and a remainder of
//! the same numerator and divisor recombined, sometimes with the remainder
//! of the other family. Variables are small and cross zero more often than
//! not, so domains stay exhaustive.

use super::{arb_family, Case, Family};
use arbitrary::{Arbitrary, Unstructured};
use engine::ir::{DType, Graph, NodeId, Op};
use engine::op::{Family as F, Part};

/// Most terms of one sum.
pub const MAX_SPLIT_TERMS: usize = 3;

/// A split-sum program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitSumGenome {
    /// The family of the first division drawn (nominal: terms draw their own).
    pub family: Family,
    /// Variables r0, r1, r2: `[lo, lo + width]`, lo in -16..=16, width 0..=15.
    pub vars: Vec<(i8, u8)>,
    /// 0 `where(lhs CMP rhs, lhs, rhs)`, 1 `min`, 2 `max`, 3 `lhs * k`,
    /// 4 `lhs + rhs`, 5 `lhs CMP rhs` (a bool root).
    pub form: u8,
    /// 0..6: `<`, `<=`, `>`, `>=`, `==`, `!=`.
    pub cmp: u8,
    /// Operands of the comparison, `min` or `max` swapped.
    pub swap: bool,
    pub lhs: Vec<SumTerm>,
    /// Empty: the constant `k`.
    pub rhs: Vec<SumTerm>,
    pub k: i8,
}

/// `coeff * ((scale * x + offset) op divisor)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SumTerm {
    pub var: u8,
    pub coeff: i8,
    /// 0 none, 1 `//`, 2 `mod`, 3 `/`, 4 `%`, 5 a split (`q * d + r`).
    pub op: u8,
    pub divisor: i8,
    pub scale: i8,
    pub offset: i8,
    /// For a split: the remainder of the other family.
    pub other_remainder: bool,
}

fn int(u: &mut Unstructured<'_>, lo: i64, hi: i64) -> arbitrary::Result<i64> {
    u.int_in_range(lo..=hi)
}

impl<'a> Arbitrary<'a> for SumTerm {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<SumTerm> {
        Ok(SumTerm {
            var: int(u, 0, 2)? as u8,
            coeff: int(u, -4, 4)? as i8,
            op: int(u, 0, 5)? as u8,
            divisor: int(u, -16, 16)? as i8,
            scale: int(u, -3, 3)? as i8,
            offset: int(u, -8, 8)? as i8,
            other_remainder: bool::arbitrary(u)?,
        })
    }
}

impl<'a> Arbitrary<'a> for SplitSumGenome {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<SplitSumGenome> {
        let family = arb_family(u)?;
        let nvars = int(u, 1, 3)? as usize;
        let mut vars = Vec::with_capacity(nvars);
        for _ in 0..nvars {
            vars.push((int(u, -16, 16)? as i8, int(u, 0, 15)? as u8));
        }
        let form = int(u, 0, 5)? as u8;
        let cmp = int(u, 0, 5)? as u8;
        let swap = bool::arbitrary(u)?;
        let mut terms = |lo: i64| -> arbitrary::Result<Vec<SumTerm>> {
            let n = int(u, lo, MAX_SPLIT_TERMS as i64)? as usize;
            (0..n).map(|_| SumTerm::arbitrary(u)).collect()
        };
        let lhs = terms(1)?;
        let rhs = terms(0)?;
        let k = int(u, -16, 16)? as i8;
        Ok(SplitSumGenome {
            family,
            vars,
            form,
            cmp,
            swap,
            lhs,
            rhs,
            k,
        })
    }
}

impl SplitSumGenome {
    /// Builds the case. Total: every field is clamped or defaulted.
    pub fn build(&self) -> Case {
        let mut g = Graph::new();
        let vars: Vec<NodeId> = if self.vars.is_empty() {
            vec![(0i8, 7u8)]
        } else {
            self.vars.clone()
        }
        .iter()
        .take(3)
        .enumerate()
        .map(|(i, &(lo, w))| {
            let lo = (lo as i64).clamp(-16, 16);
            let v = g
                .declare_var(&format!("r{i}"), DType::Index, lo, lo + (w as i64).min(15))
                .expect("fresh names, lo <= hi");
            g.var_node(v)
        })
        .collect();
        let mut family = None;
        let mut sum = |g: &mut Graph, terms: &[SumTerm]| -> Option<NodeId> {
            let mut acc: Option<NodeId> = None;
            for t in terms.iter().take(MAX_SPLIT_TERMS) {
                let term = build_term(g, &vars, t, &mut family);
                acc = Some(match acc {
                    None => term,
                    Some(a) => g.mk(Op::Add, &[a, term]),
                });
            }
            acc
        };
        let lhs = sum(&mut g, &self.lhs).unwrap_or(vars[0]);
        let k = g.cnst(self.k as i64, DType::Index);
        let rhs = sum(&mut g, &self.rhs).unwrap_or(k);
        let (a, b) = if self.swap { (rhs, lhs) } else { (lhs, rhs) };
        let cmp = |g: &mut Graph| -> NodeId {
            // `>` and `>=` are `<` and `<=` with the operands swapped.
            let (op, x, y) = match self.cmp % 6 {
                0 => (Op::Lt, a, b),
                1 => (Op::Le, a, b),
                2 => (Op::Lt, b, a),
                3 => (Op::Le, b, a),
                4 => (Op::Eq, a, b),
                _ => (Op::Ne, a, b),
            };
            g.mk(op, &[x, y])
        };
        let (root, shape) = match self.form % 6 {
            0 => {
                let c = cmp(&mut g);
                (g.mk(Op::Where, &[c, lhs, rhs]), "where")
            }
            1 => (g.mk(Op::Min, &[a, b]), "min"),
            2 => (g.mk(Op::Max, &[a, b]), "max"),
            3 => (g.mk(Op::Mul, &[lhs, k]), "product"),
            4 => (g.mk(Op::Add, &[lhs, rhs]), "sum"),
            _ => (cmp(&mut g), "comparison"),
        };
        let family = family.unwrap_or(self.family);
        Case {
            description: format!(
                "generator splitsum: a {shape} over split sums ({} terms)",
                self.lhs.len().min(MAX_SPLIT_TERMS) + self.rhs.len().min(MAX_SPLIT_TERMS)
            ),
            graph: g,
            roots: vec![root],
            family,
        }
    }
}

/// `coeff * ((scale * x + offset) op divisor)`; `family` records the first
/// division family used.
fn build_term(g: &mut Graph, vars: &[NodeId], t: &SumTerm, family: &mut Option<Family>) -> NodeId {
    let x = vars[t.var as usize % vars.len()];
    let nonzero = |v: i8, default: i64| if v == 0 { default } else { v as i64 };
    let scale = g.cnst(nonzero(t.scale, 1), DType::Index);
    let offset = g.cnst(t.offset as i64, DType::Index);
    let scaled = g.mk(Op::Mul, &[x, scale]);
    let num = g.mk(Op::Add, &[scaled, offset]);
    let d = nonzero(t.divisor, 3);
    let dn = g.cnst(d, DType::Index);
    let fam = |op: u8| {
        if op == 1 || op == 2 {
            F::Floor
        } else {
            F::Trunc
        }
    };
    let body = match t.op % 6 {
        0 => num,
        op @ 1..=4 => {
            family.get_or_insert(if fam(op) == F::Floor {
                Family::Floor
            } else {
                Family::Trunc
            });
            let part = if op % 2 == 1 {
                Part::Quotient
            } else {
                Part::Remainder
            };
            let o = Op::division(fam(op), part).expect("a division op");
            g.mk(o, &[num, dn])
        }
        _ => {
            // q * d + r, with r of the same family or of the other one.
            let qf = fam(t.coeff.unsigned_abs() % 2 + 1);
            let rf = match (qf, t.other_remainder) {
                (F::Floor, true) | (F::Trunc, false) => F::Trunc,
                _ => F::Floor,
            };
            family.get_or_insert(if qf == F::Floor {
                Family::Floor
            } else {
                Family::Trunc
            });
            let q = g.mk(
                Op::division(qf, Part::Quotient).expect("quotient"),
                &[num, dn],
            );
            let r = g.mk(
                Op::division(rf, Part::Remainder).expect("remainder"),
                &[num, dn],
            );
            let qd = g.mk(Op::Mul, &[q, dn]);
            g.mk(Op::Add, &[qd, r])
        }
    };
    let c = g.cnst(nonzero(t.coeff, 1), DType::Index);
    g.mk(Op::Mul, &[body, c])
}
