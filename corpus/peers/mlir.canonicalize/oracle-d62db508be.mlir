// tileproof finding (wrong-value) against MLIR (iree-base-compiler==3.13.0).
// RUN: mlir-opt --pass-pipeline='builtin.module(canonicalize)' %s
//   or: iree-opt --pass-pipeline='builtin.module(canonicalize)' %s
// Variables (a: the affine.for tagged tp_var = 0; b: the affine.for tagged tp_var = 1) in this order are each affine.apply's operands;
// each result goes to @use.
// At a = -1, b = 0, the input computes [-27] and the module after the pass computes another value (MLIR's own evaluation; the Python reproducer beside this file prints both).
#map = affine_map<(d0, d1) -> ((d0 * 160 + d1 * 5 - 1) floordiv 6)>
module {
  func.func private @use(index)
  func.func @f() {
    affine.for %arg0 = -576460752303423488 to 0 {
      affine.for %arg1 = 0 to 32 {
        %0 = affine.apply #map(%arg0, %arg1)
        func.call @use(%0) : (index) -> ()
      } {tp_var = 1 : i64}
    } {tp_var = 0 : i64}
    return
  }
}
