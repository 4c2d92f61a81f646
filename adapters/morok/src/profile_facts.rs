//! The experiments behind the hello's profile: each claim the adapter
//! makes about Morok, checked on the pinned release (its constant folding,
//! its constructors and its compiled code), not taken from documentation.

use crate::convert::{Build, Uops};
use crate::harness::{self, Val};
use morok_dtype::DType;
use morok_ir::types::BinaryOp;
use morok_ir::{ConstValue, Op, UOp};
use morok_schedule::graph_rewrite;
use std::sync::Arc;
use std::time::Duration;
use tileproof_adapter::child::{Outcome, in_child};

/// Morok's constant folding of `a op b` (symbolic_simple folds constants).
fn folded(
    op: fn(&Arc<UOp>, &Arc<UOp>) -> morok_ir::Result<Arc<UOp>>,
    a: i64,
    b: i64,
) -> Option<i64> {
    let e = op(&UOp::index_const(a), &UOp::index_const(b)).ok()?;
    match graph_rewrite(morok_schedule::symbolic::symbolic_simple(), e, &mut ()).op() {
        Op::Const(c) => match c.0 {
            ConstValue::Int(v) => Some(v),
            _ => None,
        },
        _ => None,
    }
}

/// `a op b` compiled by Morok's C backend, at a point (in a child: a trap
/// is an outcome).
fn compiled(op: fn(&Arc<UOp>, &Arc<UOp>) -> morok_ir::Result<Arc<UOp>>, a: i64, b: i64) -> Outcome {
    let (x, y) = (
        UOp::define_var("a".into(), i64::MIN, i64::MAX),
        UOp::define_var("b".into(), i64::MIN, i64::MAX),
    );
    let k = harness::compile(&[x.clone(), y.clone()], &[op(&x, &y).unwrap()]).unwrap();
    in_child(Duration::from_secs(20), |w| {
        let v = k.run(&[a, b]);
        let _ = write!(w, "{}", v[0]);
    })
    .unwrap()
}

#[test]
fn div_truncates_toward_zero_and_rem_takes_the_dividends_sign() {
    for (a, b, q, r) in [
        (-7, 2, -3, -1),
        (7, -2, -3, 1),
        (-7, -2, 3, -1),
        (7, 2, 3, 1),
    ] {
        assert_eq!(folded(UOp::try_div, a, b), Some(q), "fold {a} / {b}");
        assert_eq!(folded(UOp::try_mod, a, b), Some(r), "fold {a} % {b}");
        assert_eq!(
            compiled(UOp::try_div, a, b),
            Outcome::Output(q.to_string().into_bytes())
        );
        assert_eq!(
            compiled(UOp::try_mod, a, b),
            Outcome::Output(r.to_string().into_bytes())
        );
    }
}

#[test]
fn morok_has_no_floor_division_no_min_and_neg_is_a_multiplication() {
    // An exhaustive match over Morok's binary ops: a new op (a floor
    // division, a MIN) fails to compile here, and the profile is revisited.
    fn arith(op: BinaryOp) -> bool {
        match op {
            BinaryOp::Add
            | BinaryOp::Mul
            | BinaryOp::Sub
            | BinaryOp::Mod
            | BinaryOp::Max
            | BinaryOp::Idiv => true,
            BinaryOp::Pow | BinaryOp::Fdiv | BinaryOp::Threefry => false,
            BinaryOp::Lt
            | BinaryOp::Le
            | BinaryOp::Gt
            | BinaryOp::Ge
            | BinaryOp::Eq
            | BinaryOp::Ne => false,
            BinaryOp::And | BinaryOp::Or | BinaryOp::Xor | BinaryOp::Shl | BinaryOp::Shr => false,
        }
    }
    assert!(arith(BinaryOp::Idiv) && !arith(BinaryOp::Fdiv));
    let x = UOp::define_var("x".into(), -5, 5);
    let n = x.neg();
    assert!(
        matches!(n.op(), Op::Binary(BinaryOp::Mul, a, m) if Arc::ptr_eq(a, &x)
        && matches!(m.op(), Op::Const(c) if c.0 == ConstValue::Int(-1)))
    );
}

#[test]
fn min_is_exact_where_it_is_spelled_with_negations_and_where_an_operand_may_be_min() {
    use crate::convert::{MinSpelling, VarKind, VarPlan, min_spelling};
    use tileproof_adapter::{Dtype, Tree};
    // Which spelling: by the adapter's own bounds of the operands.
    let plan = |name: &str, lo: i64, hi: i64| VarPlan {
        name: name.into(),
        lo,
        hi,
        kind: VarKind::Define,
    };
    let plans = [plan("a", i64::MIN, i64::MAX), plan("c", -5, 5)];
    let var = |n: &str| Tree::Var(n.into());
    let gated = |x: Tree| Tree::Op("where".into(), vec![Tree::Bool(true), x, Tree::Invalid]);
    assert_eq!(
        min_spelling(&var("a"), &var("c"), &plans),
        Some(MinSpelling::Select)
    );
    assert_eq!(
        min_spelling(&var("c"), &gated(var("c")), &plans),
        Some(MinSpelling::Negation)
    );
    assert_eq!(min_spelling(&gated(var("a")), &var("c"), &plans), None);
    // A product that reaches MIN (Morok's own bounds of it are wrong: they
    // may not decide).
    let product = Tree::Op(
        "mul".into(),
        vec![var("c"), Tree::Const(1 << 62, Dtype::Index)],
    );
    assert_eq!(
        min_spelling(&product, &var("c"), &plans),
        Some(MinSpelling::Select)
    );
    // Each spelling is exact where it is used, on compiled code.
    let edges = [i64::MIN, i64::MIN + 1, -3, 0, 5, i64::MAX];
    let (a, b) = (
        UOp::define_var("a".into(), i64::MIN, i64::MAX),
        UOp::define_var("b".into(), i64::MIN, i64::MAX),
    );
    let by_where = Uops.min(&a, &b, MinSpelling::Select).unwrap();
    let by_neg = Uops.min(&a, &b, MinSpelling::Negation).unwrap();
    assert!(matches!(by_where.op(), Op::Ternary(..)));
    assert!(matches!(by_neg.op(), Op::Binary(BinaryOp::Mul, ..)));
    let k = harness::compile(&[a, b], &[by_where, by_neg]).unwrap();
    for &x in &edges {
        for &y in &edges {
            let got = k.run(&[x, y]);
            assert_eq!(got[0], Val::Int(x.min(y)), "where-spelled min({x}, {y})");
            if x > i64::MIN && y > i64::MIN {
                assert_eq!(got[1], Val::Int(x.min(y)), "negation-spelled min({x}, {y})");
            }
        }
    }
}

#[test]
fn index_is_64_bits_in_folding_and_in_compiled_code() {
    // Folding wraps at 64 bits (`integers: int64` makes overflow undefined
    // in the model: a point where the source overflows is not judged).
    assert_eq!(folded(UOp::try_add, i64::MAX, 1), Some(i64::MIN));
    let x = UOp::define_var("x".into(), 0, 1 << 40);
    let k = harness::compile(
        &[x.clone()],
        &[x.try_mul(&UOp::index_const(1 << 20)).unwrap()],
    )
    .unwrap();
    assert!(
        k.code.contains("long long"),
        "Index renders as long long:\n{}",
        k.code
    );
    assert_eq!(k.run(&[1 << 40]), vec![Val::Int(1 << 60)]);
}

#[test]
fn invalid_is_the_masked_arm_of_a_where_and_compiles_as_a_gated_store() {
    let x = UOp::define_var("x".into(), 0, 9);
    let gated = x.valid(x.try_cmplt(&UOp::index_const(5)).unwrap());
    assert!(
        matches!(gated.op(), Op::Ternary(_, _, v, inv) if Arc::ptr_eq(v, &x) && matches!(inv.op(), Op::Invalid))
    );
    let k = harness::compile(&[x.clone()], &[gated]).unwrap();
    assert_eq!(k.run(&[3]), vec![Val::Int(3)]);
    assert_eq!(k.run(&[7]), vec![Val::Invalid]);
}

#[test]
fn partial_ops_are_undefined_the_constructor_refuses_a_zero_divisor_and_the_code_traps() {
    assert!(UOp::index_const(1).try_div(&UOp::index_const(0)).is_err());
    assert_eq!(
        compiled(UOp::try_div, 1, 0),
        Outcome::Signal("SIGFPE".into(), Vec::new())
    );
    assert_eq!(
        compiled(UOp::try_div, i64::MIN, -1),
        Outcome::Signal("SIGFPE".into(), Vec::new())
    );
    // Morok's own constant folding of MIN % -1 is Rust's `%`, which panics.
    assert!(std::panic::catch_unwind(|| folded(UOp::try_mod, i64::MIN, -1)).is_err());
    let _ = DType::Index;
}
