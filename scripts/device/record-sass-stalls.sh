#!/usr/bin/env bash
# Issue 12: real SASS-level stall samples for the listing's stall notes, recorded on the GPU
# machine (output kept in test/fixtures/gpu/<gpu>/sass-stalls/). matmul_basic (the runtime-trip
# loop at line 51 of cuda-samples/matmul_unroll.cu), built the way Unroll Lens builds it: the
# cubin the listing comes from (nvcc -cubin -lineinfo, nvdisasm -c -gi) and the program the GPU
# runs (nvcc -O3 -lineinfo), sampled by ncu's SourceCounters section on one launch.
set -u
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}/sass-stalls
mkdir -p "$O"
W=$(mktemp -d)
cp cuda-samples/matmul_unroll.cu "$W/"
cd "$W"
K=_Z12matmul_basicPKfS0_Pfi
keep() { awk -v k=".text.$K" '/^\t\.target|^\t\.headerflags/ {print; next} /^\/\/-+ \.text\./ {on = index($0, k) > 0} on'; }
{ nvcc --version | tail -2; nvdisasm --version | tail -1; ncu --version | tail -1; nvidia-smi -L; } > "$O/versions.txt" 2>&1
nvcc -cubin -arch=sm_90 -lineinfo -Xptxas -v -o mm.cubin matmul_unroll.cu > "$O/ptxas.txt" 2>&1
nvdisasm -c -gi mm.cubin | keep > "$O/matmul_basic.cubin.nvdisasm-c-gi.txt"
nvcc -O3 -arch=sm_90 -lineinfo -o mm matmul_unroll.cu
cuobjdump -sass mm > "$O/program.cuobjdump-sass.txt"
./mm --only matmul_basic --reps 5 > "$O/plain-run.txt" 2>&1
ncu --kernel-name-base mangled --kernel-name "regex:^$K\$" --launch-skip 2 --launch-count 1 \
  --section SourceCounters --section WarpStateStats --import-source yes --clock-control none \
  --export src --force-overwrite ./mm --only matmul_basic --reps 5 > "$O/ncu.log" 2>&1
echo "ncu rc=$?" >> "$O/ncu.log"
ncu --import src.ncu-rep --csv --page source --print-source cuda,sass > "$O/matmul_basic.source-cuda-sass.csv" 2>&1
ncu --import src.ncu-rep --csv --page source --print-source sass > "$O/matmul_basic.source-sass.csv" 2>&1
ls -la "$O"
