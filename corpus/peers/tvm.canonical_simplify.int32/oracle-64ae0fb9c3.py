"""tileproof finding (wrong-value) against Apache TVM 0.27.0.post1, tvm.sym.Analyzer.canonical_simplify
on int32 variables. At x = -975310011, the answer compiled literally (TVM's arithmetic-rewriting
passes, LITERAL below, disabled) for llvm computes another value than the input compiled literally
(what it means). Exits 1 while they differ (or the answer traps or fails to compile), 0 once they
agree. tileproof's semantics give the input the value 1950620023 there.
"""
import os
import signal
import sys

import tvm
from tvm import ir, tirx
from tvm.sym import Analyzer

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

c = lambda v: tirx.const(v, "int32")
x = tirx.Var("x", "int32")
az = Analyzer()
# x in [-2147483647, 0] stays unbound: its extent overflows a int32 Range
source = [tirx.Max(tirx.Sub(c(1), tirx.Mul(x, c(2))), c(-2147483647))]
answer = [az.canonical_simplify(e) for e in source]
print("input: ", " ; ".join(map(str, source)))
print("answer:", " ; ".join(map(str, answer)))
variables, point = [x], [-975310011]
want = at_point(variables, source, point)  # what the input means
got = at_point(variables, answer, point, literal=True)
print("at x = -975310011, compiled for llvm: input", want, "| answer", got)
if want == got:
    print("no longer reproduces: both compute the same")
sys.exit(0 if want == got else 1)
