// icache_ilp.cu - the instruction-cache cliff of over-unrolling, for code with
// instruction-level parallelism.
//
// ilp_chains runs a fully unrolled body of BODY steps inside a rolled outer
// loop of TOTAL / BODY iterations. Each step is four independent FFMA chains
// (one FFMA each, with a per-step immediate), so one warp can issue an FFMA
// every cycle: the hot loop asks the instruction cache for 16 bytes per cycle
// per SM sub-partition, where icache_cliff.cu's single dependent chain asks for
// a fraction of that. With 128 threads per block and one block per SM (4 warps
// per SM), nothing hides a fetch miss. On sm_90 the hot loop is about
// 64 bytes per step: BODY = 256, 512, 1024, 1536, 2048 give about 16, 32, 64,
// 96 and 128 KiB. Every BODY does the same TOTAL steps per thread, so times compare
// directly; unroll factors of the inner loop (e.g. `#pragma unroll 64`) keep
// the order of the FFMAs, so every variant prints the same checksum.
//
// Build:  nvcc -O3 -arch=sm_90 -DBODY=1024 -o icache_ilp icache_ilp.cu
// Run:    ./icache_ilp [--blocks B (default: #SMs)] [--total S] [--reps R]

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
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

#ifndef BODY
#define BODY 1024
#endif
// 128 threads per block, one block per SM: 4 warps per SM, one per sub-partition.
#define THREADS 128
#define DEFAULT_TOTAL (6144 * 64)  // a multiple of every BODY above

// Per-step multiplier, slightly below 1 and different for each of 64
// consecutive steps: with u a compile-time constant (full unroll), or known
// modulo 64 (an unroll by a multiple of 64), it is the FFMA's immediate
// operand. a * m + c stays bounded (it converges towards c / (1 - m)).
__host__ __device__ __forceinline__ float step_scale(int u)
{
    return 1.0f - (float)((u & 63) + 1) * (1.0f / 1048576.0f);
}

__global__ void ilp_chains(const float *__restrict__ in, float *__restrict__ out, int outer_iters)
{
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float a0 = in[8 * tid], a1 = in[8 * tid + 1], a2 = in[8 * tid + 2], a3 = in[8 * tid + 3];
    const float c0 = in[8 * tid + 4], c1 = in[8 * tid + 5], c2 = in[8 * tid + 6], c3 = in[8 * tid + 7];

    // Rolled outer loop: the hot loop's code is one unrolled body.
#pragma unroll 1
    for (int it = 0; it < outer_iters; ++it) {
#pragma unroll
        for (int u = 0; u < BODY; ++u) {
            const float m = step_scale(u);
            a0 = fmaf(a0, m, c0);
            a1 = fmaf(a1, m, c1);
            a2 = fmaf(a2, m, c2);
            a3 = fmaf(a3, m, c3);
        }
    }
    out[4 * tid] = a0;
    out[4 * tid + 1] = a1;
    out[4 * tid + 2] = a2;
    out[4 * tid + 3] = a3;
}

// CPU model of one thread: the same fused multiply-adds in the same order
// (fmaf rounds once, like FFMA), so the result is bit-exact.
static void cpu_thread(const float *in, float *out, int outer_iters)
{
    float a[4] = {in[0], in[1], in[2], in[3]};
    const float c[4] = {in[4], in[5], in[6], in[7]};
    for (int it = 0; it < outer_iters; ++it)
        for (int u = 0; u < BODY; ++u) {
            const float m = step_scale(u);
            for (int k = 0; k < 4; ++k) a[k] = fmaf(a[k], m, c[k]);
        }
    for (int k = 0; k < 4; ++k) out[k] = a[k];
}

static float median_time_ms(void (*launch)(int, const float *, float *, int), int blocks, const float *d_in, float *d_out,
                            int outer_iters, int reps)
{
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    std::vector<float> times;
    for (int r = 0; r < reps; ++r) {
        CHECK(cudaEventRecord(start));
        launch(blocks, d_in, d_out, outer_iters);
        CHECK(cudaEventRecord(stop));
        CHECK(cudaEventSynchronize(stop));
        float ms = 0.0f;
        CHECK(cudaEventElapsedTime(&ms, start, stop));
        times.push_back(ms);
    }
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

static void launch_ilp(int blocks, const float *d_in, float *d_out, int outer_iters)
{
    ilp_chains<<<blocks, THREADS>>>(d_in, d_out, outer_iters);
    CHECK(cudaGetLastError());
}

int main(int argc, char **argv)
{
    int blocks = 0;
    long long total = DEFAULT_TOTAL;
    int reps = 5;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--blocks") == 0 && i + 1 < argc) {
            blocks = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--total") == 0 && i + 1 < argc) {
            total = atoll(argv[++i]);
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: %s [--blocks B (default: #SMs)] [--total S (multiple of BODY=%d; default %d)] [--reps R]\n",
                    argv[0], BODY, DEFAULT_TOTAL);
            return strcmp(argv[i], "--help") == 0 ? 0 : 2;
        }
    }
    if (reps < 1) reps = 1;
    if (total < BODY || total % BODY != 0 || total / BODY > 0x7fffffff) {
        fprintf(stderr, "--total %lld must be a positive multiple of BODY=%d\n", total, BODY);
        return 2;
    }
    int device = 0;
    CHECK(cudaGetDevice(&device));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, device));
    if (blocks <= 0) blocks = prop.multiProcessorCount;
    if (blocks > (1 << 20)) {
        fprintf(stderr, "--blocks too large\n");
        return 2;
    }
    const int outer_iters = (int)(total / BODY);
    const int nthreads = blocks * THREADS;

    // Start values in [0.5, 1.5), offsets in [-1e-3, 1e-3): deterministic.
    std::vector<float> h_in(8 * (size_t)nthreads), h_out(4 * (size_t)nthreads);
    unsigned s = 12345u;
    for (size_t i = 0; i < h_in.size(); ++i) {
        s = s * 1664525u + 1013904223u;
        const float r = (float)(s >> 8) / 16777216.0f;
        h_in[i] = (i % 8) < 4 ? 0.5f + r : (r - 0.5f) * 2e-3f;
    }
    float *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, h_in.size() * sizeof(float)));
    CHECK(cudaMalloc(&d_out, h_out.size() * sizeof(float)));
    CHECK(cudaMemcpy(d_in, h_in.data(), h_in.size() * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(d_out, 0xFF, h_out.size() * sizeof(float)));  // poison

    launch_ilp(blocks, d_in, d_out, outer_iters);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(h_out.data(), d_out, h_out.size() * sizeof(float), cudaMemcpyDeviceToHost));

    // Threads checked bit-exactly on the CPU: first, last and a spread between.
    bool ok = true;
    const int num_samples = std::min(nthreads, 8);
    for (int k = 0; k < num_samples && ok; ++k) {
        const int t = (int)((long long)k * (nthreads - 1) / std::max(1, num_samples - 1));
        float want[4];
        cpu_thread(&h_in[8 * (size_t)t], want, outer_iters);
        for (int j = 0; j < 4; ++j)
            if (memcmp(&want[j], &h_out[4 * (size_t)t + j], sizeof(float)) != 0) {
                fprintf(stderr, "MISMATCH thread %d chain %d: got %.9g expected %.9g\n", t, j, h_out[4 * (size_t)t + j], want[j]);
                ok = false;
                break;
            }
    }
    double checksum = 0.0;
    for (float x : h_out) checksum += (double)x;

    const float ms = median_time_ms(launch_ilp, blocks, d_in, d_out, outer_iters, reps);
    printf("kernel=ilp_chains config=body=%d,blocks=%d,threads=%d,total=%lld time_ms=%.4f check=%s checksum=%.9e\n", BODY, blocks,
           THREADS, total, ms, ok ? "PASS" : "FAIL", checksum);
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    return ok ? 0 : 1;
}
