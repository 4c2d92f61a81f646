// tileproof finding (wrong-value) against MLIR (iree-base-compiler==3.13.0).
// RUN: mlir-opt --pass-pipeline='builtin.module(canonicalize)' %s
//   or: iree-opt --pass-pipeline='builtin.module(canonicalize)' %s
// Variables (ny: the affine.for tagged tp_var = 0) in this order are each affine.apply's operands;
// each result goes to @use.
// At ny = -2, the input computes [0] and the module after the pass computes another value (MLIR's own evaluation; the Python reproducer beside this file prints both).
#map = affine_map<(d0) -> ((d0 * -4611686018427387903) mod 2)>
module {
  func.func private @use(index)
  func.func @f() {
    affine.for %arg0 = -20 to 1 {
      %0 = affine.apply #map(%arg0)
      func.call @use(%0) : (index) -> ()
    } {tp_var = 0 : i64}
    return
  }
}
