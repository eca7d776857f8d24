#!/usr/bin/env bash
# `unroll-lens bench` before and after a change, on one GPU machine: two bundled CLIs
# (scripts/device/bundle-cli.mjs into .device/cli-old and .device/cli), run alternately, each
# with an empty build cache (XDG_CACHE_HOME of its own) and --fresh (no measurement cache): the
# whole cold cost of one bench of matmul_basic (7 factors, 20 samples, clocks left alone).
# Prints one line per run: which, wall seconds, exit code, and the medians it measured.
set -u
mkdir -p /tmp/ul-node
xz -dc .device/node.xz > /tmp/ul-node/node && chmod +x /tmp/ul-node/node
export PATH="/tmp/ul-node:$PATH:/usr/local/cuda/bin"
RUNS=${RUNS:-2}
one() {  # one NAME CLI_DIR RUN
  local name=$1 cli=$2 i=$3 cache; cache=$(mktemp -d /tmp/ul-cache.XXXXXX)
  local t0; t0=$(date +%s.%N)
  XDG_CACHE_HOME=$cache node "$cli/unroll-lens.js" bench cuda-samples/matmul_unroll.cu --loop 51 --factors default,1,2,4,8,16,full \
    --args "--only matmul_basic --reps 25" --samples 20 --warmup 2 --clock-control none --fresh --quiet --json > "/tmp/ba-$name-$i.json"
  local rc=$?
  local wall; wall=$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { printf "%.1f", a - b }')
  echo "$name run $i: ${wall} s wall, exit $rc, medians $(node -e "const r=JSON.parse(require('fs').readFileSync('/tmp/ba-$name-$i.json','utf8'));console.log(r.variants.map(v=>v.label+'='+(v.medianMs===null?'-':(v.medianMs*1000).toFixed(1)+'us')).join(' '))")"
  cp "/tmp/ba-$name-$i.json" "$OUT/" 2>/dev/null
  rm -rf "$cache"
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for i in $(seq 1 "$RUNS"); do
  one before .device/cli-old "$i"
  one after .device/cli "$i"
done
