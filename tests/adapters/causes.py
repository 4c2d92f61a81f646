#!/usr/bin/env python3
"""A fake peer with one defect per mode, for tileproof's tests of finding
causes (tests/causes_cli.rs). Stdlib only.

    causes.py MODE

    collapse  its range analysis bounds a product by the four corner
              products wrapped to 64 bits (Morok's), and its one rule,
              `collapse`, replaces a node whose bounds are one value by that
              value: right for the bounds it is given. The cause is the
              product's transfer function (`MUL`), not the rule.
    crash     its simplifier's helper `fold_divisor` divides by a constant
              divisor less one, and raises ZeroDivisionError on `x / 1`.
    crashbound `collapse`'s range analysis and rule, and `crash`'s helper
              `fold_divisor`: `x / (y * -2^60 + 1)`, y in [0, 16],
              collapses the product to 0 from its wrapped bound, the sum
              to 1, and crashes there. The cause is the product's
              transfer function (`MUL`), as it is without the crash; a
              crash on the source's own `x / 1` stays the helper's.
    minlit    its rule `sub_min` rewrites `x + -9223372036854775807 - 1` to
              `x - -9223372036854775808` (an overflow tileproof's model
              flags, but a wrapping machine computes the same), and its
              backend compiles the literal -9223372036854775808 as 0 (a
              renderer that drops it). The cause is the backend's literal.
    patterns  its one rule, `fold`, is a group of two patterns applied
              bottom-up over the whole expression, as Morok applies a
              group: `div_one` (`x / 1 -> x`, right) and `div_neg_one`
              (`x / -1 -> x`, wrong); `apply` names the patterns that
              rewrote. The cause is `fold/div_neg_one`, not the group.
              A third pattern, `sub_neg` (`x - y -> x + y * -1`), computes
              the right value but overflows at y = MIN: the cause is
              `fold/sub_neg introduces UB`, another defect of one group.
              This mode's backend traps on an overflow (C's -ftrapv), so
              the overflow is a real bug there, not tileproof's model.
              One pattern applied alone rewrites the root once (as one
              of Morok's closures does); the group rewrites bottom-up.
    moveconst a simplifier that names no rules and has no range analysis
              (TVM's shape): it moves a constant across a comparison,
              `a + C < b` to `a < b - C`, which is right over the integers
              and overflows where `b - C` leaves 64 bits. The cause is that
              overflow (`introduced index overflow`), whatever the
              shape of `a` and `b`.
    dropguard a ruleless simplifier that simplifies the false arm of
              `where(c, a, b)` knowing `c` false, through an inner
              `where(c, p, q)` to `q`: the guard round a division goes, and
              its backend evaluates both arms of a `where` (a GPU select),
              so the answer divides by zero in the lane it does not
              select. The cause is that (`introduced division by zero`),
              whatever op was guarded.
    stagedfold a pipeline of two stages, `build` (the trees as given) and
              `fold`, whose range analysis bounds `x mod M` by `[M - 1,
              M - 1]` and which folds `e // C` to a constant where the
              bounds of `e` lie in one block of `C`, as MLIR's
              `canonicalize` folds with its wrong bound of a `mod`; it
              splits `(a + b * k*C) // C` to `a // C + b * k` first. The
              cause is that bound (`implied mod`), whatever holds
              the `mod`, in a sum split or not. It bounds `x * C` by its
              corners wrapped to 64 bits, as MLIR's flattened sum, and
              folds `e mod C` in block `q` to `e - q * C`: where `x * C`
              passes 64 bits that answer may overflow at every point
              (`implied overflow`).
    builtbound its one rule, `cmp`, is a group of two patterns applied at
              each node until neither rewrites: `unscale` (`x * -k < c` to
              `x * -1 < ceil(c / k)`, right) and `decide` (`a < c` decided
              where the bounds of `a` lie on one side of `c`, right for the
              bounds it is given); its range analysis is `collapse`'s. The
              product `decide` trusts is one `unscale` built: the cause is
              its transfer function (`MUL`), seen where `decide` failed
              alone after `unscale`, not the pattern.
    misread   a ruleless simplifier that takes every truncating remainder
              `a % b` as the flooring `a mod b`, as TVM's comparison
              folding splits one: wrong where `a` is negative. The cause
              is that (`misread trunc`), whatever holds the `%`.
    foldwrap  a ruleless simplifier of 32-bit integers (as TVM's int32)
              that folds `(x // a) // b` to `x // (a * b)` with the product
              computed in 32-bit wrapping arithmetic: right over the
              integers, wrong where `a * b` wraps. The cause is an overflow the rewrite brings in
              (`introduced index overflow`), as for `moveconst`, though
              the answer itself never overflows.

Its backend, `wrap`, evaluates trees with wrapping arithmetic (64 bits, 32
for `foldwrap`).
"""
import os
import signal
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "adapters"))
import tileproof_peer as tp  # noqa: E402

OUT = tp.claim_stdout()
MODE = sys.argv[1]
OPS = ["add", "sub", "mul", "div", "floordiv", "lt", "where"] + {
    "stagedfold": ["mod"], "misread": ["mod", "rem"]}.get(MODE, [])
BITS = 32 if MODE == "foldwrap" else 64
MIN, MAX = -(1 << (BITS - 1)), (1 << (BITS - 1)) - 1
NAMES = {"add": "ADD", "sub": "SUB", "mul": "MUL", "div": "IDIV", "floordiv": "FLOORDIV",
         "lt": "CMPLT", "where": "WHERE", "var": "DEFINE_VAR", "const": "CONST"}


def wrap(v):
    return (v - MIN) % (1 << BITS) + MIN


def trunc_div(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def bound(case, t, memo):
    """The fake range analysis: `(lo, hi)` of a tree, or None."""
    key = id(t)
    if key in memo:
        return memo[key]
    op = t[0]
    b = None
    if op == "var":
        v = case.var[t[1]]
        b = (v.lo, v.hi)
    elif op == "const":
        b = (t[1], t[1])
    elif op in ("add", "sub", "mul", "div"):
        x, y = bound(case, t[1], memo), bound(case, t[2], memo)
        if x is not None and y is not None:
            if op == "add":
                lo, hi = x[0] + y[0], x[1] + y[1]
                b = (lo, hi) if MIN <= lo and hi <= MAX else None
            elif op == "sub":
                lo, hi = x[0] - y[1], x[1] - y[0]
                b = (lo, hi) if MIN <= lo and hi <= MAX else None
            elif op == "mul":
                # The defect: the corners wrap.
                cs = [wrap(a * c) for a in x for c in y]
                b = (min(cs), max(cs))
            elif not y[0] <= 0 <= y[1]:
                cs = [trunc_div(a, c) for a in x for c in y]
                b = (min(cs), max(cs))
    memo[key] = b
    return b


def collapse(case, t, memo):
    """The rule: a node of one value is that value."""
    if t[0] in ("var", "const", "bool"):
        return None
    b = bound(case, t, memo)
    if b is not None and b[0] == b[1] and t[0] != "lt":
        return ["const", b[0]]
    return None


def sub_min(t):
    """The rule: `x + -MAX - 1` is `x - MIN`."""
    if t[0] == "sub" and t[2] == ["const", 1] and t[1][0] == "add" and t[1][2] == ["const", -MAX]:
        return ["sub", t[1][1], ["const", MIN]]
    return None


def fold_divisor(t):
    """The crash: a helper that divides by a constant divisor less one."""
    if t[0] in ("div", "floordiv") and t[2][0] == "const":
        return 1 // (t[2][1] - 1)
    return None


# The patterns of `fold`, in the order the group tries them.
PATTERNS = {
    "div_one": lambda t: t[1] if t[0] == "div" and t[2] == ["const", 1] else None,
    "div_neg_one": lambda t: t[1] if t[0] == "div" and t[2] == ["const", -1] else None,
    "sub_neg": lambda t: ["add", t[1], ["mul", t[2], ["const", -1]]] if t[0] == "sub" else None,
}


def fold(t, only, matched):
    """`fold` bottom-up (`only`: that pattern alone), `matched` collecting
    the patterns that rewrote."""
    if t[0] in tp.LEAVES:
        return t
    t = [t[0]] + [fold(a, only, matched) for a in t[1:]]
    for name, p in PATTERNS.items():
        new = p(t)
        if new is not None:
            if only not in (None, name):
                return t
            if name not in matched:
                matched.append(name)
            return new
    return t


def unscale(case, t):
    """`x * -k < c` is `x * -1 < ceil(c / k)` (k > 1)."""
    if (t[0] == "lt" and t[1][0] == "mul" and t[1][2][0] == "const" and t[1][2][1] < -1
            and t[2][0] == "const"):
        k = -t[1][2][1]
        return ["lt", ["mul", t[1][1], ["const", -1]], ["const", -(-t[2][1] // k)]]
    return None


def decide(case, t):
    """`a < c` where the bounds of `a` lie on one side of `c`."""
    if t[0] == "lt" and t[2][0] == "const":
        b = bound(case, t[1], {})
        if b is not None and b[1] < t[2][1]:
            return ["bool", True]
        if b is not None and b[0] >= t[2][1]:
            return ["bool", False]
    return None


# The patterns of `cmp`, in the order the group tries them at a node.
CMP = {"unscale": unscale, "decide": decide}


def cmp(case, t, only, matched):
    """`cmp` bottom-up, each node rewritten until no pattern does (`only`:
    that pattern alone), `matched` collecting the patterns that rewrote."""
    if t[0] in tp.LEAVES:
        return t
    t = [t[0]] + [cmp(case, a, only, matched) for a in t[1:]]
    while t[0] not in tp.LEAVES:
        for name, p in CMP.items():
            if only in (None, name):
                new = p(case, t)
                if new is not None:
                    if name not in matched:
                        matched.append(name)
                    t = new
                    break
        else:
            break
    return t


def move_const(t):
    """`a + C < b` is `a < b - C` (no check that `b - C` fits)."""
    if t[0] == "lt" and t[1][0] == "add" and t[1][2][0] == "const":
        return ["lt", t[1][1], ["sub", t[2], t[1][2]]]
    return None


def staged_bound(case, t):
    """`stagedfold`'s range analysis: a remainder by M is always M - 1; a
    product by a constant, its corners wrapped."""
    if t[0] == "mod" and t[2][0] == "const":
        return (t[2][1] - 1, t[2][1] - 1)
    if t[0] == "mul" and t[2][0] == "const":
        x = staged_bound(case, t[1])
        if x is None:
            return None
        cs = [wrap(a * t[2][1]) for a in x]
        return (min(cs), max(cs))
    if t[0] == "var":
        v = case.var[t[1]]
        return (v.lo, v.hi)
    if t[0] == "const":
        return (t[1], t[1])
    return None


def staged_fold(case, t):
    """`e // C` with the bounds of `e` in one block of C is a constant."""
    if t[0] in tp.LEAVES:
        return t
    t = [t[0]] + [staged_fold(case, a) for a in t[1:]]
    # `(a + b * k*C) // C` is `a // C + b * k`, as MLIR splits a sum.
    if (t[0] == "floordiv" and t[2][0] == "const" and t[2][1] > 0 and t[1][0] == "add"
            and t[1][2][0] == "mul" and t[1][2][2][0] == "const" and t[1][2][2][1] % t[2][1] == 0):
        c = t[2][1]
        return ["add", staged_fold(case, ["floordiv", t[1][1], t[2]]),
                ["mul", t[1][2][1], ["const", t[1][2][2][1] // c]]]
    if t[0] == "floordiv" and t[2][0] == "const" and t[2][1] > 0:
        b = staged_bound(case, t[1])
        if b is not None and b[0] // t[2][1] == b[1] // t[2][1]:
            return ["const", b[0] // t[2][1]]
    # `e mod C` with the bounds of `e` in block q is `e - q * C`.
    if t[0] == "mod" and t[2][0] == "const" and t[2][1] > 0 and t[1][0] == "mul":
        b = staged_bound(case, t[1])
        if b is not None and b[0] // t[2][1] == b[1] // t[2][1]:
            return ["sub", t[1], ["mul", ["const", b[0] // t[2][1]], t[2]]]
    return t


def drop_guard(t, c):
    """`t` with every `where(c, p, q)` in it replaced by `q`."""
    if t[0] in tp.LEAVES:
        return t
    if t[0] == "where" and t[1] == c:
        return drop_guard(t[3], c)
    return [t[0]] + [drop_guard(a, c) for a in t[1:]]


def misread(t):
    """`a % b` taken as `a mod b`."""
    return ["mod", t[1], t[2]] if t[0] == "rem" else None


def fold_wrap(t):
    """`(x // a) // b` is `x // (a * b)`, the product wrapping."""
    if t[0] == "floordiv" and t[2][0] == "const" and t[1][0] == "floordiv" and t[1][2][0] == "const":
        ab = wrap(t[1][2][1] * t[2][1])
        if ab != 0:
            return ["floordiv", t[1][1], ["const", ab]]
    return None


def rewrite(case, t, memo, fired):
    """Every rule bottom-up, once."""
    if t[0] in tp.LEAVES:
        return t
    if MODE in ("misread", "foldwrap"):
        t = [t[0]] + [rewrite(case, a, memo, fired) for a in t[1:]]
        return (misread(t) if MODE == "misread" else fold_wrap(t)) or t
    if MODE == "dropguard":
        if t[0] == "where":
            return ["where", t[1], t[2], drop_guard(t[3], t[1])]
        return t
    if MODE == "moveconst":
        t = [t[0]] + [rewrite(case, a, memo, fired) for a in t[1:]]
        return move_const(t) or t
    if MODE == "patterns":
        matched = []
        new = fold(t, None, matched)
        if matched:
            fired["fold"] = fired.get("fold", 0) + 1
        return new
    if MODE == "builtbound":
        matched = []
        new = cmp(case, t, None, matched)
        if matched:
            fired["cmp"] = fired.get("cmp", 0) + 1
        return new
    t = [t[0]] + [rewrite(case, a, memo, fired) for a in t[1:]]
    if MODE == "crash":
        fold_divisor(t)
        return t
    if MODE == "crashbound":
        fold_divisor(t)
    rule = "collapse" if MODE in ("collapse", "crashbound") else "sub_min"
    new = collapse(case, t, {}) if rule == "collapse" else sub_min(t)
    if new is None:
        return t
    fired[rule] = fired.get(rule, 0) + 1
    return new


def simplify(case, stage=None):
    if MODE == "stagedfold":
        return [staged_fold(case, t) if stage != "build" else t for t in case.trees]
    fired = {}
    trees = [rewrite(case, t, {}, fired) for t in case.trees]
    return tp.Simplified(trees, fired)


class Rules(tp.Rules):
    NAME = {"collapse": "collapse", "crashbound": "collapse", "patterns": "fold",
            "builtbound": "cmp"}.get(MODE, "sub_min")

    def list(self):
        return [{"name": self.NAME, "pattern": self.NAME, "location": "tests/adapters/causes.py",
                 "function": self.NAME, "tree": None, "instantiable": True}]

    def instances(self, rule, spec):
        return [], {"the fake builds no instances": 1}

    def apply(self, case, rule):
        t = case.trees[0]
        if MODE == "patterns":
            only = rule.split("/", 1)[1] if "/" in rule else None
            if only is not None:
                # One pattern alone rewrites the root once, as one of
                # Morok's closures applied alone does.
                new = PATTERNS[only](t)
                if new is None:
                    raise tp.Declined(f"fold/{only} does not rewrite the root")
                return tp.Simplified([new], {"fold": 1}, [f"fold/{only}"])
            matched = []
            new = fold(t, only, matched)
            if not matched:
                raise tp.Declined("no pattern of fold rewrites it")
            # As Morok's group applied alone: it says that it fired.
            return tp.Simplified([new], {"fold": 1}, [f"fold/{m}" for m in matched])
        if MODE == "builtbound":
            only = rule.split("/", 1)[1] if "/" in rule else None
            matched = []
            new = cmp(case, t, only, matched)
            if not matched:
                raise tp.Declined("no pattern of cmp rewrites it")
            return tp.Simplified([new], {}, [f"cmp/{m}" for m in matched])
        new = collapse(case, t, {}) if self.NAME == "collapse" else sub_min(t)
        if new is None:
            raise tp.Declined("the rule does not rewrite the root")
        return new


class Bounds(tp.Bounds):
    def build(self, case):
        memo = {}
        out = {}
        for t in case.trees:
            for n in tp.preorder(t):
                out[id(n)] = (n, bound(case, n, memo))
        return out

    def bound(self, obj):
        return obj[1]

    def op(self, obj):
        return NAMES.get(obj[0][0])


OPS_INT = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b}


class Wrap(tp.Backend):
    names = ("wrap",)

    def compile(self, case, name):
        return case

    def run(self, case, points):
        out = []
        for p in points:
            env = {v.name: x for v, x in zip(case.vars, p)}
            out.append([self.ev(t, env) for t in case.trees])
        return out

    def ev(self, t, env):
        op = t[0]
        if op == "var":
            return env[t[1]]
        if op == "const":
            # The minlit defect: a renderer that drops the literal MIN.
            return 0 if MODE == "minlit" and t[1] == MIN else t[1]
        if op == "bool":
            return t[1]
        if op == "where":
            if MODE == "dropguard":
                # A select: both arms are computed.
                a, b = self.ev(t[2], env), self.ev(t[3], env)
                return a if self.ev(t[1], env) else b
            return self.ev(t[2], env) if self.ev(t[1], env) else self.ev(t[3], env)
        a, b = (self.ev(x, env) for x in t[1:])
        if MODE == "patterns" and op in ("add", "sub", "mul") and wrap(OPS_INT[op](a, b)) != OPS_INT[op](a, b):
            # This backend traps on an overflow (C's -ftrapv), as a real bug.
            os.kill(os.getpid(), signal.SIGILL)
        if op in ("div", "floordiv", "mod", "rem") and b == 0:
            raise tp.CompileError("a division by zero")
        return {"add": lambda: wrap(a + b), "sub": lambda: wrap(a - b), "mul": lambda: wrap(a * b),
                "div": lambda: wrap(trunc_div(a, b)), "floordiv": lambda: wrap(a // b),
                "mod": lambda: wrap(a % b),
                "rem": lambda: wrap(a - trunc_div(a, b) * b),
                "lt": lambda: a < b}[op]()


# The moveconst and dropguard peers, as TVM, name no rules and have no range
# analysis.
RULELESS = MODE in ("moveconst", "dropguard", "stagedfold", "misread", "foldwrap")
tp.serve(OUT, {"tileproof": 1, "name": f"causes-{MODE}", "version": "1.0",
               "profile": {"ops": OPS, "invalid": False, "integers": f"int{BITS}", "bool_vars": False}},
         simplify, width=BITS, backend=Wrap(), rules=None if RULELESS else Rules(),
         bounds=None if RULELESS else Bounds(),
         stages=["build", "fold"] if MODE == "stagedfold" else None)
