#!/usr/bin/env bash
# Issue 26 on a real GPU: a coarsening sweep over a template parameter. cuda-samples/coarsen_template.cu
# launches coarsen_potential<COARSEN> (1, 2, 4, 8 points per thread) through a host switch on
# --coarsen, so `sweep --param COARSEN=… --args "--coarsen {COARSEN}"` times one instantiation a
# program run. (a) plain runs per COARSEN (the program's own cudaEvent time_ms, before and after the
# sweeps), (b) the sweep with the CUPTI timer, (c) the sweep under ncu (--clock-control none
# --cache-control none: executed instructions and achieved occupancy per point), each with its
# records kept (--keep-reports) and its table printed from the measurement cache afterwards.
# Needs .device/node.xz and a CLI bundle (node scripts/device/bundle-cli.mjs DIR); UL_CLI names it
# (default .device/cli). Outputs: $OUT/coarsen-sweep.tgz, $OUT/keep-*.tgz.
set -u
W=/tmp/ul-coarsen; rm -rf "$W"; mkdir -p "$W" /tmp/ul-node
xz -dc .device/node.xz > /tmp/ul-node/node && chmod +x /tmp/ul-node/node
export PATH="/tmp/ul-node:$PATH:/usr/local/cuda/bin" XDG_CACHE_HOME=/tmp/ul-coarsen-cache
UL="node ${UL_CLI:-.device/cli}/unroll-lens.js"
F=cuda-samples/coarsen_template.cu
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader > "$W/env.txt"
ncu --version | tail -1 >> "$W/env.txt"; nvcc --version | tail -2 >> "$W/env.txt"
since() { awk -v a="$(date +%s.%N)" -v b="$1" 'BEGIN { printf "%.1f", a - b }'; }
plain() { # TAG
  for c in 1 2 4 8; do "$W/prog" --coarsen $c --reps 20 >> "$W/plain-$1.stdout" 2>> "$W/plain-$1.stderr"; echo "plain-$1 C=$c exit $?" >> "$W/wall.txt"; done
}
nvcc -O3 -arch=sm_90 -Xptxas -v -o "$W/prog" "$F" > "$W/build.txt" 2>&1
plain before
SW=(sweep "$F" --kernel coarsen_potential --factors none --param COARSEN=1,2,4,8 --args "--coarsen {COARSEN} --reps 20" --samples 20)
t=$(date +%s.%N)
$UL "${SW[@]}" --json --keep-reports "$W/keep-cupti" > "$W/cupti.json" 2> "$W/cupti.stderr"
echo "sweep cupti exit $? $(since "$t") s" >> "$W/wall.txt"
$UL "${SW[@]}" > "$W/cupti.txt" 2> /dev/null
t=$(date +%s.%N)
$UL "${SW[@]}" --timer ncu --clock-control none --cache-control none --json --keep-reports "$W/keep-ncu" > "$W/ncu.json" 2> "$W/ncu.stderr"
echo "sweep ncu exit $? $(since "$t") s" >> "$W/wall.txt"
$UL "${SW[@]}" --timer ncu --clock-control none --cache-control none > "$W/ncu.txt" 2> /dev/null
plain after
cat "$W/wall.txt" "$W/env.txt"; grep -h "kernel=" "$W"/plain-*.stdout; cat "$W/cupti.txt" "$W/ncu.txt"; tail -3 "$W"/*.stderr
tar czf "$OUT/keep-cupti.tgz" -C "$W" keep-cupti; tar czf "$OUT/keep-ncu.tgz" -C "$W" keep-ncu
rm -rf "$W/keep-cupti" "$W/keep-ncu" "$W/prog"; tar czf "$OUT/coarsen-sweep.tgz" -C "$W" .
ls -la "$OUT"
