#!/usr/bin/env python3
"""Sleeps forever after the hello, reading nothing."""
import time, common
common.hello("sleeps")
while True:
    time.sleep(3600)
