// tileproof finding (wrong-value) against MLIR (iree-base-compiler==3.13.0).
// RUN: mlir-opt --pass-pipeline='builtin.module(func.func(affine-simplify-structures))' %s
//   or: iree-opt --pass-pipeline='builtin.module(func.func(affine-simplify-structures))' %s
// affine-simplify-structures simplifies each map with simplifyAffineExpr, then folds the applies.
// At y = -1, z = -9223372036854775808 (the constants), the input computes [-4611686018427387904]; after the pass each @use takes the folded map's value there (the Python reproducer beside this file prints both).
func.func private @use(index)
func.func @f() {
  %x0 = arith.constant -1 : index  // y
  %x1 = arith.constant -9223372036854775808 : index  // z
  %r0 = affine.apply affine_map<(d0, d1) -> ((((d0 + 2) + d1) floordiv 2))>(%x0, %x1)
  func.call @use(%r0) : (index) -> ()
  return
}
