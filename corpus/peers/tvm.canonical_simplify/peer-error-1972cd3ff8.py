"""tileproof finding (peer-crash) against Apache TVM 0.27.0.post1, tvm.sym.Analyzer.canonical_simplify
on int64 variables. The simplifier raises on this input: exits 1 while it does, 0 once it returns.
"""
import sys

from tvm import ir, tirx
from tvm.sym import Analyzer

c = lambda v: tirx.const(v, "int64")
az = Analyzer()
t1 = tirx.LE(c(-9223372036854775794), tirx.Sub(c(15), tirx.BitwiseAnd(c(0), c(0))))
source = [tirx.Select(t1, c(0), c(0))]
print("input: ", " ; ".join(map(str, source)))
try:
    answer = [az.canonical_simplify(e) for e in source]
except Exception as e:  # the bug
    print(f"Analyzer.canonical_simplify raised {type(e).__name__}: {str(e).strip().splitlines()[-1]}")
    sys.exit(1)
print("answer:", " ; ".join(map(str, answer)))
print("no longer reproduces: the simplifier returned")
