#!/usr/bin/env bash
# Issue 25 on a real GPU: the CUPTI kernel timer (`--timer cupti`) against ncu. For matmul_basic
# (cuda-samples/matmul_unroll.cu, loop 51, 7 factors, 20 samples after 2 warm-up launches):
#   bench --timer cupti                      the program as itself, warm caches, the GPU's clocks
#   bench --timer ncu --clock-control none   ncu's cache flush, clocks left alone
#   the hand loop (scripts/device/hand-loop.sh) with ncu --cache-control none --clock-control none
#     and only gpu__time_duration.sum: what the CUPTI medians must match (no code of ours)
#   the hand loop with ncu's defaults (--cache-control all) for the flush's effect
# Each bench's wall time is printed; the CUPTI timer's records are kept (--keep-reports) as fixtures.
set -u
W=/tmp/ul-native; rm -rf "$W"; mkdir -p "$W" /tmp/ul-node
xz -dc .device/node.xz > /tmp/ul-node/node && chmod +x /tmp/ul-node/node
export PATH="/tmp/ul-node:$PATH:/usr/local/cuda/bin"
UL="node .device/cli/unroll-lens.js"
FACTORS=default,1,2,4,8,16,full
ARGS="--only matmul_basic --reps 25"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > "$W/gpu.txt"
nvcc --version | tail -2 > "$W/nvcc.txt"
since() { awk -v a="$(date +%s.%N)" -v b="$1" 'BEGIN { printf "%.1f", a - b }'; }
for run in 1 2; do
  for timer in cupti ncu; do
    t=$(date +%s.%N)
    $UL bench cuda-samples/matmul_unroll.cu --loop 51 --factors "$FACTORS" --args "$ARGS" --samples 20 --warmup 2 \
      --clock-control none --timer "$timer" --fresh --quiet --json --keep-reports "$W/keep-$timer-$run" \
      > "$W/bench-$timer-$run.json" 2> "$W/bench-$timer-$run.stderr"
    echo "bench --timer $timer run $run: $(since "$t") s wall, exit $?"
  done
done
t=$(date +%s.%N)
FACTORS=$FACTORS CLOCK=none CACHE=none METRICS=gpu__time_duration.sum bash scripts/device/hand-loop.sh "$W/hand-nocache" > "$W/hand-nocache.log" 2>&1
echo "hand loop, ncu --cache-control none, durations only: $(since "$t") s"
t=$(date +%s.%N)
FACTORS=$FACTORS CLOCK=none CACHE=all METRICS=gpu__time_duration.sum bash scripts/device/hand-loop.sh "$W/hand-flush" > "$W/hand-flush.log" 2>&1
echo "hand loop, ncu --cache-control all, durations only: $(since "$t") s"
tar czf "$OUT/native-timer.tar.gz" -C "$W" .
du -sh "$OUT/native-timer.tar.gz"
