// first_benchmark.cu - Unroll Lens's Get Started sample: a 1-D FIR filter,
//   y[i] = sum over t < taps of w[t] * x[i + t]
// with the tap count known only at run time, so nvcc picks an unroll factor for the tap loop
// on its own. Click "Benchmark this loop" above the tap loop in `fir`: Unroll Lens builds the
// loop with each unroll factor (unrollLens.unrollFactors), checks that every variant prints the
// same checksum, times each one on the GPU and shows the table, the fastest and the stall reasons.
//
// Build:  nvcc -O3 -arch=sm_90 -o first_benchmark first_benchmark.cu
// Run:    ./first_benchmark [--n N] [--taps T] [--reps R]
// Prints: kernel=fir config=<...> time_ms=<median> check=PASS|FAIL checksum=<%.6e>
//         (the samples' convention: the benchmark compares the checksums of its variants)

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(call)                                                              \
    do {                                                                         \
        cudaError_t err_ = (call);                                               \
        if (err_ != cudaSuccess) {                                               \
            fprintf(stderr, "CUDA error at %s:%d: %s returned %s\n", __FILE__,   \
                    __LINE__, #call, cudaGetErrorString(err_));                  \
            exit(EXIT_FAILURE);                                                  \
        }                                                                        \
    } while (0)

#define MAX_TAPS 256

// Every thread of a warp reads the same tap at once: a broadcast from the constant cache.
__constant__ float c_taps[MAX_TAPS];

__global__ void fir(const float *__restrict__ x, float *__restrict__ y, int n, int taps)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
    for (int t = 0; t < taps; ++t)
        acc += c_taps[t] * x[i + t];
    y[i] = acc;
}

// A fixed-seed generator (xorshift64*), so every run has the same inputs.
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static float next_float()
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    const uint32_t r = (uint32_t)((rng_state * 0x2545F4914F6CDD1Dull) >> 40);  // 24 bits
    return 0.25f + (float)r / (float)(1u << 24);                                 // [0.25, 1.25): never 0
}

int main(int argc, char **argv)
{
    int n = 1 << 22, taps = 32, reps = 30;
    for (int a = 1; a < argc; ++a) {
        const bool more = a + 1 < argc;
        if (!strcmp(argv[a], "--n") && more) n = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--taps") && more) taps = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--reps") && more) reps = atoi(argv[++a]);
        else {
            fprintf(stderr, "usage: %s [--n N] [--taps 1..%d] [--reps R]\n", argv[0], MAX_TAPS);
            return 2;
        }
    }
    if (n < 1 || taps < 1 || taps > MAX_TAPS || reps < 1) {
        fprintf(stderr, "bad arguments: n=%d taps=%d reps=%d\n", n, taps, reps);
        return 2;
    }

    std::vector<float> x(n + taps - 1), w(taps), y(n);
    for (float &v : x) v = next_float();
    for (float &v : w) v = next_float() / taps;

    float *d_x, *d_y;
    CHECK(cudaMalloc(&d_x, x.size() * sizeof(float)));
    CHECK(cudaMalloc(&d_y, y.size() * sizeof(float)));
    CHECK(cudaMemcpy(d_x, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpyToSymbol(c_taps, w.data(), taps * sizeof(float)));
    CHECK(cudaMemset(d_y, 0xFF, y.size() * sizeof(float)));  // NaN: a thread that writes nothing fails the check

    const int block = 256, grid = (n + block - 1) / block;
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    std::vector<float> ms(reps);
    for (int r = 0; r < reps; ++r) {
        CHECK(cudaEventRecord(start));
        fir<<<grid, block>>>(d_x, d_y, n, taps);
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(stop));
        CHECK(cudaEventSynchronize(stop));
        CHECK(cudaEventElapsedTime(&ms[r], start, stop));
    }
    CHECK(cudaMemcpy(y.data(), d_y, y.size() * sizeof(float), cudaMemcpyDeviceToHost));

    // The CPU adds the taps in the same order: any unroll factor gives the same sums.
    bool ok = true;
    double checksum = 0.0;
    for (int i = 0; i < n; ++i) {
        float ref = 0.0f;
        for (int t = 0; t < taps; ++t) ref += w[t] * x[i + t];
        if (!(std::fabs(y[i] - ref) <= 1e-4f * std::fabs(ref))) ok = false;
        checksum += y[i];
    }
    std::sort(ms.begin(), ms.end());
    printf("kernel=fir config=n=%d,taps=%d,block=%d time_ms=%.4f check=%s checksum=%.6e\n", n, taps, block, ms[reps / 2],
           ok ? "PASS" : "FAIL", checksum);
    if (!ok) printf("MISMATCH kernel=fir\nFAILED kernels: fir\n");
    CHECK(cudaFree(d_x));
    CHECK(cudaFree(d_y));
    return ok ? 0 : 1;
}
