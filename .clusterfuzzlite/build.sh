#!/bin/bash -eu
# ClusterFuzzLite / OSS-Fuzz build: the cargo-fuzz targets of fuzz/, built
# by cargo-fuzz (libFuzzer, with the sanitizer flags the builder sets), then
# copied to $OUT.
cd "$SRC/tileproof"
cargo fuzz build -O
# fuzz/ is a member of the workspace, so cargo-fuzz builds into the
# workspace's target directory, not fuzz/target.
FUZZ_TARGET_OUTPUT_DIR=target/x86_64-unknown-linux-gnu/release
for src in fuzz/fuzz_targets/*.rs; do
    target=$(basename "${src%.rs}")
    cp "$FUZZ_TARGET_OUTPUT_DIR/$target" "$OUT/"
done
