#!/usr/bin/env python3
"""Answers every case with the id of another request."""
import json, common
common.hello("wrong-id")
for req in common.requests():
    common.out((json.dumps({"id": req["id"] + 1000, "trees": req["trees"]}) + "\n").encode())
