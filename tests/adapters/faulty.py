#!/usr/bin/env python3
"""A deliberately faulty tileproof peer, for tileproof's own tests.

    faulty.py rem-as-mod   answers with every truncating `%` turned into a floor `mod`
                           (unsound where the operands have different signs)
    faulty.py hang         never answers a case that has a multiplication
    faulty.py crash        exits on a case that has a floor division
    faulty.py garbage      answers a case that has a `min` with a line that is not JSON
    faulty.py raises       answers `error` on a case that has a floor division, as an adapter
                           does whose peer raises (tileproof decides whether that is a finding)

Otherwise it answers every case with the expressions unchanged.
"""
import json, sys, time

MODE = sys.argv[1]
OPS = ["neg", "not", "add", "sub", "mul", "min", "max", "div", "rem", "floordiv", "mod", "ceildiv",
       "lt", "le", "eq", "ne", "and", "or", "xor", "where"]

def has(t, op):
    return isinstance(t, list) and (t[0] == op or any(has(a, op) for a in t[1:]))

def rem_as_mod(t):
    if not isinstance(t, list) or t[0] in ("var", "const", "bool", "invalid"):
        return t
    return ["mod" if t[0] == "rem" else t[0]] + [rem_as_mod(a) for a in t[1:]]

def send(line):
    sys.stdout.write(line + "\n"); sys.stdout.flush()

send(json.dumps({"tileproof": 1, "name": "faulty-" + MODE, "version": "1.0",
                 "profile": {"ops": OPS, "invalid": True, "integers": "unbounded", "bool_vars": True}}))
for line in sys.stdin:
    req = json.loads(line)
    trees = req["trees"]
    if MODE == "hang" and any(has(t, "mul") for t in trees):
        time.sleep(3600)
    if MODE == "crash" and any(has(t, "floordiv") for t in trees):
        sys.exit(3)
    if MODE == "raises" and any(has(t, "floordiv") for t in trees):
        send(json.dumps({"id": req["id"], "error": "peer raised ZeroDivisionError: division by zero"}))
        continue
    if MODE == "garbage" and any(has(t, "min") for t in trees):
        send("this is not an answer")
        continue
    if MODE == "rem-as-mod":
        trees = [rem_as_mod(t) for t in trees]
    send(json.dumps({"id": req["id"], "trees": trees}))
