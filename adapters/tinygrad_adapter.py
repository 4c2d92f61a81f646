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

How ops map (each checked by experiment, see adapters/README.md): tinygrad's
own builders are used, so the input has the shape tinygrad itself makes:
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
(`--module FILE.py:MATCHER`): tinygrad_rules.py.

The backend (docs/protocol.md, section 5): `run` and `reproducer` requests for
tinygrad's three CPU renderers, `clang`, `llvm` and `x86`, which compile the
expressions literally (no symbolic pass): tinygrad_backend.py.

Its range analysis (docs/protocol.md, section 7): `bounds` requests answer
the `vmin`/`vmax` of every node's UOp (TinygradBounds).

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
                help="list and apply the rules of this PatternMatcher instead (your own patterns)")
ARGS = ap.parse_args()

from importlib.metadata import version  # noqa: E402

from tinygrad.dtype import Invalid, dtypes  # noqa: E402
from tinygrad.helpers import ceildiv  # noqa: E402
from tinygrad.uop.ops import AxisType, Ops, UOp, graph_rewrite  # noqa: E402
from tinygrad.uop.symbolic import sym  # noqa: E402

OPS = ["neg", "not", "add", "sub", "mul", "min", "max", "div", "rem", "floordiv", "mod", "ceildiv",
       "lt", "le", "eq", "ne", "and", "or", "xor", "where", "shl", "shr", "bitand"]

HELLO = {
    "tileproof": tp.PROTOCOL,
    "name": f"tinygrad.{ARGS.entry}",
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

IDX = dtypes.weakint

BUILD = {
    "neg": lambda a: -a,
    "not": lambda a: a.logical_not(),
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "min": lambda a, b: a.minimum(b),
    "max": lambda a, b: a.maximum(b),
    "div": lambda a, b: a.div(b, rounding_mode="trunc"),
    "rem": lambda a, b: a.fmod(b),
    "floordiv": lambda a, b: a // b,
    "mod": lambda a, b: a % b,
    "ceildiv": lambda a, b: ceildiv(a, b),
    "shl": lambda a, b: a << b,
    "shr": lambda a, b: a >> b,
    "bitand": lambda a, b: a & b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "eq": lambda a, b: a.eq(b),
    "ne": lambda a, b: a.ne(b),
    "and": lambda a, b: a & b,
    "or": lambda a, b: a | b,
    "xor": lambda a, b: a ^ b,
    "where": lambda c, a, b: c.where(a, b),
}


def build(tree, env, built=None):
    """Tree -> UOp (`built`: see tileproof_peer.fold)."""
    def leaf(t):
        if t[0] == "var":
            return env[t[1]]
        if t[0] == "const":
            return UOp.const(t[1], IDX)
        if t[0] == "bool":
            return UOp.const(t[1], dtypes.bool)
        return UOp.invalid()
    return tp.fold(tree, leaf, lambda op, args: BUILD[op](*args), built)


def is_const(u, v=None):
    return u.op is Ops.CONST and u.val is not Invalid and (v is None or (u.val == v and u.dtype is not dtypes.bool))


class Back:
    """UOp -> tree. `want` is the tileproof type the context expects ("int"
    or "bool"): it decides what an Invalid CONST (always dtype bool in
    tinygrad) means."""

    def __init__(self, names, ranges):
        self.names = names    # variable UOp -> name (UOps are hash-consed: same object)
        self.ranges = ranges  # RANGE axis id -> name
        self.memo = {}
        self.size = 0

    def __call__(self, u, want):
        key = (u, want)
        if key in self.memo:
            return self.memo[key]
        self.size += 1
        if self.size > 200000:
            raise tp.Unsupported("the result is too large to write as a tree")
        r = self.conv(u, want)
        self.memo[key] = r
        return r

    def complement(self, w):
        """The tree t with w == t ^ -1, if w spells one directly."""
        if w.op is Ops.XOR and w.dtype is IDX:
            for x, k in ((w.src[0], w.src[1]), (w.src[1], w.src[0])):
                if is_const(k, -1):
                    return self(x, "int")
        if is_const(w) and w.dtype is IDX:
            return tp.check_const(-1 - w.val)
        return None

    def conv(self, u, want):
        op, src, dt = u.op, u.src, u.dtype
        b = dt is dtypes.bool
        if op is Ops.CONST:
            if u.val is Invalid:
                if want == "int":
                    return ["invalid"]
                raise tp.Unsupported("the result has a bool-typed Invalid (tinygrad's poisoned comparison), which tileproof cannot express")
            if b:
                return ["bool", bool(u.val)]
            if isinstance(u.val, int) and dt is IDX:
                return tp.check_const(u.val)
            raise tp.Unsupported(f"the result has the constant {u.val!r} of dtype {dt}")
        if u in self.names:
            return ["var", self.names[u]]
        if op is Ops.RANGE and u.arg[0] in self.ranges:
            return ["var", self.ranges[u.arg[0]]]
        if op in (Ops.BUFFER, Ops.PARAM, Ops.RANGE, Ops.SPECIAL):
            raise tp.Unsupported(f"the result has a variable that is not the case's: {op} {u.arg}")
        if op is Ops.WHERE:
            return ["where", self(src[0], "bool"), self(src[1], want), self(src[2], want)]
        if op in (Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ):
            a, c = src
            ints = IDX in (a.dtype, c.dtype)
            if ints:
                name = {Ops.CMPLT: "lt", Ops.CMPNE: "ne", Ops.CMPEQ: "eq"}[op]
                return [name, self(a, "int"), self(c, "int")]
            if op is Ops.CMPLT:  # bool < bool: a < b is !a && b
                return ["and", ["not", self(a, "bool")], self(c, "bool")]
            for x, k in ((a, c), (c, a)):
                if is_const(k) and k.dtype is dtypes.bool:
                    # x != True is !x; x != False is x (and == the other way)
                    flip = bool(k.val) == (op is Ops.CMPNE)
                    return ["not", self(x, "bool")] if flip else self(x, "bool")
            x = ["xor", self(a, "bool"), self(c, "bool")]
            return x if op is Ops.CMPNE else ["not", x]
        if b:
            # bool ALU: tinygrad treats MUL as AND and ADD/MAX as OR
            m = {Ops.AND: "and", Ops.MUL: "and", Ops.OR: "or", Ops.ADD: "or", Ops.MAX: "or", Ops.XOR: "xor"}
            if op in m:
                return [m[op], self(src[0], "bool"), self(src[1], "bool")]
            if op is Ops.NEG:
                return ["not", self(src[0], "bool")]
            if op is Ops.CAST and dtypes.is_int(src[0].dtype):
                return ["ne", self(src[0], "int"), ["const", 0]]
            raise tp.Unsupported(f"the result has the bool op {op}")
        if dt is not IDX:
            raise tp.Unsupported(f"the result has a {op} of dtype {dt} (not tinygrad's index type weakint)")
        if op is Ops.XOR:
            for x, k in ((src[0], src[1]), (src[1], src[0])):
                if is_const(k, -1):
                    if x.op is Ops.MAX:
                        ca, cb = self.complement(x.src[0]), self.complement(x.src[1])
                        if ca is not None and cb is not None:
                            return ["min", ca, cb]  # ~max(~a, ~b) == min(a, b)
                    return ["sub", ["const", -1], self(x, "int")]  # x ^ -1 == -1 - x
            raise tp.Unsupported("the result has an integer XOR other than `^ -1`")
        m = {Ops.ADD: "add", Ops.SUB: "sub", Ops.MUL: "mul", Ops.MAX: "max", Ops.CDIV: "div", Ops.CMOD: "rem",
             Ops.FLOORDIV: "floordiv", Ops.FLOORMOD: "mod", Ops.SHL: "shl", Ops.SHR: "shr", Ops.AND: "bitand"}
        if op in m:
            return [m[op], self(src[0], "int"), self(src[1], "int")]
        if op is Ops.NEG:
            return ["neg", self(src[0], "int")]
        if op is Ops.CAST:
            s = src[0]
            if s.dtype is dtypes.bool:
                return ["where", self(s, "bool"), ["const", 1], ["const", 0]]
            if s.dtype is IDX:
                return self(s, "int")
        raise tp.Unsupported(f"the result has the op {op} ({dt}), which has no tileproof equivalent")


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
        TRACKED.take()
        out = graph_rewrite(sink, TRACKED, name="tileproof")
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


# `sym` with each rule's firings counted (the same pairs in the same order,
# so it rewrites exactly as `sym` does): a campaign reports which of
# tinygrad's rules it reached. Set in main, from the rules `rules` lists.
TRACKED = None


if __name__ == "__main__":
    from tinygrad_backend import TinygradBackend
    sys.setrecursionlimit(20000)
    import tinygrad_rules
    rules = tinygrad_rules.module_rules(ARGS.module) if ARGS.module else tinygrad_rules.sym_rules(ARGS.matcher)
    if ARGS.entry == "sym" and not ARGS.module and ARGS.matcher == "sym":
        TRACKED = tinygrad_rules.Tracking(rules)
    sys.exit(tp.serve(OUT, HELLO, simplify, width=None,
                      backend=TinygradBackend(make_vars, build, ARGS.entry, ARGS.vars),
                      rules=tinygrad_rules.TinygradRules(rules), bounds=TinygradBounds()))
