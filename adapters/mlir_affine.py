"""tileproof trees <-> MLIR affine expressions (iree-base-compiler 3.13.0's
upstream MLIR Python bindings), shared by mlir_adapter.py and
mlir_backend.py.

MLIR's input language, as its affine dialect defines it (pure affine
expressions; docs/peers/mlir.md): `+`, multiplication where one
operand is a constant, and `floordiv`, `ceildiv`, `mod` by a positive
constant. Whether an operand "is a constant" is read on the expression as
MLIR built it (`d0 * (3 - 1)` is `d0 * 2`), as MLIR's own
`AffineExpr::isPureAffine` reads it. Anything else is `Unsupported`,
never an error: semi-affine forms (a product of two dims, a division by a
dim or by a non-positive constant) can be built through the C API, but the
dialect's simplifications are not defined on them.
"""

import tileproof_peer as tp
from iree.compiler import ir, passmanager

# `sub` is left out: MLIR has no subtraction, and `a + b * -1` (how its
# C++ operators and its parser build `a - b`) overflows at b = -2^63 where
# `a - b` may not, so it is not exact at 64 bits (docs/peers/mlir.md).
OPS = ["add", "mul", "neg", "floordiv", "mod", "ceildiv"]

I64_MIN, I64_MAX = tp.I64_MIN, tp.I64_MAX


def context():
    """A fresh context with MLIR's thread pool off: the adapter forks
    children for `run` requests, and one process at a time is all it uses."""
    ctx = ir.Context()
    ctx.enable_multithreading(False)
    return ctx


def const(v):
    return ir.AffineConstantExpr.get(v)


def const_value(e):
    e = e.maybe_downcast()
    return e.value if isinstance(e, ir.AffineConstantExpr) else None


def _mul(a, b, strict=True):
    if strict and const_value(a) is None and const_value(b) is None:
        raise tp.Unsupported("MLIR's affine expressions multiply only by a constant (semi-affine otherwise)")
    return ir.AffineMulExpr.get(a, b)


def _divlike(get, what):
    def build(a, b, strict=True):
        c = const_value(b)
        if strict and c is None:
            raise tp.Unsupported(f"MLIR's affine `{what}` takes only a constant divisor (semi-affine otherwise)")
        if strict and c <= 0:
            raise tp.Unsupported(f"MLIR's affine `{what}` takes only a positive constant divisor, "
                                 f"got {'zero' if c == 0 else 'a negative one'}")
        return get(a, b)
    return build


BUILD = {
    "add": lambda a, b, strict=True: ir.AffineAddExpr.get(a, b),
    # MLIR has no negation: `-a` is `a * -1` in its C++ operators and its
    # parser (exact: both overflow at -2^63 only).
    "neg": lambda a, strict=True: ir.AffineMulExpr.get(a, const(-1)),
    "mul": _mul,
    "floordiv": _divlike(ir.AffineFloorDivExpr.get, "floordiv"),
    "ceildiv": _divlike(ir.AffineCeilDivExpr.get, "ceildiv"),
    "mod": _divlike(ir.AffineModExpr.get, "mod"),
}


def build(tree, index, strict=True):
    """Tree -> AffineExpr, the case's variable `name` as dim `index[name]`
    (in the current context). Construction folds: that is MLIR's.
    `strict`: only MLIR's pure affine language (the input of a
    simplification); without it, any product or division MLIR's C API
    builds (what a backend evaluates: a peer's answer may hold a product
    of two constants MLIR did not fold)."""
    def leaf(t):
        if t[0] == "var":
            return ir.AffineDimExpr.get(index[t[1]])
        if t[0] == "const":
            return const(t[1])
        raise tp.Unsupported(f"MLIR's affine expressions have no `{t[0]}`")

    def node(op, args):
        if op not in BUILD:  # an answer sent back by `run` may use any tileproof op
            raise tp.Unsupported(f"MLIR's affine expressions have no `{op}`")
        return BUILD[op](*args, strict=strict)
    return tp.fold(tree, leaf, node)


def check_vars(case):
    for v in case.vars:
        if v.dtype != "index":
            raise tp.Unsupported(f"var `{v.name}` is a {v.dtype}: MLIR's affine maps take only index values")


BIN = {ir.AffineAddExpr: "add", ir.AffineMulExpr: "mul", ir.AffineFloorDivExpr: "floordiv",
       ir.AffineCeilDivExpr: "ceildiv", ir.AffineModExpr: "mod"}


def back(e, dims, syms=()):
    """AffineExpr -> tree, dim i standing for the tree `dims[i]` and symbol
    j for `syms[j]`."""
    e = e.maybe_downcast()
    k = type(e)
    if k is ir.AffineConstantExpr:
        return tp.check_const(e.value)
    if k is ir.AffineDimExpr:
        return dims[e.position]
    if k is ir.AffineSymbolExpr:
        return syms[e.position]
    if k in BIN:
        return [BIN[k], back(e.lhs, dims, syms), back(e.rhs, dims, syms)]
    raise tp.Unsupported(f"the result has an affine expression of kind {k.__name__}")


# ---- modules: affine.apply inside affine.for --------------------------------

def loop_range(v):
    """(lo, hi + 1), the constant bounds of the `affine.for` standing for
    variable `v`, or None when no loop can: its exclusive upper bound
    would not fit MLIR's 64-bit index constants. Such a variable is a
    function argument, whose range MLIR does not know."""
    if v.hi >= I64_MAX or v.lo < I64_MIN:
        return None
    return (v.lo, v.hi + 1)


def placeholder(ndims):
    """The text of a map over `ndims` dims that `set_maps` replaces."""
    return f"affine_map<({', '.join(f'd{i}' for i in range(ndims))}) -> (0)>"


def apply_lines(exprs, operands, indent):
    """One affine.apply per expression (affine.apply has one result), each
    result passed to the opaque @use so that no pass may drop it. The maps
    are placeholders, set by `set_maps` on the parsed module: MLIR's
    printer does not always print a map its parser reads back (`d0 * -(-2^63)`
    prints as `d0 * --9223372036854775808`)."""
    lines = []
    for i in range(len(exprs)):
        lines.append(f"{indent}%r{i} = affine.apply {placeholder(len(operands))}({', '.join(operands)})")
        lines.append(f"{indent}func.call @use(%r{i}) : (index) -> ()")
    return lines


def ops_named(op, name, out=None):
    """Every operation `name` under `op`, in program order."""
    out = [] if out is None else out
    for region in op.regions:
        for block in region.blocks:
            for o in block.operations:
                if o.operation.name == name:
                    out.append(o.operation)
                ops_named(o.operation, name, out)
    return out


def set_maps(module, maps):
    """Gives the module's affine.apply ops (placeholders, in program order)
    their maps, as MLIR built them."""
    applies = ops_named(module.operation, "affine.apply")
    if len(applies) != len(maps):
        raise RuntimeError(f"{len(applies)} affine.apply ops for {len(maps)} maps")
    for op, m in zip(applies, maps):
        op.attributes["map"] = ir.AffineMapAttr.get(m)


def loop_module(case, exprs):
    """The case as MLIR's loops give it ranges: each variable with a loop
    range is the induction variable of `affine.for %x = lo to hi + 1`
    (tagged `tp_var = k`, k its index in the case), the others arguments of
    the function; the expressions `affine.apply`s over the variables in
    the case's order, in the innermost loop."""
    args, loops, operands = [], [], []
    for k, v in enumerate(case.vars):
        name = f"%v{k}"
        operands.append(name)
        r = loop_range(v)
        if r is None:
            args.append(f"{name}: index")
        else:
            loops.append((k, name, r))
    lines = ["func.func private @use(index)", f"func.func @f({', '.join(args)}) {{"]
    indent = "  "
    for k, name, (lo, hi) in loops:
        lines.append(f"{indent}affine.for {name} = {lo} to {hi} {{")
        indent += "  "
    lines += apply_lines(exprs, operands, indent)
    for k, name, _ in reversed(loops):
        indent = indent[:-2]
        lines.append(f"{indent}}} {{tp_var = {k} : i64}}")
    lines += ["  return", "}"]
    return "\n".join(lines)


CANONICALIZE = "builtin.module(canonicalize)"


def module_with(text, exprs):
    """The module parsed from `text` (built by apply_lines), each
    affine.apply given the map of its expression over all the operands,
    in program order (`exprs` repeated as often as the text applies them)."""
    module = ir.Module.parse(text)
    set_maps(module, [ir.AffineMap.get(len(ops_named(module.operation, "affine.apply")[i].operands), 0, [e])
                      for i, e in enumerate(exprs)])
    return module


def run_pass(module, pipeline=CANONICALIZE):
    passmanager.PassManager.parse(pipeline).run(module.operation)
    return module


def calls(op):
    """The operand of every `func.call @use` under `op`, in program order."""
    return [c.operands[0] for c in ops_named(op, "func.call")]


def value_tree(v, case):
    """A value of the module after the pass, as a tree: a loop's induction
    variable or a function argument (the case's variable), an
    `arith.constant`, or an `affine.apply` of such values."""
    if isinstance(v, ir.BlockArgument):
        owner = v.owner.owner.operation
        if owner.name == "affine.for":
            return ["var", case.vars[owner.attributes["tp_var"].value].name]
        if owner.name == "func.func":
            unranged = [x for x in case.vars if loop_range(x) is None]
            return ["var", unranged[v.arg_number].name]
        raise tp.Unsupported(f"the result is an argument of a {owner.name}")
    op = v.owner.operation
    name = op.name
    if name == "arith.constant":
        return tp.check_const(op.attributes["value"].value)
    if name == "affine.apply":
        m = op.attributes["map"].value
        ops = [value_tree(x, case) for x in op.operands]
        return back(m.results[0], ops[:m.n_dims], ops[m.n_dims:])
    raise tp.Unsupported(f"the result is computed by {name}, which has no tileproof form")
