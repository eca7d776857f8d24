// matmul_unroll.cu - naive square matmul C = A * B (row-major floats) with
// several ways of unrolling the inner-product (k) loop.
//
//   matmul_basic            : plain runtime-trip-count k loop
//   matmul_unroll{2,4,8,16} : hand-written guarded unrolls (step U, U guarded statements)
//   matmul_unroll4_noguard  : hand-written unroll by 4 with NO remainder guard
//   matmul_pragma<U>        : compiler unroll via "#pragma unroll U", U = 2,4,8,16
//
// Build:  nvcc -O3 -arch=sm_90 [-DBLOCK=8|16|32] -o matmul_unroll matmul_unroll.cu
// Run:    ./matmul_unroll [--size N] [--reps R] [--only NAME]

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
#define BLOCK 16  // threads per block edge (BLOCK x BLOCK threads)
#endif
static_assert(BLOCK == 8 || BLOCK == 16 || BLOCK == 32, "BLOCK must be 8, 16 or 32");

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
// Kernels. Each thread computes one C[row][col].
// ---------------------------------------------------------------------------

__global__ void matmul_basic(const float *__restrict__ A, const float *__restrict__ B,
                             float *__restrict__ C, int n)
{
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n || col >= n) return;

    float sum = 0.0f;
    for (int k = 0; k < n; ++k)
        sum += A[row * n + k] * B[k * n + col];
    C[row * n + col] = sum;
}

// Guarded manual unrolls: the loop advances by U and the body repeats the
// multiply-add U times with offsets 0..U-1. Every copy is guarded so that any
// n (not only multiples of U) is handled without a separate remainder loop.

__global__ void matmul_unroll2(const float *__restrict__ A, const float *__restrict__ B,
                               float *__restrict__ C, int n)
{
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n || col >= n) return;

    float sum = 0.0f;
    for (int k = 0; k < n; k += 2) {
        if (k + 0 < n) sum += A[row * n + k + 0] * B[(k + 0) * n + col];
        if (k + 1 < n) sum += A[row * n + k + 1] * B[(k + 1) * n + col];
    }
    C[row * n + col] = sum;
}

__global__ void matmul_unroll4(const float *__restrict__ A, const float *__restrict__ B,
                               float *__restrict__ C, int n)
{
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n || col >= n) return;

    float sum = 0.0f;
    for (int k = 0; k < n; k += 4) {
        if (k + 0 < n) sum += A[row * n + k + 0] * B[(k + 0) * n + col];
        if (k + 1 < n) sum += A[row * n + k + 1] * B[(k + 1) * n + col];
        if (k + 2 < n) sum += A[row * n + k + 2] * B[(k + 2) * n + col];
        if (k + 3 < n) sum += A[row * n + k + 3] * B[(k + 3) * n + col];
    }
    C[row * n + col] = sum;
}

__global__ void matmul_unroll8(const float *__restrict__ A, const float *__restrict__ B,
                               float *__restrict__ C, int n)
{
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n || col >= n) return;

    float sum = 0.0f;
    for (int k = 0; k < n; k += 8) {
        if (k + 0 < n) sum += A[row * n + k + 0] * B[(k + 0) * n + col];
        if (k + 1 < n) sum += A[row * n + k + 1] * B[(k + 1) * n + col];
        if (k + 2 < n) sum += A[row * n + k + 2] * B[(k + 2) * n + col];
        if (k + 3 < n) sum += A[row * n + k + 3] * B[(k + 3) * n + col];
        if (k + 4 < n) sum += A[row * n + k + 4] * B[(k + 4) * n + col];
        if (k + 5 < n) sum += A[row * n + k + 5] * B[(k + 5) * n + col];
        if (k + 6 < n) sum += A[row * n + k + 6] * B[(k + 6) * n + col];
        if (k + 7 < n) sum += A[row * n + k + 7] * B[(k + 7) * n + col];
    }
    C[row * n + col] = sum;
}

__global__ void matmul_unroll16(const float *__restrict__ A, const float *__restrict__ B,
                                float *__restrict__ C, int n)
{
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n || col >= n) return;

    float sum = 0.0f;
    for (int k = 0; k < n; k += 16) {
        if (k + 0 < n) sum += A[row * n + k + 0] * B[(k + 0) * n + col];
        if (k + 1 < n) sum += A[row * n + k + 1] * B[(k + 1) * n + col];
        if (k + 2 < n) sum += A[row * n + k + 2] * B[(k + 2) * n + col];
        if (k + 3 < n) sum += A[row * n + k + 3] * B[(k + 3) * n + col];
        if (k + 4 < n) sum += A[row * n + k + 4] * B[(k + 4) * n + col];
        if (k + 5 < n) sum += A[row * n + k + 5] * B[(k + 5) * n + col];
        if (k + 6 < n) sum += A[row * n + k + 6] * B[(k + 6) * n + col];
        if (k + 7 < n) sum += A[row * n + k + 7] * B[(k + 7) * n + col];
        if (k + 8 < n) sum += A[row * n + k + 8] * B[(k + 8) * n + col];
        if (k + 9 < n) sum += A[row * n + k + 9] * B[(k + 9) * n + col];
        if (k + 10 < n) sum += A[row * n + k + 10] * B[(k + 10) * n + col];
        if (k + 11 < n) sum += A[row * n + k + 11] * B[(k + 11) * n + col];
        if (k + 12 < n) sum += A[row * n + k + 12] * B[(k + 12) * n + col];
        if (k + 13 < n) sum += A[row * n + k + 13] * B[(k + 13) * n + col];
        if (k + 14 < n) sum += A[row * n + k + 14] * B[(k + 14) * n + col];
        if (k + 15 < n) sum += A[row * n + k + 15] * B[(k + 15) * n + col];
    }
    C[row * n + col] = sum;
}

// Manual unroll by 4 WITHOUT remainder guards.
// PRECONDITION: n % 4 == 0. For other n the last iteration reads past the end
// of the row of A / past the last row of B (out of bounds) and produces a wrong
// sum. main() only launches this kernel when n % 4 == 0. It exists on purpose
// to exercise a "missing remainder guard" diagnostic.
__global__ void matmul_unroll4_noguard(const float *__restrict__ A, const float *__restrict__ B,
                                       float *__restrict__ C, int n)
{
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n || col >= n) return;

    float sum = 0.0f;
    for (int k = 0; k < n; k += 4) {
        sum += A[row * n + k + 0] * B[(k + 0) * n + col];
        sum += A[row * n + k + 1] * B[(k + 1) * n + col];
        sum += A[row * n + k + 2] * B[(k + 2) * n + col];
        sum += A[row * n + k + 3] * B[(k + 3) * n + col];
    }
    C[row * n + col] = sum;
}

// Compiler unroll: same loop as matmul_basic, unrolled U times by nvcc. The
// trip count is a runtime value, so nvcc emits the unrolled body plus its own
// remainder handling.
template <int U>
__global__ void matmul_pragma(const float *__restrict__ A, const float *__restrict__ B,
                              float *__restrict__ C, int n)
{
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n || col >= n) return;

    float sum = 0.0f;
#pragma unroll U
    for (int k = 0; k < n; ++k)
        sum += A[row * n + k] * B[k * n + col];
    C[row * n + col] = sum;
}

template __global__ void matmul_pragma<2>(const float *__restrict__, const float *__restrict__,
                                          float *__restrict__, int);
template __global__ void matmul_pragma<4>(const float *__restrict__, const float *__restrict__,
                                          float *__restrict__, int);
template __global__ void matmul_pragma<8>(const float *__restrict__, const float *__restrict__,
                                          float *__restrict__, int);
template __global__ void matmul_pragma<16>(const float *__restrict__, const float *__restrict__,
                                           float *__restrict__, int);

// ---------------------------------------------------------------------------
// Host side
// ---------------------------------------------------------------------------

typedef void (*MatmulKernel)(const float *__restrict__, const float *__restrict__,
                             float *__restrict__, int);

struct Variant {
    const char *name;
    MatmulKernel kernel;
    bool needs_n_multiple_of_4;
};

// Small deterministic generator (xorshift64*), so runs are reproducible.
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

// "--only matmul_pragma" selects every matmul_pragma<U>; otherwise exact match.
static bool selected(const char *only, const char *name)
{
    if (!only) return true;
    if (strcmp(only, name) == 0) return true;
    const size_t len = strlen(only);
    return strncmp(only, name, len) == 0 && name[len] == '<';
}

static void usage(const char *prog)
{
    printf("usage: %s [--size N (128..4096, default 512)] [--reps R (default 10)] [--only NAME]\n", prog);
}

int main(int argc, char **argv)
{
    int n = 512;
    int reps = 10;
    const char *only = nullptr;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--size") == 0 && i + 1 < argc) {
            n = atoi(argv[++i]);
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
    if (n < 128 || n > 4096) {
        fprintf(stderr, "--size must be in 128..4096 (got %d)\n", n);
        return 2;
    }
    if (reps < 1) reps = 1;

    const Variant variants[] = {
        {"matmul_basic", matmul_basic, false},
        {"matmul_unroll2", matmul_unroll2, false},
        {"matmul_unroll4", matmul_unroll4, false},
        {"matmul_unroll8", matmul_unroll8, false},
        {"matmul_unroll16", matmul_unroll16, false},
        {"matmul_unroll4_noguard", matmul_unroll4_noguard, true},
        {"matmul_pragma<2>", matmul_pragma<2>, false},
        {"matmul_pragma<4>", matmul_pragma<4>, false},
        {"matmul_pragma<8>", matmul_pragma<8>, false},
        {"matmul_pragma<16>", matmul_pragma<16>, false},
    };

    const size_t elems = (size_t)n * n;
    const size_t bytes = elems * sizeof(float);
    std::vector<float> hA(elems), hB(elems), hC(elems);
    Rng rng(12345);
    // Positive, non-zero inputs: no cancellation, so a relative check is meaningful.
    for (size_t i = 0; i < elems; ++i) hA[i] = rng.uniform(0.1f, 1.0f);
    for (size_t i = 0; i < elems; ++i) hB[i] = rng.uniform(0.1f, 1.0f);

    // CPU reference in double. Full matrix for n <= 512; for larger n only a
    // few complete rows (always including the first and last) to stay fast.
    std::vector<int> check_rows;
    if (n <= 512) {
        for (int r = 0; r < n; ++r) check_rows.push_back(r);
    } else {
        check_rows.push_back(0);
        check_rows.push_back(n - 1);
        for (int i = 0; i < 6; ++i) check_rows.push_back((int)(rng.next() % (uint32_t)n));
    }
    std::vector<double> ref(check_rows.size() * (size_t)n, 0.0);
    for (size_t ri = 0; ri < check_rows.size(); ++ri) {
        const int r = check_rows[ri];
        double *out = &ref[ri * (size_t)n];
        for (int k = 0; k < n; ++k) {
            const double a = hA[(size_t)r * n + k];
            const float *brow = &hB[(size_t)k * n];
            for (int c = 0; c < n; ++c) out[c] += a * brow[c];
        }
    }

    float *dA, *dB, *dC;
    CHECK(cudaMalloc(&dA, bytes));
    CHECK(cudaMalloc(&dB, bytes));
    CHECK(cudaMalloc(&dC, bytes));
    CHECK(cudaMemcpy(dA, hA.data(), bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dB, hB.data(), bytes, cudaMemcpyHostToDevice));

    const dim3 block(BLOCK, BLOCK);
    const dim3 grid((n + BLOCK - 1) / BLOCK, (n + BLOCK - 1) / BLOCK);
    const double rtol = 1e-4;  // float accumulation of n positive terms vs double
    std::string failed;
    int ran = 0;

    for (const Variant &v : variants) {
        if (!selected(only, v.name)) continue;
        if (v.needs_n_multiple_of_4 && n % 4 != 0) {
            printf("kernel=%s skipped (requires n %% 4 == 0, n=%d)\n", v.name, n);
            continue;
        }
        ++ran;
        auto launch = [&]() {
            v.kernel<<<grid, block>>>(dA, dB, dC, n);
            CHECK(cudaGetLastError());
        };

        // Poison the output (all-ones bytes = NaN) so stale results cannot pass.
        CHECK(cudaMemset(dC, 0xFF, bytes));
        launch();
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(hC.data(), dC, bytes, cudaMemcpyDeviceToHost));

        bool ok = true;
        for (size_t ri = 0; ri < check_rows.size() && ok; ++ri) {
            const int r = check_rows[ri];
            for (int c = 0; c < n; ++c) {
                const double want = ref[ri * (size_t)n + c];
                const double got = hC[(size_t)r * n + c];
                if (!(std::fabs(got - want) <= rtol * std::fabs(want))) {
                    fprintf(stderr, "MISMATCH kernel=%s at C[%d][%d]: got %.7g expected %.7g\n",
                            v.name, r, c, got, want);
                    ok = false;
                    break;
                }
            }
        }
        double checksum = 0.0;
        for (size_t i = 0; i < elems; ++i) checksum += hC[i];

        const float ms = median_time_ms(launch, reps);
        printf("kernel=%s config=n=%d,block=%dx%d time_ms=%.4f check=%s checksum=%.6e\n", v.name, n,
               BLOCK, BLOCK, ms, ok ? "PASS" : "FAIL", checksum);
        if (!ok) failed += std::string(failed.empty() ? "" : ",") + v.name;
    }

    CHECK(cudaFree(dA));
    CHECK(cudaFree(dB));
    CHECK(cudaFree(dC));

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
