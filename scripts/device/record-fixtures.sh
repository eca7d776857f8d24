#!/usr/bin/env bash
# Runs on the GPU machine (see docs/measurements.md): records real outputs that CI replays.
# Builds the samples and the reliability programs, runs them, profiles chosen kernels with the
# exact ncu command line Unroll Lens uses (metrics, mangled-name filter, launch skip/count) and
# sweeps the instruction-cache cliff. Everything lands in one tarball under $OUT.
#   bash scripts/device/record-fixtures.sh            # needs nvcc, ncu, nvidia-smi
set -u
W=${WORK:-/tmp/ul-rec}; B=/tmp/ul-bin; rm -rf "$W" "$B"; mkdir -p "$W" "$B"
CLOCK=${CLOCK:-none}   # this workplace's rule: leave the card's clocks alone
METRICS='gpu__time_duration.sum,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread'
T0=$(date +%s)
log() { echo "[record +$(( $(date +%s) - T0 ))s] $*"; }
{ date -u; uname -r; nvidia-smi --query-gpu=name,compute_cap,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv;
  nvcc --version | tail -2; ncu --version | tail -1; command -v node && node --version; nproc; } > "$W/env.txt" 2>&1
cat "$W/env.txt"
nvidia-smi -q -x > "$W/nvidia-smi-q-x.xml"

log "build"
for s in matmul_unroll reduce_unroll coarsening matvec linear_small icache_cliff; do
  nvcc -O3 -arch=sm_90 -lineinfo -o "$B/$s" "cuda-samples/$s.cu" 2> "$W/$s.build.txt" &
done
nvcc -O3 -arch=sm_90 -lineinfo -o "$B/crash" test/fixtures/cuda/crash.cu &
nvcc -O3 -arch=sm_90 -lineinfo -o "$B/hang" test/fixtures/cuda/hang.cu &
nvcc -O3 -arch=sm_90 -lineinfo -o "$B/wrong_ok" test/fixtures/cuda/wrong.cu &
nvcc -O3 -arch=sm_90 -lineinfo -DWRONG -o "$B/wrong_bad" test/fixtures/cuda/wrong.cu &
wait
ls -la "$B"

log "plain runs"
for s in matmul_unroll reduce_unroll coarsening matvec linear_small icache_cliff; do
  timeout 120 "$B/$s" > "$W/$s.stdout" 2> "$W/$s.stderr"; echo $? > "$W/$s.exit"
done
for p in crash wrong_ok wrong_bad; do timeout 60 "$B/$p" > "$W/$p.stdout" 2> "$W/$p.stderr"; echo $? > "$W/$p.exit"; done
timeout -s TERM 10 "$B/hang" > "$W/hang.stdout" 2> "$W/hang.stderr"; echo $? > "$W/hang.exit"

prof() {  # prof NAME MANGLED SKIP COUNT program args...
  local name=$1 k=$2 skip=$3 count=$4; shift 4
  ncu --kernel-name-base mangled --kernel-name "regex:^${k}\$" --launch-skip "$skip" --launch-count "$count" \
      --metrics "$METRICS" --clock-control "$CLOCK" --export "$B/$name" --force-overwrite "$@" > "$W/$name.ncu-stdout.txt" 2> "$W/$name.ncu-stderr.txt"
  echo "exit $?" >> "$W/$name.ncu-stdout.txt"
  ncu --import "$B/$name.ncu-rep" --csv --page raw > "$W/$name.raw.csv" 2>&1
}
log "profile sample kernels (20 launches after 2 warm-ups)"
prof matmul_basic _Z12matmul_basicPKfS0_Pfi 2 20 "$B/matmul_unroll" --only matmul_basic --reps 25
prof matmul_unroll4 _Z14matmul_unroll4PKfS0_Pfi 2 20 "$B/matmul_unroll" --only matmul_unroll4 --reps 25
prof reduce_unroll8 _Z14reduce_unroll8PKiPij 2 20 "$B/reduce_unroll" --only reduce_unroll8 --reps 25
prof gj_rows4 _Z8gj_rows4PKfPf 2 20 "$B/coarsening" --only gj_rows4 --reps 25
prof matvec_warp_per_row _Z19matvec_warp_per_rowPKfS0_Pfii 2 20 "$B/matvec" --only matvec_warp_per_row --reps 25
prof linear_small _Z12linear_smallPKfS0_S0_Pf 2 20 "$B/linear_small" --only linear_small --reps 25
prof linear_small_rolled _Z19linear_small_rolledPKfS0_S0_Pf 2 20 "$B/linear_small" --only linear_small_rolled --reps 25
cp "$B/matmul_basic.ncu-rep" "$W/matmul_basic.ncu-rep"

log "source counters for one kernel"
ncu --kernel-name-base mangled --kernel-name 'regex:^_Z12linear_smallPKfS0_S0_Pf$' --launch-skip 2 --launch-count 1 \
    --section SourceCounters --section WarpStateStats --import-source yes --clock-control "$CLOCK" \
    --export "$B/linear_src" --force-overwrite "$B/linear_small" --only linear_small --reps 5 > "$W/linear_src.ncu-stdout.txt" 2>&1
ncu --import "$B/linear_src.ncu-rep" --csv --page source --print-source cuda,sass > "$W/linear_small.source-cuda-sass.csv" 2>&1

log "ncu failure outputs"
ncu --kernel-name-base mangled --kernel-name 'regex:^no_such_kernel$' --metrics gpu__time_duration.sum "$B/wrong_ok" > "$W/ncu-no-kernels.stdout" 2> "$W/ncu-no-kernels.stderr"; echo $? > "$W/ncu-no-kernels.exit"
if id nobody >/dev/null 2>&1; then
  cp "$B/wrong_ok" /tmp/wrong_ok_pub && chmod 755 /tmp/wrong_ok_pub
  su -s /bin/sh nobody -c "cd /tmp && HOME=/tmp ncu --metrics gpu__time_duration.sum /tmp/wrong_ok_pub" > "$W/ncu-nonroot.stdout" 2> "$W/ncu-nonroot.stderr"; echo $? > "$W/ncu-nonroot.exit"
fi
timeout -s TERM 20 ncu --metrics gpu__time_duration.sum "$B/hang" > "$W/ncu-hang.stdout" 2> "$W/ncu-hang.stderr"; echo $? > "$W/ncu-hang.exit"

log "instruction-cache cliff: body size x warps per SM"
SMS=$(nvidia-smi --query-gpu=multiprocessor_count --format=csv,noheader 2>/dev/null | head -1)
[ -n "$SMS" ] || SMS=132
for threads in 128 256 1024; do
  for body in 32 64 128 256 384 512 768 1024 2048; do
    name="icache-b${body}-t${threads}"
    ncu --kernel-name-base function --kernel-name "regex:^hot_loop" --launch-skip 1 --launch-count 5 \
        --metrics "$METRICS" --clock-control "$CLOCK" --export "$B/$name" --force-overwrite \
        "$B/icache_cliff" --body "$body" --blocks "$SMS" --threads "$threads" --reps 6 > "$W/$name.ncu-stdout.txt" 2>&1
    ncu --import "$B/$name.ncu-rep" --csv --page raw > "$W/$name.raw.csv" 2>&1
  done
  log "threads $threads done"
done
tar czf "$OUT/fixtures.tar.gz" -C "$W" .
log "done: $(du -sh "$OUT/fixtures.tar.gz" | cut -f1)"
