//! The JIT agrees with the reference interpreter bit for bit: definedness
//! (including which node is undefined first and why), validity and value.
//!
//! Operands are built in every state the semantics distinguishes, both with
//! states known at compile time (a variable, `invalid`, a `where` on an
//! unconstrained condition) and chosen at run time by bool variables
//! (`where(p, x, where(q, invalid, where(unc, x, x)))`), because the JIT
//! compiles the two differently.

use engine::dtype::Width;
use engine::interp::{self, Val};
use engine::ir::{DType, Graph, NodeId, Op};
use fuzz::jit::CompiledEval;

/// The three states of a run-time-selected operand, as (p, q) selectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum St {
    Valid,
    Invalid,
    Unc,
}
const STATES: [St; 3] = [St::Valid, St::Invalid, St::Unc];

fn sel(s: St) -> (i64, i64) {
    match s {
        St::Valid => (1, 0),
        St::Invalid => (0, 1),
        St::Unc => (0, 0),
    }
}

/// Variables: two integer operands of dtype `dt` and their state selectors,
/// two bools and their selectors.
struct Ctx {
    g: Graph,
    a: NodeId,
    b: NodeId,
    c: NodeId,
    d: NodeId,
    n_vars: usize,
}

// Variable table order, shared by every Ctx.
const A: usize = 0;
const B: usize = 1;
const PA: usize = 2;
const QA: usize = 3;
const PB: usize = 4;
const QB: usize = 5;
const C: usize = 6;
const D: usize = 7;

impl Ctx {
    fn new(dt: DType, lo: i64, hi: i64) -> Ctx {
        let mut g = Graph::new();
        let var = |g: &mut Graph, name: &str, dt: DType, lo: i64, hi: i64| {
            let v = g.declare_var(name, dt, lo, hi).unwrap();
            g.var_node(v)
        };
        let a = var(&mut g, "a", dt, lo, hi);
        let b = var(&mut g, "b", dt, lo, hi);
        for name in ["pa", "qa", "pb", "qb"] {
            var(&mut g, name, DType::Bool, 0, 1);
        }
        let c = var(&mut g, "c", DType::Bool, 0, 1);
        let d = var(&mut g, "d", DType::Bool, 0, 1);
        let n_vars = g.vars().len();
        Ctx {
            g,
            a,
            b,
            c,
            d,
            n_vars,
        }
    }

    fn var(&mut self, i: usize) -> NodeId {
        self.g.var_node(i as u32)
    }

    /// An always-invalid value of `x`'s dtype.
    fn invalid_like(&mut self, x: NodeId) -> NodeId {
        let inv = self.g.invalid();
        match self.g.node(x).dtype {
            DType::Index => inv,
            dt => self.g.cast(dt, inv),
        }
    }

    /// An always-unconstrained bool: a comparison with an invalid operand.
    fn unc_bool(&mut self) -> NodeId {
        let inv = self.g.invalid();
        let zero = self.g.cnst(0, DType::Index);
        self.g.mk(Op::Lt, &[inv, zero])
    }

    /// An always-unconstrained value of `x`'s dtype (carrying `x`'s bits).
    fn unc_like(&mut self, x: NodeId) -> NodeId {
        let u = self.unc_bool();
        self.g.mk(Op::Where, &[u, x, x])
    }

    /// `x` with its state chosen at run time by selector variables p, q.
    fn dyn_state(&mut self, x: NodeId, p: usize, q: usize) -> NodeId {
        let (p, q) = (self.var(p), self.var(q));
        let inv = self.invalid_like(x);
        let unc = self.unc_like(x);
        let inner = self.g.mk(Op::Where, &[q, inv, unc]);
        self.g.mk(Op::Where, &[p, x, inner])
    }

    /// A bool with its state (valid or unconstrained) chosen by p.
    fn dyn_bool(&mut self, x: NodeId, p: usize) -> NodeId {
        let p = self.var(p);
        let u = self.unc_bool();
        self.g.mk(Op::Where, &[p, x, u])
    }

    fn env(&self) -> Vec<i64> {
        vec![0; self.n_vars]
    }
}

/// Compiles `root` and compares it with the interpreter at every point.
fn agree(g: &Graph, root: NodeId, w: Width, points: &[Vec<i64>]) -> usize {
    let jit = CompiledEval::new(g, &[root], w).expect("compiles");
    for env in points {
        let env128: Vec<i128> = env.iter().map(|&v| v as i128).collect();
        let want = interp::eval(g, &[root], &env128, w);
        let got = jit.eval(env);
        assert_eq!(
            got,
            want,
            "JIT and interpreter disagree at width {w} on {} with env {env:?}",
            engine::print::expr(g, root)
        );
    }
    points.len()
}

fn all8() -> Vec<i64> {
    (-128..=127).collect()
}

/// Interesting 8-bit values for operands whose value matters little.
const FEW8: [i64; 9] = [-128, -127, -7, -1, 0, 1, 2, 7, 127];

/// Points over the (a, b) operands, with the selectors set for the given
/// operand states; operands in a non-valid state range over `FEW8` only.
fn pair_points(
    n_vars: usize,
    sa: St,
    sb: St,
    va: &[i64],
    vb: &[i64],
    few: &[i64],
) -> Vec<Vec<i64>> {
    let va = if sa == St::Valid { va } else { few };
    let vb = if sb == St::Valid { vb } else { few };
    let (pa, qa) = sel(sa);
    let (pb, qb) = sel(sb);
    let mut pts = Vec::with_capacity(va.len() * vb.len());
    for &x in va {
        for &y in vb {
            let mut e = vec![0; n_vars];
            e[A] = x;
            e[B] = y;
            e[PA] = pa;
            e[QA] = qa;
            e[PB] = pb;
            e[QB] = qb;
            pts.push(e);
        }
    }
    pts
}

/// Every operand shape of a binary integer op (or comparison) over
/// variables `a`, `b`: static valid x static valid on `va x vb` (the
/// exhaustive part), run-time states (all nine combinations), static
/// invalid / unconstrained operands, and constant operands.
fn check_binary(op: Op, dt: DType, w: Width, vals: &[i64], few: &[i64], consts: &[i64]) -> usize {
    let (lo, hi) = (*vals.iter().min().unwrap(), *vals.iter().max().unwrap());
    let mut cx = Ctx::new(dt, lo, hi);
    let (a, b) = (cx.a, cx.b);
    let n = cx.n_vars;
    let mut count = 0;

    // static valid x static valid: the exhaustive part
    let r = cx.g.mk(op, &[a, b]);
    count += agree(
        &cx.g,
        r,
        w,
        &pair_points(n, St::Valid, St::Valid, vals, vals, few),
    );

    // run-time states on both sides
    let (xa, xb) = (cx.dyn_state(a, PA, QA), cx.dyn_state(b, PB, QB));
    let r = cx.g.mk(op, &[xa, xb]);
    for sa in STATES {
        for sb in STATES {
            let pts = pair_points(n, sa, sb, vals, vals, few);
            count += agree(&cx.g, r, w, &pts);
        }
    }
    // mixed static / run-time (valid x valid on a grid, others on few)
    for (l, rr) in [(a, xb), (xa, b)] {
        let r = cx.g.mk(op, &[l, rr]);
        for s in STATES {
            let (sa, sb) = if l == a {
                (St::Valid, s)
            } else {
                (s, St::Valid)
            };
            count += agree(&cx.g, r, w, &pair_points(n, sa, sb, few, vals, few));
            count += agree(&cx.g, r, w, &pair_points(n, sa, sb, vals, few, few));
        }
    }
    // static invalid / unconstrained operands
    let (ia, ib) = (cx.invalid_like(a), cx.invalid_like(b));
    let (ua, ub) = (cx.unc_like(a), cx.unc_like(b));
    for (l, rr) in [
        (ia, b),
        (a, ib),
        (ua, b),
        (a, ub),
        (ia, ub),
        (ua, ib),
        (ua, ub),
        (ia, ib),
    ] {
        let r = cx.g.mk(op, &[l, rr]);
        count += agree(
            &cx.g,
            r,
            w,
            &pair_points(n, St::Valid, St::Valid, few, vals, few),
        );
    }
    // constant operands (the JIT specializes constant divisors)
    for &k in consts {
        let kn = cx.g.cnst(k, dt);
        for (l, rr) in [(a, kn), (kn, b), (xa, kn)] {
            let r = cx.g.mk(op, &[l, rr]);
            for s in STATES {
                count += agree(&cx.g, r, w, &pair_points(n, s, St::Valid, vals, few, few));
            }
        }
    }
    count
}

/// Unary integer ops (neg, casts) over every operand shape.
fn check_unary(op: Op, to: Option<DType>, dt: DType, w: Width, vals: &[i64], few: &[i64]) -> usize {
    let (lo, hi) = (*vals.iter().min().unwrap(), *vals.iter().max().unwrap());
    let mut cx = Ctx::new(dt, lo, hi);
    let a = cx.a;
    let n = cx.n_vars;
    let mk = |g: &mut Graph, x: NodeId| match to {
        Some(t) => g.cast(t, x),
        None => g.mk(op, &[x]),
    };
    let mut count = 0;
    let xa = cx.dyn_state(a, PA, QA);
    let ia = cx.invalid_like(a);
    let ua = cx.unc_like(a);
    for x in [a, xa, ia, ua] {
        let r = mk(&mut cx.g, x);
        for s in STATES {
            count += agree(&cx.g, r, w, &pair_points(n, s, St::Valid, vals, &[0], few));
        }
    }
    count
}

/// The binary ops over integers (arithmetic and comparisons), from the op
/// table.
fn binary_ops() -> impl Iterator<Item = Op> {
    Op::all().filter(|op| op.arity() == 2 && (op.is_int_alu() || op.is_comparison()))
}

#[test]
fn every_alu_op_agrees_exhaustively_on_index_at_width_8() {
    let w = Width(8);
    let all = all8();
    let consts = [-128, -1, 0, 1, 3, -4, 127];
    let mut total = 0;
    for op in Op::all() {
        total += match op {
            _ if binary_ops().any(|b| b == op) => {
                check_binary(op, DType::Index, w, &all, &FEW8, &consts)
            }
            Op::Neg => check_unary(op, None, DType::Index, w, &all, &FEW8),
            Op::Cast => {
                let mut n = 0;
                for to in DType::INTS {
                    n += check_unary(op, Some(to), DType::Index, w, &all, &FEW8);
                }
                n
            }
            Op::Not | Op::And | Op::Or | Op::Xor => check_bool_op(op, w),
            Op::Where => check_where(w, &all, &FEW8),
            _ => unreachable!("{op:?} is not in ALU"),
        };
    }
    assert!(total > 21 * 65_536, "checked {total} points");
}

/// `! && || ^` over every combination of values and states (bools are
/// valid or unconstrained, statically or at run time).
fn check_bool_op(op: Op, w: Width) -> usize {
    let mut cx = Ctx::new(DType::Index, -128, 127);
    let (c, d) = (cx.c, cx.d);
    let (xc, xd) = (cx.dyn_bool(c, PA), cx.dyn_bool(d, PB));
    let u = cx.unc_bool();
    let mut count = 0;
    let mut pts = Vec::new();
    for cv in 0..2 {
        for dv in 0..2 {
            for pa in 0..2 {
                for pb in 0..2 {
                    let mut e = cx.env();
                    e[C] = cv;
                    e[D] = dv;
                    e[PA] = pa;
                    e[PB] = pb;
                    pts.push(e);
                }
            }
        }
    }
    let shapes: Vec<Vec<NodeId>> = if op == Op::Not {
        vec![vec![c], vec![xc], vec![u]]
    } else {
        let l = [c, xc, u];
        let r = [d, xd, u];
        l.iter()
            .flat_map(|&x| r.iter().map(move |&y| vec![x, y]))
            .collect()
    };
    for s in shapes {
        let r = cx.g.mk(op, &s);
        count += agree(&cx.g, r, w, &pts);
    }
    count
}

/// `where` over conditions {valid, run-time, unconstrained} and arms in
/// every state; exhaustive over both arms' values with a valid condition.
fn check_where(w: Width, vals: &[i64], few: &[i64]) -> usize {
    let mut cx = Ctx::new(DType::Index, -128, 127);
    let (a, b, c) = (cx.a, cx.b, cx.c);
    let n = cx.n_vars;
    let mut count = 0;
    let with_c = |mut pts: Vec<Vec<i64>>, cvals: &[i64], dvals: &[i64]| {
        let mut out = Vec::new();
        for p in pts.drain(..) {
            for &cv in cvals {
                for &dv in dvals {
                    let mut e = p.clone();
                    e[C] = cv;
                    e[D] = dv;
                    out.push(e);
                }
            }
        }
        out
    };
    // valid condition, valid arms: every condition x every pair
    let r = cx.g.mk(Op::Where, &[c, a, b]);
    let pts = with_c(
        pair_points(n, St::Valid, St::Valid, vals, vals, few),
        &[0, 1],
        &[0],
    );
    count += agree(&cx.g, r, w, &pts);
    // run-time / static states of condition and arms
    let xc = {
        let d = cx.var(D);
        let u = cx.unc_bool();
        // D selects: valid c when 1, unconstrained when 0
        cx.g.mk(Op::Where, &[d, c, u])
    };
    let u = cx.unc_bool();
    let (xa, xb) = (cx.dyn_state(a, PA, QA), cx.dyn_state(b, PB, QB));
    let (ia, ub) = (cx.invalid_like(a), cx.unc_like(b));
    for cond in [c, xc, u] {
        for (l, rr) in [(xa, xb), (ia, b), (a, ub), (ia, ub), (xa, ia)] {
            let r = cx.g.mk(Op::Where, &[cond, l, rr]);
            for sa in STATES {
                for sb in STATES {
                    let pts = with_c(pair_points(n, sa, sb, few, few, few), &[0, 1], &[0, 1]);
                    count += agree(&cx.g, r, w, &pts);
                }
            }
        }
    }
    // bool arms
    let d = cx.d;
    let xd = cx.dyn_bool(d, PB);
    let r = cx.g.mk(Op::Where, &[c, xd, u]);
    let r2 = cx.g.mk(Op::Where, &[xc, c, xd]);
    for root in [r, r2] {
        let pts = with_c(
            pair_points(n, St::Valid, St::Valid, &[0], &[0], few),
            &[0, 1],
            &[0, 1],
        );
        let pts: Vec<Vec<i64>> = pts
            .into_iter()
            .flat_map(|p| {
                (0..2).map(move |pb| {
                    let mut e = p.clone();
                    e[PB] = pb;
                    e
                })
            })
            .collect();
        count += agree(&cx.g, root, w, &pts);
    }
    count
}

/// Deterministic pseudo-random values (splitmix64), for samples.
fn rand_vals(seed: u64, n: usize) -> Vec<i64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            (z ^ (z >> 31)) as i64
        })
        .collect()
}

/// Boundary values of a signed range plus small values and random ones
/// (scaled into the range, and some of every magnitude).
fn strong_sample(min: i64, max: i64, seed: u64) -> Vec<i64> {
    let mut v = vec![
        min,
        min + 1,
        min / 2,
        -3,
        -2,
        -1,
        0,
        1,
        2,
        3,
        7,
        -8,
        max / 2,
        max - 1,
        max,
    ];
    let span = (max as i128 - min as i128 + 1) as u128;
    for (i, r) in rand_vals(seed, 12).into_iter().enumerate() {
        if i % 2 == 0 {
            v.push((min as i128 + ((r as u64 as u128 * span) >> 64) as i128) as i64);
        } else {
            // random magnitude: a value of about `i % 40` bits, clamped
            let bits = (i * 5) % 62 + 1;
            let x = (r >> (63 - bits)).clamp(min, max);
            v.push(x);
        }
    }
    v.sort_unstable();
    v.dedup();
    v
}

#[test]
fn i32_and_i64_ops_agree_on_boundary_samples() {
    for (dt, min, max) in [
        (DType::I32, i32::MIN as i64, i32::MAX as i64),
        (DType::I64, i64::MIN, i64::MAX),
    ] {
        let vals = strong_sample(min, max, 7);
        let few = [min, -1, 0, 1, max];
        let consts = [min, -1, 0, 1, 3, max];
        for w in [Width(8), Width(64)] {
            for op in binary_ops() {
                check_binary(op, dt, w, &vals, &few, &consts);
            }
            check_unary(Op::Neg, None, dt, w, &vals, &few);
            for to in DType::INTS {
                check_unary(Op::Cast, Some(to), dt, w, &vals, &few);
            }
        }
    }
}

#[test]
fn index_ops_agree_at_widths_16_32_64_on_boundary_samples() {
    for w in [Width(16), Width(32), Width(64)] {
        let (wmin, wmax) = (w.min() as i64, w.max() as i64);
        // Variables may exceed W (reading them is then an index overflow).
        let mut vals = strong_sample(wmin, wmax, w.0 as u64);
        if w.0 < 64 {
            vals.extend([wmin - 1, wmax + 1, i64::MIN, i64::MAX]);
        }
        let half = 1i64 << (w.0 / 2);
        vals.extend([half, -half, half - 1, -half + 1]);
        vals.sort_unstable();
        vals.dedup();
        let few = [wmin, -1, 0, 1, wmax];
        let consts = [wmin, -1, 0, 1, 3, wmax];
        for op in binary_ops() {
            check_binary(op, DType::Index, w, &vals, &few, &consts);
        }
        check_unary(Op::Neg, None, DType::Index, w, &vals, &few);
        for to in DType::INTS {
            check_unary(Op::Cast, Some(to), DType::Index, w, &vals, &few);
        }
        // casts into index from the concrete dtypes, including values
        // that do not fit W
        for (dt, min, max) in [
            (DType::I32, i32::MIN as i64, i32::MAX as i64),
            (DType::I64, i64::MIN, i64::MAX),
        ] {
            let vals = strong_sample(min, max, 3);
            check_unary(Op::Cast, Some(DType::Index), dt, w, &vals, &[min, 0, max]);
        }
    }
}

#[test]
fn index_variables_and_constants_outside_the_width_are_overflow() {
    let w = Width(8);
    let mut g = Graph::new();
    let x = g.declare_var("x", DType::Index, -1000, 1000).unwrap();
    let x = g.var_node(x);
    let big = g.cnst(200, DType::Index);
    let one = g.cnst(1, DType::Index);
    let sum = g.mk(Op::Add, &[x, one]);
    let pts: Vec<Vec<i64>> = [-1000, -129, -128, 0, 127, 128, 1000]
        .iter()
        .map(|&v| vec![v])
        .collect();
    agree(&g, sum, w, &pts);
    let r = g.mk(Op::Add, &[x, big]);
    agree(&g, r, w, &pts);
    let r = g.mk(Op::Add, &[one, big]);
    agree(&g, r, w, &[vec![0]]);
    // the eval API reports the first undefined node and why
    let jit = CompiledEval::new(&g, &[sum], w).unwrap();
    assert_eq!(
        jit.eval(&[128]),
        Err(interp::Undefined {
            node: x,
            reason: engine::semantics::Ub::IndexOverflow
        })
    );
    assert_eq!(jit.eval(&[126]), Ok(vec![Val::Int(127)]));
}

#[test]
fn division_by_zero_and_min_by_minus_one_do_not_trap() {
    // If the generated code trapped, this test process would die (SIGFPE).
    for (dt, w) in [
        (DType::I64, Width(64)),
        (DType::Index, Width(64)),
        (DType::I32, Width(8)),
        (DType::Index, Width(8)),
    ] {
        let mut g = Graph::new();
        let (lo, hi) = dt.bounds();
        let x = g.declare_var("x", dt, lo, hi).unwrap();
        let y = g.declare_var("y", dt, lo, hi).unwrap();
        let (x, y) = (g.var_node(x), g.var_node(y));
        let inv = match dt {
            DType::Index => g.invalid(),
            _ => {
                let i = g.invalid();
                g.cast(dt, i)
            }
        };
        let min = match (dt, w.0) {
            (DType::Index, 8) => -128,
            (DType::I32, _) => i32::MIN as i64,
            _ => i64::MIN,
        };
        for op in [Op::Div, Op::Rem, Op::FloorDiv, Op::Mod, Op::CeilDiv] {
            for (l, r) in [(x, y), (inv, y), (x, inv)] {
                let root = g.mk(op, &[l, r]);
                // (i64::MIN, -1) is the hardware's trapping case whatever the
                // dtype; it is only fed where it lies in the dtype (the
                // environment of an i32 variable must fit i32).
                let pts: Vec<Vec<i64>> = [
                    (min, -1),
                    (lo, -1),
                    (lo, 0),
                    (5, 0),
                    (0, 0),
                    (min, 1),
                    (-7, 2),
                ]
                .iter()
                .map(|&(a, b)| vec![a, b])
                .collect();
                agree(&g, root, w, &pts);
            }
        }
    }
}

/// A small random DAG over a few variables (negative ranges included),
/// every node compared: the roots are all reachable nodes.
fn random_graph(seed: u64) -> (Graph, Vec<NodeId>) {
    let mut g = Graph::new();
    let mut r = rand_vals(seed, 400).into_iter().map(|v| v as u64);
    let mut next = move |n: u64| r.next().unwrap() % n;
    let mut ints = Vec::new();
    let mut bools = Vec::new();
    for (i, (lo, hi)) in [(-5, 5), (0, 7), (-3, 2)].iter().enumerate() {
        let v = g
            .declare_var(&format!("v{i}"), DType::Index, *lo, *hi)
            .unwrap();
        ints.push(g.var_node(v));
    }
    for k in [-2, 0, 1, 3, 8, 127] {
        ints.push(g.cnst(k, DType::Index));
    }
    ints.push(g.invalid());
    for _ in 0..30 {
        let pick = |n: &mut dyn FnMut(u64) -> u64, v: &Vec<NodeId>| v[n(v.len() as u64) as usize];
        let kind = next(10);
        if kind < 6 || bools.is_empty() {
            let ops = [
                Op::Add,
                Op::Sub,
                Op::Mul,
                Op::Min,
                Op::Max,
                Op::Div,
                Op::Rem,
                Op::FloorDiv,
                Op::Mod,
                Op::CeilDiv,
            ];
            let op = ops[next(ops.len() as u64) as usize];
            let (x, y) = (pick(&mut next, &ints), pick(&mut next, &ints));
            ints.push(g.mk(op, &[x, y]));
            let cmp = [Op::Lt, Op::Le, Op::Eq, Op::Ne][next(4) as usize];
            let (x, y) = (pick(&mut next, &ints), pick(&mut next, &ints));
            bools.push(g.mk(cmp, &[x, y]));
        } else if kind < 8 {
            let c = pick(&mut next, &bools);
            let (x, y) = (pick(&mut next, &ints), pick(&mut next, &ints));
            ints.push(g.mk(Op::Where, &[c, x, y]));
        } else {
            let op = [Op::And, Op::Or, Op::Xor, Op::Not][next(4) as usize];
            let x = pick(&mut next, &bools);
            let y = pick(&mut next, &bools);
            let src = if op == Op::Not { vec![x] } else { vec![x, y] };
            bools.push(g.mk(op, &src));
        }
    }
    let roots = g.reachable(&[*ints.last().unwrap(), *bools.last().unwrap()]);
    (g, roots)
}

#[test]
fn random_graphs_agree_node_by_node_on_every_point() {
    for seed in 0..40 {
        let (g, roots) = random_graph(seed);
        // Every reachable node as a root: a disagreement anywhere shows.
        let jit = CompiledEval::new(&g, &roots, Width(8)).unwrap();
        for v0 in -5..=5 {
            for v1 in 0..=7 {
                for v2 in -3..=2 {
                    let env = [v0, v1, v2];
                    let env128 = [v0 as i128, v1 as i128, v2 as i128];
                    let want = interp::eval(&g, &roots, &env128, Width(8));
                    assert_eq!(jit.eval(&env), want, "seed {seed} env {env:?}");
                }
            }
        }
        // Each node on its own, so undefined nodes do not mask the others.
        for &r in roots.iter().rev().take(8) {
            let jit = CompiledEval::new(&g, &[r], Width(16)).unwrap();
            for v0 in -5..=5 {
                for v1 in 0..=7 {
                    let env = [v0, v1, -1];
                    let env128 = [v0 as i128, v1 as i128, -1];
                    assert_eq!(jit.eval(&env), interp::eval(&g, &[r], &env128, Width(16)));
                }
            }
        }
    }
}
