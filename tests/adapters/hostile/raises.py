#!/usr/bin/env python3
"""Answers every case with `error`, as an adapter does whose peer raises
(on a literal division by zero, say): tileproof, not the adapter, decides
whether the source means anything (docs/protocol.md)."""
import json, common
common.hello("raises")
for req in common.requests():
    common.out((json.dumps({"id": req["id"], "error": "peer raised ZeroDivisionError: division by zero"})
                + "\n").encode())
