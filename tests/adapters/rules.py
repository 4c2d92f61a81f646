#!/usr/bin/env python3
"""A fake peer with rules of its own, for tileproof's tests of `prove
--simplifier` (docs/protocol.md, section 6). Stdlib only.

Its simplifier answers every case unchanged; its rules are written over
tileproof's trees, with patterns whose holes are variables (`x`, `a`, `b`)
or constants (`c`):

    add_zero               x + 0 => x                                   sound
    mod_range_dropped      x mod c => x  if 0 <= x and c > 0            the range check x < c removed
    floordiv_guard_by_one  (a*c + b) // c => a  if 0 <= b <= c          the guard weakened by one (b < c)
    floordiv_tile          (a*c + b) // c => a  if 0 <= b < c and c > 0 sound
    raises_on_three        x // c raises when c == 3, else declines
    declines_always        x * 1: the function always returns None
    needs_fdiv             x / 2.0: no tileproof form
    lt_swap                a < b => b < a                               wrong, and its result rewrites back: it loops

`x`, `a` and `b` are variables of the case (their bounds are what the
guards test); an instance is built from the pools tileproof sends.
"""
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "adapters"))
import tileproof_peer as tp  # noqa: E402

OUT = tp.claim_stdout()
OPS = ["add", "mul", "floordiv", "mod", "lt", "where"]
HELLO = {"tileproof": 1, "name": "rules-toy", "version": "1.0",
         "profile": {"ops": OPS, "invalid": False, "integers": "int64", "bool_vars": False}}


def bounds(case, t):
    v = case.var[t[1]]
    return v.lo, v.hi


def guard_mod(case, env):
    lo, _ = bounds(case, env["x"])
    return env["x"] if lo >= 0 and env["c"][1] > 0 else None


def guard_tile(strict):
    def f(case, env):
        lo, hi = bounds(case, env["b"])
        c = env["c"][1]
        ok = lo >= 0 and c > 0 and (hi < c if strict else hi <= c)
        return env["a"] if ok else None
    return f


def raises(case, env):
    if env["c"][1] == 3:
        raise ValueError("three is not a divisor this rule takes")
    return None


# name -> (pattern, function, line); holes: "x", "a", "b" (variables), "c" (a constant)
RULES = {
    "add_zero": (["add", "x", ["const", 0]], lambda case, env: env["x"], 30),
    "mod_range_dropped": (["mod", "x", "c"], guard_mod, 31),
    "floordiv_guard_by_one": (["floordiv", ["add", ["mul", "a", "c"], "b"], "c"], guard_tile(False), 32),
    "floordiv_tile": (["floordiv", ["add", ["mul", "a", "c"], "b"], "c"], guard_tile(True), 33),
    "raises_on_three": (["floordiv", "x", "c"], raises, 34),
    "declines_always": (["mul", "x", ["const", 1]], lambda case, env: None, 35),
    "needs_fdiv": (None, None, 36),
    "lt_swap": (["lt", "a", "b"], lambda case, env: ["lt", env["b"], env["a"]], 37),
}


def text(p):
    if isinstance(p, str):
        return p
    if p[0] == "const":
        return str(p[1])
    sym = {"add": "+", "mul": "*", "floordiv": "//", "mod": "mod", "lt": "<"}[p[0]]
    return f"({text(p[1])} {sym} {text(p[2])})"


def match(p, t, env):
    if isinstance(p, str):
        want = "const" if p == "c" else "var"
        if t[0] != want:
            return False
        if p in env:
            return env[p] == t
        env[p] = t
        return True
    return len(p) == len(t) and p[0] == t[0] and (p[0] == "const" and p[1] == t[1] or p[0] != "const"
                                                   and all(match(a, b, env) for a, b in zip(p[1:], t[1:])))


class ToyRules(tp.Rules):
    def list(self):
        out = []
        for name, (pat, _, line) in RULES.items():
            out.append({"name": name, "pattern": "x / 2.0" if pat is None else text(pat),
                        "location": f"tests/adapters/rules.py:{line}", "function": name,
                        "tree": pat, "instantiable": True if pat is not None else "it needs FDIV, which tileproof has no op for"})
        return out

    def instances(self, name, spec):
        pat = RULES[name][0]
        rng = random.Random(f"{spec.get('seed', 0)}:{name}")
        consts = [c for c in spec["constants"] if -(1 << 20) < c < 1 << 20] or [1]
        ranges = [r for r in spec["ranges"] if -(1 << 20) < r[0] and r[1] < 1 << 20] or [[0, 3]]
        out, seen = [], set()
        for _ in range(spec.get("limit", 8) * 8):
            if len(out) >= spec.get("limit", 8):
                break
            vs, env = [], {}

            def fill(p):
                if isinstance(p, str):
                    if p not in env:
                        if p == "c":
                            env[p] = ["const", rng.choice(consts)]
                        else:
                            lo, hi = rng.choice(ranges)
                            vs.append({"name": p, "dtype": "index", "lo": lo, "hi": hi})
                            env[p] = ["var", p]
                    return env[p]
                return p if p[0] == "const" else [p[0]] + [fill(a) for a in p[1:]]
            tree = fill(pat)
            key = repr((vs, tree))
            if key not in seen:
                seen.add(key)
                out.append({"vars": vs, "trees": [tree]})
        return out, {}

    def apply(self, case, name):
        pat, fn, _ = RULES[name]
        env = {}
        if pat is None or not match(pat, case.trees[0], env):
            raise tp.Declined("the pattern does not match this instance")
        out = fn(case, env)
        if out is None:
            raise tp.Declined("the function returned None")
        return out


if __name__ == "__main__":
    sys.exit(tp.serve(OUT, HELLO, lambda case: case.trees, width=64, rules=ToyRules()))
