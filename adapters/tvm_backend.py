"""The TVM adapter's backend (docs/protocol.md, section 5): `run` and `reproducer` requests.

Two backends, both target `llvm` (the CPU; TVM's default LLVM optimisation
level, -O3):

- `llvm`: the expressions compiled literally. tvm_harness.prim_func builds one
  PrimFunc with node constructors (not `te.compute`, whose create_prim_func
  already simplifies): a serial loop over the points in which every variable
  is bound (`tirx.Bind`) to a load from its own input buffer, an opaque value
  whose range no pass knows, and every expression is stored to its own output
  buffer (a bool as int8, read back as a bool). `tvm.compile` runs TVM's
  default pipeline with these passes disabled (tvm_harness.LITERAL); each runs
  by default on 0.27.0.post1:
    s_tir.StmtSimplify, tirx.StmtSimplify: the arithmetic simplifier itself
      (`(x*4 + 3) // 4` -> `x`, `x % -1 < 0` -> false, `x - x` -> 0);
    s_tir.RenormalizeSplitPattern: rewrites floordiv/floormod split patterns
      and simplifies (`(x mod 8) // 4` -> `x // 4 mod 2`);
    tirx.CommonSubexprElim: let-binds common subexpressions (`x*y + x*y`);
    tirx.RemoveNoOp: simplifies every store to decide whether it is a no-op,
      so it raises wherever the simplifier raises on a subexpression (`1 /
      (x - x)`, and the input of oracle-3c11128100, whose divisor simplifies
      to 0 under its Select's condition): the input would not compile at all;
    tirx.NarrowDataType (int64 arithmetic to int32 where the analyzer's
      bounds allow), s_tir.LoopPartition (splits loops by conditions and
      simplifies each part), s_tir.RewriteUnsafeSelect (a Select with a
      memory access in an arm becomes a lazy if_then_else): none of them
      changes these kernels (checked), disabled for what they do when they
      fire.
  tirx.LowerIntrin stays: disabled, codegen fails ("Do not have a default for
  prim.FloorDiv"). It is TVM's implementation of FloorDiv/FloorMod (by a power
  of two a shift or mask, else truncating Div/Mod with a sign fix-up; it asks
  the analyzer whether the dividend is non-negative), so it is part of what a
  kernel computes. Like FlattenBuffer and a few other lowering passes it
  walks the expressions with an analyzer that enters every Select condition
  as a constraint: on an input where the simplifier raises under such a
  condition (peer-error-9e7475c15d) TVM cannot compile it, with or without
  the disabled passes; that is a `compile_error`.
  `python3 adapters/tvm_backend.py [int64|int32]` re-checks all this: each
  name is a default pass (PassContext ignores unknown names silently), what
  each does when enabled alone, and sample kernels' stored expressions after
  TVM's TIR pipeline (unchanged), after LowerIntrin, and through the
  unmodified pipeline.
- `pipeline`: the same PrimFunc compiled by TVM's unmodified default pipeline
  (its simplifier included, without the variables' ranges). It rewrites the
  source as well as the answer: of the six wrong-value findings of
  corpus/peers/tvm.simplify, four have their source rewritten to the same
  wrong value by the pipeline itself.

Both compile in the child process that tileproof_peer.evaluate forks; a
compiler exception is a CompileError with TVM's message, and a trap (an
`sdiv` by zero LLVM kept) kills the child and is reported by the plumbing.
Forking after `import tvm` is safe: the adapter's own process only builds
and simplifies expressions, and neither that nor compiling and running these
serial kernels starts a thread (checked in /proc: TVM's thread pool is for
parallel loops). The one extra thread after import is numpy's OpenBLAS pool,
whose fork handler stops it before the first fork (from then on the adapter
has a single thread). 1984 forked compile+run requests in a row (500 random
cases, source and answer, both backends) answered without a hang or error.

Reproducers are standalone scripts: the case's input as node constructors
(printed from the very TIR the adapter builds), the adapter's bindings and
entry point, and tvm_harness.py's code inlined (one source for the harness
of both).
"""

import builtins
import inspect
import json
import keyword
import os
import sys
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tileproof_peer as tp  # noqa: E402
import tvm_harness as harness  # noqa: E402
from tvm import tirx  # noqa: E402

# The names a reproducer script uses at its top level (with the builtins), which a variable must not shadow.
_TAKEN = {"c", "az", "source", "answer", "variables", "point", "want", "got", "e", "os", "signal", "sys", "tvm",
          "tirx", "ir", "Analyzer", "LITERAL", "prim_func", "compile_exprs", "run_kernel", "at_point", "ast",
          "ConstIntBound", "nodes", "outside", "seen", "node", "n", "b", "lo", "hi", "v", "bad"} | set(dir(builtins))


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
            for x, t in zip(p, kernel[1][:kernel[2]]):
                if t == "bool" and x not in (0, 1) or t != "bool" and not self.lo <= x <= self.hi:
                    raise ValueError(f"the point {list(p)} has the value {x}, which is not a {t}")
        return harness.run_kernel(kernel, points)

    def case_lines(self, case):
        """The script's lines that build the case's variables, the adapter's
        bindings and the input as `source` (node constructors printed from
        the very TIR the adapter builds), and the variables' Python names."""
        variables, exprs = self.exprs(case)
        names = _python_names(case.vars)
        lines = [f'{names[v.name]} = tirx.Var({json.dumps(v.name)}, "{x.ty}")' for v, x in zip(case.vars, variables)]
        lines.append("az = Analyzer()")
        for v in case.vars:
            r = self.bind_range(v) if v.dtype == "index" else None
            if r is not None:
                lines.append(f"az.bind({names[v.name]}, ir.Range(c({r[0]}), c({r[1]})))  # {v.lo} <= {v.name} <= {v.hi}")
            elif v.dtype == "index":
                lines.append(f"# {v.name} in [{v.lo}, {v.hi}] stays unbound: its extent overflows a {self.dtype} Range")
        hoisted = []
        printer = _Printer(names, hoisted)
        roots = [printer(e) for e in exprs]
        listed = f"[{', '.join(roots)}]" if len(", ".join(roots)) < 90 else \
            "[\n" + "".join(f"    {r},\n" for r in roots) + "]"
        return lines + hoisted + [f"source = {listed}"], names

    def bounds_reproducer(self, case, name, point, klass):
        """A script that rebuilds the case's input with the adapter's
        bindings, compiles every node of it alone with backend `name`, runs
        it at the point and compares its value with the node's
        const_int_bound."""
        lines, names = self.case_lines(case)
        at = ", ".join(f"{v.name} = {x}" for v, x in zip(case.vars, point))
        doc = (f"tileproof finding (unsound-bounds, {klass}) against Apache TVM {self.version}'s range analysis, "
               f"tvm.sym.Analyzer.const_int_bound on {self.dtype} variables. At {at}, a node of the input, "
               f"{_HOW[name]} for llvm, computes a value outside the bounds const_int_bound gives it (NEG_INF and "
               f"POS_INF are no bound), which TVM's simplifier trusts. Exits 1 while some node's compiled value lies "
               f"outside its bounds, 0 once every one is within.")
        body = [f"variables, point = [{', '.join(names[v.name] for v in case.vars)}], {list(point)}",
                "def nodes(e):  # e, then every node under it",
                "    yield e",
                '    for f in {"Select": ("condition", "true_value", "false_value"), "Not": ("a",)}.get(',
                '            type(e).__name__, ("a", "b") if hasattr(e, "b") else ()):',
                "        yield from nodes(getattr(e, f))",
                "outside, seen = 0, set()",
                "for node in (n for e in source for n in nodes(e)):",
                "    if str(node) in seen:",
                "        continue",
                "    seen.add(str(node))",
                "    b = az.const_int_bound(node)",
                "    lo = None if b.min_value == ConstIntBound.NEG_INF else b.min_value",
                "    hi = None if b.max_value == ConstIntBound.POS_INF else b.max_value",
                f"    got = at_point(variables, [node], point, literal={name == 'llvm'})",
                '    v = ast.literal_eval(got)[0] if got.startswith("[") else None  # else a trap or compile error',
                "    bad = v is not None and (lo is not None and v < lo or hi is not None and v > hi)",
                "    outside += bad",
                '    print(f"{node}: const_int_bound [{\'-inf\' if lo is None else lo}, '
                '{\'+inf\' if hi is None else hi}], compiled: {got}" + (" OUTSIDE" if bad else ""))',
                'print(f"{outside} node(s) outside their bounds" if outside else '
                '"every node within its bounds: no longer reproduces")',
                "sys.exit(1 if outside else 0)"]
        return _script(doc, self.dtype, _harness_code(), lines, body, ["import ast"],
                       "from tvm.sym import Analyzer, ConstIntBound")

    def reproducer(self, case, name, point, expected, klass):
        """A script that rebuilds the case's input, simplifies it as the
        adapter does, and (unless klass is peer-crash) compares the answer
        compiled by backend `name` with the input compiled literally, which
        is what the input means: under `pipeline` the input itself would
        be rewritten by the simplifier under test."""
        lines, names = self.case_lines(case)
        if klass != "peer-crash":
            lines.append(f"answer = [az.{self.entry}(e) for e in source]")
        at = ", ".join(f"{v.name} = {x}" for v, x in zip(case.vars, point))
        head = f"tileproof finding ({klass or 'unclassified'}) against Apache TVM {self.version}, " \
               f"tvm.sym.Analyzer.{self.entry} on {self.dtype} variables."
        if klass == "peer-crash":
            doc = f"{head} The simplifier raises on this input: exits 1 while it does, 0 once it returns."
            body = ["try:",
                    f"    answer = [az.{self.entry}(e) for e in source]",
                    "except Exception as e:  # the bug",
                    f'    print(f"Analyzer.{self.entry} raised {{type(e).__name__}}: {{str(e).strip().splitlines()[-1]}}")',
                    "    sys.exit(1)",
                    'print("answer:", " ; ".join(map(str, answer)))',
                    'print("no longer reproduces: the simplifier returned")']
            return _script(doc, self.dtype, [], lines, body)
        doc = (f"{head} At {at}, the answer {_HOW[name]} for llvm computes another value than the input compiled "
               f"literally (what it means). Exits 1 while they differ (or the answer traps or fails to compile), "
               f"0 once they agree.")
        if expected is not None:
            doc += f" tileproof's semantics give the input the value {_show(expected)} there."
        body = ['print("answer:", " ; ".join(map(str, answer)))',
                f"variables, point = [{', '.join(names[v.name] for v in case.vars)}], {list(point)}",
                "want = at_point(variables, source, point)  # what the input means",
                f"got = at_point(variables, answer, point, literal={name == 'llvm'})",
                f'print("at {at}, compiled for llvm: input", want, "| answer", got)']
        if name == "pipeline":
            body.append('print("the input, compiled by TVM\'s pipeline instead:", '
                        'at_point(variables, source, point, literal=False))')
        body += ["if want == got:",
                 '    print("no longer reproduces: both compute the same")',
                 "sys.exit(0 if want == got else 1)"]
        return _script(doc, self.dtype, _harness_code(), lines, body)


# How backend `name` compiles, as a reproducer's docstring says it.
_HOW = {"llvm": "compiled literally (TVM's arithmetic-rewriting passes, LITERAL below, disabled)",
        "pipeline": "compiled by TVM's default pipeline"}


def _script(doc, dtype, harness_code, lines, body, extra=(), analyzer="from tvm.sym import Analyzer"):
    imports = [*extra, "import os", "import signal", "import sys", "", "import tvm"] if harness_code else \
        [*extra, "import sys", ""]
    return "\n".join(['"""' + "\n".join(textwrap.wrap(doc, 100)) + '\n"""', *imports, "from tvm import ir, tirx",
                      analyzer, *harness_code, "", f'c = lambda v: tirx.const(v, "{dtype}")',
                      *[line for line in lines if line], 'print("input: ", " ; ".join(map(str, source)))', *body]) + "\n"


def _python_names(vars_):
    """A Python name per case variable: its own, unless that is not an
    identifier or would shadow a name the script uses."""
    names = {}
    for v in vars_:
        py = v.name if v.name.isidentifier() and not keyword.iskeyword(v.name) else \
            "v_" + "".join(ch if ch.isalnum() else "_" for ch in v.name)
        while py in _TAKEN or py in names.values() or py[0] == "t" and py[1:].isdigit():
            py = "v_" + py
        names[v.name] = py
    return names


def _harness_code():
    """tvm_harness.py's code below its imports (the script imports the same), for a script to inline."""
    lines = inspect.getsource(harness).splitlines()
    start = max(i for i, line in enumerate(lines) if line.startswith(("import ", "from "))) + 1
    code = [line for i, line in enumerate(lines[start:], start) if line or lines[i - 1]]  # single blank lines
    return ["", "# ---- the harness: tileproof's adapters/tvm_harness.py", *code, "# ----"]


def _show(values):
    return ", ".join(str(v) for v in values) if isinstance(values, list) else str(values)


class _Printer:
    """Python source that rebuilds a TIR expression with the node constructors the
    adapter used (`tirx.Add(a, b)`, constants as `c(v)`), from the very TIR the
    adapter built. An operand is hoisted into its own `tN = ...` line while its
    node's line would be long (_python_names keeps such names free)."""

    FIELDS = {"Select": ("condition", "true_value", "false_value"), "Not": ("a",)}

    def __init__(self, var_names, hoisted):
        self.var_names, self.hoisted = var_names, hoisted

    def __call__(self, e):
        k = type(e).__name__
        if isinstance(e, tirx.Var):
            return self.var_names[e.name]
        if isinstance(e, tirx.IntImm):
            return f'tirx.const({bool(e.value)}, "bool")' if str(e.ty) == "bool" else f"c({int(e.value)})"
        if getattr(tirx, k, None) is not type(e):
            raise tp.Unsupported(f"the reproducer cannot print a {k} node")
        args = [self(getattr(e, f)) for f in self.FIELDS.get(k, ("a", "b"))]
        while len(f"tirx.{k}({', '.join(args)})") > 90:  # hoist the longest operand
            i = max(range(len(args)), key=lambda j: len(args[j]))
            if "(" not in args[i]:
                break
            self.hoisted.append(f"t{len(self.hoisted) + 1} = {args[i]}")
            args[i] = f"t{len(self.hoisted)}"
        return f"tirx.{k}({', '.join(args)})"


def _check_literal(dtype):
    """Shows that the `llvm` backend compiles literally: 1 when a LITERAL name is
    not a pass TVM's default pipeline runs, or a literal compile changed a
    sample's stored expression before LowerIntrin. Also shows what each
    disabled pass does to the samples when it alone is enabled, and what the
    unmodified pipeline makes of them."""
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
        """The right-hand sides of the kernel's `outN[k] = ...` lines, as one string."""
        return " ; ".join(m.group(1) for m in re.finditer(r"\bout\d+(?:_\d+)?\[k\] = (.*)", text))

    def lowered(free, e, disabled):
        """The stored expressions after TVM's TIR pipeline and after LowerIntrin, or the error."""
        snaps.clear()
        try:
            with tvm.transform.PassContext(instruments=[Watch()], disabled_pass=disabled):
                tvm.compile(harness.prim_func(free, [e]), target="llvm")
        except Exception as ex:  # noqa: BLE001 - shown
            msg = f"raises {type(ex).__name__}: {str(ex).strip().splitlines()[-1][:90]}"
            return msg, msg
        return stores(snaps["_pipeline"]), stores(snaps["tirx.LowerIntrin"])

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
        ("(x + 3) mod 32 // 8", [x], tirx.FloorDiv(tirx.FloorMod(tirx.Add(x, c(3)), c(32)), c(8))),
        ("where(x < 3, x + 1, x)", [x], tirx.Select(tirx.LT(x, c(3)), tirx.Add(x, c(1)), x)),
        ("x*y + x*y", [x, y], tirx.Add(tirx.Mul(x, y), tirx.Mul(x, y))),
        ("x // y", [x, y], tirx.FloorDiv(x, y)),
        ("1 / (x - x)", [x], tirx.Div(c(1), tirx.Sub(x, x))),
        ("where(x != 0, 1 / x, 7)", [x], tirx.Select(tirx.NE(x, c(0)), tirx.Div(c(1), x), c(7))),
        ("p && !p", [p], tirx.And(p, tirx.Not(p))),
    ]
    bad = 0
    with tvm.transform.PassContext(instruments=[Watch()]):
        tvm.compile(harness.prim_func([x], [tirx.Sub(x, x)]), target="llvm")
    default = set(ran)
    literal = [lowered(free, e, harness.LITERAL) for _, free, e in samples]
    print("== the disabled passes (tvm_harness.LITERAL), each enabled alone on the samples:")
    for name in harness.LITERAL:
        bad += name not in default
        alone = [lowered(free, e, [q for q in harness.LITERAL if q != name])[0] for _, free, e in samples]
        effect = [f"{label}: {a}" for (label, _, _), a, (tir, _) in zip(samples, alone, literal) if a != tir]
        print(f"{name}: {'runs by default' if name in default else 'NOT A DEFAULT PASS'}; "
              + ("; ".join(effect[:2]) if effect else "changes none of the samples"))
    print("== the samples: as built; llvm after TVM's TIR pipeline (must be unchanged) and after LowerIntrin; pipeline")
    for (label, free, e), (tir, low) in zip(samples, literal):
        built = stores(str(harness.prim_func(free, [e])))
        bad += tir != built
        print(f"{label}\n  built:     {built}\n  llvm:      {tir}{'' if tir == built else '   <- CHANGED'}"
              f"\n  lowered:   {low}\n  pipeline:  {lowered(free, e, [])[1]}")
    print("literal: every sample unchanged by the TIR pipeline" if not bad else f"{bad} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(_check_literal(sys.argv[1] if len(sys.argv) > 1 else "int64"))
