#!/usr/bin/env bash
# Issue 25 on a real GPU: CUPTI PC sampling inside the CUPTI kernel timer (native/cupti_timer.c,
# UNROLL_LENS_PCSAMPLING=<period exponent>). On cuda-samples/matmul_unroll.cu (every kernel,
# --size 1024 --reps 25), built with -lineinfo:
#   runs alternate between no sampling and sampling every 2^P cycles (P in $PERIODS), 5 rounds,
#     each run's timer records kept: do the kernel durations move when sampling is on?
#   wall time of a plain run, a timed run and a timed + sampled run
#   ncu (--cache-control none --clock-control none) with the WarpStateStats and SourceCounters
#     sections on three launches of each kernel, raw page and source page (SASS) as CSV: the
#     independent stall mix the PC samples must agree with
# Outputs under $OUT/pc-sampling/ (records, ncu CSVs, wall times, the cubin's SASS).
set -u
W=$OUT/pc-sampling
mkdir -p "$W"
export PATH="$PATH:/usr/local/cuda/bin"
PERIODS=${PERIODS:-12 15}
CUDA=$(cd "$(dirname "$(command -v nvcc)")/.." && pwd)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader > "$W/gpu.txt"
nvcc --version | tail -2 > "$W/nvcc.txt"
ncu --version | tail -1 > "$W/ncu.txt"
nvcc -shared -Xcompiler -fPIC -O2 -I "$CUDA/include" -L "$CUDA/lib64" -lcupti -Xlinker "-rpath,$CUDA/lib64" \
  -o "$W/libtimer.so" native/cupti_timer.c || exit 1
nvcc -O3 -lineinfo -arch=sm_90 -o "$W/prog" cuda-samples/matmul_unroll.cu || exit 1
cuobjdump -sass "$W/prog" > "$W/prog.sass" 2>&1
ARGS="--size 1024 --reps 25"
since() { awk -v a="$(date +%s.%N)" -v b="$1" 'BEGIN { printf "%.3f", a - b }'; }
t=$(date +%s.%N); "$W/prog" $ARGS > "$W/plain.stdout" 2>&1; echo "plain run: $(since "$t") s" | tee -a "$W/wall.txt"
for round in 1 2 3 4 5; do
  t=$(date +%s.%N)
  CUDA_INJECTION64_PATH="$W/libtimer.so" UNROLL_LENS_TIMER_OUT="$W/timed-$round.jsonl" "$W/prog" $ARGS > "$W/timed-$round.stdout" 2>&1
  echo "timed run $round: $(since "$t") s exit $?" | tee -a "$W/wall.txt"
  for p in $PERIODS; do
    t=$(date +%s.%N)
    CUDA_INJECTION64_PATH="$W/libtimer.so" UNROLL_LENS_TIMER_OUT="$W/sampled$p-$round.jsonl" UNROLL_LENS_PCSAMPLING=$p \
      "$W/prog" $ARGS > "$W/sampled$p-$round.stdout" 2>&1
    echo "sampled 2^$p run $round: $(since "$t") s exit $?" | tee -a "$W/wall.txt"
  done
done
for k in matmul_basic matmul_pragma; do
  ncu --cache-control none --clock-control none -k "regex:^$k" -c 3 --section WarpStateStats --section SourceCounters \
    --csv --page raw "$W/prog" $ARGS > "$W/ncu-$k-raw.csv" 2> "$W/ncu-$k.stderr"
  ncu --cache-control none --clock-control none -k "regex:^$k" -c 1 --section SourceCounters \
    --csv --page source --print-source sass "$W/prog" $ARGS > "$W/ncu-$k-source.csv" 2>> "$W/ncu-$k.stderr"
done
ls -la "$W" | head -80
grep -h pcerror "$W"/*.jsonl | sort | uniq -c | head
grep -h '"pcs"' "$W"/*.jsonl | cut -c1-600 | head -3
