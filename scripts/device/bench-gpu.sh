#!/usr/bin/env bash
# `npm run bench:gpu` (issues 11 and 25), on a GPU host. In one run on the same GPU:
#   (a) the hand-written loop, scripts/device/hand-loop.sh (pragma, nvcc -O3, one ncu run per
#       factor, durations and warp-stall ratios) on matmul_basic's k loop,
#       cuda-samples/matmul_unroll.cu line 51; then the same loop with durations only (hand-time/)
#       and with durations only under --cache-control none (hand-nocache/: the medians the CUPTI
#       timer, the default, is compared with);
#   (b) `unroll-lens bench` on the same loop and factors with cold caches (a fresh
#       XDG_CACHE_HOME: no builds, no measurements), then `--stalls off` the same way;
#   (c) the same command again (cached re-run: its JSON's timing.gpuRuns must be 0);
#   (d) with 2 GPUs or more (nvidia-smi -L): the bench with fresh caches on --gpus 0, then --gpus 0,1.
# Then scripts/device/bench-gpu-summary.mjs prints both wall times, their ratio, every factor's
# two medians and the largest difference, the 2-GPU speed-up and the cached re-run, PASS/MISS
# per target, and writes summary.md and summary.json beside the outputs.
#
# Outputs: $OUT/bench-gpu/ when OUT is set (the device runner), else a new temporary folder.
# Node: the one on PATH (version 20 or later), else .device/node.xz (carried to machines without
# Node, as scripts/device/run-cli-bench.sh does). CLI: $UNROLL_LENS_CLI, else bin/unroll-lens.js
# when the checkout is built (out/), else the bundle .device/cli/unroll-lens.js
# (scripts/device/bundle-cli.mjs). CLOCK (default none): ncu --clock-control for both sides.
# ARGS (default "--only matmul_basic --reps 25": 25 launches in one run): the program's arguments
# for both sides; "--only matmul_basic --reps 8" is a program with few launches per run (7 timed),
# for which the hand loop needs RUNS=3 ncu runs per factor to get its 20 launches.
set -u
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
CLOCK=${CLOCK:-none}
ARGS=${ARGS:---only matmul_basic --reps 25}
RUNS=${RUNS:-1}
export CLOCK ARGS RUNS
{ command -v nvcc && command -v ncu; } > /dev/null || export PATH="$PATH:/usr/local/cuda/bin"
if [ -n "${OUT:-}" ]; then D="$OUT/bench-gpu"; else D=$(mktemp -d /tmp/bench-gpu.XXXXXX); fi
rm -rf "$D"
mkdir -p "$D"
D=$(cd "$D" && pwd)

# ---- Node and the CLI
node_ok() { command -v node > /dev/null && node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)' 2> /dev/null; }
if ! node_ok; then
  if [ ! -f .device/node.xz ]; then
    echo "bench:gpu: no Node 20+ on PATH and no .device/node.xz to unpack" >&2
    exit 2
  fi
  NODE_DIR=$(mktemp -d /tmp/bench-gpu-node.XXXXXX)
  trap 'rm -rf "$NODE_DIR"' EXIT
  xz -dc .device/node.xz > "$NODE_DIR/node" && chmod +x "$NODE_DIR/node"
  export PATH="$NODE_DIR:$PATH"
fi
if [ -n "${UNROLL_LENS_CLI:-}" ]; then
  CLI=$UNROLL_LENS_CLI
elif [ -f out/src/cli/main.js ] && [ -d node_modules ]; then
  CLI=$ROOT/bin/unroll-lens.js
elif [ -f .device/cli/unroll-lens.js ]; then
  CLI=$ROOT/.device/cli/unroll-lens.js
else
  echo "bench:gpu: no CLI: run \`npm run build\` (or carry .device/cli from scripts/device/bundle-cli.mjs)" >&2
  exit 2
fi

# Seconds since $1 (a `date +%s.%N` stamp), with millisecond precision.
since() { awk -v a="$(date +%s.%N)" -v b="$1" 'BEGIN { printf "%.3f", a - b }'; }

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "node: $(node --version) ($(command -v node))"
  echo "cli: $CLI"
  echo "clock-control: $CLOCK"
  echo "args: $ARGS (hand loop: $RUNS ncu run(s) per factor)"
  echo "nvcc: $(nvcc --version 2>&1 | tail -n 2 | tr '\n' ' ')"
  echo "ncu: $(ncu --version 2>&1 | tail -n 1)"
  nvidia-smi -L 2>&1
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv 2>&1
} > "$D/env.txt"
cat "$D/env.txt"
NGPUS=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU ')

# Warm the disk cache for nvcc, ncu and the sample equally for both sides (not timed).
W=$(mktemp -d /tmp/bench-gpu-warm.XXXXXX)
nvcc -O3 -arch=sm_90 -o "$W/prog" cuda-samples/matmul_unroll.cu > /dev/null 2>&1
ncu --version > /dev/null 2>&1
rm -rf "$W"

# ours NAME [extra CLI options]: the bench, timed; JSON on stdout, progress on stderr.
ours() {
  local name=$1 t rc
  shift
  t=$(date +%s.%N)
  node "$CLI" bench cuda-samples/matmul_unroll.cu --loop 51 --factors default,1,2,4,8,16,full \
    --args "$ARGS" --samples 20 --warmup 2 --clock-control "$CLOCK" --json "$@" \
    > "$D/$name.json" 2> "$D/$name.stderr"
  rc=$?
  since "$t" > "$D/$name.wall_s"
  echo "$rc" > "$D/$name.exit"
  echo "bench:gpu: $name: $(cat "$D/$name.wall_s") s, exit $rc"
}

# (a) the hand loop
echo "bench:gpu: (a) hand loop"
bash scripts/device/hand-loop.sh "$D/hand" 2>&1 | tee "$D/hand.log"
echo "${PIPESTATUS[0]}" > "$D/hand.exit"
echo "bench:gpu: (a) hand loop, durations only"
METRICS=gpu__time_duration.sum bash scripts/device/hand-loop.sh "$D/hand-time" > "$D/hand-time.log" 2>&1
echo "bench:gpu: (a) hand loop, durations only, --cache-control none"
METRICS=gpu__time_duration.sum CACHE=none bash scripts/device/hand-loop.sh "$D/hand-nocache" > "$D/hand-nocache.log" 2>&1

# (b) ours, cold; (c) the same again, cached
CACHE=$(mktemp -d /tmp/bench-gpu-cache.XXXXXX)
echo "bench:gpu: (b) unroll-lens bench, cold caches ($CACHE)"
XDG_CACHE_HOME=$CACHE ours ours-cold
echo "bench:gpu: (c) the same command again (cached)"
XDG_CACHE_HOME=$CACHE ours ours-cached
rm -rf "$CACHE"
CACHE=$(mktemp -d /tmp/bench-gpu-cache.XXXXXX)
echo "bench:gpu: (b) unroll-lens bench --stalls off, cold caches"
XDG_CACHE_HOME=$CACHE ours ours-nostall --stalls off
rm -rf "$CACHE"

# (d) one GPU against two, each with cold caches
if [ "$NGPUS" -ge 2 ]; then
  for g in 0 0,1; do
    CACHE=$(mktemp -d /tmp/bench-gpu-cache.XXXXXX)
    echo "bench:gpu: (d) --gpus $g, cold caches"
    XDG_CACHE_HOME=$CACHE ours "ours-gpus-${g//,/-}" --gpus "$g"
    rm -rf "$CACHE"
  done
else
  echo "bench:gpu: (d) skipped: $NGPUS GPU(s)"
fi

# (e) ALTERNATIVES=1: other ways to spend the GPU, each from cold caches: ncu instead of the
# CUPTI timer, how many ncu processes share a GPU, and how ncu passes are split between durations
# and stall metrics (docs/measurements.md).
if [ "${ALTERNATIVES:-0}" = 1 ]; then
  for alt in "--timer ncu" "--timer ncu --profiles-per-gpu 1" "--timer ncu --profiles-per-gpu 3" "--timer ncu --ncu-passes split"; do
    CACHE=$(mktemp -d /tmp/bench-gpu-cache.XXXXXX)
    name="ours-alt-$(echo "$alt" | sed 's/^--//; s/ /_/g')"
    echo "bench:gpu: (e) $alt, cold caches"
    # shellcheck disable=SC2086 # the flag and its value are two words
    XDG_CACHE_HOME=$CACHE ours "$name" $alt
    rm -rf "$CACHE"
  done
fi

node scripts/device/bench-gpu-summary.mjs "$D"
rc=$?
echo "bench:gpu: outputs in $D"
exit $rc
