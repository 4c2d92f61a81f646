//! The engine's range analysis proved sound, op by op: its transfer
//! functions (`engine::ranges`, written once over the `Arith` trait) are run
//! here on Z3 integers, and Z3 checks that for operands anywhere inside
//! their intervals every defined, valid result of the op (by the SMT
//! semantics of `encode`) lies inside the clamped interval computed for it.
//!
//! Products and quotients are nonlinear, and their transfer functions rest
//! on one argument: on each sign part of the divisor (or factor) the op is
//! monotone in each operand, so its extremes lie at the corners. That
//! argument is made explicit: [`MONOTONICITY`] states the monotonicity
//! lemmas, each proved once by Z3 for all integers ([`prove_lemma`]), and
//! the query for a product or quotient assumes their instances at the
//! operand, its bounds and the divisor part's bounds. With those facts the
//! query is linear over the product and quotient terms, which Z3 settles.

use crate::encode::{bv_lit, pow2_term, Enc, Mode, Num, SVal, Term};
use crate::poly::Poly;
use crate::solver::check_within;
use crate::verdict::VerdictKind;
use engine::ir::{DType, Op};
use engine::ranges::{clamp, pow2_range, transfer, Arith, Range, MAX_SHIFT};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};
use z3::ast::{Ast, Bool, Int, BV};
use z3::{SatResult, Solver};

/// A Z3 integer term as the transfer functions' arithmetic.
#[derive(Clone)]
struct Z(Int);

impl Arith for Z {
    type Cond = Bool;
    fn lit(v: i128) -> Z {
        Z(Int::from_i128(v))
    }
    fn add(&self, o: &Z) -> Z {
        Z(Int::add(&[&self.0, &o.0]))
    }
    fn sub(&self, o: &Z) -> Z {
        Z(Int::sub(&[&self.0, &o.0]))
    }
    fn mul(&self, o: &Z) -> Z {
        Z(apply_f(Op::Mul, &self.0, &o.0))
    }
    fn lt(&self, o: &Z) -> Bool {
        self.0.lt(&o.0)
    }
    fn eq(&self, o: &Z) -> Bool {
        self.0.eq(&o.0)
    }
    fn and(a: &Bool, b: &Bool) -> Bool {
        Bool::and(&[a, b])
    }
    fn or(a: &Bool, b: &Bool) -> Bool {
        Bool::or(&[a, b])
    }
    fn not(a: &Bool) -> Bool {
        a.not()
    }
    fn select(c: &Bool, a: &Z, b: &Z) -> Z {
        Z(c.ite(&a.0, &b.0))
    }
    fn divmod(op: Op, a: &Z, b: &Z) -> Z {
        // The same division semantics the rule proofs use.
        let (x, y) = (Poly::atom(a.0.clone()), Poly::atom(b.0.clone()));
        Z(crate::encode::int_quotient(op, &x, &y).to_int())
    }
    fn pow2(&self) -> Z {
        // The very term the encoding uses for `2^k`.
        Z(pow2_term(&self.0))
    }
}

/// `f(u, v)` for an op whose transfer function needs monotonicity: the
/// product, or the quotient of a division family (the remainders use their
/// family's quotient).
fn apply_f(op: Op, u: &Int, v: &Int) -> Int {
    match op {
        // Through the polynomial product, so that every product of the
        // same two terms is one Z3 term (the encoding's, atoms in its
        // order): Z3 does not identify `a*b` with `b*a` here.
        Op::Mul => Poly::atom(u.clone())
            .mul(&Poly::atom(v.clone()))
            .expect("a product of two atoms has no coefficient overflow")
            .to_int(),
        _ => Z::divmod(op, &Z(u.clone()), &Z(v.clone())).0,
    }
}

/// The product or quotient whose monotonicity an op's transfer function
/// rests on (a shift is a product or floor quotient by `2^k`).
fn monotone_op(op: Op) -> Option<Op> {
    match op {
        Op::Mul | Op::Div | Op::FloorDiv | Op::CeilDiv => Some(op),
        Op::Rem => Some(Op::Div),
        Op::Mod | Op::Shr => Some(Op::FloorDiv),
        Op::Shl => Some(Op::Mul),
        _ => None,
    }
}

/// The power-of-two lemma: on `[0, MAX_SHIFT]`, `2^k` is at least 1 and
/// grows with `k` (for the shift transfer functions).
pub const POW2: &str = "2^k grows with k";

fn pow2_grows(k1: &Int, k2: &Int) -> Bool {
    let (zero, max) = (Int::from_i64(0), Int::from_i64(MAX_SHIFT as i64));
    Bool::and(&[zero.le(k1), k1.le(k2), k2.le(&max)]).implies(Bool::and(&[
        Int::from_i64(1).le(pow2_term(k1)),
        pow2_term(k1).le(pow2_term(k2)),
    ]))
}

/// Ops whose transfer function is proved bit-exactly (bitvectors wide
/// enough that the transfer function's own arithmetic cannot wrap)
/// rather than over integers: their encoding is bitwise, and the bound
/// arithmetic is linear, so bit-blasting settles them at once where the
/// integer theory's `int2bv` would not.
const BIT_EXACT: [Op; 1] = [Op::BitAnd];

/// Bits of the bit-exact transfer proofs: bounds are 64-bit values, and
/// the transfer functions add, negate and double them.
const PROOF_BITS: u32 = 128;

/// A Z3 bitvector of [`PROOF_BITS`] bits as the transfer functions'
/// arithmetic (signed).
#[derive(Clone)]
struct ZB(BV);

impl Arith for ZB {
    type Cond = Bool;
    fn lit(v: i128) -> ZB {
        ZB(bv_lit(v, PROOF_BITS))
    }
    fn add(&self, o: &ZB) -> ZB {
        ZB(self.0.bvadd(&o.0))
    }
    fn sub(&self, o: &ZB) -> ZB {
        ZB(self.0.bvsub(&o.0))
    }
    fn mul(&self, o: &ZB) -> ZB {
        ZB(self.0.bvmul(&o.0))
    }
    fn lt(&self, o: &ZB) -> Bool {
        self.0.bvslt(&o.0)
    }
    fn eq(&self, o: &ZB) -> Bool {
        self.0.eq(&o.0)
    }
    fn and(a: &Bool, b: &Bool) -> Bool {
        Bool::and(&[a, b])
    }
    fn or(a: &Bool, b: &Bool) -> Bool {
        Bool::or(&[a, b])
    }
    fn not(a: &Bool) -> Bool {
        a.not()
    }
    fn select(c: &Bool, a: &ZB, b: &ZB) -> ZB {
        ZB(c.ite(&a.0, &b.0))
    }
    fn divmod(op: Op, a: &ZB, b: &ZB) -> ZB {
        let enc = Enc::new(Mode::Bv, PROOF_BITS);
        let args = [Num::B(a.0.clone()), Num::B(b.0.clone())];
        match enc.arith(op, DType::Index, DType::Index, &args).0 {
            Num::B(v) => ZB(v),
            Num::I(_) => unreachable!("bitvector mode"),
        }
    }
    fn pow2(&self) -> ZB {
        ZB(bv_lit(1, PROOF_BITS).bvshl(&self.0))
    }
}

/// Proves a transfer function of a [`BIT_EXACT`] op: the encoding at
/// `width` in bitvectors (bit-exact), the transfer function on
/// [`PROOF_BITS`]-bit bitvectors, the values sign-extended to compare.
fn prove_transfer_bits(
    op: Op,
    arg_dts: &[DType],
    dt: DType,
    width: u32,
    timeout: Duration,
) -> (SatResult, Option<String>) {
    let enc = Enc::new(Mode::Bv, width);
    let wide = |b: &BV| b.sign_ext(PROOF_BITS - b.get_size());
    let mut premise = Vec::new();
    let mut ranges = Vec::new();
    let mut args = Vec::new();
    let mut points = Vec::new();
    for (i, &adt) in arg_dts.iter().enumerate() {
        let (blo, bhi) = proof_bounds(adt);
        let lo = BV::new_const(format!("lo{i}"), PROOF_BITS);
        let hi = BV::new_const(format!("hi{i}"), PROOF_BITS);
        for b in [&lo, &hi] {
            premise.push(bv_lit(blo, PROOF_BITS).bvsle(b));
            premise.push(b.bvsle(bv_lit(bhi, PROOF_BITS)));
        }
        let (n, _) = enc.fresh_num(&format!("x{i}"), adt);
        let Num::B(x) = &n else {
            unreachable!("bitvector mode")
        };
        premise.push(lo.bvsle(wide(x)));
        premise.push(wide(x).bvsle(&hi));
        points.push((format!("x{i}"), wide(x), lo.clone(), hi.clone()));
        ranges.push(Range::new(ZB(lo), ZB(hi)));
        args.push(SVal {
            def: Bool::from_bool(true),
            inv: Bool::from_bool(false),
            unc: Bool::from_bool(false),
            val: Term::N(n),
        });
    }
    let result = enc.apply(op, dt, &args, arg_dts);
    premise.push(result.def.clone());
    premise.push(result.valid());
    let value = wide(result.val.num().bv());
    let claimed = clamp(&transfer(op, &ranges), dt);
    let solver = Solver::new();
    solver.assert(Bool::and(&premise));
    solver.assert(Bool::or(&[
        value.bvslt(&claimed.lo.0),
        claimed.hi.0.bvslt(&value),
    ]));
    let answer = check_within(&solver, timeout);
    let detail = match answer {
        SatResult::Unknown => solver.get_reason_unknown(),
        SatResult::Sat => solver.get_model().map(|m| {
            let show = |t: &BV| {
                crate::encode::model_int(&m, &Num::B(t.clone()))
                    .map_or("?".to_string(), |v| v.to_string())
            };
            described(&points, [&value, &claimed.lo.0, &claimed.hi.0], show)
        }),
        SatResult::Unsat => None,
    };
    (answer, detail)
}

/// Range bounds live in the dtype's 64-bit range whatever the width (index
/// ranges are clamped to 64 bits); bools are 0/1.
fn proof_bounds(dt: DType) -> (i128, i128) {
    match dt {
        DType::Bool => (0, 1),
        DType::Index => (i64::MIN as i128, i64::MAX as i128),
        other => engine::dtype::Width(64).dtype_bounds(other),
    }
}

/// The monotonicity lemmas, by name: for the product, `u*v` grows with `u`
/// where `v >= 0` (shrinks where `v <= 0`) and with `v` where `u >= 0`; for
/// each quotient, `f(u, v)` grows with `u` where `v > 0` (shrinks where
/// `v < 0`), and on one sign part of `v` shrinks as `v` grows where `u >= 0`
/// (grows where `u <= 0`).
pub const MONOTONICITY: [&str; 2] = [
    "monotone in the dividend",
    "monotone in the divisor on a sign part",
];

/// The remainder lemmas: a truncating remainder lies between 0 and the
/// dividend, a floor remainder too where dividend and divisor share a sign;
/// its magnitude is below the divisor's, with the sign of the dividend
/// (truncating) or of the divisor (floor); and where two dividends have one
/// quotient their remainders differ as the dividends do.
pub const REMAINDER: [&str; 3] = [
    "between 0 and the dividend",
    "below the divisor",
    "one period",
];

/// The quotient of a remainder's family.
fn quotient_of(op: Op) -> Op {
    if op == Op::Rem {
        Op::Div
    } else {
        Op::FloorDiv
    }
}

/// The "below the divisor" lemma at dividend `u`, divisor `v`.
fn remainder_below(op: Op, u: &Int, v: &Int) -> Bool {
    let r = Z::divmod(op, &Z(u.clone()), &Z(v.clone())).0;
    let zero = Int::from_i64(0);
    let one = Int::from_i64(1);
    let m = Int::sub(&[&Z(v.clone()).abs().0, &one]);
    let magnitude = Bool::and(&[r.le(&m), Int::sub(&[&zero, &m]).le(&r)]);
    let sign = match op {
        Op::Rem => Bool::and(&[
            u.ge(&zero).implies(r.ge(&zero)),
            u.le(&zero).implies(r.le(&zero)),
        ]),
        _ => Bool::and(&[
            v.gt(&zero).implies(r.ge(&zero)),
            v.lt(&zero).implies(r.le(&zero)),
        ]),
    };
    v.eq(&zero).not().implies(Bool::and(&[magnitude, sign]))
}

/// The "one period" lemma at dividends `u1`, `u2`, divisor `v`.
fn remainder_period(op: Op, u1: &Int, u2: &Int, v: &Int) -> Bool {
    let q = |u: &Int| Z::divmod(quotient_of(op), &Z(u.clone()), &Z(v.clone())).0;
    let r = |u: &Int| Z::divmod(op, &Z(u.clone()), &Z(v.clone())).0;
    let zero = Int::from_i64(0);
    Bool::and(&[v.eq(&zero).not(), q(u1).eq(q(u2))])
        .implies(Int::sub(&[&r(u2), &r(u1)]).eq(Int::sub(&[u2, u1])))
}

/// The remainder lemma at dividend `u`, divisor `v`.
fn remainder_bound(op: Op, u: &Int, v: &Int) -> Bool {
    let r = Z::divmod(op, &Z(u.clone()), &Z(v.clone())).0;
    let zero = Int::from_i64(0);
    let (up, down) = match op {
        Op::Rem => (u.ge(&zero), u.le(&zero)),
        _ => (
            Bool::and(&[u.ge(&zero), v.gt(&zero)]),
            Bool::and(&[u.le(&zero), v.lt(&zero)]),
        ),
    };
    v.eq(&zero)
        .not()
        .implies(Bool::and(&[up.implies(r.le(u)), down.implies(u.le(&r))]))
}

/// Lemma 0 at `u1 <= u2`, divisor `v`.
fn in_first(op: Op, u1: &Int, u2: &Int, v: &Int) -> Bool {
    let (f1, f2) = (apply_f(op, u1, v), apply_f(op, u2, v));
    let zero = Int::from_i64(0);
    let (pos, neg) = if op == Op::Mul {
        (v.ge(&zero), v.le(&zero))
    } else {
        (v.gt(&zero), v.lt(&zero))
    };
    u1.le(u2).implies(Bool::and(&[
        pos.implies(f1.le(&f2)),
        neg.implies(f2.le(&f1)),
    ]))
}

/// Lemma 1 at dividend `u`, `v1 <= v2` (of one sign for quotients).
fn in_second(op: Op, u: &Int, v1: &Int, v2: &Int) -> Bool {
    let (f1, f2) = (apply_f(op, u, v1), apply_f(op, u, v2));
    let zero = Int::from_i64(0);
    if op == Op::Mul {
        return v1.le(v2).implies(Bool::and(&[
            u.ge(&zero).implies(f1.le(&f2)),
            u.le(&zero).implies(f2.le(&f1)),
        ]));
    }
    let one_sign = Bool::or(&[v1.gt(&zero), v2.lt(&zero)]);
    Bool::and(&[v1.le(v2), one_sign]).implies(Bool::and(&[
        u.ge(&zero).implies(f2.le(&f1)),
        u.le(&zero).implies(f1.le(&f2)),
    ]))
}

/// The lemmas, in a fixed order: both monotonicity lemmas for the product
/// and each quotient, 2^k's, then the remainders'. Each is `(op, name,
/// statement)`; the statement holds for all integers (so at every width).
fn lemmas() -> Vec<(Op, &'static str, Bool)> {
    let mut out = Vec::new();
    for op in [Op::Mul, Op::Div, Op::FloorDiv, Op::CeilDiv] {
        let (a, b, c) = (
            Int::new_const("a"),
            Int::new_const("b"),
            Int::new_const("c"),
        );
        let statements = [in_first(op, &a, &b, &c), in_second(op, &a, &b, &c)];
        for (name, lemma) in MONOTONICITY.into_iter().zip(statements) {
            out.push((op, name, lemma));
        }
    }
    let (k1, k2) = (Int::new_const("k1"), Int::new_const("k2"));
    out.push((Op::Shl, POW2, pow2_grows(&k1, &k2)));
    for op in [Op::Rem, Op::Mod] {
        let (a, b, c) = (
            Int::new_const("a"),
            Int::new_const("b"),
            Int::new_const("c"),
        );
        let statements = [
            remainder_bound(op, &a, &b),
            remainder_below(op, &a, &b),
            remainder_period(op, &a, &c, &b),
        ];
        for (name, lemma) in REMAINDER.into_iter().zip(statements) {
            out.push((op, name, lemma));
        }
    }
    out
}

/// The ops whose lemmas `op`'s transfer proof assumes: its product's or
/// quotient's, its own (remainders), and 2^k's for shifts.
pub fn lemma_ops(op: Op) -> Vec<Op> {
    let mut needs: Vec<Op> = monotone_op(op).into_iter().chain([op]).collect();
    if op.is_shift() {
        needs.push(Op::Shl);
    }
    needs
}

/// The lemmas' ops and names, in [`prove_lemma`]'s numbering.
pub fn lemma_names() -> Vec<(Op, &'static str)> {
    lemmas()
        .into_iter()
        .map(|(op, name, _)| (op, name))
        .collect()
}

/// Proves lemma `index` of [`lemma_names`] within `timeout`.
pub fn prove_lemma(index: usize, timeout: Duration) -> VerdictKind {
    match lemmas().into_iter().nth(index) {
        Some((_, _, lemma)) => validity(&lemma, timeout),
        None => VerdictKind::Unknown,
    }
}

/// Proved when the negation of `lemma` (over unbounded integers) is
/// unsatisfiable.
fn validity(lemma: &Bool, timeout: Duration) -> VerdictKind {
    let solver = Solver::new();
    solver.assert(lemma.not());
    of_answer(check_within(&solver, timeout))
}

/// A validity check's verdict: its negation unsatisfiable is a proof.
fn of_answer(answer: SatResult) -> VerdictKind {
    match answer {
        SatResult::Unsat => VerdictKind::Proved,
        SatResult::Sat => VerdictKind::Failed,
        SatResult::Unknown => VerdictKind::Unknown,
    }
}

/// Instances of the lemmas that carry `f(x, y)` to the corners of the
/// ranges `a` and `b` (both sign parts of `b` for quotients).
fn lemma_instances(op: Op, x: &Int, y: &Int, a: &Range<Z>, b: &Range<Z>) -> Vec<Bool> {
    let mut facts = vec![in_first(op, &a.lo.0, x, y), in_first(op, x, &a.hi.0, y)];
    let parts: Vec<(Z, Z)> = if op == Op::Mul {
        vec![(b.lo.clone(), b.hi.clone())]
    } else {
        // The same terms as `Range::nonzero_parts`.
        vec![
            (b.lo.clone(), b.hi.min(&Z::lit(-1))),
            (b.lo.max(&Z::lit(1)), b.hi.clone()),
        ]
    };
    for (plo, phi) in &parts {
        for u in [&a.lo.0, &a.hi.0] {
            facts.push(in_second(op, u, &plo.0, y));
            facts.push(in_second(op, u, y, &phi.0));
        }
    }
    facts
}

/// One op's transfer function at one width and operand dtype.
#[derive(Clone, Debug, Serialize)]
pub struct RangeResult {
    pub op: String,
    /// Operand dtypes, then `->` and the result dtype.
    pub signature: String,
    pub width: u32,
    /// Proved, failed (with the operand point) or unknown.
    pub verdict: VerdictKind,
    pub detail: Option<String>,
    pub seconds: f64,
}

/// Every (op, dtype signature) whose transfer function is checked: integer
/// ops at each integer dtype, casts between every pair, comparisons, bool
/// ops and `where`.
pub fn signatures() -> Vec<(Op, Vec<DType>, DType)> {
    // Every non-leaf op of the table, so that a new op cannot go unproved.
    Op::all()
        .flat_map(|op| {
            op.signatures()
                .into_iter()
                .map(move |(args, r)| (op, args, r))
        })
        .collect()
}

/// One try at a transfer function's query, with its share of the time.
/// A try cut short is not a verdict: the next is made, each in its own
/// worker process where one is installed, so that a solver stuck past
/// its interrupt (Z3 4.15.8's `nlsat` refining an algebraic number does
/// not look at it) is killed and the next try still runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Attempt {
    /// The bit-exact query of a [`BIT_EXACT`] op.
    Bits,
    /// The integer query with each product and quotient a function of
    /// its operands: linear, and it usually refutes at once.
    Abstraction,
    /// The whole integer query, under this random seed.
    Seeded(u32),
}

/// The tries at `op`'s query and each one's share of `timeout`, the
/// query's whole bound: the shares add up to it. Z3 4.15.8's time on the
/// whole integer query is heavy-tailed (`CeilDiv` at 32 bits: 0.5 s in
/// most runs, past 30 s in one): a try cut short is made again under
/// another random seed, which leaves the tail, and with a longer share,
/// since the body of the distribution scales with the machine (the
/// slowest division took under 2 s on one 2-core machine, 5 to 9 s on
/// another, whose engine ran 2.5 times slower).
pub fn attempts(op: Op, timeout: Duration) -> Vec<(Attempt, Duration)> {
    if BIT_EXACT.contains(&op) {
        return vec![(Attempt::Bits, timeout)];
    }
    vec![
        (Attempt::Abstraction, timeout / 8),
        (Attempt::Seeded(0), timeout / 8),
        (Attempt::Seeded(1), timeout / 4),
        (Attempt::Seeded(2), timeout / 2),
    ]
}

/// One try at a transfer function's query: operands `x_i` valid, defined
/// and inside `[lo_i, hi_i]` (bounds anywhere in the dtype's range, as the
/// engine clamps them); the op defined with a valid result; then the
/// result must lie in `clamp(transfer(op, ranges), result dtype)`. For
/// products and quotients the monotonicity lemmas' instances are assumed:
/// a proof counts only once [`prove_lemma`] proved them. Answers the
/// verdict and, unless proved, the operand point or why it is unknown.
pub fn try_transfer(
    op: Op,
    arg_dts: &[DType],
    dt: DType,
    width: u32,
    attempt: Attempt,
    share: Duration,
) -> (VerdictKind, Option<String>) {
    if attempt == Attempt::Bits {
        let (answer, detail) = prove_transfer_bits(op, arg_dts, dt, width, share);
        return (of_answer(answer), detail);
    }
    crate::poly::take_nonlinear();
    let enc = Enc::new(Mode::Int, width);
    let mut premise = Vec::new();
    let mut ranges = Vec::new();
    let mut args = Vec::new();
    let mut points = Vec::new();
    for (i, &adt) in arg_dts.iter().enumerate() {
        // Range bounds live in the dtype's 64-bit range whatever the width
        // (index ranges are clamped to 64 bits); bools are 0/1.
        let (blo, bhi) = proof_bounds(adt);
        let lo = Int::new_const(format!("lo{i}"));
        let hi = Int::new_const(format!("hi{i}"));
        for b in [&lo, &hi] {
            premise.push(b.ge(Int::from_i128(blo)));
            premise.push(b.le(Int::from_i128(bhi)));
        }
        let (val, num) = match adt {
            DType::Bool => {
                let b = Bool::new_const(format!("x{i}"));
                let n = b.ite(&Int::from_i64(1), &Int::from_i64(0));
                (Term::B(b), n)
            }
            _ => {
                let (n, fits) = enc.fresh_num(&format!("x{i}"), adt);
                premise.push(fits);
                let Num::I(p) = &n else {
                    unreachable!("integer mode")
                };
                let z = p.to_int();
                (Term::N(n), z)
            }
        };
        premise.push(lo.le(&num));
        premise.push(num.le(&hi));
        points.push((format!("x{i}"), num.clone(), lo.clone(), hi.clone()));
        ranges.push(Range::new(Z(lo), Z(hi)));
        args.push(SVal {
            def: Bool::from_bool(true),
            inv: Bool::from_bool(false),
            unc: Bool::from_bool(false),
            val,
        });
    }
    let result = enc.apply(op, dt, &args, arg_dts);
    premise.push(result.def.clone());
    premise.push(result.valid());
    let value = match &result.val {
        Term::N(Num::I(p)) => p.to_int(),
        Term::B(b) => b.ite(&Int::from_i64(1), &Int::from_i64(0)),
        Term::N(Num::B(_)) => unreachable!("integer mode"),
    };
    let powers = op_facts(op, &points, &ranges, &mut premise);
    let claimed = clamp(&transfer(op, &ranges), dt);
    let outside = Bool::or(&[value.lt(&claimed.lo.0), claimed.hi.0.lt(&value)]);
    // With the lemma instances assumed, the products and quotients are
    // only compared, never multiplied out: the linear abstraction (each
    // such term a function of its operands) usually refutes at once.
    let subs: Vec<(&Int, &Int)> = powers.iter().map(|(a, b)| (a, b)).collect();
    let general_b = |b: &Bool| {
        if subs.is_empty() {
            b.clone()
        } else {
            b.substitute(&subs)
        }
    };
    let general_i = |t: &Int| {
        if subs.is_empty() {
            t.clone()
        } else {
            t.substitute(&subs)
        }
    };
    let premise = general_b(&Bool::and(&premise));
    let outside = general_b(&outside);
    let abstraction = crate::prove::Abstraction::new(crate::poly::take_nonlinear()).map(general_i);
    let solver = Solver::new();
    let answer = match attempt {
        Attempt::Abstraction => {
            return if abstraction.refutes(&premise, &outside, share) {
                (VerdictKind::Proved, None)
            } else {
                let why = "the linear abstraction did not refute the query";
                (VerdictKind::Unknown, Some(why.to_string()))
            };
        }
        Attempt::Seeded(seed) => {
            if seed != 0 {
                let mut p = z3::Params::new();
                p.set_u32("random_seed", seed);
                solver.set_params(&p);
            }
            solver.assert(&premise);
            solver.assert(&outside);
            check_within(&solver, share)
        }
        Attempt::Bits => unreachable!("answered above"),
    };
    let detail = match answer {
        SatResult::Unsat => None,
        SatResult::Unknown => solver.get_reason_unknown(),
        SatResult::Sat => Some(counterexample(&solver, &points, &value, &claimed)),
    };
    (of_answer(answer), detail)
}

/// The operand `x_i` of a transfer query: its name, value, and range bounds.
type Operand = (String, Int, Int, Int);

/// The facts `op`'s query assumes beyond the operands' ranges (the
/// monotonicity lemmas' instances, a remainder's bounds), pushed on
/// `premise`; for a shift, the powers of two to generalize to fresh
/// integers.
fn op_facts(
    op: Op,
    points: &[Operand],
    ranges: &[Range<Z>],
    premise: &mut Vec<Bool>,
) -> Vec<(Int, Int)> {
    // A shift is a product or quotient by `P = 2^k`, with `P` inside
    // `[2^klo, 2^khi]` for the amounts the transfer function keeps: the
    // powers of two are then generalized to fresh integers with only that
    // fact (proved as the power-of-two lemma), so that the query is the
    // product's or quotient's, by a divisor range.
    let mut powers: Vec<(Int, Int)> = Vec::new();
    if op.is_shift() {
        let k = &points[1].1;
        let kr = Range::new(
            ranges[1].lo.max(&Z::lit(0)),
            ranges[1].hi.min(&Z::lit(MAX_SHIFT)),
        );
        premise.push(pow2_grows(&kr.lo.0, k));
        premise.push(pow2_grows(k, &kr.hi.0));
        let p = pow2_term(k);
        let f = monotone_op(op).expect("shifts rest on a product or quotient");
        premise.extend(lemma_instances(
            f,
            &points[0].1,
            &p,
            &ranges[0],
            &pow2_range(&kr),
        ));
        for (t, name) in [
            (p, "P"),
            (pow2_term(&kr.lo.0), "PL"),
            (pow2_term(&kr.hi.0), "PH"),
        ] {
            powers.push((t, Int::new_const(name)));
        }
    } else if let Some(f) = monotone_op(op) {
        premise.extend(lemma_instances(
            f,
            &points[0].1,
            &points[1].1,
            &ranges[0],
            &ranges[1],
        ));
    }
    if matches!(op, Op::Rem | Op::Mod) {
        let (x, y) = (&points[0].1, &points[1].1);
        premise.push(remainder_bound(op, x, y));
        premise.push(remainder_below(op, x, y));
        premise.push(remainder_period(op, &ranges[0].lo.0, x, y));
        premise.push(remainder_period(op, x, &ranges[0].hi.0, y));
        premise.push(remainder_period(op, &ranges[0].lo.0, &ranges[0].hi.0, y));
    }
    powers
}

/// The operands and result of a satisfiable transfer query, in words.
fn counterexample(solver: &Solver, points: &[Operand], value: &Int, claimed: &Range<Z>) -> String {
    let m = solver.get_model().expect("a satisfiable query has a model");
    let show = |t: &Int| {
        m.eval(t, true)
            .and_then(|v| v.as_i128())
            .map_or("?".to_string(), |v| v.to_string())
    };
    described(points, [value, &claimed.lo.0, &claimed.hi.0], show)
}

/// A transfer query's counterexample in words: the operands (name, value,
/// range bounds), then the result and the claimed range it is outside.
fn described<T>(
    points: &[(String, T, T, T)],
    [value, lo, hi]: [&T; 3],
    show: impl Fn(&T) -> String,
) -> String {
    let pts: Vec<String> = points
        .iter()
        .map(|(n, v, lo, hi)| format!("{n} = {} in [{}, {}]", show(v), show(lo), show(hi)))
        .collect();
    format!(
        "{}; result {} outside [{}, {}]",
        pts.join(", "),
        show(value),
        show(lo),
        show(hi)
    )
}

impl RangeResult {
    /// `op`'s transfer function at `arg_dts -> dt` and `width`, with its
    /// verdict, what it found, and the time it took from `start`.
    pub fn new(
        (op, arg_dts, dt): (Op, &[DType], DType),
        width: u32,
        (verdict, detail): (VerdictKind, Option<String>),
        start: Instant,
    ) -> RangeResult {
        let sig: Vec<String> = arg_dts.iter().map(|d| d.to_string()).collect();
        RangeResult {
            op: format!("{op:?}"),
            signature: format!("{} -> {dt}", sig.join(", ")),
            width,
            verdict,
            detail,
            seconds: start.elapsed().as_secs_f64(),
        }
    }
}

/// The lemmas and every transfer function at `widths`.
#[derive(Clone, Debug, Serialize)]
pub struct RangeReport {
    /// `(op, lemma, verdict)`.
    pub lemmas: Vec<(String, String, VerdictKind)>,
    pub results: Vec<RangeResult>,
}

impl RangeReport {
    pub fn all_proved(&self) -> bool {
        self.lemmas.iter().all(|l| l.2 == VerdictKind::Proved)
            && self
                .results
                .iter()
                .all(|r| r.verdict == VerdictKind::Proved)
    }
}
