#!/usr/bin/env python3
"""Standalone test driver for tileproof peer adapters (protocol version 1).

    python3 adapters/test_adapters.py [--python PATH] [--random N] [--only NAME] [--timeout S]
    python3 adapters/test_adapters.py --cmd 'python3 my_adapter.py'    (any adapter)

Starts each adapter as `sh -c CMD` (as tileproof does), checks the hello line,
sends curated cases (constants, every op of the profile, tiled and gated
indices, division by zero) and N random ones (fixed seed), and checks that
every answer is well-formed and sound: the input and the answer are evaluated
with the reference evaluator below (exact Python integers, tileproof's
semantics: both division families, `where`, `invalid`, unconstrained values,
undefined behaviour) at every point of the variables' domains. An adapter
whose hello says `"bounds": true` is also asked for its peer's bounds of
every case (docs/protocol.md, section 7): the answer must have a bound (or
null) per node in pre-order, 64-bit `[lo, hi]` or bools, and every node's
value at every point where the source is defined must lie within its bound.
Then it sends malformed requests and checks that the adapter answers `error`
and keeps serving.

Per adapter it prints cases, answered, unsupported, errors and the mean
latency per case. An unsound answer to a curated case, a protocol violation or
a crash fails the run (and so do unsound bounds of a curated case); unsound
answers and bounds of random cases are printed as suspected peer bugs (with
the input, the answer and a point) and fail the run only with --strict.

`--python` is the interpreter that runs the adapters (default: the venv made
by adapters/setup-venv.sh, `.venv-peers/bin/python` at the repository root,
if it exists, else this interpreter). Stdlib only.
"""

import argparse
import itertools
import json
import os
import random
import re
import select
import shlex
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# ---- reference semantics (tileproof's, see engine/src/interp.rs) -------------

INV = "invalid"   # a masked lane
UNC = "unconstrained"


class Undefined(Exception):
    pass


INT_OPS = {"neg", "add", "sub", "mul", "min", "max", "div", "rem", "floordiv", "mod", "ceildiv",
           "shl", "shr", "bitand"}
CMP_OPS = {"lt", "le", "eq", "ne"}
BOOL_OPS = {"not", "and", "or", "xor"}
DIV_OPS = {"div", "rem", "floordiv", "mod", "ceildiv"}


def tdiv(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def exact(op, a, b):
    if op == "neg":
        return -a
    if op == "add":
        return a + b
    if op == "sub":
        return a - b
    if op == "mul":
        return a * b
    if op == "min":
        return min(a, b)
    if op == "max":
        return max(a, b)
    if op == "div":
        return tdiv(a, b)
    if op == "rem":
        return a - b * tdiv(a, b)
    if op == "floordiv":
        return a // b
    if op == "mod":
        return a - b * (a // b)
    if op == "ceildiv":
        return -((-a) // b)
    if op == "shl":
        return a << b
    if op == "shr":
        return a >> b
    if op == "bitand":
        return a & b
    raise AssertionError(op)


def evaluate(tree, env, width, unspecified=False, values=None):
    """The value of `tree` at `env`: an int, a bool, INV or UNC; raises
    Undefined. `width` is None (unbounded index) or the index width in bits.
    `unspecified` (the profile's `partial_ops`): a division by zero or an
    out-of-range shift gives UNC instead of undefined behaviour.
    Every operand is evaluated (undefined behaviour is whole-evaluation).
    With `values` (a dict), every node's value is recorded by `id` of the
    node."""
    lo = None if width is None else -(1 << (width - 1))
    hi = None if width is None else (1 << (width - 1)) - 1

    def fits(v):
        return width is None or lo <= v <= hi

    def ev(t):
        v = node(t)
        if values is not None:
            values[id(t)] = v
        return v

    def node(t):
        op = t[0]
        if op == "var":
            v = env[t[1]]
            if not isinstance(v, bool) and not fits(v):
                raise Undefined("index overflow")
            return v
        if op == "const":
            if not fits(t[1]):
                raise Undefined("index overflow")
            return t[1]
        if op == "bool":
            return t[1]
        if op == "invalid":
            return INV
        args = [ev(a) for a in t[1:]]
        if op == "where":
            c = args[0]
            if c is UNC:
                return UNC
            return args[1] if c else args[2]
        if op in CMP_OPS:
            if any(a is INV or a is UNC for a in args):
                return UNC
            a, b = args
            return {"lt": a < b, "le": a <= b, "eq": a == b, "ne": a != b}[op]
        if op in BOOL_OPS:
            # where an unspecified value is some value, `false && u` is false
            # and `true || u` true (engine/src/meaning/semantics.rs)
            if unspecified and op in ("and", "or") and any(a is not UNC and a == (op == "or") for a in args):
                return op == "or"
            if UNC in args:
                return UNC
            if op == "not":
                return not args[0]
            a, b = args
            return {"and": a and b, "or": a or b, "xor": a != b}[op]
        assert op in INT_OPS, op
        partial = False  # the result is unspecified at this point
        if op in DIV_OPS:
            d = args[1]
            if d is UNC or d == 0:
                if not unspecified:
                    raise Undefined("division by zero")
                partial = True
            if op in ("div", "floordiv", "ceildiv") and d == -1 and width is not None and \
                    (args[0] is UNC or args[0] == lo):
                raise Undefined("MIN / -1")
        if op in ("shl", "shr"):
            # defined for 0 <= s < W, W = 64 for unbounded integers (tileproof's
            # engine judges them at 64 bits)
            s = args[1]
            if s is UNC or (s is not INV and (s < 0 or s >= (width or 64))):
                if not unspecified:
                    raise Undefined("shift amount out of range")
                partial = True
        if INV in args:
            return INV
        if partial:
            return UNC
        if UNC in args:
            if width is not None and unconstrained_overflow(op, args):
                raise Undefined("index overflow (unconstrained operand)")
            return UNC
        r = exact(op, args[0], args[1] if len(args) > 1 else None)
        if not fits(r):
            raise Undefined("index overflow")
        return r

    return ev(tree)


def unconstrained_overflow(op, args):
    """interp.rs `unconstrained_overflow` for index: some value of the
    unconstrained operand makes the op overflow."""
    val = [a if a is not UNC else None for a in args]
    if op == "neg":
        return True
    if op == "add":
        k = val[0] if val[0] is not None else val[1]
        return k != 0
    if op == "sub":
        if val[0] is None and val[1] is not None:
            return val[1] != 0
        if val[0] is not None and val[1] is None:
            return val[0] != -1
        return True
    if op == "mul":
        k = val[0] if val[0] is not None else val[1]
        return k not in (0, 1)
    if op in ("shl",):
        return True
    return False


def refines(s, t):
    """None if target value t refines source value s, else the verdict."""
    if s is UNC:
        return None
    if s is INV and t is INV:
        return None
    if s is INV or t is INV:
        return "validity-differs"
    if type(s) is type(t) and s == t:
        return None
    return "value-differs"


def domain(vars_):
    return itertools.product(*[range(v["lo"], v["hi"] + 1) for v in vars_])


def first_failure(vars_, src, tgt, width, unspecified=False):
    """The first point where `tgt` does not refine `src` (both lists of
    trees), as (env, verdict, src values, tgt values), or None."""
    for pt in domain(vars_):
        env = {v["name"]: (bool(x) if v["dtype"] == "bool" else x) for v, x in zip(vars_, pt)}
        try:
            sv = [evaluate(t, env, width, unspecified) for t in src]
        except Undefined:
            continue
        try:
            tv = [evaluate(t, env, width, unspecified) for t in tgt]
        except Undefined as e:
            return env, f"target-undefined ({e})", sv, None
        for s, t in zip(sv, tv):
            v = refines(s, t)
            if v:
                return env, v, sv, tv
    return None


# ---- text format: printer and parser (engine/src/parse.rs grammar) -----------

INFIX = {"add": "+", "sub": "-", "mul": "*", "div": "/", "rem": "%", "floordiv": "//", "mod": "mod",
         "shl": "<<", "shr": ">>", "bitand": "&", "lt": "<", "le": "<=", "eq": "==", "ne": "!=",
         "and": "&&", "or": "||", "xor": "^"}


def show(t):
    """Tree -> text, fully parenthesized (always safe)."""
    op = t[0]
    if op == "var":
        return t[1]
    if op == "const":
        return str(t[1])
    if op == "bool":
        return "true" if t[1] else "false"
    if op == "invalid":
        return "invalid"
    if op == "neg":
        return f"-({show(t[1])})"
    if op == "not":
        return f"!({show(t[1])})"
    if op in INFIX:
        return f"({show(t[1])} {INFIX[op]} {show(t[2])})"
    return f"{op}({', '.join(show(a) for a in t[1:])})"


LEVELS = [["||"], ["&&"], ["^"], ["==", "!="], ["<", "<=", ">", ">="], ["&"], ["<<", ">>"], ["+", "-"],
          ["*", "/", "%", "//", "mod", "floordiv", "ceildiv"]]
BINOP = {"||": "or", "&&": "and", "^": "xor", "==": "eq", "!=": "ne", "<": "lt", "<=": "le", "&": "bitand",
         "<<": "shl", ">>": "shr", "+": "add", "-": "sub", "*": "mul", "/": "div", "%": "rem",
         "//": "floordiv", "floordiv": "floordiv", "mod": "mod", "ceildiv": "ceildiv"}
TOKEN = re.compile(r"\s*(?:(\d[\d_]*)|([A-Za-z_]\w*)|(//|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%<>!^&(),]))")


def parse(text):
    """Text -> tree. Raises ValueError."""
    toks, pos = [], 0
    text = text.rstrip()
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m:
            raise ValueError(f"unexpected character at {pos}: {text[pos:pos + 10]!r}")
        pos = m.end()
        if m.group(1):
            toks.append(("int", int(m.group(1).replace("_", ""))))
        elif m.group(2):
            toks.append(("name", m.group(2)))
        else:
            toks.append(("p", m.group(3)))
    toks.append(("end", None))
    i = [0]

    def peek():
        return toks[i[0]]

    def take():
        t = toks[i[0]]
        i[0] += 1
        return t

    def expect(p):
        t = take()
        if t != ("p", p):
            raise ValueError(f"expected {p!r}, found {t[1]!r}")

    def binary(level):
        if level == len(LEVELS):
            return unary()
        lhs = binary(level + 1)
        while True:
            k, v = peek()
            if (k == "p" or (k == "name" and v in ("mod", "floordiv", "ceildiv"))) and v in LEVELS[level]:
                take()
                rhs = binary(level + 1)
                if v == ">":
                    lhs = ["lt", rhs, lhs]
                elif v == ">=":
                    lhs = ["le", rhs, lhs]
                else:
                    lhs = [BINOP[v], lhs, rhs]
            else:
                return lhs

    def unary():
        if peek() == ("p", "-"):
            take()
            if peek()[0] == "int":
                return ["const", -take()[1]]
            return ["neg", unary()]
        if peek() == ("p", "!"):
            take()
            return ["not", unary()]
        return primary()

    def primary():
        k, v = take()
        if k == "int":
            return ["const", v]
        if k == "p" and v == "(":
            e = binary(0)
            expect(")")
            return e
        if k == "name":
            if v in ("true", "false"):
                return ["bool", v == "true"]
            if v == "invalid":
                return ["invalid"]
            if peek() == ("p", "("):
                take()
                args = []
                if peek() != ("p", ")"):
                    while True:
                        args.append(binary(0))
                        if peek() == ("p", ","):
                            take()
                            continue
                        break
                expect(")")
                arity = {"min": 2, "max": 2, "where": 3, "floordiv": 2, "mod": 2, "ceildiv": 2}
                if v not in arity or len(args) != arity[v]:
                    raise ValueError(f"unknown call {v}/{len(args)}")
                return [v] + args
            return ["var", v]
        raise ValueError(f"expected an expression, found {v!r}")

    e = binary(0)
    if peek()[0] != "end":
        raise ValueError(f"trailing input at {peek()[1]!r}")
    return e


def ops_of(tree, acc=None):
    acc = set() if acc is None else acc
    if tree[0] not in ("var", "const", "bool"):
        acc.add(tree[0])
    for a in tree[1:]:
        if isinstance(a, list):
            ops_of(a, acc)
    return acc


def type_of(t, vtypes):
    """"int" / "bool", or raises ValueError (tileproof's typing rules)."""
    op = t[0]
    if op == "var":
        if len(t) != 2 or t[1] not in vtypes:
            raise ValueError(f"unknown variable {t!r}")
        return vtypes[t[1]]
    if op == "const":
        if len(t) != 2 or not isinstance(t[1], int) or isinstance(t[1], bool) or not -(1 << 63) <= t[1] < (1 << 63):
            raise ValueError(f"bad const {t!r}")
        return "int"
    if op == "bool":
        if len(t) != 2 or not isinstance(t[1], bool):
            raise ValueError(f"bad bool {t!r}")
        return "bool"
    if op == "invalid":
        if len(t) != 1:
            raise ValueError("bad invalid")
        return "int"
    args = [type_of(a, vtypes) for a in t[1:]]
    if op == "where":
        if len(args) != 3 or args[0] != "bool" or args[1] != args[2]:
            raise ValueError(f"ill-typed where {args}")
        return args[1]
    sig = {**{o: (("int", "int"), "int") for o in INT_OPS - {"neg"}}, "neg": (("int",), "int"),
           **{o: (("int", "int"), "bool") for o in CMP_OPS}, "not": (("bool",), "bool"),
           **{o: (("bool", "bool"), "bool") for o in BOOL_OPS - {"not"}}}
    if op not in sig or tuple(args) != sig[op][0]:
        raise ValueError(f"ill-typed or unknown op {op} {args}")
    return sig[op][1]


# ---- cases -----------------------------------------------------------------------

def V(name, lo, hi):
    return {"name": name, "dtype": "index", "lo": lo, "hi": hi}


def B(name):
    return {"name": name, "dtype": "bool", "lo": 0, "hi": 1}


R0, R1 = V("r0", 0, 7), V("r1", 0, 3)
N0, N1 = V("n0", -6, 6), V("n1", -3, 3)
P = B("p")

# (label, vars, expressions in the text format)
CURATED = [
    ("constants", [R0], ["3", "-5", "0", "true", "r0"]),
    ("add sub mul", [R0, R1], ["r0 + 0", "r0 * 1", "r0 - r0", "(r0 + 2) * 3 - r0", "r0 * 0", "0 - r1"]),
    ("neg", [N0], ["-(n0 - 3)", "-(-(n0))"]),
    ("min max", [R0, R1, N1], ["min(r0, 3)", "max(r0 - 4, -2)", "min(r0, r1)", "max(n1, r1)", "min(r0, 100)",
                               "max(r0, 7)", "min(n1 * 2, n1)"]),
    ("div rem (truncating)", [N0, R1], ["(n0 - 4) / 3", "(n0 - 4) % 3", "(n0 * 4 + r1) / 4", "(n0 * 4 + r1) % 4",
                                         "n0 / -2", "n0 % -2"]),
    ("floordiv mod", [N0, R1], ["(n0 - 4) // 3", "(n0 - 4) mod 3", "(n0 * 4 + r1) // 4", "(n0 * 4 + r1) mod 4",
                                 "n0 // -2", "n0 mod -2", "(n0 // 2) // 3"]),
    ("ceildiv", [N0, R0], ["ceildiv(n0 - 4, 3)", "ceildiv(r0 * 4 + 3, 4)", "ceildiv(n0, -2)"]),
    ("comparisons", [R0, R1], ["r0 < 3", "r0 <= r1", "r0 == r1", "r0 != 3", "r0 > 2", "r0 >= r1", "r0 < 8",
                               "r0 * 4 + r1 < 32"]),
    ("bool ops", [R0, P], ["p && (r0 < 3)", "p || !(p)", "p ^ (r0 < 9)", "!(!(p))", "p && !(p)", "(r0 < 3) || (r0 >= 3)"]),
    ("where", [R0, R1, P], ["where(r0 < 3, r0, 3)", "where(p, r0, r1)", "where(r0 < 8, r0, r1)",
                            "where(p, r0 < 3, r1 < 2)"]),
    ("bit ops", [R0, N1], ["r0 << 2", "n1 >> 1", "(r0 * 4) >> 2", "r0 & 3", "n1 & -2", "(r0 << 2) >> 2"]),
    ("tiled index", [V("r0", 0, 15), R1], ["(r0*4 + r1) // 4", "(r0*4 + r1) mod 4",
                                             "((r0*4 + r1) // 8) * 8 + (r0*4 + r1) mod 8",
                                             "((r0*4 + r1) / 8) * 8 + (r0*4 + r1) % 8"]),
    ("tiled index, lane may be -1", [V("r0", 0, 7), V("r1", -1, 3)], ["(r0*4 + r1) // 4", "(r0*4 + r1) mod 4"]),
    ("gated index", [V("r0", 0, 31), R1], ["where(r0 < 30, ((r0*4 + r1) // 4) * 4 + (r0*4 + r1) mod 4, invalid)",
                                             "(r0*4 + r1) // 4"]),
    ("gated arithmetic", [R0, R1, P], ["where(p, r0, invalid) + 1", "where(r0 < 4, r0, invalid) * 0",
                                       "where(r0 < 4 && r1 < 2, r0*4 + r1, invalid)",
                                       "where(r0 < 6, (r0*4 + r1) // 4, invalid)",
                                       "where(p, invalid, r0)", "min(where(r0 < 6, r0, invalid), 3)"]),
    ("gated comparison", [R0], ["where(r0 < 6, r0, invalid) < 3"]),
    ("division by zero", [R0], ["r0 // 0"]),
    ("division by a variable", [N1, V("d", -2, 2)], ["n1 // d", "n1 mod d", "n1 / d", "n1 % d"]),
    # one end of a peer's bound beyond 64 bits (tinygrad's 2**799 for a shift by a variable, TVM's +inf for an
    # overflowing product): the adapter clamps it, keeping the other end
    ("bounds beyond 64 bits", [R0, R1], ["max(r0, r0 << r1)", "r0 * 4611686018427387904"]),
]


# Minimal reproductions of suspected peer bugs (corpus/peers/README.md), run with
# --known-bugs: (peer name prefix, label, vars, expressions).
KNOWN_PEER_BUGS = [
    ("tinygrad.sym", "simplify_valid turns an integer & chain into a product", [V("x", -2, 2)], ["x & (x & 3)"]),
    ("tinygrad", "0 // x raises ZeroDivisionError", [V("x", -2, 2)], ["0 // x"]),
    ("tvm", "const_int_bound of 1 >> r is [0, 0], but 1 >> 0 is 1", [V("r", -4, 4)], ["1 >> r"]),
]


def make_case(cid, vars_, exprs):
    trees = [parse(e) for e in exprs]
    return {"id": cid, "vars": vars_, "exprs": [show(t) for t in trees], "trees": trees}


def fits_profile(case, prof):
    ops = set(prof["ops"])
    for t in case["trees"]:
        used = ops_of(t)
        if "invalid" in used:
            if not prof["invalid"]:
                return False
            used.discard("invalid")
        if not used <= ops:
            return False
    if not prof["bool_vars"] and any(v["dtype"] == "bool" for v in case["vars"]):
        return False
    return True


def random_case(rng, cid, prof):
    """A random case of 1-2 expressions over the profile's ops, on a domain
    of at most a few thousand points."""
    ops = set(prof["ops"])
    nvars = rng.randint(1, 3)
    vars_ = []
    for k in range(nvars):
        lo = rng.choice([0, 0, 0, -1, -3, -8])
        hi = lo + rng.choice([1, 3, 7, 15])
        vars_.append(V(f"x{k}", lo, hi))
    if prof["bool_vars"] and rng.random() < 0.3:
        vars_.append(B("p"))
    ivars = [v["name"] for v in vars_ if v["dtype"] == "index"]
    bvars = [v["name"] for v in vars_ if v["dtype"] == "bool"]
    int_bin = [o for o in ("add", "sub", "mul", "min", "max", "div", "rem", "floordiv", "mod", "ceildiv",
                           "shl", "shr", "bitand") if o in ops]
    cmp = [o for o in ("lt", "le", "eq", "ne") if o in ops]
    bbin = [o for o in ("and", "or", "xor") if o in ops]

    def const(small=False):
        return ["const", rng.choice([0, 1, 2, 3, 4, 8, -1, -2, -4] if not small else [1, 2, 3, 4, 8, -2, -3])]

    def gen_int(d):
        r = rng.random()
        if d <= 0 or r < 0.2:
            return ["var", rng.choice(ivars)] if rng.random() < 0.7 else const()
        if r < 0.3 and "where" in ops:
            c = gen_bool(d - 1)
            a = gen_int(d - 1)
            b = ["invalid"] if prof["invalid"] and rng.random() < 0.5 else gen_int(d - 1)
            return ["where", c, a, b] if rng.random() < 0.8 else ["where", c, b, a]
        if r < 0.35 and "neg" in ops:
            return ["neg", gen_int(d - 1)]
        op = rng.choice(int_bin)
        if op in DIV_OPS:
            return [op, gen_int(d - 1), const(small=True) if rng.random() < 0.85 else gen_int(d - 1)]
        if op in ("shl", "shr"):
            return [op, gen_int(d - 1), ["const", rng.randint(0, 3)]]
        if op == "mul" and rng.random() < 0.7:
            return [op, gen_int(d - 1), const()]
        return [op, gen_int(d - 1), gen_int(d - 1)]

    def gen_bool(d):
        r = rng.random()
        if bvars and (d <= 0 or r < 0.2):
            return ["var", rng.choice(bvars)]
        if (d <= 0 or r < 0.7) and cmp:
            return [rng.choice(cmp), gen_int(max(d - 1, 0)), gen_int(max(d - 1, 0)) if rng.random() < 0.5 else const()]
        if r < 0.8 and "not" in ops:
            return ["not", gen_bool(d - 1)]
        if bbin:
            return [rng.choice(bbin), gen_bool(d - 1), gen_bool(d - 1)]
        return ["bool", rng.random() < 0.5]

    trees = [gen_int(rng.randint(2, 4)) for _ in range(rng.randint(1, 2))]
    return {"id": cid, "vars": vars_, "exprs": [show(t) for t in trees], "trees": trees}


# ---- talking to an adapter ---------------------------------------------------------------

class Dead(Exception):
    pass


class Peer:
    def __init__(self, cmd, stderr_path, timeout):
        self.cmd, self.timeout = cmd, timeout
        self.err = open(stderr_path, "wb")
        self.p = subprocess.Popen(["sh", "-c", cmd], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=self.err)
        self.buf = b""

    def readline(self, timeout):
        deadline = time.monotonic() + timeout
        fd = self.p.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Dead(f"no answer within {timeout:.0f}s (hang)")
            r, _, _ = select.select([fd], [], [], left)
            if r:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    raise Dead(f"EOF (exit code {self.p.poll()})")
                self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode("utf-8", "replace")

    def send(self, text):
        try:
            self.p.stdin.write(text.encode() + b"\n")
            self.p.stdin.flush()
        except BrokenPipeError:
            raise Dead("broken pipe (the adapter exited)")

    def ask(self, obj_or_text):
        text = obj_or_text if isinstance(obj_or_text, str) else json.dumps(obj_or_text)
        t0 = time.perf_counter()
        self.send(text)
        line = self.readline(self.timeout)
        return line, time.perf_counter() - t0

    def close(self):
        try:
            self.p.stdin.close()
        except BrokenPipeError:
            pass
        try:
            rc = self.p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = "killed (did not exit after stdin closed)"
        self.err.close()
        return rc


def check_hello(line):
    h = json.loads(line)
    problems = []
    if h.get("tileproof") != 1:
        problems.append("`tileproof` is not 1")
    for k in ("name", "version"):
        if not isinstance(h.get(k), str) or not h.get(k):
            problems.append(f"`{k}` missing")
    prof = h.get("profile")
    if not isinstance(prof, dict):
        return h, problems + ["`profile` missing"]
    known = {"neg", "not", "add", "sub", "mul", "min", "max", "div", "rem", "floordiv", "mod", "ceildiv",
             "lt", "le", "eq", "ne", "and", "or", "xor", "where", "shl", "shr", "bitand"}
    if not isinstance(prof.get("ops"), list) or not set(prof["ops"]) <= known:
        problems.append(f"`ops` must be a list of tileproof op names, got {prof.get('ops')}")
    if not isinstance(prof.get("invalid"), bool):
        problems.append("`invalid` must be a bool")
    if prof.get("integers") not in ("unbounded", "int32", "int64", "wrapping32", "wrapping64"):
        problems.append(f"`integers` is {prof.get('integers')!r}")
    if not isinstance(prof.get("bool_vars"), bool):
        problems.append("`bool_vars` must be a bool")
    return h, problems


def width_of(prof):
    return {"unbounded": None, "int32": 32, "int64": 64}.get(prof["integers"])


class Stats:
    def __init__(self):
        self.cases = self.answered = self.unsupported = self.errors = 0
        self.bounds_answered = self.bounds_unsupported = self.bounds_nodes = self.bounds_points = 0
        self.latency = []
        self.failures = []      # protocol violations and unsound curated answers
        self.findings = []      # unsound random answers (suspected peer bugs)
        self.reasons = {}


def judge(peer, case, prof, stats, curated, label, verbose):
    """Sends one case and checks the answer."""
    line, dt = peer.ask(case)
    stats.cases += 1
    stats.latency.append(dt)
    try:
        ans = json.loads(line)
    except ValueError:
        stats.failures.append(f"{label}: garbage answer {line[:200]!r}")
        return
    if not isinstance(ans, dict) or ans.get("id") != case["id"]:
        stats.failures.append(f"{label}: answer id {ans.get('id') if isinstance(ans, dict) else '?'} for request {case['id']}")
        return
    kinds = [k for k in ("exprs", "trees", "unsupported", "error") if k in ans]
    if len(kinds) != 1:
        stats.failures.append(f"{label}: answer must have exactly one of exprs/trees/unsupported/error: {line[:200]}")
        return
    kind = kinds[0]
    if kind == "unsupported":
        stats.unsupported += 1
        reason = str(ans["unsupported"])
        key = re.sub(r"-?\d+", "N", reason)[:90]
        stats.reasons[key] = stats.reasons.get(key, 0) + 1
        if verbose:
            print(f"    {label}: unsupported: {reason}")
        return
    if kind == "error":
        stats.errors += 1
        msg = (f"{label}: error answer: {ans['error']}\n"
               f"      vars:   {case['vars']}\n"
               f"      input:  {' ; '.join(case['exprs'])}")
        (stats.failures if curated else stats.findings).append(msg)
        return
    stats.answered += 1
    out = ans[kind]
    if not isinstance(out, list) or len(out) != len(case["trees"]):
        stats.failures.append(f"{label}: {len(out) if isinstance(out, list) else '?'} results for {len(case['trees'])} inputs")
        return
    try:
        trees = [parse(x) for x in out] if kind == "exprs" else out
        vt = {v["name"]: ("bool" if v["dtype"] == "bool" else "int") for v in case["vars"]}
        for s, t in zip(case["trees"], trees):
            if type_of(s, vt) != type_of(t, vt):
                raise ValueError(f"result type differs from the input's: {show(t)}")
    except (ValueError, TypeError, IndexError) as e:
        stats.failures.append(f"{label}: malformed result: {e}: {line[:200]}")
        return
    if verbose:
        for s, t in zip(case["trees"], trees):
            print(f"    {label}: {show(s)}  =>  {show(t)}")
    bad = first_failure(case["vars"], case["trees"], trees, width_of(prof),
                        prof.get("partial_ops") == "unspecified")
    if bad:
        env, verdict, sv, tv = bad
        msg = (f"{label}: UNSOUND ({verdict}) at {env}\n"
               f"      vars:   {case['vars']}\n"
               f"      input:  {' ; '.join(show(t) for t in case['trees'])}\n"
               f"      output: {' ; '.join(show(t) for t in trees)}\n"
               f"      values: input {sv}, output {tv}")
        (stats.failures if curated else stats.findings).append(msg)


def preorder(t):
    """The nodes of a tree in pre-order: the order of a `bounds` answer."""
    out = [t]
    for a in t[1:]:
        if isinstance(a, list):
            out += preorder(a)
    return out


I64 = (-(1 << 63), (1 << 63) - 1)


def bounds_problem(bounds, case):
    """Why a `bounds` answer is malformed for `case`, or None: one list per
    expression, one entry per node in pre-order, each null or `[lo, hi]`
    (64-bit integers for an index node, bools for a bool one)."""
    vt = {v["name"]: ("bool" if v["dtype"] == "bool" else "int") for v in case["vars"]}
    if not isinstance(bounds, list) or len(bounds) != len(case["trees"]):
        return f"{len(bounds) if isinstance(bounds, list) else 'no'} bound lists for {len(case['trees'])} expressions"
    for tree, bs in zip(case["trees"], bounds):
        nodes = preorder(tree)
        if not isinstance(bs, list) or len(bs) != len(nodes):
            return f"{len(bs) if isinstance(bs, list) else 'no'} bounds for {show(tree)}, of {len(nodes)} nodes"
        for n, b in zip(nodes, bs):
            if b is None:
                continue
            kind = bool if type_of(n, vt) == "bool" else int
            if not isinstance(b, list) or len(b) != 2 or any(type(x) is not kind for x in b) or \
                    kind is int and not all(I64[0] <= x <= I64[1] for x in b):
                return f"the bound {json.dumps(b)} of {show(n)} is not [lo, hi] of {kind.__name__}" + \
                    (" in 64 bits" if kind is int else "")
    return None


def bounds_violation(bounds, case, width):
    """The first value of a node outside its bound, at a point where the
    whole source is defined (strict model, as tileproof checks), as text, or
    None; and how many points were checked. Unbounded integers are judged at
    64 bits: a point where some value does not fit is an overflow there."""
    checked = 0
    for pt in domain(case["vars"]):
        env = {v["name"]: (bool(x) if v["dtype"] == "bool" else x) for v, x in zip(case["vars"], pt)}
        values = {}
        try:
            for t in case["trees"]:
                evaluate(t, env, width, False, values)
        except Undefined:
            continue
        if any(isinstance(v, int) and not isinstance(v, bool) and not I64[0] <= v <= I64[1] for v in values.values()):
            continue
        checked += 1
        for tree, bs in zip(case["trees"], bounds):
            for n, b in zip(preorder(tree), bs):
                v = values[id(n)]
                if b is None or v is INV or v is UNC:
                    continue
                if not b[0] <= v <= b[1]:
                    return f"the bound {b} of {show(n)} excludes its value {v} at {env}", checked
    return None, checked


def judge_bounds(peer, case, prof, stats, curated, label, verbose):
    """Asks for the peer's bounds of the case (docs/protocol.md, section 7)
    and checks them: well-formed, and every node's value at every point of
    the domain within its bound."""
    line, _ = peer.ask(dict(case, bounds={}))
    try:
        ans = json.loads(line)
    except ValueError:
        stats.failures.append(f"{label}: bounds: garbage answer {line[:200]!r}")
        return
    kinds = [k for k in ("bounds", "unsupported", "error") if k in ans] if isinstance(ans, dict) else []
    if len(kinds) != 1 or ans.get("id") != case["id"]:
        stats.failures.append(f"{label}: bounds: not one of bounds/unsupported/error for id {case['id']}: {line[:200]}")
        return
    if kinds[0] == "unsupported":
        stats.bounds_unsupported += 1
        return
    if kinds[0] == "error":
        msg = f"{label}: bounds: error answer: {ans['error']}\n      input:  {' ; '.join(case['exprs'])}"
        (stats.failures if curated else stats.findings).append(msg)
        return
    problem = bounds_problem(ans["bounds"], case)
    if problem:
        stats.failures.append(f"{label}: bounds: malformed: {problem}")
        return
    stats.bounds_answered += 1
    stats.bounds_nodes += sum(b is not None for bs in ans["bounds"] for b in bs)
    bad, points = bounds_violation(ans["bounds"], case, width_of(prof))
    stats.bounds_points += points
    if verbose:
        print(f"    {label}: bounds {json.dumps(ans['bounds'])}")
    if bad:
        msg = (f"{label}: UNSOUND BOUNDS: {bad}\n"
               f"      vars:   {case['vars']}\n"
               f"      input:  {' ; '.join(case['exprs'])}")
        (stats.failures if curated else stats.findings).append(msg)


# (what, request, id of the `error` answer, checked for the toy example too)
MALFORMED = [
    ("not JSON", "this is not json", None, True),
    ("JSON array", "[1, 2, 3]", None, True),
    ("no trees", '{"id": 901, "vars": []}', 901, True),
    ("wrong arity", '{"id": 902, "vars": [], "trees": [["add", ["const", 1]]]}', 902, True),
    ("unknown variable", '{"id": 903, "vars": [], "trees": [["var", "nope"]]}', 903, False),
    ("ill-typed", '{"id": 904, "vars": [], "trees": [["add", ["bool", true], ["const", 1]]]}', 904, False),
    ("bad bounds", '{"id": 905, "vars": [{"name": "x", "dtype": "index", "lo": 3, "hi": 1}], "trees": [["var", "x"]]}', 905, False),
]


def run_adapter(label, cmd, args, logdir, strict=True):
    print(f"== {label}: {cmd}")
    stats = Stats()
    peer = Peer(cmd, os.path.join(logdir, re.sub(r"\W+", "_", label) + ".stderr"), args.timeout)
    t0 = time.perf_counter()
    try:
        hello_line = peer.readline(args.startup)
    except Dead as e:
        peer.close()
        print(f"  FAIL: no hello: {e}; stderr in {peer.err.name}")
        stats.failures.append(f"no hello: {e}")
        return stats
    startup = time.perf_counter() - t0
    try:
        hello, problems = check_hello(hello_line)
    except ValueError:
        hello, problems = None, [f"hello is not JSON: {hello_line[:200]!r}"]
    print(f"  hello ({startup:.2f}s): {hello_line}")
    if problems:
        stats.failures += [f"hello: {p}" for p in problems]
        peer.close()
        return stats
    prof = hello["profile"]
    cid = 0
    try:
        # curated cases, each alone, then the ones outside the profile
        skipped = []
        for name, vars_, exprs in CURATED:
            cid += 1
            case = make_case(cid, vars_, exprs)
            if fits_profile(case, prof):
                judge(peer, case, prof, stats, True, name, args.verbose)
                if hello.get("bounds"):
                    judge_bounds(peer, case, prof, stats, True, name, args.verbose)
            else:
                skipped.append(case)
        # outside the profile: must be `unsupported`
        for case in skipped[:3]:
            line, _ = peer.ask(case)
            ans = json.loads(line)
            if "unsupported" not in ans:
                stats.failures.append(f"a case outside the profile ({' ; '.join(case['exprs'])}) was not unsupported: {line[:200]}")
        # random cases
        rng = random.Random(args.seed)
        for k in range(args.random):
            cid += 1
            case = random_case(rng, 10000 + k, prof)
            judge(peer, case, prof, stats, False, f"random #{k}", args.verbose)
            if hello.get("bounds"):
                judge_bounds(peer, case, prof, stats, False, f"random #{k}", args.verbose)
        if args.known_bugs:
            for k, (peer_name, what, vars_, exprs) in enumerate(KNOWN_PEER_BUGS):
                case = make_case(20000 + k, vars_, exprs)
                if hello["name"].startswith(peer_name) and fits_profile(case, prof):
                    judge(peer, case, prof, stats, False, f"known bug ({what})", args.verbose)
                    if hello.get("bounds"):
                        judge_bounds(peer, case, prof, stats, False, f"known bug ({what})", args.verbose)
        # malformed requests: a clean `error`, then keep serving
        for what, text, rid, basic in MALFORMED:
            line, _ = peer.ask(text)
            if not (basic or strict):
                continue
            try:
                ans = json.loads(line)
                ok = isinstance(ans, dict) and "error" in ans and ans.get("id") == rid
            except ValueError:
                ok = False
            if not ok:
                stats.failures.append(f"malformed request ({what}): expected an `error` answer with id {rid}, got {line[:200]!r}")
        case = make_case(999, [R0], ["r0 + 0"])
        judge(peer, case, prof, stats, True, "after malformed input", args.verbose)
    except Dead as e:
        stats.failures.append(f"adapter died: {e}; stderr in {peer.err.name}")
    rc = peer.close()
    if rc != 0:
        stats.failures.append(f"exit code {rc} after stdin closed (want 0)")
    lat = sum(stats.latency) / len(stats.latency) * 1000 if stats.latency else 0.0
    print(f"  cases {stats.cases}, answered {stats.answered}, unsupported {stats.unsupported}, "
          f"errors {stats.errors}, mean latency {lat:.2f} ms/case")
    if hello is not None and hello.get("bounds"):
        print(f"  bounds: {stats.bounds_answered} answered ({stats.bounds_nodes} nodes bounded, checked at "
              f"{stats.bounds_points} points), {stats.bounds_unsupported} unsupported")
    for reason, n in sorted(stats.reasons.items(), key=lambda kv: -kv[1]):
        print(f"    unsupported x{n}: {reason}")
    for f in stats.failures:
        print(f"  FAIL {f}")
    for f in stats.findings:
        print(f"  SUSPECTED PEER BUG {f}")
    return stats


def main():
    ap = argparse.ArgumentParser(description="Test tileproof peer adapters standalone.")
    default_py = os.path.join(ROOT, ".venv-peers", "bin", "python")
    ap.add_argument("--python", default=default_py if os.path.exists(default_py) else sys.executable)
    ap.add_argument("--random", type=int, default=200, help="random cases per adapter (default 200)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", help="run only the adapters whose label contains this")
    ap.add_argument("--cmd", action="append", help="test this adapter command (run with sh -c) instead of the "
                    "built-in list; may be given several times")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds per case")
    ap.add_argument("--startup", type=float, default=120.0, help="seconds to wait for the hello")
    ap.add_argument("--strict", action="store_true", help="fail on suspected peer bugs too")
    ap.add_argument("--known-bugs", action="store_true", help="also send the minimal reproductions of the "
                    "suspected peer bugs recorded in corpus/peers/README.md")
    ap.add_argument("--verbose", "-v", action="store_true", help="print every input and answer")
    args = ap.parse_args()
    py = shlex.quote(args.python)
    a = lambda f: shlex.quote(os.path.join(HERE, f))  # noqa: E731
    adapters = [
        ("example", f"{shlex.quote(sys.executable)} {a('example_adapter.py')}"),
        ("tinygrad sym", f"{py} {a('tinygrad_adapter.py')}"),
        ("tinygrad simplify", f"{py} {a('tinygrad_adapter.py')} --entry simplify"),
        ("tinygrad sym, range vars", f"{py} {a('tinygrad_adapter.py')} --vars range"),
        ("tvm simplify int64", f"{py} {a('tvm_adapter.py')}"),
        ("tvm canonical int64", f"{py} {a('tvm_adapter.py')} --entry canonical"),
        ("tvm rewrite int64", f"{py} {a('tvm_adapter.py')} --entry rewrite"),
        ("tvm simplify int32", f"{py} {a('tvm_adapter.py')} --dtype int32"),
        ("mlir construct", f"{py} {a('mlir_adapter.py')} --entry construct"),
        ("mlir simplify_affine_expr", f"{py} {a('mlir_adapter.py')} --entry simplify"),
        ("mlir canonicalize", f"{py} {a('mlir_adapter.py')} --entry canonicalize"),
        ("mlir affine-simplify-structures", f"{py} {a('mlir_adapter.py')} --entry structures"),
    ]
    if args.cmd:
        adapters = [(c, c) for c in args.cmd]
    if args.only:
        adapters = [x for x in adapters if args.only in x[0]]
    logdir = tempfile.mkdtemp(prefix="tileproof-adapters-")
    print(f"adapter python: {args.python}; stderr logs in {logdir}")
    passed = failed = 0
    findings = 0
    for label, cmd in adapters:
        s = run_adapter(label, cmd, args, logdir, strict=label.startswith(("tinygrad", "tvm")))
        findings += len(s.findings)
        if s.failures or (args.strict and s.findings):
            failed += 1
        else:
            passed += 1
    print(f"suspected peer bugs (random and known-bug cases): {findings}")
    print(f"adapters: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
