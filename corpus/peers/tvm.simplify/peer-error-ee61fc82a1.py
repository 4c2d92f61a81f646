"""tileproof finding (peer-crash) against Apache TVM 0.27.0.post1, tvm.sym.Analyzer.simplify on int64
variables. The simplifier raises on this input: exits 1 while it does, 0 once it returns.
"""
import sys

from tvm import ir, tirx
from tvm.sym import Analyzer

c = lambda v: tirx.const(v, "int64")
r0 = tirx.Var("r0", "int64")
az = Analyzer()
az.bind(r0, ir.Range(c(-1), c(1)))  # -1 <= r0 <= 0
t1 = tirx.FloorDiv(r0, tirx.Select(tirx.Not(tirx.NE(r0, c(0))), c(1), c(0)))
source = [tirx.Select(tirx.NE(r0, c(0)), t1, c(0))]
print("input: ", " ; ".join(map(str, source)))
try:
    answer = [az.simplify(e) for e in source]
except Exception as e:  # the bug
    print(f"Analyzer.simplify raised {type(e).__name__}: {str(e).strip().splitlines()[-1]}")
    sys.exit(1)
print("answer:", " ; ".join(map(str, answer)))
print("no longer reproduces: the simplifier returned")
