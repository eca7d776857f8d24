#!/usr/bin/env bash
# Issue 13 calibration grid on the GPU machine (carry .device for node). Phases, in order:
#   build    generate the 12 programs (3 mixes × 1/2/4/8 chains, 12 hot-loop sizes 4–512 KiB each),
#            compile them in parallel (nvcc -O3 -arch=ARCH -lineinfo), record each kernel's SASS size
#   time     run each program: every kernel at 4/8/16/32 warps per SM, 7 timed launches per point
#   profile  one ncu run per program: the 48 measured launches (after 48 warm-ups) with the
#            duration, the warp-stall ratios and the executed instructions (raw page CSV)
# Usage: bash run.sh build|time|profile [ARCH]   (work in /tmp/ul-grid, output in $OUT/icache-grid)
set -u
PHASE=${1:?phase}
ARCH=${2:-sm_90}
W=/tmp/ul-grid
O=${OUT:-/tmp/out}/icache-grid
mkdir -p "$O" /tmp/ul-node
export PATH="/tmp/ul-node:/usr/local/cuda/bin:$PATH"
[ -x /tmp/ul-node/node ] || { xz -dc .device/node.xz > /tmp/ul-node/node && chmod +x /tmp/ul-node/node; }
HERE=$(cd "$(dirname "$0")" && pwd)
case "$PHASE" in
build)
  # MIXES (one mix)/SIZES/JOBS narrow a build (e.g. MIXES=ldg SIZES=4,…,256: ptxas needs minutes for a
  # 512 KiB straight-line body with loads); programs built before stay.
  [ -n "${MIXES:-}" ] || rm -rf "$W"
  mkdir -p "$W"
  node "$HERE/generate.mjs" "$W" ${MIXES:+--mixes $MIXES} ${SIZES:+--sizes $SIZES} >> "$O/generate.txt"
  { nvcc --version | tail -2; ncu --version | tail -1; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm --format=csv; } > "$O/versions.txt" 2>&1
  cd "$W"
  ls grid_${MIXES:-}*.cu | xargs -P ${JOBS:-12} -I{} bash -c 's=$(date +%s.%N); nvcc -O3 -arch='"$ARCH"' -lineinfo -o "$(basename {} .cu)" {} 2> "$(basename {} .cu).nvcc.txt"; echo "{} rc=$? $(awk "BEGIN{print $(date +%s.%N) - $s}") s"' >> "$O/compile.txt"
  for b in grid_*; do [ -x "$b" ] || continue
    cuobjdump -sass "$b" | awk -v p="$b" '/Function :/{f=$3} /\/\*[0-9a-f]+\*\/ /{n[f]++} END{for (k in n) printf "%s %s %d %d\n", p, k, n[k], n[k]*16}'
  done | sort > "$O/sizes.txt"
  wc -l "$O/sizes.txt"; cat "$O/compile.txt"
  ;;
time)
  cd "$W"
  : > "$O/points.txt"
  for b in grid_*; do [ -x "$b" ] || continue
    ./"$b" --reps 7 >> "$O/points.txt" 2>> "$O/run-errors.txt"
  done
  wc -l "$O/points.txt"
  ;;
profile)
  cd "$W"
  STALL='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio'
  for b in grid_*; do [ -x "$b" ] || continue
    s=$(date +%s)
    n=$(./"$b" --profile | grep -c '^point ')  # warm-ups = measured launches = the points that fit
    ncu --metrics "gpu__time_duration.sum,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,$STALL" \
      --launch-skip $n --launch-count $n --clock-control none --csv --page raw --print-kernel-base mangled \
      ./"$b" --profile > "$O/ncu-$b.csv" 2> "$O/ncu-$b.stderr"
    echo "$b rc=$? $(( $(date +%s) - s )) s" >> "$O/profile.txt"
  done
  cat "$O/profile.txt"
  # One archive: the device tool brings back a limited number of files.
  tar czf "$O/profile.tgz" -C "$O" $(cd "$O" && ls ncu-*) && rm -f "$O"/ncu-*
  ;;
esac
