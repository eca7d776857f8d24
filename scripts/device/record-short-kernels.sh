#!/usr/bin/env bash
# Issue 42 on a GPU host: the product's CUPTI timer (gpu__time_duration per launch) against ncu on
# short kernels, recorded as fixtures, then `npm run bench:gpu` for the two wall-time targets.
#   1. For each of our short-kernel programs (scripts/device/short-kernels/: the transpose ladder,
#      3-18 us, and the length curve, 3 us-1.2 ms), ROUNDS rounds of:
#        unroll-lens compare --timer cupti (fresh caches; the timer's records kept), then the same
#        command again (the cached answer), then by hand: the program built with nvcc -O3 -arch=sm_90
#        -lineinfo, run under ncu --cache-control none --clock-control none reading
#        gpu__time_duration.sum for every launch (the reference).
#      The programs run --reps 22: 23 launches of each kernel (1 check + 22 timed); both sides skip the
#      first 2 (compare's --warmup 2) and take the next 20.
#   2. The launch-gap check: the naive transpose alone, timer injected by hand with gpu__time_duration,
#      with no gap and with a 10 ms host sleep after each launch (ncu leaves ~10 ms between launches), and
#      ncu on both.
#   3. scripts/device/bench-gpu.sh (npm run bench:gpu), its outputs in bench-gpu/.
# Outputs: $OUT/short-kernels.tgz and $OUT/bench-gpu.tgz. Needs .device/node.xz and .device/cli
# (scripts/device/bundle-cli.mjs) when the host has no Node 20.
set -u
cd "$(dirname "$0")/../.."
W=/tmp/ul-short-rec; rm -rf "$W"; mkdir -p "$W" /tmp/ul-node
export PATH="$PATH:/usr/local/cuda/bin"
if ! node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)' 2> /dev/null; then
  xz -dc .device/node.xz > /tmp/ul-node/node && chmod +x /tmp/ul-node/node && export PATH="/tmp/ul-node:$PATH"
fi
UL="node $(pwd)/.device/cli/unroll-lens.js"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader > "$W/gpu.txt"
nvcc --version | tail -2 > "$W/nvcc.txt"
ncu --version | tail -1 > "$W/ncu.txt"
since() { awk -v a="$(date +%s.%N)" -v b="$1" 'BEGIN { printf "%.2f", a - b }'; }
LADDER=copy_rows,copy_shared,naive,tiled
LENGTHS=length
for round in $(seq 1 "${ROUNDS:-2}"); do
  for p in transpose_ladder kernel_lengths; do
    f=scripts/device/short-kernels/$p.cu
    [ $p = transpose_ladder ] && k=$LADDER || k=$LENGTHS
    C=$(mktemp -d); t=$(date +%s.%N)
    XDG_CACHE_HOME=$C $UL compare "$f" --kernels "$k" --args "--reps 22" --samples 20 --warmup 2 --timer cupti \
      --json --keep-reports "$W/keep-$p-$round" > "$W/$p.cupti.$round.json" 2> "$W/$p.cupti.$round.stderr"
    echo "$p compare round $round: exit $? $(since "$t") s" | tee -a "$W/wall.txt"
    t=$(date +%s.%N)
    XDG_CACHE_HOME=$C $UL compare "$f" --kernels "$k" --args "--reps 22" --samples 20 --warmup 2 --timer cupti \
      > "$W/$p.cupti.$round.txt" 2> "$W/$p.cupti-cached.$round.stderr"
    echo "$p compare cached round $round: exit $? $(since "$t") s" | tee -a "$W/wall.txt"
    rm -rf "$C"
    nvcc -O3 -arch=sm_90 -lineinfo -o "$W/$p" "$f" || exit 1
    t=$(date +%s.%N)
    ncu --cache-control none --clock-control none --metrics gpu__time_duration.sum --csv --print-units base \
      "$W/$p" --reps 22 > "$W/$p.ncu.$round.csv" 2> "$W/$p.ncu.$round.stderr"
    echo "$p ncu round $round: exit $? $(since "$t") s" | tee -a "$W/wall.txt"
  done
done
# the launch-gap check (the timer library as the product builds it)
INC=/usr/local/cuda/include; LIB=/usr/local/cuda/lib64; [ -f "$INC/cupti.h" ] || { INC=/usr/local/cuda/extras/CUPTI/include; LIB=/usr/local/cuda/extras/CUPTI/lib64; }
nvcc -x c++ -shared -Xcompiler -fPIC -O2 -I "$INC" -L "$LIB" -lcupti -Xlinker -rpath,"$LIB" -o "$W/libtimer.so" native/cupti_timer.c || exit 1
for gap in 0 10000; do
  CUDA_INJECTION64_PATH="$W/libtimer.so" UNROLL_LENS_TIMER_OUT="$W/gap-$gap.timer.jsonl" UNROLL_LENS_GPU_TIME=1 \
    "$W/transpose_ladder" --only naive --reps 22 --gap-us $gap > "$W/gap-$gap.stdout" 2>&1
  ncu --cache-control none --clock-control none --metrics gpu__time_duration.sum --csv --print-units base \
    "$W/transpose_ladder" --only naive --reps 22 --gap-us $gap > "$W/gap-$gap.ncu.csv" 2> /dev/null
done
rm -f "$W/libtimer.so" "$W/transpose_ladder" "$W/kernel_lengths"
cat "$W"/*.cupti.1.txt
tar czf "$OUT/short-kernels.tgz" -C "$W" .
OUT=/tmp/ul-bench-out bash scripts/device/bench-gpu.sh > /tmp/ul-bench.log 2>&1
echo "bench-gpu exit $?"; tail -30 /tmp/ul-bench.log
cp /tmp/ul-bench.log /tmp/ul-bench-out/bench-gpu/ 2> /dev/null
tar czf "$OUT/bench-gpu.tgz" -C /tmp/ul-bench-out .
