#!/usr/bin/env python3
"""The experiments behind the Halide adapter's profile (quoted in docs/peers/halide.md).

    .venv-peers/bin/python adapters/halide_experiments.py

Each fact is checked on the installed halide by realizing small Funcs (Halide's JIT-compiled code, the
inputs loaded from buffers so that no pass knows them) and by lowering them (what the simplifier makes of
constants and ranges). Every line says `ok` or `FAILED`; the exit status is 1 if a fact the profile relies
on does not hold.
"""

import os
import sys
from importlib.metadata import version

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import halide as hl  # noqa: E402
import halide_harness as h  # noqa: E402

MIN, MAX = -(1 << 31), (1 << 31) - 1
FAILED = []


def fact(ok, text):
    print(("ok: " if ok else "FAILED: ") + text)
    if not ok:
        FAILED.append(text)


def compiled(fn, *columns, ty=hl.Int(32)):
    """fn over one point per column entry, realized: the inputs are buffers, opaque to the simplifier."""
    i = hl.Var("i")
    n = len(columns[0])
    bufs = []
    for col in columns:
        b = hl.Buffer(ty, [n])
        for j, v in enumerate(col):
            b[j] = v
        bufs.append(b)
    f = hl.Func("f")
    f[i] = fn(*[b[i] for b in bufs])
    out = f.realize([n])
    return [out[j] for j in range(n)]


def folded(e):
    """What lowering's simplifier makes of an expression with no variables: the value the store writes."""
    f = hl.Func("c")
    f[()] = e
    return h.stored_value(h.lowered(f, []), [])


def lowered_value(variables, tree):
    """The simplified value of a tree over bounded variables, as the adapter reads it."""
    return h.simplify(variables, [tree])[0][0]


def euclid(a, b):
    q = a // abs(b) * (1 if b > 0 else -1)
    return q, a - b * q


def division():
    print("## division: `/` and `%` are Euclidean (the remainder is never negative)")
    pairs = [(a, b) for a in range(-9, 10) for b in range(-4, 5) if b]
    A, B = [a for a, _ in pairs], [b for _, b in pairs]
    q, r = compiled(lambda a, b: a / b, A, B), compiled(lambda a, b: a % b, A, B)
    want = [euclid(a, b) for a, b in pairs]
    for a, b in [(-7, 2), (7, -2), (-7, -2), (7, 2)]:
        k = pairs.index((a, b))
        print(f"   compiled {a} / {b} = {q[k]}, {a} % {b} = {r[k]}   (Python: {a // b}, {a % b})")
    fact(list(zip(q, r)) == want, f"compiled a / b and a % b are Euclid's for a in [-9, 9], b in [-4, 4] \\ 0 "
                                  f"({len(pairs)} pairs)")
    fold = [folded(hl.Expr(a) / b) for a, b in pairs[:60:7]] + [folded(hl.Expr(a) % b) for a, b in pairs[:60:7]]
    fact(fold == [["const", euclid(a, b)[0]] for a, b in pairs[:60:7]] + [["const", euclid(a, b)[1]] for a, b in pairs[:60:7]],
         "constant folding of / and % agrees with the compiled code")
    pos = [(a, b) for a, b in pairs if b > 0]
    fact(all(euclid(a, b) == (a // b, a % b) for a, b in pos),
         "for a positive divisor, Euclid's quotient and remainder are the floor family's (Python's // and %): "
         "tileproof's floordiv and mod")
    neg = [(a, b) for a, b in pairs if b < 0 and a % b]
    fact(all(euclid(a, b) != (a // b, a % b) for a, b in neg),
         f"for a negative divisor that does not divide, they differ ({len(neg)} pairs): only positive divisors "
         "are sent (input_language.positive_divisors)")


def by_zero():
    print("## division and remainder by zero give zero")
    A = [-7, 0, 7, MIN, MAX]
    fact(compiled(lambda a, b: a / b, A, [0] * 5) == [0] * 5 and compiled(lambda a, b: a % b, A, [0] * 5) == [0] * 5,
         f"compiled a / 0 and a % 0 are 0 for a in {A} (no trap)")
    fact(folded(hl.Expr(7) / 0) == ["const", 0] and folded(hl.Expr(7) % 0) == ["const", 0],
         "constant folding: 7 / 0 -> 0, 7 % 0 -> 0")


def overflow(bits):
    print(f"## int{bits}: the compiled code wraps, the simplifier assumes no overflow")
    ty = hl.Int(bits)
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    got = [compiled(lambda a, b: a + b, [hi], [1], ty=ty)[0], compiled(lambda a, b: a * b, [1 << (bits - 2)], [4], ty=ty)[0],
           compiled(lambda a, b: a / b, [lo], [-1], ty=ty)[0], compiled(lambda a, b: a % b, [lo], [-1], ty=ty)[0],
           compiled(lambda a: -a, [lo], ty=ty)[0]]
    print(f"   compiled MAX + 1 = {got[0]}, 2^{bits - 2} * 4 = {got[1]}, MIN / -1 = {got[2]}, MIN % -1 = {got[3]}, "
          f"-MIN = {got[4]}")
    fact(got == [lo, 0, lo, 0, lo], f"compiled int{bits} arithmetic wraps (two's complement), MIN / -1 does not trap")
    p = hl.Param(ty, "p")
    f = hl.Func("o")
    f[()] = hl.select(p + 1 > p, 1, 0)
    value = h.stored_value(h.lowered(f, [p]), [])
    fact(value == ["const", 1], f"the simplifier folds select(p + 1 > p, 1, 0) to 1 for an int{bits} Param p "
                                "(false at p = MAX): it assumes no overflow")
    e = (hl.cast(ty, hl.Expr(hi)) + 1) * 0 + 1
    try:
        folded(e)
        fact(False, f"lowering (int{bits} MAX + 1)*0 + 1 leaves signed_integer_overflow in the statement")
    except h.Overflow:
        fact(True, f"lowering (int{bits} MAX + 1)*0 + 1 leaves signed_integer_overflow(...) in the statement")
    f = hl.Func("o")
    f[()] = e
    try:
        f.realize([])
        fact(False, f"compiling (int{bits} MAX + 1)*0 + 1 raises")
    except hl.HalideError as err:
        line = str(err).strip().splitlines()[0]
        print(f"   realize: {line}")
        fact("overflow" in line, f"and compiling it raises HalideError: the pipeline does not compile")


def language():
    print("## the language: Exprs are int32; what the Python operators build")
    x = hl.Var("x")
    fact(hl.Expr(MAX).type() == hl.Int(32) and hl.Expr(MIN).type() == hl.Int(32) and hl.Expr(MAX + 1).type() == hl.Int(64)
         and hl.Expr(x).type() == hl.Int(32),
         "Var and int constants within int32 are Int(32) (a larger constant is Int(64), never sent: the profile "
         "is int32)")
    p, q = x < 3, x > 1
    show = lambda e: str(e).split(": ", 1)[1][:-1]  # noqa: E731 - `<halide.Expr of type T: E>`
    built = {"-x": show(-x), "x / 2": show(x / 2), "x % 2": show(x % 2), "p & q": show(p & q), "p | q": show(p | q),
             "p != q": show(p != q), "logical_not(p)": show(hl.logical_not(p))}
    print("   " + "; ".join(f"{k} builds {v}" for k, v in built.items()))
    fact(built["-x"] == "(0 - x)" and "&&" in built["p & q"] and "||" in built["p | q"] and built["logical_not(p)"].startswith("!"),
         "-a builds 0 - a (exact: both overflow only at MIN), & | on bools build && ||, logical_not builds !")
    fact(compiled(lambda a, b: hl.min(a, b), [-3, 5], [2, -9]) == [-3, -9] and
         compiled(lambda a, b: hl.max(a, b), [-3, 5], [2, -9]) == [2, 5], "min and max")
    c = [v != 0 for v in [1, 0, 1, 0]]
    fact(compiled(lambda s, a, b: hl.select(s != 0, a, b), [1, 0, 1, 0], [1, 2, 3, 4], [5, 6, 7, 8]) ==
         [a if s else b for s, a, b in zip(c, [1, 2, 3, 4], [5, 6, 7, 8])],
         "select(c, a, b) is tileproof's where (both arms are evaluated, and no op traps)")
    g = hl.Func("g")
    g[x] = x < 3
    g.bound(x, 0, 8)
    text = h.lowered(g, [])
    store = next(line.strip() for line in text.splitlines() if line.strip().startswith("g["))
    print(f"   a bool Func's store: {store}")
    fact("uint8(" in store, "a bool Func is stored as uint8(cond): read back as the bool")


def ranges():
    print("## ranges: Func.bound makes the loops the simplifier reads")
    t = ["add", ["mul", ["floordiv", ["add", ["mul", ["var", "x"], ["const", 4]], ["const", 3]], ["const", 4]], ["const", 4]],
         ["mod", ["add", ["mul", ["var", "x"], ["const", 4]], ["const", 3]], ["const", 4]]]
    for lo, hi in [(0, 7), (-3, 3)]:
        text = h.lower([("x", lo, hi)], t)
        loop = next(line.strip() for line in text.splitlines() if line.strip().startswith("for ("))
        print(f"   x in [{lo}, {hi}]: {loop} ; ((x*4 + 3)/4)*4 + (x*4 + 3) % 4 -> {h.stored_value(text, [('x', lo, hi)])}")
    s = ["mod", ["var", "x"], ["const", 8]]
    fact(lowered_value([("x", 0, 7)], s) == ["var", "x"] and lowered_value([("x", 0, 8)], s) == s,
         "x % 8 -> x for x in [0, 7], not for x in [0, 8]: the bound is used")
    d = ["floordiv", ["var", "x"], ["const", 8]]
    print(f"   (x / 8 for x in [0, 7] stays {lowered_value([('x', 0, 7)], d)}: Simplify_Div folds a quotient whose "
          "bounds are one point only where its caller asks for bounds, not at the root of a store)")
    fact(lowered_value([("x", -3, 3)], ["lt", ["var", "x"], ["const", 4]]) == ["bool", True],
         "x < 4 -> true for x in [-3, 3] (a loop Halide rebases to start at 0)")
    fact(lowered_value([("x", MIN, MAX - 1)], s) == s and lowered_value([("x", 0, MAX)], s) == s,
         "a variable whose loop would not fit int32 (extent or end past MAX) is a Param with no range: x % 8 stays")


if __name__ == "__main__":
    print("# halide", version("halide"))
    for f in (division, by_zero, lambda: overflow(32), lambda: overflow(64), language, ranges):
        f()
    if FAILED:
        print(f"{len(FAILED)} fact(s) do not hold on halide {version('halide')}")
    sys.exit(1 if FAILED else 0)
