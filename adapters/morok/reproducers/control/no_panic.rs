// A control: the adapter's reproducer for a case where Morok is right (its answer,
// its bounds, no panic). It must pass; run-reproducers.sh checks that it does, so
// that a reproducer that fails shows a bug, not a reproducer that cannot pass.
//! tileproof reproducer: peer-crash in Morok 0.1.0-alpha.2's graph_rewrite(symbolic(), ...).
//! Input: where(r0 < 5, r0 + 0, invalid)
//! Variables: r0 in [0, 7] (RANGE(8), axis 0).
//! Morok panics on it: its simplifier, or its range analysis (vmin/vmax) of a node, which
//! tileproof asked for too. The test fails while either panics; it passes once Morok is fixed.
//! It needs only morok-ir, morok-dtype, morok-schedule, morok-codegen and morok-runtime
//! 0.1.0-alpha.2 (and clang on PATH, for Morok's C backend): paste it into a test module
//! of a crate that depends on them, or run `cargo test` in tileproof's adapters/morok/reproducers.
//! Written by tileproof's Morok adapter (adapters/morok).

#[test]
fn tileproof_peer_crash_da346252ae0784a5() {
    #[allow(unused_imports)]
    use morok_dtype::DType;
    #[allow(unused_imports)]
    use morok_ir::{ConstValue, UOp};
    use morok_schedule::graph_rewrite;

    // The input, built with Morok's API.
    let n0 = UOp::range_const(8, 0); // r0
    let n1 = UOp::index_const(5);
    let n2 = n0.try_cmplt(&n1).unwrap();
    let n3 = UOp::index_const(0);
    let n4 = n0.try_add(&n3).unwrap();
    let n5 = UOp::invalid_marker();
    let n6 = UOp::try_where(n2.clone(), n4.clone(), n5.clone()).unwrap();
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
