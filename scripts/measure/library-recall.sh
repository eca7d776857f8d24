#!/usr/bin/env bash
# Recall and precision of `unroll-lens scan` on source trees, counted by the independent
# scripts/measure/count_unroll_pragmas.py, with the scan's wall time and its warnings by code.
#   bash scripts/measure/library-recall.sh DIR [DIR...]      (after `npm run build`)
# Prints one Markdown table row per tree (docs/measurements.md keeps them).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| tree | files scanned | pragmas (counter) | attached | recall | precision | scan --json s | warnings by code |"
echo "|---|---|---|---|---|---|---|---|"
for dir in "$@"; do
  start=$(date +%s.%N)
  node "$root/bin/unroll-lens.js" scan "$dir" --json >"$tmp/scan.json" 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
  end=$(date +%s.%N)
  node "$root/bin/unroll-lens.js" scan "$dir" >"$tmp/scan.txt" 2>/dev/null || true
  python3 "$root/scripts/measure/count_unroll_pragmas.py" "$dir" --scan "$tmp/scan.json" >"$tmp/cmp.json"
  warnings=$(grep -oE '^  [0-9]+: warning: .*\[[a-z-]+\]$' "$tmp/scan.txt" | grep -oE '\[[a-z-]+\]$' | sort | uniq -c | awk '{printf "%s%s %s", sep, $2, $1; sep=", "}' || true)
  python3 - "$tmp/cmp.json" "$tmp/scan.json" "$dir" "$start" "$end" "${warnings:-none}" <<'PY'
import json, sys
cmp = json.load(open(sys.argv[1])); scan = json.load(open(sys.argv[2]))
print(f"| {sys.argv[3]} | {len(scan['files'])} | {cmp['pragmas']} | {cmp['attached']} | {100*cmp['recall']:.1f}% | {100*cmp['precision']:.1f}% | {float(sys.argv[5])-float(sys.argv[4]):.1f} | {sys.argv[6]} |")
PY
done
