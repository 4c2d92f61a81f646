#!/usr/bin/env python3
"""Answers every case with a tree nested 200,000 deep (`neg` of `neg` of ... of 1): JSON well formed and a tree at every level, so that only the nesting is wrong."""
import common
common.hello("deep-json")
for req in common.requests():
    n = 200_000
    common.out(b'{"id": %d, "trees": [' % req["id"] + b'["neg", ' * n + b'["const", 1]' + b"]" * n + b"]}\n")
