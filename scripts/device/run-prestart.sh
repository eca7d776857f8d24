#!/usr/bin/env bash
# Issue 25: runs started ahead and held at their first launch (UNROLL_LENS_HOLD). The bench of
# matmul_basic (cuda-samples/matmul_unroll.cu line 51, 7 factors, 20 samples after 2 warm-up) with
# REPS launches a run (default 8: 7 timed launches a run, 3 runs a variant), cold caches each time,
# alternating the CLI without the change (.device/cli-nopre) and with it (.device/cli), two rounds:
# wall time, GPU runs, medians and stall mixes (do held starts disturb the timed kernels or the PC
# samples?), the timer records kept.
set -u
W=/tmp/ul-pre; rm -rf "$W"; mkdir -p "$W" /tmp/ul-node
xz -dc .device/node.xz > /tmp/ul-node/node && chmod +x /tmp/ul-node/node
export PATH="/tmp/ul-node:$PATH:/usr/local/cuda/bin"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > "$W/gpu.txt"
nvcc -O3 -arch=sm_90 -o "$W/warm" cuda-samples/matmul_unroll.cu > /dev/null 2>&1; rm -f "$W/warm"
since() { awk -v a="$(date +%s.%N)" -v b="$1" 'BEGIN { printf "%.2f", a - b }'; }
for round in 1 2; do
  for cli in cli-nopre cli; do
    C=$(mktemp -d); t=$(date +%s.%N)
    XDG_CACHE_HOME=$C node .device/$cli/unroll-lens.js bench cuda-samples/matmul_unroll.cu --loop 51 \
      --factors default,1,2,4,8,16,full --args "--only matmul_basic --reps ${REPS:-8}" --samples 20 --warmup 2 --json \
      --keep-reports "$W/keep-$cli-$round" > "$W/$cli-$round.json" 2> "$W/$cli-$round.stderr"
    echo "$cli round $round: $(since "$t") s exit $?" | tee -a "$W/wall.txt"
    rm -rf "$C"
  done
done
grep -l '"held"' "$W"/keep-cli-1/*.jsonl 2> /dev/null | wc -l
grep -h pcerror "$W"/keep-*/*.jsonl 2> /dev/null | sort | uniq -c
tar czf "$OUT/prestart.tgz" -C "$W" .
