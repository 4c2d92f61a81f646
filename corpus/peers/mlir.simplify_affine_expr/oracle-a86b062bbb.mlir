// tileproof finding (wrong-value) against MLIR (iree-base-compiler==3.13.0).
// RUN: mlir-opt --pass-pipeline='builtin.module(func.func(affine-simplify-structures))' %s
//   or: iree-opt --pass-pipeline='builtin.module(func.func(affine-simplify-structures))' %s
// affine-simplify-structures simplifies each map with simplifyAffineExpr, then folds the applies.
// At x = 9223372036854775723 (the constants), the input computes [439208192231179796]; after the pass each @use takes the folded map's value there (the Python reproducer beside this file prints both).
func.func private @use(index)
func.func @f() {
  %x0 = arith.constant 9223372036854775723 : index  // x
  %r0 = affine.apply affine_map<(d0) -> (((d0 + (d0 mod 21)) floordiv 21))>(%x0)
  func.call @use(%r0) : (index) -> ()
  return
}
