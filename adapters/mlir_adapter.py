#!/usr/bin/env python3
"""tileproof peer adapter for MLIR's affine simplifier, through the upstream
MLIR Python bindings of iree-base-compiler 3.13.0 (protocol version 1).

    python adapters/mlir_adapter.py [--entry construct|simplify|canonicalize]

Builds each case's expressions as MLIR affine expressions, each variable a
dimension (`ir.AffineDimExpr`, in the case's order), and reads the result
back into trees. The entry points (the hello's name says which):

- `construct` (`mlir.construct`): what building the expressions folds
  (`ir.AffineAddExpr.get`, `AffineMulExpr.get`, ... and `AffineMap.get`:
  MLIR simplifies as it builds, with no range information);
- `simplify` (`mlir.simplify_affine_expr`):
  `ir.AffineExpr.simplify_affine_expr(e, ndims, 0)` on each built
  expression (MLIR's `simplifyAffineExpr`: flattening, no ranges);
- `canonicalize` (default; `mlir.canonicalize`): the expressions as
  `affine.apply`s inside `affine.for` loops whose constant bounds are the
  variables' ranges (`affine.for %x = lo to hi + 1`; a variable whose
  upper bound + 1 does not fit `index` is a function argument, whose range
  MLIR does not know), the module run through
  `builtin.module(canonicalize)`, each result read back from the IR (an
  `affine.apply` with its map and operands, an `arith.constant`, or a loop
  variable). All expressions of a case are in one module.
- `structures` (`mlir.affine_simplify_structures`): the same module run
  through `builtin.module(func.func(affine-simplify-structures))`, the
  affine dialect's other pass that simplifies maps (it also reads the
  loops' bounds).

Each entry point is a pipeline, whose stages the hello lists
(docs/protocol.md, "Pipeline stages"; a request's `stage` asks for the
expressions after one): `construct` (what `ir.AffineMap.get` over the
built expressions gives: the `construct` entry's answer), then for
`simplify` the simplification; for `canonicalize` and `structures`,
`parse` (the module built and parsed, read back with no pass run), then
the pass.

The language (docs/peers/mlir.md; the experiments in
mlir_experiments.py): `+`,
`neg` (`* -1`), `*` where one operand is a constant, `floordiv`, `ceildiv`
and `mod` by a positive constant; anything else is answered `unsupported`.
No bool variables, no `invalid`, no comparisons, `where`, `min` or `max`.

The backend (`run`; docs/protocol.md section 5): `fold`, MLIR's own
evaluation: each expression's map applied to `arith.constant` operands
and folded by `canonicalize` (mlir_backend.py).
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tileproof_peer as tp  # noqa: E402

OUT = tp.claim_stdout()

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--entry", choices=["construct", "simplify", "canonicalize", "structures"], default="canonicalize")
ARGS = ap.parse_args()

from importlib.metadata import version  # noqa: E402

import mlir_affine as ma  # noqa: E402
from iree.compiler import ir  # noqa: E402
from mlir_backend import MLIRBackend  # noqa: E402

NAME = {"construct": "mlir.construct", "simplify": "mlir.simplify_affine_expr",
        "canonicalize": "mlir.canonicalize", "structures": "mlir.affine_simplify_structures"}[ARGS.entry]
PIPELINE = {"canonicalize": ma.CANONICALIZE,
            "structures": "builtin.module(func.func(affine-simplify-structures))"}.get(ARGS.entry)
STAGES = {"construct": ["construct"], "simplify": ["construct", "simplify"],
          "canonicalize": ["construct", "parse", "canonicalize"],
          "structures": ["construct", "parse", "structures"]}[ARGS.entry]

HELLO = {
    "tileproof": tp.PROTOCOL,
    "name": NAME,
    "version": version("iree-base-compiler"),
    "profile": {"ops": ma.OPS, "invalid": False, "integers": "int64", "bool_vars": False,
                # MLIR builds products by constants and divisions by positive
                # constants only (docs/peers/mlir.md).
                "input_language": {"affine": True}},
}

CTX = ma.context()


def simplify(case, stage=STAGES[-1]):
    """The expressions after `stage` of the entry's pipeline (by default
    its last: the entry point's answer)."""
    ma.check_vars(case)
    with CTX:
        index = {v.name: i for i, v in enumerate(case.vars)}
        dims = [["var", v.name] for v in case.vars]
        exprs = [ma.build(t, index) for t in case.trees]
        if stage == "construct":
            m = ir.AffineMap.get(len(dims), 0, exprs)
            return [ma.back(e, dims) for e in m.results]
        if stage == "simplify":
            return [ma.back(ir.AffineExpr.simplify_affine_expr(e, len(dims), 0), dims) for e in exprs]
        module = ma.module_with(ma.loop_module(case, exprs), exprs)
        if stage != "parse":
            module = ma.run_pass(module, PIPELINE)
        results = ma.calls(module.operation)
        if len(results) != len(exprs):
            raise RuntimeError(f"{len(results)} results after {stage} for {len(exprs)} expressions")
        return [ma.value_tree(v, case) for v in results]


if __name__ == "__main__":
    sys.setrecursionlimit(20000)
    sys.exit(tp.serve(OUT, HELLO, simplify, width=64, backend=MLIRBackend(HELLO["version"], ARGS.entry),
                      stages=STAGES))
