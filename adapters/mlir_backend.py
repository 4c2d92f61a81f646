"""MLIR's own evaluation of affine expressions, as a tileproof backend
(docs/protocol.md section 5: `run` requests), for mlir_adapter.py.

Three backends, all MLIR's code (and IREE's, for compiled code):

- `apply`: each expression computed node by node (one `affine.apply` of
  one operation per node, so that building the maps folds nothing) from
  `arith.constant` operands, one function per point, and the module run
  through `canonicalize`: `affine.apply`'s folder (`AffineMap::constantFold`)
  gives each value, read back from the `arith.constant` that replaces it.
- `fold`: each expression built bottom-up with the point's values in place
  of the variables: every node is then an MLIR binary expression of two
  constants, which MLIR folds as it builds it (its constant folding of
  `+ * floordiv ceildiv mod`), with no symbolic rewrite in between: the
  literal evaluation.
- `iree`: compiled code. Each expression is a function `(i64, ...) -> i64`
  with one `affine.apply` per node of its tree (one operation each, so
  that nothing is folded: the literal source); MLIR's `lower-affine` turns
  them into `arith` (the affine dialect's own lowering), `iree-compile`
  (iree-base-compiler's `compile_str`, target `llvm-cpu`) compiles the
  module, and iree-base-runtime (the same release) runs it on the
  `local-sync` device at every point. Its `index` is 64-bit and wraps.

MLIR's folders decline rather than compute a value they cannot represent
(an overflowing product or sum, a division by zero or by a negative
constant: docs/peers/mlir.md): a point where one declines makes the whole
request `unsupported`, and tileproof takes that side's values from its
interpreter, saying so.
"""

import os

import tileproof_peer as tp
from iree.compiler import ir

import mlir_affine as ma


class MLIRBackend(tp.Backend):
    names = ("apply", "fold", "iree")

    def __init__(self, version, entry):
        self.version, self.entry = version, entry

    def prepare(self, name):
        if name == "iree":  # loaded once, before the children fork
            from iree import compiler, runtime  # noqa: F401

    def compile(self, case, name):
        ma.check_vars(case)
        with ma.context():
            index = {v.name: i for i, v in enumerate(case.vars)}
            # Every tree must build (in MLIR's language) before any point is run.
            for t in case.trees:
                ma.build(t, index, strict=False)
            if name == "iree":
                return (case, name, _iree_compile(lowered_module(case)))
        return (case, name, None)

    def run(self, kernel, points):
        case, name, vmfb = kernel
        if name == "iree":
            return _iree_run(vmfb, len(case.trees), points)
        with ma.context():
            if name == "fold":
                return [self._fold(case, p) for p in points]
            return self._apply(case, points)

    def _fold(self, case, point):
        env = {v.name: x for v, x in zip(case.vars, point)}
        out = []
        for t in case.trees:
            e = ma.build(_substitute(t, env), {}, strict=False)
            v = ma.const_value(e)
            if v is None:
                raise tp.Unsupported(f"MLIR does not fold {_show(t)} to a constant at {list(point)}: it builds {e}")
            out.append(v)
        return out

    def _apply(self, case, points):
        # One function per point, its variables arith.constants, each tree
        # computed node by node (_Nodes), passed to @use; canonicalize folds
        # each affine.apply of constants (AffineMap::constantFold).
        nodes = _Nodes()
        nodes.lines.append("func.func private @use(index)")
        for k, p in enumerate(points):
            nodes.lines.append(f"func.func @p{k}() {{")
            var_value = {v.name: nodes.constant(x) for v, x in zip(case.vars, p)}
            for t in case.trees:
                nodes.lines.append(f"  func.call @use({nodes.tree(t, var_value)}) : (index) -> ()")
            nodes.lines += ["  return", "}"]
        module = ir.Module.parse("\n".join(nodes.lines))
        ma.set_maps(module, nodes.maps)
        ma.run_pass(module)
        values = ma.calls(module.operation)
        if len(values) != len(points) * len(case.trees):
            raise RuntimeError(f"{len(values)} values after canonicalize for {len(points)} x {len(case.trees)}")
        out = []
        for k, p in enumerate(points):
            row = []
            for j, t in enumerate(case.trees):
                v = values[k * len(case.trees) + j]
                if isinstance(v, ir.BlockArgument) or v.owner.operation.name != "arith.constant":
                    raise tp.Unsupported(f"affine.apply does not fold {_show(t)} to a constant at {list(p)}")
                row.append(v.owner.operation.attributes["value"].value)
            out.append(row)
        return out

    def reproducer(self, case, name, point, expected, klass):
        """A script that needs only the pinned wheel: it builds the input as
        the adapter does, runs the entry point under test (printing the
        module before and after `canonicalize`: the `.mlir` form of an
        upstream report), evaluates input and answer at the point with
        MLIR's folder `name`, and exits 1 while they differ."""
        ma.check_vars(case)
        index = {v.name: i for i, v in enumerate(case.vars)}
        with ma.context():
            for t in case.trees:  # in MLIR's language, as the adapter builds it
                ma.build(t, index)
        src = ", ".join(_code(t, index) for t in case.trees)
        at = ", ".join(f"{v.name} = {x}" for v, x in zip(case.vars, point)) or "the only point"
        entry = {"construct": "what building the expressions folds",
                 "simplify": "AffineExpr.simplify_affine_expr",
                 "canonicalize": "canonicalize over affine.apply in affine.for loops",
                 "structures": "affine-simplify-structures over affine.apply in affine.for loops"}[self.entry]
        if klass == "peer-crash":
            what = "MLIR raises on this input: exits 1 while it does, 0 once it returns."
        else:
            what = (f"At {at}, the answer computes another value than the input, both evaluated by MLIR's own "
                    f"constant folding ({name}). Exits 1 while they differ, 0 once they agree.")
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "mlir_harness.py")) as f:
            harness = f.read()
        wheels = f"iree-base-compiler=={self.version}"
        if name == "iree":
            wheels += f" iree-base-runtime=={self.version}"
        lines = ["#!/usr/bin/env python3",
                 f'"""tileproof finding ({klass or "unclassified"}) against MLIR (iree-base-compiler=='
                 f'{self.version}): {entry}.',
                 "",
                 what,
                 "",
                 f"    pip install {wheels} && python3 THIS_FILE",
                 '"""',
                 "",
                 f"ENTRY = {self.entry!r}",
                 f"BACKEND = {name!r}",
                 f"VARS = {[(v.name, v.lo, v.hi) for v in case.vars]!r}",
                 f"POINT = {list(point)!r}",
                 f"EXPECTED = {expected!r}",
                 f"KLASS = {klass!r}",
                 "",
                 "",
                 "def source(d):",
                 f'    """The input, {" ; ".join(case.exprs) if case.exprs else ""}, over d (one entry per variable)."""',
                 f"    return [{src}]",
                 "",
                 "",
                 harness,
                 "",
                 'if __name__ == "__main__":',
                 "    main(KLASS)",
                 ""]
        script = "\n".join(lines)
        module = self._module_text(case, point, expected, klass)
        return tp.Script(script, {"mlir": module} if module is not None else {})

    def _module_text(self, case, point, expected, klass):
        """The module before the pass, as `mlir-opt`/`iree-opt` read it (the
        form of an upstream MLIR report), for the entry points that run a
        pass; None for the others, or when MLIR's printer does not print
        the maps so that its parser reads them back."""
        if self.entry in ("construct", "simplify"):
            return self._constant_module_text(case, point, expected, klass)
        pipeline = {"canonicalize": ma.CANONICALIZE,
                    "structures": STRUCTURES}[self.entry]
        index = {v.name: i for i, v in enumerate(case.vars)}
        with ma.context():
            exprs = [ma.build(t, index) for t in case.trees]
            module = ma.module_with(ma.loop_module(case, exprs), exprs)
            text = str(module)
            try:
                back = ir.Module.parse(text)
            except ir.MLIRError:
                return None
            if [str(o.attributes["map"]) for o in ma.ops_named(back.operation, "affine.apply")] != \
                    [str(o.attributes["map"]) for o in ma.ops_named(module.operation, "affine.apply")]:
                return None
        at = ", ".join(f"{v.name} = {x}" for v, x in zip(case.vars, point)) or "the only point"
        where = "; ".join(f"{v.name}: the affine.for tagged tp_var = {k}" if ma.loop_range(v) is not None
                          else f"{v.name}: an argument of @f" for k, v in enumerate(case.vars))
        what = (f"MLIR raises on this module ({klass})." if klass == "peer-crash" else
                f"At {at}, the input computes {expected} and the module after the pass computes another "
                f"value (MLIR's own evaluation; the Python reproducer beside this file prints both).")
        head = [f"// tileproof finding ({klass}) against MLIR (iree-base-compiler=={self.version}).",
                f"// RUN: mlir-opt --pass-pipeline='{pipeline}' %s",
                f"//   or: iree-opt --pass-pipeline='{pipeline}' %s",
                f"// Variables ({where}) in this order are each affine.apply's operands;",
                "// each result goes to @use.",
                f"// {what}"]
        return "\n".join(head) + "\n" + text

    def _constant_module_text(self, case, point, expected, klass):
        """For `construct` and `simplify`: the input's maps, written in
        MLIR's syntax from the tree (MLIR's parser builds them with the
        same operators, so its construction folds them as the adapter's
        does), each `affine.apply`d to the point's `arith.constant`s.
        `canonicalize` folds each apply at the point; for `simplify`,
        `affine-simplify-structures` first runs `simplifyAffineMap`
        (`simplifyAffineExpr` on each result) over the maps. None when a
        constant cannot be written (MIN: the parser reads `-` and then
        2^63, which does not fit)."""
        index = {v.name: i for i, v in enumerate(case.vars)}
        texts = [_affine_text(t, index) for t in case.trees]
        if any(t is None for t in texts):
            return None
        pipeline = ma.CANONICALIZE if self.entry == "construct" else STRUCTURES
        n = len(case.vars)
        dims = ", ".join(f"d{i}" for i in range(n))
        lines = ["func.func private @use(index)", "func.func @f() {"]
        lines += [f"  %x{i} = arith.constant {x} : index  // {v.name}" for i, (v, x) in enumerate(zip(case.vars, point))]
        for j, t in enumerate(texts):
            lines += [f"  %r{j} = affine.apply affine_map<({dims}) -> ({t})>({', '.join(f'%x{i}' for i in range(n))})",
                      f"  func.call @use(%r{j}) : (index) -> ()"]
        lines += ["  return", "}"]
        text = "\n".join(lines)
        with ma.context():
            try:
                ir.Module.parse(text)
            except ir.MLIRError:
                return None
        at = ", ".join(f"{v.name} = {x}" for v, x in zip(case.vars, point)) or "the only point"
        what = (f"MLIR raises on this module ({klass})." if klass == "peer-crash" else
                f"At {at} (the constants), the input computes {expected}; after the pass each @use takes the "
                f"folded map's value there (the Python reproducer beside this file prints both).")
        how = ("MLIR's parser builds each map with the operators that fold as they build (`mlir-opt %s` "
               "alone prints the folded map)" if self.entry == "construct" else
               "affine-simplify-structures simplifies each map with simplifyAffineExpr, then folds the applies")
        head = [f"// tileproof finding ({klass}) against MLIR (iree-base-compiler=={self.version}).",
                f"// RUN: mlir-opt --pass-pipeline='{pipeline}' %s",
                f"//   or: iree-opt --pass-pipeline='{pipeline}' %s",
                f"// {how}.",
                f"// {what}"]
        return "\n".join(head) + "\n" + text + "\n"


STRUCTURES = "builtin.module(func.func(affine-simplify-structures))"


def _affine_text(tree, index):
    """The tree in MLIR's affine map syntax, every node parenthesized;
    None when a constant cannot be written (MIN)."""
    def leaf(t):
        if t[0] == "var":
            return f"d{index[t[1]]}"
        if t[0] == "const":
            return None if t[1] == tp.I64_MIN else str(t[1])
        raise tp.Unsupported(f"MLIR's affine expressions have no `{t[0]}`")

    def node(op, args):
        if any(a is None for a in args):
            return None
        if op == "neg":
            return f"({args[0]} * -1)"
        sym = {"add": "+", "mul": "*", "floordiv": "floordiv", "ceildiv": "ceildiv", "mod": "mod"}.get(op)
        if sym is None:
            raise tp.Unsupported(f"MLIR's affine expressions have no `{op}`")
        return f"({args[0]} {sym} {args[1]})"
    return tp.fold(tree, leaf, node)


class _Nodes:
    """Lines of `affine.apply`s computing trees node by node: each node an
    `affine.apply` of that one operation (`(d0, d1) -> (d0 + d1)`,
    `(d0) -> (d0 floordiv 4)`), each constant leaf an `arith.constant`.
    One operation per map, so that nothing is folded as the maps are built:
    a map of a whole tree is what MLIR's construction folds, the simplifier
    under test (`(x + 1 + MAX) floordiv 2` builds `d0 floordiv 2 - 2^62`).
    `maps` are given to the parsed module by `ma.set_maps`, in program
    order. Raises Unsupported outside the affine language (a product of two
    non-constants, a division or `mod` by a non-constant or non-positive
    constant)."""

    def __init__(self):
        self.lines, self.maps = [], []
        self._fresh = iter(range(1 << 30))
        self._d0, self._d1 = ir.AffineDimExpr.get(0), ir.AffineDimExpr.get(1)

    def tree(self, t, var_value):
        """The SSA name of `t`'s value, the variable `v` being `var_value[v]`."""
        def leaf(x):
            if x[0] == "var":
                return (var_value[x[1]], None)
            if x[0] == "const":
                return (self.constant(x[1]), x[1])
            raise tp.Unsupported(f"MLIR's affine expressions have no `{x[0]}`")
        return tp.fold(t, leaf, self._node)[0]

    def constant(self, v):
        name = f"%c{next(self._fresh)}"
        self.lines.append(f"  {name} = arith.constant {v} : index")
        return name

    def _apply(self, expr, operands):
        name = f"%n{next(self._fresh)}"
        self.lines.append(f"  {name} = affine.apply {ma.placeholder(len(operands))}({', '.join(operands)})")
        self.maps.append(ir.AffineMap.get(len(operands), 0, [expr]))
        return (name, None)

    def _node(self, op, a):
        d0, d1 = self._d0, self._d1
        if op == "add":
            return self._apply(ir.AffineAddExpr.get(d0, d1), [a[0][0], a[1][0]])
        if op == "neg":
            return self._apply(ir.AffineMulExpr.get(d0, ma.const(-1)), [a[0][0]])
        if op == "mul":
            x, c = (a[0], a[1][1]) if a[1][1] is not None else (a[1], a[0][1])
            if c is None:
                raise tp.Unsupported("MLIR's affine expressions multiply only by a constant (semi-affine otherwise)")
            return self._apply(ir.AffineMulExpr.get(d0, ma.const(c)), [x[0]])
        get = {"floordiv": ir.AffineFloorDivExpr.get, "ceildiv": ir.AffineCeilDivExpr.get,
               "mod": ir.AffineModExpr.get}.get(op)
        if get is None:
            raise tp.Unsupported(f"MLIR's affine expressions have no `{op}`")
        if a[1][1] is None or a[1][1] <= 0:
            raise tp.Unsupported(f"MLIR's affine `{op}` takes only a positive constant divisor")
        return self._apply(get(d0, ma.const(a[1][1])), [a[0][0]])


def lowered_module(case):
    """The text of a module with one function `@e{j}(i64, ...) -> i64` per
    tree (the case's variables its arguments, in order) computing it node
    by node (`_Nodes`), run through MLIR's `lower-affine` (to `arith`)."""
    nodes = _Nodes()
    args = ", ".join(f"%a{i}: i64" for i in range(len(case.vars)))
    var_value = {v.name: f"%i{i}" for i, v in enumerate(case.vars)}
    for j, t in enumerate(case.trees):
        nodes.lines.append(f"func.func @e{j}({args}) -> i64 {{")
        nodes.lines += [f"  %i{i} = arith.index_cast %a{i} : i64 to index" for i in range(len(case.vars))]
        result = nodes.tree(t, var_value)
        nodes.lines += [f"  %o = arith.index_cast {result} : index to i64", "  return %o : i64", "}"]
    module = ir.Module.parse("\n".join(nodes.lines))
    ma.set_maps(module, nodes.maps)
    try:
        ma.run_pass(module, "builtin.module(func.func(lower-affine))")
    except ir.MLIRError as e:
        raise tp.Unsupported(f"lower-affine rejects these maps: {str(e).splitlines()[0]}")
    # lower-affine leaves in place an apply it cannot lower, without an error.
    left = ma.ops_named(module.operation, "affine.apply")
    if left:
        raise tp.Unsupported(f"lower-affine does not lower {left[0].attributes['map']}")
    return str(module)


def _iree_compile(text):
    from iree import compiler
    try:
        # const-eval would evaluate constant subexpressions at compile time
        # (and costs a third of the compile): off, the code computes them.
        return compiler.compile_str(text, target_backends=["llvm-cpu"], extra_args=["--iree-opt-const-eval=false"])
    except compiler.CompilerToolError as e:
        raise tp.CompileError(f"iree-compile rejects the lowered module: {str(e)[:2000]}")


def _iree_run(vmfb, nexprs, points):
    from iree import runtime
    ctx = runtime.SystemContext(config=runtime.Config("local-sync"))
    ctx.add_vm_module(runtime.VmModule.copy_buffer(ctx.instance, vmfb))
    fns = [ctx.modules.module[f"e{j}"] for j in range(nexprs)]
    return [[int(f(*p)) for f in fns] for p in points]


_CODE = {"add": "ADD", "mul": "MUL", "floordiv": "FDIV", "ceildiv": "CDIV", "mod": "MOD"}


def _code(tree, index):
    """Python source building the tree as mlir_affine.build does."""
    def leaf(t):
        if t[0] == "var":
            return f"d[{index[t[1]]}]"
        if t[0] == "const":
            return f"C({t[1]})"
        raise tp.Unsupported(f"MLIR's affine expressions have no `{t[0]}`")

    def node(op, args):
        if op == "neg":
            return f"MUL({args[0]}, C(-1))"
        if op in _CODE:
            return f"{_CODE[op]}({args[0]}, {args[1]})"
        raise tp.Unsupported(f"MLIR's affine expressions have no `{op}`")
    return tp.fold(tree, leaf, node)


def _substitute(tree, env):
    """The tree with each variable replaced by its value at the point."""
    return tp.fold(tree, lambda t: ["const", env[t[1]]] if t[0] == "var" else t, lambda op, args: [op, *args])


def _show(tree):
    s = str(tree)
    return s if len(s) < 200 else s[:200] + "..."
