"""A tinygrad rule translated from its source into tileproof's rule DSL
(docs/protocol.md, section 6, `translation`; issue 48).

The rule's UPat gives the left side: each op one DSL operator (the table
below), a named sub-pattern one pattern variable (one name, one node), a
`cvar` an uppercase constant variable, a constant its literal; a node that
allows several ops is one left side per op. The rule's function (a
`lambda` or a `def`, read with `ast` from its source file) gives the guard
and the right side: it is evaluated symbolically, each `if`/`else` and
conditional expression splitting the evaluation into paths, each with the
conditions that lead to it; a path that returns `None` is where the rule
does not fire, every other path is one DSL rule whose guard is its
conditions. Python's integers are exact, as the DSL's guards are: `//` and
`%` on integers are floor division and remainder (the DSL's `//`, `mod`),
and so are `//` and `%` on UOps (tinygrad 0.14: FLOORDIV, FLOORMOD).
Python's true division of integers is a float, the double nearest the
exact quotient: turned back into an integer by `math.ceil`, `math.floor`
or `int` it is the DSL's `ceil_truediv`, `floor_truediv`, `trunc_truediv`
(exactly what Python computes, rounding included); any other use of a
float has no DSL form.
Subtraction and negation are spelled as tinygrad builds them (`x + y*-1`,
`x*-1`). A module function the rule calls is translated in place with its
arguments bound, so a helper that is pure index arithmetic translates and
one that walks the graph stops at the construct that does.

What has no DSL form raises `Untranslatable` naming the construct and its
source line: the rule is then checked on instances only.
"""

import ast
import inspect
import linecache
import math
import os

from tinygrad.dtype import Invalid, dtypes
from tinygrad.uop.ops import Ops

from tinygrad_uops import IDX

BOOL = dtypes.bool

# tinygrad op -> DSL operator, by the dtype of the node (one row each).
INT_OPS = {Ops.ADD: "+", Ops.SUB: "-", Ops.MUL: "*", Ops.FLOORDIV: "//", Ops.FLOORMOD: "mod", Ops.CDIV: "/",
           Ops.CMOD: "%", Ops.MAX: "max", Ops.SHL: "<<", Ops.SHR: ">>", Ops.AND: "&"}
BOOL_OPS = {Ops.AND: "&&", Ops.OR: "||", Ops.XOR: "^"}
CMP_OPS = {Ops.CMPLT: "<", Ops.CMPNE: "!=", Ops.CMPEQ: "=="}
# DSL operators written as calls rather than infix.
CALL_OPS = {"max"}
# Words the DSL reserves: a tinygrad name that is one gets a suffix.
RESERVED = {"where", "min", "max", "invalid", "true", "false", "vmin", "vmax", "valid", "fits", "gcd", "abs",
            "divides", "is_pow2", "log2", "if", "using", "rule", "group", "index", "i32", "i64", "floordiv",
            "mod", "ceildiv", "constrained", "is_const", "min_of", "max_of", "bool", "cast", "terminates"}
# Paths (and left-side alternatives) one rule may split into.
MAX_PATHS = 16
# How deep module helpers are translated in place.
MAX_INLINE = 4


class Untranslatable(Exception):
    """No DSL form: the message names the construct (and its line)."""


class NoForm(Untranslatable):
    """A left side (or its result) with a node tileproof has no form for at
    all (a bool-typed Invalid, a bool `!=` other than `x != True`): no
    instance in tileproof's language has it, so the rule's other left sides
    stand without it."""


# ---- values of the symbolic evaluation ----------------------------------------------

class Term:
    """A UOp: its DSL text and dtype ("int"/"bool"). `var` is the pattern
    or constant variable it is bound to, `op` the tinygrad op of a named
    pattern node with one op."""

    def __init__(self, text, dtype, var=None, const=False, op=None):
        self.text, self.dtype, self.var, self.const, self.op = text, dtype, var, const, op


class Int:
    """A Python integer, as an exact DSL expression over constants
    (`value`: the integer itself where it is known)."""

    def __init__(self, text, value=None):
        self.text, self.value = text, value


class Quot:
    """A Python float `a / b` of two integers (`Int`s): it has a DSL form
    only once `math.ceil`, `math.floor` or `int` makes it an integer."""

    def __init__(self, a, b):
        self.a, self.b = a, b


# The calls that make a `Quot` an integer: the DSL helper of each, and
# Python's own function for known operands.
ROUNDINGS = {"ceil": ("ceil_truediv", math.ceil), "floor": ("floor_truediv", math.floor),
             "int": ("trunc_truediv", int)}


class Cond:
    """A Python bool, as a DSL guard condition."""

    def __init__(self, text):
        self.text = text


class OpOf:
    """`u.op` of a node whose op the pattern does not fix."""

    def __init__(self, term):
        self.term = term


class Opaque:
    """A module-level object the evaluation may read attributes of (`Ops`,
    `dtypes`, `math`, a helper function)."""

    def __init__(self, obj, name):
        self.obj, self.name = obj, name


NONE = object()
TRUE, FALSE = Cond("true"), Cond("false")


def int_lit(v):
    return Int(str(v) if v >= 0 else f"({v})", v)


# Python's integer operators on known integers (exact), for literals
# such as `2**62`; `**` only up to an exponent that stays small.
FOLD = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
        ast.FloorDiv: lambda a, b: a // b if b else None, ast.Mod: lambda a, b: a % b if b else None,
        ast.Pow: lambda a, b: a ** b if 0 <= b <= 128 else None,
        ast.LShift: lambda a, b: a << b if 0 <= b <= 128 else None}


# ---- the left side ----------------------------------------------------------------

class Names:
    """DSL names for the pattern's names: lowercase pattern variables,
    uppercase constant variables, fresh ones for unnamed sub-patterns."""

    def __init__(self):
        self.fresh = 0

    def var(self, name):
        if name is None:
            self.fresh += 1
            return f"u{self.fresh}"
        n = name if name[0].islower() else "v" + name
        return n + "_" if n in RESERVED else n

    def const(self, name):
        if name is None:
            self.fresh += 1
            return f"K{self.fresh}"
        return name.upper()


def _orders(p):
    if p.src is None:
        return None
    if len(p.src) == 1 and not isinstance(p.src[0], tuple):
        raise Untranslatable("a pattern whose every source matches one pattern (a repeated `src`)")
    return p.src


def _dtype_of(p, want):
    if p.match_dtype is None:
        return want
    ds = set(p.match_dtype)
    has_int = IDX in ds or any(d in ds for d in dtypes.ints)
    if BOOL in ds and (want == "bool" or not has_int):
        return "bool"
    if has_int:
        return "int"
    raise Untranslatable(f"a node of dtype {', '.join(sorted(str(d) for d in ds))}")


def left_sides(upat, names):
    """Every left side of `upat`: (DSL text, dtype, {name: Term}) per
    choice of op at each node that allows several."""
    def go(p, want, env):
        if p.is_any:
            raise Untranslatable("alternatives (`UPat.any`)")
        if p.src is not None and not p.strict_length:
            raise Untranslatable("a pattern with `allow_any_len`")
        if p.name is not None and p.name in env:
            yield env[p.name].text, env[p.name].dtype, env
            return
        dt = _dtype_of(p, want)
        if p.op is None:
            v = names.var(p.name)
            ann = ":bool" if dt == "bool" and want != "bool" else ""
            t = Term(v, dt or "int", var=v)
            yield v + ann, t.dtype, _bind(env, p.name, t)
            return
        ops = [o for o in p.op if o is not Ops.STACK]  # a cvar also matches a STACK of constants: no DSL form
        if ops == [Ops.CONST]:
            if p.arg is Invalid:
                if want == "bool":
                    raise NoForm("a bool-typed Invalid (the DSL's invalid is an index)")
                yield "invalid", "int", _bind(env, p.name, Term("invalid", "int"))
            elif p.arg is None:
                if p.src:
                    raise Untranslatable("a constant with sources")
                if dt == "bool":
                    # The DSL has no bool constant variable: a bool constant
                    # is one of two literals, one left side each.
                    for lit in ("true", "false"):
                        yield lit, "bool", _bind(env, p.name, Term(lit, "bool", const=True))
                    return
                c = names.const(p.name)
                yield c, "int", _bind(env, p.name, Term(c, "int", var=c, const=True))
            elif isinstance(p.arg, bool) or (dt == "bool" and p.arg in (0, 1)):
                t = "true" if p.arg else "false"
                yield t, "bool", _bind(env, p.name, Term(t, "bool"))
            elif isinstance(p.arg, int):
                t = int_lit(p.arg).text
                yield t, dt or "int", _bind(env, p.name, Term(t, dt or "int", const=True))
            else:
                raise Untranslatable(f"the constant {p.arg!r}")
            return
        orders = _orders(p)
        # An op with no DSL form is no left side (no index or bool
        # instance has it); the rule is untranslatable only if none has one.
        first, any_op = None, False
        for o in ops:
            try:
                alts = list(node(p, o, dt, orders, env))
            except Untranslatable as ex:
                first = first or ex
                continue
            any_op = True
            yield from alts
        if not any_op:
            raise first

    def node(p, o, dt, orders, env, bool_form=False):
        # An op of both an int and a bool form (AND) of a node whose dtype
        # the pattern leaves open is both left sides.
        if o in BOOL_OPS and o in INT_OPS and dt is None and not bool_form:
            for alt in (lambda: node(p, o, "int", orders, env), lambda: node(p, o, None, orders, env, True)):
                try:
                    yield from list(alt())
                except NoForm:
                    pass
            return
        if o is Ops.WHERE:
            arm = dt if dt in ("int", "bool") else None
            kinds, render = ["bool", arm, arm], lambda a: f"where({a[0]}, {a[1]}, {a[2]})"
            out_dt = None
        elif o in CMP_OPS:
            kinds, render, out_dt = [None, None], lambda a, s=CMP_OPS[o]: f"({a[0]} {s} {a[1]})", "bool"
            if o is Ops.CMPNE:
                kinds = [None, None]
        elif o is Ops.NEG:
            kinds, render, out_dt = ["int"], lambda a: f"(-{a[0]})", "int"
        elif o in BOOL_OPS and dt != "int" and (dt == "bool" or o not in INT_OPS or bool_form):
            kinds, render, out_dt = ["bool", "bool"], lambda a, s=BOOL_OPS[o]: f"({a[0]} {s} {a[1]})", "bool"
        elif o in INT_OPS and dt != "bool":
            s = INT_OPS[o]
            kinds, out_dt = ["int", "int"], "int"
            render = (lambda a, s=s: f"{s}({a[0]}, {a[1]})") if s in CALL_OPS else \
                (lambda a, s=s: f"({a[0]} {s} {a[1]})")
        else:
            raise Untranslatable(f"the op {o.name}{' of dtype ' + dt if dt else ''}, which the DSL has no operator for")
        if orders is None:
            orders = [tuple([type(p)()] * len(kinds))]
        # A commutative op's orders are one DSL operator (it matches both);
        # a non-commutative one's several orders are several left sides.
        for order in orders[:1] if len(orders) > 1 and (o in (Ops.ADD, Ops.MUL, Ops.MAX, Ops.CMPNE, Ops.CMPEQ)
                                                         or o in BOOL_OPS and dt == "bool") else orders:
            if len(order) != len(kinds):
                raise Untranslatable(f"{o.name} with {len(order)} sources")
            for texts, dts, env2 in kids(order, kinds, env):
                d = out_dt or next((x for x in dts[1:] if x), None) or dt or "int"
                if o not in CMP_OPS and o is not Ops.WHERE and any(k and x and k != x for k, x in zip(kinds, dts)):
                    raise NoForm(f"a {kinds[0]} {o.name} of a {'bool' if kinds[0] == 'int' else 'int'} operand")
                if (o in CMP_OPS or out_dt == "bool" and o in BOOL_OPS) and "bool" in dts:
                    # `x != 1` of a bool x: the constant is True
                    texts = [{"1": "true", "0": "false"}.get(t, t) for t in texts]
                if o in CMP_OPS and "bool" in dts:
                    texts, render = bool_compare(o, texts), lambda a: a[0]
                text = render(texts)
                yield text, d, _bind(env2, p.name, Term(text, d, op=o))

    def kids(order, kinds, env):
        if not order:
            yield [], [], env
            return
        for t, d, env2 in go(order[0], kinds[0], env):
            for ts, ds, env3 in kids(order[1:], kinds[1:], env2):
                yield [t] + ts, [d] + ds, env3

    out = []
    for alt in go(upat, None, {}):
        out.append(alt)
        if len(out) > MAX_PATHS:
            raise Untranslatable(f"more than {MAX_PATHS} left sides")
    return out


def bool_compare(o, texts):
    """A comparison of bools: tinygrad's `x != True` is the DSL's `!x`
    (the one bool comparison with a literal tileproof form)."""
    a, b = texts
    if o is Ops.CMPNE and "true" in (a, b):
        return [f"(!{b if a == 'true' else a})"]
    raise NoForm(f"a bool `{CMP_OPS[o]}` other than `x != True`")


def _bind(env, name, term):
    if name is None:
        return env
    e = dict(env)
    e[name] = term
    return e


# ---- reading the function --------------------------------------------------------

_MODULES = {}


def _module_ast(path):
    if path not in _MODULES:
        src = "".join(linecache.getlines(path))
        if not src:
            raise Untranslatable(f"the source of {path} cannot be read")
        _MODULES[path] = ast.parse(src)
    return _MODULES[path]


def function_ast(fn):
    """The `ast` node of a function: its `def`, or the one lambda on its
    first line with its parameters."""
    fn = getattr(fn, "__wrapped__", fn)
    code = getattr(fn, "__code__", None)
    if code is None:
        raise Untranslatable(f"{fn!r} is not a Python function")
    path = inspect.getsourcefile(fn)
    tree = _module_ast(path)
    params = list(code.co_varnames[:code.co_argcount])
    found = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Lambda) and n.lineno == code.co_firstlineno and \
                [a.arg for a in n.args.args] == params:
            found.append(n)
        elif isinstance(n, (ast.FunctionDef,)) and n.name == fn.__name__ and \
                code.co_firstlineno in (n.lineno, *(d.lineno for d in n.decorator_list)):
            found.append(n)
    if len(found) != 1:
        raise Untranslatable(f"{len(found)} functions named like {fn.__name__} at {path}:{code.co_firstlineno}")
    return found[0], path


class Eval:
    """The symbolic evaluation of one function body: paths of
    (conditions, value)."""

    def __init__(self, fn, path, depth=0):
        self.fn, self.path, self.depth = fn, path, depth
        self.globals = getattr(fn, "__globals__", {})
        self.closure = {}
        if getattr(fn, "__closure__", None):
            self.closure = dict(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__)))

    def stop(self, node, what):
        where = location_of(self.path, getattr(node, "lineno", 0))
        raise Untranslatable(f"{what} at {where}")

    # -- statements: a list of (conds, env) states, each ends in a value
    def body(self, stmts, conds, env):
        """Paths (conds, value) of running `stmts` from one state."""
        if not stmts:
            return [(conds, NONE)]
        s, rest = stmts[0], stmts[1:]
        if isinstance(s, ast.Return):
            return self.expr(s.value, conds, env) if s.value is not None else [(conds, NONE)]
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str):
            return self.body(rest, conds, env)  # a docstring
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
            out = []
            for c, v in self.expr(s.value, conds, env):
                out += self.body(rest, c, {**env, s.targets[0].id: v})
            return self.cap(s, out)
        if isinstance(s, ast.If):
            out = []
            for c, t in self.expr(s.test, conds, env):
                for branch, cond in ((s.body, self.truth(s.test, t)), (s.orelse, negate(self.truth(s.test, t)))):
                    cc = conj(c, cond)
                    if cc is None:
                        continue
                    out += self.body(list(branch) + rest, cc, env)
            return self.cap(s, out)
        self.stop(s, f"the statement `{ast.unparse(s).splitlines()[0]}`")

    def cap(self, node, paths):
        if len(paths) > MAX_PATHS:
            self.stop(node, f"more than {MAX_PATHS} paths")
        return paths

    def no_float(self, node, *vals):
        if any(isinstance(v, Quot) for v in vals):
            self.stop(node, f"the float in `{ast.unparse(node)}` (a true division used other than by "
                            "math.ceil, math.floor or int)")

    def truth(self, node, v):
        self.no_float(node, v)
        if isinstance(v, Cond):
            return v
        if isinstance(v, Int):
            return Cond(f"({v.text} != 0)")
        if v is NONE:
            return FALSE
        if isinstance(v, Term) and v.const and v.dtype == "int":
            return Cond(f"({v.text} != 0)")
        self.stop(node, f"the truth of `{ast.unparse(node)}`")

    # -- expressions
    def expr(self, e, conds, env):
        paths = self._expr(e, conds, env)
        return self.cap(e, [(c, v) for c, v in paths if c is not None])

    def _expr(self, e, conds, env):
        if isinstance(e, ast.Constant):
            v = e.value
            if v is None:
                return [(conds, NONE)]
            if isinstance(v, bool):
                return [(conds, TRUE if v else FALSE)]
            if isinstance(v, int):
                return [(conds, int_lit(v))]
            self.stop(e, f"the constant {v!r} (floats have no DSL form)")
        if isinstance(e, ast.Name):
            if e.id in env:
                return [(conds, env[e.id])]
            return [(conds, self.global_(e, e.id))]
        if isinstance(e, ast.NamedExpr):
            out = []
            for c, v in self.expr(e.value, conds, env):
                env[e.target.id] = v  # the walrus binds in the enclosing scope
                out.append((c, v))
            return out
        if isinstance(e, ast.IfExp):
            out = []
            for c, t in self.expr(e.test, conds, env):
                cond = self.truth(e.test, t)
                for branch, cc in ((e.body, conj(c, cond)), (e.orelse, conj(c, negate(cond)))):
                    if cc is not None:
                        out += self.expr(branch, cc, env)
            return out
        if isinstance(e, ast.BoolOp):
            return self.boolop(e, conds, env)
        if isinstance(e, ast.UnaryOp):
            return [(c, self.unary(e, v)) for c, v in self.expr(e.operand, conds, env)]
        if isinstance(e, ast.BinOp):
            return [(c2, self.binary(e, type(e.op), a, b))
                    for c1, a in self.expr(e.left, conds, env) for c2, b in self.expr(e.right, c1, env)]
        if isinstance(e, ast.Compare):
            return self.compare(e, conds, env)
        if isinstance(e, ast.Attribute):
            return [(c, self.attr(e, v, e.attr)) for c, v in self.expr(e.value, conds, env)]
        if isinstance(e, ast.Call):
            return self.call(e, conds, env)
        self.stop(e, f"the expression `{ast.unparse(e)}`")

    def global_(self, node, name):
        if name in self.closure:
            obj = self.closure[name]
        elif name in self.globals:
            obj = self.globals[name]
        elif name in ("abs", "min", "max", "int"):
            return Opaque(name, name)
        else:
            self.stop(node, f"the name `{name}`")
        if isinstance(obj, bool):
            return TRUE if obj else FALSE
        if isinstance(obj, int):
            return int_lit(obj)
        return Opaque(obj, name)

    def boolop(self, e, conds, env):
        # Python's `and`/`or` on conditions, short-circuiting where an
        # operand is a constant truth (a value-returning `or` has no DSL form)
        is_and = isinstance(e.op, ast.And)
        stop_at = FALSE if is_and else TRUE
        paths, done = [(conds, None)], []
        for operand in e.values:
            nxt = []
            for c, acc in paths:
                for c2, v in self.expr(operand, c, env):
                    if not isinstance(v, (Cond, Int)) and not (isinstance(v, Term) and v.const) and v is not NONE:
                        self.stop(operand, f"`{ast.unparse(e)}` used as a value")
                    t = self.truth(operand, v)
                    if t is stop_at:
                        done.append((c2, stop_at))
                        continue
                    if t is (TRUE if is_and else FALSE):
                        nxt.append((c2, acc))
                        continue
                    nxt.append((c2, t if acc is None else Cond(f"({acc.text} {'&&' if is_and else '||'} {t.text})")))
            paths = nxt
        return done + [(c, (TRUE if is_and else FALSE) if acc is None else acc) for c, acc in paths]

    def unary(self, e, v):
        self.no_float(e, v)
        if isinstance(e.op, ast.Not):
            return negate(self.truth(e.operand, v))
        if isinstance(e.op, ast.USub):
            if isinstance(v, Int):
                return int_lit(-v.value) if v.value is not None else Int(f"(-{v.text})")
            if isinstance(v, Term) and v.dtype == "int":
                return Term(f"({v.text} * -1)", "int")  # tinygrad's __neg__ is a MUL by -1
        if isinstance(e.op, ast.Invert) and isinstance(v, Term) and v.dtype == "bool":
            return Term(f"(!{v.text})", "bool")
        self.stop(e, f"the operator `{ast.unparse(e)}`")

    def as_term(self, node, v, like="int"):
        self.no_float(node, v)
        if isinstance(v, Term):
            return v
        if isinstance(v, Int):
            return Term(v.text, "int")
        if v is TRUE or v is FALSE:
            return Term(v.text, "bool")
        self.stop(node, f"`{ast.unparse(node)}` as a UOp")

    def binary(self, e, op, a, b):
        self.no_float(e, a, b)
        if isinstance(a, Int) and isinstance(b, Int) and op is ast.Div:
            return Quot(a, b)
        if isinstance(a, Int) and isinstance(b, Int):
            if a.value is not None and b.value is not None and op in FOLD:
                v = FOLD[op](a.value, b.value)
                if v is not None:
                    return int_lit(v)
            sym = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "mod"}.get(op)
            if sym is not None:
                return Int(f"({a.text} {sym} {b.text})")
            if op is ast.BitAnd:
                return Int(f"({a.text} & {b.text})")
            self.stop(e, f"the integer operator in `{ast.unparse(e)}`")
        if isinstance(a, Term) or isinstance(b, Term):
            x, y = self.as_term(e.left, a), self.as_term(e.right, b)
            if x.dtype == "bool" or y.dtype == "bool":
                sym = {ast.BitAnd: "&&", ast.BitOr: "||", ast.BitXor: "^"}.get(op)
                if sym and x.dtype == y.dtype == "bool":
                    return Term(f"({x.text} {sym} {y.text})", "bool")
                self.stop(e, f"the bool operator in `{ast.unparse(e)}`")
            if op is ast.Sub:  # tinygrad's __sub__ is x + y*-1 (an int's negation computed)
                neg = f"(-{y.text})" if isinstance(b, Int) else f"({y.text} * -1)"
                return Term(f"({x.text} + {neg})", "int")
            sym = {ast.Add: "+", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "mod", ast.BitAnd: "&",
                   ast.LShift: "<<", ast.RShift: ">>"}.get(op)
            if sym is None:
                self.stop(e, f"the UOp operator in `{ast.unparse(e)}`")
            return Term(f"({x.text} {sym} {y.text})", "int")
        self.stop(e, f"the operands of `{ast.unparse(e)}`")

    def compare(self, e, conds, env):
        paths = [(conds, None, None)]
        for op, right in zip(e.ops, e.comparators):
            nxt = []
            for c, acc, left in paths:
                lefts = [(c, left)] if left is not None else self.expr(e.left, c, env)
                for c1, lv in lefts:
                    for c2, rv in self.expr(right, c1, env):
                        r = self.cmp(e, op, lv, rv)
                        nxt.append((c2, r if acc is None else ("and", acc, r), rv))
            paths = nxt
        out = []
        for c, acc, _ in paths:
            out.append((c, self.fold_and(e, acc)))
        return out

    def fold_and(self, e, acc):
        if isinstance(acc, tuple):
            a, b = self.fold_and(e, acc[1]), self.fold_and(e, acc[2])
            if not (isinstance(a, Cond) and isinstance(b, Cond)):
                self.stop(e, "a chained comparison of UOps")
            return Cond(f"({a.text} && {b.text})")
        return acc

    def cmp(self, e, op, a, b):
        self.no_float(e, a, b)
        if isinstance(op, (ast.Is, ast.IsNot)):
            same = self.identity(e, a, b)
            return same if isinstance(op, ast.Is) else negate(same)
        if isinstance(a, Int) and isinstance(b, Int) or \
                (isinstance(a, (Int, Term)) and isinstance(b, (Int, Term)) and
                 all(isinstance(v, Int) or (v.const and isinstance(op, (ast.Eq, ast.NotEq))) for v in (a, b))
                 and not (isinstance(a, Term) or isinstance(b, Term))):
            sym = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}[type(op)]
            return Cond(f"({a.text} {sym} {b.text})")
        if isinstance(a, Term) or isinstance(b, Term):
            x, y = self.as_term(e, a), self.as_term(e, b)
            if isinstance(op, ast.Lt):
                return Term(f"({x.text} < {y.text})", "bool")
            if isinstance(op, ast.Gt):
                return Term(f"({y.text} < {x.text})", "bool")
            if isinstance(op, ast.GtE):  # tinygrad's __ge__ is (x < y).logical_not()
                return Term(f"(!({x.text} < {y.text}))", "bool")
            if isinstance(op, ast.LtE):
                return Term(f"(!({y.text} < {x.text}))", "bool")
            if isinstance(op, ast.NotEq):
                return self.ne(e, x, y)
            self.stop(e, "`==` on UOps (node identity, not a value comparison)")
        self.stop(e, f"the comparison `{ast.unparse(e)}`")

    def ne(self, e, x, y):
        if "bool" in (x.dtype, y.dtype):
            try:
                return Term(bool_compare(Ops.CMPNE, [x.text, y.text])[0], "bool")
            except NoForm as ex:
                self.stop(e, str(ex))
        return Term(f"({x.text} != {y.text})", "bool")

    def identity(self, e, a, b):
        # `u.op is Ops.X` on a node whose op the pattern fixes or leaves open
        for x, y in ((a, b), (b, a)):
            if isinstance(y, Opaque) and isinstance(y.obj, Ops):
                if isinstance(x, Opaque) and isinstance(x.obj, Ops):
                    return TRUE if x.obj is y.obj else FALSE
                if isinstance(x, OpOf):
                    if y.obj is Ops.CONST:
                        return TRUE if x.term.const else Cond(f"is_const({x.term.text})")
                    self.stop(e, f"a test of a node's op against {y.obj.name}")
        if a is NONE or b is NONE:
            x = b if a is NONE else a
            return TRUE if x is NONE else FALSE
        self.stop(e, f"the identity test `{ast.unparse(e)}`")

    def attr(self, e, v, name):
        if isinstance(v, Term):
            if name in ("val", "arg") and v.const:
                if v.dtype == "bool":
                    return TRUE if v.text == "true" else FALSE
                return Int(v.text)
            if name in ("vmin", "vmax"):
                if v.const:
                    return Int(v.text)
                if v.var is not None:
                    return Int(f"{name}({v.text})")
                self.stop(e, f"`.{name}` of a node that is not a captured variable")
            if name == "is_invalid":
                return TRUE if v.text == "invalid" else FALSE if v.const else \
                    self.stop(e, "`.is_invalid` of a node that may or may not be Invalid")
            if name == "op":
                if v.op is not None:
                    return Opaque(v.op, v.op.name)
                return OpOf(v)
            if name in ("logical_not", "where", "maximum", "const_like", "ne", "alu", "eq", "minimum"):
                return ("method", v, name)
            self.stop(e, f"`.{name}` of a UOp")
        if isinstance(v, Opaque):
            if isinstance(v.obj, type) and v.obj is Ops:
                return Opaque(getattr(Ops, name), name)
            if v.obj is dtypes and name == "bool":
                return Opaque("bool-dtype", "dtypes.bool")
            if v.obj is math and name == "gcd":
                return Opaque("gcd", "math.gcd")
            if v.obj is math and name in ("ceil", "floor"):
                return Opaque(name, f"math.{name}")
            if v.obj is type(e) or name == "maximum":
                return Opaque(("static", name), name)
            if hasattr(v.obj, "__name__") and v.obj.__name__ == "UOp" and name in ("maximum", "const"):
                return Opaque(("static", name), name)
        self.stop(e, f"`{ast.unparse(e)}`")

    def call(self, e, conds, env):
        if isinstance(e.func, ast.Name) and e.func.id == "isinstance" and len(e.args) == 2 and \
                isinstance(e.args[1], ast.Name) and e.args[1].id == "float":
            return [(conds, FALSE)]  # the DSL's values are integers and bools, never floats
        if e.keywords:
            self.stop(e, f"the keyword arguments of `{ast.unparse(e)}`")
        # The arguments first, so that what stops a call inside them (a
        # float division) is what is named.
        out = []
        for c, args in self.args(e.args, conds, env):
            for c2, f in self.expr(e.func, c, env):
                out += self.apply(e, f, args, c2)
        return out

    def args(self, nodes, conds, env):
        paths = [(conds, [])]
        for n in nodes:
            paths = [(c2, vs + [v]) for c, vs in paths for c2, v in self.expr(n, c, env)]
        return paths

    def apply(self, e, f, args, conds):
        if isinstance(f, tuple) and f[0] == "method":
            return [(conds, self.method(e, f[1], f[2], args))]
        if isinstance(f, Opaque):
            obj = {math.ceil: "ceil", math.floor: "floor"}.get(f.obj, f.obj) if callable(f.obj) else f.obj
            if obj in ROUNDINGS and len(args) == 1 and isinstance(args[0], (Quot, Int)):
                return [(conds, self.rounded(args[0], obj))]
            if obj == "abs" and len(args) == 1 and isinstance(args[0], Int):
                t = args[0].text
                return [(conds, Int(f"max({t}, -{t})"))]
            if obj in ("min", "max") and len(args) == 2 and all(isinstance(a, Int) for a in args):
                return [(conds, Int(f"{obj}({args[0].text}, {args[1].text})"))]
            if obj == "int" and len(args) == 1 and isinstance(args[0], Int):
                return [(conds, args[0])]
            if obj == "gcd" and len(args) == 2 and all(isinstance(a, Int) for a in args):
                return [(conds, Int(f"gcd({args[0].text}, {args[1].text})"))]
            if obj == ("static", "maximum") and len(args) == 2:
                x, y = self.as_term(e, args[0]), self.as_term(e, args[1])
                return [(conds, Term(f"max({x.text}, {y.text})", "int"))]
            if inspect.isfunction(obj) and obj.__module__ != "math":
                return self.inline(e, obj, args, conds)
        self.stop(e, f"the call `{ast.unparse(e)}`")

    def rounded(self, v, how):
        """`math.ceil`, `math.floor` or `int` of an integer or of a true
        division of integers."""
        if isinstance(v, Int):
            return v
        helper, py = ROUNDINGS[how]
        if v.a.value is not None and v.b.value is not None and v.b.value != 0:
            return int_lit(py(v.a.value / v.b.value))
        return Int(f"{helper}({v.a.text}, {v.b.text})")

    def method(self, e, v, name, args):
        if name == "logical_not" and not args:
            return Term(f"(!{v.text})", "bool")
        if name == "where" and len(args) == 2:
            a, b = (self.as_term(e, x) for x in args)
            if "invalid" in (a.text, b.text) and "bool" in (a.dtype, b.dtype):
                raise NoForm(f"a bool-typed Invalid at {location_of(self.path, e.lineno)}")
            return Term(f"where({v.text}, {a.text}, {b.text})", a.dtype if a.text != "invalid" else b.dtype)
        if name == "maximum" and len(args) == 1:
            return Term(f"max({v.text}, {self.as_term(e, args[0]).text})", "int")
        if name == "ne" and len(args) == 1:
            return self.ne(e, v, self.as_term(e, args[0]))
        if name == "eq" and len(args) == 1:
            return Term(f"({v.text} == {self.as_term(e, args[0]).text})", "bool")
        if name == "const_like" and len(args) in (1, 2):
            if len(args) == 2 and not (isinstance(args[1], Opaque) and args[1].obj == "bool-dtype"):
                self.stop(e, "`const_like` with a dtype other than dtypes.bool")
            a = args[0]
            if a is TRUE or a is FALSE:
                return Term(a.text, "bool")
            if isinstance(a, Int):
                dt = "bool" if len(args) == 2 else v.dtype
                if dt == "bool":  # a bool constant is a literal: 0 and 1 are false and true
                    if a.value not in (0, 1):
                        self.stop(e, f"the bool constant {a.text}")
                    return Term("true" if a.value else "false", "bool")
                return Term(a.text, dt)
            self.stop(e, f"`const_like` of `{ast.unparse(e.args[0])}`")
        if name == "alu" and len(args) == 2 and isinstance(args[0], Opaque) and isinstance(args[0].obj, Ops):
            op, y = args[0].obj, self.as_term(e, args[1])
            table = BOOL_OPS if v.dtype == "bool" else INT_OPS
            if op in table:
                s = table[op]
                return Term(f"{s}({v.text}, {y.text})" if s in CALL_OPS else f"({v.text} {s} {y.text})", v.dtype)
            if op in CMP_OPS:
                return Term(f"({v.text} {CMP_OPS[op]} {y.text})", "bool")
        self.stop(e, f"the method `{ast.unparse(e.func)}`")

    def inline(self, e, fn, args, conds):
        if self.depth >= MAX_INLINE:
            self.stop(e, f"helpers nested more than {MAX_INLINE} deep")
        node, path = function_ast(fn)
        if not isinstance(node, ast.FunctionDef):
            self.stop(e, f"the call of `{fn.__name__}`")
        a = node.args
        if a.vararg or a.kwarg or a.kwonlyargs or len(a.args) < len(args):
            self.stop(node, f"the parameters of `{fn.__name__}`")
        params = [p.arg for p in a.args]
        defaults = list(fn.__defaults__ or ())
        env = dict(zip(params, args))
        inner = Eval(fn, path, self.depth + 1)
        missing = params[len(args):]
        for p, d in zip(missing, defaults[len(defaults) - len(missing):] if missing else []):
            env[p] = inner.global_(node, p) if not isinstance(d, (bool, int)) else \
                (TRUE if d is True else FALSE if d is False else int_lit(d))
        return inner.body(list(node.body), conds, env)


def location_of(path, line):
    cwd = os.getcwd() + os.sep
    if path.startswith(cwd) and "site-packages" not in path:  # the user's own file, as they name it
        return f"{path[len(cwd):]}:{line}"
    parts = path.replace("\\", "/").split("/")
    if "tinygrad" in parts:
        path = "/".join(parts[len(parts) - 1 - parts[::-1].index("tinygrad"):])
    return f"{path}:{line}"


def negate(c):
    if c is TRUE:
        return FALSE
    if c is FALSE:
        return TRUE
    return Cond(f"!{c.text}")


def conj(conds, c):
    """`conds` and `c`, or None where the path cannot be taken."""
    if c is FALSE:
        return None
    if c is TRUE:
        return conds
    return conds + (c.text,)


# ---- the whole rule ----------------------------------------------------------------

def dsl_name(name):
    return "".join(ch if ch.isalnum() else "_" for ch in name)


def translate(rule):
    """The DSL rules of one tinygrad rule: {"rules": [text, ...]} or
    {"untranslatable": why}. Each text is one `rule` line; together their
    guards are disjoint and fire exactly where the function does not return
    None."""
    try:
        return {"rules": rule_texts(rule)}
    except Untranslatable as e:
        return {"untranslatable": str(e)}
    except RecursionError:
        return {"untranslatable": "the pattern or function nests too deep"}


def rule_texts(rule):
    fn = rule.fn
    if "ctx" in inspect.signature(fn).parameters:
        raise Untranslatable("its function takes a ctx")
    node, path = function_ast(fn)
    params = [a.arg for a in node.args.args]
    texts, skipped = [], None
    for k, (lhs, dt, env) in enumerate(left_sides(rule.upat, Names())):
        missing = [p for p in params if p not in env]
        if missing:
            raise Untranslatable(f"the parameter `{missing[0]}` is bound to no named sub-pattern "
                                 f"at {location_of(*rule.upat.location)}")
        ev = Eval(fn, path)
        args = {p: env[p] for p in params}
        try:
            paths = ev.expr(node.body, (), dict(args)) if isinstance(node, ast.Lambda) \
                else ev.body(list(node.body), (), dict(args))
        except NoForm as ex:
            skipped = skipped or ex
            continue
        fired = [(c, v) for c, v in paths if v is not NONE]
        for j, (conds, v) in enumerate(fired):
            rhs = ev.as_term(node, v)
            if rhs.dtype != dt and not (rhs.text == "invalid" or dt is None):
                raise Untranslatable(f"a result of dtype {rhs.dtype} for a {dt} pattern at {location_of(*rule.upat.location)}")
            guard = " && ".join(conds)
            name = dsl_name(rule.name) + (f"_l{k}" if k else "") + (f"_p{j}" if len(fired) > 1 else "")
            texts.append(f"rule {name}: {lhs} => {rhs.text}" + (f" if {guard}" if guard else ""))
    if not texts and skipped is not None:
        raise skipped
    if not texts:
        raise Untranslatable(f"its function returns None on every path ({location_of(*rule.upat.location)})")
    if len(texts) > MAX_PATHS:
        raise Untranslatable(f"more than {MAX_PATHS} DSL rules")
    return texts
