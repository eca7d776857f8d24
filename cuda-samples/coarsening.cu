// coarsening.cu - thread coarsening ("unrolling the parallel loop"): one thread
// takes over the work of N threads, with the N copies written out by hand.
//
// (a) Gauss-Jordan elimination of many independent 32x32 systems, one block per
//     system, matrix in shared memory:
//       gj_rows1/2/4/8 : each thread owns rows N*threadIdx.x + 0..N-1 of one column
// (b) Electrostatic potential on a 2D slice (direct Coulomb summation):
//       potential_pts1/2/4/8 : each thread computes N neighbouring grid points in x
//
// Build:  nvcc -O3 -arch=sm_90 [-DBLOCK=16|32|64|128] -o coarsening coarsening.cu
//         (BLOCK = threads along x of the potential kernels; blocks are BLOCK x 8)
// Run:    ./coarsening [--systems S] [--nx X] [--ny Y] [--atoms A] [--reps R] [--only NAME]

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
#define BLOCK 32  // potential kernels: threads along x (block is BLOCK x POT_BLOCK_Y)
#endif
#define POT_BLOCK_Y 8
static_assert(BLOCK >= 8 && BLOCK * POT_BLOCK_Y <= 1024 && (BLOCK & (BLOCK - 1)) == 0,
              "BLOCK must be a power of two in 8..128");

#define CHECK(call)                                                              \
    do {                                                                         \
        cudaError_t err_ = (call);                                               \
        if (err_ != cudaSuccess) {                                               \
            fprintf(stderr, "CUDA error at %s:%d: %s returned %s\n", __FILE__,   \
                    __LINE__, #call, cudaGetErrorString(err_));                  \
            exit(EXIT_FAILURE);                                                  \
        }                                                                        \
    } while (0)

// ===========================================================================
// (a) Gauss-Jordan elimination, DIM x DIM systems stored as augmented
//     DIM x (DIM + 1) row-major matrices [A | b]. No pivoting: the host builds
//     strictly diagonally dominant matrices, for which that is stable.
//
// Block layout: blockDim = (DIM / N, DIM). threadIdx.y selects the column
// c = threadIdx.y + 1 (columns 1..DIM; column 0 is only ever read as the first
// pivot column, so it needs no updates). threadIdx.x selects a group of N rows
// starting at r0 = N * threadIdx.x. Every pivot step each thread updates its
// N elements m[r0 + j][c] - the N statements are the coarsened copies.
// ===========================================================================

#define DIM 32
#define COLS (DIM + 1)

// Cooperative copy of one augmented system into shared memory.
__device__ __forceinline__ void gj_load(float (*m)[COLS], const float *__restrict__ src)
{
    const int tid = threadIdx.y * blockDim.x + threadIdx.x;
    const int nthreads = blockDim.x * blockDim.y;
    for (int e = tid; e < DIM * COLS; e += nthreads) m[e / COLS][e % COLS] = src[e];
}

__global__ void gj_rows1(const float *__restrict__ aug, float *__restrict__ x)
{
    __shared__ float m[DIM][COLS];
    __shared__ float piv[COLS];  // pivot row divided by its pivot
    __shared__ float fac[DIM];   // column p of every row, saved before it is overwritten
    const int sys = blockIdx.x;
    const int c = threadIdx.y + 1;
    const int r0 = 1 * threadIdx.x;

    gj_load(m, aug + (size_t)sys * DIM * COLS);
    __syncthreads();

    for (int p = 0; p < DIM; ++p) {
        if (threadIdx.x == 0) piv[c] = m[p][c] / m[p][p];
        if (threadIdx.y == 0) {
            fac[r0 + 0] = m[r0 + 0][p];
        }
        __syncthreads();
        const float pc = piv[c];
        m[r0 + 0][c] = (r0 + 0 == p) ? pc : m[r0 + 0][c] - fac[r0 + 0] * pc;
        __syncthreads();
    }
    if (c == DIM) {
        x[sys * DIM + r0 + 0] = m[r0 + 0][DIM];
    }
}

__global__ void gj_rows2(const float *__restrict__ aug, float *__restrict__ x)
{
    __shared__ float m[DIM][COLS];
    __shared__ float piv[COLS];
    __shared__ float fac[DIM];
    const int sys = blockIdx.x;
    const int c = threadIdx.y + 1;
    const int r0 = 2 * threadIdx.x;

    gj_load(m, aug + (size_t)sys * DIM * COLS);
    __syncthreads();

    for (int p = 0; p < DIM; ++p) {
        if (threadIdx.x == 0) piv[c] = m[p][c] / m[p][p];
        if (threadIdx.y == 0) {
            fac[r0 + 0] = m[r0 + 0][p];
            fac[r0 + 1] = m[r0 + 1][p];
        }
        __syncthreads();
        const float pc = piv[c];
        m[r0 + 0][c] = (r0 + 0 == p) ? pc : m[r0 + 0][c] - fac[r0 + 0] * pc;
        m[r0 + 1][c] = (r0 + 1 == p) ? pc : m[r0 + 1][c] - fac[r0 + 1] * pc;
        __syncthreads();
    }
    if (c == DIM) {
        x[sys * DIM + r0 + 0] = m[r0 + 0][DIM];
        x[sys * DIM + r0 + 1] = m[r0 + 1][DIM];
    }
}

__global__ void gj_rows4(const float *__restrict__ aug, float *__restrict__ x)
{
    __shared__ float m[DIM][COLS];
    __shared__ float piv[COLS];
    __shared__ float fac[DIM];
    const int sys = blockIdx.x;
    const int c = threadIdx.y + 1;
    const int r0 = 4 * threadIdx.x;

    gj_load(m, aug + (size_t)sys * DIM * COLS);
    __syncthreads();

    for (int p = 0; p < DIM; ++p) {
        if (threadIdx.x == 0) piv[c] = m[p][c] / m[p][p];
        if (threadIdx.y == 0) {
            fac[r0 + 0] = m[r0 + 0][p];
            fac[r0 + 1] = m[r0 + 1][p];
            fac[r0 + 2] = m[r0 + 2][p];
            fac[r0 + 3] = m[r0 + 3][p];
        }
        __syncthreads();
        const float pc = piv[c];
        m[r0 + 0][c] = (r0 + 0 == p) ? pc : m[r0 + 0][c] - fac[r0 + 0] * pc;
        m[r0 + 1][c] = (r0 + 1 == p) ? pc : m[r0 + 1][c] - fac[r0 + 1] * pc;
        m[r0 + 2][c] = (r0 + 2 == p) ? pc : m[r0 + 2][c] - fac[r0 + 2] * pc;
        m[r0 + 3][c] = (r0 + 3 == p) ? pc : m[r0 + 3][c] - fac[r0 + 3] * pc;
        __syncthreads();
    }
    if (c == DIM) {
        x[sys * DIM + r0 + 0] = m[r0 + 0][DIM];
        x[sys * DIM + r0 + 1] = m[r0 + 1][DIM];
        x[sys * DIM + r0 + 2] = m[r0 + 2][DIM];
        x[sys * DIM + r0 + 3] = m[r0 + 3][DIM];
    }
}

__global__ void gj_rows8(const float *__restrict__ aug, float *__restrict__ x)
{
    __shared__ float m[DIM][COLS];
    __shared__ float piv[COLS];
    __shared__ float fac[DIM];
    const int sys = blockIdx.x;
    const int c = threadIdx.y + 1;
    const int r0 = 8 * threadIdx.x;

    gj_load(m, aug + (size_t)sys * DIM * COLS);
    __syncthreads();

    for (int p = 0; p < DIM; ++p) {
        if (threadIdx.x == 0) piv[c] = m[p][c] / m[p][p];
        if (threadIdx.y == 0) {
            fac[r0 + 0] = m[r0 + 0][p];
            fac[r0 + 1] = m[r0 + 1][p];
            fac[r0 + 2] = m[r0 + 2][p];
            fac[r0 + 3] = m[r0 + 3][p];
            fac[r0 + 4] = m[r0 + 4][p];
            fac[r0 + 5] = m[r0 + 5][p];
            fac[r0 + 6] = m[r0 + 6][p];
            fac[r0 + 7] = m[r0 + 7][p];
        }
        __syncthreads();
        const float pc = piv[c];
        m[r0 + 0][c] = (r0 + 0 == p) ? pc : m[r0 + 0][c] - fac[r0 + 0] * pc;
        m[r0 + 1][c] = (r0 + 1 == p) ? pc : m[r0 + 1][c] - fac[r0 + 1] * pc;
        m[r0 + 2][c] = (r0 + 2 == p) ? pc : m[r0 + 2][c] - fac[r0 + 2] * pc;
        m[r0 + 3][c] = (r0 + 3 == p) ? pc : m[r0 + 3][c] - fac[r0 + 3] * pc;
        m[r0 + 4][c] = (r0 + 4 == p) ? pc : m[r0 + 4][c] - fac[r0 + 4] * pc;
        m[r0 + 5][c] = (r0 + 5 == p) ? pc : m[r0 + 5][c] - fac[r0 + 5] * pc;
        m[r0 + 6][c] = (r0 + 6 == p) ? pc : m[r0 + 6][c] - fac[r0 + 6] * pc;
        m[r0 + 7][c] = (r0 + 7 == p) ? pc : m[r0 + 7][c] - fac[r0 + 7] * pc;
        __syncthreads();
    }
    if (c == DIM) {
        x[sys * DIM + r0 + 0] = m[r0 + 0][DIM];
        x[sys * DIM + r0 + 1] = m[r0 + 1][DIM];
        x[sys * DIM + r0 + 2] = m[r0 + 2][DIM];
        x[sys * DIM + r0 + 3] = m[r0 + 3][DIM];
        x[sys * DIM + r0 + 4] = m[r0 + 4][DIM];
        x[sys * DIM + r0 + 5] = m[r0 + 5][DIM];
        x[sys * DIM + r0 + 6] = m[r0 + 6][DIM];
        x[sys * DIM + r0 + 7] = m[r0 + 7][DIM];
    }
}

// ===========================================================================
// (b) Electrostatic potential on the plane z = slice_z (spacing h): V(x, y) =
//     sum_a q_a / |r - r_a|. Coarsening reuses dy*dy + dz*dz and the atom load
//     for N grid points. Atoms are in global memory and a warp reads one atom
//     at a time (one broadcast L1 load). In __constant__ memory the warps of an
//     SM drift apart and thrash the constant cache: on an H100 up to 7x slower
//     and bimodal from run to run (docs/measurements.md, "Why potential_pts2 ...").
#define MAX_ATOMS 4000
__device__ float4 g_atoms[MAX_ATOMS];  // x, y, z, charge

__global__ void potential_pts1(float *__restrict__ energygrid, int gx, int gy, float spacing,
                               float slice_z, int numatoms)
{
    const int xindex = 1 * (blockIdx.x * blockDim.x + threadIdx.x);
    const int yindex = blockIdx.y * blockDim.y + threadIdx.y;
    if (xindex >= gx || yindex >= gy) return;

    const float coory = spacing * yindex;
    const float coorx1 = spacing * (xindex + 0);
    float energyvalx1 = 0.0f;
    for (int a = 0; a < numatoms; a++) {
        const float4 atom = g_atoms[a];
        const float dy = coory - atom.y;
        const float dz = slice_z - atom.z;
        const float dyz2 = dy * dy + dz * dz;
        const float dx1 = coorx1 - atom.x;
        energyvalx1 += atom.w * rsqrtf(dx1 * dx1 + dyz2);
    }
    float *row = energygrid + (size_t)yindex * gx;
    row[xindex + 0] = energyvalx1;
}

__global__ void potential_pts2(float *__restrict__ energygrid, int gx, int gy, float spacing,
                               float slice_z, int numatoms)
{
    const int xindex = 2 * (blockIdx.x * blockDim.x + threadIdx.x);
    const int yindex = blockIdx.y * blockDim.y + threadIdx.y;
    if (xindex >= gx || yindex >= gy) return;

    const float coory = spacing * yindex;
    const float coorx1 = spacing * (xindex + 0);
    const float coorx2 = spacing * (xindex + 1);
    float energyvalx1 = 0.0f;
    float energyvalx2 = 0.0f;
    for (int a = 0; a < numatoms; a++) {
        const float4 atom = g_atoms[a];
        const float dy = coory - atom.y;
        const float dz = slice_z - atom.z;
        const float dyz2 = dy * dy + dz * dz;
        const float dx1 = coorx1 - atom.x;
        const float dx2 = coorx2 - atom.x;
        energyvalx1 += atom.w * rsqrtf(dx1 * dx1 + dyz2);
        energyvalx2 += atom.w * rsqrtf(dx2 * dx2 + dyz2);
    }
    // The last thread of a row may own points past gx: guard every store.
    float *row = energygrid + (size_t)yindex * gx;
    if (xindex + 0 < gx) row[xindex + 0] = energyvalx1;
    if (xindex + 1 < gx) row[xindex + 1] = energyvalx2;
}

__global__ void potential_pts4(float *__restrict__ energygrid, int gx, int gy, float spacing,
                               float slice_z, int numatoms)
{
    const int xindex = 4 * (blockIdx.x * blockDim.x + threadIdx.x);
    const int yindex = blockIdx.y * blockDim.y + threadIdx.y;
    if (xindex >= gx || yindex >= gy) return;

    const float coory = spacing * yindex;
    const float coorx1 = spacing * (xindex + 0);
    const float coorx2 = spacing * (xindex + 1);
    const float coorx3 = spacing * (xindex + 2);
    const float coorx4 = spacing * (xindex + 3);
    float energyvalx1 = 0.0f;
    float energyvalx2 = 0.0f;
    float energyvalx3 = 0.0f;
    float energyvalx4 = 0.0f;
    for (int a = 0; a < numatoms; a++) {
        const float4 atom = g_atoms[a];
        const float dy = coory - atom.y;
        const float dz = slice_z - atom.z;
        const float dyz2 = dy * dy + dz * dz;
        const float dx1 = coorx1 - atom.x;
        const float dx2 = coorx2 - atom.x;
        const float dx3 = coorx3 - atom.x;
        const float dx4 = coorx4 - atom.x;
        energyvalx1 += atom.w * rsqrtf(dx1 * dx1 + dyz2);
        energyvalx2 += atom.w * rsqrtf(dx2 * dx2 + dyz2);
        energyvalx3 += atom.w * rsqrtf(dx3 * dx3 + dyz2);
        energyvalx4 += atom.w * rsqrtf(dx4 * dx4 + dyz2);
    }
    float *row = energygrid + (size_t)yindex * gx;
    if (xindex + 0 < gx) row[xindex + 0] = energyvalx1;
    if (xindex + 1 < gx) row[xindex + 1] = energyvalx2;
    if (xindex + 2 < gx) row[xindex + 2] = energyvalx3;
    if (xindex + 3 < gx) row[xindex + 3] = energyvalx4;
}

__global__ void potential_pts8(float *__restrict__ energygrid, int gx, int gy, float spacing,
                               float slice_z, int numatoms)
{
    const int xindex = 8 * (blockIdx.x * blockDim.x + threadIdx.x);
    const int yindex = blockIdx.y * blockDim.y + threadIdx.y;
    if (xindex >= gx || yindex >= gy) return;

    const float coory = spacing * yindex;
    const float coorx1 = spacing * (xindex + 0);
    const float coorx2 = spacing * (xindex + 1);
    const float coorx3 = spacing * (xindex + 2);
    const float coorx4 = spacing * (xindex + 3);
    const float coorx5 = spacing * (xindex + 4);
    const float coorx6 = spacing * (xindex + 5);
    const float coorx7 = spacing * (xindex + 6);
    const float coorx8 = spacing * (xindex + 7);
    float energyvalx1 = 0.0f;
    float energyvalx2 = 0.0f;
    float energyvalx3 = 0.0f;
    float energyvalx4 = 0.0f;
    float energyvalx5 = 0.0f;
    float energyvalx6 = 0.0f;
    float energyvalx7 = 0.0f;
    float energyvalx8 = 0.0f;
    for (int a = 0; a < numatoms; a++) {
        const float4 atom = g_atoms[a];
        const float dy = coory - atom.y;
        const float dz = slice_z - atom.z;
        const float dyz2 = dy * dy + dz * dz;
        const float dx1 = coorx1 - atom.x;
        const float dx2 = coorx2 - atom.x;
        const float dx3 = coorx3 - atom.x;
        const float dx4 = coorx4 - atom.x;
        const float dx5 = coorx5 - atom.x;
        const float dx6 = coorx6 - atom.x;
        const float dx7 = coorx7 - atom.x;
        const float dx8 = coorx8 - atom.x;
        energyvalx1 += atom.w * rsqrtf(dx1 * dx1 + dyz2);
        energyvalx2 += atom.w * rsqrtf(dx2 * dx2 + dyz2);
        energyvalx3 += atom.w * rsqrtf(dx3 * dx3 + dyz2);
        energyvalx4 += atom.w * rsqrtf(dx4 * dx4 + dyz2);
        energyvalx5 += atom.w * rsqrtf(dx5 * dx5 + dyz2);
        energyvalx6 += atom.w * rsqrtf(dx6 * dx6 + dyz2);
        energyvalx7 += atom.w * rsqrtf(dx7 * dx7 + dyz2);
        energyvalx8 += atom.w * rsqrtf(dx8 * dx8 + dyz2);
    }
    float *row = energygrid + (size_t)yindex * gx;
    if (xindex + 0 < gx) row[xindex + 0] = energyvalx1;
    if (xindex + 1 < gx) row[xindex + 1] = energyvalx2;
    if (xindex + 2 < gx) row[xindex + 2] = energyvalx3;
    if (xindex + 3 < gx) row[xindex + 3] = energyvalx4;
    if (xindex + 4 < gx) row[xindex + 4] = energyvalx5;
    if (xindex + 5 < gx) row[xindex + 5] = energyvalx6;
    if (xindex + 6 < gx) row[xindex + 6] = energyvalx7;
    if (xindex + 7 < gx) row[xindex + 7] = energyvalx8;
}

// ===========================================================================
// Host side
// ===========================================================================

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
    // Non-zero value with |v| in [0.1, 1) and random sign.
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
    return only == nullptr || strcmp(only, name) == 0;
}

static void append_failure(std::string &failed, const char *name)
{
    failed += std::string(failed.empty() ? "" : ",") + name;
}

typedef void (*GjKernel)(const float *__restrict__, float *__restrict__);
typedef void (*PotentialKernel)(float *__restrict__, int, int, float, float, int);

static int run_gauss_jordan(int num_systems, int reps, const char *only, std::string &failed)
{
    struct Variant {
        const char *name;
        GjKernel kernel;
        int rows_per_thread;
    };
    const Variant variants[] = {
        {"gj_rows1", gj_rows1, 1},
        {"gj_rows2", gj_rows2, 2},
        {"gj_rows4", gj_rows4, 4},
        {"gj_rows8", gj_rows8, 8},
    };
    int ran = 0;
    for (const Variant &v : variants) ran += selected(only, v.name);
    if (ran == 0) return 0;

    // Strictly diagonally dominant systems with non-zero entries.
    const size_t aug_elems = (size_t)num_systems * DIM * COLS;
    std::vector<float> h_aug(aug_elems);
    Rng rng(777);
    for (int s = 0; s < num_systems; ++s) {
        float *m = &h_aug[(size_t)s * DIM * COLS];
        for (int r = 0; r < DIM; ++r) {
            float off_sum = 0.0f;
            for (int c = 0; c < DIM; ++c) {
                if (c == r) continue;
                m[r * COLS + c] = rng.signed_nonzero();
                off_sum += std::fabs(m[r * COLS + c]);
            }
            m[r * COLS + r] = off_sum + rng.uniform(1.0f, 2.0f);
            m[r * COLS + DIM] = rng.signed_nonzero();  // right-hand side b
        }
    }

    // CPU reference: the same elimination in double.
    std::vector<double> ref((size_t)num_systems * DIM);
    std::vector<double> w(DIM * COLS);
    for (int s = 0; s < num_systems; ++s) {
        for (int e = 0; e < DIM * COLS; ++e) w[e] = h_aug[(size_t)s * DIM * COLS + e];
        for (int p = 0; p < DIM; ++p) {
            const double pivot = w[p * COLS + p];
            for (int c = 0; c < COLS; ++c) w[p * COLS + c] /= pivot;
            for (int r = 0; r < DIM; ++r) {
                if (r == p) continue;
                const double f = w[r * COLS + p];
                for (int c = 0; c < COLS; ++c) w[r * COLS + c] -= f * w[p * COLS + c];
            }
        }
        for (int r = 0; r < DIM; ++r) ref[(size_t)s * DIM + r] = w[r * COLS + DIM];
    }

    float *d_aug, *d_x;
    const size_t x_bytes = (size_t)num_systems * DIM * sizeof(float);
    CHECK(cudaMalloc(&d_aug, aug_elems * sizeof(float)));
    CHECK(cudaMalloc(&d_x, x_bytes));
    CHECK(cudaMemcpy(d_aug, h_aug.data(), aug_elems * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_x((size_t)num_systems * DIM);

    for (const Variant &v : variants) {
        if (!selected(only, v.name)) continue;
        const dim3 block(DIM / v.rows_per_thread, DIM);
        auto launch = [&]() {
            v.kernel<<<num_systems, block>>>(d_aug, d_x);
            CHECK(cudaGetLastError());
        };
        CHECK(cudaMemset(d_x, 0xFF, x_bytes));  // poison (NaN)
        launch();
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(h_x.data(), d_x, x_bytes, cudaMemcpyDeviceToHost));

        bool ok = true;
        double checksum = 0.0;
        for (int s = 0; s < num_systems; ++s) {
            double xmax = 0.0;
            for (int r = 0; r < DIM; ++r) xmax = std::max(xmax, std::fabs(ref[(size_t)s * DIM + r]));
            for (int r = 0; r < DIM; ++r) {
                const double want = ref[(size_t)s * DIM + r];
                const double got = h_x[(size_t)s * DIM + r];
                checksum += got;
                if (ok && !(std::fabs(got - want) <= 1e-4 * (std::fabs(want) + xmax))) {
                    fprintf(stderr, "MISMATCH kernel=%s system %d x[%d]: got %.7g expected %.7g\n",
                            v.name, s, r, got, want);
                    ok = false;
                }
            }
        }
        const float ms = median_time_ms(launch, reps);
        printf("kernel=%s config=systems=%d,dim=%d,block=%dx%d time_ms=%.4f check=%s checksum=%.6e\n",
               v.name, num_systems, DIM, block.x, block.y, ms, ok ? "PASS" : "FAIL", checksum);
        if (!ok) append_failure(failed, v.name);
    }
    CHECK(cudaFree(d_aug));
    CHECK(cudaFree(d_x));
    return ran;
}

static int run_potential(int gx, int gy, int numatoms, int reps, const char *only, std::string &failed)
{
    struct Variant {
        const char *name;
        PotentialKernel kernel;
        int points_per_thread;
    };
    const Variant variants[] = {
        {"potential_pts1", potential_pts1, 1},
        {"potential_pts2", potential_pts2, 2},
        {"potential_pts4", potential_pts4, 4},
        {"potential_pts8", potential_pts8, 8},
    };
    int ran = 0;
    for (const Variant &v : variants) ran += selected(only, v.name);
    if (ran == 0) return 0;

    const float spacing = 0.1f;
    const float slice_z = 0.0f;
    std::vector<float4> atoms(numatoms);
    Rng rng(4242);
    for (int a = 0; a < numatoms; ++a) {
        atoms[a].x = rng.uniform(0.0f, gx * spacing);
        atoms[a].y = rng.uniform(0.0f, gy * spacing);
        atoms[a].z = rng.uniform(1.0f, 4.0f);  // off the slice: no zero distances
        atoms[a].w = rng.signed_nonzero();     // charge
    }
    CHECK(cudaMemcpyToSymbol(g_atoms, atoms.data(), numatoms * sizeof(float4)));

    // Reference rows: all of them when cheap, otherwise 8 complete rows (first,
    // last, random). Whole rows cover every x remainder of the coarsened kernels.
    std::vector<int> rows;
    if ((double)gx * gy * numatoms <= 3e7) {
        for (int y = 0; y < gy; ++y) rows.push_back(y);
    } else {
        rows.push_back(0);
        rows.push_back(gy - 1);
        for (int i = 0; i < 6; ++i) rows.push_back((int)(rng.next() % (uint32_t)gy));
    }
    std::vector<double> ref(rows.size() * (size_t)gx), ref_abs(rows.size() * (size_t)gx);
    for (size_t ri = 0; ri < rows.size(); ++ri) {
        const double cy = (double)spacing * rows[ri];
        for (int xi = 0; xi < gx; ++xi) {
            const double cx = (double)spacing * xi;
            double v = 0.0, va = 0.0;
            for (int a = 0; a < numatoms; ++a) {
                const double dx = cx - atoms[a].x, dy = cy - atoms[a].y, dz = slice_z - atoms[a].z;
                const double term = atoms[a].w / std::sqrt(dx * dx + dy * dy + dz * dz);
                v += term;
                va += std::fabs(term);
            }
            ref[ri * gx + xi] = v;
            ref_abs[ri * gx + xi] = va;
        }
    }

    const size_t grid_elems = (size_t)gx * gy;
    float *d_grid;
    CHECK(cudaMalloc(&d_grid, grid_elems * sizeof(float)));
    std::vector<float> h_grid(grid_elems);

    for (const Variant &v : variants) {
        if (!selected(only, v.name)) continue;
        const dim3 block(BLOCK, POT_BLOCK_Y);
        const int points_per_block_x = BLOCK * v.points_per_thread;
        const dim3 grid((gx + points_per_block_x - 1) / points_per_block_x,
                        (gy + POT_BLOCK_Y - 1) / POT_BLOCK_Y);
        auto launch = [&]() {
            v.kernel<<<grid, block>>>(d_grid, gx, gy, spacing, slice_z, numatoms);
            CHECK(cudaGetLastError());
        };
        CHECK(cudaMemset(d_grid, 0xFF, grid_elems * sizeof(float)));  // poison (NaN)
        launch();
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(h_grid.data(), d_grid, grid_elems * sizeof(float), cudaMemcpyDeviceToHost));

        bool ok = true;
        for (size_t ri = 0; ri < rows.size() && ok; ++ri) {
            for (int xi = 0; xi < gx; ++xi) {
                const double want = ref[ri * gx + xi];
                const double got = h_grid[(size_t)rows[ri] * gx + xi];
                // Relative to the sum of |terms|: charges of both signs cancel.
                if (!(std::fabs(got - want) <= 1e-4 * ref_abs[ri * gx + xi])) {
                    fprintf(stderr, "MISMATCH kernel=%s at (x=%d, y=%d): got %.7g expected %.7g\n",
                            v.name, xi, rows[ri], got, want);
                    ok = false;
                    break;
                }
            }
        }
        double checksum = 0.0;
        for (size_t i = 0; i < grid_elems; ++i) checksum += h_grid[i];
        const float ms = median_time_ms(launch, reps);
        printf("kernel=%s config=grid=%dx%d,atoms=%d,block=%dx%d time_ms=%.4f check=%s checksum=%.6e\n",
               v.name, gx, gy, numatoms, BLOCK, POT_BLOCK_Y, ms, ok ? "PASS" : "FAIL", checksum);
        if (!ok) append_failure(failed, v.name);
    }
    CHECK(cudaFree(d_grid));
    return ran;
}

static void usage(const char *prog)
{
    printf("usage: %s [--systems S (default 4096)] [--nx X (default 1000)] [--ny Y (default 512)]\n"
           "          [--atoms A (1..%d, default 1000)] [--reps R (default 10)] [--only NAME]\n",
           prog, MAX_ATOMS);
}

int main(int argc, char **argv)
{
    int num_systems = 4096;
    int gx = 1000;  // deliberately not a multiple of 8 * BLOCK: exercises the store guards
    int gy = 512;
    int numatoms = 1000;
    int reps = 10;
    const char *only = nullptr;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--systems") == 0 && i + 1 < argc) {
            num_systems = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--nx") == 0 && i + 1 < argc) {
            gx = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--ny") == 0 && i + 1 < argc) {
            gy = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--atoms") == 0 && i + 1 < argc) {
            numatoms = atoi(argv[++i]);
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
    if (num_systems < 1 || num_systems > (1 << 20) || gx < 1 || gx > 16384 || gy < 1 || gy > 16384 ||
        numatoms < 1 || numatoms > MAX_ATOMS) {
        fprintf(stderr, "option out of range\n");
        usage(argv[0]);
        return 2;
    }
    if (reps < 1) reps = 1;

    std::string failed;
    int ran = run_gauss_jordan(num_systems, reps, only, failed);
    ran += run_potential(gx, gy, numatoms, reps, only, failed);

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
