#!/usr/bin/env bash
# Issue 25 on a real GPU: `bench` with the CUPTI timer and PC-sampled stalls (the default) against
# the hand-written loops, all on matmul_basic (cuda-samples/matmul_unroll.cu line 51, 7 factors,
# 20 samples after 2 warm-up launches), clocks left alone, in one run on one GPU:
#   hand-stalls   nvcc + one ncu per factor with gpu__time_duration and the warp-stall ratios
#                 (ncu's default cache flush): the hand loop that collects both
#   hand-time     the same with gpu__time_duration.sum alone: the hand timing loop
#   hand-nocache  durations alone under --cache-control none: the medians the timer must match
#   ours          `bench` cold (fresh XDG_CACHE_HOME): CUPTI timer + PC sampling (the default)
#   ours-nostall  `bench --stalls off` cold: times only
#   ours-cached   `bench` again on ours' cache: no GPU run
#   few-*         the same bench with --reps 8 (9 launches a run: 3 runs for 20 samples)
# Outputs in $OUT/native-stalls.tgz: every JSON, the hand loops' CSVs, wall times.
# ONLY="hand-stalls ours ours-nostall" runs just those (default: all).
set -u
W=/tmp/ul-ns; rm -rf "$W"; mkdir -p "$W" /tmp/ul-node
xz -dc .device/node.xz > /tmp/ul-node/node && chmod +x /tmp/ul-node/node
export PATH="/tmp/ul-node:$PATH:/usr/local/cuda/bin"
UL="node $(pwd)/.device/cli/unroll-lens.js"
FACTORS=default,1,2,4,8,16,full
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > "$W/gpu.txt"
nvcc --version | tail -2 > "$W/nvcc.txt"
ncu --version | tail -1 > "$W/ncu.txt"
since() { awk -v a="$(date +%s.%N)" -v b="$1" 'BEGIN { printf "%.2f", a - b }'; }
# warm the disk cache for nvcc and ncu for both sides (not timed)
nvcc -O3 -arch=sm_90 -o "$W/warm" cuda-samples/matmul_unroll.cu > /dev/null 2>&1; ncu --version > /dev/null
want() { [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $1 "* ]]; }
hand() { # NAME env...
  local name=$1 t; shift
  want "$name" || return 0
  t=$(date +%s.%N)
  env FACTORS=$FACTORS CLOCK=none "$@" bash scripts/device/hand-loop.sh "$W/$name" > "$W/$name.log" 2>&1
  echo "$name: $(since "$t") s" | tee -a "$W/wall.txt"
}
ours() { # NAME CACHEDIR ARGS extra...
  local name=$1 cache=$2 args=$3 t; shift 3
  want "$name" || return 0
  t=$(date +%s.%N)
  XDG_CACHE_HOME=$cache $UL bench cuda-samples/matmul_unroll.cu --loop 51 --factors "$FACTORS" --args "$args" \
    --samples 20 --warmup 2 --json "$@" > "$W/$name.json" 2> "$W/$name.stderr"
  echo "$name: $(since "$t") s exit $?" | tee -a "$W/wall.txt"
}
hand hand-stalls CACHE=all
hand hand-time CACHE=all METRICS=gpu__time_duration.sum
hand hand-nocache CACHE=none METRICS=gpu__time_duration.sum
C1=$(mktemp -d); C2=$(mktemp -d); C3=$(mktemp -d)
ours ours "$C1" "--only matmul_basic --reps 25"
ours ours-nostall "$C2" "--only matmul_basic --reps 25" --stalls off
ours ours-cached "$C1" "--only matmul_basic --reps 25"
ours few "$C3" "--only matmul_basic --reps 8"
ours few-cached "$C3" "--only matmul_basic --reps 8"
rm -rf "$C1" "$C2" "$C3"
cat "$W/wall.txt"
tar czf "$OUT/native-stalls.tgz" -C "$W" --exclude=warm .
