// coarsen_template.cu - thread coarsening with the factor as a template parameter: one kernel,
// coarsen_potential<COARSEN>, where each thread computes COARSEN grid points of a direct Coulomb
// potential. The copies are not written out by hand (as in coarsening.cu) but come from
// `#pragma unroll` loops over COARSEN, a compile-time trip count. The host instantiates and
// launches COARSEN = 1, 2, 4, 8 through a `switch` on --coarsen, so a sweep over the template
// parameter (`--param COARSEN=1,2,4,8 --args "--coarsen {COARSEN}"`) times one instantiation per
// program run.
//
// Thread t of block (bx, y) owns the points x = bx * BLOCK * COARSEN + j * BLOCK + t, j = 0..C-1:
// BLOCK apart, so every store of the block is coalesced. The grid is nx / (BLOCK * C) x ny.
//
// Build:  nvcc -O3 -arch=sm_90 [-DBLOCK=32..1024] -o coarsen_template coarsen_template.cu
// Run:    ./coarsen_template [--nx X (multiple of 8*BLOCK, default 2048)] [--ny Y (default 2048)]
//                           [--atoms A (1..4000, default 1000)] [--coarsen 1|2|4|8 (default all)]
//                           [--reps R] [--only NAME]

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#ifndef BLOCK
#define BLOCK 128  // threads per block (along x)
#endif
static_assert(BLOCK >= 32 && BLOCK <= 1024 && (BLOCK & (BLOCK - 1)) == 0,
              "BLOCK must be a power of two in 32..1024");

#define CHECK(call)                                                              \
    do {                                                                         \
        cudaError_t err_ = (call);                                               \
        if (err_ != cudaSuccess) {                                               \
            fprintf(stderr, "CUDA error at %s:%d: %s returned %s\n", __FILE__,   \
                    __LINE__, #call, cudaGetErrorString(err_));                  \
            exit(EXIT_FAILURE);                                                  \
        }                                                                        \
    } while (0)

#define MAX_ATOMS 4000
__constant__ float4 c_atoms[MAX_ATOMS];  // x, y, z, charge

// V(x, y) = sum_a q_a / |r - r_a| on the plane z = slice_z (grid spacing h). Coarsening shares
// the atom load and dy*dy + dz*dz among COARSEN points, and keeps COARSEN accumulators.
template <int COARSEN>
__global__ void coarsen_potential(float *__restrict__ energygrid, int gx, float spacing,
                                  float slice_z, int numatoms)
{
    const int x0 = blockIdx.x * BLOCK * COARSEN + threadIdx.x;
    const int y = blockIdx.y;
    const float coory = spacing * y;
    float coorx[COARSEN];
    float energy[COARSEN];
#pragma unroll
    for (int j = 0; j < COARSEN; ++j) {
        coorx[j] = spacing * (x0 + j * BLOCK);
        energy[j] = 0.0f;
    }
    for (int a = 0; a < numatoms; ++a) {
        const float4 atom = c_atoms[a];
        const float dy = coory - atom.y;
        const float dz = slice_z - atom.z;
        const float dyz2 = dy * dy + dz * dz;
#pragma unroll
        for (int j = 0; j < COARSEN; ++j) {
            const float dx = coorx[j] - atom.x;
            energy[j] += atom.w * rsqrtf(dx * dx + dyz2);
        }
    }
    float *row = energygrid + (size_t)y * gx;
#pragma unroll
    for (int j = 0; j < COARSEN; ++j) row[x0 + j * BLOCK] = energy[j];
}

// The host's choice of instantiation: every case is a launch, so each one is instantiated.
static void launch_potential(int coarsen, float *grid_out, int gx, int gy, float spacing,
                             float slice_z, int numatoms)
{
    const dim3 block(BLOCK);
    const dim3 grid(gx / (BLOCK * coarsen), gy);
    switch (coarsen) {
    case 1: coarsen_potential<1><<<grid, block>>>(grid_out, gx, spacing, slice_z, numatoms); break;
    case 2: coarsen_potential<2><<<grid, block>>>(grid_out, gx, spacing, slice_z, numatoms); break;
    case 4: coarsen_potential<4><<<grid, block>>>(grid_out, gx, spacing, slice_z, numatoms); break;
    case 8: coarsen_potential<8><<<grid, block>>>(grid_out, gx, spacing, slice_z, numatoms); break;
    default: fprintf(stderr, "no instantiation for COARSEN=%d\n", coarsen); exit(2);
    }
    CHECK(cudaGetLastError());
}

// ===========================================================================
// Host side: fixed-seed inputs, CPU reference, timing.
// ===========================================================================

struct Rng {  // xorshift64*, fixed seed
    uint64_t state;
    explicit Rng(uint64_t seed) : state(seed) {}
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

static float median_time_ms(int coarsen, float *d_grid, int gx, int gy, float spacing, float slice_z,
                            int numatoms, int reps)
{
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    std::vector<float> times;
    for (int r = 0; r < reps; ++r) {
        CHECK(cudaEventRecord(start));
        launch_potential(coarsen, d_grid, gx, gy, spacing, slice_z, numatoms);
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

// --only coarsen_potential selects every instantiation, --only 'coarsen_potential<4>' one.
static bool selected(const char *only, const char *name, const char *base)
{
    return only == nullptr || strcmp(only, name) == 0 || strcmp(only, base) == 0;
}

static void usage(const char *prog)
{
    printf("usage: %s [--nx X (multiple of %d, default 2048)] [--ny Y (default 2048)]\n"
           "          [--atoms A (1..%d, default 1000)] [--coarsen 1|2|4|8 (default all)]\n"
           "          [--reps R (default 10)] [--only NAME]\n",
           prog, 8 * BLOCK, MAX_ATOMS);
}

int main(int argc, char **argv)
{
    int gx = 2048, gy = 2048, numatoms = 1000, reps = 10, coarsen = 0;
    const char *only = nullptr;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--nx") == 0 && i + 1 < argc) {
            gx = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--ny") == 0 && i + 1 < argc) {
            gy = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--atoms") == 0 && i + 1 < argc) {
            numatoms = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--coarsen") == 0 && i + 1 < argc) {
            coarsen = atoi(argv[++i]);
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
    if (gx < 8 * BLOCK || gx % (8 * BLOCK) != 0 || gy < 1 || gy > 65535 || numatoms < 1 ||
        numatoms > MAX_ATOMS || (coarsen != 0 && coarsen != 1 && coarsen != 2 && coarsen != 4 && coarsen != 8)) {
        fprintf(stderr, "option out of range\n");
        usage(argv[0]);
        return 2;
    }
    if (reps < 1) reps = 1;

    std::vector<int> factors;
    for (int c : {1, 2, 4, 8}) {
        char name[64];
        snprintf(name, sizeof name, "coarsen_potential<%d>", c);
        if ((coarsen == 0 || coarsen == c) && selected(only, name, "coarsen_potential")) factors.push_back(c);
    }
    if (factors.empty()) {
        fprintf(stderr, "no kernel matches --only %s --coarsen %d\n", only ? only : "(all)", coarsen);
        return 2;
    }

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
    CHECK(cudaMemcpyToSymbol(c_atoms, atoms.data(), numatoms * sizeof(float4)));

    // Reference: 8 complete rows (the first, the last and 6 random ones) in double. Whole rows
    // cover every thread's every point, for each COARSEN.
    std::vector<int> rows = {0, gy - 1};
    for (int i = 0; i < 6; ++i) rows.push_back((int)(rng.next() % (uint32_t)gy));
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
    std::string failed;

    for (int c : factors) {
        char name[64];
        snprintf(name, sizeof name, "coarsen_potential<%d>", c);
        CHECK(cudaMemset(d_grid, 0xFF, grid_elems * sizeof(float)));  // poison (NaN)
        launch_potential(c, d_grid, gx, gy, spacing, slice_z, numatoms);
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(h_grid.data(), d_grid, grid_elems * sizeof(float), cudaMemcpyDeviceToHost));

        bool ok = true;
        for (size_t ri = 0; ri < rows.size() && ok; ++ri) {
            for (int xi = 0; xi < gx; ++xi) {
                const double want = ref[ri * gx + xi];
                const double got = h_grid[(size_t)rows[ri] * gx + xi];
                // Relative to the sum of |terms|: charges of both signs cancel. NaN fails.
                if (!(std::fabs(got - want) <= 1e-4 * ref_abs[ri * gx + xi])) {
                    fprintf(stderr, "MISMATCH kernel=%s at (x=%d, y=%d): got %.7g expected %.7g\n", name,
                            xi, rows[ri], got, want);
                    ok = false;
                    break;
                }
            }
        }
        double checksum = 0.0;
        for (size_t i = 0; i < grid_elems; ++i) checksum += h_grid[i];
        const float ms = median_time_ms(c, d_grid, gx, gy, spacing, slice_z, numatoms, reps);
        printf("kernel=%s config=grid=%dx%d,atoms=%d,block=%d,coarsen=%d time_ms=%.4f check=%s checksum=%.6e\n",
               name, gx, gy, numatoms, BLOCK, c, ms, ok ? "PASS" : "FAIL", checksum);
        if (!ok) failed += std::string(failed.empty() ? "" : ",") + name;
    }
    CHECK(cudaFree(d_grid));

    if (!failed.empty()) {
        fprintf(stderr, "FAILED kernels: %s\n", failed.c_str());
        return 1;
    }
    return 0;
}
