#!/usr/bin/env python3
"""A fake peer with a fake backend, for tileproof's own tests of finding
classification (docs/protocol.md, section 5). Stdlib only.

    backend.py MODE [BACKEND,...]

The simplifier answers every case unchanged except for one deliberate
rewrite, chosen by MODE:

    rem-as-mod  every truncating `%` becomes a floor `mod`: a wrong value on
                every backend where the operands' signs differ
    hoist       `a // where(c, y, invalid)` becomes `where(c, a // y, invalid)`
                (what tinygrad does): the `eager` backend computes both arms
                and traps on the division by zero of the masked lane, the
                `lazy` backend computes only the selected arm
    reassoc     `(A - b) + C` with constants A, C becomes `(A + C) - b` with
                A + C wrapped to 64 bits: undefined (an overflow) in the
                model, the same value on a backend that wraps
    ceil        `a // b` becomes `a ceildiv b` (wrong off the multiples of b),
                and the backends have no ceildiv: the answer does not compile
    raise       raises on any case with a floor division

The backends offered are `eager,lazy` unless a second argument names some.
Backends `eager` and `lazy` evaluate trees with 64-bit wrapping arithmetic
and a SIGFPE on a division by zero, as a CPU does; `invalid` only as the
masked arm of a top-level gate (anything else: unsupported). Reproducers
are tiny scripts that print the finding and exit 1, each with the case's
expressions attached (`.case`).
"""
import os
import signal
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "adapters"))
import tileproof_peer as tp  # noqa: E402

OUT = tp.claim_stdout()
MODE = sys.argv[1]
OPS = ["neg", "not", "add", "sub", "mul", "min", "max", "div", "rem", "floordiv", "mod",
       "lt", "le", "eq", "ne", "and", "or", "xor", "where"]


def rewrite(t):
    if t[0] in tp.LEAVES:
        return t
    t = [t[0]] + [rewrite(a) for a in t[1:]]
    if MODE == "rem-as-mod" and t[0] == "rem":
        return ["mod", t[1], t[2]]
    if MODE == "hoist" and t[0] == "floordiv" and t[2][0] == "where" and t[2][3] == ["invalid"]:
        return ["where", t[2][1], ["floordiv", t[1], t[2][2]], ["invalid"]]
    if MODE == "reassoc" and t[0] == "add" and t[2][0] == "const" and t[1][0] == "sub" \
            and t[1][1][0] == "const":
        s = (t[1][1][1] + t[2][1] + (1 << 63)) % (1 << 64) - (1 << 63)
        return ["sub", ["const", s], t[1][2]]
    if MODE == "ceil" and t[0] == "floordiv":
        return ["ceildiv", t[1], t[2]]
    return t


def simplify(case):
    if MODE == "raise" and any(has(t, "floordiv") for t in case.trees):
        raise RuntimeError("the fake simplifier gave up")
    return [rewrite(t) for t in case.trees]


def has(t, op):
    return t[0] == op or any(has(a, op) for a in t[1:] if isinstance(a, list))


def wrap(v):
    return (v + (1 << 63)) % (1 << 64) - (1 << 63)


def trunc_div(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


class Fake(tp.Backend):
    names = tuple(sys.argv[2].split(",")) if len(sys.argv) > 2 else ("eager", "lazy")

    def compile(self, case, name):
        for t in case.trees:
            body = t
            while body[0] == "where" and ["invalid"] in body[2:]:
                body = body[2] if body[3] == ["invalid"] else body[3]
            if has(body, "invalid"):
                raise tp.Unsupported("an invalid under arithmetic has no compiled form")
            if has(t, "ceildiv"):
                raise tp.CompileError("no instruction for ceildiv")
        return (case, name == "eager")

    def run(self, kernel, points):
        case, eager = kernel
        out = []
        for p in points:
            env = {v.name: x for v, x in zip(case.vars, p)}
            out.append([self.ev(t, env, eager) for t in case.trees])
        return out

    def ev(self, t, env, eager):
        op = t[0]
        if op == "var":
            return env[t[1]]
        if op in ("const", "bool"):
            return t[1]
        if op == "invalid":
            return tp.INVALID
        if op == "where":
            c = self.ev(t[1], env, eager)
            if eager:
                a, b = self.ev(t[2], env, eager), self.ev(t[3], env, eager)
                return a if c else b
            return self.ev(t[2] if c else t[3], env, eager)
        args = [self.ev(a, env, eager) for a in t[1:]]
        if op in ("div", "rem", "floordiv", "mod") and args[1] == 0:
            os.kill(os.getpid(), signal.SIGFPE)
        a = args[0]
        b = args[1] if len(args) > 1 else None
        return {
            "neg": lambda: wrap(-a), "not": lambda: not a,
            "add": lambda: wrap(a + b), "sub": lambda: wrap(a - b), "mul": lambda: wrap(a * b),
            "min": lambda: min(a, b), "max": lambda: max(a, b),
            "div": lambda: wrap(trunc_div(a, b)), "rem": lambda: a - b * trunc_div(a, b),
            "floordiv": lambda: wrap(a // b), "mod": lambda: a % b,
            "lt": lambda: a < b, "le": lambda: a <= b, "eq": lambda: a == b, "ne": lambda: a != b,
            "and": lambda: a and b, "or": lambda: a or b, "xor": lambda: a != b,
        }[op]()

    def reproducer(self, case, name, point, expected, klass):
        return tp.Script(f"#!/usr/bin/env python3\n# {klass} on {name} at {list(point)}; the source gives "
                         f"{expected}\nprint({case.exprs!r})\nraise SystemExit(1)\n",
                         {"case": "".join(f"{e}\n" for e in case.exprs)})


tp.serve(OUT, {"tileproof": 1, "name": f"fake-{MODE}", "version": "1.0",
               "profile": {"ops": OPS, "invalid": True, "integers": "int64", "bool_vars": True,
                           "input_language": {"invalid_compared": False}}},
         simplify, width=64, backend=Fake())
