#!/usr/bin/env bash
# Runs `unroll-lens bench --source-stalls` on the GPU machine: per-line warp-stall samples of the
# file as written, as the hover and inline decorations show them. Carries .device like
# run-cli-bench.sh.
set -u
W=/tmp/ul-src; rm -rf "$W"; mkdir -p "$W/reports" /tmp/ul-node
xz -dc .device/node.xz > /tmp/ul-node/node && chmod +x /tmp/ul-node/node
export PATH="/tmp/ul-node:$PATH"
CLOCK=${CLOCK:-none}
node .device/cli/unroll-lens.js bench cuda-samples/matmul_unroll.cu --loop 51 --factors 4 --args "--only matmul_basic --reps 25" \
  --samples 20 --clock-control "$CLOCK" --source-stalls --keep-reports "$W/reports" > "$W/matmul_basic.source-stalls.txt" 2>&1
node .device/cli/unroll-lens.js bench cuda-samples/icache_cliff.cu --loop 72 --factors 16 --kernel _Z8hot_loopILi2048EEvPKmPmi \
  --args "--body 2048 --threads 128 --reps 25" --samples 20 --clock-control "$CLOCK" --source-stalls --keep-reports "$W/reports" --json > "$W/icache_cliff.source-stalls.json" 2> "$W/icache_cliff.source-stalls.stderr"
cat "$W/matmul_basic.source-stalls.txt"; head -c 600 "$W/icache_cliff.source-stalls.json"; echo
# ncu as a user without counter permission, with the full path this time
NCU=$(command -v ncu)
su -s /bin/sh nobody -c "cd /tmp && HOME=/tmp $NCU --metrics gpu__time_duration.sum /bin/true" > "$W/ncu-nonroot.stdout" 2> "$W/ncu-nonroot.stderr"; echo $? > "$W/ncu-nonroot.exit"
cat "$W/ncu-nonroot.stdout" "$W/ncu-nonroot.stderr" | tail -5
rm -f "$W"/reports/*.ncu-rep
tar czf "$OUT/source-stalls.tar.gz" -C "$W" .
