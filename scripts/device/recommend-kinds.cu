// recommend-kinds.cu - device-only kernels of five kinds, one `#pragma unroll` loop each, the
// ground truth (with the bundled samples) that the static recommendation is scored against
// (issue 22, docs/measurements.md "Recommended factor before running"). Not a sample: it exists
// to be swept on the GPU by scripts/device/run-recommend.sh (GROUP=3).
//
//   compute_poly    compute-bound: 4 independent Horner chains per thread, full occupancy;
//                   unrolling only removes loop overhead from an FMA-bound loop
//   latency_gather  latency-bound: one 64-thread block per SM, each thread sums scattered
//                   loads; unrolling lets the loads of several iterations be in flight at once
//   stream_triad    memory-bound: grid-stride triad over 64 Mi floats
//   regs_layer      register-limited: 32 accumulators per thread, weights read per k; unrolling
//                   k hoists more loads into registers and costs occupancy
//   icache_rounds   i-cache-limited: a ~1 KiB integer mixing round; unrolled ×64 and up, the
//                   loop body outgrows the instruction caches at full occupancy
//
// Each kernel checks its results against the host. Build: nvcc -O3 -arch=sm_90 -o kinds
// recommend-kinds.cu. Run: ./kinds [--reps R] [--only NAME]
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(call)                                                                          \
    do {                                                                                     \
        cudaError_t err_ = (call);                                                           \
        if (err_ != cudaSuccess) {                                                           \
            fprintf(stderr, "CUDA error at %s:%d: %s\n", __FILE__, __LINE__,                 \
                    cudaGetErrorString(err_));                                               \
            exit(EXIT_FAILURE);                                                              \
        }                                                                                    \
    } while (0)

// ---- compute-bound ----------------------------------------------------------------------------
__global__ void compute_poly(const float *__restrict__ x, float *__restrict__ y, int n, int terms)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float xs[4], acc[4];
    for (int j = 0; j < 4; ++j) {
        xs[j] = x[4 * i + j];
        acc[j] = 0.0f;
    }
#pragma unroll 1
    for (int k = 0; k < terms; ++k) {
        const float c = 1.0f - 1.0e-4f * (float)k;
        for (int j = 0; j < 4; ++j) acc[j] = fmaf(acc[j], xs[j], c);
    }
    y[i] = acc[0] + acc[1] + acc[2] + acc[3];
}

// ---- latency-bound ----------------------------------------------------------------------------
__global__ void latency_gather(const int *__restrict__ a, long long *__restrict__ out, int mask, int iters)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    long long s = 0;
    unsigned idx = (unsigned)t * 2654435761u;
#pragma unroll 1
    for (int k = 0; k < iters; ++k) {
        s += a[(idx + (unsigned)k * 40503u) & (unsigned)mask];
    }
    out[t] = s;
}

// ---- memory-bound -----------------------------------------------------------------------------
__global__ void stream_triad(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c,
                             float s, int n)
{
    const int stride = gridDim.x * blockDim.x;
#pragma unroll 1
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) c[i] = a[i] + s * b[i];
}

// ---- register-limited -------------------------------------------------------------------------
#define OUTS 32
__global__ void regs_layer(const float *__restrict__ in, const float *__restrict__ w, float *__restrict__ out,
                           int n, int k_dim)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc[OUTS];
#pragma unroll
    for (int r = 0; r < OUTS; ++r) acc[r] = 0.0f;
#pragma unroll 1
    for (int k = 0; k < k_dim; ++k) {
        const float v = in[(size_t)k * n + i];
#pragma unroll
        for (int r = 0; r < OUTS; ++r) acc[r] = fmaf(v, w[k * OUTS + r], acc[r]);
    }
#pragma unroll
    for (int r = 0; r < OUTS; ++r) out[(size_t)r * n + i] = acc[r];
}

// ---- i-cache-limited --------------------------------------------------------------------------
__host__ __device__ inline unsigned mix_round(unsigned h, unsigned r)
{
#define MIX(c) h = ((h ^ (h >> 13)) * (c)) + r
    MIX(0x9E3779B1u); MIX(0x85EBCA77u); MIX(0xC2B2AE3Du); MIX(0x27D4EB2Fu);
    MIX(0x165667B1u); MIX(0xD3A2646Cu); MIX(0xFD7046C5u); MIX(0xB55A4F09u);
    MIX(0x1B873593u); MIX(0xCC9E2D51u); MIX(0xE6546B64u); MIX(0x85EBCA6Bu);
    MIX(0x7FEB352Du); MIX(0x846CA68Bu); MIX(0x9E3779B9u); MIX(0x5BD1E995u);
#undef MIX
    return h;
}

__global__ void icache_rounds(unsigned *__restrict__ out, int rounds)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned h = (unsigned)t;
#pragma unroll 1
    for (int r = 0; r < rounds; ++r) h = mix_round(h, (unsigned)r);
    out[t] = h;
}

// ---- host -------------------------------------------------------------------------------------
static int g_reps = 5;
static int sm_count()
{
    int sms = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    return sms;
}

static bool run_compute_poly()
{
    const int n = 1 << 20, terms = 512;
    std::vector<float> hx(4 * n), hy(n);
    for (int i = 0; i < 4 * n; ++i) hx[i] = 0.5f + 0.5f * (float)(((size_t)i * 7919) % 1000) / 1000.0f;
    float *x, *y;
    CHECK(cudaMalloc(&x, hx.size() * sizeof(float)));
    CHECK(cudaMalloc(&y, n * sizeof(float)));
    CHECK(cudaMemcpy(x, hx.data(), hx.size() * sizeof(float), cudaMemcpyHostToDevice));
    for (int rep = 0; rep < g_reps; ++rep) compute_poly<<<n / 256, 256>>>(x, y, n, terms);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(hy.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost));
    bool ok = true;
    for (int i = 0; i < n && ok; i += 997) {
        float acc[4] = {0, 0, 0, 0};
        for (int k = 0; k < terms; ++k)
            for (int j = 0; j < 4; ++j) acc[j] = fmaf(acc[j], hx[4 * i + j], 1.0f - 1.0e-4f * (float)k);
        const float want = acc[0] + acc[1] + acc[2] + acc[3];
        ok = fabsf(hy[i] - want) <= 1e-4f * fabsf(want);
    }
    CHECK(cudaFree(x));
    CHECK(cudaFree(y));
    return ok;
}

static bool run_latency_gather()
{
    const int size = 1 << 24, mask = size - 1, iters = 2048, threads = 64;
    const int blocks = sm_count();
    std::vector<int> ha(size);
    for (int i = 0; i < size; ++i) ha[i] = (i * 31) & 1023;
    int *a;
    long long *out;
    CHECK(cudaMalloc(&a, size * sizeof(int)));
    CHECK(cudaMalloc(&out, blocks * threads * sizeof(long long)));
    CHECK(cudaMemcpy(a, ha.data(), size * sizeof(int), cudaMemcpyHostToDevice));
    for (int rep = 0; rep < g_reps; ++rep) latency_gather<<<blocks, threads>>>(a, out, mask, iters);
    CHECK(cudaGetLastError());
    std::vector<long long> hout(blocks * threads);
    CHECK(cudaMemcpy(hout.data(), out, hout.size() * sizeof(long long), cudaMemcpyDeviceToHost));
    bool ok = true;
    for (int t = 0; t < blocks * threads && ok; t += 61) {
        long long s = 0;
        const unsigned idx = (unsigned)t * 2654435761u;
        for (int k = 0; k < iters; ++k) s += ha[(idx + (unsigned)k * 40503u) & (unsigned)mask];
        ok = hout[t] == s;
    }
    CHECK(cudaFree(a));
    CHECK(cudaFree(out));
    return ok;
}

static bool run_stream_triad()
{
    const int n = 1 << 26;
    const float s = 3.0f;
    std::vector<float> ha(n), hb(n);
    for (int i = 0; i < n; ++i) {
        ha[i] = (float)(i % 1024);
        hb[i] = (float)(i % 17);
    }
    float *a, *b, *c;
    CHECK(cudaMalloc(&a, n * sizeof(float)));
    CHECK(cudaMalloc(&b, n * sizeof(float)));
    CHECK(cudaMalloc(&c, n * sizeof(float)));
    CHECK(cudaMemcpy(a, ha.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(b, hb.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    const int blocks = sm_count() * 8;
    for (int rep = 0; rep < g_reps; ++rep) stream_triad<<<blocks, 256>>>(a, b, c, s, n);
    CHECK(cudaGetLastError());
    std::vector<float> hc(n);
    CHECK(cudaMemcpy(hc.data(), c, n * sizeof(float), cudaMemcpyDeviceToHost));
    bool ok = true;
    for (int i = 0; i < n && ok; ++i) ok = hc[i] == ha[i] + s * hb[i];
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(c));
    return ok;
}

static bool run_regs_layer()
{
    const int n = 1 << 18, k_dim = 256;
    std::vector<float> hin((size_t)k_dim * n), hw(k_dim * OUTS);
    for (size_t i = 0; i < hin.size(); ++i) hin[i] = (float)((i * 13) % 64) / 64.0f;
    for (size_t i = 0; i < hw.size(); ++i) hw[i] = (float)((i * 7) % 32) / 32.0f - 0.5f;
    float *in, *w, *out;
    CHECK(cudaMalloc(&in, hin.size() * sizeof(float)));
    CHECK(cudaMalloc(&w, hw.size() * sizeof(float)));
    CHECK(cudaMalloc(&out, (size_t)OUTS * n * sizeof(float)));
    CHECK(cudaMemcpy(in, hin.data(), hin.size() * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(w, hw.data(), hw.size() * sizeof(float), cudaMemcpyHostToDevice));
    for (int rep = 0; rep < g_reps; ++rep) regs_layer<<<n / 128, 128>>>(in, w, out, n, k_dim);
    CHECK(cudaGetLastError());
    std::vector<float> hout((size_t)OUTS * n);
    CHECK(cudaMemcpy(hout.data(), out, hout.size() * sizeof(float), cudaMemcpyDeviceToHost));
    bool ok = true;
    for (int i = 0; i < n && ok; i += 509)
        for (int r = 0; r < OUTS && ok; ++r) {
            float acc = 0.0f;
            for (int k = 0; k < k_dim; ++k) acc = fmaf(hin[(size_t)k * n + i], hw[k * OUTS + r], acc);
            ok = fabsf(hout[(size_t)r * n + i] - acc) <= 1e-4f * (1.0f + fabsf(acc));
        }
    CHECK(cudaFree(in));
    CHECK(cudaFree(w));
    CHECK(cudaFree(out));
    return ok;
}

static bool run_icache_rounds()
{
    const int threads = 256, blocks = sm_count() * 8, rounds = 512;
    unsigned *out;
    CHECK(cudaMalloc(&out, blocks * threads * sizeof(unsigned)));
    for (int rep = 0; rep < g_reps; ++rep) icache_rounds<<<blocks, threads>>>(out, rounds);
    CHECK(cudaGetLastError());
    std::vector<unsigned> hout(blocks * threads);
    CHECK(cudaMemcpy(hout.data(), out, hout.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
    bool ok = true;
    for (int t = 0; t < blocks * threads && ok; t += 101) {
        unsigned h = (unsigned)t;
        for (int r = 0; r < rounds; ++r) h = mix_round(h, (unsigned)r);
        ok = hout[t] == h;
    }
    CHECK(cudaFree(out));
    return ok;
}

int main(int argc, char **argv)
{
    const char *only = nullptr;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            g_reps = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
            only = argv[++i];
        } else {
            fprintf(stderr, "usage: %s [--reps R] [--only NAME]\n", argv[0]);
            return 2;
        }
    }
    if (g_reps < 1) g_reps = 1;
    struct {
        const char *name;
        bool (*run)();
    } kernels[] = {{"compute_poly", run_compute_poly},
                   {"latency_gather", run_latency_gather},
                   {"stream_triad", run_stream_triad},
                   {"regs_layer", run_regs_layer},
                   {"icache_rounds", run_icache_rounds}};
    int failed = 0;
    for (auto &k : kernels) {
        if (only && strcmp(only, k.name) != 0) continue;
        const bool ok = k.run();
        printf("%-16s %s\n", k.name, ok ? "ok" : "WRONG");
        failed += !ok;
    }
    return failed ? 1 : 0;
}
