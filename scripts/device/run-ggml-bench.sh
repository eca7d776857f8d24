#!/usr/bin/env bash
# Issue 39: a loop in a ggml-cuda header (reduce_rows.cuh, the row loop of reduce_rows_f32, behind
# MEAN and SUM_ROWS) benchmarked through ggml's own CMake build and its test binary
# (`test-backend-ops perf -o SUM_ROWS`), beside the hand loop it replaces. ggml is carried as
# .device/ggml-src.tar.xz (`git archive` of ggml-org/ggml at the commit docs/measurements.md
# names); .device/node.xz and .device/cli as for run-project-bench.sh.
#   MODE ul:   the user's build folder configured (its compile database: the SASS side reads it),
#              then the product's bench from the source folder, cold (its copy built from nothing).
#   MODE hand: the hand loop (edit the pragma, rebuild, `ncu -k`) in the product's copy, already
#              built by MODE ul on this machine (a second full ggml build would cost the budget;
#              the rebuild after an edit is the same ninja rebuild as in the user's own folder),
#              then the product again with its copy kept (a user's second bench).
#   MODE warm: the product's bench twice more, its copies kept (UL_EXTRA="--build-copies 2": the
#              variants built two at a time once both copies are built).
set -u
MODES=${1:-ul}
# Logs and JSON in one archive under $OUT (the device tool brings back a few files only); the
# source and the product's copies (with their build folders) stay on the machine for the next mode.
REPO=$PWD; W=/tmp/ul-ggml/logs; G=/tmp/ul-ggml/g; mkdir -p "$W" /tmp/ul-ggml /tmp/ul-node
[ -x /tmp/ul-node/node ] || { xz -dc .device/node.xz > /tmp/ul-node/node && chmod +x /tmp/ul-node/node; }
export PATH="/tmp/ul-node:$PATH" XDG_CACHE_HOME=/tmp/ul-ggml/cache
# the CLI comes as .device/cli or, to keep the carried files small, .device/cli.txz (tar -J of it)
[ -f .device/cli/unroll-lens.js ] || { [ -f .device/cli.txz ] && tar xJf .device/cli.txz -C .device; }
UL="node $REPO/.device/cli/unroll-lens.js"
now() { date +%s.%N; }
. "$REPO/scripts/device/project-hand-loop.sh"
hashes() { (cd "$1" && find . -path ./build -prune -o -type f -print | LC_ALL=C sort | xargs sha256sum); }
CFG="-G Ninja -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DGGML_CUDA_FA=OFF -DGGML_BUILD_EXAMPLES=OFF -DCMAKE_BUILD_TYPE=Release"
F=src/ggml-cuda/reduce_rows.cuh
CASE="-o ${OPS:-SUM_ROWS} -b CUDA0 -p 'ne=\\[8192,8192'"
BUILD="cmake -S . -B build-ul $CFG >/dev/null && cmake --build build-ul --target test-backend-ops"
RUN="./build-ul/bin/test-backend-ops perf $CASE"
FACTORS=${FACTORS:-1,2,4,8}
bench() { # bench NAME: the product's bench, its wall time and exit
  local t0; t0=$(now)
  (cd "$G" && timeout -s INT "${BENCH_LIMIT:-540}" $UL bench $F --loop "$LINE" --factors "$FACTORS" --build "$BUILD" --run "$RUN" --build-timeout 560 ${UL_EXTRA:-} --json) > "$W/$1.json" 2> "$W/$1.stderr"
  echo "product $1 exit $? $(awk "BEGIN{print $(now) - $t0}") s"
}
nvcc --version | tail -2; cmake --version | head -1; ninja --version; ncu --version | tail -1; nproc
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
for MODE in ${MODES//,/ }; do
case $MODE in
ul)
  rm -rf "$G" /tmp/ul-ggml/cache; mkdir -p "$G"; xz -dc .device/ggml-src.tar.xz | tar x -C "$G"
  LINE=$(grep -n 'for (int i = col; i < ncols;)' "$G/$F" | cut -d: -f1); echo "loop at $F:$LINE"
  t0=$(now); (cd "$G" && cmake -S . -B build $CFG -DCMAKE_EXPORT_COMPILE_COMMANDS=ON) > "$W/cfg.log" 2>&1
  echo "configure exit $? $(awk "BEGIN{print $(now) - $t0}") s"
  hashes "$G" > "$W/before.txt"
  bench cold
  hashes "$G" > "$W/after.txt"; cmp "$W/before.txt" "$W/after.txt" && echo "TREE BYTE-IDENTICAL ($(wc -l < "$W/before.txt") files)"
  ;;
hand)
  LINE=$(grep -n 'for (int i = col; i < ncols;)' "$G/$F" | cut -d: -f1)
  T=$(ls -d /tmp/ul-ggml/cache/unroll-lens/projects/*/0/tree | head -1); echo "copy: $T"
  cp "$G/$F" "$T/$F"  # the copy may still hold the last variant the bench wrote
  (cd "$T" && cmake --build build-ul --target test-backend-ops) > "$W/hand-first.log" 2>&1; echo "copy brought to as written: exit $?"
  hand_loop "$T" $F "$LINE" "cmake --build build-ul --target test-backend-ops" "$RUN" reduce_rows $(echo "$FACTORS" | tr , ' ')
  # the kernels the run can launch, read from the library by cuobjdump (not our code path)
  cuobjdump -sass "$(find "$T/build-ul" -name 'libggml-cuda.so*' -type f | head -1)" 2>/dev/null | grep -o 'Function : [^ ]*reduce_rows[^ ]*' | sort -u > "$W/functions.txt"
  hashes "$G" > "$W/before2.txt"
  bench warm
  hashes "$G" > "$W/after2.txt"; cmp "$W/before2.txt" "$W/after2.txt" && echo "TREE BYTE-IDENTICAL ($(wc -l < "$W/before2.txt") files)"
  ;;
warm)
  LINE=$(grep -n 'for (int i = col; i < ncols;)' "$G/$F" | cut -d: -f1)
  hashes "$G" > "$W/before3.txt"
  bench warm-a; bench warm-b
  hashes "$G" > "$W/after3.txt"; cmp "$W/before3.txt" "$W/after3.txt" && echo "TREE BYTE-IDENTICAL ($(wc -l < "$W/before3.txt") files)"
  ;;
esac
done
tar czf "$OUT/ggml-${MODES//,/-}.tar.gz" -C "$W" . && ls -la "$OUT"
