#!/usr/bin/env python3
"""A toy tileproof peer (protocol 1): folds x + 0, 0 + x, x * 1, 1 * x. Copy it to start an adapter."""
import json, sys

OPS = ["neg", "not", "add", "sub", "mul", "min", "max", "div", "rem", "floordiv", "mod", "ceildiv",
       "lt", "le", "eq", "ne", "and", "or", "xor", "where"]

class Unsupported(Exception): pass

def simplify(t):
    if t[0] in ("var", "const", "bool", "invalid"):
        return t
    if t[0] not in OPS: raise Unsupported(f"op {t[0]} is not in the profile")
    t = [t[0]] + [simplify(a) for a in t[1:]]      # a KeyError/TypeError here becomes an `error` answer
    for unit, op in ((0, "add"), (1, "mul")):
        if t[0] == op and t[2] == ["const", unit]: return t[1]
        if t[0] == op and t[1] == ["const", unit]: return t[2]
    return t

def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n"); sys.stdout.flush()

send({"tileproof": 1, "name": "example", "version": "1.0",
      "profile": {"ops": OPS, "invalid": True, "integers": "unbounded", "bool_vars": True}})
for line in sys.stdin:
    if not line.strip(): continue
    rid = None
    try:
        req = json.loads(line); rid = req.get("id")
        send({"id": rid, "trees": [simplify(t) for t in req["trees"]]})
    except Unsupported as e:
        send({"id": rid, "unsupported": str(e)})
    except Exception as e:                          # never crash: a malformed request gets an `error`
        send({"id": rid, "error": f"{type(e).__name__}: {e}"})
