// tileproof finding (wrong-value) against MLIR (iree-base-compiler==3.13.0).
// RUN: mlir-opt --pass-pipeline='builtin.module(canonicalize)' %s
//   or: iree-opt --pass-pipeline='builtin.module(canonicalize)' %s
// Variables (y: the affine.for tagged tp_var = 0; z: the affine.for tagged tp_var = 1) in this order are each affine.apply's operands;
// each result goes to @use.
// At y = -1, z = -9223372036854775808, the input computes [-4611686018427387904] and the module after the pass computes another value (MLIR's own evaluation; the Python reproducer beside this file prints both).
#map = affine_map<(d0, d1) -> ((d0 + d1) floordiv 2 + 1)>
module {
  func.func private @use(index)
  func.func @f() {
    affine.for %arg0 = -1 to 0 {
      affine.for %arg1 = -9223372036854775808 to -9223372036854775807 {
        %0 = affine.apply #map(%arg0, %arg1)
        func.call @use(%0) : (index) -> ()
      } {tp_var = 1 : i64}
    } {tp_var = 0 : i64}
    return
  }
}
