// Issue 25: what the fixed ~1 µs between the CUPTI timer's kernel durations and ncu's
// gpu__time_duration.sum is. An empty kernel and a kernel that spins a fixed number of cycles,
// 30 launches each, every launch also timed by a pair of cudaEvents around it (the program's own
// view); scripts/device/run-timer-overheads.sh runs it under the timer and under ncu.
#include <cstdio>

__global__ void empty_kernel() {}

__global__ void spin_kernel(long long cycles, int *sink)
{
    const long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
    if (threadIdx.x == 0 && blockIdx.x == 0) *sink = 1;
}

int main()
{
    int *sink = nullptr;
    if (cudaMalloc(&sink, sizeof(int)) != cudaSuccess) return 1;
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    for (int k = 0; k < 2; ++k) {
        for (int i = 0; i < 30; ++i) {
            cudaEventRecord(a);
            if (k == 0) empty_kernel<<<1, 32>>>();
            else spin_kernel<<<132, 128>>>(100000, sink); // ~50 µs at 1.98 GHz
            cudaEventRecord(b);
            cudaEventSynchronize(b);
            float ms = 0;
            cudaEventElapsedTime(&ms, a, b);
            printf("event %s %.6f\n", k == 0 ? "empty" : "spin", ms);
        }
    }
    const cudaError_t e = cudaDeviceSynchronize();
    printf("%s\n", e == cudaSuccess ? "ok" : cudaGetErrorString(e));
    return e == cudaSuccess ? 0 : 1;
}
