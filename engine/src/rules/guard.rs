//! Guards, evaluated once: one evaluator ([`eval`]) generic over a
//! [`GuardDomain`]. The engine runs it on exact integers at a match
//! ([`AtMatch`]: does this rule fire here?); the verifier runs it on Z3
//! terms over the pattern variables' symbolic values and bounds (the
//! guard as the proof's premise). What a guard means is therefore written
//! once, and the proof assumes exactly what the engine checks.
//!
//! Guard arithmetic is exact (mathematical integers). A guard that divides
//! by zero anywhere is false, as is one whose exact value the concrete
//! domain cannot compute (an empty range, a value beyond `i128`): the rule
//! then does not fire, which is always safe.

use super::ast::{resolve_ty, Binding, Guard, Helper, IExpr, Rule, Ty};
use crate::ir::arith::{exact, gcd, is_pow2, log2};
use crate::ir::dtype::Width;
use crate::ir::truediv::{truediv, Round};
use crate::ir::{Graph, Node, Op};

/// The values a guard is evaluated on, and the primitives it needs.
pub trait GuardDomain {
    /// A number.
    type N: Clone;
    /// A condition.
    type B: Clone;

    fn int(&mut self, v: i128) -> Self::N;
    fn bool(&mut self, b: bool) -> Self::B;
    /// The value of constant variable `v` (a bool constant is 0 or 1).
    fn value(&mut self, v: usize) -> Self::N;
    /// `vmin`, `vmax` of the subterm matched by variable `v`.
    fn bounds(&mut self, v: usize) -> (Self::N, Self::N);
    /// `valid(v)`: the matched subterm is never invalid.
    fn valid(&mut self, v: usize) -> Self::B;
    /// `constrained(v)`: the matched subterm is never unconstrained.
    fn constrained(&mut self, v: usize) -> Self::B;
    /// `is_const(v)`: the matched subterm is a constant node.
    fn is_const(&mut self, v: usize) -> Self::B;
    /// Inclusive value bounds of a dtype at the width being judged.
    fn dtype_bounds(&mut self, t: Ty) -> (Self::N, Self::N);
    /// Exact `a op b` for `+ - * min max` and both division families (the
    /// divisor's non-zeroness is [`eval`]'s definedness condition: any
    /// value where it is zero).
    fn arith(&mut self, op: Op, a: &Self::N, b: &Self::N) -> Self::N;
    fn neg(&mut self, a: &Self::N) -> Self::N;
    fn lt(&mut self, a: &Self::N, b: &Self::N) -> Self::B;
    fn le(&mut self, a: &Self::N, b: &Self::N) -> Self::B;
    fn eq(&mut self, a: &Self::N, b: &Self::N) -> Self::B;
    fn and(&mut self, a: &Self::B, b: &Self::B) -> Self::B;
    fn or(&mut self, a: &Self::B, b: &Self::B) -> Self::B;
    fn not(&mut self, a: &Self::B) -> Self::B;
    /// `gcd(a, b)` (non-negative, `gcd(0, 0) == 0`), and a condition that
    /// pins the returned value to it (a symbolic domain defines the gcd by
    /// facts; a concrete one returns true).
    fn gcd(&mut self, a: &Self::N, b: &Self::N) -> (Self::N, Self::B);
    /// `a` is a positive power of two.
    fn is_pow2(&mut self, a: &Self::N) -> Self::B;
    /// `log2(a)`, meaningful where `a` is a positive power of two.
    fn log2(&mut self, a: &Self::N) -> Self::N;
    /// Python's `a / b` on ints rounded to an integer by `r`
    /// (`crate::ir::truediv`), and where Python computes it (`b != 0`, no
    /// overflow).
    fn truediv(&mut self, a: &Self::N, b: &Self::N, r: Round) -> (Self::N, Self::B);
    /// The interval arithmetic bounded the product `x * y` by `[lo, hi]`
    /// (its corner products). A symbolic domain may state that fact about
    /// the values (the multiplication transfer lemma) so that the solver
    /// need not rediscover it; a concrete one needs nothing.
    fn product_bounds(&mut self, _x: &IExpr, _y: &IExpr, _lo: &Self::N, _hi: &Self::N) {}
    /// The condition's value when the domain knows it now (a concrete
    /// domain); `None` for a symbolic one, which evaluates every operand.
    fn decided(&self, _b: &Self::B) -> Option<bool> {
        None
    }
}

/// Whether `g` is defined wherever it is evaluated: no division or
/// remainder, and no helper defined only on some values (`log2`, the
/// true divisions, `gcd` of an unknown value). Its definedness condition
/// is then true, so an `&&` (`||`) whose first operand is false (true)
/// has that operand's value and definedness without evaluating it.
fn total(g: &Guard) -> bool {
    crate::deep::grow(|| match g {
        Guard::Int(_)
        | Guard::Bool(_)
        | Guard::Val(_)
        | Guard::Valid(_)
        | Guard::Constrained(_)
        | Guard::IsConst(_)
        | Guard::TyMin(_)
        | Guard::TyMax(_) => true,
        Guard::VMin(e) | Guard::VMax(e) | Guard::Fits(e, _) => total_interval(e),
        Guard::Un(_, a) => total(a),
        Guard::Bin(op, a, b) => !op.is_divmod() && total(a) && total(b),
        Guard::Call(h, args) => {
            matches!(
                h,
                Helper::Abs | Helper::Min | Helper::Max | Helper::Divides | Helper::IsPow2
            ) && args.iter().all(total)
        }
    })
}

fn total_interval(e: &IExpr) -> bool {
    crate::deep::grow(|| match e {
        IExpr::Var(_) => true,
        IExpr::Scalar(g) => total(g),
        IExpr::Neg(x) => total_interval(x),
        IExpr::Bin(_, x, y) => total_interval(x) && total_interval(y),
    })
}

/// A guard's value: a number or a condition.
#[derive(Clone, Debug)]
pub enum GVal<N, B> {
    N(N),
    B(B),
}

impl<N, B> GVal<N, B> {
    pub fn num(self) -> N {
        match self {
            GVal::N(n) => n,
            GVal::B(_) => unreachable!("the rule parser checks that a number is here"),
        }
    }

    pub fn cond(self) -> B {
        match self {
            GVal::B(b) => b,
            GVal::N(_) => unreachable!("the rule parser checks that a condition is here"),
        }
    }
}

/// Whether the guard holds: its value is true and it is defined.
pub fn holds<D: GuardDomain>(d: &mut D, g: &Guard) -> D::B {
    let (v, def) = eval(d, g);
    let v = v.cond();
    d.and(&v, &def)
}

/// A guard expression's value and whether it is defined (no division by
/// zero in it).
pub fn eval<D: GuardDomain>(d: &mut D, g: &Guard) -> (GVal<D::N, D::B>, D::B) {
    crate::deep::grow(|| {
        let yes = d.bool(true);
        match g {
            Guard::Int(v) => (GVal::N(d.int(*v)), yes),
            Guard::Bool(b) => (GVal::B(d.bool(*b)), yes),
            Guard::Val(v) => (GVal::N(d.value(*v)), yes),
            Guard::VMin(e) => {
                let (lo, _, def) = interval(d, e);
                (GVal::N(lo), def)
            }
            Guard::VMax(e) => {
                let (_, hi, def) = interval(d, e);
                (GVal::N(hi), def)
            }
            Guard::Fits(e, t) => {
                let (lo, hi, def) = interval(d, e);
                let (tlo, thi) = d.dtype_bounds(*t);
                let (a, b) = (d.le(&tlo, &lo), d.le(&hi, &thi));
                (GVal::B(d.and(&a, &b)), def)
            }
            Guard::Valid(v) => (GVal::B(d.valid(*v)), yes),
            Guard::Constrained(v) => (GVal::B(d.constrained(*v)), yes),
            Guard::IsConst(v) => (GVal::B(d.is_const(*v)), yes),
            Guard::TyMin(t) => (GVal::N(d.dtype_bounds(*t).0), yes),
            Guard::TyMax(t) => (GVal::N(d.dtype_bounds(*t).1), yes),
            Guard::Un(Op::Not, a) => {
                let (v, def) = eval(d, a);
                let v = v.cond();
                (GVal::B(d.not(&v)), def)
            }
            Guard::Un(_, a) => {
                let (v, def) = eval(d, a);
                let v = v.num();
                (GVal::N(d.neg(&v)), def)
            }
            Guard::Bin(op @ (Op::And | Op::Or), x, y) => {
                let (a, da) = eval(d, x);
                let a = a.cond();
                // `false && y` is false, `true || y` true, and a total `y`
                // adds no condition of definedness.
                let absorbing = *op == Op::Or;
                if d.decided(&a) == Some(absorbing) && total(y) {
                    return (GVal::B(a), da);
                }
                let (b, db) = eval(d, y);
                let b = b.cond();
                let def = d.and(&da, &db);
                let v = if *op == Op::And {
                    d.and(&a, &b)
                } else {
                    d.or(&a, &b)
                };
                (GVal::B(v), def)
            }
            Guard::Bin(op, x, y) => {
                let ((a, da), (b, db)) = (eval(d, x), eval(d, y));
                let def = d.and(&da, &db);
                match (a, b) {
                    (GVal::B(p), GVal::B(q)) => {
                        let v = if *op == Op::And {
                            d.and(&p, &q)
                        } else {
                            d.or(&p, &q)
                        };
                        (GVal::B(v), def)
                    }
                    (GVal::N(p), GVal::N(q)) => match op {
                        Op::Lt => (GVal::B(d.lt(&p, &q)), def),
                        Op::Le => (GVal::B(d.le(&p, &q)), def),
                        Op::Eq => (GVal::B(d.eq(&p, &q)), def),
                        Op::Ne => {
                            let e = d.eq(&p, &q);
                            (GVal::B(d.not(&e)), def)
                        }
                        _ => {
                            let def = if op.is_divmod() {
                                // A guard that divides by zero is false.
                                let zero = d.int(0);
                                let z = d.eq(&q, &zero);
                                let nz = d.not(&z);
                                d.and(&def, &nz)
                            } else {
                                def
                            };
                            (GVal::N(d.arith(*op, &p, &q)), def)
                        }
                    },
                    _ => unreachable!("the rule parser checks operand kinds"),
                }
            }
            Guard::Call(h, args) => {
                let mut vals = Vec::with_capacity(args.len());
                let mut def = yes;
                for a in args {
                    let (v, da) = eval(d, a);
                    vals.push(v.num());
                    def = d.and(&def, &da);
                }
                let (v, dh) = helper(d, *h, &vals);
                (v, d.and(&def, &dh))
            }
        }
    })
}

/// A helper applied to numbers: its value and where it is defined. Used by
/// guards and by the constants a right side computes (`log2(C)`).
pub fn helper<D: GuardDomain>(d: &mut D, h: Helper, vals: &[D::N]) -> (GVal<D::N, D::B>, D::B) {
    let yes = d.bool(true);
    let x = &vals[0];
    match h {
        Helper::Abs => {
            let n = d.neg(x);
            (GVal::N(d.arith(Op::Max, x, &n)), yes)
        }
        Helper::Min => (GVal::N(d.arith(Op::Min, x, &vals[1])), yes),
        Helper::Max => (GVal::N(d.arith(Op::Max, x, &vals[1])), yes),
        Helper::Divides => {
            let zero = d.int(0);
            let z = d.eq(x, &zero);
            let nz = d.not(&z);
            // With x = 0 the remainder is any value, but the conjunct
            // `x != 0` already decides.
            let r = d.arith(Op::Rem, &vals[1], x);
            let r0 = d.eq(&r, &zero);
            (GVal::B(d.and(&nz, &r0)), yes)
        }
        Helper::IsPow2 => (GVal::B(d.is_pow2(x)), yes),
        Helper::Log2 => {
            let ok = d.is_pow2(x);
            (GVal::N(d.log2(x)), ok)
        }
        Helper::Gcd => {
            let (g, fact) = d.gcd(x, &vals[1]);
            (GVal::N(g), fact)
        }
        Helper::TrueDiv(r) => {
            let (v, def) = d.truediv(x, &vals[1], r);
            (GVal::N(v), def)
        }
    }
}

/// Interval arithmetic over matched subterms' bounds: the bounds of an
/// interval expression, and whether they are defined.
pub fn interval<D: GuardDomain>(d: &mut D, e: &IExpr) -> (D::N, D::N, D::B) {
    crate::deep::grow(|| match e {
        IExpr::Var(v) => {
            let (lo, hi) = d.bounds(*v);
            let yes = d.bool(true);
            (lo, hi, yes)
        }
        IExpr::Scalar(g) => {
            let (v, def) = eval(d, g);
            let v = v.num();
            (v.clone(), v, def)
        }
        IExpr::Neg(x) => {
            let (lo, hi, def) = interval(d, x);
            (d.neg(&hi), d.neg(&lo), def)
        }
        IExpr::Bin(op, x, y) => {
            let (a0, a1, da) = interval(d, x);
            let (b0, b1, db) = interval(d, y);
            let def = d.and(&da, &db);
            match op {
                Op::Add => (d.arith(Op::Add, &a0, &b0), d.arith(Op::Add, &a1, &b1), def),
                Op::Sub => (d.arith(Op::Sub, &a0, &b1), d.arith(Op::Sub, &a1, &b0), def),
                _ => {
                    let c = [
                        d.arith(Op::Mul, &a0, &b0),
                        d.arith(Op::Mul, &a0, &b1),
                        d.arith(Op::Mul, &a1, &b0),
                        d.arith(Op::Mul, &a1, &b1),
                    ];
                    let (m01, m23) = (
                        d.arith(Op::Min, &c[0], &c[1]),
                        d.arith(Op::Min, &c[2], &c[3]),
                    );
                    let (x01, x23) = (
                        d.arith(Op::Max, &c[0], &c[1]),
                        d.arith(Op::Max, &c[2], &c[3]),
                    );
                    let lo = d.arith(Op::Min, &m01, &m23);
                    let hi = d.arith(Op::Max, &x01, &x23);
                    d.product_bounds(x, y, &lo, &hi);
                    (lo, hi, def)
                }
            }
        }
    })
}

/// The concrete domain: a rule's guard at one match, on exact integers at
/// width `w` (ranges cut to W bits, W-bit dtype bounds), as the proof at
/// that width assumes. `None` is a value the engine cannot compute (an
/// empty range, a result beyond `i128`): it makes the guard false. Logic
/// is Kleene's (`false && unknown` is false), so `divides(0, n)` is false
/// rather than unknown, as in the proof.
pub struct AtMatch<'a> {
    pub graph: &'a Graph,
    pub rule: &'a Rule,
    pub binding: &'a Binding,
    pub width: Width,
}

impl AtMatch<'_> {
    fn node(&self, v: usize) -> &Node {
        self.graph
            .node(self.binding.nodes[v].expect("guard variables are bound"))
    }
}

/// A node's range as the proof at width `w` sees it: an `index` range cut
/// to W bits (a defined value fits W bits, so nothing is lost); `None`
/// when no value is left.
pub fn range_at(n: &Node, w: Width) -> Option<(i128, i128)> {
    let (tlo, thi) = w.dtype_bounds(n.dtype);
    let (lo, hi) = ((n.vmin as i128).max(tlo), (n.vmax as i128).min(thi));
    (!n.range_empty() && lo <= hi).then_some((lo, hi))
}

impl GuardDomain for AtMatch<'_> {
    type N = Option<i128>;
    type B = Option<bool>;

    fn int(&mut self, v: i128) -> Option<i128> {
        Some(v)
    }
    fn bool(&mut self, b: bool) -> Option<bool> {
        Some(b)
    }
    fn value(&mut self, v: usize) -> Option<i128> {
        self.node(v).as_const().map(i128::from)
    }
    fn bounds(&mut self, v: usize) -> (Option<i128>, Option<i128>) {
        match range_at(self.node(v), self.width) {
            Some((lo, hi)) => (Some(lo), Some(hi)),
            None => (None, None),
        }
    }
    fn valid(&mut self, v: usize) -> Option<bool> {
        Some(!self.node(v).maybe_invalid)
    }
    fn constrained(&mut self, v: usize) -> Option<bool> {
        Some(!self.node(v).maybe_unconstrained)
    }
    fn is_const(&mut self, v: usize) -> Option<bool> {
        Some(self.node(v).as_const().is_some())
    }
    fn dtype_bounds(&mut self, t: Ty) -> (Option<i128>, Option<i128>) {
        let (lo, hi) = self.width.dtype_bounds(resolve_ty(t, &self.binding.types));
        (Some(lo), Some(hi))
    }
    fn arith(&mut self, op: Op, a: &Option<i128>, b: &Option<i128>) -> Option<i128> {
        exact(op, (*a)?, (*b)?)
    }
    fn neg(&mut self, a: &Option<i128>) -> Option<i128> {
        a.and_then(i128::checked_neg)
    }
    fn lt(&mut self, a: &Option<i128>, b: &Option<i128>) -> Option<bool> {
        Some((*a)? < (*b)?)
    }
    fn le(&mut self, a: &Option<i128>, b: &Option<i128>) -> Option<bool> {
        Some((*a)? <= (*b)?)
    }
    fn eq(&mut self, a: &Option<i128>, b: &Option<i128>) -> Option<bool> {
        Some((*a)? == (*b)?)
    }
    fn and(&mut self, a: &Option<bool>, b: &Option<bool>) -> Option<bool> {
        match (a, b) {
            (Some(false), _) | (_, Some(false)) => Some(false),
            (Some(true), Some(true)) => Some(true),
            _ => None,
        }
    }
    fn or(&mut self, a: &Option<bool>, b: &Option<bool>) -> Option<bool> {
        match (a, b) {
            (Some(true), _) | (_, Some(true)) => Some(true),
            (Some(false), Some(false)) => Some(false),
            _ => None,
        }
    }
    fn not(&mut self, a: &Option<bool>) -> Option<bool> {
        a.map(|x| !x)
    }
    fn decided(&self, b: &Option<bool>) -> Option<bool> {
        *b
    }
    fn gcd(&mut self, a: &Option<i128>, b: &Option<i128>) -> (Option<i128>, Option<bool>) {
        match (a, b) {
            (Some(x), Some(y)) => (Some(gcd(*x, *y)), Some(true)),
            _ => (None, None),
        }
    }
    fn is_pow2(&mut self, a: &Option<i128>) -> Option<bool> {
        a.map(is_pow2)
    }
    fn log2(&mut self, a: &Option<i128>) -> Option<i128> {
        log2((*a)?)
    }
    fn truediv(
        &mut self,
        a: &Option<i128>,
        b: &Option<i128>,
        r: Round,
    ) -> (Option<i128>, Option<bool>) {
        match (a, b) {
            (Some(x), Some(y)) => match truediv(*x, *y, r) {
                Some(v) => (Some(v), Some(true)),
                None => (None, Some(false)),
            },
            _ => (None, None),
        }
    }
}

/// Whether `rule`'s guard holds at a match with binding `b`, at width `w`.
pub fn holds_at(g: &Graph, rule: &Rule, b: &Binding, w: Width) -> bool {
    let Some(guard) = &rule.guard else {
        return true;
    };
    let mut d = AtMatch {
        graph: g,
        rule,
        binding: b,
        width: w,
    };
    // A conjunction holds exactly where every conjunct does (Kleene `and`
    // is true only when each value and each definedness condition is), so
    // the conjuncts are judged left to right and the first that does not
    // hold decides: most rules tried at a node fail their first one.
    conjuncts(guard).all(|c| holds(&mut d, c) == Some(true))
}

/// Whether `guard` holds only where variable `v`'s range is one value: a
/// top-level conjunct is `vmin(v) == vmax(v)`.
pub fn requires_one_value(guard: &Guard, v: usize) -> bool {
    conjuncts(guard).any(|c| match c {
        Guard::Bin(Op::Eq, a, b) => matches!(
            (&**a, &**b),
            (Guard::VMin(IExpr::Var(x)), Guard::VMax(IExpr::Var(y)))
                | (Guard::VMax(IExpr::Var(x)), Guard::VMin(IExpr::Var(y)))
                if *x == v && *y == v
        ),
        _ => false,
    })
}

/// The top-level conjuncts of a guard (`a && b && c`: `a`, `b`, `c`), left
/// to right.
pub fn conjuncts(guard: &Guard) -> impl Iterator<Item = &Guard> {
    let mut todo: smallvec::SmallVec<[&Guard; 8]> = smallvec::smallvec![guard];
    std::iter::from_fn(move || loop {
        match todo.pop()? {
            Guard::Bin(Op::And, x, y) => {
                todo.push(y);
                todo.push(x);
            }
            c => return Some(c),
        }
    })
}

#[cfg(test)]
mod tests {
    use crate::ir::dtype::Width;
    use crate::rules::RuleSet;

    /// Whether the one rule of `rule` fires on the one expression of
    /// `program`.
    fn fires(rule: &str, program: &str) -> bool {
        let set = RuleSet::parse("t.rules", rule).expect("parses");
        let p = crate::text::parse::parse_program(program).expect("parses");
        let mut g = p.graph;
        let r = set.rules().next().expect("one rule");
        r.apply_at(&mut g, p.outputs[0], Width::W64).is_some()
    }

    #[test]
    fn a_false_conjunct_decides_a_nested_and_only_when_the_rest_is_always_defined() {
        let x = "var x in [0, 9]\nexpr x + 0\n";
        // `!(false && ...)` holds: the rest divides by nothing.
        assert!(fires(
            "rule r: y + 0 => y if !(vmin(y) > 100 && vmax(y) > 0)\n",
            x
        ));
        // The rest divides by zero, so the guard is undefined: false,
        // although its first operand already makes the `&&` false.
        assert!(!fires(
            "rule r: y + 0 => y if !(vmin(y) > 100 && 1 / vmin(y) > 0)\n",
            x
        ));
        // Dually for `||`.
        assert!(!fires(
            "rule r: y + 0 => y if !(vmin(y) >= 0 || vmax(y) > 0)\n",
            x
        ));
        assert!(!fires(
            "rule r: y + 0 => y if vmin(y) >= 0 || 1 / vmin(y) > 0\n",
            x
        ));
    }
}
