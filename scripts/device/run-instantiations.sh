#!/usr/bin/env bash
# `unroll-lens bench` on a loop inside a template with four instantiations (matmul_pragma<U>):
# every instantiation is profiled in the same runs. Carries .device like run-cli-bench.sh.
set -u
W=/tmp/ul-inst; rm -rf "$W"; mkdir -p "$W/reports" /tmp/ul-node
xz -dc .device/node.xz > /tmp/ul-node/node && chmod +x /tmp/ul-node/node
export PATH="/tmp/ul-node:$PATH"
node .device/cli/unroll-lens.js bench cuda-samples/matmul_unroll.cu --loop 177 --factors default,1,4 \
  --args "--only matmul_pragma --reps 25" --samples 20 --clock-control "${CLOCK:-none}" --keep-reports "$W/reports" > "$W/matmul_pragma.txt" 2>&1
echo "exit $?" >> "$W/matmul_pragma.txt"
node .device/cli/unroll-lens.js bench cuda-samples/matmul_unroll.cu --loop 177 --factors default,1,4 \
  --args "--only matmul_pragma --reps 25" --samples 20 --clock-control "${CLOCK:-none}" --json > "$W/matmul_pragma.json" 2> "$W/matmul_pragma.stderr"
cat "$W/matmul_pragma.txt"
rm -f "$W"/reports/*.ncu-rep
tar czf "$OUT/instantiations.tar.gz" -C "$W" .
