#!/usr/bin/env python3
"""Answers every case with a line that is not UTF-8, then waits for the next request."""
import common
common.hello("not-utf8")
for req in common.requests():
    common.out(b"\xff\xfe\x00garbage\n")
