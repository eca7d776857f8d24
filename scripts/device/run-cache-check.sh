#!/usr/bin/env bash
# On a GPU machine, with the final code: a bench with per-line stalls and a GPU sweep, each from
# a cold cache and then again (measurement cache: no GPU run). The caller carries .device/node.xz
# and .device/cli (bundle-cli.mjs); outputs go to $OUT/cache-check (or a temp folder).
set -u
cd "$(dirname "$0")/../.."
{ command -v nvcc && command -v ncu; } > /dev/null || export PATH="$PATH:/usr/local/cuda/bin"
D=${OUT:+$OUT/cache-check}; D=${D:-$(mktemp -d /tmp/cache-check.XXXXXX)}; rm -rf "$D"; mkdir -p "$D"
if ! command -v node > /dev/null; then
  mkdir -p /tmp/ul-node && xz -dc .device/node.xz > /tmp/ul-node/node && chmod +x /tmp/ul-node/node
  export PATH="/tmp/ul-node:$PATH"
fi
CLI=${UNROLL_LENS_CLI:-$PWD/.device/cli/unroll-lens.js}
CLOCK=${CLOCK:-none}
export XDG_CACHE_HOME=$(mktemp -d)
run() { local name=$1 t; shift; t=$(date +%s.%N)
  node "$CLI" "$@" --clock-control "$CLOCK" --json > "$D/$name.json" 2> "$D/$name.stderr"; echo "$name exit $? $(awk -v a="$(date +%s.%N)" -v b="$t" 'BEGIN { printf "%.2f", a - b }') s"; }
B=(bench cuda-samples/matmul_unroll.cu --loop 51 --factors 1,4,full --args "--only matmul_basic --reps 25" --source-stalls)
S=(sweep cuda-samples/matvec.cu --kernel matvec_warp_per_row --loops 70 --factors default,1,4,16 --args "--only matvec_warp_per_row --reps 25")
run bench-cold "${B[@]}"; run bench-cached "${B[@]}"; run sweep-cold "${S[@]}"; run sweep-cached "${S[@]}"
node -e '
const fs=require("fs"),d=process.argv[1],j=n=>JSON.parse(fs.readFileSync(d+"/"+n+".json","utf8"));
for (const n of ["bench-cold","bench-cached","sweep-cold","sweep-cached"]) { const r=j(n);
  console.log(n, JSON.stringify(r.timing), (r.variants||[]).map(v=>`${v.label??v.id}:${v.status}:${v.medianMs?.toFixed?.(4)}`).join(" "), r.lineStalls?`lineStalls ${r.lineStalls.length}`:""); }
const a=j("bench-cold"), b=j("bench-cached"); console.log("lineStalls equal:", JSON.stringify(a.lineStalls)===JSON.stringify(b.lineStalls));
' "$D"
