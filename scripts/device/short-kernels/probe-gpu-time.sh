#!/usr/bin/env bash
# Issue 42, first look: which kernel time agrees with ncu's gpu__time_duration on short kernels?
# For each program (transpose_ladder, length_curve, matmul_unroll's matmul_basic) on one GPU:
#   plain            the program alone (its wall time)
#   activity         the CUPTI timer's serialised activity records (the default before issue 42)
#   gt, gt2          the same timer with UNROLL_LENS_GPU_TIME=1: gpu__time_duration.sum read by
#                    CUPTI's range profiler in the run, one range a launch (twice: run-to-run noise)
#   gt-pc            gt with PC sampling on (2^15 cycles), as the first run of a bench with stalls
#   ncu, ncu2        ncu --cache-control none --clock-control none, gpu__time_duration.sum (twice)
# then scripts/device/short-kernels/probe-summary.py prints every kernel's medians and speedups.
#   bash probe-gpu-time.sh DIR_WITH_SOURCES   (outputs under $OUT/probe, or /tmp/probe-gt)
set -u
SRC=$(cd "${1:-$(dirname "$0")}" && pwd)
ROOT=$(pwd)
export PATH="$PATH:/usr/local/cuda/bin"
O=${OUT:-/tmp}/probe; rm -rf "$O"; mkdir -p "$O"
W=/tmp/probe-gt; rm -rf "$W"; mkdir -p "$W"
CUDA=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader; nvcc --version | tail -1; ncu --version | tail -1; echo "cuda=$CUDA"; } | tee "$O/env.txt"
nvcc -shared -Xcompiler -fPIC -O2 -I "$CUDA/include" -L "$CUDA/lib64" -lcupti -Xlinker "-rpath,$CUDA/lib64" -o "$W/libtimer.so" -x c++ "$SRC/cupti_timer.c" 2>&1 | tee "$O/build.txt"
nvcc -O3 -arch=sm_90 -o "$W/transpose_ladder" "$SRC/transpose_ladder.cu" &
nvcc -O3 -arch=sm_90 -o "$W/length_curve" "$SRC/length_curve.cu" &
nvcc -O3 -arch=sm_90 -o "$W/matmul_unroll" "$ROOT/cuda-samples/matmul_unroll.cu" &
wait
since() { awk -v a="$(date +%s.%N)" -v b="$1" 'BEGIN { printf "%.3f", a - b }'; }
one() { # PROG TAG ARGS... (env set by the caller)
  local p=$1 tag=$2 t; shift 2
  t=$(date +%s.%N)
  "$@" > "$O/$p.$tag.stdout" 2> "$O/$p.$tag.stderr"
  echo "$p $tag exit $? wall $(since "$t") s" | tee -a "$O/wall.txt"
}
for spec in "transpose_ladder|--reps 25" "length_curve|--reps 25" "matmul_unroll|--only matmul_basic --reps 25"; do
  p=${spec%%|*}; args=${spec#*|}
  # shellcheck disable=SC2086
  one "$p" plain "$W/$p" $args
  for tag in activity gt gt2 gt-pc; do
    env=(CUDA_INJECTION64_PATH="$W/libtimer.so" UNROLL_LENS_TIMER_OUT="$O/$p.$tag.jsonl")
    case $tag in gt | gt2) env+=(UNROLL_LENS_GPU_TIME=1) ;; gt-pc) env+=(UNROLL_LENS_GPU_TIME=1 UNROLL_LENS_PCSAMPLING=15) ;; esac
    # shellcheck disable=SC2086
    one "$p" "$tag" env "${env[@]}" "$W/$p" $args
  done
  for tag in ncu ncu2; do
    # shellcheck disable=SC2086
    one "$p" "$tag" ncu --cache-control none --clock-control none --kernel-name-base mangled --metrics gpu__time_duration.sum --csv --page raw "$W/$p" $args
  done
done
python3 "$SRC/probe-summary.py" "$O" | tee "$O/summary.txt"
