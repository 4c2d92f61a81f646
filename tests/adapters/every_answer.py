#!/usr/bin/env python3
"""A peer on adapters/tileproof_peer.py (stdlib only) with every capability
of the protocol, so that one session writes every answer form: the Rust
SDK's test (adapters/rust/tests/python_sdk.rs) reads each line with the
protocol's wire types, and tests/peer_stages.rs asks it for its stages.

The simplifier is a pipeline of two stages: `build` (the trees as given)
and `fold` (the entry point: `x * 1` and `1 * x` fold to `x`, the rule
`mul-one`). A variable named `boom` makes it raise. Its backend `eval`
answers values of every form (and traps with SIGFPE at a point whose first
value is 13); `broken` never compiles. Its bounds are each variable's range and
each constant's value, named by the op `VAR` or `CONST`."""

import os
import signal
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "adapters"))
import tileproof_peer as tp  # noqa: E402

OUT = tp.claim_stdout()
OPS = ["add", "mul", "neg", "lt", "where"]
STAGES = ["build", "fold"]
HELLO = {"tileproof": tp.PROTOCOL, "name": "every-answer", "version": "1.0",
         "profile": {"ops": OPS, "invalid": True, "integers": "int64", "bool_vars": True,
                     "partial_ops": "undefined", "input_language": {"invalid_compared": True}}}


def fold(t, fired):
    if t[0] in tp.LEAVES:
        return t
    t = [t[0]] + [fold(a, fired) for a in t[1:]]
    if t[0] == "mul" and ["const", 1] in t[1:]:
        fired["mul-one"] = fired.get("mul-one", 0) + 1
        return t[2] if t[1] == ["const", 1] else t[1]
    return t


def simplify(case, stage=None):
    if "boom" in case.var:
        raise RuntimeError("the peer fell over")
    if stage == "build":
        return case.trees
    fired = {}
    return tp.Simplified([fold(t, fired) for t in case.trees], fired)


class Backend(tp.Backend):
    names = ("eval", "broken")

    def compile(self, case, name):
        if name == "broken":
            raise tp.CompileError("the broken backend compiles nothing")
        return case

    def run(self, case, points):
        # The answer's form is under test, not its values: each expression
        # gives the point's first value, or INVALID where its second is 0.
        out = []
        for p in points:
            if p and p[0] == 13:
                os.kill(os.getpid(), signal.SIGFPE)
            out.append([tp.INVALID if len(p) > 1 and not p[1] else p[0] for _ in case.trees])
        return out

    def reproducer(self, case, name, point, expected, klass):
        return tp.Script(f"print({point!r})\n", {"txt2": f"{klass} on {name}\n"})


class Rules(tp.Rules):
    def list(self):
        return [{"name": "mul-one", "pattern": "x * 1", "location": f"every_answer.py:{fold.__code__.co_firstlineno}", "function": "fold",
                 "tree": {"name": None, "ops": ["mul"], "src": [{"name": "x"}, {"value": 1}]},
                 "instantiable": True},
                {"name": "opaque", "pattern": "a closure", "location": "", "function": "",
                 "tree": None, "instantiable": True, "instances": "tileproof"},
                {"name": "store", "pattern": "STORE(x)", "location": "", "function": "",
                 "tree": None, "instantiable": "it needs STORE, which tileproof has no op for"}]

    def instances(self, rule, spec):
        lo, hi = spec["ranges"][0]
        insts = [{"vars": [{"name": "x0", "dtype": "index", "lo": lo, "hi": hi}],
                  "trees": [["mul", ["var", "x0"], ["const", 1]]]}]
        return insts, {"the pattern has a constant tileproof cannot build": 2}

    def apply(self, case, rule):
        t = case.trees[0]
        if rule != "mul-one" or t[0] != "mul" or ["const", 1] not in t[1:]:
            raise tp.Declined("the pattern does not match")
        # The rule's one pattern made the rewrite.
        return tp.Simplified([fold(t, {})], {}, ["mul-one/x*1"])


class Bounds(tp.Bounds):
    def build(self, case):
        built = {}
        for t in case.trees:
            tp.fold(t, lambda t: t, lambda op, args: [op], built)
        return {k: (n, case) for k, n in built.items()}

    def bound(self, obj):
        n, case = obj
        if n[0] == "var":
            v = case.var[n[1]]
            return (v.lo, v.hi)
        return (n[1], n[1]) if n[0] in ("const", "bool") else None

    def op(self, obj):
        return obj[0][0].upper()


if __name__ == "__main__":
    sys.exit(tp.serve(OUT, HELLO, simplify, width=64, backend=Backend(), rules=Rules(), bounds=Bounds(),
                      stages=STAGES))
