"""Shared by the hostile adapters: a valid hello, the request loop, and the
pid file the tests use to check that nothing survives a campaign."""
import json, os, sys

OPS = ["neg", "not", "add", "sub", "mul", "min", "max", "div", "rem", "floordiv", "mod", "ceildiv",
       "lt", "le", "eq", "ne", "and", "or", "xor", "where"]


def record_pid(pid=None):
    """Appends this process's pid (or `pid`) to $HOSTILE_PIDS, when set."""
    path = os.environ.get("HOSTILE_PIDS")
    if path:
        with open(path, "a") as f:
            f.write(f"{pid or os.getpid()}\n")


def out(data):
    """Writes bytes to stdout, unbuffered."""
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def hello(name):
    record_pid()
    out((json.dumps({"tileproof": 1, "name": "hostile-" + name, "version": "1.0",
                     "profile": {"ops": OPS, "invalid": True, "integers": "unbounded",
                                 "bool_vars": True}}) + "\n").encode())


def requests():
    """Yields each request, parsed."""
    for line in sys.stdin.buffer:
        if line.strip():
            yield json.loads(line)
