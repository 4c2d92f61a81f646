#!/usr/bin/env python3
"""tinygrad 0.14.0, `graph_rewrite(UOp.sink(*source), sym)`: a tileproof finding (class trap; adapter --entry sym --vars variable).
Builds the input and prints tinygrad's answer; compiles both literally (the harness: tinygrad's codegen minus its optimizer and
every symbolic pass) with DEV=CPU:X86, runs them at r0 = 0 in a child process; exits 1 while they differ."""
import json, os, signal, sys
from tinygrad.uop.symbolic import sym
# ---- tileproof's compile harness (adapters/tinygrad_harness.py, verbatim; why each pass: tinygrad_backend.py) ----
import itertools
from tinygrad import Device
from tinygrad.codegen import (UOp, UPat, Ops, dtypes, KernelInfo, ProgramInfo, PatternMatcher, graph_rewrite, Context, DISABLE_FAST_IDIV,
  pm_lower_index_dtype, pm_commit_weak, pm_cast_weak, get_simplifying_rewrite_patterns, get_late_rewrite_patterns, pm_dtype_decomps,
  pm_move_gates_from_index, pm_casted_consts, pm_split_ends, pm_add_control_flow, CFGContext, ISARenderer, IselContext, do_to_program)
from tinygrad.uop.symbolic import symbolic_simple, fold_const_alu
# of symbolic_simple (in tinygrad's pm_decomp) the rules codegen relies on: folding unary/binary ops of constants (decomps mint
# -c, c-1: unfolded they loop or render `--2l`) and cast(bool) -> != 0 (X86 makes a bool where an int16 one cast to bool)
pm_legalize = PatternMatcher([(p, f) for p, f in symbolic_simple.patterns if f is fold_const_alu and Ops.WHERE not in p.op] +
                             [(UPat.var("x").cast(dtypes.bool), lambda x: x.ne(0))])
RENDERERS = {"clang": "CLANG", "llvm": "LLVM", "x86": "X86"}  # DEV=CPU:<renderer>
class NotCompilable(Exception): pass
def split_gates(e):  # where(a, where(b, x, Invalid), Invalid) -> (a&b, x), where(a, Invalid, x) -> (!a, x), as symbolic_simple
  gate = None
  while e.op is Ops.WHERE and (e.src[1].is_invalid or e.src[2].is_invalid):
    if e.src[1].is_invalid and e.src[2].is_invalid: return None, None  # every lane masked: nothing is stored
    c, e = (e.src[0], e.src[1]) if e.src[2].is_invalid else (e.src[0].logical_not(), e.src[2])
    gate = c if gate is None else gate & c
  if e.is_invalid: return None, None
  if any(u.is_invalid for r in (e, gate) if r is not None for u in r.toposort()):
    raise NotCompilable("an Invalid under arithmetic: tinygrad compiles it only after pm_data_invalid moved the op under the gate")
  return gate, e
def kernel(variables, exprs):  # -> (sink or None, per expression None (all masked) or (value slot, flag slot or None))
  """Variable i is an int64 loaded from buffer i (a bool one != 0) cast to the index dtype: no pass knows its range. Each
  expression is stored to its own buffer; a gated one, and a flag, through a gated index: the gate masks the store."""
  subs, stores, outs, slot = {}, [], [], itertools.count(len(variables))
  for i, v in enumerate(variables):
    ld = UOp.param(i, dtypes.int64, (1,))[0].load()
    subs[v] = ld.ne(0) if v.dtype is dtypes.bool else ld.cast(dtypes.weakint)
  for gate, x in map(split_gates, exprs):
    if x is None: outs.append(None); continue
    gate, x = gate.substitute(subs) if gate is not None else None, x.substitute(subs)
    idx, out = UOp.const(0) if gate is None else UOp.const(0).valid(gate), next(slot)
    stores.append(UOp.param(out, dtypes.bool if x.dtype is dtypes.bool else dtypes.int64, (1,)).index(idx).store(x))
    if gate is not None: stores.append(UOp.param(flag:=next(slot), dtypes.bool, (1,)).index(idx).store(True))
    outs.append((out, flag if gate is not None else None))
  return (UOp.group(*stores).sink(arg=KernelInfo("tileproof")) if stores else None), outs
def lower(sink, ren):  # full_rewrite_to_sink without its optimizer and its sym/symbolic/symbolic_simple (but pm_legalize)
  early = pm_legalize + get_simplifying_rewrite_patterns(ops:=tuple(ren.code_for_op))
  late = early + get_late_rewrite_patterns(ops, bool(DISABLE_FAST_IDIV))
  sink = graph_rewrite(sink, pm_lower_index_dtype, ctx={}, name="lower all index dtypes")
  sink = graph_rewrite(sink, early, name="early decompositions")
  sink = graph_rewrite(sink, pm_dtype_decomps+pm_commit_weak, ctx=(set(), ren), name="decomp dtypes")
  sink = graph_rewrite(sink, late, ctx=ren, name="late decompositions")
  sink = graph_rewrite(sink, pm_move_gates_from_index, name="move gates from index")
  extra = ren.extra_matcher or PatternMatcher([])  # the renderer's own legalization
  sink = graph_rewrite(sink, pm_commit_weak+pm_cast_weak+late+extra+pm_split_ends, ctx=ren, name="final rewrite")
  sink = graph_rewrite(sink, pm_casted_consts, name="casted consts", walk=True)
  return graph_rewrite(sink, pm_add_control_flow, ctx=CFGContext(sink), name="add control flow", bottom_up=True)
def to_program(sink, ren):  # do_to_program's instruction selection for ISA renderers, then its linearizer, renderer, compiler
  info = ProgramInfo.from_sink(sink, ren.target)
  if isinstance(ren, ISARenderer):
    sink = graph_rewrite(sink, ren.pre_isel_matcher, ctx=itertools.count(-1, -1), name="pre instruction selection", bottom_up=True)
    sink = graph_rewrite(sink, ren.isel_matcher, ctx=IselContext(sink), name="instruction selection", bottom_up=True)
  return do_to_program(UOp(Ops.PROGRAM, src=(sink,), arg=info), ren)
def compile_kernel(variables, exprs, name):  # -> (run, program): run(point) gives an int, bool or "invalid" per expression
  sink, outs = kernel(variables, exprs)
  with Context(DEV=f"CPU:{RENDERERS[name]}", CACHELEVEL=0):  # CACHELEVEL=0: no on-disk compile cache
    prg = to_program(lower(sink, ren:=Device["CPU"].renderer), ren) if sink is not None else None
    fn = Device["CPU"].runtime(prg.to_elf()) if prg is not None else None
    # the kernel's arguments, as tinygrad's runtime passes them: its ProgramInfo's globals (buffer param slots), in order
    bufs = {s: Device["CPU"].allocator.alloc(8) for s in (prg.arg.globals if prg is not None else ())}
  mv = lambda s, fmt="q": bufs[s].cpu_view().view(fmt=fmt)
  def run(point):
    for s in bufs: mv(s)[0] = int(point[s]) if s < len(variables) else 0
    if fn is not None: fn(*bufs.values())
    return ["invalid" if o is None or o[1] is not None and not mv(o[1], "?")[0] else mv(o[0], "?" if e.dtype is dtypes.bool else "q")[0]
            for e, o in zip(exprs, outs)]
  return run, prg
# ---- the case ----
c = lambda v: UOp.const(v, dtypes.bool if isinstance(v, bool) else dtypes.weakint)
r0 = UOp.variable("r0", 0, 1)
source = [r0.div(r0.ne(c(0)).where(r0, UOp.invalid()), rounding_mode="trunc")]
print("input:   ", *(e.render(simplify=False) for e in source))
try: answer = list(graph_rewrite(UOp.sink(*source), sym).src)
except Exception as e: sys.exit(print(f"graph_rewrite(UOp.sink(*source), sym) raises {type(e).__name__}: {e}") or 1)
print("tinygrad:", *(e.render(simplify=False) for e in answer))
def outcome(exprs):  # compile and run in a child process: a trap is printed, not suffered
  r, w = os.pipe()
  if (pid:=os.fork()) == 0:
    try: res = {"values": compile_kernel([r0], exprs, "x86")[0]([0])}
    except Exception as e: res = {"compile error": f"{type(e).__name__}: {e}"}
    os.write(w, json.dumps(res).encode()); os._exit(0)
  os.close(w); data = b"".join(iter(lambda: os.read(r, 1 << 16), b"")); status = os.waitpid(pid, 0)[1]
  return json.loads(data) if data else {"trap": signal.Signals(os.WTERMSIG(status)).name}
src = {'values': ['invalid']}
print("(the input has an Invalid under arithmetic, which tinygrad never compiles as written: its values below are tileproof's)")
ans = outcome(answer)
print(f"at r0 = 0 on DEV=CPU:X86:\n  input:    {src}\n  tinygrad: {ans}")
sys.exit(int(src != ans))
