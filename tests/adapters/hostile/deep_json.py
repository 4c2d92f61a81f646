#!/usr/bin/env python3
"""Answers every case with a JSON array nested 200,000 deep."""
import common
common.hello("deep-json")
for req in common.requests():
    n = 200_000
    common.out(b'{"id": %d, "trees": [' % req["id"] + b"[" * n + b"]" * n + b"]}\n")
