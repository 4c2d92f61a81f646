#!/usr/bin/env python3
"""Standalone test driver for tileproof peer adapters (protocol version 1).

    python3 adapters/test_adapters.py [--python PATH] [--tileproof PATH] [--random N] [--only NAME]
    python3 adapters/test_adapters.py --cmd 'python3 my_adapter.py'    (any adapter)

Starts each adapter as `sh -c CMD` (as tileproof does), checks the hello line,
sends curated cases (constants, every op of the profile, tiled and gated
indices, division by zero) and N random ones (fixed seed), and checks that
every answer has the protocol's form: the request's id, exactly one of
`exprs`/`trees`/`unsupported`/`error`, one result per expression. An adapter
whose hello says `"bounds": true` is also asked for its peer's bounds of
every case (docs/protocol.md, section 7): one list per expression. Then it
sends malformed requests and checks that the adapter answers `error` and
keeps serving.

Whether an answer means what its case means is tileproof's to judge, not
this script's (tileproof's semantics have one copy, in Rust): the same cases
are written as tileproof case files and replayed against the adapter by
`tileproof replay --json --simplifier CMD`, one adapter process of its own
for them all, running while this script talks to the adapter. tileproof
checks each answer at every point of the case's (small) domain, each node's
bounds against its values, and a well-formed answer's types; an `error` is a
finding unless the source means nothing at any point (then it counts here
as `unsupported`, with tileproof's reason).

Per adapter it prints cases, answered, unsupported, errors, the mean
latency per case, and tileproof's verdicts. A protocol violation, a crash, or
a curated case tileproof finds wrong (an unsound answer or bounds, an
`error` on a case that means something, a malformed answer) fails the run;
random cases tileproof finds wrong are printed as suspected peer bugs (with
the point and every node's value there) and fail the run only with --strict.

`--python` is the interpreter that runs the adapters (default: the venv made
by adapters/setup-venv.sh, `.venv-peers/bin/python` at the repository root,
if it exists, else this interpreter). `--tileproof` is the binary that judges
(default: target/release/tileproof, made by `cargo build --release`).
Stdlib only.
"""

import argparse
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

DIV_OPS = {"div", "rem", "floordiv", "mod", "ceildiv"}


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
    # a bound whose interval arithmetic overflows int32 though the node's values fit (Halide's bounds
    # inference leaves `signed_integer_overflow` in the region: no bound, never a wrong one)
    ("a bound past int32", [V("r0", 0, 5)], ["r0 + where(r0 != 0, r0, 2147483643)"]),
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


class Stats:
    def __init__(self):
        self.cases = self.answered = self.unsupported = self.errors = 0
        self.bounds_answered = self.bounds_unsupported = self.bounds_errors = self.bounds_nodes = 0
        self.latency = []
        self.failures = []      # protocol violations, and curated cases tileproof finds wrong
        self.findings = []      # random cases tileproof finds wrong (suspected peer bugs)
        self.reasons = {}
        self.kinds = {}         # case id -> the kind of the adapter's answer to this script

    def reason(self, why):
        key = re.sub(r"-?\d+", "N", why)[:90]
        self.reasons[key] = self.reasons.get(key, 0) + 1


def ask_checked(peer, request, kinds, label, stats):
    """Sends `request`; returns the answer, its kind and the latency when
    the answer has the protocol's form (a JSON object with the request's id
    and exactly one of `kinds`), else records the failure and returns None
    for the first two. What the answer means is tileproof's to judge."""
    line, dt = peer.ask(request)
    try:
        ans = json.loads(line)
    except ValueError:
        stats.failures.append(f"{label}: garbage answer {line[:200]!r}")
        return None, None, dt
    if not isinstance(ans, dict) or ans.get("id") != request["id"]:
        got = ans.get("id") if isinstance(ans, dict) else "?"
        stats.failures.append(f"{label}: answer id {got} for request {request['id']}")
        return None, None, dt
    present = [k for k in kinds if k in ans]
    if len(present) != 1:
        stats.failures.append(f"{label}: answer must have exactly one of {'/'.join(kinds)}: {line[:200]}")
        return None, None, dt
    return ans, present[0], dt


def judge(peer, case, stats, label, verbose):
    """Sends one case and checks the answer's form: one result per input."""
    ans, kind, dt = ask_checked(peer, case, ("exprs", "trees", "unsupported", "error"), label, stats)
    stats.cases += 1
    stats.latency.append(dt)
    if ans is None:
        return
    stats.kinds[case["id"]] = kind
    if kind == "unsupported":
        stats.unsupported += 1
        stats.reason(str(ans["unsupported"]))
        if verbose:
            print(f"    {label}: unsupported: {ans['unsupported']}")
        return
    if kind == "error":
        # A finding or not, tileproof says (`settle`).
        stats.errors += 1
        if verbose:
            print(f"    {label}: error: {ans['error']}")
        return
    stats.answered += 1
    out = ans[kind]
    if not isinstance(out, list) or len(out) != len(case["trees"]):
        stats.failures.append(f"{label}: {len(out) if isinstance(out, list) else '?'} results for "
                              f"{len(case['trees'])} inputs")
    elif verbose:
        for s, t in zip(case["exprs"], out):
            print(f"    {label}: {s}  =>  {t if isinstance(t, str) else json.dumps(t)}")


def judge_bounds(peer, case, stats, label, verbose):
    """Asks for the peer's bounds of the case (docs/protocol.md, section 7)
    and checks their form: one list per expression. tileproof checks each
    node's bound against the node's values."""
    ans, kind, _ = ask_checked(peer, dict(case, bounds={}), ("bounds", "unsupported", "error"),
                               f"{label}: bounds", stats)
    if kind == "unsupported":
        stats.bounds_unsupported += 1
    elif kind == "error":
        # judged by tileproof with the case's answer (`settle`)
        stats.bounds_errors += 1
    if kind != "bounds":
        return
    bounds = ans["bounds"]
    if not isinstance(bounds, list) or len(bounds) != len(case["trees"]) or \
            not all(isinstance(bs, list) for bs in bounds):
        stats.failures.append(f"{label}: bounds: not one list per expression: {json.dumps(bounds)[:200]}")
        return
    stats.bounds_answered += 1
    stats.bounds_nodes += sum(b is not None for bs in bounds for b in bs)
    if verbose:
        print(f"    {label}: bounds {json.dumps(bounds)}")


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


# ---- tileproof's judgement ----------------------------------------------------------

def case_text(case, label):
    """The case as a tileproof case file (docs/formats.md)."""
    lines = [f"# test_adapters: {label}"]
    for v in case["vars"]:
        lines.append(f"var {v['name']}: bool" if v["dtype"] == "bool"
                     else f"var {v['name']} in [{v['lo']}, {v['hi']}]")
    lines += [f"expr {e}" for e in case["exprs"]]
    return "\n".join(lines) + "\n"


class Judge:
    """tileproof's judgement of the cases sent to one adapter: `tileproof
    replay --json --simplifier CMD` over them written as case files, with
    an adapter process of its own for them all, running while this script
    talks to the adapter. Each answer is checked at every point of the
    case's domain under the profile's integers (the strict model), the
    peer's bounds too when its hello offers them, and an `error` is a
    finding unless the source means nothing at any point."""

    def __init__(self, tileproof, cmd, cases, timeout, logdir, slug):
        self.dir = os.path.join(logdir, slug + ".cases")
        os.mkdir(self.dir)
        for case, label, _ in cases:
            with open(os.path.join(self.dir, self.file(case)), "w") as f:
                f.write(case_text(case, label))
        self.out = open(os.path.join(logdir, slug + ".tileproof"), "w+")
        self.t0 = time.perf_counter()
        # --no-smt: every domain here is small enough for the JIT to walk
        # whole (a report says `proved` when it did); --no-confirm: a
        # finding here is reported, not classified on the peer's backends.
        argv = [tileproof, "replay", "--json", "--no-smt", "--no-confirm", "--peer-jobs", "1",
                "--peer-timeout", str(timeout), "--simplifier", cmd, self.dir]
        self.p = subprocess.Popen(argv, stdout=self.out, stderr=subprocess.STDOUT)

    @staticmethod
    def file(case):
        return f"case-{case['id']:05d}.txt"

    def reports(self):
        """Waits for tileproof: its report per case file, the seconds it
        took, and why it failed as a whole (or None)."""
        rc = self.p.wait()
        seconds = time.perf_counter() - self.t0
        self.out.seek(0)
        text = self.out.read()
        self.out.close()
        reports, other = {}, []
        for line in text.splitlines():
            try:
                r = json.loads(line)
                reports[os.path.basename(r["file"])] = r["report"]
            except (ValueError, KeyError, TypeError):
                other.append(line)
        # 0: every case sound; 2: some case not (or not answered)
        problem = None if rc in (0, 2) else f"tileproof replay exited {rc}: {' | '.join(other[-5:])}"
        return reports, seconds, problem


def settle(stats, case, label, curated, report):
    """Counts tileproof's report on one case: sound at every point, not
    answered (no finding), or a failure (curated) / suspected peer bug."""
    if report is None:
        problem = "tileproof gave no report on it"
    elif report["ok"] and report["proved"]:
        return "sound"
    elif report["ok"]:
        problem = f"not checked at every point: {report['line']}"
    elif not report["found"] and report["unsupported"] is not None:
        if stats.kinds.get(case["id"]) == "error":
            # tileproof's triage: the source means nothing anywhere, so
            # the peer raising there is no finding (docs/protocol.md)
            stats.errors -= 1
            stats.unsupported += 1
            stats.reason(report["unsupported"])
        return "not answered"
    else:
        problem = f"{', '.join(report['found'])}: {report['line']}\n" + \
            "".join(f"    {line}\n" for line in report["detail"].splitlines())
    msg = (f"{label}: {problem.rstrip()}\n"
           f"      vars:   {case['vars']}\n"
           f"      input:  {' ; '.join(case['exprs'])}\n"
           f"      answer: {' ; '.join(report['answer']) if report else '?'}")
    (stats.failures if curated else stats.findings).append(msg)
    return "wrong"


def run_adapter(label, cmd, args, logdir, strict=True):
    print(f"== {label}: {cmd}")
    slug = re.sub(r"\W+", "_", label)
    stats = Stats()
    peer = Peer(cmd, os.path.join(logdir, slug + ".stderr"), args.timeout)
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
    # Every case judged, as (case, label, curated): the curated ones within
    # the profile, the random ones, the known bugs, and one after the
    # malformed requests.
    curated, skipped = [], []
    for cid, (name, vars_, exprs) in enumerate(CURATED, 1):
        case = make_case(cid, vars_, exprs)
        (curated.append((case, name, True)) if fits_profile(case, prof) else skipped.append(case))
    rng = random.Random(args.seed)
    others = [(random_case(rng, 10000 + k, prof), f"random #{k}", False) for k in range(args.random)]
    if args.known_bugs:
        for k, (peer_name, what, vars_, exprs) in enumerate(KNOWN_PEER_BUGS):
            case = make_case(20000 + k, vars_, exprs)
            if hello["name"].startswith(peer_name) and fits_profile(case, prof):
                others.append((case, f"known bug ({what})", False))
    last = (make_case(999, [R0], ["r0 + 0"]), "after malformed input", True)
    cases = curated + others + [last]
    verdict = Judge(args.tileproof, cmd, cases, args.timeout, logdir, slug)

    def send(batch, bounds=hello.get("bounds")):
        for case, name, _ in batch:
            judge(peer, case, stats, name, args.verbose)
            if bounds:
                judge_bounds(peer, case, stats, name, args.verbose)

    try:
        send(curated)
        # outside the profile: must be `unsupported`
        for case in skipped[:3]:
            line, _ = peer.ask(case)
            ans = json.loads(line)
            if "unsupported" not in ans:
                stats.failures.append(f"a case outside the profile ({' ; '.join(case['exprs'])}) was not "
                                      f"unsupported: {line[:200]}")
        send(others)
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
                stats.failures.append(f"malformed request ({what}): expected an `error` answer with id {rid}, "
                                      f"got {line[:200]!r}")
        send([last], bounds=False)
    except Dead as e:
        stats.failures.append(f"adapter died: {e}; stderr in {peer.err.name}")
    rc = peer.close()
    if rc != 0:
        stats.failures.append(f"exit code {rc} after stdin closed (want 0)")
    reports, seconds, problem = verdict.reports()
    if problem:
        stats.failures.append(problem)
    outcomes = {"sound": 0, "not answered": 0, "wrong": 0}
    for case, name, is_curated in cases:
        outcomes[settle(stats, case, name, is_curated, reports.get(Judge.file(case)))] += 1
    lat = sum(stats.latency) / len(stats.latency) * 1000 if stats.latency else 0.0
    print(f"  cases {stats.cases}, answered {stats.answered}, unsupported {stats.unsupported}, "
          f"errors {stats.errors}, mean latency {lat:.2f} ms/case")
    if hello.get("bounds"):
        print(f"  bounds: {stats.bounds_answered} answered ({stats.bounds_nodes} nodes bounded), "
              f"{stats.bounds_unsupported} unsupported, {stats.bounds_errors} errors")
    print(f"  tileproof ({seconds:.1f}s, {verdict.dir}): {outcomes['sound']} sound at every point"
          f"{' (bounds too)' if hello.get('bounds') else ''}, {outcomes['not answered']} not answered, "
          f"{outcomes['wrong']} wrong")
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
    ap.add_argument("--tileproof", default=os.path.join(ROOT, "target", "release", "tileproof"),
                    help="the tileproof binary that judges the answers (default: target/release/tileproof)")
    args = ap.parse_args()
    if not (os.path.isfile(args.tileproof) and os.access(args.tileproof, os.X_OK)):
        print(f"test_adapters.py: no tileproof binary at {args.tileproof}: build it with "
              f"`cargo build --release`, or pass --tileproof PATH", file=sys.stderr)
        return 1
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
        ("halide lower", f"{py} {a('halide_adapter.py')}"),
    ]
    if args.cmd:
        adapters = [(c, c) for c in args.cmd]
    if args.only:
        adapters = [x for x in adapters if args.only in x[0]]
    logdir = tempfile.mkdtemp(prefix="tileproof-adapters-")
    print(f"adapter python: {args.python}; judged by {args.tileproof}; logs and case files in {logdir}")
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
