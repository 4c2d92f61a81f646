#!/usr/bin/env python3
"""The experiments behind the adapters' profiles (quoted in docs/peers/).

    .venv-peers/bin/python adapters/semantics_experiments.py [tinygrad|tvm]

Each line prints an expression as built, and what the peer makes of it.
"""

import sys


def tinygrad_experiments():
    from tinygrad.dtype import dtypes
    from tinygrad.helpers import ceildiv
    from tinygrad.uop.ops import UOp, graph_rewrite
    from tinygrad.uop.symbolic import sym

    def C(v):
        return UOp.const(v, dtypes.weakint)

    def r(u):
        return u.render(simplify=False)

    def s(u):
        return r(u.simplify())

    def g(u):
        return r(graph_rewrite(u, sym))

    print("# tinygrad", __import__("importlib.metadata").metadata.version("tinygrad"))
    print("## index dtype")
    print("hasattr(dtypes, 'index') =", hasattr(dtypes, "index"), "; UOp.variable default dtype =",
          UOp.variable("x", 0, 7).dtype, "; weakint bounds = +-2**%d" % (dtypes.weakint.max.bit_length()))
    print("C(2**62) * 4 ->", s(C(2**62) * 4), "(exact, no wrap)")
    print("## division families (constant folding)")
    for a, b in [(-7, 2), (7, -2), (-7, -2)]:
        print(f"{a} // {b} -> {s(C(a) // C(b))};  {a} % {b} -> {s(C(a) % C(b))};  "
              f"{a}.div({b}, trunc) -> {s(C(a).div(C(b), rounding_mode='trunc'))};  {a}.fmod({b}) -> {s(C(a).fmod(C(b)))}")
    x = UOp.variable("x", -7, 7)
    print("x // 3 is", (x // 3).op, "; x % 3 is", (x % 3).op, "; x.div(3, trunc) is", x.div(3, rounding_mode="trunc").op,
          "; x.fmod(3) is", x.fmod(3).op)
    print("## bounds matter")
    x03, x33 = UOp.variable("x", 0, 3), UOp.variable("x", -3, 3)
    print("x in [0, 3]: x // 4 ->", s(x03 // 4), "; x % 4 ->", s(x03 % 4))
    print("x in [-3, 3]: x // 4 ->", s(x33 // 4), "; x % 4 ->", s(x33 % 4))
    r0, r1, r1n = UOp.variable("r0", 0, 7), UOp.variable("r1", 0, 3), UOp.variable("r1", -1, 3)
    print("r1 in [0, 3]: (r0*4 + r1) // 4 ->", s((r0 * 4 + r1) // 4), "; r1 in [-1, 3]: ->", s((r0 * 4 + r1n) // 4))
    print("## invalid")
    inv = UOp.invalid()
    print("UOp.invalid() =", inv.op, inv.dtype, inv.arg, "; (r0 < 6).where(r0, UOp.invalid()).dtype =",
          (r0 < 6).where(r0, inv).dtype)
    print("where(r0 < 6, r0, Invalid) + 1 ->", s((r0 < 6).where(r0, inv) + 1))
    print("where(r0 < 6, r0, Invalid) * 0 ->", s((r0 < 6).where(r0, inv) * 0))
    print("where(r0 < 6, r0, Invalid) < 3 ->", s((r0 < 6).where(r0, inv) < 3), "(a bool-typed Invalid)")
    print("where(p, Invalid, r0) ->", s(UOp.variable("p", False, True, dtypes.bool).where(inv, r0)))
    gi = (r0 < 4).where(r0 // 4, inv)
    print("where(r0 < 4, r0 // 4, Invalid): simplify ->", s(gi), "; sym ->", g(gi), "(gated_given_valid)")
    print("## where, min, max")
    print("where(r0 < 3, r0, 3) ->", s((r0 < 3).where(r0, 3)), "; where(3 < r0, r0, 3) ->", s((C(3) < r0).where(r0, 3)))
    y = UOp.variable("y", 0, 7)
    print("r0.minimum(y) builds", r(r0.minimum(y)), "; r0.maximum(y) builds", r(r0.maximum(y)))
    print("r0.minimum(3) ->", s(r0.minimum(3)), "; r0.minimum(100) ->", s(r0.minimum(100)))
    ok = all((~max(~a, ~b)) == min(a, b) and (a ^ -1) == -1 - a for a in range(-50, 51) for b in range(-50, 51))
    print("~max(~a, ~b) == min(a, b) and a ^ -1 == -1 - a for all a, b in [-50, 50]:", ok)
    print("## comparisons and bools")
    print("r0 <= y builds", r(r0 <= y), "; r0.eq(y) builds", r(r0.eq(y)), "; -r0 builds", r(-r0), "; r0 - y builds", r(r0 - y))
    p, q = UOp.variable("p", False, True, dtypes.bool), UOp.variable("q", False, True, dtypes.bool)
    print("bool variable: dtype", p.dtype, "bounds", (p.vmin, p.vmax))
    print("p.logical_not() builds", r(p.logical_not()), "; p & q ->", s(p & q), "; p ^ q ->", s(p ^ q),
          "; p | !p ->", s(p | p.logical_not()), "; p & !p ->", s(p & p.logical_not()))
    print("## ceildiv (tinygrad.helpers.ceildiv)")
    xn = UOp.variable("x", -8, 8)
    print("ceildiv(x, 4), x in [-8, 8] builds", r(ceildiv(xn, 4)), "; ceildiv(y*4 + 3, 4) ->", s(ceildiv(y * 4 + 3, 4)))
    print("## shifts and bitand")
    print("-7 >> 1 ->", s(C(-7) >> 1), "; -7 << 1 ->", s(C(-7) << 1), "; -7 & 3 ->", s(C(-7) & 3), "; x << 2 is", (xn << 2).op)
    for name, f in [("3 << -1", lambda: (C(3) << -1).simplify()), ("x // 0", lambda: (xn // 0).simplify()),
                    ("0 // x", lambda: (C(0) // xn).simplify())]:
        try:
            print(name, "->", r(f()))
        except Exception as e:
            print(name, "raises", type(e).__name__ + ":", str(e).splitlines()[0][:60])
    print("## suspected bugs")
    x = UOp.variable("x", -2, 2)
    print("x & (x & 3): simplify ->", s(x & (x & 3)), "; sym ->", g(x & (x & 3)))
    e = 1 // (x.ne(0)).where(x, inv)
    print("1 // where(x != 0, x, Invalid) ->", s(e))


def tvm_experiments():
    from importlib.metadata import version

    from tvm import ir, tirx
    from tvm.sym import Analyzer

    def c(v, dt="int64"):
        return tirx.const(v, dt)

    A = Analyzer()
    print("# tvm", version("apache-tvm"))
    print("## division families (constant folding, int64)")
    for a, b in [(-7, 2), (7, -2), (-7, -2)]:
        row = []
        for n, f in [("floordiv", tirx.FloorDiv), ("floormod", tirx.FloorMod), ("Div", tirx.Div), ("Mod", tirx.Mod),
                     ("truncdiv", tirx.truncdiv), ("truncmod", tirx.truncmod)]:
            row.append(f"{n} {A.simplify(f(c(a), c(b))).value}")
        print(f"({a}, {b}):", ", ".join(row))
    x, y = tirx.Var("x", "int64"), tirx.Var("y", "int64")
    print("truncdiv(x, y) builds", type(tirx.truncdiv(x, y)).__name__, "; truncmod(x, y) builds",
          type(tirx.truncmod(x, y)).__name__, "; x // y builds", type(x // y).__name__, "; x % y builds", type(x % y).__name__)
    print("-x builds", -x, "; tirx.ceildiv(x, y) builds", tirx.ceildiv(x, y))
    print("tirx.ceildiv(1, -1) ->", A.simplify(tirx.ceildiv(c(1), c(-1))), "(ceil(1 / -1) is -1)")
    print("## bind")
    A = Analyzer()
    r0, r1 = tirx.Var("r0", "int64"), tirx.Var("r1", "int64")
    A.bind(r0, ir.Range(c(0), c(8)))
    A.bind(r1, ir.Range(c(0), c(4)))
    xb = tirx.Var("x", "int64")
    A.bind(xb, ir.Range(c(-3), c(5)))
    print("bind(x, Range(-3, 5)): const_int_bound", A.const_int_bound(xb), "; x < 5 ->", A.simplify(tirx.LT(xb, c(5))),
          "; x < 4 ->", A.simplify(tirx.LT(xb, c(4))))
    e = tirx.FloorDiv(tirx.Add(tirx.Mul(r0, c(4)), r1), c(4))
    print("r0 in [0, 8), r1 in [0, 4): (r0*4 + r1) // 4 ->", A.simplify(e), "; unbound ->", Analyzer().simplify(e))
    e = tirx.Div(tirx.Add(tirx.Mul(r0, c(4)), r1), c(4))
    print("Div(r0*4 + r1, 4): simplify ->", A.simplify(e), "; canonical ->", A.canonical_simplify(e), "; rewrite ->",
          A.rewrite_simplify(e))
    print("## Select, if_then_else, Min, Max")
    s = tirx.Select(tirx.LT(r0, c(3)), r0, c(3))
    print("Select(r0 < 3, r0, 3) ->", A.simplify(s), type(A.simplify(s)).__name__)
    ite = tirx.if_then_else(tirx.LT(r0, c(3)), r0, c(3))
    print("if_then_else(...) builds", type(ite).__name__, ite.op.name)
    print("Min(r0, r1) ->", A.simplify(tirx.Min(r0, r1)), "; Max(r0, 100) ->", A.simplify(tirx.Max(r0, c(100))),
          "; GT(r0, r1) ->", A.simplify(tirx.GT(r0, r1)))
    print("## int32 vs int64")
    v32 = tirx.Var("v", "int32")
    print("Var('v', 'int32').ty =", v32.ty, "; v32 + r0 builds", v32 + r0)
    try:
        tirx.const(2**40, "int32")
    except Exception as e:
        print("const(2**40, 'int32') raises", type(e).__name__)
    print("int32 65536 * 65536 ->", A.simplify(tirx.Mul(c(65536, "int32"), c(65536, "int32"))),
          "; int64 2**40 * 2**40 ->", A.simplify(tirx.Mul(c(2**40), c(2**40))), "(folding wraps)")
    print("## bools")
    p, q = tirx.Var("p", "bool"), tirx.Var("q", "bool")
    print("NE(p, q) ->", A.simplify(tirx.NE(p, q)), "; And(p, Not(p)) ->", A.simplify(tirx.And(p, tirx.Not(p))),
          "; Or(p, Not(p)) ->", A.simplify(tirx.Or(p, tirx.Not(p))))
    print("## shifts, bitand, division by zero")
    print("-7 >> 1 ->", A.simplify(tirx.RShift(c(-7), c(1))), "; -7 << 1 ->", A.simplify(tirx.LShift(c(-7), c(1))),
          "; BitwiseAnd(-7, 3) ->", A.simplify(tirx.BitwiseAnd(c(-7), c(3))))
    for name, f in [("3 << 64", lambda: A.simplify(tirx.LShift(c(3), c(64)))),
                    ("3 << -1", lambda: A.simplify(tirx.LShift(c(3), c(-1)))),
                    ("x // 0", lambda: A.simplify(tirx.FloorDiv(r0, c(0))))]:
        try:
            print(name, "->", f())
        except Exception as e:
            print(name, "raises", type(e).__name__ + ":", str(e).strip().splitlines()[0][:70])


if __name__ == "__main__":
    which = sys.argv[1:] or ["tinygrad", "tvm"]
    if "tinygrad" in which:
        tinygrad_experiments()
    if "tvm" in which:
        tvm_experiments()
