#!/usr/bin/env bash
# Issue 13 (recommended factor before running): GPU-measured sweeps of the bundled samples' main
# unrolled loops, the ground truth the static recommendation is scored against
# (test/fixtures/gpu/h100/recommend/, docs/measurements.md). The machine has no Node: the caller
# carries .device/node.xz and the bundled CLI in $CLI (node scripts/device/bundle-cli.mjs).
# ONLY=name1,name2 runs a subset. STATIC=1 runs everything with --static instead, here (nvcc and
# nvdisasm, no GPU), and keeps each full result (the SASS facts the static rule reads, which --json
# leaves out) as NAME.static.json: the fixtures test/unit/recommend.test.ts scores.
set -u
CLI=${CLI:-.device/recommend/cli}
OUT=${OUT:-/tmp/ul-recommend-out}
W=/tmp/ul-recommend; rm -rf "$W"; mkdir -p "$W" "$OUT"
if [ -f .device/node.xz ] && ! command -v node >/dev/null; then
  mkdir -p /tmp/ul-node && xz -dc .device/node.xz > /tmp/ul-node/node && chmod +x /tmp/ul-node/node
  export PATH="/tmp/ul-node:$PATH"
fi
export XDG_CACHE_HOME=/tmp/ul-cache
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader; ncu --version | tail -1; nvcc --version | tail -2; date -u; } > "$W/env.txt" 2>&1
MODE=(--samples 20 --warmup 2 --clock-control none)
[ "${STATIC:-0}" = 1 ] && MODE=(--static)
T0=$(date +%s)
sweep() {  # sweep NAME FILE [CLI options…] (FILE under cuda-samples/ unless it names a folder)
  local name=$1 file=$2; shift 2
  [[ "$file" == */* ]] || file="cuda-samples/$file"
  if [ -n "${ONLY:-}" ] && [[ ",$ONLY," != *",$name,"* ]]; then return; fi
  echo "[+$(( $(date +%s) - T0 ))s] $name"
  echo "unroll-lens sweep $file ${MODE[*]} --json $*" >> "$W/commands.txt"
  local t=$(date +%s%N)
  local save=(); [ "${STATIC:-0}" = 1 ] && save=(--save "$W/save-$name")
  timeout 170 node "$CLI/unroll-lens.js" sweep "$file" "${MODE[@]}" --json "${save[@]}" "$@" > "$W/$name.json" 2> "$W/$name.stderr"
  echo "exit $? wall $(( ($(date +%s%N) - t) / 1000000 )) ms" >> "$W/$name.stderr"
  tail -n 1 "$W/$name.stderr"
  if [ "${STATIC:-0}" = 1 ]; then cp "$W/save-$name"/.unroll-lens/results/*.json "$OUT/$name.static.json"; return; fi
  # Pack after every sweep: whatever finished comes back even if the run is cut off.
  tar czf "$OUT/recommend.tar.gz" -C "$W" .
}
if [ "${GROUP:-1}" = 1 ] || [ "${GROUP:-1}" = all ]; then
sweep icache_cliff_b512 icache_cliff.cu --kernel hot_loop --param BODY=512 --loops 72 --factors 1,2,4,8,16,64,full \
  --args "--body 512 --threads 128 --reps 25"
sweep linear_small linear_small.cu --kernel linear_small --loops 74 --factors default,1,2,4,8,16,32,full --args "--only linear_small"
sweep gj_rows1 coarsening.cu --kernel gj_rows1 --loops 78 --factors default,1,2,4,8,16,32,full --args "--only gj_rows1 --reps 5"
sweep potential_pts1 coarsening.cu --kernel potential_pts1 --loops 227 --factors default,1,2,4,8,16,32 --args "--only potential_pts1 --reps 5"
sweep matmul_basic matmul_unroll.cu --kernel matmul_basic --loops 51 --factors default,1,2,4,8,16,32 --args "--only matmul_basic --size 1024 --reps 5"
sweep matvec_thread_per_row matvec.cu --kernel matvec_thread_per_row --loops 54 --factors default,1,2,4,8,16,32 --args "--only matvec_thread_per_row --reps 5"
sweep library_rowsum library_style.cu --kernel library_rowsum --loops 88 --factors default,1,2,4,8,16 --args "--only library_rowsum --reps 5"
sweep reduce_unroll8 reduce_unroll.cu --kernel reduce_unroll8 --loops 141 --factors default,1,2,4,8 --args "--only reduce_unroll8 --reps 5"
# Recorded earlier (test/fixtures/gpu/h100/sweep/, scripts/device/run-sweep.sh): only their static facts are made here.
if [ "${STATIC:-0}" = 1 ]; then
  sweep icache_cliff icache_cliff.cu --kernel hot_loop --loops 72 --factors 1,2,4,8,16,64,full
  sweep matvec_exhaustive matvec.cu --kernel matvec_warp_per_row --loops 70,74 --factors default,1,2,4,8,16,full
  # Recorded on the H100 with the default clock control (test/fixtures/gpu/h100/recommend/icache_ilp.env.txt).
  sweep icache_ilp icache_ilp.cu --loops 64 --factors 64,full --param BODY=256,512,1024,1536,2048
fi
sweep accum_array_pragma manual_forms.cu --kernel accum_array_pragma --loops 133 --factors default,1,2,4,8,full --args "--only accum_array_pragma --reps 5"
fi
# The second run (GROUP=2): more of the samples' loops.
if [ "${GROUP:-1}" = 2 ] || [ "${GROUP:-1}" = all ]; then
  sweep linear_small_rolled linear_small.cu --kernel linear_small_rolled --loops 97 --factors 1,2,4,8,16,32,full --args "--only linear_small_rolled"
  sweep potential_pts4 coarsening.cu --kernel potential_pts4 --loops 283 --factors default,1,2,4,8,16 --args "--only potential_pts4 --reps 5"
  sweep library_matvec library_style.cu --kernel library_matvec --loops 69 --factors default,1,2,4,8,16 --args "--only library_matvec --reps 5"
  sweep matmul_unroll4 matmul_unroll.cu --kernel matmul_unroll4 --loops 83 --factors default,1,2,4,8 --args "--only matmul_unroll4 --size 1024 --reps 5"
  sweep reduce_interleaved reduce_unroll.cu --kernel reduce_interleaved --loops 63 --factors default,1,2,4,8 --args "--only reduce_interleaved --reps 5"
  sweep gj_rows4 coarsening.cu --kernel gj_rows4 --loops 135 --factors default,1,2,4,8,16,32,full --args "--only gj_rows4 --reps 5"  # last: its full unroll compiles for about 2 minutes
fi
# The third run (GROUP=3, issue 22): device-only kernels of the five kinds the issue names.
if [ "${GROUP:-1}" = 3 ] || [ "${GROUP:-1}" = all ]; then
  K=scripts/device/recommend-kinds.cu
  sweep compute_poly $K --kernel compute_poly --loops 48 --factors default,2,4,8,16,32 --args "--only compute_poly"
  sweep latency_gather $K --kernel latency_gather --loops 62 --factors default,2,4,8,16,32 --args "--only latency_gather"
  sweep stream_triad $K --kernel stream_triad --loops 74 --factors default,2,4,8,16 --args "--only stream_triad"
  sweep regs_layer $K --kernel regs_layer --loops 88 --factors default,2,4,8,16 --args "--only regs_layer"
  sweep icache_rounds $K --kernel icache_rounds --loops 114 --factors default,2,8,32,64,128 --args "--only icache_rounds"
fi
echo "[+$(( $(date +%s) - T0 ))s] done"
ls -la "$OUT"
