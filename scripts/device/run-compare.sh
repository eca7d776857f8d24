#!/usr/bin/env bash
# Issue 26 on a real GPU: `unroll-lens compare` on our two ladders against the programs' own
# cudaEvent timing (each sample prints time_ms = the median of --reps event-timed launches).
#   reduce_unroll.cu: interleaved → ×2, ×4, ×8 data blocks per thread block → ×8 + unrolled warp → complete unroll
#   coarsening.cu:    gj_rows1/2/4/8 and potential_pts1/2/4/8 (1, 2, 4, 8 points per thread)
# For each: a plain run (the program's own times), compare with the CUPTI timer (cold caches; its
# timer records kept), and compare under ncu (--cache-control none --clock-control none: executed
# instructions and achieved occupancy). Outputs: $OUT/compare.tgz.
set -u
W=/tmp/ul-compare; rm -rf "$W"; mkdir -p "$W" /tmp/ul-node
xz -dc .device/node.xz > /tmp/ul-node/node && chmod +x /tmp/ul-node/node
export PATH="/tmp/ul-node:$PATH:/usr/local/cuda/bin"
UL="node .device/cli/unroll-lens.js"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader > "$W/gpu.txt"
nvcc --version | tail -2 > "$W/nvcc.txt"
since() { awk -v a="$(date +%s.%N)" -v b="$1" 'BEGIN { printf "%.1f", a - b }'; }
run_one() { # NAME FILE KERNELS ARGS
  local name=$1 file=$2 kernels=$3 args=$4 t
  nvcc -O3 -arch=sm_90 -o "$W/$name.prog" "$file" && "$W/$name.prog" $args > "$W/$name.plain.stdout" 2>&1
  # two more plain runs: is the program's own median stable from run to run?
  for i in 2 3; do "$W/$name.prog" $args > "$W/$name.plain-$i.stdout" 2>&1; done
  echo "$name plain exit $?" | tee -a "$W/wall.txt"
  rm -f "$W/$name.prog"
  for timer in cupti ncu; do
    C=$(mktemp -d); t=$(date +%s.%N)
    XDG_CACHE_HOME=$C $UL compare "$file" --kernels "$kernels" --args "$args" --samples 20 --warmup 2 --timer "$timer" \
      --clock-control none --cache-control none --json --keep-reports "$W/keep-$name-$timer" \
      > "$W/$name.$timer.json" 2> "$W/$name.$timer.stderr"
    echo "$name compare --timer $timer: $(since "$t") s, exit $?" | tee -a "$W/wall.txt"
    XDG_CACHE_HOME=$C $UL compare "$file" --kernels "$kernels" --args "$args" --samples 20 --warmup 2 --timer "$timer" \
      --clock-control none --cache-control none > "$W/$name.$timer.txt" 2> /dev/null
    rm -rf "$C"
  done
}
# ONLY=reduce or ONLY=coarsen runs one; the reduction at 2^27 elements, so every rung runs over 100 µs
REDUCE="reduce_interleaved,reduce_unroll2,reduce_unroll4,reduce_unroll8,reduce_unroll8_warptail,reduce_complete"
[ "${ONLY:-reduce}" = reduce ] && run_one reduce cuda-samples/reduce_unroll.cu "$REDUCE" "--reps 20 --size 134217728"
[ "${ONLY:-coarsen}" = coarsen ] && run_one coarsen cuda-samples/coarsening.cu \
  gj_rows1,gj_rows2,gj_rows4,gj_rows8,potential_pts1,potential_pts2,potential_pts4,potential_pts8 "--reps 20"
cat "$W"/*.cupti.txt
grep -h "kernel=" "$W"/*.plain.stdout
tar czf "$OUT/compare.tgz" -C "$W" .
