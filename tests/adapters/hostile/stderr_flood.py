#!/usr/bin/env python3
"""Floods stderr (megabytes a second, no newline) from a thread, and answers every case with an `error`:
a finding that keeps the adapter running, so its stderr never stops."""
import json, sys, threading, common

def flood():
    chunk = b"x" * 65536
    while True:
        sys.stderr.buffer.write(chunk)
        sys.stderr.buffer.flush()

common.hello("stderr-flood")
threading.Thread(target=flood, daemon=True).start()
for req in common.requests():
    common.out((json.dumps({"id": req["id"], "error": "flooding stderr"}) + "\n").encode())
