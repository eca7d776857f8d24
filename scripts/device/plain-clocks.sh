#!/usr/bin/env bash
# Issue 25: matmul_basic run plainly (no tool of ours, no ncu) at --size 512 and 2048 with its own
# cudaEvent timing (time_ms), the SM clock, power and throttle reasons sampled every 20 ms by
# nvidia-smi; then ncu --cache-control none --clock-control none on three launches at 2048.
set -u
export PATH="$PATH:/usr/local/cuda/bin"
W=$(mktemp -d); cp cuda-samples/matmul_unroll.cu $W/; cd $W
nvcc -O3 -arch=sm_90 -o prog matmul_unroll.cu
for size in 512 2048; do
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv,noheader -lms 20 > smi-$size.csv &
  S=$!
  ./prog --only matmul_basic --size $size --reps 25
  sleep 0.2; kill $S
  echo "size $size: SM clock samples (MHz) min/max: $(awk -F', ' '{gsub(/ MHz/,"",$2); print $2}' smi-$size.csv | sort -n | sed -n '1p;$p' | tr '\n' ' ') power max: $(awk -F', ' '{gsub(/ W/,"",$3); print $3}' smi-$size.csv | sort -n | tail -1) reasons: $(awk -F', ' '{print $5}' smi-$size.csv | sort | uniq -c | tr '\n' ' ')"
done
ncu --cache-control none --clock-control none --metrics gpu__time_duration.sum --kernel-name regex:matmul_basic --launch-skip 2 --launch-count 3 ./prog --only matmul_basic --size 2048 --reps 25 2>&1 | grep -E "time_ms|gpu__time_duration" | head -5
