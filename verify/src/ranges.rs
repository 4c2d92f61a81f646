//! The engine's range analysis proved sound, op by op: its transfer
//! functions (`engine::ranges`, written once over the `Arith` trait) are run
//! here on Z3 integers, and Z3 checks that for operands anywhere inside
//! their intervals every defined, valid result of the op (by the SMT
//! semantics of `encode`) lies inside the clamped interval computed for it.

use crate::encode::{Enc, Mode, Num, SVal, Term};
use crate::poly::Poly;
use crate::prove::check_within;
use engine::ir::{DType, Op};
use engine::ranges::{clamp, transfer, Arith, Range};
use serde::Serialize;
use std::time::{Duration, Instant};
use z3::ast::{Bool, Int};
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
        Z(Int::mul(&[&self.0, &o.0]))
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
}

/// One op's transfer function at one width and operand dtype.
#[derive(Clone, Debug, Serialize)]
pub struct RangeResult {
    pub op: String,
    /// Operand dtypes, then `->` and the result dtype.
    pub signature: String,
    pub width: u32,
    /// `proved`, `failed` (with the operand point) or `unknown`.
    pub verdict: String,
    pub detail: Option<String>,
    pub seconds: f64,
}

/// Every (op, dtype signature) whose transfer function is checked: integer
/// ops at each integer dtype, casts between every pair, comparisons, bool
/// ops and `where`.
pub fn signatures() -> Vec<(Op, Vec<DType>, DType)> {
    use DType::*;
    let ints = [Index, I32, I64];
    let mut out = Vec::new();
    for &d in &ints {
        out.push((Op::Neg, vec![d], d));
        for op in [
            Op::Add,
            Op::Sub,
            Op::Mul,
            Op::Min,
            Op::Max,
            Op::Div,
            Op::FloorDiv,
            Op::CeilDiv,
            Op::Rem,
            Op::Mod,
        ] {
            out.push((op, vec![d, d], d));
        }
        for op in [Op::Lt, Op::Le, Op::Eq, Op::Ne] {
            out.push((op, vec![d, d], Bool));
        }
        for &from in &ints {
            out.push((Op::Cast, vec![from], d));
        }
        out.push((Op::Where, vec![Bool, d, d], d));
    }
    out.push((Op::Not, vec![Bool], Bool));
    for op in [Op::And, Op::Or, Op::Xor] {
        out.push((op, vec![Bool, Bool], Bool));
    }
    out.push((Op::Where, vec![Bool, Bool, Bool], Bool));
    out
}

/// Proves one transfer function: operands `x_i` valid, defined and inside
/// `[lo_i, hi_i]` (bounds anywhere in the dtype's range, as the engine
/// clamps them); the op defined with a valid result; then the result must
/// lie in `clamp(transfer(op, ranges), result dtype)`.
pub fn prove_transfer(op: Op, arg_dts: &[DType], dt: DType, width: u32, timeout: Duration) -> RangeResult {
    let start = Instant::now();
    let enc = Enc::new(Mode::Int, width);
    let mut premise = Vec::new();
    let mut ranges = Vec::new();
    let mut args = Vec::new();
    let mut points = Vec::new();
    for (i, &adt) in arg_dts.iter().enumerate() {
        // Range bounds live in the dtype's 64-bit range whatever the width
        // (index ranges are clamped to 64 bits); bools are 0/1.
        let (blo, bhi) = match adt {
            DType::Bool => (0, 1),
            DType::Index => (i64::MIN as i128, i64::MAX as i128),
            other => engine::interp::Width(64).dtype_bounds(other),
        };
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
                let Num::I(p) = &n else { unreachable!("integer mode") };
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
    let claimed = clamp(&transfer(op, &ranges), dt);
    let outside = Bool::or(&[value.lt(&claimed.lo.0), claimed.hi.0.lt(&value)]);
    let solver = Solver::new();
    solver.assert(Bool::and(&premise));
    solver.assert(&outside);
    let (verdict, detail) = match check_within(&solver, timeout) {
        SatResult::Unsat => ("proved", None),
        SatResult::Unknown => ("unknown", solver.get_reason_unknown()),
        SatResult::Sat => {
            let m = solver.get_model().expect("a satisfiable query has a model");
            let show = |t: &Int| {
                m.eval(t, true)
                    .and_then(|v| v.as_i128())
                    .map_or("?".to_string(), |v| v.to_string())
            };
            let pts: Vec<String> = points
                .iter()
                .map(|(n, v, lo, hi)| format!("{n} = {} in [{}, {}]", show(v), show(lo), show(hi)))
                .collect();
            let detail = format!(
                "{}; result {} outside [{}, {}]",
                pts.join(", "),
                show(&value),
                show(&claimed.lo.0),
                show(&claimed.hi.0)
            );
            ("failed", Some(detail))
        }
    };
    let sig: Vec<String> = arg_dts.iter().map(|d| d.to_string()).collect();
    RangeResult {
        op: format!("{op:?}"),
        signature: format!("{} -> {dt}", sig.join(", ")),
        width,
        verdict: verdict.to_string(),
        detail,
        seconds: start.elapsed().as_secs_f64(),
    }
}
