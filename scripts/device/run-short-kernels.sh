#!/usr/bin/env bash
# Issue 42's device run, in one call: the short-kernel ladder and length curve against ncu
# (scripts/device/short-kernels.sh), then `npm run bench:gpu` (scripts/device/bench-gpu.sh: the
# two speed targets, recorded in the same session). Run from the checkout's root with the bundled
# CLI and Node carried in $CARRY (default .device/i42: cli/ from scripts/device/bundle-cli.mjs,
# node.xz, and scripts/ holding short-kernels.sh, short-kernels-summary.mjs and short-kernels/).
# Outputs: $OUT/short-kernels.tgz, $OUT/bench-gpu.tgz and $OUT/log.txt.
set -u
CARRY=${CARRY:-.device/i42}
mkdir -p /tmp/ul-node
xz -dc "$CARRY/node.xz" > /tmp/ul-node/node && chmod +x /tmp/ul-node/node
export PATH="/tmp/ul-node:$PATH:/usr/local/cuda/bin"
export UNROLL_LENS_CLI=$PWD/$CARRY/cli/unroll-lens.js
R=/tmp/issue42; rm -rf "$R"; mkdir -p "$R"
OUT=$R bash "$CARRY/scripts/short-kernels.sh"
echo "run-short-kernels: short-kernels exit $?"
grep -h '"gtend"' "$R"/short-kernels/*-timer/* 2> /dev/null | head -n 4
if [ "${BENCH:-1}" = 1 ]; then
  OUT=$R bash scripts/device/bench-gpu.sh > "$R/bench-gpu.log" 2>&1
  echo "run-short-kernels: bench-gpu exit $?"
  tail -n 40 "$R/bench-gpu.log"
fi
tar czf "$OUT/short-kernels.tgz" -C "$R" short-kernels
[ -d "$R/bench-gpu" ] && tar czf "$OUT/bench-gpu.tgz" -C "$R" bench-gpu
