#!/usr/bin/env bash
# Issue 27 probe (Get Started walkthrough, counter permission step), run on the GPU machine as root:
# what the NVIDIA driver says about profiling (/proc/driver/nvidia/params: RmProfilingAdminOnly),
# the capabilities root and an ordinary user (nobody) hold (/proc/self/status: CapEff), and whether
# that user's ncu may read the counters. Output kept in test/fixtures/gpu/h100/permission/
# (probe.txt whole; proc-driver-nvidia-params.txt, status-root.txt, status-nobody.txt cut from it).
set +e
echo "== params"; cat /proc/driver/nvidia/params
echo "== caps root"; grep -E '^(Uid|Cap)' /proc/self/status
echo "== ncu"; NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1); echo "ncu=$NCU"; $NCU --version
echo "== query-metrics root"; timeout 60 $NCU --query-metrics 2>&1 | head -5; echo "rc=$?"
echo "== as nobody"; su -s /bin/sh nobody -c "grep -E '^(Uid|Cap)' /proc/self/status; cd /tmp; HOME=/tmp timeout 60 $NCU --query-metrics 2>&1 | head -8; echo rc=\$?"
cat > /tmp/k.cu <<'CU'
#include <cstdio>
__global__ void k(float*x){x[threadIdx.x]*=2;}
int main(){float*d;cudaMalloc(&d,1024);k<<<1,256>>>(d);cudaDeviceSynchronize();printf("ok\n");}
CU
cd /tmp && nvcc -arch=sm_90 -o /tmp/k /tmp/k.cu && chmod 755 /tmp/k
echo "== ncu run as nobody"; su -s /bin/sh nobody -c "cd /tmp; HOME=/tmp timeout 120 $NCU --metrics gpu__time_duration.sum /tmp/k 2>&1 | tail -8; echo rc=\$?"
uname -a; nvidia-smi --query-gpu=name,driver_version --format=csv
