#!/usr/bin/env python3
"""Closes its stdout at the first case but keeps running (and reading)."""
import os, sys, common
common.hello("close-stdout")
for req in common.requests():
    os.close(1)
    for _ in sys.stdin.buffer:
        pass
    break
