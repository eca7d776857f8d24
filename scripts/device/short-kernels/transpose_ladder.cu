// transpose_ladder.cu - a ladder of short kernels (about 3-20 us on an H200 at the default size) for
// checking the kernel timer against ncu where a fixed microsecond matters (issue 42). Our own
// programs in the style of the usual matrix-transpose study; each transposes (or copies) an n x n
// float matrix:
//
//   copy             : out[y][x] = in[y][x], 32x8 threads a 32x32 tile (the bandwidth ceiling)
//   copy_shared      : the same through a shared-memory tile
//   naive            : out[x][y] = in[y][x] straight from global memory (strided writes)
//   coalesced        : through a 32x32 shared tile, both sides coalesced (32-way bank conflicts)
//   conflict_free    : the tile padded to 33 columns
//   rows2            : conflict_free with 16 threads a column (2 rows each: more threads a tile)
//   rows16           : conflict_free with 2 threads a column (16 rows each: fewer, longer threads)
//   diagonal         : conflict_free with the tiles visited in diagonal order
//
// Build: nvcc -O3 -arch=sm_90 -o transpose_ladder transpose_ladder.cu
// Run:   ./transpose_ladder [--size N (multiple of 32, default 1024)] [--reps R] [--only NAME] [--gap-us G]
//        --gap-us: the host sleeps G us after each timed launch (the gap a profiler leaves between launches)
// Prints one line per kernel: kernel=<name> config=... time_ms=<median of R event-timed launches> check=PASS|FAIL
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
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

constexpr int TILE = 32;

template <int ROWS>
__global__ void copy_rows(const float *__restrict__ in, float *__restrict__ out, int n)
{
    const int x = blockIdx.x * TILE + threadIdx.x;
    const int y = blockIdx.y * TILE + threadIdx.y;
#pragma unroll
    for (int j = 0; j < TILE; j += ROWS) out[(y + j) * n + x] = in[(y + j) * n + x];
}

__global__ void copy_shared(const float *__restrict__ in, float *__restrict__ out, int n)
{
    __shared__ float tile[TILE][TILE];
    const int x = blockIdx.x * TILE + threadIdx.x;
    const int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += 8) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
    __syncthreads();
    for (int j = 0; j < TILE; j += 8) out[(y + j) * n + x] = tile[threadIdx.y + j][threadIdx.x];
}

__global__ void naive(const float *__restrict__ in, float *__restrict__ out, int n)
{
    const int x = blockIdx.x * TILE + threadIdx.x;
    const int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += 8) out[x * n + (y + j)] = in[(y + j) * n + x];
}

// PAD 0: the tile's columns all fall in one bank; PAD 1: each column in its own.
// ROWS threads a column; DIAG visits the tiles in diagonal order (spreads the writes over partitions).
template <int PAD, int ROWS, bool DIAG>
__global__ void tiled(const float *__restrict__ in, float *__restrict__ out, int n)
{
    __shared__ float tile[TILE][TILE + PAD];
    int bx = blockIdx.x, by = blockIdx.y;
    if (DIAG) {
        by = blockIdx.x;
        bx = (blockIdx.x + blockIdx.y) % gridDim.x;
    }
    int x = bx * TILE + threadIdx.x;
    int y = by * TILE + threadIdx.y;
#pragma unroll
    for (int j = 0; j < TILE; j += ROWS) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
    __syncthreads();
    x = by * TILE + threadIdx.x;
    y = bx * TILE + threadIdx.y;
#pragma unroll
    for (int j = 0; j < TILE; j += ROWS) out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

struct Variant {
    const char *name;
    void (*kernel)(const float *, float *, int);
    int rows;         // threads a tile column (blockDim.y)
    bool transposes;  // false: a copy
};

static float median_ms(const Variant &v, dim3 grid, const float *in, float *out, int n, int reps, int gap_us)
{
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    std::vector<float> t;
    for (int r = 0; r < reps; ++r) {
        CHECK(cudaEventRecord(a));
        v.kernel<<<grid, dim3(TILE, v.rows)>>>(in, out, n);
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(b));
        CHECK(cudaEventSynchronize(b));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms);
        if (gap_us > 0) usleep(gap_us);
    }
    std::sort(t.begin(), t.end());
    CHECK(cudaEventDestroy(a));
    CHECK(cudaEventDestroy(b));
    return t[t.size() / 2];
}

int main(int argc, char **argv)
{
    int n = 1024, reps = 20, gap_us = 0;
    const char *only = nullptr;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--size") == 0 && i + 1 < argc) n = atoi(argv[++i]);
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
        else if (strcmp(argv[i], "--gap-us") == 0 && i + 1 < argc) gap_us = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--size N (multiple of 32)] [--reps R] [--only NAME] [--gap-us G]\n", argv[0]);
            return 2;
        }
    }
    if (n < TILE || n % TILE != 0 || n > 32768) {
        fprintf(stderr, "--size must be a multiple of 32 in 32..32768 (got %d)\n", n);
        return 2;
    }
    if (reps < 1) reps = 1;
    const Variant variants[] = {
        {"copy", copy_rows<8>, 8, false},
        {"copy_shared", copy_shared, 8, false},
        {"naive", naive, 8, true},
        {"coalesced", tiled<0, 8, false>, 8, true},
        {"conflict_free", tiled<1, 8, false>, 8, true},
        {"rows16", tiled<1, 2, false>, 2, true},
        {"rows2", tiled<1, 16, false>, 16, true},
        {"diagonal", tiled<1, 8, true>, 8, true},
    };
    const size_t count = (size_t)n * n;
    std::vector<float> h_in(count), h_out(count);
    unsigned s = 12345u;
    for (size_t i = 0; i < count; ++i) {
        s = s * 1664525u + 1013904223u;
        h_in[i] = 1.0f + (float)(s >> 8) / (float)(1u << 24);
    }
    float *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, count * sizeof(float)));
    CHECK(cudaMalloc(&d_out, count * sizeof(float)));
    CHECK(cudaMemcpy(d_in, h_in.data(), count * sizeof(float), cudaMemcpyHostToDevice));
    const dim3 grid(n / TILE, n / TILE);
    std::string failed;
    int ran = 0;
    for (const Variant &v : variants) {
        if (only && strcmp(only, v.name) != 0) continue;
        ++ran;
        CHECK(cudaMemset(d_out, 0xFF, count * sizeof(float)));
        v.kernel<<<grid, dim3(TILE, v.rows)>>>(d_in, d_out, n);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpy(h_out.data(), d_out, count * sizeof(float), cudaMemcpyDeviceToHost));
        bool ok = true;
        for (int y = 0; y < n && ok; ++y)
            for (int x = 0; x < n && ok; ++x)
                ok = h_out[(size_t)y * n + x] == (v.transposes ? h_in[(size_t)x * n + y] : h_in[(size_t)y * n + x]);
        if (!ok) fprintf(stderr, "MISMATCH kernel=%s\n", v.name);
        const float ms = median_ms(v, grid, d_in, d_out, n, reps, gap_us);
        printf("kernel=%s config=n=%d,block=32x%d time_ms=%.4f check=%s\n", v.name, n, v.rows, ms, ok ? "PASS" : "FAIL");
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
