"""The TVM adapter's backend (docs/protocol.md, section 5): `run` and `reproducer` requests.

Backends (both target `llvm`, the CPU, at TVM's default LLVM optimisation level, -O3):

- `llvm`: the expressions compiled literally. tvm_harness.prim_func builds
  one PrimFunc with node constructors (not `te.compute`, whose
  create_prim_func already simplifies): a serial loop over the points in
  which every variable is bound (`tirx.Bind`) to a load from its own input
  buffer, an opaque value whose range no pass knows, and every expression is
  stored to its own output buffer (a bool as int8, read back as a bool).
  `tvm.compile` then runs TVM's default pipeline with these passes disabled
  (tvm_harness.LITERAL), each of which runs by default on 0.27.0.post1 and
  rewrites the expressions:
    s_tir.StmtSimplify, tirx.StmtSimplify  the arithmetic simplifier itself
        (`(x*4 + 3) // 4` -> `x`, `x - x` -> 0, `x % -1 < 0` -> false);
    s_tir.RenormalizeSplitPattern  rewrites floordiv/floormod split patterns;
    tirx.NarrowDataType  narrows int64 arithmetic to int32 where the
        analyzer's bounds say it fits;
    s_tir.LoopPartition  splits loops by conditions and simplifies each part;
    s_tir.RewriteUnsafeSelect  turns a Select into a lazy if_then_else (it
        changes how a `where` evaluates, not its arithmetic);
    tirx.CommonSubexprElim  introduces let-bound common subexpressions.
  What still runs is lowering: tirx.LowerIntrin must stay (disabled, codegen
  fails with "Do not have a default for prim.FloorDiv"): it implements
  FloorDiv/FloorMod, by a power of two as a shift/mask, else with truncating
  Div/Mod and a sign fix-up. That is TVM's own implementation of `//` and
  `mod`, so it is part of what a kernel computes. `python3
  adapters/tvm_backend.py` checks all this: it dumps the stored expressions
  of sample kernels after TVM's TIR pipeline (unchanged) and after
  LowerIntrin, and confirms every disabled name is a pass the default
  pipeline runs (PassContext ignores unknown names silently).
- `pipeline`: the same PrimFunc compiled by TVM's unmodified default
  pipeline (its own simplifier included, without the variables' ranges).

Both compile in the child process that tileproof_peer.evaluate forks; a
compiler exception is a CompileError with TVM's message, a trap (an `sdiv`
by zero LLVM kept) kills the child and is reported by the plumbing. Forking
after `import tvm` is safe here: the adapter's process only builds and
simplifies expressions, which starts no thread (TVM's thread pool starts on
the first parallel kernel launch, which happens only in children); the one
extra thread at import is numpy's OpenBLAS pool, which registers fork
handlers. 2000 consecutive forked compile+run requests ran without a hang.

Reproducers are standalone scripts: the case's input as node constructors
(printed from the very TIR the adapter builds), the adapter's bindings and
entry point, and tvm_harness.py's code inlined (one source for the harness
of both).
"""

import inspect
import keyword
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tileproof_peer as tp  # noqa: E402
import tvm_harness as harness  # noqa: E402
from tvm import tirx  # noqa: E402

# The script names a variable must not shadow.
_TAKEN = {"c", "az", "source", "answer", "point", "got", "literal", "backend", "entry", "os", "signal", "sys",
          "tvm", "tirx", "ir", "Analyzer", "LITERAL", "prim_func", "compile_exprs", "run_kernel", "outcome",
          "at_point", "variables", "e", "print"}


class TVMBackend(tp.Backend):
    """`llvm` and `pipeline` for the TVM adapter. `build(tree, env)` and
    `bind_range(var)` are the adapter's own (so the kernel and the
    reproducer see the expressions and bounds the simplifier saw); `entry`
    is the Analyzer method, `dtype` the index dtype."""

    names = ("llvm", "pipeline")

    def __init__(self, dtype, entry, build, bind_range, version):
        self.dtype, self.entry, self.build, self.bind_range, self.version = dtype, entry, build, bind_range, version
        bits = 64 if dtype == "int64" else 32
        self.lo, self.hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1

    def exprs(self, case):
        """The case's variables and expressions as TIR (Unsupported: an op TVM has no node for)."""
        env = {v.name: tirx.Var(v.name, "bool" if v.dtype == "bool" else self.dtype) for v in case.vars}
        return [env[v.name] for v in case.vars], [self.build(t, env) for t in case.trees]

    def compile(self, case, name):
        variables, exprs = self.exprs(case)
        try:
            return harness.compile_exprs(variables, exprs, literal=name == "llvm")
        except Exception as e:  # the peer's compiler rejected the expressions
            raise tp.CompileError(f"{type(e).__name__}: {str(e).strip()}"[:2000]) from e

    def run(self, kernel, points):
        for p in points:
            for x, t in zip(p, kernel[1]):
                if t == "bool" and x not in (0, 1) or t != "bool" and not self.lo <= x <= self.hi:
                    raise ValueError(f"the point {list(p)} has the value {x}, which is not a {t}")
        return harness.run_kernel(kernel, points)

    def reproducer(self, case, name, point, expected, klass):
        variables, exprs = self.exprs(case)
        names = {}  # case variable -> Python name in the script
        for v in case.vars:
            py = v.name if v.name.isidentifier() and not keyword.iskeyword(v.name) else "v_" + "".join(
                ch if ch.isalnum() else "_" for ch in v.name)
            while py in _TAKEN or py in names.values():
                py = "v_" + py
            names[v.name] = py
        lines, hoisted = [], []
        for v, x in zip(case.vars, variables):
            lines.append(f'{names[v.name]} = tirx.Var("{v.name}", "{x.ty}")')
        lines.append("az = Analyzer()")
        for v in case.vars:
            if v.dtype == "index" and self.bind_range(v) is not None:
                lo, end = self.bind_range(v)
                lines.append(f"az.bind({names[v.name]}, ir.Range(c({lo}), c({end})))  # {v.lo} <= {v.name} <= {v.hi}")
            elif v.dtype == "index":
                lines.append(f"# {v.name} stays unbound: [{v.lo}, {v.hi}] is too wide for a {self.dtype} Range")
        printer = _Printer(names, set(names.values()) | _TAKEN, hoisted)
        roots = [printer(e) for e in exprs]
        lines += hoisted
        lines.append(f"source = [{', '.join(roots)}]" if len(roots) > 1 or len(roots[0]) < 80
                     else f"source = [\n    {roots[0]},\n]")
        at = ", ".join(f"{v.name} = {x}" for v, x in zip(case.vars, point))
        crash = klass == "peer-crash"
        doc = [f"tileproof finding ({klass or 'unclassified'}) against Apache TVM {self.version}: "
               f"tvm.sym.Analyzer.{self.entry}, {self.dtype}."]
        if crash:
            doc.append("The simplifier raises on this input. Exits 1 while it does, 0 once it returns.")
        else:
            how = ("literally (the arithmetic-rewriting passes in LITERAL disabled)" if name == "llvm"
                   else "by TVM's default pipeline")
            doc.append(f"Input and answer, compiled for llvm {how} and run at {at}, disagree.")
            if expected is not None:
                doc.append(f"The input's value there (tileproof's reference semantics): {_show(expected)}.")
            doc.append("Exits 1 while they differ (or the answer traps or fails to compile), 0 once they agree.")
        out = ['"""' + "\n".join(_wrap(" ".join(doc))) + '\n"""', "import sys", "", "from tvm import ir",
               "from tvm.sym import Analyzer"]
        if not crash:
            out += _harness_code()
        out += ["", f'c = lambda v: tirx.const(v, "{self.dtype}")', *lines,
                'print("input: ", source)']
        if crash:
            out += ["try:",
                    f"    answer = [az.{self.entry}(e) for e in source]",
                    "except Exception as e:  # the bug",
                    f'    print(f"Analyzer.{self.entry} raised {{type(e).__name__}}: {{str(e).strip().splitlines()[-1]}}")',
                    "    sys.exit(1)",
                    'print("answer:", answer)',
                    'print("no longer reproduces: the simplifier returned")',
                    "sys.exit(0)"]
        else:
            out += [f"answer = [az.{self.entry}(e) for e in source]",
                    'print("answer:", answer)',
                    f"variables, point = [{', '.join(names[v.name] for v in case.vars)}], {list(point)}",
                    f"got = [at_point(variables, exprs, point, literal={name == 'llvm'}) for exprs in (source, answer)]",
                    f'print("at {at}: input", got[0], "| answer", got[1])',
                    "if got[0] == got[1]:",
                    '    print("no longer reproduces: both compute the same")',
                    "sys.exit(0 if got[0] == got[1] else 1)"]
        return "\n".join(out) + "\n"


def _harness_code():
    """tvm_harness.py's code, without its docstring, for a script to inline."""
    src = inspect.getsource(harness)
    return ["", "# ---- tileproof's adapters/tvm_harness.py", src[src.index('"""', 3) + 3:].strip(), "# ----"]


def _show(values):
    return ", ".join(str(v) for v in values) if isinstance(values, list) else str(values)


def _wrap(text, width=100):
    words, lines, cur = text.split(), [], ""
    for w in words:
        if cur and len(cur) + 1 + len(w) > width:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    return lines + [cur]


class _Printer:
    """Python source that rebuilds a TIR expression with the node constructors the
    adapter used: `tirx.Add(a, b)`, constants as `c(v)`. A subexpression whose text
    grows past a line is hoisted into its own `tN = ...` line."""

    FIELDS = {"Select": ("condition", "true_value", "false_value"), "Not": ("a",)}

    def __init__(self, var_names, taken, hoisted):
        self.var_names, self.taken, self.hoisted, self.n = var_names, taken, hoisted, 0

    def __call__(self, e, root=True):
        k = type(e).__name__
        if isinstance(e, tirx.Var):
            return self.var_names[e.name]
        if isinstance(e, tirx.IntImm):
            return f'tirx.const({bool(e.value)}, "bool")' if str(e.ty) == "bool" else f"c({int(e.value)})"
        if getattr(tirx, k, None) is not type(e):
            raise tp.Unsupported(f"the reproducer cannot print a {k} node")
        args = [self(getattr(e, f), False) for f in self.FIELDS.get(k, ("a", "b"))]
        text = f"tirx.{k}({', '.join(args)})"
        if root or len(text) <= 60:
            return text
        self.n += 1
        while f"t{self.n}" in self.taken:
            self.n += 1
        self.hoisted.append(f"t{self.n} = {text}")
        return f"t{self.n}"


def _check_literal(dtype):
    """Dumps sample kernels' stored expressions through the pipeline; 1 when a
    literal compile changed one, or a LITERAL name is not a default pass."""
    import re

    import tvm

    ran, snaps = [], {}

    @tvm.instrument.pass_instrument
    class Watch:
        def run_after_pass(self, mod, info):
            ran.append(info.name)
            if info.name in ("_pipeline", "tirx.LowerIntrin"):
                snaps[info.name] = str(mod)

    def stores(text):
        """The right-hand sides of the loop's `outN[k] = ...` lines."""
        return [m.group(1) for m in re.finditer(r"\bout\d+(?:_\d+)?\[k\] = (.*)", text)]

    c = lambda v: tirx.const(v, dtype)  # noqa: E731
    x, y, p = tirx.Var("x", dtype), tirx.Var("y", dtype), tirx.Var("p", "bool")
    samples = [  # (label, variables, expression)
        ("(x*4 + 3) // 4", [x], tirx.FloorDiv(tirx.Add(tirx.Mul(x, c(4)), c(3)), c(4))),
        ("x % -1 < 0 (floormod)", [x], tirx.LT(tirx.FloorMod(x, c(-1)), c(0))),
        ("x % -1 < 0 (truncmod)", [x], tirx.LT(tirx.Mod(x, c(-1)), c(0))),
        ("x - x", [x], tirx.Sub(x, x)),
        ("x * 0", [x], tirx.Mul(x, c(0))),
        ("1 + 2", [], tirx.Add(c(1), c(2))),
        ("min(x, x)", [x], tirx.Min(x, x)),
        ("x >> 3", [x], tirx.RShift(x, c(3))),
        ("1 >> x", [x], tirx.RShift(c(1), x)),
        ("where(1 >> x == 0, x, 0)", [x], tirx.Select(tirx.EQ(tirx.RShift(c(1), x), c(0)), x, c(0))),
        ("(x mod 8) // 4", [x], tirx.FloorDiv(tirx.FloorMod(x, c(8)), c(4))),
        ("x // y", [x, y], tirx.FloorDiv(x, y)),
        ("where(x != 0, 1 / x, 7)", [x], tirx.Select(tirx.NE(x, c(0)), tirx.Div(c(1), x), c(7))),
        ("p && !p", [p], tirx.And(p, tirx.Not(p))),
    ]
    bad = 0
    with tvm.transform.PassContext(instruments=[Watch()]):
        tvm.compile(harness.prim_func([x], [tirx.Sub(x, x)]), target="llvm")
    default = set(ran)
    for name in harness.LITERAL:
        ok = name in default
        bad += not ok
        print(f"{'runs by default' if ok else 'NOT A DEFAULT PASS'}: {name}")
    for label, free, e in samples:
        source = stores(str(harness.prim_func(free, [e])))[0]
        row = [label, f"  built:                  {source}"]
        for literal in (True, False):
            snaps.clear()
            with tvm.transform.PassContext(instruments=[Watch()],
                                           disabled_pass=harness.LITERAL if literal else []):
                tvm.compile(harness.prim_func(free, [e]), target="llvm")
            after = stores(snaps["_pipeline"])[0]
            if literal:
                same = after == source
                bad += not same
                row.append(f"  llvm, TIR pipeline:     {after}{'' if same else '   <- CHANGED'}")
                row.append(f"  llvm, after LowerIntrin: {stores(snaps['tirx.LowerIntrin'])[0]}")
            else:
                row.append(f"  pipeline:               {stores(snaps['tirx.LowerIntrin'])[0]}")
        print("\n".join(row))
    print("literal: every stored expression unchanged by the TIR pipeline" if not bad else f"{bad} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(_check_literal(sys.argv[1] if len(sys.argv) > 1 else "int64"))
