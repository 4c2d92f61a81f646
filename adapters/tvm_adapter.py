#!/usr/bin/env python3
"""tileproof peer adapter for Apache TVM 0.27.0.post1 (protocol version 1).

    python3 adapters/tvm_adapter.py [--entry simplify|canonical|rewrite] [--dtype int64|int32]

Builds TVM TIR expressions (`tvm.tirx`) from tileproof's trees, binds each
index variable to its range with `tvm.sym.Analyzer.bind(var,
Range(lo, hi + 1))` (TVM ranges are half-open), runs one of the analyzer's
simplifiers on each expression, and converts the result back to trees.

`--entry`: `simplify` (default; `Analyzer.simplify`, rewrite then canonical:
what TVM's passes call), `canonical` (`canonical_simplify`) or `rewrite`
(`rewrite_simplify`). The hello's name is `tvm.simplify`,
`tvm.canonical_simplify` or `tvm.rewrite_simplify`.

`--dtype`: the dtype of every index variable and constant, `int64` (default)
or `int32`; the profile's `integers` says which. TVM's simplifier assumes
index arithmetic never overflows, so a point counts only where tileproof's
source is defined at that width. int64 is the default because it is the
dtype TVM uses for shapes and indices of large tensors (Relax and TIR
shape vars are int64), and because at 64 bits the fewest points of a case
are ruled out by overflow, so the most of each case is checked; run int32
(TVM's default loop-variable dtype) as a second configuration.

Op mapping (each checked by experiment, see docs/peers/tvm.md). Nodes are
built with the node constructors (`tirx.Add(a, b)`, ...), not the Python
operators or `tirx.floordiv` helpers, which fold constants before the
simplifier sees them:
`+ - *` -> Add Sub Mul; `neg` -> `Mul(a, -1)` (what TVM's `-a` builds);
`min max` -> Min Max; `/ %` -> Div Mod (TVM's truncating division:
`truncdiv`/`truncmod` build these); `// mod` -> FloorDiv FloorMod;
`< <= == !=` -> LT LE EQ NE; `&& || !` -> And Or Not; bool `^` -> NE on bools;
`where` -> Select (both arms evaluated, like tileproof's `where`; never
`if_then_else`, which is lazy); `<< >> &` -> LShift RShift BitwiseAnd.
`ceildiv` is not offered: TVM has no node for it, and `tirx.ceildiv` builds
`(a + b - 1) // b`, which is wrong for negative divisors. TVM has no
`invalid`.

Back from TVM: GT/GE read as swapped LT/LE; EQ/NE on bools as (not) xor;
Cast int->bool as `x != 0`, bool->int as `where(b, 1, 0)`, to the same dtype
as nothing; every other node (other casts, Call, Let, ...) and any
int dtype other than the chosen one gives `unsupported`.

Backends (`run`, `reproducer`; docs/protocol.md section 5): `llvm` (the
expressions compiled literally for the CPU) and `pipeline` (TVM's
unmodified pipeline), in tvm_backend.py.

The range analysis (`bounds`; docs/protocol.md section 7): the
`const_int_bound` of every node, with its type key (`prim.Mul`; TVMBounds).
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tileproof_peer as tp  # noqa: E402

OUT = tp.claim_stdout()

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--entry", choices=["simplify", "canonical", "rewrite"], default="simplify")
ap.add_argument("--dtype", choices=["int64", "int32"], default="int64")
ARGS = ap.parse_args()

from importlib.metadata import version  # noqa: E402

import tvm  # noqa: E402,F401
from tvm import ir, tirx  # noqa: E402
from tvm.sym import Analyzer, ConstIntBound  # noqa: E402
from tvm_backend import TVMBackend  # noqa: E402

DT = ARGS.dtype
BITS = 64 if DT == "int64" else 32
LO, HI = -(1 << (BITS - 1)), (1 << (BITS - 1)) - 1

OPS = ["neg", "not", "add", "sub", "mul", "min", "max", "div", "rem", "floordiv", "mod",
       "lt", "le", "eq", "ne", "and", "or", "xor", "where", "shl", "shr", "bitand"]

ENTRY = {"simplify": "simplify", "canonical": "canonical_simplify", "rewrite": "rewrite_simplify"}[ARGS.entry]

HELLO = {
    "tileproof": tp.PROTOCOL,
    # The dtype is part of the name (int64, the default, is left out): a
    # finding at int32 is not one at int64, and their corpora are apart.
    "name": f"tvm.{ENTRY}" + ("" if DT == "int64" else f".{DT}"),
    "version": version("apache-tvm"),
    "profile": {"ops": OPS, "invalid": False, "integers": DT, "bool_vars": True},
}


def const(v):
    if not LO <= v <= HI:
        raise tp.Unsupported(f"the constant {v} does not fit {DT}")
    return tirx.const(v, DT)


BUILD = {
    "neg": lambda a: tirx.Mul(a, const(-1)),
    "not": lambda a: tirx.Not(a),
    "add": tirx.Add, "sub": tirx.Sub, "mul": tirx.Mul,
    "min": tirx.Min, "max": tirx.Max,
    "div": tirx.Div, "rem": tirx.Mod,
    "floordiv": tirx.FloorDiv, "mod": tirx.FloorMod,
    "shl": tirx.LShift, "shr": tirx.RShift, "bitand": tirx.BitwiseAnd,
    "lt": tirx.LT, "le": tirx.LE, "eq": tirx.EQ, "ne": tirx.NE,
    "and": tirx.And, "or": tirx.Or, "xor": tirx.NE,
    "where": tirx.Select,
}


def build(tree, env, built=None):
    """Tree -> TIR expression (`built`: see tileproof_peer.fold)."""
    def leaf(t):
        if t[0] == "var":
            return env[t[1]]
        if t[0] == "const":
            return const(t[1])
        if t[0] == "bool":
            return tirx.const(t[1], "bool")
        raise tp.Unsupported("TVM has no invalid value")
    def node(op, args):
        if op not in BUILD:  # an answer sent back by `run` may use any tileproof op
            raise tp.Unsupported(f"TVM has no node for `{op}`")
        return BUILD[op](*args)
    return tp.fold(tree, leaf, node, built)


BIN = {tirx.Add: "add", tirx.Sub: "sub", tirx.Mul: "mul", tirx.Min: "min", tirx.Max: "max",
       tirx.Div: "div", tirx.Mod: "rem", tirx.FloorDiv: "floordiv", tirx.FloorMod: "mod",
       tirx.LShift: "shl", tirx.RShift: "shr", tirx.BitwiseAnd: "bitand"}
CMP = {tirx.LT: ("lt", False), tirx.LE: ("le", False), tirx.GT: ("lt", True), tirx.GE: ("le", True),
       tirx.EQ: ("eq", False), tirx.NE: ("ne", False)}


def ty(e):
    return str(e.ty)


class Back:
    def __init__(self, env):
        self.env = env
        self.size = 0

    def __call__(self, e):
        self.size += 1
        if self.size > 200000:
            raise tp.Unsupported("the result is too large to write as a tree")
        t, k = ty(e), type(e)
        if k is tirx.IntImm:
            if t == "bool":
                return ["bool", bool(e.value)]
            if t == DT:
                return tp.check_const(int(e.value))
            raise tp.Unsupported(f"the result has a constant of dtype {t}")
        if k is tirx.Var:
            name = e.name
            if name in self.env and self.env[name].same_as(e):
                return ["var", name]
            raise tp.Unsupported(f"the result has a variable `{name}` that is not the case's")
        if t not in (DT, "bool"):
            raise tp.Unsupported(f"the result has a {k.__name__} of dtype {t}")
        if k in BIN and t == DT:
            return [BIN[k], self(e.a), self(e.b)]
        if k in CMP:
            name, swap = CMP[k]
            a, b = (e.b, e.a) if swap else (e.a, e.b)
            if ty(a) == "bool" and ty(b) == "bool" and k in (tirx.EQ, tirx.NE):
                x = ["xor", self(a), self(b)]
                return x if k is tirx.NE else ["not", x]
            if ty(a) == DT and ty(b) == DT:
                return [name, self(a), self(b)]
            raise tp.Unsupported(f"the result compares {ty(a)} with {ty(b)}")
        if k is tirx.And and t == "bool":
            return ["and", self(e.a), self(e.b)]
        if k is tirx.Or and t == "bool":
            return ["or", self(e.a), self(e.b)]
        if k is tirx.Not:
            return ["not", self(e.a)]
        if k is tirx.Select:
            return ["where", self(e.condition), self(e.true_value), self(e.false_value)]
        if k is tirx.Cast:
            s = ty(e.value)
            if s == t:
                return self(e.value)
            if s == "bool" and t == DT:
                return ["where", self(e.value), ["const", 1], ["const", 0]]
            if s == DT and t == "bool":
                return ["ne", self(e.value), ["const", 0]]
            raise tp.Unsupported(f"the result has a cast from {s} to {t}")
        if k is tirx.Call:
            raise tp.Unsupported(f"the result has a call to {e.op.name}")
        raise tp.Unsupported(f"the result has a {k.__name__} node, which has no tileproof equivalent")


def bind_range(v):
    """(begin, end) of the half-open Range index variable `v` is bound to,
    or None when it stays unbound (TVM then knows less, which is sound).
    Unbound: a range that is the whole dtype or reaches its top (the
    half-open end would not fit DT), or reaches outside DT (no value of a
    DT variable is there), or is wider than a Range can hold: TVM computes a
    Range's extent (end - begin) in DT without an overflow check, so
    `[-2^62, 2^62]` would bind as max -2^63 + 1."""
    if v.lo < LO or v.hi >= HI or v.hi + 1 - v.lo >= HI:
        return None
    return (v.lo, v.hi + 1)


def simplify(case):
    az, env, exprs = analyzer_and_exprs(case)
    run = getattr(az, ENTRY)
    back = Back(env)
    return [back(run(e)) for e in exprs]


def analyzer_and_exprs(case, built=None):
    """The case's variables bound in a fresh Analyzer, and its expressions
    as TIR (also what bench/tvm_simplify.py times; `built`: see
    tileproof_peer.fold)."""
    az = Analyzer()
    env = {}
    for v in case.vars:
        if v.dtype == "bool":
            # A bool variable cannot be bound to a range; with lo == hi TVM
            # simply knows less than tileproof, which is sound to assume.
            env[v.name] = tirx.Var(v.name, "bool")
            continue
        x = tirx.Var(v.name, DT)
        r = bind_range(v)
        if r is not None:
            az.bind(x, ir.Range(const(r[0]), const(r[1])))
        env[v.name] = x
    return az, env, [build(t, env, built) for t in case.trees]


class TVMBounds(tp.Bounds):
    """TVM's range analysis (docs/protocol.md, section 7):
    `Analyzer.const_int_bound` of each node's TIR, in an Analyzer with the
    variables bound as for the simplifier. Its infinities
    (`ConstIntBound.NEG_INF`, `POS_INF`: -(2^63 - 1) and 2^63 - 1, whatever
    the dtype) are no bound on that side: read literally, NEG_INF would
    exclude the int64 minimum, which an int64 can hold.
    tileproof_peer.wire_bound makes such an end the dtype's extreme (a bound
    infinite on both sides is null)."""

    def build(self, case):
        built = {}
        az = analyzer_and_exprs(case, built)[0]
        return {k: (az, e) for k, e in built.items()}

    def bound(self, obj):
        az, e = obj
        b = az.const_int_bound(e)
        return (None if b.min_value == ConstIntBound.NEG_INF else b.min_value,
                None if b.max_value == ConstIntBound.POS_INF else b.max_value)

    def op(self, obj):
        # The node's type key (`prim.Mul`): the transfer function of
        # const_int_bound that gave the bound is the one of that node type.
        e = obj[1]
        info = getattr(e, "__tvm_ffi_type_info__", None)
        return info.type_key if info is not None else type(e).__name__


if __name__ == "__main__":
    sys.setrecursionlimit(20000)
    backend = TVMBackend(DT, ENTRY, build, bind_range, HELLO["version"])
    sys.exit(tp.serve(OUT, HELLO, simplify, width=BITS, backend=backend, bounds=TVMBounds()))
