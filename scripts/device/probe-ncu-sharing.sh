#!/usr/bin/env bash
# Issue 11 design probe, run on the GPU machine with bash; output kept in test/fixtures/gpu/probes/.
set -u
W=/tmp/probe; rm -rf $W; mkdir -p $W; cd $W
export PATH=/usr/local/cuda/bin:$PATH
S=$OLDPWD/cuda-samples/matmul_unroll.cu
t() { local s=$(date +%s.%N); "$@" > $W/last.out 2>&1; local rc=$?; local e=$(date +%s.%N); printf '%-60s %6.2fs rc=%d\n' "$LABEL" "$(awk "BEGIN{print $e - $s}")" $rc; }
med() { for r in "$@"; do ncu --import $r.ncu-rep --csv --page raw --print-kernel-base mangled --metrics gpu__time_duration.sum 2>/dev/null | awk -F'","' 'NR>2{print $NF}' | tr -d '"' | sort -g | awk '{a[NR]=$1} END{printf "'$r' n=%d median=%s  ", NR, (NR%2?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2)}'; done; echo; }
nvcc -O3 -arch=sm_90 -o prog $S
sed 's/^    for (int k = 0; k < n; ++k)$/    #pragma unroll 1\n    for (int k = 0; k < n; ++k)/' $S > s1.cu; grep -c "unroll 1$" s1.cu; nvcc -O3 -arch=sm_90 -o prog1 s1.cu
A="--only matmul_basic --reps 25"
K="--kernel-name-base mangled --kernel-name regex:^_Z12matmul_basic"
STALL='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio'
ALL="gpu__time_duration.sum,$STALL,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread"
./prog $A >/dev/null
LABEL="dur only" t ncu $K --launch-skip 2 --launch-count 20 --clock-control none --metrics gpu__time_duration.sum -o d1 -f ./prog $A
grep -m1 passes last.out
LABEL="all (hand)" t ncu $K --launch-skip 2 --launch-count 20 --clock-control none --metrics $ALL -o h1 -f ./prog $A
LABEL="all, replay-buffer memory" t ncu $K --launch-skip 2 --launch-count 20 --clock-control none --replay-buffer memory --metrics $ALL -o h2 -f ./prog $A
mkdir -p empty
LABEL="all, empty section folder" t ncu $K --launch-skip 2 --launch-count 20 --clock-control none --section-folder $W/empty --metrics $ALL -o h3 -f ./prog $A
tail -2 last.out
LABEL="all, prog1 alone" t ncu $K --launch-skip 2 --launch-count 20 --clock-control none --metrics $ALL -o p1 -f ./prog1 $A
LABEL="2 ncu concurrently same lock (prog, prog1)" t bash -c "ncu $K --launch-skip 2 --launch-count 20 --clock-control none --metrics $ALL -o c1 -f ./prog $A > c1.log 2>&1 & ncu $K --launch-skip 2 --launch-count 20 --clock-control none --metrics $ALL -o c2 -f ./prog1 $A > c2.log 2>&1; wait"
grep -i "wait\|lock" c1.log c2.log | head
mkdir -p t1 t2
LABEL="2 ncu concurrently separate TMPDIR (prog, prog1)" t bash -c "TMPDIR=$W/t1 ncu $K --launch-skip 2 --launch-count 20 --clock-control none --metrics $ALL -o e1 -f ./prog $A > e1.log 2>&1 & TMPDIR=$W/t2 ncu $K --launch-skip 2 --launch-count 20 --clock-control none --metrics $ALL -o e2 -f ./prog1 $A > e2.log 2>&1; wait"
LABEL="all (hand) again" t ncu $K --launch-skip 2 --launch-count 20 --clock-control none --metrics $ALL -o h4 -f ./prog $A
LABEL="plain + ncu all sequential" t bash -c "./prog $A >/dev/null; ncu $K --launch-skip 2 --launch-count 20 --clock-control none --metrics $ALL -o h5 -f ./prog $A"
echo "--- medians (prog)"; med d1 h1 h2 h3 h4 c1 e1
echo "--- medians (prog1)"; med p1 c2 e2
