// matvec.cu - dense matrix-vector product y = A x (row-major floats) with three
// work mappings:
//
//   matvec_thread_per_row   : one thread walks a whole row (uncoalesced reads)
//   matvec_warp_per_row     : one warp per row, lane-strided loop + shuffle reduction
//   matvec_warps_per_row<W> : W warps per row (W = 2, 4, 8), shuffle reduction per
//                             warp, then the W warp sums combined via shared memory
//
// Build:  nvcc -O3 -arch=sm_90 [-DBLOCK=128|256|512|1024] -o matvec matvec.cu
// Run:    ./matvec [--rows R] [--cols C] [--reps N] [--only NAME]

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#ifndef BLOCK
#define BLOCK 256  // threads per block
#endif
static_assert(BLOCK >= 32 && BLOCK <= 1024 && BLOCK % 32 == 0, "BLOCK must be a multiple of 32 in 32..1024");

#define WARP 32
#define FULL_MASK 0xffffffffu

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
// Kernels
// ---------------------------------------------------------------------------

__global__ void matvec_thread_per_row(const float *__restrict__ A, const float *__restrict__ x,
                                      float *__restrict__ y, int rows, int cols)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;

    const float *a = A + (size_t)row * cols;
    float sum = 0.0f;
    for (int c = 0; c < cols; ++c)
        sum += a[c] * x[c];
    y[row] = sum;
}

// One warp per row: lanes read consecutive columns (coalesced), then a
// shuffle-down tree reduction leaves the row sum in lane 0.
__global__ void matvec_warp_per_row(const float *__restrict__ A, const float *__restrict__ x,
                                    float *__restrict__ y, int rows, int cols)
{
    const int lane = threadIdx.x % WARP;
    const int row = blockIdx.x * (blockDim.x / WARP) + threadIdx.x / WARP;
    // No early return: all 32 lanes must reach the full-mask shuffles.
    float sum = 0.0f;
    if (row < rows) {
        const float *a = A + (size_t)row * cols;
        for (int c = lane; c < cols; c += WARP)
            sum += a[c] * x[c];
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
        sum += __shfl_down_sync(FULL_MASK, sum, off);
    if (lane == 0 && row < rows) y[row] = sum;
}

// W warps per row: the row is split into W interleaved lane-strided slices.
// Launched with blockDim.x = rows_per_block * W * 32.
template <int W>
__global__ void matvec_warps_per_row(const float *__restrict__ A, const float *__restrict__ x,
                                     float *__restrict__ y, int rows, int cols)
{
    __shared__ float warp_sums[1024 / WARP];
    const int lane = threadIdx.x % WARP;
    const int warp = threadIdx.x / WARP;
    const int warp_in_row = warp % W;
    const int row = blockIdx.x * (blockDim.x / (WARP * W)) + warp / W;

    float sum = 0.0f;
    if (row < rows) {
        const float *a = A + (size_t)row * cols;
        for (int c = warp_in_row * WARP + lane; c < cols; c += W * WARP)
            sum += a[c] * x[c];
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
        sum += __shfl_down_sync(FULL_MASK, sum, off);
    if (lane == 0) warp_sums[warp] = sum;
    __syncthreads();

    // First warp of each row adds the W warp sums of its row.
    if (warp_in_row == 0 && lane == 0 && row < rows) {
        float total = 0.0f;
#pragma unroll
        for (int w = 0; w < W; ++w)
            total += warp_sums[warp + w];
        y[row] = total;
    }
}

template __global__ void matvec_warps_per_row<2>(const float *__restrict__, const float *__restrict__,
                                                 float *__restrict__, int, int);
template __global__ void matvec_warps_per_row<4>(const float *__restrict__, const float *__restrict__,
                                                 float *__restrict__, int, int);
template __global__ void matvec_warps_per_row<8>(const float *__restrict__, const float *__restrict__,
                                                 float *__restrict__, int, int);

// ---------------------------------------------------------------------------
// Host side
// ---------------------------------------------------------------------------

typedef void (*MatvecKernel)(const float *__restrict__, const float *__restrict__, float *__restrict__,
                             int, int);

struct Variant {
    const char *name;
    MatvecKernel kernel;
    int warps_per_row;  // 0 = thread per row
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
    float uniform(float lo, float hi) { return lo + (hi - lo) * (next() >> 8) * (1.0f / 16777216.0f); }
    float signed_nonzero() { return (next() & 1u ? 1.0f : -1.0f) * uniform(0.1f, 1.0f); }
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
    printf("usage: %s [--rows R (default 8192)] [--cols C (default 4096)] [--reps N (default 20)]"
           " [--only NAME]\n",
           prog);
}

int main(int argc, char **argv)
{
    int rows = 8192;
    int cols = 4096;
    int reps = 20;
    const char *only = nullptr;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--rows") == 0 && i + 1 < argc) {
            rows = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--cols") == 0 && i + 1 < argc) {
            cols = atoi(argv[++i]);
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
    if (rows < 1 || cols < 1 || (double)rows * cols > (double)(1u << 30)) {
        fprintf(stderr, "--rows and --cols must be positive with rows*cols <= 2^30\n");
        return 2;
    }
    if (reps < 1) reps = 1;

    const Variant variants[] = {
        {"matvec_thread_per_row", matvec_thread_per_row, 0},
        {"matvec_warp_per_row", matvec_warp_per_row, 1},
        {"matvec_warps_per_row<2>", matvec_warps_per_row<2>, 2},
        {"matvec_warps_per_row<4>", matvec_warps_per_row<4>, 4},
        {"matvec_warps_per_row<8>", matvec_warps_per_row<8>, 8},
    };

    const size_t a_elems = (size_t)rows * cols;
    std::vector<float> hA(a_elems), hx(cols), hy(rows);
    Rng rng(99);
    for (size_t i = 0; i < a_elems; ++i) hA[i] = rng.signed_nonzero();
    for (int c = 0; c < cols; ++c) hx[c] = rng.signed_nonzero();

    // CPU reference in double, plus sum of |terms| as the error scale.
    std::vector<double> ref(rows), ref_abs(rows);
    for (int r = 0; r < rows; ++r) {
        double s = 0.0, sa = 0.0;
        for (int c = 0; c < cols; ++c) {
            const double t = (double)hA[(size_t)r * cols + c] * hx[c];
            s += t;
            sa += std::fabs(t);
        }
        ref[r] = s;
        ref_abs[r] = sa;
    }

    float *dA, *dx, *dy;
    CHECK(cudaMalloc(&dA, a_elems * sizeof(float)));
    CHECK(cudaMalloc(&dx, cols * sizeof(float)));
    CHECK(cudaMalloc(&dy, rows * sizeof(float)));
    CHECK(cudaMemcpy(dA, hA.data(), a_elems * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dx, hx.data(), cols * sizeof(float), cudaMemcpyHostToDevice));

    std::string failed;
    int ran = 0;
    for (const Variant &v : variants) {
        if (!selected(only, v.name)) continue;
        ++ran;
        int threads, rows_per_block;
        if (v.warps_per_row == 0) {
            threads = BLOCK;
            rows_per_block = BLOCK;
        } else {
            // Keep whole rows inside a block; at least one row even if BLOCK < W * 32.
            rows_per_block = std::max(1, BLOCK / (WARP * v.warps_per_row));
            threads = rows_per_block * WARP * v.warps_per_row;
        }
        const int grid = (rows + rows_per_block - 1) / rows_per_block;
        auto launch = [&]() {
            v.kernel<<<grid, threads>>>(dA, dx, dy, rows, cols);
            CHECK(cudaGetLastError());
        };

        CHECK(cudaMemset(dy, 0xFF, rows * sizeof(float)));  // poison (NaN)
        launch();
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(hy.data(), dy, rows * sizeof(float), cudaMemcpyDeviceToHost));

        bool ok = true;
        double checksum = 0.0;
        for (int r = 0; r < rows; ++r) {
            checksum += hy[r];
            if (ok && !(std::fabs(hy[r] - ref[r]) <= 1e-4 * ref_abs[r])) {
                fprintf(stderr, "MISMATCH kernel=%s at y[%d]: got %.7g expected %.7g\n", v.name, r, hy[r],
                        ref[r]);
                ok = false;
            }
        }
        const float ms = median_time_ms(launch, reps);
        printf("kernel=%s config=rows=%d,cols=%d,block=%d,grid=%d time_ms=%.4f check=%s checksum=%.6e\n",
               v.name, rows, cols, threads, grid, ms, ok ? "PASS" : "FAIL", checksum);
        if (!ok) failed += std::string(failed.empty() ? "" : ",") + v.name;
    }

    CHECK(cudaFree(dA));
    CHECK(cudaFree(dx));
    CHECK(cudaFree(dy));

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
