#!/usr/bin/env bash
# Issue 42 on a GPU machine: the default CUPTI timer against ncu on short kernels. For the short
# ladder (scripts/device/short-kernels/transpose_ladder.cu, 3–18 µs kernels) and the length curve
# (length_curve.cu, 2 µs–0.55 ms), each with a fresh cache:
#   <p>.json / <p>.txt          `unroll-lens compare` with the default timer (JSON, then the table
#                               from the cached answer), its timer records in <p>-timer/
#   <p>.ncu.csv, <p>.ncu2.csv   ncu --cache-control none --clock-control none, gpu__time_duration.sum
#                               of every launch, on the binary compare built (twice: ncu's own noise)
#   <p>.activity.json / .txt    compare with UNROLL_LENS_GPU_TIME=0: the activity-record fallback a
#                               GPU without counter permission gets (its bias against ncu, its header;
#                               --counters off: no ncu counting, which the activity records do not need)
# then scripts/device/short-kernels-summary.mjs prints every kernel's medians and speedups against
# ncu's with PASS/MISS (test/unit/shortKernels.test.ts recomputes them from the recorded files).
# Outputs: $OUT/short-kernels/ when OUT is set, else a new temporary folder. Node and the CLI as
# scripts/device/bench-gpu.sh finds them ($UNROLL_LENS_CLI, else the checkout's build).
set -u
ROOT=$(pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=${SRC:-$HERE/short-kernels}
export PATH="$PATH:/usr/local/cuda/bin"
if [ -n "${OUT:-}" ]; then D="$OUT/short-kernels"; else D=$(mktemp -d /tmp/short-kernels.XXXXXX); fi
rm -rf "$D"
mkdir -p "$D"
CLI=${UNROLL_LENS_CLI:-$ROOT/bin/unroll-lens.js}
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "node: $(node --version)"
  echo "nvcc: $(nvcc --version 2>&1 | tail -n 1)"
  echo "ncu: $(ncu --version 2>&1 | tail -n 1)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv 2>&1
} > "$D/env.txt"
cat "$D/env.txt"
since() { awk -v a="$(date +%s.%N)" -v b="$1" 'BEGIN { printf "%.1f", a - b }'; }

for spec in "transpose_ladder|tl_copy,tl_copy_tile,tl_naive,tl_gather,tl_tile,tl_tile_padded,tl_tile_one,tl_tile_diagonal|--reps 25" \
  "length_curve|lc_triad,lc_chain|--reps 25"; do
  IFS='|' read -r p kernels args <<< "$spec"
  C=$(mktemp -d /tmp/short-kernels-cache.XXXXXX)
  t=$(date +%s.%N)
  XDG_CACHE_HOME=$C node "$CLI" compare "$SRC/$p.cu" --kernels "$kernels" --args "$args" --samples 20 --warmup 2 --json \
    --keep-reports "$D/$p-timer" > "$D/$p.json" 2> "$D/$p.stderr"
  echo "short-kernels: $p compare: exit $? $(since "$t") s" | tee -a "$D/wall.txt"
  XDG_CACHE_HOME=$C node "$CLI" compare "$SRC/$p.cu" --kernels "$kernels" --args "$args" --samples 20 --warmup 2 > "$D/$p.txt" 2> /dev/null
  # the binary compare built and timed: ncu times the same one
  prog=$(find "$C" -type f -executable ! -name '*.so' -size +50k | head -n 1)
  sha256sum "$prog" | sed "s|$C/||" > "$D/$p.binary.txt"
  for n in ncu ncu2; do
    t=$(date +%s.%N)
    # shellcheck disable=SC2086 # args are several words
    ncu --cache-control none --clock-control none --print-kernel-base mangled --metrics gpu__time_duration.sum --csv --page raw \
      "$prog" $args > "$D/$p.$n.csv" 2> "$D/$p.$n.stderr"
    echo "short-kernels: $p $n: exit $? $(since "$t") s" | tee -a "$D/wall.txt"
  done
  rm -rf "$C"
  C=$(mktemp -d /tmp/short-kernels-cache.XXXXXX)
  t=$(date +%s.%N)
  UNROLL_LENS_GPU_TIME=0 XDG_CACHE_HOME=$C node "$CLI" compare "$SRC/$p.cu" --kernels "$kernels" --args "$args" --samples 20 --warmup 2 --counters off --json \
    > "$D/$p.activity.json" 2> "$D/$p.activity.stderr"
  echo "short-kernels: $p compare, activity records: exit $? $(since "$t") s" | tee -a "$D/wall.txt"
  UNROLL_LENS_GPU_TIME=0 XDG_CACHE_HOME=$C node "$CLI" compare "$SRC/$p.cu" --kernels "$kernels" --args "$args" --samples 20 --warmup 2 --counters off \
    > "$D/$p.activity.txt" 2> /dev/null
  rm -rf "$C"
done
node "$HERE/short-kernels-summary.mjs" "$D"
