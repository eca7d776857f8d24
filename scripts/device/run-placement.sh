#!/usr/bin/env bash
# Issue 11 on real GPUs, beyond bench:gpu: a GPU sweep on one GPU and on two (--gpus), the same
# sweep again (measurement cache: no GPU run), and a bench through a launcher that runs in
# another directory with its own temp folder (a stand-in for srun on another node) with
# --shared-dir. The caller carries .device/node.xz and .device/cli (bundle-cli.mjs); outputs go
# to $OUT/placement (or a temp folder).
set -u
cd "$(dirname "$0")/../.."
{ command -v nvcc && command -v ncu; } > /dev/null || export PATH="$PATH:/usr/local/cuda/bin"
D=${OUT:+$OUT/placement}; D=${D:-$(mktemp -d /tmp/placement.XXXXXX)}; rm -rf "$D"; mkdir -p "$D"
if ! command -v node > /dev/null; then
  mkdir -p /tmp/ul-node && xz -dc .device/node.xz > /tmp/ul-node/node && chmod +x /tmp/ul-node/node
  export PATH="/tmp/ul-node:$PATH"
fi
CLI=${UNROLL_LENS_CLI:-$PWD/.device/cli/unroll-lens.js}
CLOCK=${CLOCK:-none}
nvidia-smi -L > "$D/env.txt"; ncu --version | tail -1 >> "$D/env.txt"
run() { # run NAME CACHE cmd…
  local name=$1 cache=$2 t; shift 2
  t=$(date +%s.%N)
  XDG_CACHE_HOME=$cache node "$CLI" "$@" > "$D/$name.json" 2> "$D/$name.stderr"
  local rc=$?
  awk -v a="$(date +%s.%N)" -v b="$t" 'BEGIN { printf "%.3f\n", a - b }' > "$D/$name.wall_s"
  echo "placement: $name exit $rc, $(cat "$D/$name.wall_s") s"
}
SWEEP=(sweep cuda-samples/matmul_unroll.cu --kernel matmul_basic --loops 51 --factors default,1,2,4,8,16,full
  --strategy exhaustive --args "--only matmul_basic --reps 25" --samples 20 --warmup 2 --clock-control "$CLOCK" --json)
C1=$(mktemp -d); C2=$(mktemp -d)
run sweep-gpus-0 "$C1" "${SWEEP[@]}" --gpus 0
run sweep-gpus-0-1 "$C2" "${SWEEP[@]}" --gpus 0,1
run sweep-gpus-0-1-again "$C2" "${SWEEP[@]}" --gpus 0,1
# A launcher on "another node": its own working directory and temp folder; it refuses paths in
# this side's temp folder (node-local storage the other side would not see).
SHARED=$(mktemp -d /var/tmp/ul-shared.XXXXXX)
LOCAL_TMP=$(mktemp -d /tmp/ul-local.XXXXXX)
cat > "$SHARED/fake-srun" <<'EOS'
#!/bin/sh
for a in "$@"; do case "$a" in "$UL_NODE_LOCAL"/*) echo "fake-srun: node-local path $a" >&2; exit 97;; esac; done
cd "$(mktemp -d)" || exit 90
export TMPDIR="$(mktemp -d)"
exec "$@"
EOS
chmod +x "$SHARED/fake-srun"
UL_NODE_LOCAL=$LOCAL_TMP TMPDIR=$LOCAL_TMP run bench-launcher "$(mktemp -d)" bench cuda-samples/matmul_unroll.cu --loop 51 \
  --factors 1,4 --args "--only matmul_basic --reps 25" --samples 20 --warmup 2 --clock-control "$CLOCK" --json \
  --launcher "$SHARED/fake-srun" --shared-dir "$SHARED/unroll-lens"
find "$SHARED/unroll-lens" -maxdepth 2 | sort > "$D/shared-tree.txt"
node -e '
const fs=require("fs"),d=process.argv[1];
const j=n=>{try{return JSON.parse(fs.readFileSync(d+"/"+n+".json","utf8"))}catch{return null}};
for (const n of ["sweep-gpus-0","sweep-gpus-0-1","sweep-gpus-0-1-again"]) { const r=j(n); if(!r){console.log(n,"no JSON");continue}
  console.log(n, fs.readFileSync(d+"/"+n+".wall_s","utf8").trim()+" s", (r.variants||[]).map(v=>`${v.label??v.id}:${v.status}:${v.medianMs?.toFixed?.(4)}${v.identicalTo?"="+JSON.stringify(v.identicalTo):""}`).join(" "), "notes:", (r.notes||[]).join(" | ")); }
const b=j("bench-launcher"); console.log("bench-launcher", b? b.variants.map(v=>`${v.label}:${v.status}:${v.samples}:${v.medianMs?.toFixed?.(4)} ${v.message??""}`).join(" "):"no JSON", b?JSON.stringify(b.timing):"");
' "$D"
grep -h "cached\|GPU" "$D"/sweep-gpus-0-1-again.stderr | tail -3
