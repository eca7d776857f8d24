// reduce_unroll.cu - the parallel-reduction unrolling ladder (integer sum).
//
//   reduce_interleaved       : one element per thread, shared-memory tree loop
//   reduce_unroll{2,4,8}     : each thread first adds 2/4/8 blocks' worth of
//                              global data (straight-line loads), then the tree loop
//   reduce_unroll8_warptail  : unroll8 + the last warp's steps written out by hand
//   reduce_complete<BLOCK>   : unroll8 + the whole in-block tree written out
//                              (template block size) + warp tail
//
// Each kernel writes one partial sum per block; the host adds the partials
// (second stage) and compares with a CPU sum. Integer data makes the check exact.
//
// Build:  nvcc -O3 -arch=sm_90 [-DBLOCK=128|256|512|1024] -o reduce_unroll reduce_unroll.cu
// Run:    ./reduce_unroll [--size N] [--reps R] [--only NAME]

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#ifndef BLOCK
#define BLOCK 256  // threads per block, also the reduce_complete template argument
#endif
static_assert(BLOCK >= 64 && BLOCK <= 1024 && (BLOCK & (BLOCK - 1)) == 0,
              "BLOCK must be a power of two in 64..1024 (the warp tail reads idata[tid + 32])");

#define CHECK(call)                                                              \
    do {                                                                         \
        cudaError_t err_ = (call);                                               \
        if (err_ != cudaSuccess) {                                               \
            fprintf(stderr, "CUDA error at %s:%d: %s returned %s\n", __FILE__,   \
                    __LINE__, #call, cudaGetErrorString(err_));                  \
            exit(EXIT_FAILURE);                                                  \
        }                                                                        \
    } while (0)

// ---------------------------------------------------------------------------
// Kernels. All are launched with blockDim.x == BLOCK. The input buffer is
// zero-padded on the host to a multiple of 8 * BLOCK elements, so every block
// of every variant reads a full tile; the guards below are kept anyway so the
// kernels stay safe on unpadded input of a multiple of (U * blockDim.x).
// Inputs are never written, so repeated timing launches are idempotent.
// ---------------------------------------------------------------------------

__global__ void reduce_interleaved(const int *__restrict__ g_idata, int *__restrict__ g_odata,
                                   unsigned int n)
{
    __shared__ int idata[BLOCK];
    const unsigned int tid = threadIdx.x;
    const unsigned int idx = blockIdx.x * blockDim.x + threadIdx.x;

    idata[tid] = (idx < n) ? g_idata[idx] : 0;
    __syncthreads();

    // Interleaved pairs: thread tid adds the element "stride" away; the active
    // threads stay contiguous so whole warps retire as stride shrinks.
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) idata[tid] += idata[tid + stride];
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = idata[0];
}

__global__ void reduce_unroll2(const int *__restrict__ g_idata, int *__restrict__ g_odata,
                               unsigned int n)
{
    __shared__ int idata[BLOCK];
    const unsigned int tid = threadIdx.x;
    const unsigned int idx = blockIdx.x * blockDim.x * 2 + threadIdx.x;

    // Each thread first adds two blocks' worth of data (one per tile).
    int sum = 0;
    if (idx + blockDim.x < n) {
        int a1 = g_idata[idx];
        int a2 = g_idata[idx + blockDim.x];
        sum = a1 + a2;
    }
    idata[tid] = sum;
    __syncthreads();

    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) idata[tid] += idata[tid + stride];
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = idata[0];
}

__global__ void reduce_unroll4(const int *__restrict__ g_idata, int *__restrict__ g_odata,
                               unsigned int n)
{
    __shared__ int idata[BLOCK];
    const unsigned int tid = threadIdx.x;
    const unsigned int idx = blockIdx.x * blockDim.x * 4 + threadIdx.x;

    int sum = 0;
    if (idx + 3 * blockDim.x < n) {
        int a1 = g_idata[idx];
        int a2 = g_idata[idx + blockDim.x];
        int a3 = g_idata[idx + 2 * blockDim.x];
        int a4 = g_idata[idx + 3 * blockDim.x];
        sum = a1 + a2 + a3 + a4;
    }
    idata[tid] = sum;
    __syncthreads();

    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) idata[tid] += idata[tid + stride];
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = idata[0];
}

__global__ void reduce_unroll8(const int *__restrict__ g_idata, int *__restrict__ g_odata,
                               unsigned int n)
{
    __shared__ int idata[BLOCK];
    const unsigned int tid = threadIdx.x;
    const unsigned int idx = blockIdx.x * blockDim.x * 8 + threadIdx.x;

    int sum = 0;
    if (idx + 7 * blockDim.x < n) {
        int a1 = g_idata[idx];
        int a2 = g_idata[idx + blockDim.x];
        int a3 = g_idata[idx + 2 * blockDim.x];
        int a4 = g_idata[idx + 3 * blockDim.x];
        int a5 = g_idata[idx + 4 * blockDim.x];
        int a6 = g_idata[idx + 5 * blockDim.x];
        int a7 = g_idata[idx + 6 * blockDim.x];
        int a8 = g_idata[idx + 7 * blockDim.x];
        sum = a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8;
    }
    idata[tid] = sum;
    __syncthreads();

    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) idata[tid] += idata[tid + stride];
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = idata[0];
}

// Warp tail note (Volta and later): with independent thread scheduling the
// classic unsynchronised "vmem[tid] += vmem[tid + K]" chain is a data race -
// a lane may read vmem[tid + K] after the owning lane already updated it, or
// before the previous step's value is visible. Each step below is therefore
// (1) restricted to the lanes whose result is still needed (tid < K), so no
// lane reads a slot another lane writes in the same step, and (2) followed by
// __syncwarp() so the next step sees the stored values. The statement shape
// "vmem[tid] += vmem[tid + K];" is kept.

__global__ void reduce_unroll8_warptail(const int *__restrict__ g_idata, int *__restrict__ g_odata,
                                        unsigned int n)
{
    __shared__ int idata[BLOCK];
    const unsigned int tid = threadIdx.x;
    const unsigned int idx = blockIdx.x * blockDim.x * 8 + threadIdx.x;

    int sum = 0;
    if (idx + 7 * blockDim.x < n) {
        int a1 = g_idata[idx];
        int a2 = g_idata[idx + blockDim.x];
        int a3 = g_idata[idx + 2 * blockDim.x];
        int a4 = g_idata[idx + 3 * blockDim.x];
        int a5 = g_idata[idx + 4 * blockDim.x];
        int a6 = g_idata[idx + 5 * blockDim.x];
        int a7 = g_idata[idx + 6 * blockDim.x];
        int a8 = g_idata[idx + 7 * blockDim.x];
        sum = a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8;
    }
    idata[tid] = sum;
    __syncthreads();

    // Tree down to 64 live values; the last warp finishes without __syncthreads.
    for (int stride = blockDim.x / 2; stride > 32; stride >>= 1) {
        if (tid < stride) idata[tid] += idata[tid + stride];
        __syncthreads();
    }

    if (tid < 32) {
        volatile int *vmem = idata;
        vmem[tid] += vmem[tid + 32];
        __syncwarp();
        if (tid < 16) vmem[tid] += vmem[tid + 16];
        __syncwarp();
        if (tid < 8) vmem[tid] += vmem[tid + 8];
        __syncwarp();
        if (tid < 4) vmem[tid] += vmem[tid + 4];
        __syncwarp();
        if (tid < 2) vmem[tid] += vmem[tid + 2];
        __syncwarp();
        if (tid < 1) vmem[tid] += vmem[tid + 1];
    }
    if (tid == 0) g_odata[blockIdx.x] = idata[0];
}

// Complete unroll: the block size is a template argument, so every
// "iBlockSize >= X" test is resolved at compile time and the in-block loop
// disappears. Must be launched with blockDim.x == iBlockSize.
template <unsigned int iBlockSize>
__global__ void reduce_complete(const int *__restrict__ g_idata, int *__restrict__ g_odata,
                                unsigned int n)
{
    static_assert(iBlockSize >= 64 && iBlockSize <= 1024, "iBlockSize must be 64..1024");
    __shared__ int idata[iBlockSize];
    const unsigned int tid = threadIdx.x;
    const unsigned int idx = blockIdx.x * iBlockSize * 8 + threadIdx.x;

    int sum = 0;
    if (idx + 7 * iBlockSize < n) {
        int a1 = g_idata[idx];
        int a2 = g_idata[idx + iBlockSize];
        int a3 = g_idata[idx + 2 * iBlockSize];
        int a4 = g_idata[idx + 3 * iBlockSize];
        int a5 = g_idata[idx + 4 * iBlockSize];
        int a6 = g_idata[idx + 5 * iBlockSize];
        int a7 = g_idata[idx + 6 * iBlockSize];
        int a8 = g_idata[idx + 7 * iBlockSize];
        sum = a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8;
    }
    idata[tid] = sum;
    __syncthreads();

    if (iBlockSize >= 1024 && tid < 512) idata[tid] += idata[tid + 512];
    __syncthreads();
    if (iBlockSize >= 512 && tid < 256) idata[tid] += idata[tid + 256];
    __syncthreads();
    if (iBlockSize >= 256 && tid < 128) idata[tid] += idata[tid + 128];
    __syncthreads();
    if (iBlockSize >= 128 && tid < 64) idata[tid] += idata[tid + 64];
    __syncthreads();

    if (tid < 32) {
        volatile int *vmem = idata;
        vmem[tid] += vmem[tid + 32];
        __syncwarp();
        if (tid < 16) vmem[tid] += vmem[tid + 16];
        __syncwarp();
        if (tid < 8) vmem[tid] += vmem[tid + 8];
        __syncwarp();
        if (tid < 4) vmem[tid] += vmem[tid + 4];
        __syncwarp();
        if (tid < 2) vmem[tid] += vmem[tid + 2];
        __syncwarp();
        if (tid < 1) vmem[tid] += vmem[tid + 1];
    }
    if (tid == 0) g_odata[blockIdx.x] = idata[0];
}

template __global__ void reduce_complete<BLOCK>(const int *__restrict__, int *__restrict__,
                                                unsigned int);

// ---------------------------------------------------------------------------
// Host side
// ---------------------------------------------------------------------------

typedef void (*ReduceKernel)(const int *__restrict__, int *__restrict__, unsigned int);

struct Variant {
    const char *name;
    ReduceKernel kernel;
    int elems_per_thread;  // how many tiles of BLOCK elements one block consumes
};

struct Rng {
    uint64_t state;
    explicit Rng(uint64_t seed) : state(seed ? seed : 1) {}
    uint32_t next()
    {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        return (uint32_t)((state * 2685821657736338717ULL) >> 32);
    }
};

static float median_time_ms(const std::function<void()> &launch, int reps)
{
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    std::vector<float> times;
    for (int r = 0; r < reps; ++r) {
        CHECK(cudaEventRecord(start));
        launch();
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

static bool selected(const char *only, const char *name)
{
    if (!only) return true;
    if (strcmp(only, name) == 0) return true;
    const size_t len = strlen(only);
    return strncmp(only, name, len) == 0 && name[len] == '<';
}

static void usage(const char *prog)
{
    printf("usage: %s [--size N (elements, default 16777216)] [--reps R (default 20)] [--only NAME]\n",
           prog);
}

int main(int argc, char **argv)
{
    long long n_arg = 1LL << 24;
    int reps = 20;
    const char *only = nullptr;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--size") == 0 && i + 1 < argc) {
            n_arg = atoll(argv[++i]);
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
            only = argv[++i];
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(argv[0]);
            return 0;
        } else {
            fprintf(stderr, "unknown or incomplete option: %s\n", argv[i]);
            usage(argv[0]);
            return 2;
        }
    }
    // Upper bound keeps both the padded unsigned index and the int sum safe
    // (values are 1..9, so the sum stays below 2^31).
    if (n_arg < 1 || n_arg > (1LL << 27)) {
        fprintf(stderr, "--size must be in 1..%lld (got %lld)\n", 1LL << 27, n_arg);
        return 2;
    }
    if (reps < 1) reps = 1;

    char complete_name[64];
    snprintf(complete_name, sizeof(complete_name), "reduce_complete<%d>", BLOCK);
    const Variant variants[] = {
        {"reduce_interleaved", reduce_interleaved, 1},
        {"reduce_unroll2", reduce_unroll2, 2},
        {"reduce_unroll4", reduce_unroll4, 4},
        {"reduce_unroll8", reduce_unroll8, 8},
        {"reduce_unroll8_warptail", reduce_unroll8_warptail, 8},
        {complete_name, reduce_complete<BLOCK>, 8},
    };

    // Pad to a whole number of 8-tile chunks; the zero padding does not change the sum.
    const unsigned int n = (unsigned int)n_arg;
    const unsigned int chunk = 8u * BLOCK;
    const unsigned int n_padded = (n + chunk - 1) / chunk * chunk;

    std::vector<int> h_in(n_padded, 0);
    Rng rng(2024);
    long long ref = 0;
    for (unsigned int i = 0; i < n; ++i) {
        h_in[i] = 1 + (int)(rng.next() % 9u);  // 1..9: non-zero, sum cannot overflow
        ref += h_in[i];
    }

    const unsigned int max_blocks = n_padded / BLOCK;
    int *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, (size_t)n_padded * sizeof(int)));
    CHECK(cudaMalloc(&d_out, (size_t)max_blocks * sizeof(int)));
    CHECK(cudaMemcpy(d_in, h_in.data(), (size_t)n_padded * sizeof(int), cudaMemcpyHostToDevice));
    std::vector<int> h_out(max_blocks);

    std::string failed;
    int ran = 0;
    for (const Variant &v : variants) {
        if (!selected(only, v.name)) continue;
        ++ran;
        const unsigned int grid = n_padded / (BLOCK * v.elems_per_thread);
        auto launch = [&]() {
            v.kernel<<<grid, BLOCK>>>(d_in, d_out, n_padded);
            CHECK(cudaGetLastError());
        };

        CHECK(cudaMemset(d_out, 0xFF, (size_t)max_blocks * sizeof(int)));  // poison (-1)
        launch();
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(h_out.data(), d_out, (size_t)grid * sizeof(int), cudaMemcpyDeviceToHost));

        // Second stage on the host: add the per-block partial sums.
        long long gpu_sum = 0;
        for (unsigned int b = 0; b < grid; ++b) gpu_sum += h_out[b];
        const bool ok = (gpu_sum == ref);
        if (!ok)
            fprintf(stderr, "MISMATCH kernel=%s: got %lld expected %lld\n", v.name, gpu_sum, ref);

        const float ms = median_time_ms(launch, reps);
        printf("kernel=%s config=n=%u,block=%d,grid=%u time_ms=%.4f check=%s checksum=%.6e\n", v.name,
               n, BLOCK, grid, ms, ok ? "PASS" : "FAIL", (double)gpu_sum);
        if (!ok) failed += std::string(failed.empty() ? "" : ",") + v.name;
    }

    CHECK(cudaFree(d_in));
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
