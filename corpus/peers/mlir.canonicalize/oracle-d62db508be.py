#!/usr/bin/env python3
"""tileproof finding (wrong-value) against MLIR (iree-base-compiler==3.13.0): canonicalize over affine.apply in affine.for loops.

At a = -1, b = 0, the answer computes another value than the input, both evaluated by MLIR's own constant folding (apply). Exits 1 while they differ, 0 once they agree.

    pip install iree-base-compiler==3.13.0 && python3 THIS_FILE
"""

ENTRY = 'canonicalize'
BACKEND = 'apply'
VARS = [('a', -576460752303423488, -1), ('b', 0, 31)]
POINT = [-1, 0]
EXPECTED = [-27]
KLASS = 'wrong-value'


def source(d):
    """The input, (a * 160 + b * 5 + -1) // 6, over d (one entry per variable)."""
    return [FDIV(ADD(ADD(MUL(d[0], C(160)), MUL(d[1], C(5))), C(-1)), C(6))]


# The part of every MLIR reproducer that is the same for all of them
# (mlir_backend.py inlines this file after the case's own lines): needs only
# iree-base-compiler==3.13.0 (and iree-base-runtime==3.13.0 when BACKEND is
# `iree`, compiled code). The case defines ENTRY, BACKEND, VARS
# (name, lo, hi), POINT, EXPECTED (None, or the input's values by
# tileproof's semantics) and source(d) (the input's expressions over the
# list d, as the adapter builds them).
import sys

from iree.compiler import ir, passmanager

CTX = ir.Context()
CTX.enable_multithreading(False)
CTX.__enter__()
C = ir.AffineConstantExpr.get
ADD, MUL = ir.AffineAddExpr.get, ir.AffineMulExpr.get
FDIV, CDIV, MOD = ir.AffineFloorDivExpr.get, ir.AffineCeilDivExpr.get, ir.AffineModExpr.get
GET = {ir.AffineAddExpr: ADD, ir.AffineMulExpr: MUL, ir.AffineFloorDivExpr: FDIV,
       ir.AffineCeilDivExpr: CDIV, ir.AffineModExpr: MOD}
I64_MAX = (1 << 63) - 1


def placeholder(n):
    return f"affine_map<({', '.join(f'd{i}' for i in range(n))}) -> (0)>"


def applies(module):
    out = []

    def walk(op):
        for region in op.regions:
            for block in region.blocks:
                for o in block.operations:
                    out.append(o.operation)
                    walk(o.operation)
    walk(module.operation)
    return out


def with_maps(text, exprs):
    """The module of `text`, its affine.apply placeholders given the maps of
    `exprs` (set, not printed: MLIR's printer does not always print a map
    its parser reads back)."""
    module = ir.Module.parse(text)
    ops = [o for o in applies(module) if o.name == "affine.apply"]
    for op, e in zip(ops, exprs):
        op.attributes["map"] = ir.AffineMapAttr.get(ir.AffineMap.get(len(op.operands), 0, [e]))
    return module


def canonicalize(module):
    passmanager.PassManager.parse("builtin.module(canonicalize)").run(module.operation)


def apply_fold(e, values):
    """`affine.apply` of `e` (over len(values) dims) to arith.constant
    operands, folded by canonicalize: an int, or None where it does not fold."""
    lines = ["func.func private @use(index)", "func.func @f() {"]
    lines += [f"  %c{i} = arith.constant {v} : index" for i, v in enumerate(values)]
    ops = ", ".join(f"%c{i}" for i in range(len(values)))
    lines += [f"  %r = affine.apply {placeholder(len(values))}({ops})", "  func.call @use(%r) : (index) -> ()",
              "  return", "}"]
    module = with_maps("\n".join(lines), [e])
    canonicalize(module)
    call = [o for o in applies(module) if o.name == "func.call"][0]
    v = call.operands[0]
    if isinstance(v, ir.OpResult) and v.owner.operation.name == "arith.constant":
        return v.owner.operation.attributes["value"].value
    return None


def iree_value(e, values):
    """`affine.apply` of `e` (over len(values) dims) in a function of i64
    arguments, lowered to arith by MLIR's lower-affine, compiled by
    iree-compile and run by IREE's runtime at `values`."""
    from iree import compiler, runtime
    n = len(values)
    lines = [f"func.func @e({', '.join(f'%a{i}: i64' for i in range(n))}) -> i64 {{"]
    lines += [f"  %i{i} = arith.index_cast %a{i} : i64 to index" for i in range(n)]
    lines += [f"  %r = affine.apply {placeholder(n)}({', '.join(f'%i{i}' for i in range(n))})",
              "  %o = arith.index_cast %r : index to i64", "  return %o : i64", "}"]
    module = with_maps("\n".join(lines), [e])
    passmanager.PassManager.parse("builtin.module(func.func(lower-affine))").run(module.operation)
    ctx = runtime.SystemContext(config=runtime.Config("local-sync"))
    vmfb = compiler.compile_str(str(module), target_backends=["llvm-cpu"], extra_args=["--iree-opt-const-eval=false"])
    ctx.add_vm_module(runtime.VmModule.copy_buffer(ctx.instance, vmfb))
    return int(ctx.modules.module["e"](*values))


def subst(e, dims, syms=()):
    """`e` rebuilt with dim i replaced by dims[i] and symbol j by syms[j]:
    with constants in their place, MLIR folds each node as it builds it."""
    e = e.maybe_downcast()
    if isinstance(e, ir.AffineConstantExpr):
        return e
    if isinstance(e, ir.AffineDimExpr):
        return dims[e.position]
    if isinstance(e, ir.AffineSymbolExpr):
        return syms[e.position]
    return GET[type(e)](subst(e.lhs, dims, syms), subst(e.rhs, dims, syms))


def const_value(e):
    e = e.maybe_downcast()
    return e.value if isinstance(e, ir.AffineConstantExpr) else None


def evaluate(e, values, syms=()):
    """`e` at a point, by BACKEND: `apply` (affine.apply's folder), `iree`
    (compiled code) or `fold` (every node built from constants)."""
    if BACKEND in ("apply", "iree"):
        over = subst(e, [ir.AffineDimExpr.get(i) for i in range(len(values))],
                     [ir.AffineDimExpr.get(len(values) + j) for j in range(len(syms))])
        return (apply_fold if BACKEND == "apply" else iree_value)(over, list(values) + list(syms))
    return const_value(subst(e, [C(v) for v in values], [C(v) for v in syms]))


def loop_module():
    """The variables as MLIR's loops give them ranges (affine.for lo to
    hi + 1, tagged tp_var; a variable whose hi + 1 does not fit index is a
    function argument), one affine.apply per expression in the innermost loop."""
    args, opens, closes, ops = [], [], [], []
    for k, (name, lo, hi) in enumerate(VARS):
        ops.append(f"%v{k}")
        if hi >= I64_MAX:
            args.append(f"%v{k}: index")
        else:
            opens.append(f"{'  ' * (len(opens) + 1)}affine.for %v{k} = {lo} to {hi + 1} {{")
            closes.insert(0, f"{'  ' * len(opens)}}} {{tp_var = {k} : i64}}")
    ind = "  " * (len(opens) + 1)
    body = []
    for i in range(len(source([ir.AffineDimExpr.get(k) for k in range(len(VARS))]))):
        body += [f"{ind}%r{i} = affine.apply {placeholder(len(ops))}({', '.join(ops)})",
                 f"{ind}func.call @use(%r{i}) : (index) -> ()"]
    return "\n".join(["func.func private @use(index)", f"func.func @f({', '.join(args)}) {{"] + opens + body
                     + closes + ["  return", "}"])


def value_at(v, point):
    """A value of the canonicalized module at the point (by BACKEND)."""
    if isinstance(v, ir.BlockArgument):
        owner = v.owner.owner.operation
        if owner.name == "affine.for":
            return point[owner.attributes["tp_var"].value]
        unranged = [k for k, (_, _, hi) in enumerate(VARS) if hi >= I64_MAX]
        return point[unranged[v.arg_number]]
    op = v.owner.operation
    if op.name == "arith.constant":
        return op.attributes["value"].value
    if op.name == "affine.apply":
        m = op.attributes["map"].value
        vals = [value_at(x, point) for x in op.operands]
        if any(x is None for x in vals):
            return None
        return evaluate(m.results[0], vals[:m.n_dims], vals[m.n_dims:])
    raise SystemExit(f"the answer is computed by {op.name}")


def simplified():
    """What the entry point under test makes of the input: (printable
    answer, its values at POINT by BACKEND)."""
    dims = [ir.AffineDimExpr.get(i) for i in range(len(VARS))]
    if ENTRY in ("construct", "simplify"):
        exprs = source(dims)
        if ENTRY == "construct":
            answer = list(ir.AffineMap.get(len(dims), 0, exprs).results)
        else:
            answer = [ir.AffineExpr.simplify_affine_expr(e, len(dims), 0) for e in exprs]
        return " ; ".join(map(str, answer)), [evaluate(e, POINT) for e in answer]
    pipeline = {"canonicalize": "builtin.module(canonicalize)",
                "structures": "builtin.module(func.func(affine-simplify-structures))"}[ENTRY]
    module = with_maps(loop_module(), source(dims))
    print(f"input module (mlir-opt --pass-pipeline='{pipeline}'):")
    print(module)
    passmanager.PassManager.parse(pipeline).run(module.operation)
    print(f"after {pipeline}:")
    print(module)
    calls = [o for o in applies(module) if o.name == "func.call"]
    return "(the module above)", [value_at(c.operands[0], POINT) for c in calls]


def main(klass):
    dims = [ir.AffineDimExpr.get(i) for i in range(len(VARS))]
    print("input:", " ; ".join(map(str, source(dims))))
    if klass == "peer-crash":
        try:
            shown, _ = simplified()
        except Exception as e:  # the bug
            print(f"MLIR's {ENTRY} raised {type(e).__name__}: {e}")
            sys.exit(1)
        print("answer:", shown)
        print("no longer reproduces: the simplifier returned")
        sys.exit(0)
    try:
        shown, got = simplified()
    except Exception as e:  # the simplifier raises: the bug is there too
        print(f"MLIR's {ENTRY} raised {type(e).__name__}: {e}")
        sys.exit(1)
    print("answer:", shown)
    # The input at the point, literally: built from the point's constants,
    # each node is folded by MLIR's own arithmetic (None: it declines).
    # The input built over dims would be what construction folds, which
    # may be the bug itself.
    literal = [const_value(e) for e in source([C(v) for v in POINT])]
    want = literal
    if EXPECTED is not None:
        print(f"tileproof's semantics give the input {EXPECTED}; MLIR's constant folding, node by node, {literal}")
        want = EXPECTED
    at = ", ".join(f"{n} = {x}" for (n, _, _), x in zip(VARS, POINT)) or "the only point"
    by = "IREE's compiled code" if BACKEND == "iree" else f"MLIR's {BACKEND} folder; None: it does not fold"
    print(f"at {at}: input {want}, answer {got} (by {by})")
    if got != want:
        print("REPRODUCES: the answer differs from the input")
        sys.exit(1)
    print("no longer reproduces: they agree")
    sys.exit(0)


if __name__ == "__main__":
    main(KLASS)
