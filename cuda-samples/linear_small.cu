// linear_small.cu - a tiny fused linear layer Y = X * W + R computed by ONE
// thread block, where X is ROWS x K, W is K x OUT, R (residual) and Y are
// ROWS x OUT, all row-major floats. Every trip count is a compile-time constant.
//
//   linear_small        : blanket "#pragma unroll" on every loop. The K loop sits
//                         inside the loops over the 8 rows and over the output
//                         columns a thread owns, so full unrolling multiplies them:
//                         ROWS * (OUT / BLOCK) * K copies of the multiply-add
//                         (8 * 4 * 256 = 8192 with the defaults). Code size explodes.
//   linear_small_rolled : the same computation with "#pragma unroll 1" on the
//                         outer loops (and the staging loop) and a modest
//                         "#pragma unroll 4" on the K loop, for comparison.
//
// Build:  nvcc -O3 -arch=sm_90 [-DK=64|128|256|512] [-DBLOCK=8|16|32|64] -o linear_small linear_small.cu
// Run:    ./linear_small [--reps R] [--only NAME]

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

#ifndef K
#define K 256  // reduction (inner) dimension
#endif
#ifndef BLOCK
#define BLOCK 16  // threads in the single block; each owns OUT / BLOCK output columns
#endif
#define ROWS 8
#define OUT 64
#define COLS_PER_THREAD (OUT / BLOCK)

static_assert(K >= 1 && K <= 1024, "K must be in 1..1024 (X is staged in shared memory)");
static_assert(BLOCK >= 1 && OUT % BLOCK == 0, "BLOCK must divide OUT (64)");
static_assert((ROWS * K) % BLOCK == 0, "BLOCK must divide ROWS * K (staging loop)");

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
// Kernels (launch with exactly one block of BLOCK threads)
// ---------------------------------------------------------------------------

__global__ void linear_small(const float *__restrict__ X, const float *__restrict__ W,
                             const float *__restrict__ R, float *__restrict__ Y)
{
    // X is reused by every thread: stage it in shared memory.
    __shared__ float xs[ROWS * K];
#pragma unroll
    for (int i = 0; i < ROWS * K / BLOCK; ++i)
        xs[i * BLOCK + threadIdx.x] = X[i * BLOCK + threadIdx.x];
    __syncthreads();

#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
#pragma unroll
        for (int j = 0; j < COLS_PER_THREAD; ++j) {
            const int col = j * BLOCK + threadIdx.x;  // consecutive threads: consecutive columns
            float acc = 0.0f;
#pragma unroll
            for (int k = 0; k < K; ++k)
                acc += xs[r * K + k] * W[k * OUT + col];
            Y[r * OUT + col] = acc + R[r * OUT + col];
        }
    }
}

__global__ void linear_small_rolled(const float *__restrict__ X, const float *__restrict__ W,
                                    const float *__restrict__ R, float *__restrict__ Y)
{
    __shared__ float xs[ROWS * K];
#pragma unroll 1
    for (int i = 0; i < ROWS * K / BLOCK; ++i)
        xs[i * BLOCK + threadIdx.x] = X[i * BLOCK + threadIdx.x];
    __syncthreads();

#pragma unroll 1
    for (int r = 0; r < ROWS; ++r) {
#pragma unroll 1
        for (int j = 0; j < COLS_PER_THREAD; ++j) {
            const int col = j * BLOCK + threadIdx.x;
            float acc = 0.0f;
#pragma unroll 4
            for (int k = 0; k < K; ++k)
                acc += xs[r * K + k] * W[k * OUT + col];
            Y[r * OUT + col] = acc + R[r * OUT + col];
        }
    }
}

// ---------------------------------------------------------------------------
// Host side
// ---------------------------------------------------------------------------

typedef void (*LinearKernel)(const float *__restrict__, const float *__restrict__,
                             const float *__restrict__, float *__restrict__);

struct Variant {
    const char *name;
    LinearKernel kernel;
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

static void usage(const char *prog)
{
    printf("usage: %s [--reps R (default 50)] [--only linear_small|linear_small_rolled]\n"
           "  sizes are compile-time: -DK=<inner dim, default 256> -DBLOCK=<threads, default 16>\n",
           prog);
}

int main(int argc, char **argv)
{
    int reps = 50;
    const char *only = nullptr;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
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
    if (reps < 1) reps = 1;

    const Variant variants[] = {
        {"linear_small", linear_small},
        {"linear_small_rolled", linear_small_rolled},
    };

    std::vector<float> hX(ROWS * K), hW(K * OUT), hR(ROWS * OUT), hY(ROWS * OUT);
    Rng rng(31337);
    for (float &v : hX) v = rng.signed_nonzero();
    for (float &v : hW) v = rng.signed_nonzero();
    for (float &v : hR) v = rng.signed_nonzero();

    std::vector<double> ref(ROWS * OUT), ref_abs(ROWS * OUT);
    for (int r = 0; r < ROWS; ++r) {
        for (int c = 0; c < OUT; ++c) {
            double s = hR[r * OUT + c], sa = std::fabs((double)hR[r * OUT + c]);
            for (int k = 0; k < K; ++k) {
                const double t = (double)hX[r * K + k] * hW[k * OUT + c];
                s += t;
                sa += std::fabs(t);
            }
            ref[r * OUT + c] = s;
            ref_abs[r * OUT + c] = sa;
        }
    }

    float *dX, *dW, *dR, *dY;
    CHECK(cudaMalloc(&dX, hX.size() * sizeof(float)));
    CHECK(cudaMalloc(&dW, hW.size() * sizeof(float)));
    CHECK(cudaMalloc(&dR, hR.size() * sizeof(float)));
    CHECK(cudaMalloc(&dY, hY.size() * sizeof(float)));
    CHECK(cudaMemcpy(dX, hX.data(), hX.size() * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dW, hW.data(), hW.size() * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dR, hR.data(), hR.size() * sizeof(float), cudaMemcpyHostToDevice));

    std::string failed;
    int ran = 0;
    for (const Variant &v : variants) {
        if (only && strcmp(only, v.name) != 0) continue;
        ++ran;
        auto launch = [&]() {
            v.kernel<<<1, BLOCK>>>(dX, dW, dR, dY);
            CHECK(cudaGetLastError());
        };
        CHECK(cudaMemset(dY, 0xFF, hY.size() * sizeof(float)));  // poison (NaN)
        launch();
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(hY.data(), dY, hY.size() * sizeof(float), cudaMemcpyDeviceToHost));

        bool ok = true;
        double checksum = 0.0;
        for (int i = 0; i < ROWS * OUT; ++i) {
            checksum += hY[i];
            if (ok && !(std::fabs(hY[i] - ref[i]) <= 1e-4 * ref_abs[i])) {
                fprintf(stderr, "MISMATCH kernel=%s at Y[%d][%d]: got %.7g expected %.7g\n", v.name,
                        i / OUT, i % OUT, hY[i], ref[i]);
                ok = false;
            }
        }
        const float ms = median_time_ms(launch, reps);
        printf("kernel=%s config=rows=%d,k=%d,out=%d,block=%d time_ms=%.4f check=%s checksum=%.6e\n",
               v.name, ROWS, K, OUT, BLOCK, ms, ok ? "PASS" : "FAIL", checksum);
        if (!ok) failed += std::string(failed.empty() ? "" : ",") + v.name;
    }

    CHECK(cudaFree(dX));
    CHECK(cudaFree(dW));
    CHECK(cudaFree(dR));
    CHECK(cudaFree(dY));

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
