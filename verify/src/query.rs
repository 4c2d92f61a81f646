//! A rule as an SMT query: its pattern variables as symbolic values with
//! symbolic bounds, its guard, and both sides encoded with [`Enc::apply`].
//!
//! Every pattern variable is an arbitrary term: any value, valid, invalid
//! (dtype permitting) or unconstrained, with bounds `lo <= hi` that hold
//! where it is valid; `vmin(x)`/`vmax(x)` in the guard are those bounds.
//! Constant variables are valid constants whose bounds are their value.
//! Constants computed on the right must be defined (the engine's checked
//! arithmetic does not fire the rule otherwise): that is part of the premise.
//! Guard arithmetic is exact (integers, or bitvectors wide enough that
//! nothing it computes can wrap).

use crate::encode::{bv_lit, Enc, Mode, Num, Remainders, SVal, Term};
use crate::poly::Poly;
use engine::ir::{DType, Op};
use engine::rules::guard::{self, GuardDomain};
use engine::rules::{Guard, Helper, IExpr, Pat, Rule, Ty};
use engine::truediv::Round;
use z3::ast::{Bool, Int, BV};

/// One pattern variable's symbols.
#[derive(Clone, Debug)]
pub struct Sym {
    pub name: String,
    pub dtype: DType,
    pub is_const_var: bool,
    pub val: SVal,
    /// Bounds as guard numbers (bools: 0/1).
    pub lo: GNum,
    pub hi: GNum,
    /// Bounds in the dtype's own sort (integers only), for minimizing.
    pub bounds: Option<(Num, Num)>,
    /// The matched subterm is a constant node (`is_const(x)`).
    pub is_const: Bool,
}

/// A number in guard arithmetic: exact.
pub type GNum = Num;

impl Sym {
    /// The value of an integer variable.
    fn val_num(&self) -> Num {
        match &self.val.val {
            Term::N(n) => n.clone(),
            Term::B(_) => unreachable!("an integer variable"),
        }
    }
}

/// Which side of the rule a node belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Source,
    Target,
}

/// A rule instance ready to check.
pub struct RuleQuery<'r> {
    pub rule: &'r Rule,
    pub types: Vec<DType>,
    pub enc: Enc,
    pub syms: Vec<Sym>,
    /// Bounds, guard, source defined, computed constants defined.
    pub premise: Bool,
    /// Where the engine fires the rule: the premise without the source's
    /// definedness (the engine does not ask for it). The reduction order
    /// must hold wherever this does. Made only by [`RuleQuery::firing`]:
    /// the proofs' queries keep no term of their own alive beyond the
    /// premise (Z3 4.8.12 reuses a freed term's id, and its search follows
    /// the ids: with these terms kept, issue 39's rule took over 24 s
    /// instead of 4 s).
    pub fires: Option<Bool>,
    /// Valid facts the encoding stated about its own terms (the range of
    /// each quotient): a proof may assume them or not; they help some
    /// obligations and slow others down.
    pub hints: Vec<Bool>,
    pub src: SVal,
    pub tgt: SVal,
    pub root_dtype: DType,
    /// Every subterm of both sides, for counterexamples.
    pub nodes: Vec<(Side, String, SVal, DType)>,
    /// Counter for helper symbols, so that names (and the cache key built
    /// from the query text) are the same on every run.
    fresh: std::cell::Cell<u32>,
    /// Facts the guard's interval arithmetic implies (integer theory).
    facts: std::cell::RefCell<Vec<Bool>>,
    /// Guard arithmetic.
    ge: GEnc,
    /// `gcd` terms by their arguments, so that the guard and the lemmas a
    /// rule cites share one symbol per `gcd(a, b)` (rules that cite lemmas
    /// only; the others keep one fresh symbol per call, as they always
    /// had, so that their queries do not change).
    gcds: std::cell::RefCell<Vec<(String, GNum, Bool)>>,
}

/// Guard arithmetic: exact integers, or bitvectors of `bits` bits.
#[derive(Clone, Copy)]
struct GEnc {
    mode: Mode,
    bits: u32,
    remainders: Remainders,
}

impl GEnc {
    fn lit(&self, v: i128) -> GNum {
        match self.mode {
            Mode::Int => Num::I(Poly::constant(v)),
            Mode::Bv => Num::B(bv_lit(v, self.bits)),
        }
    }

    /// A value of the encoding (of `bits` bits) as a guard number.
    fn widen(&self, n: &Num) -> GNum {
        match n {
            Num::I(_) => n.clone(),
            Num::B(b) => Num::B(b.sign_ext(self.bits - b.get_size())),
        }
    }

    fn of_bool(&self, b: &Bool) -> GNum {
        let (one, zero) = (self.lit(1), self.lit(0));
        self.arith().ite(b, &one, &zero)
    }

    /// An encoder whose `index` is as wide as guard numbers, for reusing
    /// the ops' arithmetic (its overflow flags never trigger: too wide).
    fn arith(&self) -> Enc {
        Enc {
            remainders: self.remainders,
            ..Enc::new(self.mode, self.bits)
        }
    }

    fn add(&self, a: &GNum, b: &GNum) -> GNum {
        self.bin(Op::Add, a, b)
    }

    fn sub(&self, a: &GNum, b: &GNum) -> GNum {
        self.bin(Op::Sub, a, b)
    }

    fn mul(&self, a: &GNum, b: &GNum) -> GNum {
        self.bin(Op::Mul, a, b)
    }

    fn max(&self, a: &GNum, b: &GNum) -> GNum {
        self.bin(Op::Max, a, b)
    }

    fn bin(&self, op: Op, a: &GNum, b: &GNum) -> GNum {
        self.arith()
            .arith(op, DType::Index, DType::Index, &[a.clone(), b.clone()])
            .0
    }

    fn neg(&self, a: &GNum) -> GNum {
        self.sub(&self.lit(0), a)
    }
}

impl<'r> RuleQuery<'r> {
    /// Builds the query for one type instance of `rule` in encoding `enc`.
    pub fn new(rule: &'r Rule, types: &[DType], enc: Enc) -> RuleQuery<'r> {
        Self::build(rule, types, enc, false)
    }

    /// [`RuleQuery::new`] with [`RuleQuery::fires`], for the termination
    /// check.
    pub fn firing(rule: &'r Rule, types: &[DType], enc: Enc) -> RuleQuery<'r> {
        Self::build(rule, types, enc, true)
    }

    fn build(rule: &'r Rule, types: &[DType], enc: Enc, firing: bool) -> RuleQuery<'r> {
        let enc = Enc {
            remainders: remainders_for(rule),
            ..enc
        };
        let max_bits = rule
            .vars
            .iter()
            .map(|v| enc.bits(resolve(v.ty, types)))
            .chain(std::iter::once(enc.bits(DType::Index)))
            .max()
            .unwrap_or(enc.width);
        let genc = GEnc {
            remainders: enc.remainders,
            mode: enc.mode,
            bits: rule
                .guard
                .as_ref()
                .map_or(0, |g| guard_bits(rule, g, types, &enc))
                .max(max_bits)
                .max(truediv_bits(&rule.rhs, max_bits))
                + 2,
        };
        crate::encode::take_facts();
        let mut constraints: Vec<Bool> = vec![enc.width_premise()];
        let mut syms: Vec<Sym> = rule
            .vars
            .iter()
            .enumerate()
            .map(|(i, v)| {
                make_sym(
                    &enc,
                    &genc,
                    &format!("{}#{i}", v.name),
                    v.is_const,
                    resolve(v.ty, types),
                    &mut constraints,
                )
            })
            .collect();
        if enc.mode == Mode::Int {
            if let Some(g) = &rule.guard {
                define_products(g, &mut syms, &genc, &mut constraints);
            }
        }
        let mut q = RuleQuery {
            rule,
            types: types.to_vec(),
            enc,
            syms,
            premise: Bool::from_bool(true),
            fires: None,
            hints: Vec::new(),
            src: enc.invalid(),
            tgt: enc.invalid(),
            root_dtype: rule.pat_dtype(&rule.lhs, types),
            nodes: Vec::new(),
            fresh: std::cell::Cell::new(0),
            facts: std::cell::RefCell::new(Vec::new()),
            ge: genc,
            gcds: std::cell::RefCell::new(Vec::new()),
        };
        let mut computed = Vec::new();
        q.src = q.pat(&rule.lhs, Side::Source, &mut computed);
        q.tgt = q.pat(&rule.rhs, Side::Target, &mut computed);
        for (side, p, v) in [
            (Side::Source, &rule.lhs, &q.src),
            (Side::Target, &rule.rhs, &q.tgt),
        ] {
            if let Pat::Var(_) = p {
                let dt = rule.pat_dtype(p, types);
                q.nodes.push((side, rule.show(p), v.clone(), dt));
            }
        }
        if let Some(g) = &rule.guard {
            let mut d = Symbolic { q: &q, ge: genc };
            let holds = guard::holds(&mut d, g);
            constraints.push(holds);
        }
        let mut fires = firing.then(|| constraints.clone());
        constraints.push(q.src.def.clone());
        if let Some(f) = &mut fires {
            f.extend(computed.iter().cloned());
        }
        constraints.extend(computed);
        let facts: Vec<Bool> = q.facts.borrow_mut().drain(..).collect();
        if let Some(f) = &mut fires {
            f.extend(facts.iter().cloned());
        }
        constraints.extend(facts);
        q.premise = Bool::and(&constraints);
        q.fires = fires.map(|f| Bool::and(&f));
        q.hints = crate::encode::take_facts();
        q
    }

    /// The value of a constant of one side (a literal, a constant
    /// variable, a constant the right side computes, a bound).
    pub fn constant_value(&mut self, p: &Pat) -> Term {
        self.pat(p, Side::Target, &mut Vec::new()).val
    }

    /// `gcd(x, y)` without recursion: a fresh `g >= 0` that divides both
    /// and equals `s*x + t*y` for fresh `s`, `t` (Bezout). The query is
    /// existential, so this fact pins `g` to the gcd. The witnesses are
    /// bounded by `|y|` and `|x|` (minimal Bezout coefficients are) so that,
    /// in bitvectors, no product wraps.
    pub(crate) fn gcd_term(&self, x: &GNum, y: &GNum) -> (GNum, Bool) {
        let key = format!("{x:?}|{y:?}");
        let memo = !self.rule.lemmas.is_empty();
        if memo {
            if let Some((_, g, fact)) = self.gcds.borrow().iter().find(|e| e.0 == key) {
                return (g.clone(), fact.clone());
            }
        }
        let g = Symbolic {
            q: self,
            ge: self.ge,
        }
        .fresh("gcd");
        let fact = self.gcd_facts(&g, x, y);
        if memo {
            self.gcds.borrow_mut().push((key, g.clone(), fact.clone()));
        }
        (g, fact)
    }

    /// The facts that pin `g` to `gcd(x, y)`.
    fn gcd_facts(&self, g: &GNum, x: &GNum, y: &GNum) -> Bool {
        let ge = self.ge;
        let d = Symbolic { q: self, ge };
        let a = ge.arith();
        let (s, t) = (d.fresh("gcd_s"), d.fresh("gcd_t"));
        let zero = ge.lit(0);
        let abs = |v: &GNum| ge.max(v, &ge.neg(v));
        let divides = |d: &GNum, n: &GNum| {
            Bool::or(&[
                Bool::and(&[a.eq(d, &zero), a.eq(n, &zero)]),
                Bool::and(&[a.eq(d, &zero).not(), a.eq(&ge.bin(Op::Rem, n, d), &zero)]),
            ])
        };
        let comb = ge.add(&ge.mul(&s, x), &ge.mul(&t, y));
        Bool::and(&[
            a.le(&zero, g),
            divides(g, x),
            divides(g, y),
            a.le(&abs(&s), &ge.max(&abs(y), &ge.lit(1))),
            a.le(&abs(&t), &ge.max(&abs(x), &ge.lit(1))),
            a.eq(&comb, g),
        ])
    }

    /// A dtype's bounds as guard numbers (symbolic for `index` in a
    /// width-generic query; none for `index` in the unbounded-integer
    /// encoding).
    fn dtype_bounds(&self, dt: DType) -> Option<(GNum, GNum)> {
        match self.enc.mode {
            Mode::Int => self.enc.bound_nums(dt),
            Mode::Bv => {
                let (lo, hi) = self.enc.bounds(dt);
                Some((self.ge.lit(lo), self.ge.lit(hi)))
            }
        }
    }

    fn dtype(&self, p: &Pat) -> DType {
        self.rule.pat_dtype(p, &self.types)
    }

    /// Encodes a pattern; `computed` collects the definedness of constants
    /// computed on the right.
    fn pat(&mut self, p: &Pat, side: Side, computed: &mut Vec<Bool>) -> SVal {
        self.pat_sized(p, side, computed).0
    }

    /// [`Self::pat`], and the number of pattern nodes below `p` (told
    /// bottom-up: showing every subterm of a long chain in full would take
    /// quadratic time and space).
    fn pat_sized(&mut self, p: &Pat, side: Side, computed: &mut Vec<Bool>) -> (SVal, usize) {
        engine::deep::grow(|| self.pat_step(p, side, computed))
    }

    fn pat_step(&mut self, p: &Pat, side: Side, computed: &mut Vec<Bool>) -> (SVal, usize) {
        let dt = self.dtype(p);
        let mut size = 1;
        let v = match p {
            // Variables are listed on their own; a bare-variable side is
            // recorded by `new`.
            Pat::Var(v) => return (self.syms[*v].val.clone(), 1),
            Pat::Lit(v, _) => self.enc.constant(*v as i128, dt),
            Pat::Invalid => self.enc.invalid(),
            Pat::Bound(v, hi) => {
                let s = &self.syms[*v];
                let b = if *hi { &s.hi } else { &s.lo };
                let mut c = self.enc.constant(0, dt);
                c.val = Term::N(narrow(&self.enc, b, dt));
                c
            }
            Pat::Computed(inner) => {
                // The inner op is recorded already.
                let (mut c, n) = self.pat_sized(inner, side, computed);
                computed.push(c.def.clone());
                c.def = Bool::from_bool(true);
                return (c, n);
            }
            Pat::Op(op, _, args) => {
                let mut vals: Vec<SVal> = Vec::with_capacity(args.len());
                for a in args {
                    let (v, n) = self.pat_sized(a, side, computed);
                    vals.push(v);
                    size += n;
                }
                let dts: Vec<DType> = args.iter().map(|a| self.dtype(a)).collect();
                self.enc.apply(*op, dt, &vals, &dts)
            }
            Pat::Helper(h, args) => {
                // A helper computed from constants (`log2(C)`): the same
                // helper the engine computes, defined where the engine's
                // is and where its value fits the dtype.
                let mut vals: Vec<SVal> = Vec::with_capacity(args.len());
                for a in args {
                    let (v, n) = self.pat_sized(a, side, computed);
                    vals.push(v);
                    size += n;
                }
                let ge = self.ge;
                let nums: Vec<GNum> = vals.iter().map(|v| ge.widen(v.val.num())).collect();
                let mut d = Symbolic { q: &*self, ge };
                let (r, dh) = guard::helper(&mut d, *h, &nums);
                let n = r.num();
                let a = ge.arith();
                let mut defs: Vec<Bool> = vals.iter().map(|v| v.def.clone()).collect();
                defs.push(dh);
                if let Some((lo, hi)) = self.dtype_bounds(dt) {
                    defs.push(a.le(&lo, &n));
                    defs.push(a.le(&n, &hi));
                }
                let mut c = self.enc.constant(0, dt);
                c.def = Bool::and(&defs);
                c.val = Term::N(narrow(&self.enc, &n, dt));
                c
            }
        };
        let text = if size <= SHOWN_NODES {
            self.rule.show(p)
        } else {
            format!("({size}-node subterm)")
        };
        self.nodes.push((side, text, v.clone(), dt));
        (v, size)
    }
}

/// Subterms of more pattern nodes than this are listed in counterexamples by
/// their size, not their text.
const SHOWN_NODES: usize = 64;

/// The guard's domain in a proof: pattern variables' symbolic values and
/// bounds, exact arithmetic on guard numbers (integers, or bitvectors wide
/// enough that nothing wraps). The engine evaluates the same guard text on
/// the same evaluator at a match (`engine::rules::guard`).
struct Symbolic<'q, 'r> {
    q: &'q RuleQuery<'r>,
    ge: GEnc,
}

impl Symbolic<'_, '_> {
    /// The value an interval expression denotes for the current values of
    /// its variables, and when those are all valid (so inside their
    /// ranges).
    fn iexpr_value(&mut self, e: &IExpr) -> (GNum, Bool) {
        engine::deep::grow(|| match e {
            IExpr::Var(v) => {
                let s = &self.q.syms[*v];
                let n = match &s.val.val {
                    Term::N(n) => self.ge.widen(n),
                    Term::B(b) => self.ge.of_bool(b),
                };
                (n, s.val.valid())
            }
            IExpr::Scalar(g) => {
                let (v, d) = guard::eval(self, g);
                (v.num(), d)
            }
            IExpr::Neg(x) => {
                let (v, ok) = self.iexpr_value(x);
                (self.ge.neg(&v), ok)
            }
            IExpr::Bin(op, x, y) => {
                let (vx, okx) = self.iexpr_value(x);
                let (vy, oky) = self.iexpr_value(y);
                (self.ge.bin(*op, &vx, &vy), Bool::and(&[okx, oky]))
            }
        })
    }

    fn fresh(&self, n: &str) -> GNum {
        let k = self.q.fresh.get();
        self.q.fresh.set(k + 1);
        let name = format!("{n}#{k}");
        match self.ge.mode {
            Mode::Int => Num::I(Poly::atom(Int::new_const(name))),
            Mode::Bv => Num::B(BV::new_const(name, self.ge.bits)),
        }
    }
}

impl GuardDomain for Symbolic<'_, '_> {
    type N = GNum;
    type B = Bool;

    fn int(&mut self, v: i128) -> GNum {
        self.ge.lit(v)
    }
    fn bool(&mut self, b: bool) -> Bool {
        Bool::from_bool(b)
    }
    fn value(&mut self, v: usize) -> GNum {
        match &self.q.syms[v].val.val {
            Term::N(n) => self.ge.widen(n),
            Term::B(b) => self.ge.of_bool(b),
        }
    }
    fn bounds(&mut self, v: usize) -> (GNum, GNum) {
        let s = &self.q.syms[v];
        (s.lo.clone(), s.hi.clone())
    }
    fn valid(&mut self, v: usize) -> Bool {
        self.q.syms[v].val.valid()
    }
    fn constrained(&mut self, v: usize) -> Bool {
        self.q.syms[v].val.unc.not()
    }
    fn is_const(&mut self, v: usize) -> Bool {
        self.q.syms[v].is_const.clone()
    }
    fn dtype_bounds(&mut self, t: Ty) -> (GNum, GNum) {
        self.q.dtype_bounds(resolve(t, &self.q.types)).expect(
            "a guard reading `index`'s bounds is never encoded with unbounded integers (prove::unbounded_obstacle)",
        )
    }
    fn arith(&mut self, op: Op, a: &GNum, b: &GNum) -> GNum {
        self.ge.bin(op, a, b)
    }
    fn neg(&mut self, a: &GNum) -> GNum {
        self.ge.neg(a)
    }
    fn lt(&mut self, a: &GNum, b: &GNum) -> Bool {
        self.ge.arith().lt(a, b)
    }
    fn le(&mut self, a: &GNum, b: &GNum) -> Bool {
        self.ge.arith().le(a, b)
    }
    fn eq(&mut self, a: &GNum, b: &GNum) -> Bool {
        self.ge.arith().eq(a, b)
    }
    fn and(&mut self, a: &Bool, b: &Bool) -> Bool {
        Bool::and(&[a, b])
    }
    fn or(&mut self, a: &Bool, b: &Bool) -> Bool {
        Bool::or(&[a, b])
    }
    fn not(&mut self, a: &Bool) -> Bool {
        a.not()
    }

    fn gcd(&mut self, x: &GNum, y: &GNum) -> (GNum, Bool) {
        self.q.gcd_term(x, y)
    }

    fn truediv(&mut self, x: &GNum, y: &GNum, r: Round) -> (GNum, Bool) {
        let v = self.fresh(r.helper_name());
        let k = self.q.fresh.get();
        self.q.fresh.set(k + 1);
        let def = Bool::new_const(format!("{}.defined#{k}", r.helper_name()));
        crate::truediv::rounded_truediv(&self.ge.arith(), x, y, r, (v, def))
    }

    fn is_pow2(&mut self, x: &GNum) -> Bool {
        let bits = match self.ge.mode {
            Mode::Bv => self.ge.bits,
            Mode::Int => 128,
        };
        let a = self.ge.arith();
        let alts: Vec<Bool> = (0..bits.min(127) - 1)
            .map(|k| a.eq(x, &self.ge.lit(1i128 << k)))
            .collect();
        Bool::or(&alts)
    }

    /// The `k` with `x == 2^k`, as a choice over the powers of two (any
    /// value elsewhere: the caller's definedness is `is_pow2`).
    fn log2(&mut self, x: &GNum) -> GNum {
        let bits = match self.ge.mode {
            Mode::Bv => self.ge.bits,
            Mode::Int => 128,
        };
        let a = self.ge.arith();
        let mut v = self.ge.lit(0);
        for k in (1..bits.min(127) - 1).rev() {
            let c = a.eq(x, &self.ge.lit(1i128 << k));
            v = a.ite(&c, &self.ge.lit(k as i128), &v);
        }
        v
    }

    /// The product of values inside their intervals lies between the corner
    /// products: the multiplication transfer lemma (proved with the range
    /// analysis), stated for these operands so that the solver need not
    /// rediscover the monotonicity of a symbolic product (integer theory).
    fn product_bounds(&mut self, x: &IExpr, y: &IExpr, lo: &GNum, hi: &GNum) {
        if self.q.enc.mode != Mode::Int {
            return;
        }
        let (vx, okx) = self.iexpr_value(x);
        let (vy, oky) = self.iexpr_value(y);
        let p = self.ge.mul(&vx, &vy);
        let a = self.ge.arith();
        let inside = Bool::and(&[a.le(lo, &p), a.le(&p, hi)]);
        self.q
            .facts
            .borrow_mut()
            .push(Bool::and(&[okx, oky]).implies(&inside));
    }
}

/// Integer theory only: constants the guard defines as products become
/// those products, so that the multiples are visible to the polynomial
/// splitting of divisions (`(a*C + b) mod N` with `divides(N, C)` is then
/// `(a*N*K + b) mod N`, which splits). A top-level `divides(N, C)` makes
/// `C = N * K` for a fresh integer `K`; a top-level `A * B == C` makes
/// `C = A * B`. The constant keeps its range constraint; nothing else
/// about it changes, so the query is equivalent.
fn define_products(g: &Guard, syms: &mut [Sym], ge: &GEnc, constraints: &mut Vec<Bool>) {
    let mut conjuncts = Vec::new();
    collect_conjuncts(g, &mut conjuncts);
    let mut defined = vec![false; syms.len()];
    for c in conjuncts {
        let (target, product) = match c {
            Guard::Call(Helper::Divides, args) => match args.as_slice() {
                [Guard::Val(n), Guard::Val(c)] if n != c => {
                    let k = Num::I(Poly::constant_atom(Int::new_const(format!(
                        "{}.multiple",
                        syms[*c].name
                    ))));
                    (*c, ge.mul(&syms[*n].val_num(), &k))
                }
                _ => continue,
            },
            Guard::Bin(Op::Eq, a, b) => match (a.as_ref(), b.as_ref()) {
                (Guard::Bin(Op::Mul, x, y), Guard::Val(c))
                | (Guard::Val(c), Guard::Bin(Op::Mul, x, y)) => match (x.as_ref(), y.as_ref()) {
                    (Guard::Val(p), Guard::Val(q)) if p != c && q != c => {
                        (*c, ge.mul(&syms[*p].val_num(), &syms[*q].val_num()))
                    }
                    _ => continue,
                },
                _ => continue,
            },
            _ => continue,
        };
        let s = &mut syms[target];
        if !s.is_const_var || s.dtype == DType::Bool || defined[target] {
            continue;
        }
        defined[target] = true;
        // The old symbol equals the product: substituting it everywhere is
        // the same as asserting that, but the solver sees the factors.
        constraints.push(ge.arith().eq(&s.val_num(), &product));
        s.val.val = Term::N(product.clone());
        s.lo = product.clone();
        s.hi = product.clone();
        s.bounds = Some((product.clone(), product));
    }
}

fn collect_conjuncts<'g>(g: &'g Guard, out: &mut Vec<&'g Guard>) {
    engine::deep::grow(|| match g {
        Guard::Bin(Op::And, a, b) => {
            collect_conjuncts(a, out);
            collect_conjuncts(b, out);
        }
        other => out.push(other),
    })
}

fn resolve(t: Ty, types: &[DType]) -> DType {
    match t {
        Ty::Fixed(d) => d,
        Ty::Var(k) => types[k],
    }
}

/// A guard number back in a dtype's sort (it is known to fit).
fn narrow(enc: &Enc, n: &GNum, dt: DType) -> Num {
    match n {
        Num::I(_) => n.clone(),
        Num::B(b) => Num::B(b.extract(enc.bits(dt) - 1, 0)),
    }
}

/// Declares one pattern variable and its constraints.
fn make_sym(
    enc: &Enc,
    ge: &GEnc,
    name: &str,
    is_const_var: bool,
    dt: DType,
    constraints: &mut Vec<Bool>,
) -> Sym {
    let t = || Bool::from_bool(true);
    if dt == DType::Bool {
        let val = Bool::new_const(name);
        let unc = if is_const_var {
            Bool::from_bool(false)
        } else {
            Bool::new_const(format!("{name}.unc"))
        };
        let (lo_b, hi_b) = if is_const_var {
            (val.clone(), val.clone())
        } else {
            (
                Bool::new_const(format!("{name}.lo")),
                Bool::new_const(format!("{name}.hi")),
            )
        };
        constraints.push(lo_b.implies(&hi_b));
        constraints.push(
            unc.not()
                .implies(Bool::and(&[lo_b.implies(&val), val.implies(&hi_b)])),
        );
        let is_const = if is_const_var {
            t()
        } else {
            Bool::new_const(format!("{name}.is_const"))
        };
        constraints.push(is_const.implies(Bool::and(&[unc.not(), lo_b.eq(&val), hi_b.eq(&val)])));
        return Sym {
            name: name.to_string(),
            dtype: dt,
            is_const_var,
            val: SVal {
                def: t(),
                inv: Bool::from_bool(false),
                unc,
                val: Term::B(val),
            },
            lo: ge.of_bool(&lo_b),
            hi: ge.of_bool(&hi_b),
            bounds: None,
            is_const,
        };
    }
    let (v, c) = enc.fresh_num(name, dt);
    // Rule constants are marked so that divisions can split them.
    let v = match v {
        Num::I(p) if is_const_var => Num::I(p.as_constants()),
        other => other,
    };
    constraints.push(c);
    let (inv, unc) = if is_const_var {
        (Bool::from_bool(false), Bool::from_bool(false))
    } else {
        (
            Bool::new_const(format!("{name}.inv")),
            Bool::new_const(format!("{name}.unc")),
        )
    };
    constraints.push(Bool::and(&[inv.clone(), unc.clone()]).not());
    let (lo, hi) = if is_const_var {
        (v.clone(), v.clone())
    } else {
        let (lo, c1) = enc.fresh_num(&format!("{name}.lo"), dt);
        let (hi, c2) = enc.fresh_num(&format!("{name}.hi"), dt);
        constraints.push(c1);
        constraints.push(c2);
        (lo, hi)
    };
    constraints.push(enc.le(&lo, &hi));
    let valid = Bool::and(&[inv.not(), unc.not()]);
    constraints.push(valid.implies(Bool::and(&[enc.le(&lo, &v), enc.le(&v, &hi)])));
    let is_const = if is_const_var {
        t()
    } else {
        Bool::new_const(format!("{name}.is_const"))
    };
    constraints.push(is_const.implies(Bool::and(&[
        valid.clone(),
        enc.eq(&lo, &v),
        enc.eq(&hi, &v),
    ])));
    Sym {
        name: name.to_string(),
        dtype: dt,
        is_const_var,
        val: SVal {
            def: t(),
            inv,
            unc,
            val: Term::N(v),
        },
        lo: ge.widen(&lo),
        hi: ge.widen(&hi),
        bounds: Some((lo, hi)),
        is_const,
    }
}

/// How `rule`'s query writes remainders by symbolic divisors: decomposed
/// where the decomposition lets terms split or cancel (a remainder divided
/// again by a symbolic divisor, `(x mod C2) // C1`; a remainder beside the
/// quotient of the same numerator by the same divisor, `(x mod C) * K + (x
/// // C) * (C * K)`), as atoms otherwise (the easier term where nothing
/// splits). A rule that cites lemmas keeps the lemmas' form (`crate::lemma`
/// decomposes).
fn remainders_for(rule: &Rule) -> Remainders {
    if !rule.lemmas.is_empty() {
        return Remainders::Decomposed;
    }
    // One walk, each pattern with whether it lies in the numerator of a
    // division by a symbolic divisor: a remainder there is divided again.
    let mut todo: Vec<(&Pat, bool)> = vec![(&rule.lhs, false), (&rule.rhs, false)];
    let (mut remainders, mut quotients) = (Vec::new(), Vec::new());
    while let Some((p, in_numerator)) = todo.pop() {
        match symbolic_division(p) {
            Some((true, ..)) if in_numerator => return Remainders::Decomposed,
            Some((remainder, n, d)) => {
                if remainder {
                    remainders.push((n, d));
                } else {
                    quotients.push((n, d));
                }
                todo.extend([(n, true), (d, in_numerator)]);
            }
            None => todo.extend(p.children().iter().map(|c| (c, in_numerator))),
        }
    }
    // Compared pairwise: a rule holds a handful of symbolic divisions.
    if remainders.iter().any(|r| quotients.contains(r)) {
        Remainders::Decomposed
    } else {
        Remainders::Atom
    }
}

/// A division of either family by a symbolic divisor: whether it is a
/// remainder, its numerator and its divisor.
fn symbolic_division(p: &Pat) -> Option<(bool, &Pat, &Pat)> {
    match p {
        Pat::Op(op, _, args) if op.is_divmod() => match args.as_slice() {
            [n, d] if !matches!(d, Pat::Lit(..)) => Some((!op.is_quotient(), n, d)),
            _ => None,
        },
        _ => None,
    }
}

/// Guard bits a right side's `ceil_truediv` (and kin) needs: its
/// operands are constants of at most `max_bits` bits (crate::truediv).
fn truediv_bits(p: &Pat, max_bits: u32) -> u32 {
    let truediv = |p: &&Pat| matches!(p, Pat::Helper(Helper::TrueDiv(_), _));
    if p.nodes().iter().any(truediv) {
        max_bits.max(64) + crate::truediv::EXTRA_BITS
    } else {
        0
    }
}

/// Bits that guard arithmetic needs so that nothing wraps: each sum adds a
/// bit, each product adds its factors' bits.
fn guard_bits(rule: &Rule, g: &Guard, types: &[DType], enc: &Enc) -> u32 {
    let var_bits = |v: usize| enc.bits(resolve(rule.vars[v].ty, types)).max(2);
    fn lit_bits(v: i128) -> u32 {
        129 - v.unsigned_abs().leading_zeros().min(128)
    }
    fn ibits(rule: &Rule, e: &IExpr, types: &[DType], enc: &Enc) -> u32 {
        engine::deep::grow(|| match e {
            IExpr::Var(v) => enc.bits(resolve(rule.vars[*v].ty, types)).max(2),
            IExpr::Scalar(g) => guard_bits(rule, g, types, enc),
            IExpr::Neg(x) => ibits(rule, x, types, enc) + 1,
            IExpr::Bin(Op::Mul, a, b) => ibits(rule, a, types, enc) + ibits(rule, b, types, enc),
            IExpr::Bin(_, a, b) => ibits(rule, a, types, enc).max(ibits(rule, b, types, enc)) + 1,
        })
    }
    engine::deep::grow(|| match g {
        Guard::Int(v) => lit_bits(*v),
        Guard::Bool(_) | Guard::Valid(_) | Guard::Constrained(_) | Guard::IsConst(_) => 1,
        Guard::Val(v) => var_bits(*v),
        Guard::VMin(e) | Guard::VMax(e) => ibits(rule, e, types, enc),
        Guard::Fits(e, t) => ibits(rule, e, types, enc).max(enc.bits(resolve(*t, types)) + 1),
        Guard::TyMin(t) | Guard::TyMax(t) => enc.bits(resolve(*t, types)) + 1,
        Guard::Un(_, a) => guard_bits(rule, a, types, enc) + 1,
        Guard::Bin(Op::Mul, a, b) => {
            guard_bits(rule, a, types, enc) + guard_bits(rule, b, types, enc)
        }
        Guard::Bin(_, a, b) => {
            guard_bits(rule, a, types, enc).max(guard_bits(rule, b, types, enc)) + 1
        }
        Guard::Call(Helper::TrueDiv(_), args) => {
            // The encoding scales remainders by 2^54 (crate::truediv).
            args.iter()
                .map(|a| guard_bits(rule, a, types, enc))
                .max()
                .unwrap_or(1)
                .max(64)
                + crate::truediv::EXTRA_BITS
        }
        Guard::Call(Helper::Gcd, args) => {
            // gcd's Bezout witnesses multiply by the arguments.
            2 * args
                .iter()
                .map(|a| guard_bits(rule, a, types, enc))
                .max()
                .unwrap_or(1)
                + 2
        }
        Guard::Call(_, args) => {
            args.iter()
                .map(|a| guard_bits(rule, a, types, enc))
                .max()
                .unwrap_or(1)
                + 1
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(rule: &str) -> Remainders {
        let text = format!("group t\n\n# r\nrule r: {rule}\n");
        let set = engine::rules::RuleSet::parse("t.rules", &text).expect("the rule parses");
        remainders_for(set.rule("r").expect("the rule"))
    }

    #[test]
    fn a_symbolic_remainder_is_decomposed_only_where_it_splits_or_cancels() {
        // Divided again by a symbolic divisor: decomposed.
        assert_eq!(
            mode("(x mod C2) mod C1 => x mod C1 if C1 > 0 && divides(C1, C2)"),
            Remainders::Decomposed
        );
        assert_eq!(
            mode("(x mod C2) // C1 => (x // C1) mod (C2 // C1) if C1 > 0 && C2 > 0 && divides(C1, C2)"),
            Remainders::Decomposed
        );
        // Beside the quotient of the same numerator by the same divisor.
        assert_eq!(
            mode("(x mod C1) * C2 + (x // C1) * C3 => x * C2 if C1 * C2 == C3"),
            Remainders::Decomposed
        );
        // Nothing splits: the atom.
        assert_eq!(
            mode("(x * C0) % C1 => (x % (C1 / C0)) * C0 if C0 > 0 && C1 % C0 == 0 && C1 > 0"),
            Remainders::Atom
        );
        // A literal divisor is no symbolic one.
        assert_eq!(mode("(x mod 8) mod 4 => x mod 4"), Remainders::Atom);
    }
}
