#!/usr/bin/env bash
# Issue 25: does a bench scale over two GPUs when each program run takes a second or more? The
# bench of matmul_basic (cuda-samples/matmul_unroll.cu line 51, 7 factors, 20 samples after 2
# warm-up) with ARGS (default --only matmul_basic --size 2048 --reps 25), cold caches, on
# --gpus 0 then --gpus 0,1, twice, alternating; one plain run of the program timed first.
set -u
W=/tmp/ul-2gpu; rm -rf "$W"; mkdir -p "$W" /tmp/ul-node
xz -dc .device/node.xz > /tmp/ul-node/node && chmod +x /tmp/ul-node/node
export PATH="/tmp/ul-node:$PATH:/usr/local/cuda/bin"
ARGS=${ARGS:---only matmul_basic --size 2048 --reps 25}
nvidia-smi -L > "$W/gpus.txt"
since() { awk -v a="$(date +%s.%N)" -v b="$1" 'BEGIN { printf "%.2f", a - b }'; }
nvcc -O3 -arch=sm_90 -o "$W/prog" cuda-samples/matmul_unroll.cu
t=$(date +%s.%N); "$W/prog" $ARGS > "$W/plain.stdout" 2>&1; echo "plain run: $(since "$t") s" | tee -a "$W/wall.txt"
rm -f "$W/prog"
for round in 1 2; do
  for g in 0 0,1; do
    C=$(mktemp -d); t=$(date +%s.%N)
    XDG_CACHE_HOME=$C node .device/cli/unroll-lens.js bench cuda-samples/matmul_unroll.cu --loop 51 \
      --factors default,1,2,4,8,16,full --args "$ARGS" --samples 20 --warmup 2 --gpus "$g" --json \
      > "$W/gpus-${g//,/-}-$round.json" 2> "$W/gpus-${g//,/-}-$round.stderr"
    echo "--gpus $g round $round: $(since "$t") s exit $?" | tee -a "$W/wall.txt"
    rm -rf "$C"
  done
done
tar czf "$OUT/two-gpus.tgz" -C "$W" .
