#!/usr/bin/env python3
"""The experiments behind the MLIR adapter's profile (quoted in
docs/peers/mlir.md).

    .venv-peers/bin/python adapters/mlir_experiments.py

Each function prints what MLIR (the upstream Python bindings of the pinned
iree-base-compiler) makes of a few inputs.
"""

from importlib.metadata import version

from iree.compiler import ir, passmanager

MIN, MAX = -(1 << 63), (1 << 63) - 1

CTX = ir.Context()
CTX.enable_multithreading(False)
CTX.__enter__()

d0, d1 = ir.AffineDimExpr.get(0), ir.AffineDimExpr.get(1)
s0 = ir.AffineSymbolExpr.get(0)
C = ir.AffineConstantExpr.get
ADD, MUL = ir.AffineAddExpr.get, ir.AffineMulExpr.get
FDIV, CDIV, MOD = ir.AffineFloorDivExpr.get, ir.AffineCeilDivExpr.get, ir.AffineModExpr.get


def canon(text, pipeline="builtin.module(canonicalize)"):
    """The module after the pass, its functions' bodies only."""
    m = ir.Module.parse("func.func private @use(index)\n" + text)
    passmanager.PassManager.parse(pipeline).run(m.operation)
    return " | ".join(line.strip() for line in str(m).splitlines()
                      if line.strip() and not line.strip().startswith(("module", "func.func private", "}", "return")))


def apply_fold(map_text, *operands):
    """`affine.apply` of the map to `arith.constant` operands, canonicalized."""
    body = "".join(f"%c{i} = arith.constant {v} : index\n" for i, v in enumerate(operands))
    ops = ", ".join(f"%c{i}" for i in range(len(operands)))
    return canon(f"func.func @f() {{\n{body}%r = affine.apply affine_map<{map_text}>({ops})\n"
                 "func.call @use(%r) : (index) -> ()\nreturn\n}")


def in_loops(map_text, bounds, args=0, pipeline="builtin.module(canonicalize)"):
    """`affine.apply` of the map inside `affine.for` loops with these
    constant bounds (half-open), then `args` function arguments."""
    params = ", ".join(f"%a{i}: index" for i in range(args))
    text = f"func.func @f({params}) {{\n"
    for i, (lo, hi) in enumerate(bounds):
        text += f"affine.for %i{i} = {lo} to {hi} {{\n"
    ops = ", ".join([f"%i{i}" for i in range(len(bounds))] + [f"%a{i}" for i in range(args)])
    text += f"%r = affine.apply affine_map<{map_text}>({ops})\nfunc.call @use(%r) : (index) -> ()\n"
    text += "}\n" * len(bounds) + "return\n}"
    return canon(text, pipeline)


def api():
    print("# iree-base-compiler", version("iree-base-compiler"))
    print("## the API")
    print("AffineExpr methods:", [n for n in dir(ir.AffineExpr) if not n.startswith("_")])
    print("simplify_affine_expr:", ir.AffineExpr.simplify_affine_expr.__doc__.strip().splitlines()[0])
    for p in ["builtin.module(canonicalize)", "builtin.module(func.func(affine-simplify-structures))",
              "builtin.module(affine-simplify-structures)"]:
        try:
            passmanager.PassManager.parse(p)
            print(f"pass pipeline {p}: parses")
        except Exception as e:  # noqa: BLE001 - what it says is the observation
            print(f"pass pipeline {p}: {str(e).splitlines()[0]}")


def division_families():
    print("## division families: construction folds constants (floor, ceil)")
    for a, b in [(-7, 2), (7, 2), (7, -2), (-7, -2)]:
        print(f"{a} floordiv {b} -> {FDIV(C(a), C(b))};  {a} ceildiv {b} -> {CDIV(C(a), C(b))};  "
              f"{a} mod {b} -> {MOD(C(a), C(b))}   (Python: {a // b}, {-(-a // b)}, {a % b})")
    print("## the same through affine.apply's folder (arith.constant operands, canonicalize)")
    for a, b in [(-7, 2), (7, -2)]:
        print(f"a={a}, b={b}: (d0 floordiv {b}, d0 ceildiv {b}, d0 mod {b}) ->",
              apply_fold(f"(d0) -> (d0 floordiv {b})", a), "/", apply_fold(f"(d0) -> (d0 ceildiv {b})", a), "/",
              apply_fold(f"(d0) -> (d0 mod {b})", a))
    print("## division by zero: not folded")
    print("7 floordiv 0 ->", FDIV(C(7), C(0)), "; d0 mod 0 ->", MOD(d0, C(0)),
          "; apply (d0) -> (d0 floordiv 0) at 7:", apply_fold("(d0) -> (d0 floordiv 0)", 7))


def language():
    print("## the language: what the C API builds and what the passes take")
    print("d0 * d1 builds", MUL(d0, d1), "; d0 floordiv d1 builds", FDIV(d0, d1), "; d0 * s0 builds", MUL(d0, s0))
    print("(d0 * 4 + 3) floordiv 4 builds", FDIV(ADD(MUL(d0, C(4)), C(3)), C(4)), "(construction simplifies)")
    print("simplify_affine_expr(d0 * d1 + d0 * d1, 2, 0) ->",
          ir.AffineExpr.simplify_affine_expr(ADD(MUL(d0, d1), MUL(d0, d1)), 2, 0))
    print("simplify_affine_expr(d0 mod -2, 1, 0) ->",
          ir.AffineExpr.simplify_affine_expr(MOD(d0, C(-2)), 1, 0))
    try:
        print("affine.apply (d0, d1) -> (d0 * d1) in loops:", in_loops("(d0, d1) -> (d0 * d1)", [(0, 4), (0, 4)]))
    except Exception as e:  # noqa: BLE001
        print("affine.apply (d0, d1) -> (d0 * d1):", str(e).splitlines()[1].strip())
    try:
        print("affine.apply (d0) -> (d0 mod -2) at -7:", apply_fold("(d0) -> (d0 mod -2)", -7))
    except Exception as e:  # noqa: BLE001
        print("affine.apply (d0) -> (d0 mod -2):", str(e).splitlines()[1].strip())


def integers():
    print("## the integer model: 64-bit index, folding at the edges")
    print(f"2^62 * 4 -> {MUL(C(1 << 62), C(4))};  MAX + 1 -> {ADD(C(MAX), C(1))};  MIN * -1 -> {MUL(C(MIN), C(-1))};  "
          f"MIN + -1 -> {ADD(C(MIN), C(-1))};  MIN floordiv -1 -> {FDIV(C(MIN), C(-1))}")
    print("simplify_affine_expr(MAX + 1) ->", ir.AffineExpr.simplify_affine_expr(ADD(C(MAX), C(1)), 0, 0),
          "; simplify_affine_expr(d0 * 2^62 * 4) ->",
          ir.AffineExpr.simplify_affine_expr(MUL(MUL(d0, C(1 << 62)), C(4)), 1, 0))
    print("apply (d0) -> (d0 * 4) at 2^62:", apply_fold("(d0) -> (d0 * 4)", 1 << 62))
    print("apply (d0) -> (d0 + 1) at MAX:", apply_fold("(d0) -> (d0 + 1)", MAX))
    print("apply (d0) -> ((d0 * -1 - 1) floordiv 2) at MIN:", apply_fold("(d0) -> ((d0 * -1 - 1) floordiv 2)", MIN))
    try:
        canon("func.func @f() {\n%c = arith.constant 9223372036854775808 : index\nfunc.call @use(%c) : (index) -> ()\n"
              "return\n}")
        print("arith.constant 2^63 : index parses")
    except Exception as e:  # noqa: BLE001
        print("arith.constant 2^63 : index:", str(e).splitlines()[1].strip())


def ranges():
    print("## ranges: affine.for's constant bounds reach the folder, a function argument has none")
    print("d0 floordiv 8, d0 in affine.for 0 to 8:", in_loops("(d0) -> (d0 floordiv 8)", [(0, 8)]))
    print("d0 floordiv 8, d0 in affine.for 0 to 9:", in_loops("(d0) -> (d0 floordiv 8)", [(0, 9)]))
    print("d0 mod 8, d0 in affine.for -3 to 5:", in_loops("(d0) -> (d0 mod 8)", [(-3, 5)]))
    print("d0 floordiv 8, d0 a function argument:", in_loops("(d0) -> (d0 floordiv 8)", [], args=1))
    structures = "builtin.module(func.func(affine-simplify-structures))"
    print("affine-simplify-structures: d0 floordiv 8, d0 in affine.for 0 to 8:",
          in_loops("(d0) -> (d0 floordiv 8)", [(0, 8)], pipeline=structures),
          "; d0 mod 8 floordiv 4, d0 in affine.for -1 to 1:",
          in_loops("(d0) -> (d0 mod 8 floordiv 4)", [(-1, 1)], pipeline=structures))
    print("(d0 * 4 + d1) floordiv 4 built:", FDIV(ADD(MUL(d0, C(4)), d1), C(4)),
          "; in loops d0 0 to 8, d1 0 to 4:", in_loops("(d0, d1) -> (d0 + d1 floordiv 4)", [(0, 8), (0, 4)]))


def range_bugs():
    print("## range-aware canonicalize: the campaign's wrong values, with both folders at the point")
    m = "(d0) -> (((d0 mod 31) floordiv 2) mod 6 * -1)"
    print(f"{m}, d0 in affine.for -7 to 7:", in_loops(m, [(-7, 7)]))
    print("  apply at d0 = 0:", apply_fold(m, 0))
    for m, lo, hi in [("(d0) -> (d0 mod 87 floordiv 10)", -7, 7), ("(d0) -> ((d0 * -1) mod 3 floordiv 2)", 0, 2),
                      ("(d0) -> ((d0 mod 4) ceildiv 3 mod 2)", -3, 13), ("(d0) -> (d0 mod 8 floordiv 4)", -1, 1),
                      ("(d0) -> (d0 mod 8)", -1, 1)]:
        print(f"{m}, d0 in affine.for {lo} to {hi}:", in_loops(m, [(lo, hi)]))
        print("  apply at d0 = 0:", apply_fold(m, 0))
    m = "(d0) -> ((d0 * 4611686018427387903) mod 2)"
    print(f"{m}, d0 in affine.for 0 to 4:", in_loops(m, [(0, 4)]))
    print("  apply at d0 = 1:", apply_fold(m, 1))


def compiled(map_text, *args):
    """The map's `affine.apply` in a function of i64 arguments, lowered by
    lower-affine, compiled by iree-compile and run by IREE's runtime."""
    from iree import compiler, runtime
    n = len(args)
    m = ir.Module.parse(
        f"func.func @f({', '.join(f'%a{i}: i64' for i in range(n))}) -> i64 {{\n"
        + "".join(f"%i{i} = arith.index_cast %a{i} : i64 to index\n" for i in range(n))
        + f"%r = affine.apply affine_map<{map_text}>({', '.join(f'%i{i}' for i in range(n))})\n"
        + "%o = arith.index_cast %r : index to i64\nreturn %o : i64\n}")
    passmanager.PassManager.parse("builtin.module(func.func(lower-affine))").run(m.operation)
    vmfb = compiler.compile_str(str(m), target_backends=["llvm-cpu"], extra_args=["--iree-opt-const-eval=false"])
    ctx = runtime.SystemContext(config=runtime.Config("local-sync"))
    ctx.add_vm_module(runtime.VmModule.copy_buffer(ctx.instance, vmfb))
    return ctx.modules.module["f"](*args)


def compiled_code():
    print(f"## compiled code: lower-affine, iree-compile, iree-base-runtime {version('iree-base-runtime')}")
    for m, x in [("(d0) -> (d0 floordiv 3)", -7), ("(d0) -> (d0 ceildiv 3)", -7), ("(d0) -> (d0 mod 3)", -7),
                 ("(d0) -> (d0 * 4)", 1 << 62), ("(d0) -> (d0 floordiv 3)", MIN), ("(d0) -> (d0 mod 3)", MIN),
                 ("(d0) -> (d0 ceildiv 3)", MIN), ("(d0) -> (d0 ceildiv 3)", MIN + 1)]:
        print(f"{m} at {x}: {compiled(m, x)}")
    print("construction wraps a constant sum: (d0 + 1) + MAX builds", ADD(ADD(d0, C(1)), C(MAX)),
          "; ((d0 + 1) + MAX) floordiv 2 builds", FDIV(ADD(ADD(d0, C(1)), C(MAX)), C(2)))
    print("  node by node at d0 = -1:", compiled("(d0) -> (d0 + 1)", -1), "then + MAX:",
          compiled("(d0) -> (d0 + 9223372036854775807)", 0), "then floordiv 2:",
          compiled("(d0) -> (d0 floordiv 2)", MAX))
    print("  the built map at d0 = -1:", compiled("(d0) -> (d0 floordiv 2 - 4611686018427387904)", -1))


if __name__ == "__main__":
    for f in (api, division_families, language, integers, ranges, range_bugs, compiled_code):
        f()
