"""tinygrad's own rewrite rules, one by one (docs/protocol.md, section 6).

The tinygrad adapter's `rules`, `instances` and `apply` requests: every
`(UPat, function)` pair of a PatternMatcher, found by introspection
(`sym` of the pinned release by default, or the user's own matcher with
`--module FILE.py:MATCHER`), named, printed, and applied alone.

- **Names.** A rule of `sym` is named after the smallest PatternMatcher of
  tinygrad's symbolic modules that holds that very pair (`symbolic_simple`,
  `pm_data_invalid`, `div_and_mod_symbolic`, ...), its index there and its
  function's qualified name: `div_and_mod_symbolic.2.lambda`. Stable across
  runs of one tinygrad version; a user's matcher gives `MATCHER.I.FUNCTION`.
- **Instances.** Built here, from the UPat itself, because only the peer can
  say which of its nodes a pattern matches (`x != True` and `x ^ y` are both
  a tileproof `xor`-like bool op; `-x` is MUL or NEG): every op the UPat
  allows (one per attempt), named sub-patterns as one shared node, a
  `src` list in each of its orders (tinygrad matches every permutation),
  `allow_any_len`, alternatives (`UPat.any`), and for a free sub-pattern a
  variable, a constant or a small index shape (`v*c + w`, `v // c`, a gated
  `where(v < c, v, invalid)`, ...). tileproof sends the pools: constants and
  variable ranges; the function's own integer literals (and those of the
  module functions it calls: the values it tests for) and their neighbours
  join the constants. An instance is kept only if the UPat matches it and it
  has a *literal* tileproof form: a tree that `apply` rebuilds into the very
  same UOp (one tinygrad op per tileproof op: `not` is `x != True`, `neg`
  NEG, `sub` SUB, bool `xor` XOR); a node with no such form (an integer XOR,
  a bool MUL, `x != False`) is a reason the attempt failed.
- **Apply, alone.** `PatternMatcher([(upat, fn)]).rewrite(root)`: the one
  rule, once, at the root, as tinygrad's graph_rewrite calls it on a node
  (not graph_rewrite, which would rewrite sub-terms and run to a fixed
  point: that is a simplifier, not a rule). What the function itself calls
  (`.simplify()`, `uop_given_valid`) is part of the rule. A function that
  takes `ctx` is not applied (no rule of `sym` does).
"""

import collections
import importlib.util
import inspect
import json
import os
import random
import sys

import tileproof_peer as tp
from tinygrad.dtype import Invalid, dtypes
from tinygrad.uop.ops import Ops, PatternMatcher, UOp, UPat
# The adapter's builder and reader, from their own module: importing the
# adapter (it runs as `__main__`) would run its argument parsing again.
from tinygrad_uops import BUILD, IDX, Back, leaves
from tinygrad_translate import translate

BOOL = dtypes.bool

# tileproof op -> tinygrad op, one each way (bool and int variants apart).
INT_BINARY = {"add": Ops.ADD, "sub": Ops.SUB, "mul": Ops.MUL, "max": Ops.MAX, "floordiv": Ops.FLOORDIV,
              "mod": Ops.FLOORMOD, "div": Ops.CDIV, "rem": Ops.CMOD, "shl": Ops.SHL, "shr": Ops.SHR,
              "bitand": Ops.AND}
COMPARE = {"lt": Ops.CMPLT, "ne": Ops.CMPNE, "eq": Ops.CMPEQ}
BOOL_BINARY = {"and": Ops.AND, "or": Ops.OR, "xor": Ops.XOR}
INT_OF = {v: k for k, v in INT_BINARY.items()}
CMP_OF = {v: k for k, v in COMPARE.items()}
BOOL_OF = {v: k for k, v in BOOL_BINARY.items()}
# The tinygrad ops an instance may have, as the tileproof ops they are.
SUPPORTED = set(INT_OF) | set(CMP_OF) | set(BOOL_OF) | {Ops.NEG, Ops.WHERE, Ops.CONST, Ops.BUFFER, Ops.PARAM}
# A variable is a BUFFER (0.14.0: `UOp.variable` builds one) or a PARAM.
VARIABLE = (Ops.BUFFER, Ops.PARAM)


class NoForm(Exception):
    """An instance node that has no literal tileproof form."""


class NoInstance(Exception):
    """A pattern node that cannot be instantiated (why)."""


# ---- literal build and read-back ------------------------------------------------

def literal_build(tree, env):
    """Tree -> UOp, one tinygrad op per tileproof op. Ops with no literal
    tinygrad op (min, le, ceildiv: never in an instance) are built the way
    the adapter builds them."""
    def dtype_of(args):
        for a in args:
            if not (a.op is Ops.CONST and a.arg is Invalid):
                return a.dtype
        return IDX

    def node(op, args):
        if op == "not":
            return UOp(Ops.CMPNE, BOOL, (args[0], UOp.const(True, BOOL)))
        if op == "neg":
            return UOp(Ops.NEG, IDX, tuple(args))
        if op == "where":
            return UOp(Ops.WHERE, dtype_of(args[1:]), tuple(args))
        if op in COMPARE:
            return UOp(COMPARE[op], BOOL, tuple(args))
        if op in BOOL_BINARY:
            return UOp(BOOL_BINARY[op], BOOL, tuple(args))
        if op in INT_BINARY:
            return UOp(INT_BINARY[op], IDX, tuple(args))
        return BUILD[op](*args)
    return tp.fold(tree, leaves(env), node)


def literal_tree(u, names, want):
    """UOp -> the tree `literal_build` rebuilds it from; NoForm if none.
    `want` ("int"/"bool") says what an Invalid CONST (dtype bool) is."""
    op, src = u.op, u.src
    if u in names:
        return ["var", names[u]]
    if op is Ops.CONST:
        if u.arg is Invalid:
            if want != "int":
                raise NoForm("a bool-typed Invalid")
            return ["invalid"]
        if u.dtype is BOOL:
            return ["bool", bool(u.arg)]
        if u.dtype is IDX and isinstance(u.arg, int) and tp.I64_MIN <= u.arg <= tp.I64_MAX:
            return ["const", u.arg]
        raise NoForm(f"the constant {u.arg!r} of dtype {u.dtype}")
    if u.dtype not in (IDX, BOOL):
        raise NoForm(f"a {op} of dtype {u.dtype}")
    if op is Ops.WHERE:
        w = "bool" if u.dtype is BOOL else "int"
        return ["where", literal_tree(src[0], names, "bool"), literal_tree(src[1], names, w),
                literal_tree(src[2], names, w)]
    if op is Ops.NEG and u.dtype is IDX:
        return ["neg", literal_tree(src[0], names, "int")]
    if op in CMP_OF and len(src) == 2:
        if all(s.dtype is IDX or (s.op is Ops.CONST and s.arg is Invalid) for s in src):
            return [CMP_OF[op], literal_tree(src[0], names, "int"), literal_tree(src[1], names, "int")]
        if op is Ops.CMPNE and src[0].dtype is BOOL and src[1].op is Ops.CONST and src[1].arg is True \
                and src[1].dtype is BOOL:  # hash-consed: the CONST is exactly True
            return ["not", literal_tree(src[0], names, "bool")]
        raise NoForm(f"a bool {op} other than `x != True`")
    if len(src) == 2 and u.dtype is BOOL and op in BOOL_OF:
        return [BOOL_OF[op], literal_tree(src[0], names, "bool"), literal_tree(src[1], names, "bool")]
    if len(src) == 2 and u.dtype is IDX and op in INT_OF:
        return [INT_OF[op], literal_tree(src[0], names, "int"), literal_tree(src[1], names, "int")]
    raise NoForm(f"a {'bool' if u.dtype is BOOL else 'weakint'} {op}")


# ---- describing a pattern -------------------------------------------------------

def op_names(ops):
    return sorted(o.name for o in ops)


def _srcs(p):
    """A UPat's sources: ("tuple", [orders...]), ("repeat", pat) or None."""
    if p.src is None:
        return None
    if len(p.src) == 1 and not isinstance(p.src[0], tuple):
        return ("repeat", p._in_src)
    return ("tuple", p.src)


INFIX = {Ops.ADD: "+", Ops.MUL: "*", Ops.FLOORDIV: "//", Ops.FLOORMOD: "%", Ops.CMPLT: "<", Ops.CMPNE: "!=",
         Ops.CMPEQ: "==", Ops.AND: "&", Ops.OR: "|", Ops.XOR: "^", Ops.SHL: "<<", Ops.SHR: ">>", Ops.SUB: "-"}


def pattern_text(p, depth=0):
    """A UPat, readable: `(x + c1:CONST) // d:CONST`."""
    if depth > 12:
        return "..."
    if p.is_any:
        return "any(" + " | ".join(pattern_text(a, depth + 1) for a in p.src[0]) + ")"
    dt = ""
    if p.match_dtype is not None:
        dt = ":" + ("|".join(sorted({str(d).replace("dtypes.", "") for d in p.match_dtype}))
                    if len(p.match_dtype) < 4 else "dtypes...")
    name = p.name or ""
    if p.op is None:
        return (name or "_") + dt
    if p.op == (Ops.CONST,):
        if p.arg is not None:
            return ("Invalid" if p.arg is Invalid else repr(p.arg)) + (f"@{name}" if name else "")
        return (name or "_") + ":CONST" + dt
    src = _srcs(p)
    args = []
    if src is not None and src[0] == "tuple":
        args = [pattern_text(s, depth + 1) for s in src[1][0]]
    elif src is not None:
        args = [pattern_text(src[1], depth + 1) + "..."]
    ops = p.op
    if len(ops) == 1 and ops[0] in INFIX and len(args) == 2:
        body = f"({args[0]} {INFIX[ops[0]]} {args[1]})"
    else:
        head = ops[0].name if len(ops) == 1 else "{" + ",".join(op_names(ops)) + "}"
        body = f"{head}({', '.join(args)}{', ...' if not p.strict_length and args else ''})"
    return f"{body}@{name}{dt}" if name else body + dt


def _tileproof_ops(ops, dtype):
    out = set()
    for o in ops:
        if o in INT_OF and dtype in (None, "int"):
            out.add(INT_OF[o])
        if o in BOOL_OF and dtype in (None, "bool"):
            out.add(BOOL_OF[o])
        if o in CMP_OF:
            out.add(CMP_OF[o])
        if o is Ops.CMPNE:
            out.add("not")
        if o is Ops.NEG:
            out.add("neg")
        if o is Ops.WHERE:
            out.add("where")
        if o is Ops.CONST:
            out.update(["const", "bool", "invalid"])
        if o in VARIABLE:
            out.add("var")
    return sorted(out)


def pattern_tree(p, depth=0):
    """A UPat as a structured tree (docs/protocol.md, section 6)."""
    if p.is_any:
        return {"any": [pattern_tree(a, depth + 1) for a in p.src[0]]}
    dts = None if p.match_dtype is None else sorted({"int" if d is IDX else "bool" if d is BOOL else str(d)
                                                     for d in p.match_dtype})
    t = {"name": p.name, "dtype": dts,
         "ops": None if p.op is None else _tileproof_ops(p.op, None),
         "peer_ops": None if p.op is None else op_names(p.op)}
    if p.arg is not None:
        t["value"] = "invalid" if p.arg is Invalid else p.arg if isinstance(p.arg, (int, bool)) else repr(p.arg)
    src = _srcs(p)
    if src is not None and depth < 12:
        if src[0] == "tuple":
            t["src"] = [pattern_tree(s, depth + 1) for s in src[1][0]]
            t["commutative"] = len(src[1]) > 1
        else:
            t["repeat"] = pattern_tree(src[1], depth + 1)
        t["any_len"] = not p.strict_length
    return t


def why_not(p, depth=0):
    """Why no instance of the UPat can be built, or None."""
    if depth > 12:
        return None
    if p.is_any:
        reasons = [why_not(a, depth + 1) for a in p.src[0]]
        return None if any(r is None for r in reasons) else reasons[0]
    if p.match_dtype is not None and not any(d in (IDX, BOOL) for d in p.match_dtype):
        return f"it needs dtype {', '.join(sorted({str(d) for d in p.match_dtype}))} (tileproof has index and bool)"
    if p.op is not None and not any(o in SUPPORTED for o in p.op):
        return f"it needs {', '.join(op_names(p.op))}, which tileproof has no op for"
    if p.op == (Ops.CONST,) and p.arg is not None and not isinstance(p.arg, (int, bool)) and p.arg is not Invalid:
        return f"it needs the constant {p.arg!r}"
    src = _srcs(p)
    if src is not None:
        kids = src[1][0] if src[0] == "tuple" else [src[1]]
        for k in kids:
            r = why_not(k, depth + 1)
            if r is not None:
                return r
    return None


# ---- discovering rules ------------------------------------------------------------

def function_name(fn):
    return getattr(fn, "__qualname__", getattr(fn, "__name__", "fn")).replace("<", "").replace(">", "")


def location(upat):
    f, line = upat.location
    cwd = os.getcwd() + os.sep
    if f.startswith(cwd) and "site-packages" not in f:  # the user's own file, as they name it
        return f"{f[len(cwd):]}:{line}"
    parts = f.replace(os.sep, "/").split("/")
    if "tinygrad" in parts:
        f = "/".join(parts[len(parts) - 1 - parts[::-1].index("tinygrad"):])
    return f"{f}:{line}"


def named_matchers(modules):
    """Every module-level PatternMatcher of `modules`, by name."""
    out = {}
    for m in modules:
        for k, v in vars(m).items():
            if isinstance(v, PatternMatcher) and k not in out:
                out[k] = v
    return out


class Rule:
    def __init__(self, name, upat, fn):
        self.name, self.upat, self.fn = name, upat, fn
        self.matcher = None

    def describe(self):
        reason = why_not(self.upat)
        if reason is None and "ctx" in inspect.signature(self.fn).parameters:
            reason = "its function takes a ctx"
        return {"name": self.name, "pattern": pattern_text(self.upat), "location": location(self.upat),
                "function": function_name(self.fn), "tree": pattern_tree(self.upat),
                "instantiable": True if reason is None else reason, "translation": translate(self)}

    def rewrite(self, root):
        if self.matcher is None:
            self.matcher = PatternMatcher([(self.upat, self.fn)])
        return self.matcher.rewrite(root, None)


def discover(top_name, top, modules):
    """The rules of `top`, each named by the smallest named matcher of
    `modules` that holds its very (UPat, function) pair."""
    named = sorted(named_matchers(modules).items(), key=lambda kv: (len(kv[1].patterns), kv[0]))
    rules = []
    for i, (p, fn) in enumerate(top.patterns):
        owner, idx = top_name, i
        for name, m in named:
            hit = next((j for j, (q, g) in enumerate(m.patterns) if q is p and g is fn), None)
            if hit is not None:
                owner, idx = name, hit
                break
        rules.append(Rule(f"{owner}.{idx}.{function_name(fn)}", p, fn))
    return rules


def load_module(spec):
    """`FILE.py:MATCHER` -> (name, PatternMatcher, module)."""
    path, _, attr = spec.rpartition(":")
    if not path or not attr:
        raise SystemExit(f"--module wants FILE.py:MATCHER, got {spec!r}")
    mspec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0], path)
    if mspec is None:
        raise SystemExit(f"--module: cannot load {path}")
    mod = importlib.util.module_from_spec(mspec)
    sys.modules[mspec.name] = mod
    mspec.loader.exec_module(mod)
    pm = getattr(mod, attr, None)
    if not isinstance(pm, PatternMatcher):
        raise SystemExit(f"--module: {path} has no PatternMatcher named {attr}")
    return attr, pm, mod


# ---- instances --------------------------------------------------------------------

def int_literals(fn, seen=None, depth=0):
    """The integer literals of a function's code, and of the module functions
    it names (one level): the values its guards test for."""
    seen = set() if seen is None else seen
    out = set()
    code = getattr(fn, "__code__", None)
    if code is None or code in seen:
        return out
    seen.add(code)

    def walk(co):
        for c in co.co_consts:
            if isinstance(c, int) and not isinstance(c, bool) and abs(c) < 1 << 62:
                out.add(c)
            elif inspect.iscode(c):
                walk(c)
    walk(code)
    if depth < 2:
        g = getattr(fn, "__globals__", {})
        for name in code.co_names:
            f = g.get(name)
            f = getattr(f, "__wrapped__", f)
            if inspect.isfunction(f):
                out |= int_literals(f, seen, depth + 1)
    return out


class Builder:
    """Builds one instance of a UPat (`build`), drawing from the pools."""

    def __init__(self, rng, consts, ranges):
        self.rng, self.consts, self.ranges = rng, consts, ranges
        self.env = {}       # pattern name -> UOp (same name = same node)
        self.vars = []      # (name, lo, hi, dtype) of the variables made
        self.var_uops = []
        self.used = []      # the constants drawn so far

    def const(self):
        # a constant already in the instance again, often: guards compare
        # constants with each other (`c1 == c2`, `c % d == 0`)
        if self.used and self.rng.random() < 0.3:
            return self.rng.choice(self.used)
        c = self.rng.choice(self.consts)
        self.used.append(c)
        return c

    def new_var(self, dt):
        if self.var_uops and self.rng.random() < 0.3:
            same = [u for u in self.var_uops if u.dtype is dt]
            if same:
                return self.rng.choice(same)
        name = f"{'p' if dt is BOOL else 'x'}{len(self.vars)}"
        if dt is BOOL:
            u = UOp.variable(name, False, True, BOOL)
            self.vars.append((name, 0, 1, "bool"))
        else:
            lo, hi = self.rng.choice(self.ranges)
            if self.rng.random() < 0.35:
                # a range that ends at a constant of the instance, or one
                # past it, or one short: where guards put their edges
                c = abs(self.const()) or 1
                lo, hi = self.rng.choice([(0, c - 1), (0, c), (0, c + 1), (-c, c), (1, c)])
            u = UOp.variable(name, lo, hi, IDX)
            self.vars.append((name, lo, hi, "index"))
        self.var_uops.append(u)
        return u

    def leaf(self, dt):
        """A free sub-pattern: a variable, a constant or a small shape."""
        r = self.rng.random()
        if dt is BOOL:
            if r < 0.4:
                return self.new_var(BOOL)
            if r < 0.9:
                return UOp(Ops.CMPLT, BOOL, (self.new_var(IDX), UOp.const(self.const(), IDX)))
            return UOp.const(self.rng.random() < 0.5, BOOL)
        c = lambda: UOp.const(self.const(), IDX)  # noqa: E731
        if r < 0.4:
            return self.new_var(IDX)
        if r < 0.5:
            return c()
        shape = self.rng.randrange(7)
        v = self.new_var(IDX)
        if shape == 0:
            return UOp(Ops.MUL, IDX, (v, c()))
        if shape == 1:
            return UOp(Ops.ADD, IDX, (v, c()))
        if shape == 2:
            return UOp(Ops.ADD, IDX, (UOp(Ops.MUL, IDX, (v, c())), self.new_var(IDX)))
        if shape == 3:
            return UOp(Ops.ADD, IDX, (v, self.new_var(IDX)))
        if shape == 4:
            return UOp(Ops.FLOORDIV, IDX, (v, c()))
        if shape == 5:
            return UOp(Ops.FLOORMOD, IDX, (v, c()))
        gate = UOp(Ops.CMPLT, BOOL, (v, c()))
        return UOp(Ops.WHERE, IDX, (gate, v, UOp.invalid()))

    def dtype(self, p, want):
        cands = [IDX, BOOL] if want is None else [want]
        if p.match_dtype is not None:
            cands = [d for d in cands if d in p.match_dtype]
            if not cands:
                raise NoInstance(f"dtype {', '.join(sorted({str(d) for d in p.match_dtype}))} only")
        return cands[0] if want is not None or self.rng.random() < 0.8 else cands[-1]

    def build(self, p, want=None, depth=0):
        if depth > 10:
            raise NoInstance("nested too deep")
        if p.is_any:
            return self.build(self.rng.choice(p.src[0]), want, depth)
        if p.name is not None and p.name in self.env:
            return self.env[p.name]
        dt = self.dtype(p, want)
        if p.op is None:
            u = self.leaf(dt)
        else:
            u = self.node(p, dt, depth)
        if p.name is not None:
            self.env[p.name] = u
        return u

    def node(self, p, dt, depth):
        ops = [o for o in p.op if o in SUPPORTED]
        if not ops:
            raise NoInstance(f"it needs {', '.join(op_names(p.op))}")
        o = self.rng.choice(ops)
        if o is Ops.CONST:
            if p.arg is Invalid:
                return UOp.invalid()
            if p.arg is not None:
                if not isinstance(p.arg, (int, bool)):
                    raise NoInstance(f"the constant {p.arg!r}")
                return UOp.const(bool(p.arg) if dt is BOOL else int(p.arg), dt)
            if dt is IDX and self.used and self.rng.random() < 0.4:
                return UOp.const(self.rng.choice(self.used), IDX)
            return UOp.const(self.rng.random() < 0.5, BOOL) if dt is BOOL else UOp.const(self.const(), IDX)
        if o in VARIABLE:
            return self.new_var(dt)
        if o is Ops.WHERE:
            kids_want = [BOOL, dt, dt]
        elif o in CMP_OF:
            if dt is not BOOL:
                raise NoInstance("a comparison of non-bool dtype")
            kids_want = [IDX, IDX]
        elif o in BOOL_OF and dt is BOOL:
            kids_want = [BOOL, BOOL]
        elif o in INT_OF and dt is IDX:
            kids_want = [IDX, IDX]
        elif o is Ops.NEG and dt is IDX:
            kids_want = [IDX]
        else:
            raise NoInstance(f"a {'bool' if dt is BOOL else 'weakint'} {o.name}")
        src = _srcs(p)
        if src is None:
            pats = [UPat()] * len(kids_want)
        elif src[0] == "tuple":
            pats = list(self.rng.choice(src[1]))
            if len(pats) < len(kids_want) and not p.strict_length:
                pats += [UPat()] * (len(kids_want) - len(pats))
        else:
            pats = [src[1]] * len(kids_want)
        if len(pats) != len(kids_want):
            raise NoInstance(f"{o.name} with {len(pats)} sources")
        if o is Ops.CMPNE:
            # `x != True` is a bool comparison (tileproof's `not`)
            # (the UPat's constant is spelled True or 1; only True has a literal form)
            second = pats[1]
            if second.op == (Ops.CONST,) and isinstance(second.arg, (bool, int)) and second.arg == 1:
                kids_want = [BOOL, BOOL]
            elif any(q.match_dtype is not None and IDX not in q.match_dtype for q in pats):
                kids_want = [BOOL, BOOL]
        kids = [self.build(q, w, depth + 1) for q, w in zip(pats, kids_want)]
        if o is Ops.WHERE:
            return UOp(Ops.WHERE, dt if not (kids[1].op is Ops.CONST and kids[1].arg is Invalid) else kids[2].dtype,
                       tuple(kids))
        return UOp(o, dt, tuple(kids))


class TinygradRules(tp.Rules):
    def __init__(self, rules):
        self.rules = {r.name: r for r in rules}
        self.order = [r.name for r in rules]

    def rule(self, name):
        r = self.rules.get(name)
        if r is None:
            raise tp.BadRequest(f"no rule named {name!r}")
        return r

    def list(self):
        return [self.rules[n].describe() for n in self.order]

    def instances(self, name, spec):
        r = self.rule(name)
        consts = spec.get("constants") or [0, 1, -1, 2, 4]
        ranges = [tuple(x) for x in spec.get("ranges") or [[0, 7]]]
        limit = int(spec.get("limit", 32))
        seed = spec.get("seed", 0)
        if not all(tp.is_int(c) for c in consts) or not all(len(x) == 2 and x[0] <= x[1] for x in ranges):
            raise tp.BadRequest("`instances.constants` are integers, `instances.ranges` [lo, hi] pairs")
        lits = sorted(int_literals(r.fn) | {v for c in int_literals(r.fn) for v in (c - 1, c + 1, -c)})
        pool = sorted(set(consts) | set(lits))
        rng = random.Random(f"{seed}:{name}")
        out, seen, failures = [], set(), {}

        def fail(why):
            failures[why] = failures.get(why, 0) + 1
        reason = why_not(r.upat)
        if reason is not None:
            return [], {reason: 1}
        for _ in range(limit * 12):
            if len(out) >= limit:
                break
            b = Builder(rng, pool, ranges)
            try:
                root = b.build(r.upat)
            except NoInstance as e:
                fail(str(e))
                continue
            if not r.upat.match(root, {}):
                fail("the instance built does not match the pattern (a name bound twice to different nodes)")
                continue
            names = {u: n for (n, lo, hi, dt), u in zip(b.vars, b.var_uops)}
            try:
                tree = literal_tree(root, names, "bool" if root.dtype is BOOL else "int")
            except NoForm as e:
                fail(f"the instance has {e}, which has no literal tileproof form")
                continue
            used = {n for n in names.values() if f'"{n}"' in json.dumps(tree)}
            vs = [{"name": n, "dtype": dt, "lo": lo, "hi": hi} for (n, lo, hi, dt) in b.vars if n in used]
            try:
                tp.type_of(tree, {v["name"]: tp.Var(v["name"], v["dtype"], v["lo"], v["hi"]) for v in vs})
            except (tp.BadRequest, tp.Unsupported) as e:
                fail(f"the instance is ill-typed in tileproof's terms ({e})")
                continue
            key = json.dumps([vs, tree])
            if key in seen:
                continue
            seen.add(key)
            out.append({"vars": vs, "trees": [tree]})
        return out, failures

    def apply(self, case, name):
        r = self.rule(name)
        env, names = {}, {}
        for v in case.vars:
            u = UOp.variable(v.name, bool(v.lo), bool(v.hi), BOOL) if v.dtype == "bool" \
                else UOp.variable(v.name, v.lo, v.hi, IDX)
            env[v.name], names[u] = u, v.name
        root = literal_build(case.trees[0], env)
        if not r.upat.match(root, {}):
            raise tp.Declined("the pattern does not match this instance")
        out = r.rewrite(root)
        if out is None:
            raise tp.Declined("the function returned None")
        return Back(names, {})(out, case.types[0])


class RewriteLoop(RuntimeError):
    """A rewrite stopped because it loops: the message names the rules."""


# Rewrites one graph_rewrite may make per node of its input before Tracking
# calls it a loop (and a flat allowance for small inputs): far more than a
# rewrite to a fixed point takes, far fewer than tinygrad's own guard, which
# raises only once its rewrite stack holds 250,000 entries.
REWRITES_PER_NODE = 500
REWRITES_FLAT = 20_000
# How often one node may be rewritten to the same result: tinygrad records
# a node's result once it is linked, so it rewrites a node again only while
# the node waits on its own result, i.e. in a cycle.
SAME_REWRITE = 16
# Rewrites remembered to name a loop's rules.
RECENT = 24


class Tracking(PatternMatcher):
    """A PatternMatcher over the very pairs of `rules`, in their order, that
    counts which rule fired: tinygrad's own `rewrite` loop (first matching
    pattern wins), with each entry carrying its rule's index. Rewrites
    exactly as the matcher the rules came from does, but stops a rewrite
    that loops (RewriteLoop) with the rules that keep firing."""

    def __init__(self, rules):
        super().__init__([(r.upat, r.fn) for r in rules])
        self.names = [r.name for r in rules]
        self.start(None)
        # The entries tinygrad built, tagged with their pattern's index.
        for i, (p, _) in enumerate(self.patterns):
            for op in p.op:
                for entry in self.pdict[op]:
                    if entry[0] is p and len(entry) == 3:
                        entry.append(i)
                        break

    def start(self, root):
        """Forgets the firings and loop state: a rewrite of `root` starts."""
        self.fired, self.recent, self.made = {}, collections.deque(maxlen=RECENT), {}
        self.count = 0
        self.limit = REWRITES_FLAT + REWRITES_PER_NODE * len(root.toposort()) if root is not None else REWRITES_FLAT

    def rewrite(self, uop, ctx=None):
        pats = self.pdict.get(uop.op, [])
        if pats:
            ler = {u.op for u in uop.src}
            for entry in pats:
                if not entry[2].issubset(ler):
                    continue
                ret = entry[1](uop, ctx)
                if ret is not None and ret is not uop:
                    name = self.names[entry[3]]
                    self.fired[name] = self.fired.get(name, 0) + 1
                    self.recent.append(name)
                    self.count += 1
                    again = self.made[(uop, ret)] = self.made.get((uop, ret), 0) + 1
                    if again > SAME_REWRITE or self.count > self.limit:
                        raise RewriteLoop(self.loop_message(
                            "tinygrad's own guard raises later, \"infinite loop in graph_rewrite\", "
                            "at a 250,000-entry stack"))
                    return ret
        return None

    def loop_message(self, tail):
        """What a looping rewrite says: how many rewrites it made, the rules
        of its last ones (their cycle where they repeat one), and `tail`."""
        recent = list(self.recent)
        period = next((p for p in range(1, len(recent) // 2 + 1)
                       if all(recent[i] == recent[i - p] for i in range(p, len(recent)))), None)
        if period == 1:
            which = f"{recent[0]} keeps rewriting what it rewrote"
        elif period:
            # From the cycle's first rule in the matcher's order, so that
            # one loop reads the same wherever it was stopped.
            cycle = recent[-period:]
            k = min(range(period), key=lambda i: self.names.index(cycle[i]))
            which = f"the rules {' -> '.join(cycle[k:] + cycle[:k])} rewrite in a cycle"
        else:
            which = f"its last rewrites are by {', '.join(recent)}"
        return f"graph_rewrite loops: {self.count} rewrites without a fixed point ({which}); {tail}"

    def take(self):
        """The rules that fired since the last call, by name."""
        out, self.fired = self.fired, {}
        return out


def sym_rules(matcher="sym"):
    """The rules of one of tinygrad's symbolic matchers (`sym` by default)."""
    import tinygrad.uop.divandmod as divandmod
    import tinygrad.uop.movement as movement
    import tinygrad.uop.symbolic as symbolic
    top = getattr(symbolic, matcher, None)
    if not isinstance(top, PatternMatcher):
        raise SystemExit(f"tinygrad.uop.symbolic has no PatternMatcher named {matcher}")
    mods = [symbolic, divandmod, movement]
    return discover(matcher, top, mods)


def module_rules(spec):
    """The rules of the user's matcher (`FILE.py:MATCHER`)."""
    name, pm, mod = load_module(spec)
    return discover(name, pm, [mod])
