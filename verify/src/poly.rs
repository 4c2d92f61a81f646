//! Polynomials over opaque integer terms, for the bounded-integer encoding.
//!
//! Z3 4.8.12 does not distribute a product over a sum under a symbolic
//! divisor: it cannot show `(u*n + b) mod n == b mod n` (no configuration
//! settles it), although the same query with the factored product `m*n`
//! written out is instant. So integer arithmetic is kept here as sums of
//! monomials with exact coefficients, and [`Poly::split`] takes a numerator
//! apart as `d*Q + R` where the divisor `d` is a monomial dividing part of
//! it: Euclidean division then satisfies `(d*Q + R) div d == Q + R div d`
//! and `(d*Q + R) mod d == R mod d` exactly, for every sign of `d`. Nothing
//! is assumed: these are identities of Euclidean division, and the result
//! is the same integer term, only in a form the solver can reason about.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use z3::ast::{Bool, Int};

/// A nonlinear term and how it was built, for the linear abstraction.
#[derive(Clone, Debug)]
pub enum Nonlinear {
    /// A product of atoms; the flag marks rule constants.
    Product(Int, Vec<(Int, bool)>),
    /// Euclidean quotient or remainder (`true`) by a symbolic divisor.
    Div(Int, Int, Int, bool),
}

impl Nonlinear {
    pub fn term(&self) -> &Int {
        match self {
            Nonlinear::Product(t, _) | Nonlinear::Div(t, ..) => t,
        }
    }
}

thread_local! {
    /// Nonlinear terms built on this thread since the last
    /// [`take_nonlinear`]. A query's linear abstraction replaces them by
    /// uninterpreted functions of their operands.
    static NONLINEAR: RefCell<Vec<Nonlinear>> = const { RefCell::new(Vec::new()) };
}

/// Records a nonlinear term.
pub fn note_nonlinear(n: Nonlinear) {
    NONLINEAR.with(|v| v.borrow_mut().push(n));
}

/// The nonlinear terms recorded since the last call (duplicates removed).
pub fn take_nonlinear() -> Vec<Nonlinear> {
    let mut v = NONLINEAR.with(|n| std::mem::take(&mut *n.borrow_mut()));
    let mut seen = std::collections::HashSet::new();
    v.retain(|t| seen.insert(t.term().clone()));
    v
}

/// An opaque integer term: a symbol, or a term polynomial arithmetic does
/// not look into (a division, an `ite`).
#[derive(Clone, Debug)]
pub struct Atom {
    term: Int,
    hash: u64,
    /// A rule constant (or a product factor derived from one): worth
    /// splitting by a symbolic divisor, see [`Poly::reduce_constants`].
    constant: bool,
    /// `ite(c, 1, 0)`: a product with it is written `ite(c, rest, 0)`,
    /// which is exact and linear where `rest` is.
    bit: Option<Bool>,
}

impl Atom {
    pub fn new(term: Int) -> Atom {
        let mut h = DefaultHasher::new();
        term.hash(&mut h);
        Atom {
            hash: h.finish(),
            term,
            constant: false,
            bit: None,
        }
    }

    pub fn term(&self) -> &Int {
        &self.term
    }
}

impl PartialEq for Atom {
    fn eq(&self, o: &Atom) -> bool {
        self.hash == o.hash && self.term == o.term
    }
}

impl Eq for Atom {}

impl Ord for Atom {
    fn cmp(&self, o: &Atom) -> Ordering {
        // Z3's structural hash, then (on a collision) the printed term:
        // a total order that is the same on every run.
        self.hash.cmp(&o.hash).then_with(|| {
            if self == o {
                Ordering::Equal
            } else {
                self.term.to_string().cmp(&o.term.to_string())
            }
        })
    }
}

impl PartialOrd for Atom {
    fn partial_cmp(&self, o: &Atom) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// A product of atoms (sorted, with repetition).
pub type Mono = Vec<Atom>;

/// See [`Poly::is_large`]; far beyond any rule's size.
pub const MAX_TERMS: usize = 64;
pub const MAX_DEGREE: usize = 16;

/// A sum of monomials with exact non-zero coefficients, sorted by monomial.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Poly {
    terms: Vec<(Mono, i128)>,
}

impl Poly {
    pub fn constant(c: i128) -> Poly {
        if c == 0 {
            Poly::default()
        } else {
            Poly {
                terms: vec![(Vec::new(), c)],
            }
        }
    }

    pub fn atom(term: Int) -> Poly {
        // A numeral is a constant, not an atom.
        if let Some(c) = term.as_i128() {
            return Poly::constant(c);
        }
        Poly {
            terms: vec![(vec![Atom::new(term)], 1)],
        }
    }

    /// `ite(c, 1, 0)`.
    pub fn bit(c: &Bool) -> Poly {
        if let Some(b) = c.as_bool() {
            return Poly::constant(b as i128);
        }
        let mut a = Atom::new(c.ite(&Int::from_i64(1), &Int::from_i64(0)));
        a.bit = Some(c.clone());
        Poly {
            terms: vec![(vec![a], 1)],
        }
    }

    /// An atom standing for a rule constant.
    pub fn constant_atom(term: Int) -> Poly {
        Poly::atom(term).as_constants()
    }

    /// The same polynomial with every atom marked as a rule constant.
    pub fn as_constants(mut self) -> Poly {
        for (m, _) in &mut self.terms {
            for a in m {
                a.constant = true;
            }
        }
        self
    }

    /// Replaces every constant atom `c` that does not occur in the divisor
    /// `d` by `d * (c div d) + (c mod d)` (an identity of Euclidean
    /// division), so that the multiples of `d` inside constants can be split
    /// off: `(x + C) mod D` and `(x + C mod D) mod D` then reduce to the
    /// same remainder `(x + C mod D) mod D` (Euclidean). Nothing changes when
    /// no constant atom is present.
    pub fn reduce_constants(&self, d: &Poly) -> Option<Poly> {
        let in_d: Vec<&Atom> = d.terms.iter().flat_map(|(m, _)| m.iter()).collect();
        let dt = d.to_int();
        let mut out = Poly::default();
        let mut changed = false;
        for (m, c) in &self.terms {
            let mut term = Poly::constant(*c);
            for a in m {
                let factor = if a.constant && !in_d.contains(&a) {
                    changed = true;
                    let (qt, rt) = (a.term.div(&dt), a.term.modulo(&dt));
                    note_nonlinear(Nonlinear::Div(
                        qt.clone(),
                        a.term.clone(),
                        dt.clone(),
                        false,
                    ));
                    note_nonlinear(Nonlinear::Div(rt.clone(), a.term.clone(), dt.clone(), true));
                    let (q, r) = (Poly::atom(qt), Poly::atom(rt));
                    d.mul(&q)?.add(&r)?
                } else {
                    Poly {
                        terms: vec![(vec![a.clone()], 1)],
                    }
                };
                term = term.mul(&factor)?;
            }
            out = out.add(&term)?;
        }
        changed.then_some(out)
    }

    /// Whether this is one Euclidean remainder by `d` (`a mod d`), which
    /// lies in `[0, |d|)` wherever `d` is not zero: divided by `d` again
    /// it is its own remainder and its quotient is 0 (where `d` is zero
    /// every use of the division is undefined, so its value is free).
    pub fn is_remainder_by(&self, d: &Poly) -> bool {
        use z3::ast::Ast;
        let [(m, 1)] = self.terms.as_slice() else {
            return false;
        };
        let [a] = m.as_slice() else {
            return false;
        };
        a.term
            .safe_decl()
            .is_ok_and(|f| f.kind() == z3::DeclKind::Mod)
            && a.term.nth_child(1).and_then(|c| c.as_int()) == Some(d.to_int())
    }

    pub fn as_const(&self) -> Option<i128> {
        match self.terms.as_slice() {
            [] => Some(0),
            [(m, c)] if m.is_empty() => Some(*c),
            _ => None,
        }
    }

    fn from_terms(mut terms: Vec<(Mono, i128)>) -> Option<Poly> {
        terms.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out: Vec<(Mono, i128)> = Vec::with_capacity(terms.len());
        for (m, c) in terms {
            match out.last_mut() {
                Some((lm, lc)) if *lm == m => *lc = lc.checked_add(c)?,
                _ => out.push((m, c)),
            }
        }
        out.retain(|t| t.1 != 0);
        Some(Poly { terms: out })
    }

    /// `self + k * o`, or `None` if a coefficient overflows.
    fn add_scaled(&self, o: &Poly, k: i128) -> Option<Poly> {
        let mut t = self.terms.clone();
        for (m, c) in &o.terms {
            t.push((m.clone(), c.checked_mul(k)?));
        }
        Poly::from_terms(t)
    }

    /// Whether the polynomial has grown past what normalizing buys: more
    /// than [`MAX_TERMS`] terms or a monomial of more than [`MAX_DEGREE`]
    /// atoms. Carrying such a polynomial on through a long chain of sums
    /// or products would cost time and memory quadratic in its length.
    pub fn is_large(&self) -> bool {
        self.terms.len() > MAX_TERMS || self.terms.iter().any(|(m, _)| m.len() > MAX_DEGREE)
    }

    pub fn add(&self, o: &Poly) -> Option<Poly> {
        self.add_scaled(o, 1)
    }

    pub fn sub(&self, o: &Poly) -> Option<Poly> {
        self.add_scaled(o, -1)
    }

    pub fn neg(&self) -> Option<Poly> {
        Poly::default().add_scaled(self, -1)
    }

    pub fn mul(&self, o: &Poly) -> Option<Poly> {
        let mut t = Vec::with_capacity(self.terms.len() * o.terms.len());
        for (m1, c1) in &self.terms {
            for (m2, c2) in &o.terms {
                let mut m = m1.clone();
                m.extend(m2.iter().cloned());
                m.sort();
                t.push((m, c1.checked_mul(*c2)?));
            }
        }
        Poly::from_terms(t)
    }

    /// Splits `self` as `d * Q + R` where `d` is a single monomial with a
    /// non-zero coefficient: `Q` collects the terms `d` divides (its atoms
    /// and its coefficient). `None` when `d` is not a monomial or nothing
    /// splits off.
    pub fn split(&self, d: &Poly) -> Option<(Poly, Poly)> {
        let [(dm, dc)] = d.terms.as_slice() else {
            return None;
        };
        let (mut q, mut r) = (Vec::new(), Vec::new());
        for (m, c) in &self.terms {
            match (remove_factor(m, dm), c % dc == 0) {
                (Some(rest), true) => q.push((rest, c / dc)),
                _ => r.push((m.clone(), *c)),
            }
        }
        if q.is_empty() {
            return None;
        }
        Some((Poly::from_terms(q)?, Poly::from_terms(r)?))
    }

    /// The Z3 term. A product with a bit `ite(c, 1, 0)` is written
    /// `ite(c, rest, 0)`; the other products of atoms are recorded as
    /// nonlinear.
    pub fn to_int(&self) -> Int {
        if self.terms.is_empty() {
            return Int::from_i64(0);
        }
        let parts: Vec<Int> = self.terms.iter().map(|(m, c)| monomial(m, *c)).collect();
        if parts.len() == 1 {
            parts.into_iter().next().expect("one term")
        } else {
            Int::add(&parts)
        }
    }
}

/// `c * m` as a Z3 term.
fn monomial(m: &Mono, c: i128) -> Int {
    let (bits, plain): (Vec<&Atom>, Vec<&Atom>) = m.iter().partition(|a| a.bit.is_some());
    let mut factors: Vec<Int> = plain.iter().map(|a| a.term.clone()).collect();
    if factors.len() > 1 {
        let p = Int::mul(&factors);
        note_nonlinear(Nonlinear::Product(
            p.clone(),
            plain.iter().map(|a| (a.term.clone(), a.constant)).collect(),
        ));
        factors = vec![p];
    }
    if c != 1 || factors.is_empty() {
        factors.insert(0, Int::from_i128(c));
    }
    let mut t = if factors.len() == 1 {
        factors.pop().expect("one factor")
    } else {
        Int::mul(&factors)
    };
    let zero = Int::from_i64(0);
    for b in bits {
        t = b.bit.as_ref().expect("a bit").ite(&t, &zero);
    }
    t
}

/// `m` without the atoms of `d` (as multisets), if `d` divides `m`.
fn remove_factor(m: &Mono, d: &Mono) -> Option<Mono> {
    let mut rest = m.clone();
    for a in d {
        let i = rest.iter().position(|x| x == a)?;
        rest.remove(i);
    }
    Some(rest)
}
