"""tileproof's trees to tinygrad UOps and back: the tinygrad adapter's
builder (`BUILD`, `build`: tinygrad's own builders, so the input has the
shape tinygrad itself makes) and its reader (`Back`: every op that can
appear maps exactly or is `unsupported`). See tinygrad_adapter.py's
docstring for how each op maps and why.

Shared by tinygrad_adapter.py (simplify, bounds, backend) and
tinygrad_rules.py (ops with no literal form, and reading a rule's result
back); a module of its own so that the rules need not import the adapter,
which runs as `__main__` (importing it again would parse the arguments and
claim stdout a second time).

It imports tinygrad at top level: import it only after
tileproof_peer.claim_stdout(), as the adapter does, so that whatever
tinygrad prints cannot corrupt the protocol.
"""

import tileproof_peer as tp
from tinygrad.dtype import Invalid, dtypes
from tinygrad.helpers import ceildiv
from tinygrad.uop.ops import Ops, UOp

IDX = dtypes.weakint

BUILD = {
    "neg": lambda a: -a,
    "not": lambda a: a.logical_not(),
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "min": lambda a, b: a.minimum(b),
    "max": lambda a, b: a.maximum(b),
    "div": lambda a, b: a.div(b, rounding_mode="trunc"),
    "rem": lambda a, b: a.fmod(b),
    "floordiv": lambda a, b: a // b,
    "mod": lambda a, b: a % b,
    "ceildiv": lambda a, b: ceildiv(a, b),
    "shl": lambda a, b: a << b,
    "shr": lambda a, b: a >> b,
    "bitand": lambda a, b: a & b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "eq": lambda a, b: a.eq(b),
    "ne": lambda a, b: a.ne(b),
    "and": lambda a, b: a & b,
    "or": lambda a, b: a | b,
    "xor": lambda a, b: a ^ b,
    "where": lambda c, a, b: c.where(a, b),
}


def leaves(env):
    """Leaf -> UOp, for tileproof_peer.fold: a variable from `env` (name ->
    UOp), an index or bool constant, or Invalid. The rules' literal builder
    builds its leaves the same way."""
    def leaf(t):
        if t[0] == "var":
            return env[t[1]]
        if t[0] == "const":
            return UOp.const(t[1], IDX)
        if t[0] == "bool":
            return UOp.const(t[1], dtypes.bool)
        return UOp.invalid()
    return leaf


def build(tree, env, built=None):
    """Tree -> UOp (`built`: see tileproof_peer.fold)."""
    return tp.fold(tree, leaves(env), lambda op, args: BUILD[op](*args), built)


def is_const(u, v=None):
    return u.op is Ops.CONST and u.val is not Invalid and (v is None or (u.val == v and u.dtype is not dtypes.bool))


class Back:
    """UOp -> tree. `want` is the tileproof type the context expects ("int"
    or "bool"): it decides what an Invalid CONST (always dtype bool in
    tinygrad) means."""

    def __init__(self, names, ranges):
        self.names = names    # variable UOp -> name (UOps are hash-consed: same object)
        self.ranges = ranges  # RANGE axis id -> name
        self.memo = {}
        self.size = 0

    def __call__(self, u, want):
        key = (u, want)
        if key in self.memo:
            return self.memo[key]
        self.size += 1
        if self.size > 200000:
            raise tp.Unsupported("the result is too large to write as a tree")
        r = self.conv(u, want)
        self.memo[key] = r
        return r

    def complement(self, w):
        """The tree t with w == t ^ -1, if w spells one directly."""
        if w.op is Ops.XOR and w.dtype is IDX:
            for x, k in ((w.src[0], w.src[1]), (w.src[1], w.src[0])):
                if is_const(k, -1):
                    return self(x, "int")
        if is_const(w) and w.dtype is IDX:
            return tp.check_const(-1 - w.val)
        return None

    def conv(self, u, want):
        op, src, dt = u.op, u.src, u.dtype
        b = dt is dtypes.bool
        if op is Ops.CONST:
            if u.val is Invalid:
                if want == "int":
                    return ["invalid"]
                raise tp.Unsupported("the result has a bool-typed Invalid (tinygrad's poisoned comparison), which tileproof cannot express")
            if b:
                return ["bool", bool(u.val)]
            if isinstance(u.val, int) and dt is IDX:
                return tp.check_const(u.val)
            raise tp.Unsupported(f"the result has the constant {u.val!r} of dtype {dt}")
        if u in self.names:
            return ["var", self.names[u]]
        if op is Ops.RANGE and u.arg[0] in self.ranges:
            return ["var", self.ranges[u.arg[0]]]
        if op in (Ops.BUFFER, Ops.PARAM, Ops.RANGE, Ops.SPECIAL):
            raise tp.Unsupported(f"the result has a variable that is not the case's: {op} {u.arg}")
        if op is Ops.WHERE:
            return ["where", self(src[0], "bool"), self(src[1], want), self(src[2], want)]
        if op in (Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ):
            a, c = src
            ints = IDX in (a.dtype, c.dtype)
            if ints:
                name = {Ops.CMPLT: "lt", Ops.CMPNE: "ne", Ops.CMPEQ: "eq"}[op]
                return [name, self(a, "int"), self(c, "int")]
            if op is Ops.CMPLT:  # bool < bool: a < b is !a && b
                return ["and", ["not", self(a, "bool")], self(c, "bool")]
            for x, k in ((a, c), (c, a)):
                if is_const(k) and k.dtype is dtypes.bool:
                    # x != True is !x; x != False is x (and == the other way)
                    flip = bool(k.val) == (op is Ops.CMPNE)
                    return ["not", self(x, "bool")] if flip else self(x, "bool")
            x = ["xor", self(a, "bool"), self(c, "bool")]
            return x if op is Ops.CMPNE else ["not", x]
        if b:
            # bool ALU: tinygrad treats MUL as AND and ADD/MAX as OR
            m = {Ops.AND: "and", Ops.MUL: "and", Ops.OR: "or", Ops.ADD: "or", Ops.MAX: "or", Ops.XOR: "xor"}
            if op in m:
                return [m[op], self(src[0], "bool"), self(src[1], "bool")]
            if op is Ops.NEG:
                return ["not", self(src[0], "bool")]
            if op is Ops.CAST and dtypes.is_int(src[0].dtype):
                return ["ne", self(src[0], "int"), ["const", 0]]
            raise tp.Unsupported(f"the result has the bool op {op}")
        if dt is not IDX:
            raise tp.Unsupported(f"the result has a {op} of dtype {dt} (not tinygrad's index type weakint)")
        if op is Ops.XOR:
            for x, k in ((src[0], src[1]), (src[1], src[0])):
                if is_const(k, -1):
                    if x.op is Ops.MAX:
                        ca, cb = self.complement(x.src[0]), self.complement(x.src[1])
                        if ca is not None and cb is not None:
                            return ["min", ca, cb]  # ~max(~a, ~b) == min(a, b)
                    return ["sub", ["const", -1], self(x, "int")]  # x ^ -1 == -1 - x
            raise tp.Unsupported("the result has an integer XOR other than `^ -1`")
        m = {Ops.ADD: "add", Ops.SUB: "sub", Ops.MUL: "mul", Ops.MAX: "max", Ops.CDIV: "div", Ops.CMOD: "rem",
             Ops.FLOORDIV: "floordiv", Ops.FLOORMOD: "mod", Ops.SHL: "shl", Ops.SHR: "shr", Ops.AND: "bitand"}
        if op in m:
            return [m[op], self(src[0], "int"), self(src[1], "int")]
        if op is Ops.NEG:
            return ["neg", self(src[0], "int")]
        if op is Ops.CAST:
            s = src[0]
            if s.dtype is dtypes.bool:
                return ["where", self(s, "bool"), ["const", 1], ["const", 0]]
            if s.dtype is IDX:
                return self(s, "int")
        raise tp.Unsupported(f"the result has the op {op} ({dt}), which has no tileproof equivalent")
