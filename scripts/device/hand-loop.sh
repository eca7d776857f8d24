#!/usr/bin/env bash
# The hand-written unroll sweep of issue 11, as a user would write it without Unroll Lens:
# for each factor, put the pragma on the k loop of matmul_basic (cuda-samples/matmul_unroll.cu,
# line 51), `nvcc -O3`, then ONE ncu run collecting gpu__time_duration.sum and the warp-stall
# ratios for 20 launches after 2 warm-up launches. Saves one raw-page CSV per factor and prints
# the total wall time. scripts/device/bench-gpu.sh runs it next to `unroll-lens bench`.
#
#   bash scripts/device/hand-loop.sh [OUTDIR]     (default: a new temporary folder)
#
# Writes OUTDIR/hand-<factor>.csv (ncu's stdout: its ==PROF== lines, the program's output, then
# the CSV), hand-<factor>.stderr, hand-<factor>.cu (the source built) and hand-loop.wall_s.
# Env: FACTORS (default default,1,2,4,8,16,full), CLOCK (default none: this workplace's rule,
# leave the card's clocks alone), CACHE (ncu --cache-control, default all: ncu's own default),
# METRICS (default: the tool's duration and stall metrics), ARGS (the program's arguments, default
# --only matmul_basic --reps 25), RUNS (default 1: ncu runs per factor; a program with few launches
# per run needs several for 20 launches, as a user would run it again: the first run skips the 2
# warm-up launches, later ones write hand-<factor>.run<N>.csv), NVCC, NCU.
set -u
cd "$(dirname "$0")/../.."
SRC=cuda-samples/matmul_unroll.cu
LINE=51
FACTORS=${FACTORS:-default,1,2,4,8,16,full}
CLOCK=${CLOCK:-none}
# The same stall metrics as the tool (src/engine/gpu/stages/time.ts, PROFILE_METRICS).
METRICS=${METRICS:-'gpu__time_duration.sum,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio'}
CACHE=${CACHE:-all}
ARGS=${ARGS:---only matmul_basic --reps 25}
RUNS=${RUNS:-1}
{ command -v nvcc && command -v ncu; } > /dev/null || export PATH="$PATH:/usr/local/cuda/bin"
NVCC=${NVCC:-nvcc}
NCU=${NCU:-ncu}
OUTDIR=${1:-$(mktemp -d /tmp/hand-loop.XXXXXX)}
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)

if ! sed -n "${LINE}p" "$SRC" | grep -Eq '^[[:space:]]*for[[:space:]]*\('; then
  echo "hand-loop: line $LINE of $SRC is not the loop's for: $(sed -n "${LINE}p" "$SRC")" >&2
  exit 2
fi

# with_pragma FACTOR < source > source: the pragma on its own line before the loop (indented like
# it), replacing a `#pragma unroll` already there; `default` removes it, `full` is bare.
with_pragma() {
  local pragma
  case $1 in
    default) pragma= ;;
    full) pragma='#pragma unroll' ;;
    *) pragma="#pragma unroll $1" ;;
  esac
  awk -v L="$LINE" -v P="$pragma" '
    NR == L - 1 && /^[[:space:]]*#[[:space:]]*pragma[[:space:]]+unroll([[:space:]]|$)/ { next }
    NR == L && P != "" { match($0, /^[[:space:]]*/); print substr($0, 1, RLENGTH) P }
    { print }'
}

# Seconds since $1 (a `date +%s.%N` stamp), with millisecond precision.
since() { awk -v a="$(date +%s.%N)" -v b="$1" 'BEGIN { printf "%.3f", a - b }'; }

fail=0
T0=$(date +%s.%N)
for f in ${FACTORS//,/ }; do
  t=$(date +%s.%N)
  work=$(mktemp -d /tmp/hand-loop-build.XXXXXX)
  with_pragma "$f" < "$SRC" > "$work/matmul_unroll.cu"
  cp "$work/matmul_unroll.cu" "$OUTDIR/hand-$f.cu"
  if ! (cd "$work" && "$NVCC" -O3 -arch=sm_90 -o prog matmul_unroll.cu) 2> "$OUTDIR/hand-$f.stderr"; then
    echo "hand-loop: nvcc failed for factor $f (see $OUTDIR/hand-$f.stderr)" >&2
    fail=1
    rm -rf "$work"
    continue
  fi
  for ((run = 1; run <= RUNS; run++)); do
    if [ "$run" = 1 ]; then skip=2 csv="$OUTDIR/hand-$f.csv"; else skip=0 csv="$OUTDIR/hand-$f.run$run.csv"; fi
    # shellcheck disable=SC2086 # ARGS is several words
    (cd "$work" && "$NCU" --clock-control "$CLOCK" --cache-control "$CACHE" --kernel-name-base mangled --kernel-name 'regex:^_Z12matmul_basic.*' \
      --launch-skip "$skip" --launch-count 20 --metrics "$METRICS" --csv --page raw \
      ./prog $ARGS) > "$csv" 2>> "$OUTDIR/hand-$f.stderr"
    rc=$?
    [ "$rc" = 0 ] || { echo "hand-loop: ncu exited $rc for factor $f" >&2; fail=1; }
  done
  rm -rf "$work"
  echo "hand-loop: $f $(since "$t") s"
done
WALL=$(since "$T0")
echo "$WALL" > "$OUTDIR/hand-loop.wall_s"
echo "hand-loop: total wall $WALL s (outputs in $OUTDIR)"
exit $fail
