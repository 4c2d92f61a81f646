"""tileproof finding (wrong-value) against Halide 21.0.0's simplifier, as lowering runs it: each
expression a Func over the variables, bounded with Func.bound, lowered with compile_to_lowered_stmt.
At x = -16, the answer (the value the lowered store writes), realized literally by Halide's JIT,
differs from the input realized literally (each operation a Func of its own over opaque inputs: what
the input means). Exits 1 while they differ, 0 once they agree. tileproof's semantics give the input
the value [15] there.
"""
import json
import os
import re
import signal
import sys
import tempfile

import halide as hl

# ---- the harness: tileproof's adapters/halide_harness.py

I32_MIN, I32_MAX = -(1 << 31), (1 << 31) - 1


class Overflow(Exception):
    """Lowering folded a signed integer overflow (`signed_integer_overflow(k)` in the statement: compiling it
    raises). Halide's answer is an error, not an expression."""


class NoForm(Exception):
    """No literal form on one side: Halide's lowered statement has something tileproof has no op for (a call,
    a load, a type other than int32 and bool), or a tree has what Halide has no Expr for."""


def const(v):
    if not I32_MIN <= v <= I32_MAX:
        raise NoForm(f"the constant {v} does not fit int32 (Halide's Expr type for an index)")
    return hl.Expr(v)


def positive(t):
    return t[0] == "const" and t[1] > 0


def floor_div(a, b, divisor):
    """tileproof's floordiv: Halide's `/` is Euclidean, the same where the divisor is positive; elsewhere the
    quotient one below Euclid's where the divisor is negative and does not divide."""
    if positive(divisor):
        return a / b
    return hl.select((b < 0) & (a % b != 0), a / b - 1, a / b)


def floor_mod(a, b, divisor):
    """tileproof's mod: Halide's `%` (never negative) where the divisor is positive; it plus the divisor where
    that is negative and does not divide."""
    if positive(divisor):
        return a % b
    return hl.select((b < 0) & (a % b != 0), a % b + b, a % b)


# tileproof op -> Halide, as the Python bindings build it (checked in halide_experiments.py): `-a` builds
# `0 - a`; `a != b` on bools is xor; `&` `|` on bools build && ||; `where` is `select` (both arms evaluated).
BUILD = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "neg": lambda a: -a,
    "min": hl.min, "max": hl.max,
    "lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
    "and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a != b, "not": hl.logical_not,
    "where": hl.select,
}
DIVISION = {"floordiv": floor_div, "mod": floor_mod}


def build(tree, leaf, node=None, built=None):
    """The Halide Expr of a tree, bottom-up (iterative: deep trees cannot overflow Python's stack). `leaf(t)`
    builds a `var`; `node(expr)` (optional) wraps every operation's Expr (the literal backend puts each in a
    Func of its own). With `built` (a dict), also records the Expr of every subtree, by `id` of its node."""
    stack, out = [(tree, False)], []
    while stack:
        t, seen = stack.pop()
        op = t[0]
        if op == "var":
            out.append(leaf(t))
        elif op == "const":
            if len(t) > 2:
                raise NoForm(f"a typed constant {t}")
            out.append(const(t[1]))
        elif op == "bool":
            out.append(hl.Expr(bool(t[1])))
        if op in ("var", "const", "bool"):
            if built is not None:
                built[id(t)] = out[-1]
            continue
        if op not in BUILD and op not in DIVISION:
            raise NoForm(f"Halide has no literal form of `{op}`")
        if not seen:
            stack.append((t, True))
            stack.extend((a, False) for a in reversed(t[1:]))
            continue
        n = len(t) - 1
        args = out[len(out) - n:]
        del out[len(out) - n:]
        e = DIVISION[op](*args, t[2]) if op in DIVISION else BUILD[op](*args)
        out.append(node(e) if node else e)
        if built is not None:
            built[id(t)] = out[-1]
    return out[0]


def show(variables, tree):
    """The tree as Halide prints the Expr it builds (`<halide.Expr of type int32: (x/3)>` without its frame)."""
    e = build(tree, lambda t: hl.Var(t[1]))
    return str(hl.Expr(e) if isinstance(e, hl.Var) else e).split(": ", 1)[-1].rstrip(">")


# ---- the simplifier: lowering a Func over the variables' ranges -------------------------------------------

def fits_loop(lo, hi):
    """A variable is a loop variable (`Func.bound(v, lo, hi - lo + 1)`) when the loop's extent and end fit
    int32; else a `Param` with no range (assuming less is sound): Halide computes min + extent in int32."""
    return I32_MIN <= lo and hi < I32_MAX and hi - lo + 1 <= I32_MAX


def lowered(f, params):
    """Halide's lowered statement of `f` (`Func.compile_to_lowered_stmt`, as text)."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "f.stmt")
        f.compile_to_lowered_stmt(path, params, hl.StmtOutputFormat.Text)
        with open(path) as fh:
            return fh.read()


def environment(variables):
    """The variables ((name, lo, hi) each) as Halide reads them: a loop variable bounded to its range with
    `Func.bound` (`fits_loop`), else a `Param`. Returns (the Halide object by name, the loops as (Var, lo,
    extent), the Params)."""
    loops, params, env = [], [], {}
    for k, (name, lo, hi) in enumerate(variables):
        if fits_loop(lo, hi):
            v = hl.Var(f"v{k}")
            loops.append((v, lo, hi - lo + 1))
        else:
            v = hl.Param(hl.Int(32), f"p{k}")
            params.append(v)
        env[name] = v
    return env, loops, params


def over(loops, e, name="h"):
    """A Func whose value is `e`, over the loop variables, each bounded to its range."""
    f = hl.Func(name)
    f[[v for v, _, _ in loops] or ()] = e
    for v, lo, extent in loops:
        f.bound(v, lo, extent)
    return f


def lower(variables, tree):
    """The lowered statement of a Func whose value is the tree, over `variables` ((name, lo, hi) each)."""
    env, loops, params = environment(variables)
    return lowered(over(loops, build(tree, lambda t: env[t[1]])), params)


def regions(loops, params, exprs):
    """Halide's bounds inference of each integer Expr over the loops: the region of a producer read at the
    Expr (`bK[i] = i`, computed at root, every producer read by one Func over the loops), from the lowered
    statement: a single point's store (`bK[0] = C`), or the producer's loop over constant bounds (`for
    (bK.s0.i, LO, EXTENT)`, storing `bK.s0.i`, or `bK.s0.i.rebased + OFFSET` in a loop Halide rebased to
    start at 0). A list of (lo, hi), or None where the region is not a constant (an end Halide could not
    bound, or one whose computation overflowed: `signed_integer_overflow`); all None if the pipeline does
    not lower."""
    i = hl.Var("i")
    total = hl.Expr(0)
    for k, e in enumerate(exprs):
        p = hl.Func(f"b{k}")
        p[i] = i
        p.compute_root()
        total = total + p[e]
    try:
        text = lowered(over(loops, total), params)
    except (RuntimeError, hl.HalideError):  # a region over a Param is unbounded: no bound, not a crash
        return [None] * len(exprs)
    out = []
    for k in range(len(exprs)):
        name = rf"b{k}(?:\$\d+)?"
        point = re.search(rf"\b{name}\[0\] = (-?\d+)\n", text)
        loop = re.search(rf"for \({name}\.s0\.i(\.rebased)?, (-?\d+), (\d+)\) \{{\n\s*{name}\[{name}\.s0\.i"
                         rf"(?:\.rebased)?\] = {name}\.s0\.i(?:\.rebased)?(?: \+ (-?\d+))?\n", text)
        if point is not None:
            out.append((int(point.group(1)), int(point.group(1))))
        elif loop is not None:
            lo = int(loop.group(2)) + int(loop.group(4) or 0)
            out.append((lo, lo + int(loop.group(3)) - 1))
        else:
            out.append(None)
    return out


def simplify(variables, trees):
    """Halide's simplification of each tree, lowered in a Func of its own: the value its store writes, as a
    tree over the variables. Returns (trees, statements)."""
    answers, stmts = [], []
    for tree in trees:
        text = lower(variables, tree)
        stmts.append(text)
        answers.append(stored_value(text, variables))
    return answers, stmts


# ---- reading the lowered statement back -----------------------------------------------------------------

_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_][A-Za-z0-9_.$]*)|(==|!=|<=|>=|&&|\|\||[-+*/%<>!()\[\],=]))")
_LEVELS = [("||",), ("&&",), ("==", "!="), ("<", "<=", ">", ">="), ("+", "-"), ("*", "/", "%")]
_TYPES = ("int32", "int64", "int16", "int8", "uint1", "uint8", "uint16", "uint32", "uint64", "bool")
MAX_NODES = 200_000


def tokens(text):
    out, pos = [], 0
    while True:
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            if text[pos:].strip():
                raise NoForm(f"cannot read the lowered statement at `{text[pos:pos + 40]}`")
            return out
        pos = m.end()
        num, name, punct = m.groups()
        out.append(("num", int(num)) if num else ("name", name) if name else ("op", punct))


class _Value:
    """A parsed value: its tree, its kind (`int` for int32, `bool`, `u8` for a bool stored as uint8,
    `overflow` for Halide's folded overflow, `["overflow", shape]`) and its
    size in nodes (let-bound values are substituted: a size limit keeps the answer within tileproof's budget)."""

    __slots__ = ("tree", "kind", "size")

    def __init__(self, tree, kind, size):
        self.tree, self.kind, self.size = tree, kind, size


def _node(op, kind, *args):
    size = 1 + sum(a.size for a in args)
    if size > MAX_NODES:
        raise NoForm("the answer is too large to write as a tree")
    return _Value([op, *(a.tree for a in args)], kind, size)


def _int(v):
    return _Value(["const", v], "int", 1)


def _overflowed(op, args):
    """An operation over Halide's folded overflow (`signed_integer_overflow(k)`): the overflow, named by the
    innermost operation around it, `overflow == _` (the rule that folded it left it there)."""
    for a in args:
        if a.kind == "overflow" and len(a.tree) > 1:
            return a
    slots = ["overflow" if a.kind == "overflow" else "_" for a in args]
    shape = f"{slots[0]} {op} {slots[1]}" if len(args) == 2 and not op[0].isalpha() else \
        f"{op}{slots[0]}" if len(args) == 1 and not op[0].isalpha() else f"{op}({', '.join(slots)})"
    return _Value(["overflow", shape], "overflow", 1)


def euclid_div(a, b):
    """Halide's `/` as tileproof ops: floordiv where the divisor is a positive constant; else one more than
    the floor quotient where the divisor is negative and does not divide."""
    if positive(b.tree):
        return _node("floordiv", "int", a, b)
    q = _node("floordiv", "int", a, b)
    fix = _node("and", "bool", _node("lt", "bool", b, _int(0)), _node("ne", "bool", _node("mod", "int", a, b), _int(0)))
    return _node("where", "int", fix, _node("add", "int", q, _int(1)), q)


def euclid_mod(a, b):
    """Halide's `%` (never negative) as tileproof ops: mod where the divisor is a positive constant; else mod
    minus the divisor where that is negative and does not divide."""
    r = _node("mod", "int", a, b)
    if positive(b.tree):
        return r
    fix = _node("and", "bool", _node("lt", "bool", b, _int(0)), _node("ne", "bool", r, _int(0)))
    return _node("where", "int", fix, _node("sub", "int", r, b), r)


class _Parser:
    """Halide's printed expressions (IRPrinter): binary operators fully parenthesised below the top, `min`,
    `max`, `select`, `likely`, casts `int32(...)`/`uint8(...)`, typed constants `(uint1)1`, `let x = v in b`."""

    def __init__(self, toks, scope):
        self.toks, self.i, self.scope = toks, 0, scope

    def peek(self, k=0):
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else ("end", None)

    def take(self, want=None):
        t = self.peek()
        if want is not None and t != ("op", want) and t != ("name", want):
            raise NoForm(f"expected `{want}` in the lowered statement, got `{t[1]}`")
        self.i += 1
        return t

    def whole(self):
        v = self.expr()
        if self.peek()[0] != "end":
            raise NoForm(f"unexpected `{self.peek()[1]}` in the lowered statement")
        return v

    def expr(self, level=0):
        if level == len(_LEVELS):
            return self.unary()
        a = self.expr(level + 1)
        while self.peek()[0] == "op" and self.peek()[1] in _LEVELS[level]:
            a = self.binary(self.take()[1], a, self.expr(level + 1))
        return a

    def binary(self, op, a, b):
        if "overflow" in (a.kind, b.kind):
            return _overflowed(op, [a, b])
        def ints():
            if a.kind != "int" or b.kind != "int":
                raise NoForm(f"`{op}` on {a.kind} and {b.kind}")
        if op in ("+", "-", "*"):
            ints()
            return _node({"+": "add", "-": "sub", "*": "mul"}[op], "int", a, b)
        if op == "/":
            ints()
            return euclid_div(a, b)
        if op == "%":
            ints()
            return euclid_mod(a, b)
        if op in ("&&", "||"):
            if a.kind != "bool" or b.kind != "bool":
                raise NoForm(f"`{op}` on {a.kind} and {b.kind}")
            return _node("and" if op == "&&" else "or", "bool", a, b)
        if op in ("==", "!=") and a.kind == b.kind == "bool":
            x = _node("xor", "bool", a, b)
            return x if op == "!=" else _node("not", "bool", x)
        ints()
        if op in (">", ">="):
            a, b, op = b, a, "<" if op == ">" else "<="
        return _node({"<": "lt", "<=": "le", "==": "eq", "!=": "ne"}[op], "bool", a, b)

    def unary(self):
        kind, tok = self.peek()
        if (kind, tok) == ("op", "!"):
            self.take()
            a = self.unary()
            if a.kind == "overflow":
                return _overflowed("!", [a])
            if a.kind != "bool":
                raise NoForm(f"`!` on {a.kind}")
            return _node("not", "bool", a)
        if (kind, tok) == ("op", "-"):
            self.take()
            if self.peek()[0] == "num":
                return _int(-self.take()[1])
            a = self.unary()
            return _overflowed("-", [a]) if a.kind == "overflow" else _node("neg", "int", a)
        return self.primary()

    def primary(self):
        kind, tok = self.take()
        if kind == "num":
            return _int(tok)
        if (kind, tok) == ("op", "("):
            if self.peek()[0] == "name" and self.peek()[1] in _TYPES and self.peek(1) == ("op", ")"):
                ty = self.take()[1]
                self.take(")")
                return self.typed(ty, self.unary())
            v = self.let() if self.peek() == ("name", "let") else self.expr()
            self.take(")")
            return v
        if (kind, tok) == ("name", "let"):
            self.i -= 1
            return self.let()
        if kind != "name":
            raise NoForm(f"unexpected `{tok}` in the lowered statement")
        if self.peek() == ("op", "("):
            self.take()
            args = []
            while self.peek() != ("op", ")"):
                args.append(self.let() if self.peek() == ("name", "let") else self.expr())
                if self.peek() == ("op", ","):
                    self.take()
            self.take(")")
            return self.call(tok, args)
        if self.peek() == ("op", "["):
            raise NoForm(f"the result loads from the buffer `{tok}`")
        for frame in reversed(self.scope):
            if tok in frame:
                v = frame[tok]
                if isinstance(v, NoForm):
                    raise v
                return v
        raise NoForm(f"the result has `{tok}`, which is not one of the case's variables")

    def let(self):
        self.take("let")
        name = self.take()[1]
        self.take("=")
        value = self.expr()
        self.take("in")
        self.scope.append({name: value})
        try:
            return self.expr()
        finally:
            self.scope.pop()

    def typed(self, ty, v):
        """`(type)v`: a typed constant, or a value whose printed type is not int32."""
        if v.kind == "overflow":
            return v
        if ty == "int32" and v.kind == "int":
            return v
        if ty in ("uint1", "bool"):
            if v.kind == "bool":
                return v
            if v.tree[0] == "const" and v.tree[1] in (0, 1):
                return _Value(["bool", v.tree[1] == 1], "bool", 1)
        if ty == "uint8" and v.tree[0] == "const" and v.tree[1] in (0, 1):
            return _Value(["bool", v.tree[1] == 1], "u8", 1)
        raise NoForm(f"the result has a value of type {ty}")

    def call(self, name, args):
        def arity(n):
            if len(args) != n:
                raise NoForm(f"`{name}` with {len(args)} operands")
        if name == "signed_integer_overflow":
            return _Value(["overflow"], "overflow", 1)
        if any(a.kind == "overflow" for a in args):
            return _overflowed(name, args)
        if name in ("min", "max"):
            arity(2)
            if args[0].kind != "int" or args[1].kind != "int":
                raise NoForm(f"`{name}` of {args[0].kind} and {args[1].kind}")
            return _node(name, "int", *args)
        if name == "select":
            arity(3)
            if args[0].kind != "bool" or args[1].kind != args[2].kind or args[1].kind == "u8":
                raise NoForm(f"`select` of {', '.join(a.kind for a in args)}")
            return _node("where", args[1].kind, *args)
        if name in ("likely", "likely_if_innermost"):
            arity(1)
            return args[0]  # a scheduling hint: the value is its operand's
        if name == "int32":
            arity(1)
            if args[0].kind == "int":
                return args[0]
            if args[0].kind == "bool":
                return _node("where", "int", args[0], _int(1), _int(0))
        if name == "uint8" and len(args) == 1 and args[0].kind == "bool":
            return _Value(args[0].tree, "u8", args[0].size)
        if name in ("uint1", "bool") and len(args) == 1:
            if args[0].kind == "bool":
                return args[0]
            if args[0].kind == "int":
                return _node("ne", "bool", args[0], _int(0))
        raise NoForm(f"the result has a call to `{name}`")


def _lazy(text, scope):
    """A `let` statement's value, parsed where it is used: lowering also binds values no result uses (buffer
    strides), which need no tileproof form."""
    try:
        return _Parser(tokens(text), [dict(f) for f in scope]).whole()
    except NoForm as e:
        return e


def stored_value(text, variables):
    """The value the Func's single store writes in the lowered statement `text`, as a tree over the variables
    ((name, lo, hi) each, as `lower` made them): `F.s0.vK` is variable K, `F.s0.vK.rebased` variable K minus
    its lower bound (a loop Halide rebased to start at 0), `pK` its Param."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if re.fullmatch(r"\s*produce \S+ \{", line)), None)
    if start is None:
        raise NoForm("the lowered statement has no produce block")
    func = lines[start].split()[1]
    names, loops = {}, {}
    for k, (name, lo, hi) in enumerate(variables):
        var = _Value(["var", name], "int", 1)
        if fits_loop(lo, hi):
            names[f"{func}.s0.v{k}"] = var
            loops[f"{func}.s0.v{k}"] = (str(lo), str(hi - lo + 1))
            names[f"{func}.s0.v{k}.rebased"] = var if lo == 0 else _node("sub", "int", var, _int(lo))
            loops[f"{func}.s0.v{k}.rebased"] = ("0", str(hi - lo + 1))
        else:
            names[f"p{k}"] = var
    scope, values, i, depth = [names], [], start + 1, 1
    while depth:
        if i >= len(lines):
            raise NoForm("the lowered statement ends inside its produce block")
        s = lines[i].strip()
        i += 1
        if s == "}":
            depth -= 1
            scope.pop()
            continue
        m = re.fullmatch(r"for \((\S+), (.+), (.+)\) \{", s)
        if m:
            if loops.get(m.group(1)) != (m.group(2), m.group(3)):
                raise NoForm(f"a loop `{s[:-2]}` that is not over a variable's range")
            depth += 1
            scope.append({})
            continue
        if s.startswith("let ") and " = " in s:
            name, _, value = s[4:].partition(" = ")
            scope[-1][name] = _lazy(value, scope)
            continue
        if s.startswith(func + "["):
            bracket, j = 0, len(func)
            while j < len(s):
                bracket += {"[": 1, "]": -1}.get(s[j], 0)
                j += 1
                if bracket == 0:
                    break
            value = s[j:]
            if not value.startswith(" = "):
                raise NoForm(f"cannot read the store `{s[:60]}`")
            value = value[3:]
            while not value.strip() or value.rstrip().endswith(" in"):  # a value that is a Let, one per line
                value += " " + lines[i].strip()
                i += 1
            values.append(_Parser(tokens(value), [dict(f) for f in scope]).whole())
            continue
        raise NoForm(f"the lowered statement has `{s[:60]}`, which is not a loop, a let or the store")
    if len(values) != 1:
        raise NoForm(f"the lowered statement has {len(values)} stores to the Func, not one")
    v = values[0]
    if v.kind == "overflow":
        raise Overflow(f"lowering folded a signed integer overflow: {v.tree[1] if len(v.tree) > 1 else 'overflow'}")
    return v.tree


# ---- the literal backend: Halide's JIT with nothing simplified across nodes -----------------------------

def literal(variables, trees):
    """A kernel for each tree: every operation a Func of its own, computed at root over the points, each
    variable an ImageParam: lowering's simplifier sees one operation of opaque loads at a time, so what runs
    is the tree as written (constant operands stay constants). Returns (inputs, outputs) for `realize`."""
    i = hl.Var("i")
    inputs = {name: hl.ImageParam(hl.Int(32), 1, f"in{k}") for k, (name, _, _) in enumerate(variables)}
    outputs = []
    for tree in trees:
        funcs = []

        def node(e):
            f = hl.Func(f"n{len(funcs)}")
            f[i] = e
            f.compute_root()
            funcs.append(f)
            return hl.Expr(f[i])
        e = build(tree, lambda t: inputs[t[1]][i], node)
        if tree[0] in ("var", "const", "bool"):  # a leaf: a Func that loads or holds it
            node(e)
        funcs[-1].compile_jit()
        outputs.append(funcs[-1])
    return [inputs[name] for name, _, _ in variables], outputs


def fused(variables, trees):
    """A kernel for each tree as one Func over the ImageParams: Halide's whole pipeline on the fused
    expression, its simplifier included (without the variables' ranges), then LLVM, which may use the
    no-overflow flags Halide gives signed arithmetic: what a user's pipeline computes. Returns (inputs,
    outputs) for `realize`."""
    i = hl.Var("i")
    inputs = {name: hl.ImageParam(hl.Int(32), 1, f"in{k}") for k, (name, _, _) in enumerate(variables)}
    outputs = []
    for k, tree in enumerate(trees):
        f = hl.Func(f"e{k}")
        f[i] = build(tree, lambda t: inputs[t[1]][i])
        f.compile_jit()
        outputs.append(f)
    return [inputs[name] for name, _, _ in variables], outputs


def realize(kernel, points):
    """The kernel's values at each point (a tuple of the variables' values): one list per point."""
    inputs, outputs = kernel
    n = len(points)
    for k, param in enumerate(inputs):
        b = hl.Buffer(hl.Int(32), [n])
        for j, p in enumerate(points):
            if not I32_MIN <= p[k] <= I32_MAX:
                raise NoForm(f"the point {list(p)} has the value {p[k]}, which is not an int32")
            b[j] = p[k]
        param.set(b)
    cols = []
    for f in outputs:
        out = f.realize([n])
        cols.append([out[j] for j in range(n)])
    return [[c[j] for c in cols] for j in range(n)]


def at_point(variables, trees, point, kernel=literal):
    """Compiles the trees (`literal`, or `fused`) and runs them at one point in a child process: their
    values, or the trap, or Halide's error."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child writes its result and exits, whatever happens
        try:
            try:
                text = repr(realize(kernel(variables, trees), [tuple(point)])[0])
            except Exception as e:  # noqa: BLE001 - Halide's message is the result
                text = f"error: {type(e).__name__}: {str(e).strip().splitlines()[-1] if str(e).strip() else ''}"
            os.write(w, text.encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        text = f.read()
    status = os.waitpid(pid, 0)[1]
    return f"trap {signal.Signals(os.WTERMSIG(status)).name}" if os.WIFSIGNALED(status) else text or "no result"
# ----

variables = [('x', -16, 16)]  # (name, lo, hi): Func.bound(v, lo, hi - lo + 1), or a Param past int32
source = json.loads("[[\"sub\", [\"floordiv\", [\"var\", \"x\"], [\"const\", 268435326]], [\"var\", \"x\"]]]")
print("input:  ", " ; ".join(show(variables, t) for t in source))
answer, stmts = simplify(variables, source)
for s in stmts:
    print(s[s.index("produce"):].rstrip())
print("answer: ", " ; ".join(show(variables, t) for t in answer))
point = [-16]
want = at_point(variables, source, point)  # what the input means
got = at_point(variables, answer, point)
print("at x = -16, realized by the JIT: input", want, "| answer (jit)", got)
# what a user's pipeline computes: each side as one fused Func (Halide's simplifier rewrites the input too)
print("  as one fused Func each: input", at_point(variables, source, point, fused), "| answer", at_point(variables, answer, point, fused))
if want == got:
    print("no longer reproduces: both compute the same")
sys.exit(0 if want == got else 1)
