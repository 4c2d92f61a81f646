"""Times TVM's `tvm.sym.Analyzer.simplify` on tileproof's peer-protocol
requests, for `tileproof bench`'s "simplify per case, engine vs TVM".

Usage: python bench/tvm_simplify.py REQUESTS [--dtype int32|int64] [--min-seconds S]

REQUESTS holds one request per line (docs/protocol.md: `id`, `vars`,
`trees`), as `tileproof bench` writes them from tests/peers/*.cases. Each
case's TIR is built with the adapter's own builder (adapters/tvm_adapter.py,
`analyzer_and_exprs`: the variables bound to their ranges in a fresh
Analyzer, the expressions built once); then `Analyzer.simplify` is called on
its expressions again and again, each round (every expression of the case
simplified once) timed as a single call, at least 15 rounds (as the engine's
runs) and --min-seconds, and the median round is the case's time: the way
`tileproof bench tvm` times the engine. Building is not timed, as the
engine's parsing is timed apart from its simplifying. One JSON line per case on standard
output: `{"id": N, "seconds": T}`, or `{"id": N, "unsupported": WHY}` for a
case the adapter does not take.
"""

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "adapters"))

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("requests")
ap.add_argument("--dtype", choices=["int32", "int64"], default="int32")
ap.add_argument("--min-seconds", type=float, default=0.002)
ARGS = ap.parse_args()

# The adapter reads its own arguments when imported: the simplify entry
# point at the suites' dtype.
sys.argv = ["tvm_adapter.py", "--entry", "simplify", "--dtype", ARGS.dtype]
import tileproof_peer as tp  # noqa: E402
import tvm_adapter  # noqa: E402

OUT = tvm_adapter.OUT


def time_case(obj):
    case = tp.Case(obj)
    az, _, exprs = tvm_adapter.analyzer_and_exprs(case)
    times, start = [], time.perf_counter()
    while len(times) < 15 or time.perf_counter() - start < ARGS.min_seconds:
        t = time.perf_counter()
        for e in exprs:
            az.simplify(e)
        times.append(time.perf_counter() - t)
    times.sort()
    return times[len(times) // 2]


with open(ARGS.requests, encoding="utf-8") as f:
    for line in f:
        if not line.strip():
            continue
        obj = json.loads(line)
        try:
            tp.send(OUT, {"id": obj["id"], "seconds": time_case(obj)})
        except tp.Unsupported as e:
            tp.send(OUT, {"id": obj["id"], "unsupported": str(e)})
