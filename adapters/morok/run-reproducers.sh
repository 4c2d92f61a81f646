#!/bin/sh
# Every Rust reproducer kept beside a Morok finding (corpus/peers/morok.*/,
# subdirectories included) compiled against the pinned Morok crates and
# run alone: each must fail, as it does while its bug is in Morok. A
# reproducer that passes means Morok no longer has the bug (or the
# reproducer no longer shows it): time to move the finding out.
#
#   sh adapters/morok/run-reproducers.sh            the repository's corpus
#   TILEPROOF_MOROK_CORPUS=DIR sh adapters/morok/run-reproducers.sh
#                                                   every *.rs under DIR
set -eu
cd "$(dirname "$0")"
out=$(cargo test --release -p morok-reproducers --no-run 2>&1) || {
    echo "$out" >&2
    echo "run-reproducers: the reproducers do not compile against the pinned Morok crates" >&2
    exit 1
}
bin=$(echo "$out" | sed -n 's/.*Executable unittests src\/lib.rs (\(.*\))$/\1/p' | tail -n 1)
if [ -z "$bin" ]; then
    echo "$out" >&2
    echo "run-reproducers: no test binary in cargo's output" >&2
    exit 1
fi
tests=$("$bin" --list 2>/dev/null | sed -n 's/^\(.*\): test$/\1/p')
n=0
failed=0
controls=0
wrong=0
log=$(mktemp)
for t in $tests; do
    case "$t" in
        control_*)
            # A reproducer of a case where Morok is right must pass.
            controls=$((controls + 1))
            if ! "$bin" --exact "$t" --test-threads 1 >"$log" 2>&1; then
                echo "run-reproducers: the control $t fails: a reproducer can fail without a bug" >&2
                sed 's/^/    /' "$log" >&2
                wrong=$((wrong + 1))
            fi ;;
        *)
            n=$((n + 1))
            if "$bin" --exact "$t" --test-threads 1 >"$log" 2>&1; then
                echo "run-reproducers: $t passes: the bug it reproduces is gone (or the reproducer no longer shows it)" >&2
                sed 's/^/    /' "$log" >&2
                failed=$((failed + 1))
            fi ;;
    esac
done
rm -f "$log"
echo "run-reproducers: $n reproducers, $((n - failed)) fail as their bugs do, $failed pass; $((controls - wrong)) of $controls controls pass"
[ "$failed" -eq 0 ] && [ "$wrong" -eq 0 ]
