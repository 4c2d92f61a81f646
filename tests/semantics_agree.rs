//! The three semantics agree: the reference interpreter, the SMT encodings
//! (bitvector, integers bounded to 8 bits, the width-generic integers
//! with their MAX at 127, and the unbounded integers against the
//! interpreter's unbounded model at 64 bits), the Cranelift JIT and the batched evaluator
//! (`fuzz::batch`, which the oracle runs on small domains), on
//! every integer op and both division families, for all 65,536 pairs of
//! 8-bit operands, under the contract's model and each variation a peer
//! can declare (partial ops unspecified, unbounded integers:
//! `engine::semantics::Model`), and on every combination of operand states
//! (valid, invalid, unconstrained): definedness, validity and value, bit
//! for bit. And on programs with constraints: the same domain, point by
//! point, as the constraints evaluated on their own say.
//!
//! The SMT side builds each op once over symbolic operands and evaluates
//! it in a model per point, so the encoding under test is exactly the one
//! the prover uses.

use engine::dtype::Width;
use engine::interp::{apply, Val};
use engine::ir::{DType, Graph, NodeId, Op};
use engine::op::Class;
use engine::semantics::{Model as Semantics, Partial};
use fuzz::batch::BatchEval;
use fuzz::jit::CompiledEval;
use verify::encode::{model_bool, model_int, Enc, Mode, Num, SVal, Term};
use verify::poly::Poly;
use z3::ast::{Ast, Bool, Int, BV};
use z3::Model;

const W: u32 = 8;

/// The kind of an operand.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Int,
    Bool,
}

/// A symbolic operand whose state and value a model chooses.
struct SymOperand {
    sval: SVal,
    inv: Bool,
    unc: Bool,
    val: Term,
    /// The integer symbol (integer theory).
    int: Option<Int>,
}

fn operand(enc: &Enc, name: &str, kind: Kind) -> SymOperand {
    let inv = Bool::new_const(format!("{name}.inv"));
    let unc = Bool::new_const(format!("{name}.unc"));
    let int = (kind == Kind::Int && enc.mode == Mode::Int).then(|| Int::new_const(name));
    let val = match (kind, enc.mode) {
        (Kind::Bool, _) => Term::B(Bool::new_const(name)),
        (Kind::Int, Mode::Bv) => Term::N(Num::B(BV::new_const(name, W))),
        (Kind::Int, Mode::Int) => Term::N(Num::I(Poly::atom(int.clone().expect("integer symbol")))),
    };
    let sval = SVal {
        def: Bool::from_bool(true),
        inv: if kind == Kind::Bool {
            Bool::from_bool(false)
        } else {
            inv.clone()
        },
        unc: unc.clone(),
        val: val.clone(),
    };
    SymOperand {
        sval,
        inv,
        unc,
        val,
        int,
    }
}

fn assign(m: &Model, o: &SymOperand, v: Val) {
    let (inv, unc) = (v == Val::Invalid, v == Val::Unconstrained);
    m.add_const_interp(&o.inv.decl(), &Bool::from_bool(inv));
    m.add_const_interp(&o.unc.decl(), &Bool::from_bool(unc));
    match (&o.val, v) {
        (Term::B(b), Val::Bool(x)) => m.add_const_interp(&b.decl(), &Bool::from_bool(x)),
        (Term::B(b), _) => m.add_const_interp(&b.decl(), &Bool::from_bool(false)),
        (Term::N(Num::B(b)), v) => m.add_const_interp(&b.decl(), &BV::from_i64(int_or_zero(v), W)),
        (Term::N(Num::I(_)), v) => {
            let i = o.int.as_ref().expect("integer symbol");
            m.add_const_interp(&i.decl(), &Int::from_i64(int_or_zero(v)))
        }
    }
}

fn int_or_zero(v: Val) -> i64 {
    match v {
        Val::Int(x) => x as i64,
        _ => 0,
    }
}

/// What the SMT result says in the interpreter's terms.
fn smt_result(m: &Model, r: &SVal) -> Result<Val, ()> {
    if !model_bool(m, &r.def).expect("def evaluates") {
        return Err(());
    }
    if model_bool(m, &r.inv).expect("inv evaluates") {
        return Ok(Val::Invalid);
    }
    if model_bool(m, &r.unc).expect("unc evaluates") {
        return Ok(Val::Unconstrained);
    }
    Ok(match &r.val {
        Term::N(n) => Val::Int(model_int(m, n).expect("value evaluates")),
        Term::B(b) => Val::Bool(model_bool(m, b).expect("value evaluates")),
    })
}

/// Operand values of a kind: every 8-bit integer (or both bools), then the
/// non-values.
fn values(kind: Kind) -> Vec<Val> {
    match kind {
        Kind::Int => {
            let mut v: Vec<Val> = (-128..=127).map(Val::Int).collect();
            v.push(Val::Invalid);
            v.push(Val::Unconstrained);
            v
        }
        Kind::Bool => vec![Val::Bool(false), Val::Bool(true), Val::Unconstrained],
    }
}

/// A JIT operand whose state is chosen at run time by two bool variables:
/// the value when `_valid`, else invalid when `_invalid`, else
/// unconstrained (an integer: `where(invalid < 0, x, x)`; a bool:
/// `invalid < 0`).
fn jit_operand(g: &mut Graph, name: &str, kind: Kind) -> NodeId {
    let dt = if kind == Kind::Int {
        DType::Index
    } else {
        DType::Bool
    };
    let (lo, hi) = if kind == Kind::Int {
        (-128, 127)
    } else {
        (0, 1)
    };
    let x = g.declare_var(name, dt, lo, hi).unwrap();
    let p = g
        .declare_var(&format!("{name}_valid"), DType::Bool, 0, 1)
        .unwrap();
    let q = g
        .declare_var(&format!("{name}_invalid"), DType::Bool, 0, 1)
        .unwrap();
    let (xn, pn, qn) = (g.var_node(x), g.var_node(p), g.var_node(q));
    let inv = g.invalid();
    let zero = g.cnst(0, DType::Index);
    let u = g.mk(Op::Lt, &[inv, zero]);
    if kind == Kind::Bool {
        return g.mk(Op::Where, &[pn, xn, u]);
    }
    let unc = g.mk(Op::Where, &[u, xn, xn]);
    let inner = g.mk(Op::Where, &[qn, inv, unc]);
    g.mk(Op::Where, &[pn, xn, inner])
}

fn jit_env(vals: &[Val]) -> Vec<i64> {
    vals.iter()
        .flat_map(|v| match v {
            Val::Int(x) => [*x as i64, 1, 0],
            Val::Bool(b) => [*b as i64, 1, 0],
            Val::Invalid => [0, 0, 1],
            Val::Unconstrained => [0, 0, 0],
        })
        .collect()
}

/// Checks one op on every combination of operand values; returns how many
/// points were compared (per encoding).
fn check_op(op: Op, kinds: &[Kind], result: DType, sem: Semantics) -> usize {
    let mut g = Graph::new();
    let names = ["a", "b", "c"];
    let jit_args: Vec<NodeId> = kinds
        .iter()
        .zip(names)
        .map(|(&k, n)| jit_operand(&mut g, n, k))
        .collect();
    let root = if op == Op::Cast {
        g.cast(result, jit_args[0])
    } else {
        g.mk(op, &jit_args)
    };
    let jit = CompiledEval::new(&g, &[root], sem).expect("compiles");
    let batch = BatchEval::new(&g, &[root], sem);
    let arg_dts: Vec<DType> = jit_args.iter().map(|&a| g.node(a).dtype).collect();

    // Every combination of operand values.
    let mut points: Vec<Vec<Val>> = vec![Vec::new()];
    for &k in kinds {
        points = points
            .into_iter()
            .flat_map(|p| {
                values(k)
                    .into_iter()
                    .map(move |v| [p.clone(), vec![v]].concat())
            })
            .collect();
    }
    let mut failures = Vec::new();
    // A variation of the contract only relaxes it (the interpreter checks
    // that on every point below): where the contract's interpreter is
    // defined, the variation gives the same result, or any result where the
    // contract's is unconstrained. The SMT encodings (the slow side: a model
    // per point) are compared under the variation at the points where it
    // differs from the contract, and under the contract everywhere.
    let contract = Semantics::from(Width(W));
    let smt_points: Vec<&Vec<Val>> = points
        .iter()
        .filter(|vals| {
            let base = apply(op, result, vals, &arg_dts, contract);
            if sem == contract || base.is_err() {
                return true;
            }
            let here = apply(op, result, vals, &arg_dts, sem);
            if here != base && base != Ok(Val::Unconstrained) {
                failures.push(format!(
                    "interpreter {} ({}) on {:?}: {:?}, contract {:?}",
                    op.name(),
                    label(sem),
                    vals,
                    here,
                    base
                ));
            }
            here != base
        })
        .collect();
    // The width-generic encoding (symbolic `index` bounds) with its MAX
    // pinned to 127 must be the 8-bit semantics too: on the contract, for
    // every op it is used for (the ops whose semantics count bits are
    // proved width by width).
    let mut encs = vec![Enc::of_model(Mode::Bv, sem), Enc::of_model(Mode::Int, sem)];
    if sem == contract && !matches!(op, Op::Shl | Op::Shr | Op::BitAnd | Op::Cast) {
        encs.push(Enc::generic());
    }
    let index_max = Int::new_const(verify::encode::INDEX_MAX);
    for enc in encs {
        let ops: Vec<SymOperand> = kinds
            .iter()
            .zip(names)
            .map(|(&k, n)| operand(&enc, n, k))
            .collect();
        let args: Vec<SVal> = ops.iter().map(|o| o.sval.clone()).collect();
        let r = enc.apply(op, result, &args, &arg_dts);
        for vals in smt_points.iter().copied() {
            let want = apply(op, result, vals, &arg_dts, sem).map_err(|_| ());
            let m = Model::new();
            m.add_const_interp(&index_max.decl(), &Int::from_i64(127));
            for (o, &v) in ops.iter().zip(vals) {
                assign(&m, o, v);
            }
            let got = smt_result(&m, &r);
            if got != want {
                failures.push(format!(
                    "{} {} ({}) on {:?}: interpreter {:?}, smt {:?}",
                    enc.label(),
                    op.name(),
                    label(sem),
                    vals,
                    want,
                    got
                ));
            }
        }
    }
    // The unbounded-integer encoding (no `index` bounds at all) is the
    // unbounded model at any width that holds every exact result: 64 bits
    // for 8-bit operands. At every point, for every op it is used for (the
    // ops whose semantics count bits are never encoded unbounded).
    if sem.unbounded && !matches!(op, Op::Shl | Op::Shr | Op::BitAnd) {
        let enc = Enc::unbounded_integers();
        let wide = Semantics {
            width: Width(64),
            ..sem
        };
        let ops: Vec<SymOperand> = kinds
            .iter()
            .zip(names)
            .map(|(&k, n)| operand(&enc, n, k))
            .collect();
        let args: Vec<SVal> = ops.iter().map(|o| o.sval.clone()).collect();
        let r = enc.apply(op, result, &args, &arg_dts);
        for vals in &points {
            let want = apply(op, result, vals, &arg_dts, wide).map_err(|_| ());
            let m = Model::new();
            for (o, &v) in ops.iter().zip(vals) {
                assign(&m, o, v);
            }
            let got = smt_result(&m, &r);
            if got != want {
                failures.push(format!(
                    "{} {} ({}) on {:?}: interpreter at 64 bits {:?}, smt {:?}",
                    enc.label(),
                    op.name(),
                    label(sem),
                    vals,
                    want,
                    got
                ));
            }
        }
    }
    // The batched evaluator runs every point in blocks of lanes, as the
    // oracle does.
    let envs: Vec<Vec<i64>> = points.iter().map(|vals| jit_env(vals)).collect();
    let batched = batch.eval_many(&envs);
    for (vals, by_batch) in points.iter().zip(&batched) {
        let want = apply(op, result, vals, &arg_dts, sem).map_err(|_| ());
        let got = jit.eval(&jit_env(vals)).map(|v| v[0]).map_err(|_| ());
        let got_batch = by_batch.as_ref().map(|v| v[0]).map_err(|_| ());
        for (who, got) in [("jit", got), ("batched evaluator", got_batch)] {
            if got != want {
                failures.push(format!(
                    "{who} {} ({}) on {:?}: interpreter {:?}, {who} {:?}",
                    op.name(),
                    label(sem),
                    vals,
                    want,
                    got
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} disagreement(s), first: {:#?}",
        failures.len(),
        &failures[..failures.len().min(10)]
    );
    points.len()
}

/// The contract's model and each variation a peer's profile can declare,
/// one parameter at a time.
fn models() -> Vec<Semantics> {
    let contract = Semantics::from(Width(W));
    vec![
        contract,
        Semantics {
            partial: Partial::Unspecified,
            ..contract
        },
        Semantics {
            unbounded: true,
            ..contract
        },
    ]
}

/// Whether model `m` can change what `op` does: a variation is compared
/// only on the ops it concerns (what partial ops do: divisions, shifts and
/// the `&&` / `||` they feed; unbounded integers: the integer ops), the
/// contract on every op.
fn matters(op: Op, m: Semantics) -> bool {
    let contract = Semantics::from(Width(W));
    let partial =
        m.partial == contract.partial || op.is_divmod() || op.is_shift() || op.is_bool_logic();
    let unbounded =
        m.unbounded == contract.unbounded || matches!(op.class(), Class::Arith | Class::Cast);
    partial && unbounded
}

fn label(m: Semantics) -> String {
    format!(
        "partial ops {}{}",
        m.partial.name(),
        if m.unbounded { ", unbounded" } else { "" }
    )
}

/// Every op of the op table at the typings the 8-bit check covers: operands
/// `index` (W = 8) or bool, casts from `index` to every integer dtype.
fn typings() -> Vec<(Op, Vec<Kind>, DType)> {
    let kind = |d: DType| match d {
        DType::Index => Some(Kind::Int),
        DType::Bool => Some(Kind::Bool),
        _ => None,
    };
    Op::all()
        .flat_map(|op| {
            op.signatures()
                .into_iter()
                .filter_map(move |(args, result)| {
                    let kinds: Option<Vec<Kind>> = args.iter().map(|&d| kind(d)).collect();
                    let result_ok = op == Op::Cast || kind(result).is_some();
                    Some((op, kinds?, result)).filter(|_| result_ok)
                })
        })
        .collect()
}

#[test]
fn interpreter_smt_jit_and_batched_evaluator_agree_on_every_op_of_the_table() {
    use rayon::prelude::*;
    let cases: Vec<(Op, Vec<Kind>, DType, Semantics)> = typings()
        .into_iter()
        .flat_map(|(op, kinds, result)| {
            models()
                .into_iter()
                .filter(move |&m| matters(op, m))
                .map(move |m| (op, kinds.clone(), result, m))
        })
        .collect();
    for op in Op::all() {
        assert!(
            cases.iter().any(|c| c.0 == op),
            "{} has no typing the agreement test covers",
            op.name()
        );
    }
    let results: Vec<(String, Result<usize, String>)> = cases
        .par_iter()
        .map(|(op, kinds, result, sem)| {
            let label = format!("{} -> {result} ({})", op.name(), label(*sem));
            let r = std::panic::catch_unwind(|| check_op(*op, kinds, *result, *sem)).map_err(|e| {
                e.downcast_ref::<String>()
                    .cloned()
                    .unwrap_or_else(|| "panic".into())
            });
            let expected: usize = kinds.iter().map(|&k| values(k).len()).product();
            let r = r.and_then(|n| {
                if n == expected {
                    Ok(n)
                } else {
                    Err(format!("compared {n} points, expected {expected}"))
                }
            });
            (label, r)
        })
        .collect();
    let mut failed = Vec::new();
    for (label, r) in &results {
        match r {
            Ok(n) => println!("{label}: {n} operand combinations agree"),
            Err(e) => failed.push(format!("{label}: {e}")),
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// A constraint means the same to every part (docs/semantics.md,
/// "Domains"): at every point of the box of each documentation map (and a
/// text program tying a range variable to a dimension), the roots are
/// invalid exactly where a constraint's expression, evaluated on its own,
/// is outside its bounds, and the interpreter, the JIT and the batched
/// evaluator give the same results there; both SMT encodings see the
/// domain exactly: the results without their constraints differ from them
/// at a point outside the domain, and the domain without one of its points
/// differs at that point, each a validity difference the interpreter
/// confirms.
#[test]
fn a_constraint_means_the_same_to_every_part() {
    use engine::input::read;
    use std::time::Duration;
    use verify::check::{check, CheckResult};
    let sources = [
        std::fs::read_to_string("docs/examples/xla-slice.map").unwrap(),
        std::fs::read_to_string("docs/examples/xla-pad.map").unwrap(),
        std::fs::read_to_string("docs/examples/xla-concatenate.map").unwrap(),
        "var d0 in [0, 9]\nvar s0 in [0, 7]\nconstraint d0 + s0 in [3, 11]\nconstraint (d0 * 3 + s0) mod 4 in [1, 2]\nexpr d0 * 8 + s0\nexpr (d0 + s0) // 3\n".to_string(),
    ];
    for text in &sources {
        let mut p = read(text, None).unwrap().program;
        let cs = p.constraints.clone();
        assert!(!cs.is_empty());
        let gated = p.outputs.clone();
        let results: Vec<NodeId> = gated.iter().map(|&r| p.graph.node(r).src()[1]).collect();
        let g = &p.graph;
        let jit = CompiledEval::new(g, &gated, Width(16)).unwrap();
        let batch = BatchEval::new(g, &gated, Width(16));
        let boxes: Vec<(i64, i64)> = g.vars().iter().map(|d| (d.lo, d.hi)).collect();
        let mut point: Vec<i64> = boxes.iter().map(|b| b.0).collect();
        let mut inside = None;
        'walk: loop {
            let env: Vec<i128> = point.iter().map(|&v| v as i128).collect();
            let member = cs.iter().all(|c| {
                match engine::interp::eval(g, &[c.expr], &env, Width(16)).unwrap()[0] {
                    Val::Int(v) => c.lo as i128 <= v && v <= c.hi as i128,
                    v => panic!("a constraint's expression is {v:?}"),
                }
            });
            let want = engine::interp::eval(g, &gated, &env, Width(16)).unwrap();
            assert!(
                want.iter().all(|v| (*v == Val::Invalid) != member),
                "{text}: at {point:?} the interpreter says {want:?}, membership {member}"
            );
            assert_eq!(jit.eval(&point).unwrap(), want, "{text}: JIT at {point:?}");
            assert_eq!(
                batch.eval(&point).unwrap(),
                want,
                "{text}: batch at {point:?}"
            );
            if member {
                inside.get_or_insert(point.clone());
            }
            for (i, b) in boxes.iter().enumerate() {
                if point[i] < b.1 {
                    point[i] += 1;
                    continue 'walk;
                }
                point[i] = b.0;
            }
            break;
        }
        let inside = inside.unwrap();
        // The domain without `inside`: gated again by `vars != inside`.
        let mut differs = None;
        for (v, &x) in inside.iter().enumerate() {
            let var = p.graph.var_node(v as u32);
            let k = p.graph.cnst(x, DType::Index);
            let ne = p.graph.mk(Op::Ne, &[var, k]);
            differs = Some(match differs {
                None => ne,
                Some(d) => p.graph.mk(Op::Or, &[d, ne]),
            });
        }
        let inv = p.graph.invalid();
        let dropped: Vec<NodeId> = gated
            .iter()
            .map(|&r| p.graph.mk(Op::Where, &[differs.unwrap(), r, inv]))
            .collect();
        // Width 16: bitvectors; width 32: bounded integers.
        for width in [Width(16), Width(32)] {
            let g = &p.graph;
            let t = Duration::from_secs(20);
            assert!(
                matches!(
                    check(g, &gated, &gated, width, t),
                    CheckResult::Equivalent { .. }
                ),
                "{text}"
            );
            for (tgt, at) in [(&results, None), (&dropped, Some(&inside))] {
                match check(g, &gated, tgt, width, t) {
                    CheckResult::Counterexample {
                        failure,
                        point,
                        confirmed,
                        ..
                    } => {
                        assert_eq!(
                            failure,
                            engine::semantics::Failure::ValidityDiffers,
                            "{text}"
                        );
                        assert!(confirmed.is_ok(), "{text}: {confirmed:?}");
                        let got: Vec<i64> = point.iter().map(|p| p.1 as i64).collect();
                        match at {
                            Some(want) => assert_eq!(&got, want, "{text}"),
                            None => {
                                let env: Vec<i128> = got.iter().map(|&v| v as i128).collect();
                                let out = engine::interp::eval(g, &gated, &env, width).unwrap();
                                assert!(out.iter().all(|v| *v == Val::Invalid), "{text}: {got:?}");
                            }
                        }
                    }
                    r => panic!("{text}: {} at width {}", r.name(), width.0),
                }
            }
        }
    }
}
