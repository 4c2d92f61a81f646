#!/usr/bin/env python3
"""At the first case, forks a child that keeps stdout open and sleeps, then exits without answering."""
import os, sys, time, common
common.hello("fork-holds-pipe")
for req in common.requests():
    pid = os.fork()
    if pid == 0:
        common.record_pid()
        time.sleep(3600)
        os._exit(0)
    sys.exit(3)
