//! Compiled code is freed when its owner is dropped, so long fuzz campaigns
//! do not grow. Alone in its own test binary: resident memory is a
//! process-wide measure, and concurrently running tests would disturb it.

use engine::dtype::Width;
use engine::ir::{DType, Graph, Op};
use fuzz::jit::CompiledEval;
use fuzz::oracle::{CompiledOracle, OracleConfig};

fn rss_kb() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = s.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4)
}

#[test]
fn compiled_oracles_and_evaluators_free_their_code() {
    let mut g = Graph::new();
    let x = g.declare_var("x", DType::Index, 0, 3).unwrap();
    let x = g.var_node(x);
    let one = g.cnst(1, DType::Index);
    let s = g.mk(Op::Add, &[x, one]);
    let cfg = OracleConfig::at_width(Width(32));
    let run = |n: usize| {
        for _ in 0..n {
            let o = CompiledOracle::new(&g, &[s], &[s], &cfg).unwrap();
            assert!(o.run(&g).refines());
            let e = CompiledEval::new(&g, &[s], Width(32)).unwrap();
            assert!(e.eval(&[1]).is_ok());
        }
    };
    run(200); // warm up allocator pools and the ISA
    let Some(before) = rss_kb() else { return };
    run(1500);
    let after = rss_kb().unwrap();
    eprintln!("resident memory: {before} kB -> {after} kB");
    // Leaking keeps at least one code page per compiled object (> 10 MB).
    assert!(
        after.saturating_sub(before) < 4_000,
        "resident memory grew by {} kB",
        after - before
    );
}
