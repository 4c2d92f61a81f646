//! tileproof reproducer: peer-crash in Morok 0.1.0-alpha.2's graph_rewrite(symbolic_simple(), ...).
//! Input: where(true, invalid, invalid)
//! Variables: .
//! Morok panics on it: its simplifier, or its range analysis (vmin/vmax) of a node, which
//! tileproof asked for too. The test fails while either panics; it passes once Morok is fixed.
//! It needs only morok-ir, morok-dtype, morok-schedule, morok-codegen and morok-runtime
//! 0.1.0-alpha.2 (and clang on PATH, for Morok's C backend): paste it into a test module
//! of a crate that depends on them, or run `cargo test` in tileproof's adapters/morok/reproducers.
//! Written by tileproof's Morok adapter (adapters/morok).

#[test]
fn tileproof_peer_crash_4c651c233943d298() {
    #[allow(unused_imports)]
    use morok_dtype::DType;
    #[allow(unused_imports)]
    use morok_ir::{ConstValue, UOp};
    use morok_schedule::graph_rewrite;

    // The input, built with Morok's API.
    let n0 = UOp::const_(DType::Bool, ConstValue::Bool(true));
    let n1 = UOp::invalid_marker();
    let n2 = UOp::try_where(n0.clone(), n1.clone(), n1.clone()).unwrap();
    let input = vec![n2.clone()];
    for e in &input {
        println!("input:\n{}", e.tree());
    }
    // Morok's graph_rewrite(symbolic_simple(), ...).
    let output: Vec<_> = input.iter().map(|e| graph_rewrite(morok_schedule::symbolic::symbolic_simple(), e.clone(), &mut ())).collect();
    for e in &output {
        println!("Morok's answer:\n{}", e.tree());
    }
    // Morok's range analysis of every node of the input.
    for node in input.iter().flat_map(|e| e.toposort()) {
        println!("[{:?}, {:?}] for {}", node.vmin(), node.vmax(), node.op().as_ref());
    }
}
