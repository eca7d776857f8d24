#!/usr/bin/env bash
# Issue 11 design probe, run on the GPU machine with bash; output kept in test/fixtures/gpu/probes/.
# Where does the time of one variant's measurement go? (issue 11 design probe)
set -u
W=/tmp/probe; rm -rf $W; mkdir -p $W; cd $W
export PATH=/usr/local/cuda/bin:$PATH
S=$OLDPWD/cuda-samples/matmul_unroll.cu
t() { local s=$(date +%s.%N); "$@" > $W/last.out 2>&1; local rc=$?; local e=$(date +%s.%N); printf '%-60s %6.2fs rc=%d\n' "$LABEL" "$(awk "BEGIN{print $e - $s}")" $rc; }
nvidia-smi -L; ncu --version | tail -1
LABEL="nvcc -O3 program" t nvcc -O3 -arch=sm_90 -o prog $S
LABEL="nvcc -O3 cubin" t nvcc -O3 -arch=sm_90 -cubin -o k.cubin $S
LABEL="8x nvcc -O3 program in parallel" t bash -c "for i in 1 2 3 4 5 6 7 8; do nvcc -O3 -arch=sm_90 -o p\$i $S & done; wait"
A="--only matmul_basic --reps 25"
LABEL="plain run" t ./prog $A
grep -c . last.out; head -5 last.out
LABEL="plain run again" t ./prog $A
K="--kernel-name-base mangled --kernel-name regex:^_Z12matmul_basic"
STALL='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio'
LABEL="ncu dur only, 20 launches" t ncu $K --launch-skip 2 --launch-count 20 --clock-control none --metrics gpu__time_duration.sum -o d1 -f ./prog $A
grep -c "PROF" last.out
LABEL="ncu dur only, 1 launch" t ncu $K --launch-skip 2 --launch-count 1 --clock-control none --metrics gpu__time_duration.sum -o d2 -f ./prog $A
LABEL="ncu all metrics, 20 launches (hand loop)" t ncu $K --launch-skip 2 --launch-count 20 --clock-control none --metrics gpu__time_duration.sum,$STALL,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread -o h1 -f ./prog $A
grep "passes\|pass" last.out | head -3
LABEL="ncu stalls only, 3 launches" t ncu $K --launch-skip 2 --launch-count 3 --clock-control none --metrics $STALL,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread -o s3 -f ./prog $A
LABEL="ncu stalls only, 1 launch" t ncu $K --launch-skip 2 --launch-count 1 --clock-control none --metrics $STALL,smsp__inst_executed.sum -o s1 -f ./prog $A
LABEL="ncu import csv raw" t ncu --import h1.ncu-rep --csv --page raw --print-kernel-base mangled
LABEL="ncu --csv direct no export dur 20" t ncu $K --launch-skip 2 --launch-count 20 --clock-control none --metrics gpu__time_duration.sum --csv --page raw ./prog $A
cat > two.sh <<EOS
./prog $A
./prog $A
EOS
LABEL="ncu target-processes all over 2 program runs, dur 40" t ncu $K --target-processes all --launch-skip 0 --launch-count 40 --clock-control none --metrics gpu__time_duration.sum -o tp -f bash two.sh
grep -c "PROF" last.out; tail -3 last.out
LABEL="ncu --version" t ncu --version
LABEL="nvidia-smi query" t nvidia-smi --query-gpu=index,name,uuid,clocks.sm,driver_version --format=csv,noheader
cat last.out
LABEL="ncu dur only again" t ncu $K --launch-skip 2 --launch-count 20 --clock-control none --metrics gpu__time_duration.sum -o d1b -f ./prog $A
LABEL="ncu all again" t ncu $K --launch-skip 2 --launch-count 20 --clock-control none --metrics gpu__time_duration.sum,$STALL,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread -o h1b -f ./prog $A
echo "--- medians"
for r in d1 h1 d1b h1b; do ncu --import $r.ncu-rep --csv --page raw --print-kernel-base mangled --metrics gpu__time_duration.sum 2>/dev/null | awk -F'","' 'NR>2{print $NF}' | tr -d '"' | sort -g | awk '{a[NR]=$1} END{print "'$r' n="NR" median="(NR%2?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2)}'; done
