// tileproof finding (wrong-value) against MLIR (iree-base-compiler==3.13.0).
// RUN: mlir-opt --pass-pipeline='builtin.module(func.func(affine-simplify-structures))' %s
//   or: iree-opt --pass-pipeline='builtin.module(func.func(affine-simplify-structures))' %s
// Variables (x: the affine.for tagged tp_var = 0) in this order are each affine.apply's operands;
// each result goes to @use.
// At x = -288230376151711739, the input computes [19] and the module after the pass computes another value (MLIR's own evaluation; the Python reproducer beside this file prints both).
#map = affine_map<(d0) -> ((d0 * 32) mod 161)>
module {
  func.func private @use(index)
  func.func @f() {
    affine.for %arg0 = -576460752303423483 to -288230376151711738 {
      %0 = affine.apply #map(%arg0)
      func.call @use(%0) : (index) -> ()
    } {tp_var = 0 : i64}
    return
  }
}
