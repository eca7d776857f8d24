#!/usr/bin/env bash
# Issue 25, per-line stalls from PC sampling: do the CUPTI timer's PC samples
# (native/cupti_timer.c, UNROLL_LENS_PCSAMPLING=15) give the same stall samples per source line
# as ncu's source page? On cuda-samples/matmul_unroll.cu (every kernel, --size 1024 --reps 25),
# built with -lineinfo:
#   two PC-sampled runs under the CUPTI timer (the second one: the samples' run-to-run spread)
#   the program's cubin listed by `nvdisasm -c -gi` (the line table the extension reads,
#     engine/variants/inspect.ts) and by `cuobjdump -sass`
#   per kernel, two ncu runs exactly as engine/gpu/stages/lineStalls.ts makes them (one
#     launch, SourceCounters + WarpStateStats, --import-source yes) but with
#     --cache-control none --clock-control none, each exported as the cuda,sass source page
#     (the second one: ncu's own run-to-run spread, the yardstick for "agrees")
# Everything goes into $OUT/pc-lines.tar.gz (plus the GPU line in $OUT/gpu.txt).
set -u
W=$(mktemp -d)/pc-lines
mkdir -p "$W"
export PATH="$PATH:/usr/local/cuda/bin"
CUDA=$(cd "$(dirname "$(command -v nvcc)")/.." && pwd)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader > "$W/gpu.txt"
nvcc --version | tail -2 > "$W/nvcc.txt"
ncu --version | tail -1 > "$W/ncu.txt"
nvdisasm --version | tail -1 > "$W/nvdisasm.txt"
nvcc -shared -Xcompiler -fPIC -O2 -I "$CUDA/include" -L "$CUDA/lib64" -lcupti -Xlinker "-rpath,$CUDA/lib64" \
  -o "$W/libtimer.so" native/cupti_timer.c || exit 1
nvcc -O3 -lineinfo -arch=sm_90 -o "$W/prog" cuda-samples/matmul_unroll.cu || exit 1
cuobjdump -sass "$W/prog" > "$W/prog.sass" 2>&1
(cd "$W" && cuobjdump -xelf all prog > /dev/null && ls *.cubin > cubins.txt)
for c in "$W"/*.cubin; do nvdisasm -c -gi "$c" >> "$W/prog.nvdisasm.txt" 2>&1; done
ARGS="--size 1024 --reps 25"
for round in 1 2; do
  CUDA_INJECTION64_PATH="$W/libtimer.so" UNROLL_LENS_TIMER_OUT="$W/sampled15-$round.jsonl" UNROLL_LENS_PCSAMPLING=15 \
    "$W/prog" $ARGS > "$W/sampled15-$round.stdout" 2>&1
  echo "sampled run $round exit $?"
done
grep -o '"k":"[^"]*"' "$W/sampled15-1.jsonl" | sort -u | cut -d'"' -f4 > "$W/kernels.txt"
cat "$W/kernels.txt"
for k in $(cat "$W/kernels.txt"); do
  for rep in a b; do
    ncu --kernel-name-base mangled --kernel-name "regex:^$k\$" --launch-skip 2 --launch-count 1 \
      --section SourceCounters --section WarpStateStats --import-source yes \
      --clock-control none --cache-control none --export "$W/$k-$rep" --force-overwrite \
      "$W/prog" $ARGS > "$W/$k-$rep.ncu.log" 2>&1
    ncu --import "$W/$k-$rep.ncu-rep" --csv --page source --print-source cuda,sass > "$W/ncu-$k-$rep.csv" 2>> "$W/$k-$rep.ncu.log"
    echo "$k $rep: $(wc -l < "$W/ncu-$k-$rep.csv") lines"
    rm -f "$W/$k-$rep.ncu-rep"
  done
done
rm -f "$W/prog" "$W/libtimer.so"
cp "$W/gpu.txt" "$OUT/gpu.txt"
tar -C "$(dirname "$W")" -czf "$OUT/pc-lines.tar.gz" pc-lines
ls -la "$W" | head -60
grep -h pcerror "$W"/*.jsonl | sort | uniq -c | head
grep -h '"pcs"' "$W"/*.jsonl | cut -c1-300 | sed 's/"reasons":\[[^]]*\]/…/'
