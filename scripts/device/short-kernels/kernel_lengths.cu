// kernel_lengths.cu - one compute kernel at ten lengths, about 3 us to 700 us on an H200, for the
// timer's error against ncu as a function of kernel length (issue 42). Each length_<T> runs the
// same grid (8 blocks of 256 threads a multiprocessor); every thread runs T trips of four
// independent FMA chains, so the time grows linearly in T above the launch floor.
//
// Build: nvcc -O3 -arch=sm_90 -o kernel_lengths kernel_lengths.cu
// Run:   ./kernel_lengths [--reps R] [--only NAME]
// Prints one line per kernel: kernel=<name> config=... time_ms=<median of R event-timed launches> check=PASS|FAIL
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(call)                                                                                        \
    do {                                                                                                   \
        cudaError_t err_ = (call);                                                                         \
        if (err_ != cudaSuccess) {                                                                         \
            fprintf(stderr, "CUDA error at %s:%d: %s returned %s\n", __FILE__, __LINE__, #call,            \
                    cudaGetErrorString(err_));                                                             \
            exit(EXIT_FAILURE);                                                                            \
        }                                                                                                  \
    } while (0)

template <int TRIPS>
__global__ void length(const float *__restrict__ seed, float *__restrict__ out)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float a = seed[i], b = a + 1.0f, c = a + 2.0f, d = a + 3.0f;
    // the trip count is a template argument, but a rolled loop: the body stays four FMAs
#pragma unroll 1
    for (int t = 0; t < TRIPS; ++t) {
        a = fmaf(a, 0.999f, 0.001f);
        b = fmaf(b, 0.999f, 0.001f);
        c = fmaf(c, 0.999f, 0.001f);
        d = fmaf(d, 0.999f, 0.001f);
    }
    out[i] = a + b + c + d;
}

// The host's reference for one thread: the same FMAs in the same order.
static float reference(float a, int trips)
{
    float b = a + 1.0f, c = a + 2.0f, d = a + 3.0f;
    for (int t = 0; t < trips; ++t) {
        a = fmaf(a, 0.999f, 0.001f);
        b = fmaf(b, 0.999f, 0.001f);
        c = fmaf(c, 0.999f, 0.001f);
        d = fmaf(d, 0.999f, 0.001f);
    }
    return a + b + c + d;
}

struct Variant {
    const char *name;
    void (*kernel)(const float *, float *);
    int trips;
};

int main(int argc, char **argv)
{
    int reps = 20;
    const char *only = nullptr;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--reps R] [--only NAME]\n", argv[0]);
            return 2;
        }
    }
    if (reps < 1) reps = 1;
#define V(T) {"length<" #T ">", length<T>, T}
    const Variant variants[] = {V(8), V(32), V(96), V(224), V(480), V(992), V(2016), V(4064), V(8160), V(20448)};
#undef V
    int sms = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const int block = 256, grid = 8 * sms, threads = grid * block;
    std::vector<float> h_seed(threads), h_out(threads);
    for (int i = 0; i < threads; ++i) h_seed[i] = (float)(i % 1000) / 1000.0f;
    float *d_seed, *d_out;
    CHECK(cudaMalloc(&d_seed, threads * sizeof(float)));
    CHECK(cudaMalloc(&d_out, threads * sizeof(float)));
    CHECK(cudaMemcpy(d_seed, h_seed.data(), threads * sizeof(float), cudaMemcpyHostToDevice));
    cudaEvent_t ea, eb;
    CHECK(cudaEventCreate(&ea));
    CHECK(cudaEventCreate(&eb));
    std::string failed;
    int ran = 0;
    for (const Variant &v : variants) {
        if (only && strcmp(only, v.name) != 0 && !(strcmp(only, "length") == 0)) continue;
        ++ran;
        CHECK(cudaMemset(d_out, 0xFF, threads * sizeof(float)));
        v.kernel<<<grid, block>>>(d_seed, d_out);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpy(h_out.data(), d_out, threads * sizeof(float), cudaMemcpyDeviceToHost));
        bool ok = true;
        for (int i = 0; i < threads && ok; i += 997) ok = fabsf(h_out[i] - reference(h_seed[i], v.trips)) <= 1e-4f * fabsf(h_out[i]) + 1e-5f;
        if (!ok) fprintf(stderr, "MISMATCH kernel=%s\n", v.name);
        std::vector<float> t;
        for (int r = 0; r < reps; ++r) {
            CHECK(cudaEventRecord(ea));
            v.kernel<<<grid, block>>>(d_seed, d_out);
            CHECK(cudaGetLastError());
            CHECK(cudaEventRecord(eb));
            CHECK(cudaEventSynchronize(eb));
            float ms = 0;
            CHECK(cudaEventElapsedTime(&ms, ea, eb));
            t.push_back(ms);
        }
        std::sort(t.begin(), t.end());
        printf("kernel=%s config=grid=%d,block=%d,trips=%d time_ms=%.4f check=%s\n", v.name, grid, block, v.trips, t[t.size() / 2],
               ok ? "PASS" : "FAIL");
        if (!ok) failed += std::string(failed.empty() ? "" : ",") + v.name;
    }
    CHECK(cudaFree(d_seed));
    CHECK(cudaFree(d_out));
    if (only && ran == 0) {
        fprintf(stderr, "no kernel matches --only %s\n", only);
        return 2;
    }
    if (!failed.empty()) {
        fprintf(stderr, "FAILED kernels: %s\n", failed.c_str());
        return 1;
    }
    return 0;
}
