#!/usr/bin/env python3
"""Checks the backends of tileproof peer adapters (docs/protocol.md, section 5). Stdlib only.

    python3 adapters/test_backends.py [--python PATH] [--only NAME] [--random N] [--seed S] [--points N] [--strict]
    python3 adapters/test_backends.py --cmd 'python3 my_adapter.py'

For every adapter whose hello offers `backends`, and every backend, with the
curated cases and N random ones of test_adapters.py (within the profile):

- the case's source is run at the points of its domain (all of them, or a
  fixed sample of --points) and compared, wherever tileproof's reference
  evaluator says it is defined, with tileproof's value (`invalid` for a
  masked lane; anything where the value is unconstrained). Notes: PROFILE,
  the compiled code traps where the profile's `partial_ops` promises a value;
  MISMATCH, a value differs (the peer's compiler is wrong, or the backend is
  not literal); COMPILE, the peer's compiler rejects the source;
- the adapter's own answer to the case is run at the same points, and
  compared with the source's run (or tileproof's value for a source the
  backend cannot compile) where that run is tileproof's: CONFIRMED, a
  finding the peer's compiled code shows; a reproducer is asked for the
  first one and must be a script;
- the median time of a `run` request (compile and run, in the adapter's
  children) per backend.

A protocol violation, an `error` answer or a dead adapter fails the run;
with --strict, a MISMATCH too.
"""

import argparse
import itertools
import json
import os
import random
import shlex
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_adapters as ta  # noqa: E402


# ---- reference semantics (tileproof's, see engine/src/meaning/interp.rs) -----
# The one Python copy of them left: what a backend's compiled source is
# compared with. test_adapters.py leaves every judgement of an answer to
# tileproof itself.

INV = "invalid"   # a masked lane
UNC = "unconstrained"


class Undefined(Exception):
    pass


INT_OPS = {"neg", "add", "sub", "mul", "min", "max", "div", "rem", "floordiv", "mod", "ceildiv",
           "shl", "shr", "bitand"}
CMP_OPS = {"lt", "le", "eq", "ne"}
BOOL_OPS = {"not", "and", "or", "xor"}


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
        if op in ta.DIV_OPS:
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


def domain(vars_):
    return itertools.product(*[range(v["lo"], v["hi"] + 1) for v in vars_])


def width_of(prof):
    return {"unbounded": None, "int32": 32, "int64": 64}.get(prof["integers"])


def sample_points(vars_, limit, seed):
    pts = list(domain(vars_)) if _size(vars_) <= limit else None
    if pts is not None:
        return [list(p) for p in pts]
    rng = random.Random(seed)
    corners = [[v["lo"] for v in vars_], [v["hi"] for v in vars_]]
    return corners + [[rng.randint(v["lo"], v["hi"]) for v in vars_] for _ in range(limit - 2)]


def _size(vars_):
    n = 1
    for v in vars_:
        n *= v["hi"] - v["lo"] + 1
    return n


def env_of(vars_, pt):
    return {v["name"]: (bool(x) if v["dtype"] == "bool" else x) for v, x in zip(vars_, pt)}


def same(ref, got):
    """Whether a backend value `got` is tileproof's value `ref`."""
    if ref is UNC:
        return True
    if ref is INV or got == "invalid":
        return ref is INV and got == "invalid"
    return type(ref) is type(got) and ref == got


class Report:
    def __init__(self):
        self.runs = self.points = 0
        self.times = []
        self.failures, self.reasons = [], {}
        self.notes = {"PROFILE": [], "MISMATCH": [], "COMPILE": []}
        self.confirmed = []


def check(peer, backend, case, prof, pts, rep, label, rid):
    """Runs the source and the adapter's answer of `case` on `backend`."""
    width, unspec = width_of(prof), prof.get("partial_ops") == "unspecified"

    def run(trees, what):
        """-> the results, or a string: why there are none (unsupported, compile_error)."""
        req = dict(case, id=next(rid), trees=trees, exprs=[ta.show(t) for t in trees],
                   run={"backend": backend, "points": pts})
        line, dt = peer.ask(req)
        ans = json.loads(line)
        rep.runs += 1
        rep.times.append(dt)
        if "results" in ans and len(ans["results"]) == len(pts):
            return ans["results"]
        if "unsupported" in ans:
            key = ans["unsupported"][:90]
            rep.reasons[key] = rep.reasons.get(key, 0) + 1
            return "unsupported"
        if "compile_error" in ans:
            if what == "source":
                rep.notes["COMPILE"].append(f"{label}: {' ; '.join(case['exprs'])}: {ans['compile_error'][:200]}")
            return "compile_error: " + ans["compile_error"][:200]
        rep.failures.append(f"{label}: {what}: {line[:300]}")
        return "error"

    src = run(case["trees"], "source")
    refs, good = [], []  # tileproof's values; whether the source's compiled values are tileproof's
    for k, pt in enumerate(pts):
        env = env_of(case["vars"], pt)
        try:
            ref = [evaluate(t, env, width, unspec) for t in case["trees"]]
        except Undefined:
            ref = None
        refs.append(ref)
        good.append(ref is not None and UNC not in ref)  # where a partial op is, a trap is a PROFILE note
        if ref is None or isinstance(src, str):
            continue
        rep.points += 1
        res = src[k]
        if "values" not in res:
            good[k] = False
            rep.notes["PROFILE"].append(f"{label}: {' ; '.join(case['exprs'])} at {env}: {res} where tileproof's "
                                        f"value is {ref} (partial_ops: {prof.get('partial_ops', 'undefined')})")
        elif not all(same(r, g) for r, g in zip(ref, res["values"])):
            good[k] = False
            rep.notes["MISMATCH"].append(f"{label}: {' ; '.join(case['exprs'])} at {env}: {res['values']}, "
                                         f"tileproof's value {ref}")
    line, _ = peer.ask(dict(case, id=next(rid)))
    ans = json.loads(line)
    trees = ans.get("trees") or ([ta.parse(e) for e in ans["exprs"]] if "exprs" in ans else None)
    if trees is None or trees == case["trees"]:
        return
    tgt = run(trees, "answer")
    if isinstance(tgt, str):
        if tgt.startswith("compile_error") and not (isinstance(src, str) and src.startswith("compile_error")):
            rep.confirmed.append((label, case, trees, f"the answer does not compile ({tgt[15:]})", None, None))
        return
    for k, (pt, t, ref) in enumerate(zip(pts, tgt, refs)):
        if not good[k]:
            continue  # the source means nothing here, or its own compiled code is not tileproof's
        want = src[k]["values"] if not isinstance(src, str) else ["invalid" if r is INV else r for r in ref]
        if "values" not in t or not all(r is UNC or w == g for r, w, g in zip(ref, want, t["values"])):
            rep.confirmed.append((label, case, trees, f"at {env_of(case['vars'], pt)}: source {want}, answer {t}",
                                  pt, want))
            return


def test_adapter(label, cmd, args, logdir):
    print(f"== {label}: {cmd}")
    peer = ta.Peer(cmd, os.path.join(logdir, label.replace(" ", "_") + ".stderr"), args.timeout)
    hello = json.loads(peer.readline(args.timeout))
    backends = hello.get("backends") or []
    if not backends:
        print("  no backends")
        peer.close()
        return 0
    prof = hello["profile"]
    rid = iter(range(1, 1 << 30))
    failed = 0
    cases = []
    for name, vars_, exprs in ta.CURATED:
        case = ta.make_case(0, vars_, exprs)
        if ta.fits_profile(case, prof):
            cases.append((name, case))
    rng = random.Random(args.seed)
    cases += [(f"random #{k}", ta.random_case(rng, 0, prof)) for k in range(args.random)]
    for backend in backends:
        rep = Report()
        t0 = time.perf_counter()
        for label, case in cases:
            case = {k: case[k] for k in ("vars", "exprs", "trees")}
            check(peer, backend, case, prof, sample_points(case["vars"], args.points, args.seed), rep, label, rid)
        med = statistics.median(rep.times[1:] or rep.times) * 1000 if rep.times else 0.0
        print(f"  {backend}: {len(cases)} cases, {rep.runs} run requests, {rep.points} points checked, "
              f"median {med:.0f} ms per run request (first, with prepare: {rep.times[0] * 1000 if rep.times else 0:.0f} ms), "
              f"{time.perf_counter() - t0:.1f} s")
        for reason, n in sorted(rep.reasons.items(), key=lambda kv: -kv[1]):
            print(f"    unsupported x{n}: {reason}")
        for kind, notes in rep.notes.items():
            for n in notes[:args.show]:
                print(f"    {kind} {n}")
            if len(notes) > args.show:
                print(f"    ... {len(notes) - args.show} more {kind} notes")
        for c in rep.confirmed[:args.show]:
            print(f"    CONFIRMED {c[0]}: {' ; '.join(c[1]['exprs'])}  =>  {' ; '.join(ta.show(t) for t in c[2])}: {c[3]}")
        first = next((c for c in rep.confirmed if c[4] is not None), None)
        if first is not None and hello.get("reproducer"):
            label, case, _, _, pt, want = first
            line, _ = peer.ask(dict(case, id=next(rid), reproducer={"backend": backend, "point": list(pt),
                                                                   "expected": want, "class": "value-differs"}))
            if "script" not in json.loads(line):
                rep.failures.append(f"{label}: reproducer: {line[:300]}")
        for f in rep.failures:
            print(f"    FAIL {f}")
        failed += bool(rep.failures) or (args.strict and bool(rep.notes["MISMATCH"]))
    rc = peer.close()
    if rc != 0:
        print(f"  FAIL exit code {rc}")
        failed += 1
    return failed


def main():
    ap = argparse.ArgumentParser(description="Check tileproof peer adapters' backends (run, reproducer).")
    default_py = os.path.join(ta.ROOT, ".venv-peers", "bin", "python")
    ap.add_argument("--python", default=default_py if os.path.exists(default_py) else sys.executable)
    ap.add_argument("--random", type=int, default=50, help="random cases (default 50)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--points", type=int, default=64, help="points per case at most (default 64)")
    ap.add_argument("--only", help="only the adapters whose label contains this")
    ap.add_argument("--cmd", action="append", help="test this adapter command instead of the built-in list")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per request")
    ap.add_argument("--show", type=int, default=5, help="notes and findings printed per backend (default 5)")
    ap.add_argument("--strict", action="store_true", help="fail on MISMATCH notes too")
    args = ap.parse_args()
    py = shlex.quote(args.python)
    a = lambda f: shlex.quote(os.path.join(ta.HERE, f))  # noqa: E731
    adapters = [("tinygrad sym", f"{py} {a('tinygrad_adapter.py')}"),
                ("tvm simplify int64", f"{py} {a('tvm_adapter.py')}"),
                ("mlir canonicalize", f"{py} {a('mlir_adapter.py')} --entry canonicalize"),
                ("halide lower", f"{py} {a('halide_adapter.py')}")]
    if args.cmd:
        adapters = [(c, c) for c in args.cmd]
    if args.only:
        adapters = [x for x in adapters if args.only in x[0]]
    logdir = tempfile.mkdtemp(prefix="tileproof-backends-")
    print(f"adapter python: {args.python}; stderr logs in {logdir}")
    failed = sum(test_adapter(label, cmd, args, logdir) for label, cmd in adapters)
    print(f"backends: {'FAILED' if failed else 'ok'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
