#!/usr/bin/env python3
"""Answers every case with `1 + 1 + ... + 1` for each expression: 30 million terms (120 MB) unless argv[1] says."""
import sys, common
common.hello("huge-answer")
terms = int(sys.argv[1]) if len(sys.argv) > 1 else 30_000_000
body = b"1" + b" + 1" * (terms - 1)
for req in common.requests():
    exprs = b", ".join(b'"' + body + b'"' for _ in req["exprs"])
    common.out(b'{"id": %d, "exprs": [' % req["id"] + exprs + b"]}\n")
