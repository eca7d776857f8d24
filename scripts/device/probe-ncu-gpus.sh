#!/usr/bin/env bash
# Issue 11 design probe, run on the GPU machine with bash; output kept in test/fixtures/gpu/probes/.
set -u
W=/tmp/probe; rm -rf $W; mkdir -p $W/t0 $W/t1 $W/t2; cd $W
export PATH=/usr/local/cuda/bin:$PATH
S=$OLDPWD/cuda-samples/matmul_unroll.cu
t() { local s=$(date +%s.%N); "$@" > $W/last.out 2>&1; local rc=$?; local e=$(date +%s.%N); printf '%-60s %6.2fs rc=%d\n' "$LABEL" "$(awk "BEGIN{print $e - $s}")" $rc; }
ncu --help | grep -i -B1 -A3 "lock" | head -20
nvcc -O3 -arch=sm_90 -o prog $S
A="--only matmul_basic --reps 25"
K="--kernel-name-base mangled --kernel-name regex:^_Z12matmul_basic"
STALL='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio'
ALL="gpu__time_duration.sum,$STALL,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread"
N="ncu $K --launch-skip 2 --launch-count 20 --clock-control none --metrics $ALL -f"
CUDA_VISIBLE_DEVICES=0 ./prog $A > /dev/null; CUDA_VISIBLE_DEVICES=1 ./prog $A > /dev/null
LABEL="one, GPU0" t env CUDA_VISIBLE_DEVICES=0 $N -o a ./prog $A
LABEL="one, GPU1" t env CUDA_VISIBLE_DEVICES=1 $N -o b ./prog $A
LABEL="GPU0+GPU1 concurrently, own TMPDIR" t bash -c "CUDA_VISIBLE_DEVICES=0 TMPDIR=$W/t0 $N -o c ./prog $A > c.log 2>&1 & CUDA_VISIBLE_DEVICES=1 TMPDIR=$W/t1 $N -o d ./prog $A > d.log 2>&1; wait"
ls -la $W/t0 $W/t1 /tmp | grep -i nsight
LABEL="GPU0+GPU1 concurrently, same TMPDIR" t bash -c "CUDA_VISIBLE_DEVICES=0 $N -o e ./prog $A > e.log 2>&1 & CUDA_VISIBLE_DEVICES=1 $N -o f ./prog $A > f.log 2>&1; wait"
LABEL="GPU0+GPU1 own TMPDIR, --devices 0 each" t bash -c "CUDA_VISIBLE_DEVICES=0 TMPDIR=$W/t0 $N --devices 0 -o g ./prog $A > g.log 2>&1 & CUDA_VISIBLE_DEVICES=1 TMPDIR=$W/t1 $N --devices 0 -o h ./prog $A > h.log 2>&1; wait"
LABEL="plain prog on GPU0 and GPU1 concurrently" t bash -c "CUDA_VISIBLE_DEVICES=0 ./prog $A > /dev/null & CUDA_VISIBLE_DEVICES=1 ./prog $A >/dev/null; wait"
LABEL="plain prog GPU0" t env CUDA_VISIBLE_DEVICES=0 ./prog $A
LABEL="4 ncu: 2 per GPU, own TMPDIR per GPU" t bash -c "for i in 1 2; do CUDA_VISIBLE_DEVICES=0 TMPDIR=$W/t0 $N -o p0\$i ./prog $A > p0\$i.log 2>&1 & CUDA_VISIBLE_DEVICES=1 TMPDIR=$W/t1 $N -o p1\$i ./prog $A > p1\$i.log 2>&1 & done; wait"
LABEL="2 ncu on GPU0, same lock" t bash -c "for i in 1 2; do CUDA_VISIBLE_DEVICES=0 TMPDIR=$W/t0 $N -o q0\$i ./prog $A > q0\$i.log 2>&1 & done; wait"
for r in a b c d g h p01 p11; do ncu --import $r.ncu-rep --csv --page raw --metrics gpu__time_duration.sum 2>/dev/null | awk -F'","' 'NR>2{print $NF}' | tr -d '"' | sort -g | awk '{a[NR]=$1} END{printf "'$r' n=%d median=%s  ", NR, (NR%2?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2)}'; done; echo
nproc; uptime
