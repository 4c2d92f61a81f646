#!/usr/bin/env python3
"""A peer that answers with recorded answers, for tileproof's own tests.

    recorded.py PROFILE FILE...

Each FILE is a tileproof case file with `expr` and `expect` lines; a request
whose expressions are a file's `expr` lines is answered with its `expect`
lines (as text), any other request with its expressions unchanged. PROFILE
names the semantics profile of the hello:

    contract   int64, partial ops undefined, invalid compared anywhere
    tinygrad   unbounded, partial ops unspecified, invalid never compared
    tvm64      int64, no invalid
    tvm32      int32, no invalid

So `check --simplifier` and `replay --simplifier` can be compared on any
case file under any profile.
"""
import json
import sys

ALL_OPS = ["neg", "not", "add", "sub", "mul", "min", "max", "div", "rem", "floordiv", "mod", "ceildiv",
           "lt", "le", "eq", "ne", "and", "or", "xor", "where", "shl", "shr", "bitand"]
PROFILES = {
    "contract": {"ops": ALL_OPS, "invalid": True, "integers": "int64", "bool_vars": True},
    "tinygrad": {"ops": ALL_OPS, "invalid": True, "integers": "unbounded", "bool_vars": True,
                 "partial_ops": "unspecified", "input_language": {"invalid_compared": False}},
    "tvm64": {"ops": ALL_OPS, "invalid": False, "integers": "int64", "bool_vars": True},
    "tvm32": {"ops": ALL_OPS, "invalid": False, "integers": "int32", "bool_vars": True},
}

profile = sys.argv[1]
answers = {}
for path in sys.argv[2:]:
    exprs, expects = [], []
    with open(path) as f:
        for line in f:
            if line.startswith("expr "):
                exprs.append(line[5:].strip())
            elif line.startswith("expect "):
                expects.append(line[7:].strip())
    if exprs and len(exprs) == len(expects):
        answers[tuple(exprs)] = expects


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


send({"tileproof": 1, "name": f"recorded-{profile}", "version": "1.0", "profile": PROFILES[profile]})
for line in sys.stdin:
    req = json.loads(line)
    exprs = req["exprs"]
    send({"id": req["id"], "exprs": answers.get(tuple(exprs), exprs)})
