#!/usr/bin/env bash
# Issue 25: is the gap between the CUPTI timer and ncu (--cache-control none --clock-control none)
# a fixed offset or a ratio? matmul_basic at three sizes (--size 512, 1024, 2048: about 60 µs,
# 0.45 ms and 3.6 ms a launch), the file as written and ×4, each timed by `bench --timer cupti`
# and by the hand loop (scripts/device/hand-loop.sh, durations only, no code of ours).
set -u
W=/tmp/ul-offset; rm -rf "$W"; mkdir -p "$W" /tmp/ul-node
xz -dc .device/node.xz > /tmp/ul-node/node && chmod +x /tmp/ul-node/node
export PATH="/tmp/ul-node:$PATH:/usr/local/cuda/bin"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$W/gpu.txt"
for size in 512 1024 2048; do
  A="--only matmul_basic --size $size --reps 25"
  node .device/cli/unroll-lens.js bench cuda-samples/matmul_unroll.cu --loop 51 --factors 4 --args "$A" --samples 20 --warmup 2 \
    --timer cupti --fresh --quiet --json > "$W/cupti-$size.json" 2> "$W/cupti-$size.stderr"
  FACTORS=default,4 CLOCK=none CACHE=none METRICS=gpu__time_duration.sum ARGS="$A" bash scripts/device/hand-loop.sh "$W/hand-$size" > "$W/hand-$size.log" 2>&1
  echo "size $size done"
done
tar czf "$OUT/timer-offset.tar.gz" -C "$W" .
