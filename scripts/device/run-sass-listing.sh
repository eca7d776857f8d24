#!/usr/bin/env bash
# Issue 12, end to end on the GPU machine: `bench --source-stalls` samples the file as written
# (ncu SourceCounters, cuda,sass page kept), then `sass --listing --stalls` puts those samples
# beside the SASS of the variant that ran (and of one that did not: unroll 4). Carries .device
# like run-cli-bench.sh. Output: $OUT/sass-listing.tar.gz.
set -u
W=/tmp/ul-listing; rm -rf "$W"; mkdir -p "$W/reports" /tmp/ul-node
xz -dc .device/node.xz > /tmp/ul-node/node && chmod +x /tmp/ul-node/node
export PATH="/tmp/ul-node:/usr/local/cuda/bin:$PATH"
UL=".device/cli/unroll-lens.js"
node $UL bench cuda-samples/matmul_unroll.cu --loop 51 --factors default,4 --args "--only matmul_basic --reps 25" \
  --samples 20 --clock-control none --source-stalls --keep-reports "$W/reports" > "$W/bench.txt" 2> "$W/bench.stderr"
echo "bench rc=$?" >> "$W/bench.txt"
PAGE=$(ls "$W"/reports/*-source.csv | head -1)
echo "page: $PAGE" >> "$W/bench.txt"
for f in as-written default 4; do
  node $UL sass cuda-samples/matmul_unroll.cu --loop 51 --listing --factor $f --stalls "$PAGE" > "$W/listing.$f.txt" 2> "$W/listing.$f.stderr"
  echo "rc=$?" >> "$W/listing.$f.stderr"
done
node $UL sass cuda-samples/matmul_unroll.cu --loop 51 --listing --stalls "$PAGE" --json > "$W/listing.as-written.json" 2>> "$W/listing.as-written.stderr"
rm -f "$W"/reports/*.ncu-rep
cat "$W/bench.txt"; head -12 "$W/listing.as-written.txt"; cat "$W"/listing.*.stderr
tar czf "$OUT/sass-listing.tar.gz" -C "$W" .
