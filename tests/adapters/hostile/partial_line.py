#!/usr/bin/env python3
"""Answers the first case with part of a line (no newline), then exits."""
import common
common.hello("partial-line")
for req in common.requests():
    common.out(b'{"id": %d, "trees": [["var", ' % req["id"])
    break
