#!/usr/bin/env bash
# Issue 25 on a real GPU, two questions:
# 1. The CUPTI timer's durations sit ~1 µs under ncu's gpu__time_duration.sum (--cache-control
#    none --clock-control none) whatever the kernel's length: what is that µs? An empty kernel and
#    a fixed-cycle spin kernel (scripts/device/timer-offset.cu), each launch also timed by
#    cudaEvents in the program, under the timer and under ncu.
# 2. What PC sampling costs a run, and what of it CUPTI's settings change: matmul_basic
#    (cuda-samples/matmul_unroll.cu --only matmul_basic --reps 25) run plain, timed, timed and
#    sampled every 2^15 cycles with CUPTI's defaults, with a 64 MB hardware buffer, with 10 ms
#    worker sleep, and both; 5 rounds, interleaved. Each run's wall and the timer's records kept.
set -u
W=$OUT/overheads
mkdir -p "$W"
export PATH="$PATH:/usr/local/cuda/bin"
CUDA=$(cd "$(dirname "$(command -v nvcc)")/.." && pwd)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > "$W/gpu.txt"
nvcc -shared -Xcompiler -fPIC -O2 -I "$CUDA/include" -L "$CUDA/lib64" -lcupti -Xlinker "-rpath,$CUDA/lib64" \
  -o /tmp/libtimer.so native/cupti_timer.c || exit 1
nvcc -O3 -arch=sm_90 -o /tmp/offset scripts/device/timer-offset.cu || exit 1
nvcc -O3 -arch=sm_90 -o /tmp/matmul cuda-samples/matmul_unroll.cu || exit 1
for r in 1 2 3; do
  CUDA_INJECTION64_PATH=/tmp/libtimer.so UNROLL_LENS_TIMER_OUT="$W/offset-timer-$r.jsonl" /tmp/offset > "$W/offset-timer-$r.stdout" 2>&1
  ncu --cache-control none --clock-control none --metrics gpu__time_duration.sum --csv --page raw /tmp/offset \
    > "$W/offset-ncu-$r.csv" 2> "$W/offset-ncu-$r.stderr"
done
since() { awk -v a="$(date +%s.%N)" -v b="$1" 'BEGIN { printf "%.3f", a - b }'; }
ARGS="--only matmul_basic --reps 25"
run() { # NAME env...
  local name=$1 t; shift
  t=$(date +%s.%N)
  env "$@" /tmp/matmul $ARGS > /dev/null 2>&1
  echo "$name $(since "$t")" >> "$W/wall.txt"
}
for round in 1 2 3 4 5; do
  run plain
  run timed CUDA_INJECTION64_PATH=/tmp/libtimer.so UNROLL_LENS_TIMER_OUT="$W/timed-$round.jsonl"
  run sampled CUDA_INJECTION64_PATH=/tmp/libtimer.so UNROLL_LENS_TIMER_OUT="$W/sampled-$round.jsonl" UNROLL_LENS_PCSAMPLING=15
  run hw64 CUDA_INJECTION64_PATH=/tmp/libtimer.so UNROLL_LENS_TIMER_OUT="$W/hw64-$round.jsonl" UNROLL_LENS_PCSAMPLING=15 UNROLL_LENS_PC_HW_BUFFER_MB=64
  run sleep10 CUDA_INJECTION64_PATH=/tmp/libtimer.so UNROLL_LENS_TIMER_OUT="$W/sleep10-$round.jsonl" UNROLL_LENS_PCSAMPLING=15 UNROLL_LENS_PC_SLEEP_MS=10
  run both CUDA_INJECTION64_PATH=/tmp/libtimer.so UNROLL_LENS_TIMER_OUT="$W/both-$round.jsonl" UNROLL_LENS_PCSAMPLING=15 UNROLL_LENS_PC_HW_BUFFER_MB=64 UNROLL_LENS_PC_SLEEP_MS=10
done
sort "$W/wall.txt" | awk '{ s[$1] = s[$1] " " $2 } END { for (k in s) print k ":" s[k] }'
grep -h '"pcs"' "$W"/*.jsonl | sed 's/"reasons":\[[^]]*\],//' | cut -c1-200 | head -20
grep -h pcerror "$W"/*.jsonl | sort | uniq -c
tar czf "$OUT/overheads.tgz" -C "$OUT" overheads && rm -rf "$W"
