#!/usr/bin/env python3
"""Answers every case with an expression of 100,000 nested parentheses."""
import json, common
common.hello("deep-parens")
for req in common.requests():
    n = 100_000
    exprs = ["(" * n + "1" + ")" * n for _ in req["exprs"]]
    common.out((json.dumps({"id": req["id"], "exprs": exprs}) + "\n").encode())
