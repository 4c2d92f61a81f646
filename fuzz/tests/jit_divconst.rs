//! Division by a constant (the JIT's multiply-high and shift lowering,
//! `fuzz::divconst`) agrees with the interpreter and with the hardware
//! division at the dividends where a wrong lowering shows: the ends of the
//! dtype, 0 and -1, multiples of the divisor and their neighbours; for
//! every divisor in -300..=300 and every power of two (and its negation)
//! up to 2^62 that the dtype holds, for all five division ops, at every
//! width the JIT supports and in `i32` and `i64`.

use engine::dtype::Width;
use engine::interp;
use engine::ir::{DType, Graph, NodeId, Op};
use fuzz::jit::CompiledEval;
use fuzz::oracle::{check_interp, CompiledOracle, OracleConfig};

const OPS: [Op; 5] = [Op::Div, Op::Rem, Op::FloorDiv, Op::Mod, Op::CeilDiv];

/// (dtype, width): `index` at each width, `i32` and `i64` at width 64.
fn models() -> Vec<(DType, Width)> {
    let mut v: Vec<(DType, Width)> = Width::ALL.iter().map(|&w| (DType::Index, w)).collect();
    v.extend([(DType::I32, Width::W64), (DType::I64, Width::W64)]);
    v
}

fn bounds(dt: DType, w: Width) -> (i64, i64) {
    let (lo, hi) = w.dtype_bounds(dt);
    (lo as i64, hi as i64)
}

/// The divisors the dtype holds.
fn divisors(min: i64, max: i64) -> Vec<i64> {
    let mut d: Vec<i64> = (-300..=300).collect();
    for k in 0..=62 {
        d.extend([1i64 << k, -(1i64 << k)]);
    }
    d.retain(|&c| (min..=max).contains(&c));
    d.sort_unstable();
    d.dedup();
    d
}

/// Dividends around the ends, 0, and multiples of `c` (in range).
fn dividends(c: i64, min: i64, max: i64) -> Vec<i64> {
    let (lo, hi, c) = (min as i128, max as i128, c as i128);
    let mut v: Vec<i128> = vec![lo, lo + 1, lo + 2, hi, hi - 1, hi - 2, -2, -1, 0, 1, 2];
    if c != 0 {
        for q in [lo / c, hi / c, 1, -1, 2, -2, 3, -3] {
            let m = q * c;
            v.extend([m - 1, m, m + 1]);
        }
    }
    v.retain(|x| (lo..=hi).contains(x));
    v.sort_unstable();
    v.dedup();
    v.into_iter().map(|x| x as i64).collect()
}

#[test]
fn constant_divisions_agree_with_the_interpreter_at_the_edges_of_every_dividend() {
    let mut checked = 0usize;
    for (dt, w) in models() {
        let (min, max) = bounds(dt, w);
        for c in divisors(min, max) {
            let mut g = Graph::new();
            let v = g.declare_var("a", dt, min, max).unwrap();
            let a = g.var_node(v);
            let k = g.cnst(c, dt);
            let roots: Vec<NodeId> = OPS.iter().map(|&op| g.mk(op, &[a, k])).collect();
            let jit = CompiledEval::new(&g, &roots, w).expect("compiles");
            for x in dividends(c, min, max) {
                let want = interp::eval(&g, &roots, &[x as i128], w);
                assert_eq!(jit.eval(&[x]), want, "{dt:?} at width {w}: {x} by {c}");
                checked += 1;
            }
        }
    }
    assert!(checked > 50_000, "only {checked} points");
}

/// The oracle's loops know each variable's bounds, so a dividend known
/// non-negative takes the unsigned lowering and bounds decide checks:
/// `(x + off) op c` against `(x + off) op d` with `d` the variable
/// `[c, c]` (a register, so the hardware division), over every `x` of a
/// window, with offsets putting the dividend at the dtype's ends, around
/// 0, at 0 and above, and around the last multiple of `c` below MAX.
#[test]
fn constant_divisions_in_the_oracle_agree_with_the_hardware_division_on_windows_of_dividends() {
    let mut walked = 0u64;
    for (dt, w) in models() {
        let (min, max) = bounds(dt, w);
        let half = 20i64;
        for c in divisors(min, max) {
            let mut g = Graph::new();
            // Declared first: `x`, the last variable, is the row's.
            let dv = g.declare_var("d", dt, c, c).unwrap();
            let xv = g.declare_var("x", dt, -half, half).unwrap();
            let (d, x) = (g.var_node(dv), g.var_node(xv));
            let k = g.cnst(c, dt);
            let mut offsets = vec![0, half, min + half, max - half];
            if c != 0 {
                offsets.push((max / c) * c);
            }
            offsets.retain(|&o| o.checked_sub(half).is_some_and(|l| l >= min) && o <= max - half);
            let (mut src, mut tgt) = (Vec::new(), Vec::new());
            for off in offsets {
                let o = g.cnst(off, dt);
                let y = g.mk(Op::Add, &[x, o]);
                for op in OPS {
                    src.push(g.mk(op, &[y, k]));
                    tgt.push(g.mk(op, &[y, d]));
                }
            }
            let cfg = OracleConfig {
                parallel: false,
                ..OracleConfig::at_width(w)
            };
            let oracle = CompiledOracle::new(&g, &src, &tgt, &cfg).expect("compiles");
            let jit = oracle.run(&g);
            let int = check_interp(&g, &src, &tgt, &cfg).expect("runs");
            assert!(jit.refines(), "{dt:?} at width {w}, by {c}: {jit}");
            assert_eq!(jit, int, "{dt:?} at width {w}, by {c}");
            walked += jit.points;
        }
    }
    assert!(walked > 10_000, "only {walked} points");
}
