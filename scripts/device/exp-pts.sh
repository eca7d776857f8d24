#!/usr/bin/env bash
# Why potential_pts2 (coarsening.cu) was bimodal: the sample as it is (atoms in global memory) against
# the same file with the atoms moved back into __constant__ memory. Ten plain runs of each print every
# potential kernel's own cudaEvent median (--reps 20), then eight runs of potential_pts2 alone.
set -u
W=/tmp/exp-pts; mkdir -p "$W"; export PATH="$PATH:/usr/local/cuda/bin"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
sed 's/^__device__ float4 g_atoms/__constant__ float4 g_atoms/' cuda-samples/coarsening.cu > "$W/constant.cu"
grep -q '^__constant__ float4 g_atoms' "$W/constant.cu" || { echo "sample changed: no g_atoms to move" >&2; exit 1; }
nvcc -O3 -arch=sm_90 -o "$W/global" cuda-samples/coarsening.cu
nvcc -O3 -arch=sm_90 -o "$W/constant" "$W/constant.cu"
times() { sed -nE 's/.*kernel=potential_(pts.).*time_ms=([0-9.]+).*/\1 \2/p' | tr '\n' ' '; echo; }
for v in global constant; do
  echo "== atoms in $v memory: pts1..pts8 medians (ms), ten runs"
  for i in $(seq 1 10); do "$W/$v" --systems 1 --reps 20 | times; done
  echo "== atoms in $v memory: potential_pts2 alone, eight runs"
  for i in $(seq 1 8); do "$W/$v" --only potential_pts2 --reps 20 | times; done
done
