#!/usr/bin/env python3
"""The path of one finding: every function of the `fuzz` crate and the
protocol crate (`tileproof_adapter`) a campaign enters, from the campaign to
the finding's corpus file, counted by gdb on a build without optimization.

    cargo build -p tileproof   # with CARGO_PROFILE_DEV_OPT_LEVEL=0: nothing inlined
    python3 bench/finding_path.py [--list] [--modules] [--second FN] \\
        -- target/debug/tileproof fuzz --simplifier '...' --seed 3 \\
           --shard 850/3000 --cases 1 --jobs 1 --validate-every 0 --corpus /tmp/c

How it counts (issue 47's measure, the same at any commit):
- a breakpoint at every function of the two crates is armed when the
  campaign starts (`--arm`, default `fuzz::campaign::run_subject`); each
  records its first entry and is disabled;
- the path ends with the first entry of `--until` (default
  `fuzz::blame::save_seed`, the last step of writing a finding);
- closures count as the function that holds them; derived impls (Clone,
  Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default, serde) and drop glue
  are left out, and so are thread-locals' initializers;
- with `--second FN`, what is first entered during the second call of FN is
  left out (a case with two findings prepared one after the other: the path
  of the first);
- an impl's methods belong to the module of the impl's own type or trait.

Run by gdb (`gdb -x finding_path.py`), the same file is the tracer: it reads
its settings from the environment the driver sets.
"""
import collections
import os
import re
import subprocess
import sys
import tempfile

OURS = re.compile(r"(fuzz|tileproof_adapter)::")
DERIVED = ("core::clone::Clone", "core::fmt::Debug", "core::cmp::PartialEq",
           "core::cmp::Eq", "core::hash::Hash", "core::cmp::PartialOrd",
           "core::cmp::Ord", "core::default::Default", "serde::", "serde_core::")


def tracer():
    """Inside gdb: arm at FP_ARM, record each function's first entry."""
    import gdb  # noqa: F401 (only inside gdb)
    out = open(os.environ["FP_OUT"], "w")
    syms = [line.rstrip("\n").split("\t") for line in open(os.environ["FP_SYMS"])]
    arm_at = os.environ["FP_ARM"]

    def note(text):
        out.write(text + "\n")
        out.flush()

    class First(gdb.Breakpoint):
        def __init__(self, addr, name):
            super().__init__("*0x%x" % addr, internal=True)
            self.name = name
            self.silent = True

        def stop(self):
            note(self.name)
            self.enabled = False
            return False

    class Leave(gdb.FinishBreakpoint):
        def __init__(self, n):
            super().__init__(gdb.newest_frame(), internal=True)
            self.n = n

        def stop(self):
            note("#leave %d" % self.n)
            return False

        def out_of_scope(self):
            note("#leave %d" % self.n)

    calls = [0]

    class Mark(gdb.Breakpoint):
        def stop(self):
            calls[0] += 1
            note("#enter %d" % calls[0])
            Leave(calls[0])
            return False

    class Arm(gdb.Breakpoint):
        armed = False

        def stop(self):
            if not Arm.armed:
                Arm.armed = True
                # Position-independent: the symbol table's addresses are
                # offsets; the arming function's own address gives the base.
                here = int(gdb.selected_frame().function().value().address)
                base = here - next(int(a, 16) for a, n in syms if n == arm_at)
                for a, n in syms:
                    try:
                        First(int(a, 16) + base, n)
                    except gdb.error:
                        pass
                note("#armed")
            return False

    gdb.execute("set pagination off")
    gdb.execute("set confirm off")
    gdb.execute("set print thread-events off")
    gdb.execute("handle SIGPIPE nostop noprint pass")
    Arm(arm_at, internal=True)
    if os.environ.get("FP_SECOND"):
        Mark(os.environ["FP_SECOND"], internal=True)
    gdb.execute("run")
    out.close()


def symbols(binary):
    """Address and name (hash dropped) of every function of the two crates."""
    nm = subprocess.run(["nm", "-C", "--defined-only", binary],
                        capture_output=True, text=True, check=True).stdout
    rows = []
    for line in nm.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[1] in ("t", "T"):
            name = re.sub(r"::h[0-9a-f]{16}$", "", parts[2])
            if re.search(r"(^|<| as )" + OURS.pattern, name):
                rows.append((parts[0], name))
    return rows


def ours(name):
    if OURS.match(name):
        return True
    m = re.match(r"^<(.*) as (.*)>::", name)
    return bool(m) and bool(OURS.match(m.group(1)) or OURS.match(m.group(2)))


def module(name):
    m = re.match(r"^<(.*?) as (.*?)>::", name)
    path = (m.group(1) if OURS.match(m.group(1)) else m.group(2)) if m else name
    # `a::b::<impl T for U>::f` is a method of module `a::b`
    parts = re.sub(r"::<impl .*>(?=::)", "", path).split("::")
    if not m:
        parts = parts[:-1]
    upper = [i for i, p in enumerate(parts) if p[:1].isupper()]
    return "::".join(parts[:upper[0]] if upper else parts)


def path(hits, until, skip_second):
    """The distinct functions of the path, in first-entry order."""
    order, seen, skipping = [], set(), False
    for line in hits:
        if line.startswith("#enter 2"):
            skipping = skip_second
        elif line.startswith("#leave 2"):
            skipping = False
        if skipping or line.startswith("#"):
            continue
        name = re.sub(r"::\{\{closure\}\}.*$", "", line)
        # `{{constant}}`: a thread-local's initializer, not a function written here
        if not ours(name) or any(d in name for d in DERIVED) or "{{constant}}" in name:
            continue
        if name not in seen:
            seen.add(name)
            order.append(name)
        if name == until:
            break
    return order


def main(argv):
    if "--" not in argv:
        print(__doc__, file=sys.stderr)
        return 2
    opts, cmd = argv[:argv.index("--")], argv[argv.index("--") + 1:]

    def opt(flag, default):
        return opts[opts.index(flag) + 1] if flag in opts else default

    arm = opt("--arm", "fuzz::campaign::run_subject")
    until = opt("--until", "fuzz::blame::save_seed")
    second = opt("--second", "")
    with tempfile.TemporaryDirectory() as tmp:
        syms = os.path.join(tmp, "syms.tsv")
        with open(syms, "w") as f:
            f.writelines(f"{a}\t{n}\n" for a, n in symbols(cmd[0]))
        hits = os.path.join(tmp, "hits.txt")
        env = dict(os.environ, FP_OUT=hits, FP_SYMS=syms, FP_ARM=arm, FP_SECOND=second)
        run = subprocess.run(["gdb", "-batch", "-x", os.path.abspath(__file__), "--args"] + cmd,
                             env=env, capture_output=True, text=True)
        lines = open(hits).read().splitlines() if os.path.exists(hits) else []
    if "#armed" not in lines:
        sys.stderr.write(run.stdout[-2000:] + run.stderr[-2000:])
        print(f"finding_path: {arm} was never entered", file=sys.stderr)
        return 1
    order = path(lines, until, bool(second))
    if until not in order:
        print(f"finding_path: the path never reached {until} (no finding written?)",
              file=sys.stderr)
        return 1
    mods = collections.Counter(module(n) for n in order)
    print(f"{len(mods)} modules / {len(order)} functions")
    if "--modules" in opts:
        for m, c in sorted(mods.items(), key=lambda mc: (-mc[1], mc[0])):
            print(f"{c:4}  {m}")
    if "--list" in opts:
        print("\n".join(order))
    return 0


if __name__ == "__main__":
    try:
        import gdb  # noqa: F401
        tracer()
    except ImportError:
        sys.exit(main(sys.argv[1:]))
