"""tinygrad's backend for tileproof (docs/protocol.md, section 5): `run` and `reproducer` requests.

Backends `clang`, `llvm`, `x86`: tinygrad 0.14.0's three CPU renderers (`DEV=CPU`, `DEV=CPU:LLVM`,
`DEV=CPU:X86`). The compile harness is tinygrad_harness.py (tinygrad and the stdlib only); every
reproducer script inlines its text verbatim (from its first import on): one source for both.

The kernel (`tinygrad_harness.kernel`): one point per call, no loop. Variable i of the case is an int64
loaded from input buffer i (a bool variable: `!= 0` of the loaded 0/1) and cast to tinygrad's index
dtype (weakint): an opaque value, so no pass knows its range. Each expression is stored into an output
buffer of its own (int64, or bool). The index dtype: `pm_lower_index_dtype` absorbs the weak cast of the
int64 load, so every op over a variable is computed in int64 (`long` in the C source, `i64`, 64-bit
registers); a subexpression of constants alone gets the width its exact bounds need, as in tinygrad's
own kernels. The kernel's arguments are passed as tinygrad's runtime passes them (its ProgramInfo's
`globals`; the ELF signature drops the 7th and later arguments of an X86 kernel), in buffers from the
CPU device's own allocator (page-aligned: the LLVM renderer declares `align 32`).

`invalid`: an expression whose top is a chain of gates `where(c, x, Invalid)` (Invalid in either arm)
is compiled the way tinygrad's pipeline uses a gated index: the gates are merged (`a & b`, and
`where(c, Invalid, x)` is `where(!c, x, Invalid)`: symbolic_simple's rules), `x` is stored through the
gated index `0.valid(gate)`, which `pm_move_gates_from_index` turns into a store masked by the gate, and
so is a flag (`True`); a lane whose flag was not stored is `invalid`. How `x` is computed in a masked
lane is the renderer's: the C renderer inlines it into the `if (gate) {...}` that tinygrad's linearizer
makes of a gated store; the LLVM renderer computes it before the branch (LLVM's O2 sinks it into the
branch); the X86 renderer computes it unconditionally and stores it through an address a cmov selects
(the scratch slot in a masked lane). An Invalid anywhere else (`1 // where(x != 0, x, Invalid)`, an
Invalid in a gate) is never compiled by tinygrad as written (its rewriter first moves the op under the
gate, pm_data_invalid): such an expression is `unsupported`, and tileproof takes its values from its
interpreter.

The passes (`tinygrad_harness.lower`, `to_program`): tinygrad's `full_rewrite_to_sink` and
`do_to_program`, in their order, with tinygrad's own matchers, keeping what code generation needs and
dropping what simplifies arithmetic:

- dropped, nothing to do in a scalar kernel without ranges: multi_pm, early movement ops, load
  collapse, split ranges, expander, remove reduces, add local buffers, add gpudims, expand broadcast /
  add loads, devectorize, memory coalescing, add images, implicit barriers, number params;
- dropped, they are the simplifier under test: initial, postopt, early and extra symbolic (`sym`),
  final symbolic (`symbolic`), simplify ranges, the optimizer (opts, BEAM); `indexing_simplify`
  (uop_given_valid on gated indices) with them;
- "lower all index dtypes": `pm_lower_index_dtype` (no renderer renders weakint), without the
  symbolic_simple and indexing_simplify it runs with;
- "early decompositions": `get_simplifying_rewrite_patterns(renderer ops)`: no CPU renderer has
  FLOORDIV/FLOORMOD (a shift or an AND for a power of two, else CDIV/CMOD with tinygrad's sign
  fix-up), and C and LLVM have no MAX (CMPLT + WHERE);
- "decomp dtypes": `pm_dtype_decomps + pm_commit_weak` (emulates a dtype the renderer lacks: none on
  x86-64; commits the weak constants the decompositions mint);
- "late decompositions": the early ones + `get_late_rewrite_patterns(ops, DISABLE_FAST_IDIV)`: MUL
  and CDIV by 2^k to shifts, NEG and SUB forms, CMPEQ, `!(x<c)` to `c-1<x`...; fast_idiv as tinygrad's
  own setting says (off by default); the transcendental ones are for floats;
- "move gates from index": `pm_move_gates_from_index`: the gate becomes the store's mask;
- "final rewrite": `pm_commit_weak + pm_cast_weak +` the late decompositions `+ renderer.extra_matcher +
  pm_split_ends` (the renderer's own legalization: X86 spells NEG as 0-x, CMOD as x-y*CDIV, bool
  compares as xor), without pm_remove_invalid (it turns a leftover Invalid into 0: none is left);
- "casted consts" (`pm_casted_consts`: renderers spell literals as CAST(CONST)) and "add control flow"
  (`pm_add_control_flow`);
- do_to_program: X86's instruction selection, then `pm_to_program`: linearize (a gated store becomes
  IF/ENDIF; register allocation for X86), render, compile (clang -O2, LLVM's default<O2>, X86's own
  encoder), as tinygrad runs them: that optimization is tinygrad's compiled code.

tinygrad's pm_decomp (the decompositions' matcher) carries all of symbolic_simple; two of its rules are
kept, because codegen relies on them (`tinygrad_harness.pm_legalize`): the folding of a unary or binary
op whose operands are all constants (the decompositions mint `-c`, `c-1`, `c+1` and expect them folded:
unfolded, the late decompositions never finish on `x // (3 * -1)` for LLVM, and the C renderer prints
`-(-2)` as `--2l`; a WHERE on a constant gate is not folded: the gate masks a store), and
`cast(bool) -> != 0` (X86's extra_matcher spells a bool `where` as an int16 one cast back to bool,
which its encoder cannot encode). Folding constants never touches an op with a variable under it.

Literalness is checked by `python3 adapters/tinygrad_backend.py --show`: for `x & (x & 3)`,
`(x*4 + 3) // 4`, `x - x` and `x // 1` it prints, per renderer, what tinygrad's full pipeline
(`full_rewrite_to_sink`) and this one render, and fails unless the ops of the input survive in this one
(full pipeline: `val0`, `val0`, `0`, `val0`; this one: `(cast0&cast0&3l)`, `((cast0<<2l)+3l)>>2l`,
`(cast0-cast0)`, `(cast0/1l)-...`).

Compiled literally, some inputs reach renderer paths tinygrad's own pipeline never feeds, because its
symbolic passes normalize first: the C renderer prints NEG as `-x` without parentheses, so NEG(NEG(x))
(`-(-(x))`, or `a - ceildiv(b, c)`) is `--x`, a compile error, or on a plain variable a pre-decrement
(x - 1); X86 cannot encode some stores. Such values are the compiled code's, not tileproof's: compare
the source's backend values with tileproof's own before blaming the simplifier.

Process: `prepare` (in the adapter, before the first child of a `run` request is forked) opens the CPU
device, builds the renderer (the LLVM one loads libLLVM: 0.5 s) and compiles, without running, a kernel
with every op, so that each child only compiles its own kernel. Every compile runs under
`CACHELEVEL=0`: no child touches tinygrad's on-disk compile cache (an sqlite file an inherited
connection to which would be shared across fork), and the adapter never opens it. Opening the device
starts no thread (checked: forking a threaded process is unsafe). clang runs as a subprocess of the
child. A renderer is picked per compile with `Context(DEV="CPU:<renderer>")`, tinygrad's supported way
(the device keeps one renderer per target).
"""

import builtins
import keyword
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tileproof_peer as tp  # noqa: E402
import tinygrad_harness as harness  # noqa: E402

# How the adapter's builder spells each op (tinygrad_uops.BUILD), as Python source for reproducers.
# reproducer() checks that the text builds the very UOps the adapter builds.
SPELL = {
    "neg": "-{0}", "not": "{0}.logical_not()", "add": "({0} + {1})", "sub": "({0} - {1})", "mul": "({0} * {1})",
    "min": "{0}.minimum({1})", "max": "{0}.maximum({1})", "div": '{0}.div({1}, rounding_mode="trunc")',
    "rem": "{0}.fmod({1})", "floordiv": "({0} // {1})", "mod": "({0} % {1})", "ceildiv": "ceildiv({0}, {1})",
    "shl": "({0} << {1})", "shr": "({0} >> {1})", "bitand": "({0} & {1})", "lt": "({0} < {1})", "le": "({0} <= {1})",
    "eq": "{0}.eq({1})", "ne": "{0}.ne({1})", "and": "({0} & {1})", "or": "({0} | {1})", "xor": "({0} ^ {1})",
    "where": "{0}.where({1}, {2})",
}

HARNESS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tinygrad_harness.py")


def warmup_exprs(x, y, p):
    """Every op the adapter builds, a gate and a bool: what prepare() compiles to warm tinygrad's matchers."""
    from tinygrad.helpers import ceildiv
    return [(p & (x < 3)).where(((x * 4 + y) // 4) * 4 + (x * 4 + y) % 4, harness.UOp.invalid()),
            x.minimum(y) + x.maximum(-y) - x.div(3, rounding_mode="trunc") + y.fmod(3) + ceildiv(x, 2)
            + (x << 1) + (y >> 1) + (x & 6),
            ((x <= y) | x.eq(y)) ^ x.ne(2).logical_not()]


class TinygradBackend(tp.Backend):
    names = tuple(harness.RENDERERS)

    def __init__(self, make_vars, build, entry, vars_mode, module=None):
        """`make_vars(case)` -> ({name: UOp}, ...) and `build(tree, env)` are the adapter's own (the same
        UOps as its simplifier gets); `entry` ("sym" or "simplify"), `vars_mode` ("variable" or
        "range") and `module` (the user's `FILE.py:MATCHER`, the simplifier where given) are its
        options, for reproducers."""
        self.make_vars, self.build, self.entry, self.vars_mode = make_vars, build, entry, vars_mode
        self.module = module
        self.prepared = set()

    def exprs(self, case):
        env = self.make_vars(case)[0]
        try:
            return [env[v.name] for v in case.vars], [self.build(t, env) for t in case.trees]
        except Exception as e:  # noqa: BLE001 - e.g. 3 << -1: tinygrad's builder folds the constants and raises
            raise tp.Unsupported(f"tinygrad's builder raises {type(e).__name__}: {e}")

    def prepare(self, name):
        if name in self.prepared:
            return
        # CACHELEVEL=0 as in compile_kernel: the adapter must not open tinygrad's on-disk cache (forked children
        # would share the connection)
        with harness.Context(DEV=f"CPU:{harness.RENDERERS[name]}", CACHELEVEL=0):
            try:
                ren = harness.Device["CPU"].renderer
            except Exception as e:  # noqa: BLE001 - the machine lacks what the renderer needs
                raise RuntimeError(f"tinygrad's {name} renderer cannot start ({type(e).__name__}: {e}); "
                                   "adapters/setup-venv.sh checks what it needs (clang, libLLVM)") from e
            x, y, p = (harness.UOp.variable("x", -8, 8), harness.UOp.variable("y", -8, 8),
                       harness.UOp.variable("p", False, True, harness.dtypes.bool))
            sink, _ = harness.kernel([x, y, p], warmup_exprs(x, y, p))
            harness.to_program(harness.lower(sink, ren), ren)  # compiled, never run
        if threading.active_count() > 1:
            raise RuntimeError("tinygrad started a thread: forking the adapter for `run` would be unsafe")
        from tinygrad import helpers
        if helpers._db_connection is not None:
            raise RuntimeError("tinygrad opened its on-disk cache in the adapter: forked children would share it")
        self.prepared.add(name)

    def compile(self, case, name):
        variables, exprs = self.exprs(case)
        try:
            return harness.compile_kernel(variables, exprs, name)[0]
        except harness.NotCompilable as e:
            raise tp.Unsupported(str(e))
        except Exception as e:  # noqa: BLE001 - tinygrad's compiler (or clang, LLVM) rejected the kernel
            msg = f"{type(e).__name__}: {e}"
            if "clang" in msg:
                msg += " (clang's messages are on the adapter's stderr)"
            raise tp.CompileError(msg[:2000])

    def run(self, kernel, points):
        return [kernel(p) for p in points]

    def script_parts(self, case, name, point):
        """What the scripts share: the case's code, the point as text, the source of `outcome` (compile and run on
        renderer `name` in a child) and the inlined harness followed by the case."""
        py = python_names(case)
        case_code = self.case_code(case, py)
        where = ", ".join(f"{v.name} = {x}" for v, x in zip(case.vars, point))
        outcome = OUTCOME.format(vars=", ".join(py[v.name] for v in case.vars), point=list(point), name=name)
        harness_lines = ["# ---- tileproof's compile harness (adapters/tinygrad_harness.py, verbatim; why each pass: "
                         "tinygrad_backend.py) ----", harness_text(), "# ---- the case ----", case_code]
        return case_code, where, outcome, harness_lines

    def bounds_reproducer(self, case, name, point, klass):
        """Every value of the input compiled alone on renderer `name` at the point, beside its vmin/vmax."""
        _, where, outcome, harness_lines = self.script_parts(case, name, point)
        head = [
            "#!/usr/bin/env python3",
            f'"""tinygrad {tp_version()}: a tileproof finding (unsound-bounds, class {klass}; adapter --vars '
            f"{self.vars_mode}).",
            "Builds the input, compiles each of its nodes alone literally (the harness: tinygrad's codegen minus",
            f"its optimizer and every symbolic pass) with DEV=CPU:{harness.RENDERERS[name]}, runs it at {where} in "
            "a child process,",
            "and prints it beside the bounds tinygrad's range analysis gives it (vmin, vmax), which its rewrite "
            "rules trust;",
            'exits 1 while some node\'s compiled value lies outside them, else 0."""',
            "import json, os, signal, sys"]
        body = harness_lines + [
            'print("input:", *(e.render(simplify=False) for e in source))', *outcome.split("\n"),
            "outside = 0",
            "for node in dict.fromkeys(u for e in source for u in e.toposort() if u.dtype != dtypes.void):  "
            "# every value once",
            "  got, lo, hi = outcome([node]), node.vmin, node.vmax",
            "  v = got.get('values', [None])[0]",
            "  bad = isinstance(v, (bool, int)) and not lo <= v <= hi  # a masked lane ('invalid') has no value",
            "  outside += bad",
            f'  print(f"{{node.render(simplify=False)}}: bounds [{{lo}}, {{hi}}], at {where} the compiled node '
            'gives {got}" + (" OUTSIDE them" if bad else ""))',
            'print(f"{outside} node(s) outside their bounds" if outside else "every node within its bounds: no '
            'longer reproduces")',
            "sys.exit(1 if outside else 0)"]
        return "\n".join(head + body) + "\n"

    def reproducer(self, case, name, point, expected, klass):
        case_code, where, outcome, harness_lines = self.script_parts(case, name, point)
        crash_only = klass in ("peer-crash", "peer-error")
        try:
            for e in self.exprs(case)[1]:
                harness.split_gates(e)
            compilable = True
        except harness.NotCompilable:
            compilable = False
        if not crash_only and not compilable and (not isinstance(expected, list) or len(expected) != len(case.trees)):
            raise tp.BadRequest("the source cannot be compiled as written: `reproducer.expected` must hold its "
                                "value for each expression")
        entry, imports, options = self.entry_code()
        head = [
            "#!/usr/bin/env python3",
            f'"""tinygrad {tp_version()}, `{entry}`: a tileproof finding (class {klass}; adapter {options}).',

            "Builds the input and prints tinygrad's answer" + ("; exits 1 while the simplifier raises, else 0." + '"""'
            if crash_only else f"; compiles both literally (the harness: tinygrad's codegen minus its optimizer and"
            f"\nevery symbolic pass) with DEV=CPU:{harness.RENDERERS[name]}, runs them at {where} in a child process;"
            ' exits 1 while they differ."""'),
            "import json, os, signal, sys" if not crash_only else "import sys", *imports]
        if crash_only:
            body = ["from tinygrad.uop.ops import UOp, graph_rewrite", "from tinygrad.dtype import dtypes", case_code]
        else:
            body = list(harness_lines)
        body += [
            'print("input:   ", *(e.render(simplify=False) for e in source))',
            f"try: answer = list({entry}.src)",
            f'except Exception as e: sys.exit(print(f"{entry} raises {{type(e).__name__}}: {{e}}") or 1)',
            'print("tinygrad:", *(e.render(simplify=False) for e in answer))']
        if crash_only:
            body.append('print("the simplifier no longer raises")')
        else:
            body += outcome.split("\n")
            body += ["src = outcome(source)"] if compilable else [
                f"src = {{'values': {list(expected)!r}}}",
                'print("(the input has an Invalid under arithmetic, which tinygrad never compiles as written: its values '
                "below are tileproof's)\")"]
            body += ["ans = outcome(answer)",
                     f'print(f"at {where} on DEV=CPU:{harness.RENDERERS[name]}:\\n  input:    {{src}}\\n  tinygrad: {{ans}}")',
                     "sys.exit(int(src != ans))"]
        return "\n".join(x for x in head + body if x is not None) + "\n"

    def entry_code(self):
        """The simplifier's call in a reproducer, the lines it needs first, and the adapter's options."""
        if self.module:
            path, _, attr = self.module.rpartition(":")
            path = os.path.abspath(path)
            mod = os.path.splitext(os.path.basename(path))[0]
            return (f"graph_rewrite(UOp.sink(*source), {attr})",
                    [f"sys.path.insert(0, {os.path.dirname(path)!r})", f"from {mod} import {attr}"],
                    f"--module {self.module} --vars {self.vars_mode}")
        if self.entry == "sym":
            return ("graph_rewrite(UOp.sink(*source), sym)", ["from tinygrad.uop.symbolic import sym"],
                    f"--entry sym --vars {self.vars_mode}")
        return "UOp.sink(*source).simplify()", [], f"--entry {self.entry} --vars {self.vars_mode}"

    def case_code(self, case, py):
        """Python source that builds the case's variables (as make_vars builds them) and its input as `source`, with
        the adapter's builder spelled out; checked to build the very UOps the adapter builds (hash-consed: the same
        objects)."""
        env = self.make_vars(case)[0]
        lines, uses = [], set()
        for i, v in enumerate(case.vars):
            if v.dtype == "bool":
                make = f'UOp.variable("{v.name}", {bool(v.lo)}, {bool(v.hi)}, dtypes.bool)'
            elif env[v.name].op is harness.Ops.RANGE:
                make = f"UOp.range({v.hi + 1}, {i}, AxisType.LOOP)"
                uses.add("from tinygrad.uop.ops import AxisType")
            else:
                make = f'UOp.variable("{v.name}", {v.lo}, {v.hi})'
            lines.append(f"{py[v.name]} = {make}")
        lines.append(f"source = [{', '.join(spell(t, py) for t in case.trees)}]")
        if "ceildiv(" in lines[-1]:
            uses.add("from tinygrad.helpers import ceildiv")
        code = "\n".join(sorted(uses) + [CONST] + lines)
        ns = dict(vars(harness))
        exec(code, ns)
        built = self.exprs(case)[1]
        if len(ns["source"]) != len(built) or any(a is not b for a, b in zip(ns["source"], built)):
            raise RuntimeError("the reproducer's source text does not build the adapter's input")
        return code


CONST = "c = lambda v: UOp.const(v, dtypes.bool if isinstance(v, bool) else dtypes.weakint)"

OUTCOME = """def outcome(exprs):  # compile and run in a child process: a trap is printed, not suffered
  r, w = os.pipe()
  if (pid:=os.fork()) == 0:
    try: res = {{"values": compile_kernel([{vars}], exprs, "{name}")[0]({point})}}
    except Exception as e: res = {{"compile error": f"{{type(e).__name__}}: {{e}}"}}
    os.write(w, json.dumps(res).encode()); os._exit(0)
  os.close(w); data = b"".join(iter(lambda: os.read(r, 1 << 16), b"")); status = os.waitpid(pid, 0)[1]
  return json.loads(data) if data else {{"trap": signal.Signals(os.WTERMSIG(status)).name}}"""


def harness_text():
    """tinygrad_harness.py from its first import on (its header comment is the script's marker line)."""
    lines = open(HARNESS_FILE).read().rstrip("\n").split("\n")
    return "\n".join(lines[next(i for i, ln in enumerate(lines) if ln.startswith("import")):])


def tp_version():
    from importlib.metadata import version
    return version("tinygrad")


def python_names(case):
    """A Python identifier per variable: its own name unless the script already uses it."""
    taken = set(dir(builtins)) | set(vars(harness)) | {"c", "e", "sym", "source", "answer", "json", "os", "signal",
                                                       "sys", "ceildiv", "AxisType", "outcome", "src", "ans", "outside",
                                                       "node", "got", "lo", "hi", "v", "bad",
                                                       # outcome's locals: its compile reads the variables by name
                                                       "r", "w", "pid", "res", "data", "status"}
    out = {}
    for v in case.vars:
        n = v.name if v.name.isidentifier() and not keyword.iskeyword(v.name) else "v_" + "".join(
            ch if ch.isalnum() else "_" for ch in v.name)
        while n in taken:
            n = "v_" + n
        taken.add(n)
        out[v.name] = n
    return out


def spell(tree, py):
    """A tree as Python source that builds it with the adapter's builder (see SPELL)."""
    def leaf(t):
        if t[0] == "var":
            return py[t[1]]
        if t[0] in ("const", "bool"):
            return f"c({t[1]!r})"
        return "UOp.invalid()"
    return tp.fold(tree, leaf, lambda op, args: SPELL[op].format(*args))


# ---- literalness: python3 adapters/tinygrad_backend.py --show ------------------------

EXAMPLES = [  # (text, builder, what must survive in the lowered graph: op names -> least count)
    ("x & (x & 3)", lambda x, c: x & (x & c(3)), {"AND": 2}),
    ("(x * 4 + 3) // 4", lambda x, c: (x * c(4) + c(3)) // c(4), {"ADD": 1, "SHL|MUL": 1, "SHR|CDIV": 1}),
    ("x - x", lambda x, c: x - x, {"SUB|ADD": 1}),
    ("x // 1", lambda x, c: x // c(1), {"CDIV": 1}),
]


def show():
    """Prints what tinygrad's full pipeline and the literal one render for EXAMPLES on each renderer;
    returns how many times the literal one lost an op."""
    from collections import Counter
    from tinygrad.codegen import full_rewrite_to_sink
    from tinygrad.uop.symbolic import sym
    x = harness.UOp.variable("x", -8, 8)
    failed = 0
    for text, make, want in EXAMPLES:
        e = make(x, lambda v: harness.UOp.const(v, harness.dtypes.weakint))
        print(f"==== {text}    (tinygrad's sym rewrites it to {harness.graph_rewrite(e, sym).render(simplify=False)})")
        for name, ren_name in harness.RENDERERS.items():
            sink, _ = harness.kernel([x], [e])
            with harness.Context(DEV=f"CPU:{ren_name}", CACHELEVEL=0):
                ren = harness.Device["CPU"].renderer
                lowered = harness.lower(sink, ren)
                ops = Counter(u.op.name for u in lowered.toposort())
                have = {k: sum(ops[o] for o in k.split("|")) for k in want}
                ok = all(have[k] >= n for k, n in want.items())
                failed += not ok
                for label, s in (("tinygrad's full pipeline (full_rewrite_to_sink)", full_rewrite_to_sink(sink, ren, optimize=False)),
                                 ("tileproof's literal pipeline", lowered)):
                    prg = harness.to_program(s, ren)
                    src = ren.asm_str(list(prg.src[1].src), "tileproof") if isinstance(ren, harness.ISARenderer) \
                        else prg.src[2].arg
                    print(f"-- {name}: {label}:\n{src.strip()}")
                counts = ", ".join(f"{k} {n}" for k, n in have.items())
                print(f"-- {name}: {'ok' if ok else 'SIMPLIFIED'}: the literal pipeline's lowered graph has {counts}")
    return failed


def check():
    """Each renderer compiles and runs a trivial kernel on this machine; returns the failures, each naming what
    is missing."""
    import shutil
    failures = []
    if shutil.which("clang") is None:
        failures.append("clang is missing: tinygrad's CPU device compiles with it, whatever the renderer "
                        "(Debian: apt-get install clang)")
    x = harness.UOp.variable("x", 0, 100)
    for name in harness.RENDERERS:
        try:
            got = harness.compile_kernel([x], [x + 1, x < 50], name)[0]([41])
            if got != [42, True]:
                failures.append(f"the {name} renderer computes {got} for x + 1, x < 50 at x = 41")
            continue
        except Exception as e:  # noqa: BLE001 - reported, naming the renderer
            why = f"{type(e).__name__}: {str(e).strip().splitlines()[-1] if str(e).strip() else ''}"
        from tinygrad.runtime.support.c import DLL
        if name == "llvm" and "llvm" not in DLL._loaded_:
            why = ("libLLVM was not found: tinygrad 0.14.0 loads libLLVM-21 down to libLLVM-14 (Debian: libllvm14, "
                   f"which clang installs, or libllvm15) ({why})")
        failures.append(f"the {name} renderer cannot compile: {why}")
    return failures


if __name__ == "__main__":
    if sys.argv[1:] == ["--show"]:
        sys.exit(1 if show() else 0)
    if sys.argv[1:] == ["--check"]:
        problems = check()
        print("\n".join(problems) if problems else f"{', '.join(harness.RENDERERS)} compile and run a kernel")
        sys.exit(1 if problems else 0)
    sys.exit("usage: tinygrad_backend.py --show | --check\n  --show: the literalness check; --check: each renderer "
             "works on this machine (the backend itself runs in tinygrad_adapter.py)")
