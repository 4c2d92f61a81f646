#!/usr/bin/env python3
"""Answers every case twice (a valid answer, then it again)."""
import json, common
common.hello("answers-twice")
for req in common.requests():
    line = (json.dumps({"id": req["id"], "trees": req["trees"]}) + "\n").encode()
    common.out(line + line)
