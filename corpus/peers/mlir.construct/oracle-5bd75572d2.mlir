// tileproof finding (wrong-value) against MLIR (iree-base-compiler==3.13.0).
// RUN: mlir-opt --pass-pipeline='builtin.module(canonicalize)' %s
//   or: iree-opt --pass-pipeline='builtin.module(canonicalize)' %s
// MLIR's parser builds each map with the operators that fold as they build (`mlir-opt %s` alone prints the folded map).
// At x = -1 (the constants), the input computes [4611686018427387903]; after the pass each @use takes the folded map's value there (the Python reproducer beside this file prints both).
func.func private @use(index)
func.func @f() {
  %x0 = arith.constant -1 : index  // x
  %r0 = affine.apply affine_map<(d0) -> ((((d0 + 1) + 9223372036854775807) floordiv 2))>(%x0)
  func.call @use(%r0) : (index) -> ()
  return
}
