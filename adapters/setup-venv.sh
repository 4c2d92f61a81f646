#!/bin/sh
# Creates the venv that runs tileproof's peer adapters and installs the pinned
# peers (adapters/requirements.txt) into it, then checks that each peer
# imports at its pinned version, that tinygrad's three CPU renderers compile
# and run a kernel (clang and libLLVM are the machine's), that Halide's JIT
# realizes a Func and the facts its profile claims hold, and that each
# adapter says hello.
#
#   adapters/setup-venv.sh [VENV]      (default: .venv-peers at the repo root,
#                                       or $TILEPROOF_PEERS_VENV)
#   PYTHON=python3.12 adapters/setup-venv.sh   (the interpreter to use; >= 3.11)
#
# Exits nonzero, naming the peer (or what the machine lacks: clang, libLLVM),
# if any peer cannot be installed, imported or compile: nothing is skipped
# silently.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
venv=${1:-${TILEPROOF_PEERS_VENV:-$root/.venv-peers}}
python=${PYTHON:-python3}
req="$here/requirements.txt"

die() { echo "setup-venv: $*" >&2; exit 1; }

"$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null \
  || die "$python is missing or older than 3.11 (tinygrad 0.14.0 needs 3.11); set PYTHON"

if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv" || die "could not create a venv at $venv"
fi
py="$venv/bin/python"
echo "setup-venv: venv $venv ($("$py" --version 2>&1))"

# Everything at once (one resolver run); if that fails, each peer on its own
# so that the message says which one cannot be installed.
if ! "$py" -m pip install --disable-pip-version-check -q -r "$req"; then
  failed=""
  for spec in $(grep -E '^(tinygrad|apache-tvm|iree-base-compiler|iree-base-runtime|halide)==' "$req"); do
    "$py" -m pip install --disable-pip-version-check -q "$spec" || failed="$failed $spec"
  done
  die "could not install:${failed:- the pinned dependencies (see the pip messages above)}"
fi

# Each peer must import, at exactly its pinned version.
status=0
# The check itself is Python, its inputs arguments (portable to sh and bash).
CHECK='import sys
from importlib.metadata import version
name, spec, stmt = sys.argv[1:4]
want = spec.split("==")[1]
got = version(name)
if got != want:
    sys.exit("version %s, pinned %s" % (got, want))
exec(stmt)
print(got)'
check() {  # name, pinned spec, import statement
  if out=$("$py" -c "$CHECK" "$1" "$2" "$3" 2>&1); then
    echo "setup-venv: ok: $1 $out"
  else
    echo "setup-venv: FAILED: $1: $(echo "$out" | tail -1)" >&2
    status=1
  fi
}
check tinygrad "$(grep -E '^tinygrad==' "$req")" \
  "from tinygrad.uop.symbolic import sym; from tinygrad.uop.ops import UOp"
check apache-tvm "$(grep -E '^apache-tvm==' "$req")" \
  "from tvm import tirx, ir; from tvm.sym import Analyzer; Analyzer().simplify(tirx.const(1, 'int64'))"
check iree-base-compiler "$(grep -E '^iree-base-compiler==' "$req")" \
  "from iree.compiler import ir, passmanager; ctx = ir.Context(); ctx.__enter__(); ir.AffineExpr.simplify_affine_expr(ir.AffineDimExpr.get(0), 1, 0); passmanager.PassManager.parse('builtin.module(canonicalize)')"
check iree-base-runtime "$(grep -E '^iree-base-runtime==' "$req")" \
  "from iree import runtime; runtime.Config('local-sync')"
check halide "$(grep -E '^halide==' "$req")" \
  "import halide as hl; x = hl.Var('x'); f = hl.Func('f'); f[x] = x / 2; assert f.realize([4])[3] == 1"

# Every fact Halide's profile claims holds on the installed release
# (division, overflow, the language, ranges: docs/peers/halide.md).
if out=$("$py" "$here/halide_experiments.py" 2>&1); then
  echo "setup-venv: ok: halide experiments: $(echo "$out" | grep -c '^ok: ') facts hold"
else
  echo "setup-venv: FAILED: halide experiments:" >&2
  echo "$out" | grep -v '^ok: ' | sed 's/^/  /' >&2
  status=1
fi

# tinygrad's backend (`run` and `reproducer` requests) compiles with the
# machine's clang (its CPU device needs it whatever the renderer) and loads
# libLLVM for its LLVM renderer: each renderer must compile and run a kernel
# (the check names what is missing).
if out=$("$py" "$here/tinygrad_backend.py" --check 2>&1); then
  echo "setup-venv: ok: tinygrad backends: $out"
else
  echo "setup-venv: FAILED: tinygrad backends:" >&2
  echo "$out" | sed 's/^/  /' >&2
  status=1
fi

# Each adapter must start and say hello (it exits when stdin closes).
for a in tinygrad_adapter.py tvm_adapter.py mlir_adapter.py halide_adapter.py; do
  if hello=$("$py" "$here/$a" </dev/null 2>/dev/null) && [ -n "$hello" ]; then
    echo "setup-venv: ok: $a: $hello"
  else
    echo "setup-venv: FAILED: $a did not say hello (run it by hand to see why)" >&2
    status=1
  fi
done
exit $status
