#!/usr/bin/env bash
# Issue 24 on a real GPU: `bench` is a one-loop sweep. Runs the bundled CLI (.device/cli, from
# scripts/device/bundle-cli.mjs; Node from .device/node.xz) for:
#   bench matmul_basic   every output (--json --csv --t4 --report --save) and --source-stalls
#   bench matmul_pragma  a loop in four template instantiations: one table each
#   sweep matmul_basic   --source-stalls on the GPU sweep
# then the hand-written loop (scripts/device/hand-loop.sh: nvcc -O3 + one ncu per factor, no code
# of ours) for the same factors, whose medians check the bench's. Clocks are left alone
# (--clock-control none, this workplace's rule). Everything lands in $OUT/one-pipeline.tar.gz.
set -u
W=/tmp/ul-one; rm -rf "$W"; mkdir -p "$W/saved" /tmp/ul-node
xz -dc .device/node.xz > /tmp/ul-node/node && chmod +x /tmp/ul-node/node
export PATH="/tmp/ul-node:$PATH:/usr/local/cuda/bin"
UL="node .device/cli/unroll-lens.js"
T0=$(date +%s)
step() { echo "[+$(( $(date +%s) - T0 ))s] $*"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$W/gpu.txt"
ncu --version > "$W/ncu-version.txt"
ARGS="--only matmul_basic --reps 25"
step bench matmul_basic
$UL bench cuda-samples/matmul_unroll.cu --loop 51 --factors default,1,4,8 --args "$ARGS" --samples 20 --warmup 2 \
  --clock-control none --fresh --source-stalls --json --csv "$W/bench.csv" --t4 "$W/bench.t4.json" --report "$W/bench.html" \
  --save "$W/saved" > "$W/bench.json" 2> "$W/bench.stderr"; echo "exit $?" >> "$W/bench.stderr"
$UL bench cuda-samples/matmul_unroll.cu --loop 51 --factors default,1,4,8 --args "$ARGS" --samples 20 --warmup 2 \
  --clock-control none --source-stalls > "$W/bench.txt" 2> "$W/bench-text.stderr"; echo "exit $?" >> "$W/bench-text.stderr"
step bench matmul_pragma
$UL bench cuda-samples/matmul_unroll.cu --loop 177 --factors 1,4 --args "--only matmul_pragma --reps 25" --samples 20 \
  --warmup 2 --clock-control none --fresh --json > "$W/pragma.json" 2> "$W/pragma.stderr"; echo "exit $?" >> "$W/pragma.stderr"
step sweep matmul_basic --source-stalls
$UL sweep cuda-samples/matmul_unroll.cu --kernel matmul_basic --loops 51 --factors 1,4 --args "$ARGS" --samples 20 --warmup 2 \
  --clock-control none --fresh --source-stalls --json > "$W/sweep.json" 2> "$W/sweep.stderr"; echo "exit $?" >> "$W/sweep.stderr"
step hand loop
FACTORS=default,1,4,8 CLOCK=none bash scripts/device/hand-loop.sh "$W/hand" > "$W/hand.log" 2>&1
step done
tar czf "$OUT/one-pipeline.tar.gz" -C "$W" .
du -sh "$OUT/one-pipeline.tar.gz"
