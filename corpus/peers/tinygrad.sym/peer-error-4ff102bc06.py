#!/usr/bin/env python3
"""tinygrad 0.14.0, `graph_rewrite(UOp.sink(*source), sym)`: a tileproof finding (class peer-crash; adapter --entry sym --vars variable).
Builds the input and prints tinygrad's answer; exits 1 while the simplifier raises, else 0."""
import sys
from tinygrad.uop.symbolic import sym
from tinygrad.uop.ops import UOp, graph_rewrite
from tinygrad.dtype import dtypes
c = lambda v: UOp.const(v, dtypes.bool if isinstance(v, bool) else dtypes.weakint)
r0 = UOp.variable("r0", 0, 1)
source = [(c(0) // r0)]
print("input:   ", *(e.render(simplify=False) for e in source))
try: answer = list(graph_rewrite(UOp.sink(*source), sym).src)
except Exception as e: sys.exit(print(f"graph_rewrite(UOp.sink(*source), sym) raises {type(e).__name__}: {e}") or 1)
print("tinygrad:", *(e.render(simplify=False) for e in answer))
print("the simplifier no longer raises")
