//! Large compiled functions run whatever stack their caller has: the
//! single-pass register allocator gives a long function a frame of many
//! spill slots (16 MB for a 10^6-division chain), which overflowed the
//! thread's stack (SIGSEGV) before the call switched to a larger one.

use engine::dtype::Width;
use engine::interp::Val;
use engine::ir::{DType, Graph, NodeId, Op};
use fuzz::jit::{CompiledEval, LARGE_FUNCTION};
use fuzz::oracle::{check_jit, OracleConfig};

/// `x / x / ... / x` with `n` divisions, `x` in [1, 3].
fn division_chain(n: usize) -> (Graph, NodeId) {
    let mut g = Graph::new();
    let x = g.declare_var("x", DType::Index, 1, 3).unwrap();
    let x = g.var_node(x);
    let mut e = x;
    for _ in 0..n {
        e = g.mk(Op::Div, &[e, x]);
    }
    (g, e)
}

/// Runs `f` in a thread pool whose threads have a 256 KiB stack: far less
/// than the frame of the functions below, so the test crashes without the
/// switch to a larger stack (the oracle runs its chunks on the pool).
fn on_small_stacks(f: impl FnOnce() + Send) {
    rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .stack_size(256 * 1024)
        .build()
        .unwrap()
        .install(f);
}

#[test]
fn a_large_evaluator_runs_on_a_thread_with_a_small_stack() {
    on_small_stacks(|| {
        let (g, e) = division_chain(LARGE_FUNCTION);
        let f = CompiledEval::new(&g, &[e], Width(64)).unwrap();
        // x / x = 1, then 1 / x = 0 for x > 1 and 1 for x = 1.
        assert_eq!(f.eval(&[1]).unwrap(), vec![Val::Int(1)]);
        assert_eq!(f.eval(&[3]).unwrap(), vec![Val::Int(0)]);
    });
}

#[test]
fn a_large_oracle_runs_on_a_thread_with_a_small_stack() {
    on_small_stacks(|| {
        let (mut g, e) = division_chain(LARGE_FUNCTION);
        // The same values: 1 at x = 1, else 0.
        let x = g.var_node(0);
        let one = g.cnst(1, DType::Index);
        let t = g.mk(Op::Div, &[one, x]);
        let r = check_jit(&g, &[e], &[t], &OracleConfig::at_width(Width(64))).unwrap();
        assert!(r.refines());
    });
}
