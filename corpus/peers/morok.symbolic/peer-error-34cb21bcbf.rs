//! tileproof reproducer: peer-crash in Morok 0.1.0-alpha.2's graph_rewrite(symbolic(), ...).
//! Input: -1 / where(r0 != 0, 0, invalid)
//! Variables: r0 in [-1, 0] (DEFINE_VAR).
//! Morok panics on it: its simplifier, or its range analysis (vmin/vmax) of a node, which
//! tileproof asked for too. The test fails while either panics; it passes once Morok is fixed.
//! It needs only morok-ir, morok-dtype, morok-schedule, morok-codegen and morok-runtime
//! 0.1.0-alpha.2 (and clang on PATH, for Morok's C backend): paste it into a test module
//! of a crate that depends on them, or run `cargo test` in tileproof's adapters/morok/reproducers.
//! Written by tileproof's Morok adapter (adapters/morok).

#[test]
fn tileproof_peer_crash_737d516bff2664b8() {
    #[allow(unused_imports)]
    use morok_dtype::DType;
    #[allow(unused_imports)]
    use morok_ir::{ConstValue, UOp};
    use morok_schedule::graph_rewrite;

    // The input, built with Morok's API.
    let n0 = UOp::index_const(-1);
    let n1 = UOp::define_var("r0".to_string(), -1, 0); // r0
    let n2 = UOp::index_const(0);
    let n3 = n1.try_cmpne(&n2).unwrap();
    let n4 = UOp::invalid_marker();
    let n5 = UOp::try_where(n3.clone(), n2.clone(), n4.clone()).unwrap();
    let n6 = n0.try_div(&n5).unwrap();
    let input = vec![n6.clone()];
    for e in &input {
        println!("input:\n{}", e.tree());
    }
    // Morok's graph_rewrite(symbolic(), ...).
    let output: Vec<_> = input.iter().map(|e| graph_rewrite(morok_schedule::symbolic::symbolic(), e.clone(), &mut ())).collect();
    for e in &output {
        println!("Morok's answer:\n{}", e.tree());
    }
    // Morok's range analysis of every node of the input.
    for node in input.iter().flat_map(|e| e.toposort()) {
        println!("[{:?}, {:?}] for {}", node.vmin(), node.vmax(), node.op().as_ref());
    }
}
