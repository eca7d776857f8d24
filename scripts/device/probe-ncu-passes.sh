#!/usr/bin/env bash
# Issue 11 design probe, run on the GPU machine with bash; output kept in test/fixtures/gpu/probes/.
set -u
W=/tmp/probe; rm -rf $W; mkdir -p $W/t0 $W/t1; cd $W
export PATH=/usr/local/cuda/bin:$PATH
S=$OLDPWD/cuda-samples/matmul_unroll.cu
t() { local s=$(date +%s.%N); "$@" > $W/last.out 2>&1; local rc=$?; local e=$(date +%s.%N); printf '%-50s %6.2fs rc=%d %s\n' "$LABEL" "$(awk "BEGIN{print $e - $s}")" $rc "$(grep -m1 -o '[0-9]* pass[es]*' $W/last.out)"; }
med() { for r in "$@"; do ncu --import $r.ncu-rep --csv --page raw --metrics gpu__time_duration.sum 2>/dev/null | awk -F'","' 'NR>2{print $NF}' | tr -d '"' | sort -g | awk '{a[NR]=$1} END{printf "'$r' %s  ", (NR%2?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2)}'; done; echo; }
nvcc -O3 -arch=sm_90 -o prog $S
A="--only matmul_basic --reps 25"
K="--kernel-name-base mangled --kernel-name regex:^_Z12matmul_basic --launch-skip 2 --clock-control none -f"
STALL='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio'
ALL="gpu__time_duration.sum,$STALL,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread"
export CUDA_VISIBLE_DEVICES=0
./prog $A > /dev/null
for rep in 1 2; do
LABEL="all x20 ($rep)" t ncu $K --launch-count 20 --metrics $ALL -o all$rep ./prog $A
LABEL="dur x20 ($rep)" t ncu $K --launch-count 20 --metrics gpu__time_duration.sum -o dur$rep ./prog $A
LABEL="dur+inst x20 ($rep)" t ncu $K --launch-count 20 --metrics gpu__time_duration.sum,smsp__inst_executed.sum -o di$rep ./prog $A
LABEL="dur+warps x20 ($rep)" t ncu $K --launch-count 20 --metrics gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active -o dw$rep ./prog $A
LABEL="dur, cache-control none x20 ($rep)" t ncu $K --launch-count 20 --cache-control none --metrics gpu__time_duration.sum -o dn$rep ./prog $A
LABEL="stalls x3 ($rep)" t ncu $K --launch-count 3 --metrics $STALL,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active -o st$rep ./prog $A
done
echo "medians:"; med all1 all2; med dur1 dur2; med di1 di2; med dw1 dw2; med dn1 dn2
unset CUDA_VISIBLE_DEVICES
LABEL="4 x (dur+inst, then stalls x3), 2 per GPU" t bash -c "for i in 1 2; do (CUDA_VISIBLE_DEVICES=0 TMPDIR=$W/t0 ncu $K --launch-count 20 --metrics gpu__time_duration.sum,smsp__inst_executed.sum -o x0\$i ./prog $A; CUDA_VISIBLE_DEVICES=0 TMPDIR=$W/t0 ncu $K --launch-count 3 --metrics $STALL -o y0\$i ./prog $A) > l0\$i 2>&1 & (CUDA_VISIBLE_DEVICES=1 TMPDIR=$W/t1 ncu $K --launch-count 20 --metrics gpu__time_duration.sum,smsp__inst_executed.sum -o x1\$i ./prog $A; CUDA_VISIBLE_DEVICES=1 TMPDIR=$W/t1 ncu $K --launch-count 3 --metrics $STALL -o y1\$i ./prog $A) > l1\$i 2>&1 & done; wait"
LABEL="2 x (dur+inst, then stalls x3), GPU0" t bash -c "for i in 1 2; do (CUDA_VISIBLE_DEVICES=0 TMPDIR=$W/t0 ncu $K --launch-count 20 --metrics gpu__time_duration.sum,smsp__inst_executed.sum -o z0\$i ./prog $A; CUDA_VISIBLE_DEVICES=0 TMPDIR=$W/t0 ncu $K --launch-count 3 --metrics $STALL -o w0\$i ./prog $A) > m0\$i 2>&1 & done; wait"
LABEL="4 x all, 2 per GPU" t bash -c "for i in 1 2; do CUDA_VISIBLE_DEVICES=0 TMPDIR=$W/t0 ncu $K --launch-count 20 --metrics $ALL -o p0\$i ./prog $A > p0\$i.log 2>&1 & CUDA_VISIBLE_DEVICES=1 TMPDIR=$W/t1 ncu $K --launch-count 20 --metrics $ALL -o p1\$i ./prog $A > p1\$i.log 2>&1 & done; wait"
med x01 x11 z01 p01 p11
