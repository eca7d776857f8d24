#!/usr/bin/env bash
# Issue 39: `unroll-lens bench --build/--run` through a project's own CMake build on the GPU
# machine, beside the hand loop it replaces (edit the pragma, rebuild, run under ncu -k), and the
# source tree's hashes before and after. MODE fixture: test/fixtures/projects/cmake-lib (its
# header loop; the ncu timer's reports kept for the CI replay). MODE reduction-ul / reduction-hand:
# NVIDIA cuda-samples' reduction (carried untracked under tmp-device/cuda-samples: the sample, its
# CMakeLists.txt and the Common/ headers it includes), loop 437 of reduction_kernel.cu (reduce6's
# warp-shuffle loop). The caller carries .device/node.xz and .device/cli (bundle-cli.mjs).
set -u
MODES=${1:-fixture}
for MODE in ${MODES//,/ }; do
REPO=$PWD
W=/tmp/ul-proj; mkdir -p "$W" /tmp/ul-node "$OUT"
[ -x /tmp/ul-node/node ] || { xz -dc .device/node.xz > /tmp/ul-node/node && chmod +x /tmp/ul-node/node; }
export PATH="/tmp/ul-node:$PATH" XDG_CACHE_HOME="$W/cache"
UL="node $REPO/.device/cli/unroll-lens.js"
nvcc --version | tail -2; cmake --version | head -1; ninja --version; ncu --version | tail -1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
now() { date +%s.%N; }
hashes() { (cd "$1" && find . -path ./build -prune -o -type f -print | LC_ALL=C sort | xargs sha256sum); }
. "$REPO/scripts/device/project-hand-loop.sh"
case $MODE in
fixture)
  rm -rf "$W/fx" "$W/fx-hand" "$W/cache"; cp -r test/fixtures/projects/cmake-lib "$W/fx"; cp -r test/fixtures/projects/cmake-lib "$W/fx-hand"
  cd "$W/fx" && cmake -S . -B build -G Ninja -DCMAKE_EXPORT_COMPILE_COMMANDS=ON > "$W/cfg.log" 2>&1 && cmake --build build > "$W/first.log" 2>&1
  ./build/rowapp 4096 25; echo "rowapp exit $?"
  hashes "$W/fx" > "$W/before.txt"
  LINE=$(grep -n 'for (int c = 0; c < COLS' src/kernels/rowdot.cuh | cut -d: -f1)
  B="cmake -S . -B build -G Ninja >/dev/null && cmake --build build"
  for run in cold warm; do
    t0=$(now)
    $UL bench src/kernels/rowdot.cuh --loop "$LINE" --factors 1,2,4,full --build "$B" --run "./build/rowapp 4096 25" --json > "$W/fx-$run.json" 2> "$W/fx-$run.stderr"
    echo "product $run exit $? $(awk "BEGIN{print $(now) - $t0}") s"
  done
  t0=$(now)
  $UL bench src/kernels/rowdot.cuh --loop "$LINE" --factors 1,2,4,full --build "$B" --run "./build/rowapp 4096 25" --timer ncu --clock-control none --keep-reports "$W/reports" --json > "$W/fx-ncu.json" 2> "$W/fx-ncu.stderr"
  echo "product ncu exit $? $(awk "BEGIN{print $(now) - $t0}") s"
  hashes "$W/fx" > "$W/after.txt"; cmp "$W/before.txt" "$W/after.txt" && echo "TREE BYTE-IDENTICAL ($(wc -l < "$W/before.txt") files)"
  (cd "$W/fx-hand" && cmake -S . -B build -G Ninja > /dev/null 2>&1 && cmake --build build > /dev/null 2>&1)
  hand_loop "$W/fx-hand" src/kernels/rowdot.cuh "$LINE" "cmake --build build" "./build/rowapp 4096 25" rows_dot 1 2 4 full
  # truth of the timed kernels: the executable's own functions, listed by cuobjdump (not our code path)
  cuobjdump -sass "$W/fx/build/rowapp" | grep -o 'Function : [^ ]*' | sort -u > "$W/fx-functions.txt"
  ;;
reduction-ul)
  S=Samples/2_Concepts_and_Techniques/reduction
  # the copy from an earlier call on this machine stays (a user's second bench): only the source is fresh
  rm -rf "$W/cs"; cp -a tmp-device/cuda-samples "$W/cs"; cd "$W/cs"
  t0=$(now); cmake -S $S -B $S/build -G Ninja -DCMAKE_EXPORT_COMPILE_COMMANDS=ON > "$W/red-cfg.log" 2>&1; echo "configure exit $? $(awk "BEGIN{print $(now) - $t0}") s"
  hashes "$W/cs" > "$W/red-before.txt"
  t0=$(now)
  $UL bench $S/reduction_kernel.cu --loop 437 --factors 1,2,full --build "cmake -S $S -B build-ul -G Ninja >/dev/null && cmake --build build-ul" --run "./build-ul/reduction --kernel=6" ${UL_EXTRA:-} --json > "$W/red.json" 2> "$W/red.stderr"
  echo "product exit $? $(awk "BEGIN{print $(now) - $t0}") s"
  hashes "$W/cs" > "$W/red-after.txt"; cmp "$W/red-before.txt" "$W/red-after.txt" && echo "TREE BYTE-IDENTICAL ($(wc -l < "$W/red-before.txt") files)"
  cuobjdump -sass -arch sm_90 "$W/cs/build-ul/reduction" 2>/dev/null | grep -o 'Function : [^ ]*reduce6[^ ]*' | sort -u > "$W/red-functions.txt"
  ;;
fixture-cupti)
  # the default timer: every instantiation the run launched, those of other units included; its records kept (replayed in CI)
  rm -rf "$W/fx" "$W/cache"; cp -r test/fixtures/projects/cmake-lib "$W/fx"
  cd "$W/fx" && cmake -S . -B build -G Ninja -DCMAKE_EXPORT_COMPILE_COMMANDS=ON > "$W/cfg.log" 2>&1 && cmake --build build > "$W/first.log" 2>&1
  hashes "$W/fx" > "$W/before.txt"
  LINE=$(grep -n 'for (int c = 0; c < COLS' src/kernels/rowdot.cuh | cut -d: -f1)
  t0=$(now)
  $UL bench src/kernels/rowdot.cuh --loop "$LINE" --factors 1,2,4,full --build "cmake -S . -B build -G Ninja >/dev/null && cmake --build build" --run "./build/rowapp 4096 25" --keep-reports "$W/fx-cupti-records" --json > "$W/fx-cupti.json" 2> "$W/fx-cupti.stderr"
  echo "product cupti exit $? $(awk "BEGIN{print $(now) - $t0}") s"
  hashes "$W/fx" > "$W/after.txt"; cmp "$W/before.txt" "$W/after.txt" && echo "TREE BYTE-IDENTICAL ($(wc -l < "$W/before.txt") files)"
  cuobjdump -sass "$W/fx/build/rowapp" | grep -o 'Function : [^ ]*' | sort -u > "$W/fx-functions.txt"
  ;;
fixture-hand)
  rm -rf "$W/fx-hand"; cp -r test/fixtures/projects/cmake-lib "$W/fx-hand"
  (cd "$W/fx-hand" && cmake -S . -B build -G Ninja > /dev/null 2>&1 && cmake --build build > /dev/null 2>&1)
  LINE=$(grep -n 'for (int c = 0; c < COLS' "$W/fx-hand/src/kernels/rowdot.cuh" | cut -d: -f1)
  hand_loop "$W/fx-hand" src/kernels/rowdot.cuh "$LINE" "cmake --build build" "./build/rowapp 4096 25" rows_dot 1 2 4 full
  ;;
reduction-hand)
  S=Samples/2_Concepts_and_Techniques/reduction
  rm -rf "$W/csh"; cp -r tmp-device/cuda-samples "$W/csh"; cd "$W/csh"
  t0=$(now); cmake -S $S -B build -G Ninja > /dev/null 2>&1 && cmake --build build > "$W/red-hand-first.log" 2>&1; echo "hand first build $(awk "BEGIN{print $(now) - $t0}") s"
  hand_loop "$W/csh" $S/reduction_kernel.cu 437 "cmake --build build" "./build/reduction --kernel=6" reduce6 1 2 full
  ;;
esac
cd "$REPO"
done
cd "$W" && tar czf "$OUT/project-${MODES//,/-}.tar.gz" --exclude=cache --exclude=fx --exclude=fx-hand --exclude=cs --exclude=csh . && ls -la "$OUT"
