"""Compile TVM expressions for llvm and run them (tvm_backend.py; the reproducer scripts inline the code below)."""
import os
import signal

import tvm
from tvm import tirx

# The passes of TVM's default pipeline that rewrite arithmetic (or, RewriteUnsafeSelect, how a Select
# evaluates), disabled for a literal compile; tvm_backend.py's check shows each one runs by default.
LITERAL = ["s_tir.StmtSimplify", "tirx.StmtSimplify", "s_tir.RenormalizeSplitPattern", "tirx.NarrowDataType",
           "s_tir.LoopPartition", "s_tir.RewriteUnsafeSelect", "tirx.CommonSubexprElim"]


def prim_func(variables, exprs):
    """main(inputs..., outputs..., n_points): at each k < n_points, every variable is loaded from its input
    (an opaque value: no pass knows its range) and every expression is stored to its own output."""
    n, k = tirx.Var("n_points", "int64"), tirx.Var("k", "int64")
    mem = lambda e: "int8" if str(e.ty) == "bool" else str(e.ty)  # a bool lives in memory as int8
    ins = [tirx.decl_buffer((n,), mem(v), v.name + "_in") for v in variables]
    outs = [tirx.decl_buffer((n,), mem(e), f"out{i}") for i, e in enumerate(exprs)]
    convert = lambda e, dtype: e if str(e.ty) == dtype else tirx.Cast(dtype, e)
    body = [tirx.Bind(v, convert(tirx.BufferLoad(b, [k]), str(v.ty))) for v, b in zip(variables, ins)]
    body += [tirx.BufferStore(b, convert(e, mem(e)), [k]) for e, b in zip(exprs, outs)]
    loop = tirx.For(k, tirx.const(0, "int64"), n, tirx.ForKind.SERIAL, body[0] if len(body) == 1 else tirx.SeqStmt(body))
    return tirx.PrimFunc(ins + outs + [n], loop).with_attr("global_symbol", "main")


def compile_exprs(variables, exprs, literal=True):
    """The kernel for llvm: with LITERAL disabled (literal), or by TVM's unmodified pipeline."""
    with tvm.transform.PassContext(disabled_pass=LITERAL if literal else []):
        lib = tvm.compile(prim_func(variables, exprs), target="llvm")
    return lib, [str(v.ty) for v in variables], [str(e.ty) for e in exprs]


def run_kernel(kernel, points):
    """The expressions' values at each point (the variables' values in order, a bool as 0 or 1)."""
    lib, var_types, types = kernel
    n, mem = len(points), lambda t: "int8" if t == "bool" else t
    ins = [tvm.runtime.empty((n,), mem(t)).copyfrom([p[j] for p in points]) for j, t in enumerate(var_types)]
    outs = [tvm.runtime.empty((n,), mem(t)) for t in types]
    lib["main"](*ins, *outs, n)
    cols = [[bool(v) if t == "bool" else int(v) for v in o.numpy().tolist()] for o, t in zip(outs, types)]
    return [[c[i] for c in cols] for i in range(n)]


def outcome(variables, exprs, point, literal=True):
    """The values of exprs at one point, compiled and run, or the compiler's error (as text)."""
    try:
        kernel = compile_exprs(variables, exprs, literal)
    except Exception as e:  # noqa: BLE001 - the compiler's message is the result
        return f"compile error: {type(e).__name__}: {str(e).strip().splitlines()[-1]}"
    return repr(run_kernel(kernel, [point])[0])


def at_point(variables, exprs, point, literal=True):
    """outcome() in a child process, so that a trap is a result ("trap SIGFPE"), not the end."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: writes its outcome and exits, whatever happens
        try:
            os.close(r)
            os.write(w, outcome(variables, exprs, point, literal).encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        text = f.read()
    status = os.waitpid(pid, 0)[1]
    return f"trap {signal.Signals(os.WTERMSIG(status)).name}" if os.WIFSIGNALED(status) else text or "no result"
