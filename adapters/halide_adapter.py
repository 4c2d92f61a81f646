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


if __name__ == "__main__":
    sys.setrecursionlimit(20000)
    sys.exit(tp.serve(OUT, HELLO, simplify, width=32, backend=HalideBackend(HELLO["version"])))
