"""Shared plumbing for tileproof peer adapters (protocol version 1).

An adapter imports this module, builds its hello, and calls `serve` with a
function that simplifies one case. This module owns everything that is the
same for every peer:

- stdout hygiene: the protocol stream is a private copy of fd 1, and fd 1 is
  pointed at stderr, so nothing the peer prints (Python `print`, C++ logging)
  can corrupt the stream;
- reading and validating requests (`Case`), with tileproof's typing rules;
- type-checking the adapter's answer trees against the inputs;
- turning exceptions into `unsupported` / `error` answers: a peer that
  raises gets `error`, even on a case whose source means nothing at any point
  (a literal division by zero): tileproof decides that with its own
  semantics and does not count such an `error` as a finding;
- the optional capabilities' requests: `run`/`reproducer` (a `Backend`),
  `rules`/`instances`/`apply` (a `Rules`), `bounds` (a `Bounds`: the adapter
  gives the peer's bounds of one node, and optionally its op, this module
  walks the trees in pre-order and writes them as the protocol's 64-bit
  `[lo, hi]`), and `stage` (`serve`'s `stages=`: the entry point's
  pipeline).

Stdlib only; see docs/protocol.md for the protocol itself.
"""

import json
import os
import sys
import traceback

PROTOCOL = 1

# tileproof op name -> (operand types, result type); "int" is `index`.
# `where` is typed separately (bool, T, T) -> T.
OP_TYPES = {
    "neg": (("int",), "int"),
    "not": (("bool",), "bool"),
    "add": (("int", "int"), "int"),
    "sub": (("int", "int"), "int"),
    "mul": (("int", "int"), "int"),
    "min": (("int", "int"), "int"),
    "max": (("int", "int"), "int"),
    "div": (("int", "int"), "int"),
    "rem": (("int", "int"), "int"),
    "floordiv": (("int", "int"), "int"),
    "mod": (("int", "int"), "int"),
    "ceildiv": (("int", "int"), "int"),
    "shl": (("int", "int"), "int"),
    "shr": (("int", "int"), "int"),
    "bitand": (("int", "int"), "int"),
    "lt": (("int", "int"), "bool"),
    "le": (("int", "int"), "bool"),
    "eq": (("int", "int"), "bool"),
    "ne": (("int", "int"), "bool"),
    "and": (("bool", "bool"), "bool"),
    "or": (("bool", "bool"), "bool"),
    "xor": (("bool", "bool"), "bool"),
}
ALL_OPS = list(OP_TYPES) + ["where"]

I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1


class Simplified:
    """A simplification with the peer's rules that fired on it, by the
    names its `rules` request lists (`{name: count}`): what a campaign
    counts to say which of the peer's rules it reached; for an `apply`,
    optionally the rule's patterns that made the rewrite (`RULE/PATTERN`
    names, each a rule `apply` takes): a wrong one is blamed alone."""

    def __init__(self, trees, fired, patterns=None):
        self.trees, self.fired, self.patterns = trees, fired, patterns


class Unsupported(Exception):
    """The peer cannot take this case, or its result has no tileproof form."""


class BadRequest(Exception):
    """The request does not follow the protocol."""


class Declined(Exception):
    """A rule applied alone does not rewrite this instance: its pattern does
    not match it, or its function returned None (an `apply` request's
    `declined` answer)."""


def claim_stdout():
    """Returns a private, line-buffered stream on the real stdout and points
    fd 1 (and sys.stdout) at stderr. Call before importing the peer."""
    sys.stdout.flush()
    out = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out


def send(out, obj):
    out.write(json.dumps(obj, separators=(",", ":")) + "\n")
    out.flush()


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


class Var:
    __slots__ = ("name", "dtype", "lo", "hi")

    def __init__(self, name, dtype, lo, hi):
        self.name, self.dtype, self.lo, self.hi = name, dtype, lo, hi


class Case:
    """One validated request: `vars` (list of Var), `trees`, and the dtype
    ("int" or "bool") of each tree in `types`."""

    def __init__(self, obj):
        if not isinstance(obj, dict):
            raise BadRequest("a request is a JSON object")
        self.id = obj.get("id")
        if not is_int(self.id):
            raise BadRequest("`id` must be an integer")
        vs = obj.get("vars")
        if not isinstance(vs, list):
            raise BadRequest("`vars` must be a list")
        self.vars, self.var = [], {}
        for v in vs:
            if not isinstance(v, dict) or not isinstance(v.get("name"), str):
                raise BadRequest("each var needs a string `name`")
            name, dtype = v["name"], v.get("dtype", "index")
            lo, hi = v.get("lo", 0 if dtype == "bool" else None), v.get("hi", 1 if dtype == "bool" else None)
            if not is_int(lo) or not is_int(hi):
                raise BadRequest(f"var `{name}`: `lo` and `hi` must be integers")
            if lo > hi:
                raise BadRequest(f"var `{name}`: empty range [{lo}, {hi}]")
            if name in self.var:
                raise BadRequest(f"var `{name}` declared twice")
            if dtype == "bool":
                if not (0 <= lo <= hi <= 1):
                    raise BadRequest(f"bool var `{name}`: bounds must lie in [0, 1]")
            elif dtype != "index":
                # i32/i64 variables exist in tileproof but are not part of
                # protocol version 1's peer profile.
                raise Unsupported(f"var `{name}` has dtype `{dtype}` (only index and bool are supported)")
            var = Var(name, dtype, lo, hi)
            self.vars.append(var)
            self.var[name] = var
        trees = obj.get("trees")
        if not isinstance(trees, list):
            raise BadRequest("`trees` must be a list (one tree per expression)")
        exprs = obj.get("exprs")
        if exprs is not None and (not isinstance(exprs, list) or len(exprs) != len(trees)):
            raise BadRequest("`exprs` and `trees` must have the same length")
        self.exprs = exprs
        self.trees = trees
        self.types = [type_of(t, self.var) for t in trees]


def type_of(tree, var, ops=None, types=None):
    """Checks a tree against tileproof's typing rules; returns "int" or
    "bool". Raises BadRequest for a malformed tree and Unsupported for an op
    name that is not tileproof's (or, with `ops`, not in that set). With
    `types` (a dict), also records every node's type by `id` of the node.
    Iterative, so that deep trees cannot overflow Python's stack."""
    # post-order walk with an explicit stack: (node, visited)
    stack, out = [(tree, False)], []
    while stack:
        node, seen = stack.pop()
        if not isinstance(node, list) or not node or not isinstance(node[0], str):
            raise BadRequest(f"a tree node is a non-empty list starting with its op name, got {json.dumps(node)[:80]}")
        op, args = node[0], node[1:]
        if op in LEAVES:
            if op == "var":
                if len(args) != 1 or args[0] not in var:
                    raise BadRequest(f"unknown variable in {json.dumps(node)[:80]}")
                out.append("bool" if var[args[0]].dtype == "bool" else "int")
            elif op == "const":
                if len(args) != 1 or not is_int(args[0]):
                    raise BadRequest(f"`const` takes one integer, got {json.dumps(node)[:80]}")
                if not I64_MIN <= args[0] <= I64_MAX:
                    raise BadRequest(f"constant {args[0]} does not fit i64")
                out.append("int")
            elif op == "bool":
                if len(args) != 1 or not isinstance(args[0], bool):
                    raise BadRequest(f"`bool` takes true or false, got {json.dumps(node)[:80]}")
                out.append("bool")
            else:
                if args:
                    raise BadRequest("`invalid` takes no operands")
                out.append("int")
            if types is not None:
                types[id(node)] = out[-1]
            continue
        if op not in OP_TYPES and op != "where":
            raise Unsupported(f"op `{op}` is not a protocol-1 op")
        if ops is not None and op not in ops:
            raise Unsupported(f"op `{op}` is not in this peer's profile")
        want = 3 if op == "where" else len(OP_TYPES[op][0])
        if len(args) != want:
            raise BadRequest(f"`{op}` takes {want} operand(s), got {len(args)}")
        if not seen:
            stack.append((node, True))
            for a in reversed(args):
                stack.append((a, False))
            continue
        got = out[len(out) - want:]
        del out[len(out) - want:]
        if op == "where":
            if got[0] != "bool" or got[1] != got[2]:
                raise BadRequest(f"`where` needs (bool, T, T), got ({', '.join(got)})")
            out.append(got[1])
        else:
            need, res = OP_TYPES[op]
            if tuple(got) != need:
                raise BadRequest(f"`{op}` needs ({', '.join(need)}), got ({', '.join(got)})")
            out.append(res)
        if types is not None:
            types[id(node)] = out[-1]
    return out[0]


LEAVES = ("var", "const", "bool", "invalid")


def fold(tree, leaf, node, built=None):
    """Builds a peer's expression from a (type-checked) tree bottom-up:
    `leaf(t)` for a `var`/`const`/`bool`/`invalid` node, `node(op, args)`
    for the others, with the operands already built. With `built` (a dict),
    also records what each node of the tree built, by `id` of the node: the
    peer's object of every subtree, whose bounds a `bounds` answer gives.
    Iterative, so that deep trees cannot overflow Python's stack."""
    stack, out = [(tree, False)], []
    while stack:
        t, seen = stack.pop()
        if t[0] in LEAVES:
            out.append(leaf(t))
        elif not seen:
            stack.append((t, True))
            stack.extend((a, False) for a in reversed(t[1:]))
            continue
        else:
            n = len(t) - 1
            args = out[len(out) - n:]
            del out[len(out) - n:]
            out.append(node(t[0], args))
        if built is not None:
            built[id(t)] = out[-1]
    return out[0]


def preorder(tree):
    """The nodes of `tree` in pre-order (a node, then its operands left to
    right), a repeated subtree once per occurrence: the order of a `bounds`
    answer (docs/protocol.md, section 7). Iterative."""
    stack, out = [tree], []
    while stack:
        t = stack.pop()
        out.append(t)
        if t[0] not in LEAVES:
            stack.extend(reversed(t[1:]))
    return out


def check_const(v):
    """An integer constant of a peer's result must fit tileproof's i64."""
    if not I64_MIN <= v <= I64_MAX:
        raise Unsupported(f"the result has the constant {v}, outside i64")
    return ["const", v]


# ---- what the peer raises --------------------------------------------------

class _PeerRaised(Exception):
    """The peer raised: an `error` answer. tileproof, not the adapter, then
    decides whether the source means anything (docs/protocol.md, "How
    tileproof treats each answer"): one copy of its semantics, in Rust."""


def _call_peer(call):
    """`call()`, with what the peer raises turned into _PeerRaised."""
    try:
        return call()
    except (Unsupported, BadRequest, Declined):
        raise
    except RecursionError:
        raise Unsupported("the case is too deep for the adapter's recursion limit")
    except Exception as e:  # the peer raised
        what = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
        traceback.print_exc(file=sys.stderr)
        site = _peer_frame(e)
        raise _PeerRaised(f"peer raised {what}" + (f" (at {site})" if site else ""))


def _peer_frame(e):
    """The innermost frame of the traceback outside this SDK and the
    adapters (the peer's own code: `tinygrad/uop/ops.py:512 in divides`),
    its path from the package directory on: tileproof files a crash under
    its site, whatever input reaches it."""
    here = os.path.dirname(os.path.abspath(__file__))
    site = None
    for frame in traceback.extract_tb(e.__traceback__):
        path = os.path.abspath(frame.filename)
        if path.startswith(here + os.sep):
            continue
        parts = path.split(os.sep)
        # From the package directory on (below site-packages, or the last
        # three parts of another path).
        if "site-packages" in parts:
            parts = parts[parts.index("site-packages") + 1:]
        else:
            parts = parts[-3:]
        site = f"{'/'.join(parts)}:{frame.lineno} in {frame.name}"
    return site


# ---- the backend: run and reproducer requests ----------------------------------

class CompileError(Exception):
    """The peer's compiler rejected the expressions (a `compile_error`)."""


class Backend:
    """What an adapter implements to offer `run` and `reproducer` requests
    (docs/protocol.md, section 5). `names` are the backends it offers (the
    hello's `backends`).

    - `compile(case, name)` builds the case's trees in the peer's IR
      literally and compiles them with backend `name`; raises CompileError
      when the peer's compiler rejects them, Unsupported when this backend
      cannot compile them as written. Runs in a child process.
    - `run(kernel, points)` evaluates the compiled kernel at each point (a
      tuple of variable values in the case's order) and returns one list of
      values per point: an int, a bool, or INVALID for a masked lane. Runs in
      a child process: a trap kills the child, not the adapter.
    - `reproducer(case, name, point, expected, klass)` returns the text of a
      standalone script (section 5 of docs/protocol.md), or a `Script`
      when files are to be kept beside it.
    - `bounds_reproducer(case, name, point, klass)` (optional) returns the
      script of an `unsound-bounds` finding (section 7): it shows a node
      whose value compiled with backend `name` at `point` lies outside the
      bounds the peer's analysis gives it. Without it, such a request is
      answered `unsupported`.
    - `prepare(name)` (optional) runs in the adapter process before the
      children of a `run` request are forked: it loads once what every child
      would otherwise load again (a compiler library, a device). It must not
      run compiled code (a trap would kill the adapter), must be cheap when
      called again, and may raise CompileError or Unsupported like `compile`.
    """

    names = ()

    def prepare(self, name):
        pass

    def compile(self, case, name):
        raise NotImplementedError

    def run(self, kernel, points):
        raise NotImplementedError

    def reproducer(self, case, name, point, expected, klass):
        raise Unsupported("this adapter writes no reproducers")

    def bounds_reproducer(self, case, name, point, klass):
        raise Unsupported("this adapter writes no reproducers of unsound bounds")


class Script:
    """A reproducer with the files kept beside it (`attachments`: extension
    -> text; MLIR's adapter attaches the module before the pass as `mlir`)."""

    def __init__(self, text, attachments):
        self.text, self.attachments = text, dict(attachments)

    def answer(self):
        return {"script": self.text, "attachments": self.attachments} if self.attachments else {"script": self.text}


def _script_answer(s):
    return s.answer() if isinstance(s, Script) else {"script": s}


INVALID = "invalid"

# Seconds one child process may take (compile and run).
CHILD_TIMEOUT = 120.0


def _signal_name(num):
    import signal
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def _in_child(work, timeout):
    """Runs `work(emit)` in a forked child; `emit(obj)` sends one JSON
    object to the parent. Returns (objects, how) where `how` is None for a
    normal exit, ("signal", NAME) when the child was killed by a signal, or
    ("timeout", seconds)."""
    import select
    import signal
    import time
    r, w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(r)
        code = 0
        try:
            def emit(obj):
                data = (json.dumps(obj, separators=(",", ":")) + "\n").encode()
                while data:
                    data = data[os.write(w, data):]
            work(emit)
        except BaseException as e:  # noqa: BLE001 - reported to the parent
            try:
                msg = f"{type(e).__name__}: {e}"
                os.write(w, (json.dumps({"child_error": msg[:4000]}) + "\n").encode())
                traceback.print_exc(file=sys.stderr)
            except BaseException:  # noqa: BLE001
                pass
            code = 1
        finally:
            try:
                sys.stderr.flush()
            finally:
                os._exit(code)
    os.close(w)
    buf, objs, how = b"", [], None
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            os.kill(pid, signal.SIGKILL)
            how = ("timeout", timeout)
            break
        ready, _, _ = select.select([r], [], [], left)
        if not ready:
            continue
        chunk = os.read(r, 65536)
        if not chunk:
            break
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            objs.append(json.loads(line))
    os.close(r)
    _, status = os.waitpid(pid, 0)
    if how is None and os.WIFSIGNALED(status):
        how = ("signal", _signal_name(os.WTERMSIG(status)))
    return objs, how


def _value(v):
    if v is INVALID or v == INVALID:
        return INVALID
    if isinstance(v, bool):
        return v
    return int(v)


def evaluate(backend, case, name, points, timeout=CHILD_TIMEOUT):
    """The answer to a `run` request (without its id): the kernel compiled
    and run in a child process; if that child dies by a signal while
    running, each point again in a child of its own, so that each trap is
    attributed to its point."""
    points = [tuple(p) for p in points]
    try:
        backend.prepare(name)
    except CompileError as e:
        return {"compile_error": str(e)}

    def whole(emit):
        kernel = backend.compile(case, name)
        emit({"compiled": True})
        emit({"values": [[_value(v) for v in vals] for vals in backend.run(kernel, points)]})

    def outcome(objs):
        for o in objs:
            if "child_error" in o:
                return o
        return None

    def compile_failure(objs, how):
        """A compile that failed, as an answer, or None."""
        err = outcome(objs)
        if not any(o.get("compiled") for o in objs):
            if err is not None:
                return _classify_child_error(err["child_error"])
            if how is not None and how[0] == "signal":
                return {"compile_error": f"the compiler was killed by {how[1]}"}
            if how is not None:
                return {"compile_error": f"compiling took over {how[1]:.0f} s"}
        return None

    objs, how = _in_child(whole, timeout)
    failed = compile_failure(objs, how)
    if failed is not None:
        return failed
    for o in objs:
        if "values" in o:
            if len(o["values"]) != len(points):
                return {"error": f"adapter: {len(o['values'])} results for {len(points)} points"}
            return {"results": [{"values": vals} for vals in o["values"]]}
    err = outcome(objs)
    if err is not None and how is None:
        # `run` may find it cannot evaluate as written at some point (MLIR's
        # folder declines an overflowing product): Unsupported, as from `compile`.
        if err["child_error"].startswith("Unsupported: "):
            return _classify_child_error(err["child_error"])
        return {"error": f"adapter: running the kernel raised {err['child_error']}"}
    # The batch died (or timed out): each point alone.
    results = []
    for p in points:
        def one(emit, p=p):
            kernel = backend.compile(case, name)
            emit({"compiled": True})
            emit({"values": [[_value(v) for v in backend.run(kernel, [p])[0]]]})
        objs, how = _in_child(one, timeout)
        vals = [o["values"][0] for o in objs if "values" in o]
        if vals:
            results.append({"values": vals[0]})
        elif how is not None and how[0] == "signal" and any(o.get("compiled") for o in objs):
            results.append({"trap": how[1]})
        elif how is not None and how[0] == "timeout":
            results.append({"timeout": how[1]})
        else:
            failed = compile_failure(objs, how)
            if failed is not None:
                return failed
            err = outcome(objs)
            return {"error": f"adapter: running the kernel at {list(p)} failed: "
                             f"{err['child_error'] if err else how}"}
    return {"results": results}


def _classify_child_error(msg):
    """A child's exception text as an answer: Unsupported and CompileError
    keep their meaning across the process boundary."""
    for cls, key in ((Unsupported, "unsupported"), (CompileError, "compile_error")):
        prefix = cls.__name__ + ": "
        if msg.startswith(prefix):
            return {key: msg[len(prefix):]}
    return {"error": f"adapter: {msg}"}


def _check_run_request(case, spec, names):
    if not isinstance(spec, dict):
        raise BadRequest("`run`/`reproducer` must be an object")
    name = spec.get("backend")
    if name not in names:
        raise BadRequest(f"unknown backend {name!r} (this adapter has {', '.join(names) or 'none'})")
    for t in case.trees:
        type_of(t, case.var)  # any tileproof op: answers are run too

    def point(p):
        if not isinstance(p, list) or len(p) != len(case.vars) or not all(is_int(x) for x in p):
            raise BadRequest(f"a point is a list of {len(case.vars)} integers (one per var), got {json.dumps(p)[:80]}")
        return tuple(p)
    return name, point


def _answer_backend_request(backend, case, obj):
    """The answer (without id) to a `run` or `reproducer` request."""
    names = list(backend.names) if backend is not None else []
    if "run" in obj:
        name, point = _check_run_request(case, obj["run"], names)
        pts = obj["run"].get("points")
        if not isinstance(pts, list):
            raise BadRequest("`run.points` must be a list")
        return evaluate(backend, case, name, [point(p) for p in pts])
    spec = obj["reproducer"]
    if backend is None:
        raise Unsupported("this adapter writes no reproducers")
    if isinstance(spec, dict) and spec.get("kind") == "unsound-bounds":
        name, point = _check_run_request(case, spec, names)
        return {"script": backend.bounds_reproducer(case, name, point(spec.get("point")), spec.get("class"))}
    if isinstance(spec, dict) and spec.get("backend") is None and spec.get("class") == "peer-crash":
        # A crash of the simplifier needs no backend: the script only calls it.
        _, point = _check_run_request(case, dict(spec, backend=None), [None])
        name = None
    else:
        name, point = _check_run_request(case, spec, names)
    expected = spec.get("expected")
    return _script_answer(backend.reproducer(case, name, point(spec.get("point")), expected, spec.get("class")))


# ---- the peer's bounds: bounds requests -----------------------------------------

class Bounds:
    """What an adapter implements to give its peer's range analysis
    (docs/protocol.md, section 7: `bounds` requests; the hello then says
    `"bounds": true`). This module walks the trees and writes the answer.

    - `build(case)` builds the case's trees as the adapter builds them for
      its simplifier and returns the peer's object of every node, by `id`
      of the tree node (`fold(..., built=)` records them).
    - `bound(obj)` returns the peer's bounds of one object: `(lo, hi)`, each
      end an integer of any size, or None where the analysis has no bound
      on that side (an infinity); a bool's ends may be bools or 0/1; None
      when the analysis says nothing.
    - `op(obj)` (optional) returns the peer's own name of the operation of
      one object (the root of the node's spelling in the peer's IR:
      tinygrad's `MUL` for a `neg` it builds as `x * -1`): the answer's
      `ops`, by which tileproof tells one transfer function of the peer
      from another whichever tileproof op spelled it. Without it, the
      answer has no `ops`.
    """

    def build(self, case):
        raise NotImplementedError

    def bound(self, obj):
        raise NotImplementedError

    def op(self, obj):
        raise NotImplementedError


def wire_bound(bound, typ, width):
    """One node's bound as the protocol writes it: `[lo, hi]`, `[false,
    true]` for a bool, or None. `width` is the profile's index width (None:
    unbounded integers, whose values tileproof judges at 64 bits). An end
    beyond the width's range, or None (no bound on that side), becomes the
    width's extreme: tileproof checks a node only at points where every
    value fits the width (a value beyond it is an overflow, and the point is
    skipped), so the clamped bound excludes exactly the values the peer's
    does; a bound that then spans the whole range says nothing there and is
    None, and so is one that lies wholly outside it (the node overflows at
    every point)."""
    if bound is None:
        return None
    lo, hi = bound
    if typ == "bool":
        return [bool(lo), bool(hi)]
    bits = width or 64
    wlo, whi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    lo = wlo if lo is None else int(lo)
    hi = whi if hi is None else int(hi)
    if lo <= hi and (lo > whi or hi < wlo):
        return None
    lo, hi = min(max(lo, wlo), whi), max(min(hi, whi), wlo)
    return None if (lo, hi) == (wlo, whi) else [lo, hi]


def _answer_bounds(bounds, case, width):
    """The answer (without id) to a `bounds` request: per tree, the bound
    of every node in pre-order (None for an `invalid`, which has no value
    to bound), and the peer's op of every bounded node when the adapter
    names them (`Bounds.op`)."""
    built = bounds.build(case)
    named = type(bounds).op is not Bounds.op
    out, ops = [], []
    for t in case.trees:
        types = {}
        type_of(t, case.var, types=types)
        nodes = preorder(t)
        bs = [None if n[0] == "invalid" else wire_bound(bounds.bound(built[id(n)]), types[id(n)], width)
              for n in nodes]
        out.append(bs)
        if named:
            ops.append([None if b is None else bounds.op(built[id(n)]) for n, b in zip(nodes, bs)])
    return {"bounds": out, "ops": ops} if named else {"bounds": out}


# ---- the loop ----------------------------------------------------------------

class Rules:
    """What an adapter implements to offer its simplifier's own rules
    (docs/protocol.md, section 6: `rules`, `instances` and `apply`
    requests; the hello says `"rules": true`).

    - `list()` returns one dict per rule: `name` (stable across runs),
      `pattern` (readable), `location` (`file:line`), `function`, `tree`
      (the pattern, structured) and `instantiable` (true, or why not).
    - `instances(rule, spec)` returns `(instances, failures)`: instances
      of the rule's left side built from the pools of `spec`, each a dict
      with `vars` and `trees` (one tree) that `apply` rebuilds exactly, and
      a dict reason -> count of the attempts that gave none.
    - `apply(case, rule)` applies that rule alone at the root of the case's
      only tree and returns the result tree (or a Simplified of that one
      tree, to name the rule's patterns that made the rewrite, each a
      `RULE/PATTERN` that `apply` then takes as a rule); raises Declined when the
      pattern does not match or the function returns None, Unsupported
      when the result has no tileproof form; anything else it raises is the
      peer's (an `error`, like a simplification's).
    """

    def list(self):
        raise NotImplementedError

    def instances(self, rule, spec):
        raise NotImplementedError

    def apply(self, case, rule):
        raise NotImplementedError


def _rule_name(obj, key):
    spec = obj.get(key)
    name = spec.get("rule") if isinstance(spec, dict) else None
    if not isinstance(name, str):
        raise BadRequest(f"`{key}.rule` must be a rule name (a string)")
    return name


def _stage(obj, stages):
    """The stage a request asks for (None: the entry point's answer)."""
    if "stage" not in obj:
        return None
    if not stages:
        raise Unsupported("this adapter has no pipeline stages")
    if obj["stage"] not in stages:
        raise BadRequest(f"`stage` must be one of {', '.join(stages)}, got {json.dumps(obj['stage'])[:80]}")
    return obj["stage"]


def _answer_rules_request(rules, obj):
    """The answer (without id) to a `rules` or `instances` request."""
    if rules is None:
        raise Unsupported("this adapter does not list its rules")
    if "rules" in obj:
        return {"rules": rules.list()}
    spec = obj["instances"]
    insts, failures = rules.instances(_rule_name(obj, "instances"), spec)
    return {"instances": insts, "failures": failures}


def serve(out, hello, simplify, width=None, backend=None, rules=None, bounds=None, stages=None):
    """Writes the hello, then answers requests until stdin closes.

    `backend` (a Backend, optional) answers `run` and `reproducer`
    requests; its names go into the hello's `backends`. `rules` (a Rules,
    optional) answers `rules`, `instances` and `apply` requests; the hello
    then says `"rules": true`. `bounds` (a Bounds, optional) answers
    `bounds` requests; the hello then says `"bounds": true`. `stages`
    (names, in order, optional) are the stages of the pipeline the entry
    point is, the last being the entry itself: the hello lists them, and a
    request with `"stage": NAME` is answered by `simplify(case,
    stage=NAME)`, the expressions after that stage.

    `simplify(case)` returns one tree per input tree (or a `Simplified`,
    which also says which of the peer's rules fired), or raises Unsupported.
    Any other exception is the peer's: answered `error` (tileproof excuses
    it where the source means nothing at any point). `width` (None for
    unbounded integers, else the profile's index width) clamps the bounds
    answers.
    """
    ops = set(hello["profile"]["ops"])
    if backend is not None and backend.names:
        hello = dict(hello, backends=list(backend.names),
                     reproducer=type(backend).reproducer is not Backend.reproducer)
    if rules is not None:
        hello = dict(hello, rules=True)
    if bounds is not None:
        hello = dict(hello, bounds=True)
    if stages:
        hello = dict(hello, stages=list(stages))
    send(out, hello)
    stdin = sys.stdin
    while True:
        line = stdin.readline()
        if not line:
            return 0
        if not line.strip():
            continue
        rid = None
        try:
            try:
                obj = json.loads(line)
            except ValueError as e:
                raise BadRequest(f"not JSON: {e}")
            if isinstance(obj, dict) and is_int(obj.get("id")):
                rid = obj["id"]
            if isinstance(obj, dict) and ("rules" in obj or "instances" in obj):
                if rid is None:
                    raise BadRequest("`id` must be an integer")
                send(out, dict(_answer_rules_request(rules, obj), id=rid))
                continue
            case = Case(obj)
            if "run" in obj or "reproducer" in obj:
                send(out, dict(_answer_backend_request(backend, case, obj), id=rid))
                continue
            applying = "apply" in obj
            stage = _stage(obj, stages)
            if applying:
                if rules is None:
                    raise Unsupported("this adapter does not apply single rules")
                rule = _rule_name(obj, "apply")
                if len(case.trees) != 1:
                    raise BadRequest("an `apply` request has exactly one tree")
            else:
                for t in case.trees:
                    type_of(t, case.var, ops)
            try:
                if "bounds" in obj:
                    if bounds is None:
                        raise Unsupported("this adapter gives no bounds")
                    send(out, dict(_call_peer(lambda: _answer_bounds(bounds, case, width)), id=rid))
                    continue
                if applying:
                    result = _call_peer(lambda: rules.apply(case, rule))
                    if not isinstance(result, Simplified):
                        result = [result]
                elif stage is not None:
                    result = _call_peer(lambda: simplify(case, stage=stage))
                else:
                    result = _call_peer(lambda: simplify(case))
            except Declined as e:
                send(out, {"id": rid, "declined": str(e)[:2000]})
                continue
            except _PeerRaised as e:
                send(out, {"id": rid, "error": str(e)[:2000]})
                continue
            fired = patterns = None
            if isinstance(result, Simplified):
                result, fired, patterns = result.trees, result.fired, result.patterns
            if len(result) != len(case.trees):
                send(out, {"id": rid, "error": f"peer returned {len(result)} results for {len(case.trees)} expressions"})
                continue
            problem = None
            for i, (t, want) in enumerate(zip(result, case.types)):
                try:
                    got = type_of(t, case.var)
                except (BadRequest, Unsupported) as e:
                    problem = f"result {i} is not a well-formed tree: {e}"
                    break
                if got != want:
                    problem = f"result {i} has type {got}, its input has type {want}"
                    break
            if problem:
                send(out, {"id": rid, "error": problem})
            else:
                beside = {}
                if "with_bounds" in obj and bounds is not None and not applying and stage is None:
                    # The source's bounds beside the answer (section 7); a
                    # failure on them is the `bounds` request's to report.
                    try:
                        beside = _answer_bounds(bounds, case, width)
                    except Exception:
                        beside = {}
                send(out, {"id": rid, "trees": result, **({"fired": fired} if fired else {}),
                           **({"patterns": patterns} if patterns else {}), **beside})
        except Unsupported as e:
            send(out, {"id": rid, "unsupported": str(e)})
        except BadRequest as e:
            send(out, {"id": rid, "error": f"bad request: {e}"})
        except Exception as e:  # an adapter bug: say so, keep serving
            traceback.print_exc(file=sys.stderr)
            send(out, {"id": rid, "error": f"adapter: {type(e).__name__}: {e}"[:2000]})
