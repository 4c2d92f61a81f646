#!/bin/sh
# Installs the Z3 that tileproof links: the library and headers of PyPI's
# z3-solver wheel, in .z3/ at the repository root (a venv of its own), with
# the pkg-config file that z3-sys reads (.cargo/config.toml points
# PKG_CONFIG_PATH at .z3). Debian's libz3-dev is 4.8.12, which takes four
# times as long over the built-in rules (docs/results.md). Does nothing when
# that version is there already.
set -eu
version=4.15.8
root=$(cd "$(dirname "$0")/.." && pwd)
dir="$root/.z3"
if [ -f "$dir/z3.pc" ] && grep -q "^Version: $version\$" "$dir/z3.pc"; then
    echo "setup-z3: Z3 $version is in $dir"
    exit 0
fi
rm -rf "$dir"
python3 -m venv "$dir/venv"
"$dir/venv/bin/python" -m pip install --quiet --disable-pip-version-check "z3-solver==$version"
site=$("$dir/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
if [ ! -f "$site/z3/lib/libz3.so" ]; then
    echo "setup-z3: the z3-solver wheel has no $site/z3/lib/libz3.so" >&2
    exit 1
fi
ln -s "$site/z3/lib" "$dir/lib"
ln -s "$site/z3/include" "$dir/include"
printf '%s\n' \
    'prefix=${pcfiledir}' \
    'libdir=${prefix}/lib' \
    'includedir=${prefix}/include' \
    'Name: z3' \
    "Description: Z3 $version from PyPI's z3-solver wheel (verify/setup-z3.sh)" \
    "Version: $version" \
    'Libs: -L${libdir} -lz3' \
    'Cflags: -I${includedir}' >"$dir/z3.pc"
echo "setup-z3: Z3 $version installed in $dir"
