//! tileproof reproducer: peer-crash in Morok 0.1.0-alpha.2's index-dtype lowering (pm_lower_index_dtype).
//! Input: 0 / x / -1
//! Variables: x in [-1, 0] (DEFINE_VAR).
//! Morok panics on it: its simplifier, or its range analysis (vmin/vmax) of a node, which
//! tileproof asked for too. The test fails while either panics; it passes once Morok is fixed.
//! It needs only morok-ir, morok-dtype, morok-schedule, morok-codegen and morok-runtime
//! 0.1.0-alpha.2 (and clang on PATH, for Morok's C backend): paste it into a test module
//! of a crate that depends on them, or run `cargo test` in tileproof's adapters/morok/reproducers.
//! Written by tileproof's Morok adapter (adapters/morok).

#[test]
fn tileproof_peer_crash_b41f271baf8f4e0d() {
    #[allow(unused_imports)]
    use morok_dtype::DType;
    #[allow(unused_imports)]
    use morok_ir::{ConstValue, UOp};
    use morok_schedule::graph_rewrite;

    // The input, built with Morok's API.
    let n0 = UOp::index_const(0);
    let n1 = UOp::define_var("x".to_string(), -1, 0); // x
    let n2 = n0.try_div(&n1).unwrap();
    let n3 = UOp::index_const(-1);
    let n4 = n2.try_div(&n3).unwrap();
    let input = vec![n4.clone()];
    for e in &input {
        println!("input:\n{}", e.tree());
    }
    // Morok's index-dtype lowering (pm_lower_index_dtype).
    let output: Vec<_> = match graph_rewrite(&morok_schedule::symbolic::pm_lower_index_dtype(), UOp::sink(input.clone()), &mut ()).op() { morok_ir::Op::Sink { sources } => sources.iter().cloned().collect(), other => panic!("not a SINK: {}", other.as_ref()) };
    for e in &output {
        println!("Morok's answer:\n{}", e.tree());
    }
    // Morok's range analysis of every node of the input.
    for node in input.iter().flat_map(|e| e.toposort()) {
        println!("[{:?}, {:?}] for {}", node.vmin(), node.vmax(), node.op().as_ref());
    }
}
