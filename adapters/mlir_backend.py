"""MLIR's own evaluation of affine expressions, as a tileproof backend
(docs/protocol.md section 5: `run` requests), for mlir_adapter.py.

Two backends, both MLIR's code and nothing else (the wheel has no
execution engine for compiled code: see adapters/README.md, "MLIR"):

- `apply`: each expression's map (as MLIR builds it from the tree) applied
  to `arith.constant` operands, one function per point, and the module run
  through `canonicalize`: `affine.apply`'s folder (`AffineMap::constantFold`)
  gives the value, read back from the `arith.constant` that replaces it.
- `fold`: each expression built bottom-up with the point's values in place
  of the variables: every node is then an MLIR binary expression of two
  constants, which MLIR folds as it builds it (its constant folding of
  `+ * floordiv ceildiv mod`), with no symbolic rewrite in between: the
  literal evaluation.

MLIR's folders decline rather than compute a value they cannot represent
(an overflowing product or sum, a division by zero or by a negative
constant: adapters/README.md): a point where one declines makes the whole
request `unsupported`, and tileproof takes that side's values from its
interpreter, saying so.
"""

import os

import tileproof_peer as tp
from iree.compiler import ir

import mlir_affine as ma


class MLIRBackend(tp.Backend):
    names = ("apply", "fold")

    def __init__(self, version, entry):
        self.version, self.entry = version, entry

    def compile(self, case, name):
        ma.check_vars(case)
        with ma.context():
            index = {v.name: i for i, v in enumerate(case.vars)}
            # Every tree must build (in MLIR's language) before any point is run.
            for t in case.trees:
                ma.build(t, index, strict=False)
        return (case, name)

    def run(self, kernel, points):
        case, name = kernel
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
        index = {v.name: i for i, v in enumerate(case.vars)}
        exprs = [ma.build(t, index, strict=False) for t in case.trees]
        lines = ["func.func private @use(index)"]
        for k, p in enumerate(points):
            lines.append(f"func.func @p{k}() {{")
            operands = []
            for i, x in enumerate(p):
                lines.append(f"  %c{i} = arith.constant {x} : index")
                operands.append(f"%c{i}")
            lines += ma.apply_lines(exprs, operands, "  ")
            lines += ["  return", "}"]
        try:
            module = ma.run_pass(ma.module_with("\n".join(lines), exprs * len(points)))
        except ir.MLIRError as e:
            # A map outside the affine language (a product of two constants
            # MLIR did not fold, in a peer's answer): affine.apply's verifier
            # rejects what the C API built.
            raise tp.Unsupported(f"affine.apply does not take these maps: {str(e).splitlines()[0]}")
        values = ma.calls(module.operation)
        if len(values) != len(points) * len(exprs):
            raise RuntimeError(f"{len(values)} values after canonicalize for {len(points)} x {len(exprs)}")
        out = []
        for k, p in enumerate(points):
            row = []
            for j, t in enumerate(case.trees):
                v = values[k * len(exprs) + j]
                if isinstance(v, ir.BlockArgument) or v.owner.operation.name != "arith.constant":
                    raise tp.Unsupported(f"affine.apply of {exprs[j]} does not fold to a constant at {list(p)}")
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
        lines = ["#!/usr/bin/env python3",
                 f'"""tileproof finding ({klass or "unclassified"}) against MLIR (iree-base-compiler=='
                 f'{self.version}): {entry}.',
                 "",
                 what,
                 "",
                 f"    pip install iree-base-compiler=={self.version} && python3 THIS_FILE",
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
        return "\n".join(lines)


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
