"""tileproof finding (unsound-bounds, wrong-value) against Apache TVM 0.27.0.post1's range analysis,
tvm.sym.Analyzer.const_int_bound on int64 variables. At r1 = 0, a node of the input, compiled
literally (TVM's arithmetic-rewriting passes, LITERAL below, disabled) for llvm, computes a value
outside the bounds const_int_bound gives it (NEG_INF and POS_INF are no bound), which TVM's
simplifier trusts. Exits 1 while some node's compiled value lies outside its bounds, 0 once every
one is within.
"""
import ast
import os
import signal
import sys

import tvm
from tvm import ir, tirx
from tvm.sym import Analyzer, ConstIntBound

# ---- the harness: tileproof's adapters/tvm_harness.py

# The passes of TVM's default pipeline that rewrite or simplify arithmetic (RewriteUnsafeSelect: how a Select
# evaluates), disabled for a literal compile; tvm_backend.py says why each, and checks each runs by default.
LITERAL = ["s_tir.StmtSimplify", "tirx.StmtSimplify", "s_tir.RenormalizeSplitPattern", "tirx.NarrowDataType",
           "s_tir.LoopPartition", "s_tir.RewriteUnsafeSelect", "tirx.CommonSubexprElim", "tirx.RemoveNoOp"]

def prim_func(variables, exprs):
    """main(inputs..., outputs..., n_points): at each k < n_points, every variable is loaded from its input
    (an opaque value: no pass knows its range), every expression stored to its output (a bool as int8)."""
    n, k = tirx.Var("n_points", "int64"), tirx.Var("k", "int64")
    mem = lambda e: "int8" if str(e.ty) == "bool" else str(e.ty)
    as_ = lambda e, dtype: e if str(e.ty) == dtype else tirx.Cast(dtype, e)
    ins = [tirx.decl_buffer((n,), mem(v), v.name + "_in") for v in variables]
    outs = [tirx.decl_buffer((n,), mem(e), f"out{i}") for i, e in enumerate(exprs)]
    body = [tirx.Bind(v, as_(tirx.BufferLoad(b, [k]), str(v.ty))) for v, b in zip(variables, ins)]
    body += [tirx.BufferStore(b, as_(e, mem(e)), [k]) for e, b in zip(exprs, outs)]
    loop = tirx.For(k, tirx.const(0, "int64"), n, tirx.ForKind.SERIAL, body[0] if len(body) == 1 else tirx.SeqStmt(body))
    return tirx.PrimFunc(ins + outs + [n], loop).with_attr("global_symbol", "main")

def compile_exprs(variables, exprs, literal=True):
    """The kernel, for llvm: LITERAL disabled (literal), or TVM's unmodified pipeline."""
    with tvm.transform.PassContext(disabled_pass=LITERAL if literal else []):
        lib = tvm.compile(prim_func(variables, exprs), target="llvm")
    return lib, [str(e.ty) for e in variables + exprs], len(variables)

def run_kernel(kernel, points):
    """The expressions' values at each point (the variables' values in order, a bool as 0 or 1)."""
    (lib, types, nv), n = kernel, len(points)
    bufs = [tvm.runtime.empty((n,), "int8" if t == "bool" else t) for t in types]
    for j, b in enumerate(bufs[:nv]):
        b.copyfrom([p[j] for p in points])
    lib["main"](*bufs, n)
    cols = [[bool(v) if t == "bool" else v for v in b.numpy().tolist()] for b, t in zip(bufs[nv:], types[nv:])]
    return [[c[i] for c in cols] for i in range(n)]

def at_point(variables, exprs, point, literal=True):
    """Compiles and runs exprs at one point in a child process: their values, or the compile error, or the trap."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child writes its result and exits, whatever happens
        try:
            try:
                kernel = compile_exprs(variables, exprs, literal)
            except Exception as e:  # noqa: BLE001 - TVM's message is the result
                os.write(w, f"compile error: {type(e).__name__}: {str(e).strip().splitlines()[-1]}".encode())
            else:
                os.write(w, repr(run_kernel(kernel, [point])[0]).encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        text = f.read()
    status = os.waitpid(pid, 0)[1]
    return f"trap {signal.Signals(os.WTERMSIG(status)).name}" if os.WIFSIGNALED(status) else text or "no result"
# ----

c = lambda v: tirx.const(v, "int64")
r1 = tirx.Var("r1", "int64")
az = Analyzer()
az.bind(r1, ir.Range(c(-4), c(5)))  # -4 <= r1 <= 4
source = [tirx.RShift(c(1), r1)]
print("input: ", " ; ".join(map(str, source)))
variables, point = [r1], [0]
def nodes(e):  # e, then every node under it
    yield e
    for f in {"Select": ("condition", "true_value", "false_value"), "Not": ("a",)}.get(
            type(e).__name__, ("a", "b") if hasattr(e, "b") else ()):
        yield from nodes(getattr(e, f))
outside, seen = 0, set()
for node in (n for e in source for n in nodes(e)):
    if str(node) in seen:
        continue
    seen.add(str(node))
    b = az.const_int_bound(node)
    lo = None if b.min_value == ConstIntBound.NEG_INF else b.min_value
    hi = None if b.max_value == ConstIntBound.POS_INF else b.max_value
    got = at_point(variables, [node], point, literal=True)
    v = ast.literal_eval(got)[0] if got.startswith("[") else None  # else a trap or compile error
    bad = v is not None and (lo is not None and v < lo or hi is not None and v > hi)
    outside += bad
    print(f"{node}: const_int_bound [{'-inf' if lo is None else lo}, {'+inf' if hi is None else hi}], compiled: {got}" + (" OUTSIDE" if bad else ""))
print(f"{outside} node(s) outside their bounds" if outside else "every node within its bounds: no longer reproduces")
sys.exit(1 if outside else 0)
