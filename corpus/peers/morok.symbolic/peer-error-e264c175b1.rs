//! tileproof reproducer: peer-crash in Morok 0.1.0-alpha.2's graph_rewrite(symbolic(), ...).
//! Input: x % -9223372036854775808
//! Variables: x in [-1, 0] (DEFINE_VAR).
//! Morok panics on it: its simplifier, or its range analysis (vmin/vmax) of a node, which
//! tileproof asked for too. The test fails while either panics; it passes once Morok is fixed.
//! It needs only morok-ir, morok-dtype, morok-schedule, morok-codegen and morok-runtime
//! 0.1.0-alpha.2 (and clang on PATH, for Morok's C backend): paste it into a test module
//! of a crate that depends on them, or run `cargo test` in tileproof's adapters/morok/reproducers.
//! Written by tileproof's Morok adapter (adapters/morok).

#[test]
fn tileproof_peer_crash_72fa310846c686c4() {
    #[allow(unused_imports)]
    use morok_dtype::DType;
    #[allow(unused_imports)]
    use morok_ir::{ConstValue, UOp};
    use morok_schedule::graph_rewrite;

    // The input, built with Morok's API.
    let n0 = UOp::define_var("x".to_string(), -1, 0); // x
    let n1 = UOp::index_const(i64::MIN);
    let n2 = n0.try_mod(&n1).unwrap();
    let input = vec![n2.clone()];
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
