#!/usr/bin/env python3
"""tileproof peer adapter for Halide 21.0.0 (pip `halide`: the Python bindings with LLVM inside), protocol
version 1.

    python adapters/halide_adapter.py

Halide's Python bindings expose no `simplify`; lowering runs the simplifier. Each expression of a case
becomes a Func of its own over the case's variables (halide_harness.lower): a variable is a pure Var whose
range is given the way Halide reads it, `Func.bound(v, lo, hi - lo + 1)`, so that lowering makes a loop over
exactly that range (a variable whose loop would not fit int32 is a `Param` with no range instead: assuming
less is sound). The answer is the value the Func's store writes in the lowered statement
(`Func.compile_to_lowered_stmt(path, params, hl.StmtOutputFormat.Text)`), read back into a tree
(halide_harness.stored_value): `select` is `where`, `min`/`max`, `/` and `%` (Euclidean: floordiv and mod by
a positive constant, else spelled with floor ops and a fix-up where the divisor is negative), `likely(e)` is
`e`, casts between bool and int32, `let`s substituted, and the loop variables mapped back: `F.s0.vK` is
variable K, `F.s0.vK.rebased` (a loop Halide rebased to start at 0) variable K minus its lower bound.
The hello's name is `halide.lower`.

The profile (every claim checked by halide_experiments.py, quoted in docs/peers/halide.md): Exprs are
int32, and Halide's simplifier assumes signed int32 arithmetic does not overflow, so `integers` is
`int32`. `/` and `%` are Euclidean, tileproof's floor family exactly where the divisor is positive: the
input language has positive constant divisors only (`input_language.positive_divisors`), which also keeps
division by zero (0 in Halide) out of every source. A Func is computed at every point of its bounded
region and Halide treats a signed overflow as undefined behaviour, so a source that overflows at one point
means nothing at any (`input_language.defined_everywhere`: tileproof does not send such a case). No
`ceildiv`, truncating `/ %`, shifts, `invalid` or bool variables (a Var is an int32). A lowering that folds a signed integer overflow (the statement then
has `signed_integer_overflow(...)`, and the pipeline does not compile) is answered `error`, naming the
operation the overflow was left in (`overflow == _`): the shape the rule that folded it leaves.

The backend (`run`, `reproducer`; docs/protocol.md section 5): `jit`, Halide's own JIT realizing each side
literally (halide_backend.py).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tileproof_peer as tp  # noqa: E402

OUT = tp.claim_stdout()

from importlib.metadata import version  # noqa: E402

import halide as hl  # noqa: E402
import halide_harness as h  # noqa: E402
from halide_backend import HalideBackend, variables  # noqa: E402

OPS = ["neg", "not", "add", "sub", "mul", "min", "max", "floordiv", "mod", "lt", "le", "eq", "ne", "and", "or",
       "xor", "where"]

HELLO = {
    "tileproof": tp.PROTOCOL,
    "name": "halide.lower",
    "version": version("halide"),
    "profile": {"ops": OPS, "invalid": False, "integers": "int32", "bool_vars": False,
                # Euclidean / and % are floordiv and mod only by a positive divisor; a Func is realized
                # over its whole region, where one overflowing point is undefined behaviour of the
                # pipeline (docs/peers/halide.md).
                "input_language": {"positive_divisors": True, "defined_everywhere": True}},
}


def simplify(case):
    vs = variables(case)
    try:
        answers, _ = h.simplify(vs, case.trees)
    except h.NoForm as e:
        raise tp.Unsupported(str(e)) from e
    except h.Overflow as e:  # Halide's answer is that the pipeline does not compile: the peer's error
        raise RuntimeError(str(e)) from e
    return answers


class HalideBounds(tp.Bounds):
    """Halide's range analysis as its users meet it, bounds inference (docs/protocol.md, section 7): the
    region Halide allocates and computes for a producer read at a node's value is its bound of that node (a
    region that misses a value the node takes is an out-of-bounds read). One lowering per request: each
    integer operation indexes a producer of its own, all read by one Func over the case's variables bounded
    as for the simplifier (halide_harness.regions). Halide's compile time grows with the producers, so only
    the first OPERATIONS integer operations of a case (innermost first) are asked; the others, the leaves
    (a variable's region is its loop, a constant's itself), a bool node, and a node whose region is not a
    constant (over a `Param`, or a pipeline that does not lower) have no bound."""

    OPERATIONS = 8

    def build(self, case):
        env, loops, params = h.environment(variables(case))
        built = {}
        for t in case.trees:
            h.build(t, lambda v: env[v[1]], built=built)
        trees = {id(n): n for t in case.trees for n in tp.preorder(t)}
        asked = [k for k, e in built.items()
                 if trees[k][0] not in tp.LEAVES
                 and not (e if isinstance(e, hl.Expr) else hl.Expr(e)).type().is_bool()][:self.OPERATIONS]
        found = dict(zip(asked, h.regions(loops, params, [built[k] for k in asked]))) if asked else {}
        return {k: found.get(k) for k in built}

    def bound(self, obj):
        return obj


if __name__ == "__main__":
    sys.setrecursionlimit(20000)
    sys.exit(tp.serve(OUT, HELLO, simplify, width=32, backend=HalideBackend(HELLO["version"]),
                      bounds=HalideBounds()))
