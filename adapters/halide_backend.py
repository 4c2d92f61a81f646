"""The Halide adapter's backend (docs/protocol.md, section 5): `run` and `reproducer` requests.

Two backends, both Halide's own JIT (LLVM, for the host).

`jit` realizes each expression literally (halide_harness.literal). Every operation of the tree is a Func
of its own, computed at root over the points, and every variable an `ImageParam` holding the points'
values: lowering's simplifier, which cannot be switched off, sees one operation over opaque loads at a
time (`n3(i) = n1(i) / 4`), so nothing is simplified across nodes and no range is known. What stays is
what code generation cannot do without: folding an operation whose operands are all constants, and
lowering `/` and `%` by a constant to multiplications. Each operation's int32 value is stored, so an
overflow wraps.

`fused` realizes each expression as one Func over the same inputs (halide_harness.fused): Halide's whole
pipeline, its simplifier included (without the ranges), and LLVM, which may use the no-overflow flags
Halide puts on signed arithmetic, so an intermediate overflow need not wrap: what a user's pipeline
computes. It rewrites the source as well as the answer.

tileproof's floordiv and mod by a divisor that is not a positive constant (only ever in an answer read
back from Halide's Euclidean `/` and `%`) are built from Halide's with a select that fixes the quotient
where the divisor is negative. Division by zero gives 0 and no operation traps (checked in
halide_experiments.py); the values are int32, wrapping where tileproof's are undefined.

Each realize runs in the child process that tileproof_peer.evaluate forks: the adapter's own process only
lowers, which starts no thread, so forking after `import halide` is safe.

Reproducers are standalone scripts that need only `halide`: the case as trees, halide_harness.py's code
inlined (one source for the adapter, the backend and the script), the lowered statement printed, and both
sides realized at the point in a child process.
"""

import inspect
import json
import os
import sys
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import halide as hl  # noqa: E402
import halide_harness as h  # noqa: E402
import tileproof_peer as tp  # noqa: E402


def variables(case):
    """The case's variables as the harness takes them, (name, lo, hi): Halide's Vars are int32."""
    out = []
    for v in case.vars:
        if v.dtype != "index":
            raise tp.Unsupported(f"var `{v.name}` is a {v.dtype}: a Halide Var is an int32 (no bool variables)")
        out.append((v.name, v.lo, v.hi))
    return out


class HalideBackend(tp.Backend):
    names = ("jit", "fused")

    def __init__(self, version):
        self.version = version

    def compile(self, case, name):
        vs = variables(case)
        try:
            return (h.fused if name == "fused" else h.literal)(vs, case.trees)
        except h.NoForm as e:
            raise tp.Unsupported(str(e)) from e
        except hl.HalideError as e:  # Halide's compiler rejected the expressions
            raise tp.CompileError(f"HalideError: {str(e).strip()}"[:2000]) from e

    def run(self, kernel, points):
        try:
            return h.realize(kernel, points)
        except h.NoForm as e:
            raise tp.Unsupported(str(e)) from e

    def reproducer(self, case, name, point, expected, klass):
        vs = variables(case)
        at = ", ".join(f"{v.name} = {x}" for v, x in zip(case.vars, point))
        head = (f"tileproof finding ({klass or 'unclassified'}) against Halide {self.version}'s simplifier, as "
                f"lowering runs it: each expression a Func over the variables, bounded with Func.bound, lowered "
                f"with compile_to_lowered_stmt.")
        lines = [f"variables = {vs!r}  # (name, lo, hi): Func.bound(v, lo, hi - lo + 1), or a Param past int32",
                 f"source = json.loads({json.dumps(json.dumps(case.trees))})",
                 'print("input:  ", " ; ".join(show(variables, t) for t in source))']
        if klass == "peer-crash":
            doc = (f"{head} Lowering folds a signed integer overflow (or raises) on this input, which has values: "
                   f"exits 1 while it does, 0 once it lowers.")
            body = ["try:",
                    "    answer, stmts = simplify(variables, source)",
                    "except (Overflow, hl.HalideError) as e:  # the bug",
                    '    print(f"lowering: {type(e).__name__}: {str(e).strip().splitlines()[0]}")',
                    "    for t in source:",
                    "        f = lower(variables, t)",
                    '        print(f[f.index("produce"):].rstrip())',
                    "    sys.exit(1)",
                    'print("answer: ", " ; ".join(show(variables, t) for t in answer))',
                    'print("no longer reproduces: lowering gives an expression")']
            return _script(doc, lines + body)
        how = ("realized literally by Halide's JIT" if name == "jit" else
               "realized by Halide's JIT as one fused Func (Halide's pipeline and LLVM, without the ranges)")
        doc = (f"{head} At {at}, the answer (the value the lowered store writes), {how}, differs from the input "
               f"realized literally (each operation a Func of its own over opaque inputs: what the input "
               f"means). Exits 1 while they differ, 0 once they agree.")
        if expected is not None:
            doc += f" tileproof's semantics give the input the value {expected} there."
        body = ["answer, stmts = simplify(variables, source)",
                "for s in stmts:",
                '    print(s[s.index("produce"):].rstrip())',
                'print("answer: ", " ; ".join(show(variables, t) for t in answer))',
                f"point = {list(point)}",
                "want = at_point(variables, source, point)  # what the input means",
                "got = at_point(variables, answer, point" + (", fused)" if name == "fused" else ")"),
                f'print("at {at}, realized by the JIT: input", want, "| answer ({name})", got)',
                "# what a user's pipeline computes: each side as one fused Func (Halide's simplifier rewrites the "
                "input too)",
                'print("  as one fused Func each: input", at_point(variables, source, point, fused), '
                '"| answer", at_point(variables, answer, point, fused))',
                "if want == got:",
                '    print("no longer reproduces: both compute the same")',
                "sys.exit(0 if want == got else 1)"]
        return _script(doc, lines + body)


def _script(doc, body):
    return "\n".join(['"""' + "\n".join(textwrap.wrap(doc, 100)) + '\n"""', "import json", "import os", "import re",
                      "import signal", "import sys", "import tempfile", "", "import halide as hl",
                      *_harness_code(), "", *body]) + "\n"


def _harness_code():
    """halide_harness.py's code below its imports (the script imports the same), for a script to inline."""
    lines = inspect.getsource(h).splitlines()
    start = max(i for i, line in enumerate(lines) if line.startswith(("import ", "from "))) + 1
    return ["", "# ---- the harness: tileproof's adapters/halide_harness.py", *lines[start:], "# ----"]
