#!/usr/bin/env python3
"""tileproof peer adapter for tinygrad 0.14.0 (protocol version 1).

    python3 adapters/tinygrad_adapter.py [--entry sym|simplify] [--vars variable|range]

Builds tinygrad UOps from tileproof's trees, runs tinygrad's own symbolic
rewriter over them, and converts the result back to trees.

Which simplifier (`--entry`):

- `sym` (default): `graph_rewrite(sink, tinygrad.uop.symbolic.sym)`. This is
  what tinygrad's codegen runs over kernel index math (full_rewrite_to_sink:
  "initial symbolic", "postopt symbolic", "early symbolic", "extra
  symbolic"). `sym` is `symbolic` plus `pm_simplify_valid`, whose two rules
  are the ones that matter for gated indices: `simplify_valid` (each clause
  of an `&&` chain simplified assuming the others) and `gated_given_valid`
  (`where(c, x, Invalid)` -> `where(c, uop_given_valid(c, x), Invalid)`: the
  index simplified assuming its gate holds, by substituting variables with
  narrowed bounds).
- `simplify`: `UOp.simplify()`, i.e. `graph_rewrite(sink, symbolic)`: the
  entry point tinygrad uses for shapes and `ssimplify`; no valid-based rules.

All expressions of a case go through one rewrite, as one SINK, the way a
kernel's index expressions do.

How variables are built (`--vars`): `variable` (default) makes every
variable `UOp.variable(name, lo, hi)` (dtype `weakint`: tinygrad 0.14.0's
index type, an unbounded integer; a bool variable has dtype bool). `range`
makes an index variable with lo == 0 a loop counter
`UOp.range(hi + 1, i, AxisType.LOOP)`, as kernels have, which also exercises
the RANGE-only rules (`r % end -> r`, `r // end -> 0`).

How ops map (each checked by experiment, see docs/peers/tinygrad.md; the
builder and the reader back are tinygrad_uops.py): tinygrad's own builders
are used, so the input has the shape tinygrad itself makes:
`//` -> FLOORDIV, `mod` -> FLOORMOD (floor family, unbounded ints), `/` ->
CDIV and `%` -> CMOD (`div(rounding_mode="trunc")`, `fmod`: truncating),
`ceildiv` -> `tinygrad.helpers.ceildiv` (`-(a // -b)`, or `(a+b-1)//b` when
a >= 0 and b > 0: exact either way), `min` -> `minimum` (tinygrad spells it
`max(a ^ -1, b ^ -1) ^ -1`), `neg` -> `a * -1`, `<=` -> `(b < a) != True`,
`==` -> `(a != b) != True`, `!` -> `a != True`, `where` -> WHERE, `invalid`
-> `UOp.invalid()` (CONST Invalid).

Its own rules, one by one (docs/protocol.md, section 6): `rules`,
`instances` and `apply` requests over the patterns of `sym` (`--matcher`
names another matcher of tinygrad.uop.symbolic) or of your own matcher
(`--module FILE.py:MATCHER`, which then is also the simplifier:
`graph_rewrite(sink, MATCHER)`): tinygrad_rules.py.

A rewrite that loops is stopped long before tinygrad's own guard (a
250,000-entry stack) and answered as an `error` that names the rules that
kept firing (`graph_rewrite loops: ... (the rules A -> B rewrite in a
cycle)`), as is tinygrad's own "infinite loop" error.

The backend (docs/protocol.md, section 5): `run` and `reproducer` requests for
tinygrad's three CPU renderers, `clang`, `llvm` and `x86`, which compile the
expressions literally (no symbolic pass): tinygrad_backend.py.

Its range analysis (docs/protocol.md, section 7): `bounds` requests answer
the `vmin`/`vmax` of every node's UOp and its op (`MUL`; TinygradBounds).

Back from tinygrad: every op that can appear maps exactly or the answer is
`unsupported`. Integer XOR only ever comes from `minimum`: `a ^ -1` is
exactly `-1 - a` on unbounded integers, and `max(a^-1, b^-1)^-1` is read back
as `min(a, b)`. A bool-typed Invalid (tinygrad folds `invalid < 3` to it) has
no tileproof form: `unsupported`.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tileproof_peer as tp  # noqa: E402

OUT = tp.claim_stdout()

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--entry", choices=["sym", "simplify"], default="sym")
ap.add_argument("--vars", choices=["variable", "range"], default="variable")
ap.add_argument("--matcher", default="sym", metavar="NAME",
                help="whose rules `rules` requests list: a PatternMatcher of tinygrad.uop.symbolic (default sym)")
ap.add_argument("--module", metavar="FILE.py:MATCHER",
                help="list, apply and simplify with the rules of this PatternMatcher instead (your own patterns; "
                     "`--entry` is then not used)")
ARGS = ap.parse_args()

from importlib.metadata import version  # noqa: E402

from tinygrad.dtype import dtypes  # noqa: E402
from tinygrad.uop.ops import AxisType, Ops, UOp, graph_rewrite  # noqa: E402
from tinygrad.uop.symbolic import sym  # noqa: E402
# Trees <-> UOps, shared with tinygrad_rules.py; it imports tinygrad, so it too comes after claim_stdout.
from tinygrad_uops import IDX, Back, build  # noqa: E402
import tinygrad_rules  # noqa: E402

OPS = ["neg", "not", "add", "sub", "mul", "min", "max", "div", "rem", "floordiv", "mod", "ceildiv",
       "lt", "le", "eq", "ne", "and", "or", "xor", "where", "shl", "shr", "bitand"]

HELLO = {
    "tileproof": tp.PROTOCOL,
    "name": f"tinygrad.module.{ARGS.module.rpartition(':')[2]}" if ARGS.module else f"tinygrad.{ARGS.entry}",
    "version": version("tinygrad"),
    # tinygrad moves ops into and out of gates (`a // where(c, y, invalid)` ->
    # `where(c, a // y, invalid)`) and its own z3 validator (uop/validate.py)
    # treats division as total: a division by zero in a lane is an
    # unspecified value there, not undefined behaviour of the whole program.
    # tileproof judges strictly first and records this relaxation beside its
    # verdict; the compiled code decides (the X86 renderer traps there).
    # Its pipeline builds `invalid` only as the masked arm of an index
    # `where`, and never compares a gated value (that would make a
    # bool-typed Invalid): such inputs are outside its input language.
    "profile": {"ops": OPS, "invalid": True, "integers": "unbounded", "bool_vars": True,
                "partial_ops": "unspecified", "input_language": {"invalid_compared": False}},
}


def make_vars(case):
    """The case's variables as tinygrad UOps -> (name -> UOp, UOp -> name, RANGE axis -> name)."""
    env, names, ranges = {}, {}, {}
    for i, v in enumerate(case.vars):
        if v.dtype == "bool":
            u = UOp.variable(v.name, bool(v.lo), bool(v.hi), dtypes.bool)
        elif ARGS.vars == "range" and v.lo == 0:
            u = UOp.range(v.hi + 1, i, AxisType.LOOP)
            ranges[i] = v.name
        else:
            u = UOp.variable(v.name, v.lo, v.hi, IDX)
        env[v.name] = u
        if u.op is not Ops.RANGE:
            names[u] = v.name
    return env, names, ranges


def simplify(case):
    env, names, ranges = make_vars(case)
    roots = [build(t, env) for t in case.trees]
    sink = UOp.sink(*roots)
    if TRACKED is not None:
        TRACKED.start(sink)
        try:
            out = graph_rewrite(sink, TRACKED, name="tileproof")
        except RuntimeError as e:
            # tinygrad's own loop guards, where Tracking's did not stop it
            # first: said with the rules that kept firing.
            if "infinite loop" not in str(e) or isinstance(e, tinygrad_rules.RewriteLoop):
                raise
            raise tinygrad_rules.RewriteLoop(TRACKED.loop_message(f"tinygrad raised \"{e}\"")) from e
    else:
        out = sink.simplify()
    if out.op is not Ops.SINK or len(out.src) != len(roots):
        raise RuntimeError(f"tinygrad returned {out.op} with {len(out.src)} sources for a SINK of {len(roots)}")
    back = Back(names, ranges)
    trees = [back(r, want) for r, want in zip(out.src, case.types)]
    return tp.Simplified(trees, TRACKED.take()) if TRACKED is not None else trees


class TinygradBounds(tp.Bounds):
    """tinygrad's range analysis (docs/protocol.md, section 7): `vmin` and
    `vmax` of the UOp the adapter builds for each node (for `min`, the root
    of its spelling `~max(~a, ~b)`), the bounds its rules read. They are
    exact Python integers, `+-2**799` (weakint's extremes) where tinygrad
    knows nothing; tileproof_peer.wire_bound clamps them to 64 bits."""

    def build(self, case):
        env, built = make_vars(case)[0], {}
        for t in case.trees:
            build(t, env, built)
        return built

    def bound(self, u):
        return u.vmin, u.vmax

    def op(self, u):
        # The root of the node's spelling: `neg` is built as `x * -1`, MUL.
        return u.op.name


# The simplifier's matcher with each rule's firings counted (the same pairs
# in the same order, so it rewrites exactly as the matcher does; it stops a
# rewrite that loops, naming the rules): `sym`, or the user's own matcher
# (`--module`). A campaign reports which of the rules it reached. Set in
# main, from the rules `rules` lists.
TRACKED = None


if __name__ == "__main__":
    from tinygrad_backend import TinygradBackend
    sys.setrecursionlimit(20000)
    rules = tinygrad_rules.module_rules(ARGS.module) if ARGS.module else tinygrad_rules.sym_rules(ARGS.matcher)
    if ARGS.module or (ARGS.entry == "sym" and ARGS.matcher == "sym"):
        TRACKED = tinygrad_rules.Tracking(rules)
    sys.exit(tp.serve(OUT, HELLO, simplify, width=None,
                      backend=TinygradBackend(make_vars, build, ARGS.entry, ARGS.vars, ARGS.module),
                      rules=tinygrad_rules.TinygradRules(rules), bounds=TinygradBounds()))
