//! Points per second of the JIT oracle versus the interpreter-based
//! comparison, on a gated 3-variable tiled index (2^20 points).
//!
//!     cargo run --release -p tileproof-fuzz --example oracle_bench

use engine::dtype::Width;
use engine::ir::{DType, Graph, NodeId, Op};
use fuzz::oracle::{check_interp, CompiledOracle, OracleConfig};
use std::time::Instant;

fn main() {
    let mut g = Graph::new();
    let mut var = |name: &str, hi: i64| {
        let v = g.declare_var(name, DType::Index, 0, hi).unwrap();
        g.var_node(v)
    };
    let (r0, r1, r2) = (var("r0", 255), var("r1", 63), var("r2", 63));
    let k = |g: &mut Graph, v: i64| g.cnst(v, DType::Index);
    let bin = |g: &mut Graph, op: Op, a: NodeId, b: NodeId| g.mk(op, &[a, b]);
    // source: where(r2 < 60, ((r0*64 + r1) // 16 * 16 + (r0*64 + r1) mod 16) * 64 + r2, invalid)
    let c64 = k(&mut g, 64);
    let c16 = k(&mut g, 16);
    let c60 = k(&mut g, 60);
    let c4096 = k(&mut g, 4096);
    let t0 = bin(&mut g, Op::Mul, r0, c64);
    let lin = bin(&mut g, Op::Add, t0, r1);
    let q = bin(&mut g, Op::FloorDiv, lin, c16);
    let q16 = bin(&mut g, Op::Mul, q, c16);
    let m = bin(&mut g, Op::Mod, lin, c16);
    let re = bin(&mut g, Op::Add, q16, m);
    let re64 = bin(&mut g, Op::Mul, re, c64);
    let full = bin(&mut g, Op::Add, re64, r2);
    let gate = bin(&mut g, Op::Lt, r2, c60);
    let inv = g.invalid();
    let src = g.mk(Op::Where, &[gate, full, inv]);
    // target: where(r2 < 60, r0*4096 + r1*64 + r2, invalid)
    let a = bin(&mut g, Op::Mul, r0, c4096);
    let b = bin(&mut g, Op::Mul, r1, c64);
    let ab = bin(&mut g, Op::Add, a, b);
    let abc = bin(&mut g, Op::Add, ab, r2);
    let tgt = g.mk(Op::Where, &[gate, abc, inv]);

    let threads = rayon::current_num_threads();
    println!("domain: 256 x 64 x 64 = 1048576 points, width 32, {threads} rayon threads");
    for parallel in [false, true] {
        let cfg = OracleConfig {
            parallel,
            ..OracleConfig::at_width(Width(32))
        };
        let t = Instant::now();
        let oracle = CompiledOracle::new(&g, &[src], &[tgt], &cfg).unwrap();
        let compile = t.elapsed();
        let t = Instant::now();
        let rep = oracle.run(&g);
        let jit = t.elapsed();
        assert!(rep.refines());
        let t = Instant::now();
        let irep = check_interp(&g, &[src], &[tgt], &cfg).unwrap();
        let interp = t.elapsed();
        assert_eq!(rep, irep);
        let pps = |d: std::time::Duration| rep.points as f64 / d.as_secs_f64();
        println!(
            "{}: JIT {:.3e} points/s (run {:.1} ms, compile {:.2} ms), interpreter {:.3e} points/s ({:.0} ms), speed-up {:.0}x",
            if parallel { "parallel" } else { "1 thread" },
            pps(jit),
            jit.as_secs_f64() * 1e3,
            compile.as_secs_f64() * 1e3,
            pps(interp),
            interp.as_secs_f64() * 1e3,
            interp.as_secs_f64() / jit.as_secs_f64()
        );
    }
}
