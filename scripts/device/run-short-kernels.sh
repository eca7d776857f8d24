#!/usr/bin/env bash
# Issue 42 probe, on a GPU host: how the kernel timer's means compare with ncu on short kernels.
# Builds the timer library (native/cupti_timer.c, as C++, as the product does) and our two short-kernel
# programs (scripts/device/short-kernels/), then runs each program ROUNDS times in every mode:
#   plain                the program's own cudaEvent medians
#   activity             CUPTI serialized kernel records (the timer as it was)
#   gt-kernel, gt-user   + the range profiler reading gpu__time_duration.sum (kernel / user replay)
#   gt-user-pc           + PC sampling at 2^15 cycles too (do the two coexist?)
#   pc                   records + PC sampling (the default bench's run)
#   ncu                  ncu --cache-control none --clock-control none, gpu__time_duration.sum
# with each run's wall time. Outputs: $OUT/short-kernels.tgz (one file per run and mode).
set -u
W=/tmp/ul-short; rm -rf "$W"; mkdir -p "$W"
export PATH="$PATH:/usr/local/cuda/bin"
CUDA=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
INC=$CUDA/include; LIB=$CUDA/lib64; [ -f "$INC/cupti.h" ] || { INC=$CUDA/extras/CUPTI/include; LIB=$CUDA/extras/CUPTI/lib64; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader > "$W/gpu.txt"
nvcc --version | tail -2 > "$W/nvcc.txt"
ncu --version | tail -1 > "$W/ncu.txt"
nvcc -x c++ -shared -Xcompiler -fPIC -O2 -I "$INC" -L "$LIB" -lcupti -Xlinker -rpath,"$LIB" -o "$W/libtimer.so" native/cupti_timer.c || exit 1
for p in transpose_ladder kernel_lengths; do
  nvcc -O3 -arch=sm_90 -lineinfo -o "$W/$p" "scripts/device/short-kernels/$p.cu" || exit 1
done
since() { awk -v a="$(date +%s.%N)" -v b="$1" 'BEGIN { printf "%.3f", a - b }'; }
ROUNDS=${ROUNDS:-2}
for round in $(seq 1 "$ROUNDS"); do
  for p in transpose_ladder kernel_lengths; do
    run() { # MODE ENV...
      local mode=$1; shift; local t; t=$(date +%s.%N)
      env "$@" "$W/$p" --reps 20 > "$W/$p.$mode.$round.stdout" 2> "$W/$p.$mode.$round.stderr"
      echo "$p $mode round $round: exit $? $(since "$t") s" | tee -a "$W/wall.txt"
    }
    T="$W/$p"
    run plain X=1
    run activity CUDA_INJECTION64_PATH="$W/libtimer.so" UNROLL_LENS_TIMER_OUT="$T.activity.$round.jsonl"
    run gt-kernel CUDA_INJECTION64_PATH="$W/libtimer.so" UNROLL_LENS_TIMER_OUT="$T.gt-kernel.$round.jsonl" UNROLL_LENS_GPU_TIME=kernel
    run gt-user CUDA_INJECTION64_PATH="$W/libtimer.so" UNROLL_LENS_TIMER_OUT="$T.gt-user.$round.jsonl" UNROLL_LENS_GPU_TIME=user
    run gt-user-pc CUDA_INJECTION64_PATH="$W/libtimer.so" UNROLL_LENS_TIMER_OUT="$T.gt-user-pc.$round.jsonl" UNROLL_LENS_GPU_TIME=user UNROLL_LENS_PCSAMPLING=15
    run pc CUDA_INJECTION64_PATH="$W/libtimer.so" UNROLL_LENS_TIMER_OUT="$T.pc.$round.jsonl" UNROLL_LENS_PCSAMPLING=15
    t=$(date +%s.%N)
    ncu --cache-control none --clock-control none --metrics gpu__time_duration.sum --csv --print-units base \
      "$W/$p" --reps 20 > "$W/$p.ncu.$round.csv" 2> "$W/$p.ncu.$round.stderr"
    echo "$p ncu round $round: exit $? $(since "$t") s" | tee -a "$W/wall.txt"
  done
done
rm -f "$W/libtimer.so" "$W/transpose_ladder" "$W/kernel_lengths"
head -c 1500 "$W"/transpose_ladder.gt-user.1.jsonl; grep -h "error" "$W"/*.jsonl | sort | uniq -c | head
tar czf "$OUT/short-kernels.tgz" -C "$W" .
