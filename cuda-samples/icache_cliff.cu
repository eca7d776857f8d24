// icache_cliff.cu - the instruction-cache cliff of over-unrolling.
//
// hot_loop<BODY> runs a fully unrolled body of BODY dependent integer mixing
// steps inside a rolled outer loop of TOTAL / BODY iterations, so every
// instantiation does exactly TOTAL steps per thread; only the size of the
// hot loop's machine code changes (about 128 bytes per step on sm_90).
// Once the loop no longer fits the SM's instruction caches, time per step
// jumps even though the work is identical.
//
// Each step uses a multiplier derived from the step index u (u * golden-ratio
// constant + offset) and mixes multiply, shift and xor, so the compiler can
// neither fold consecutive steps together nor vectorise them. Unsigned 64-bit
// integer arithmetic (wrap-around) makes the CPU check bit-exact.
//
// Build:  nvcc -O3 -arch=sm_90 -o icache_cliff icache_cliff.cu
// Run:    ./icache_cliff [--body N] [--blocks B] [--threads T] [--total S] [--reps R]
//         e.g. --blocks <#SMs> --threads 128|256|1024  ->  4 | 8 | 32 warps per SM

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
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

// Per-step multiplier: odd, and different for every step index u. With u a
// compile-time constant (unrolled loop) it folds to immediate operands.
__host__ __device__ __forceinline__ uint64_t step_multiplier(uint32_t u)
{
    return ((uint64_t)u * 0x9E3779B97F4A7C15ull + 0xD1B54A32D192ED03ull) | 1ull;
}

// One mixing step on 64-bit state (about 8 SASS instructions, ~128 bytes, on
// sm_90: a 64-bit IMAD chain, a 64-bit shift and xor). a and b depend on each
// other and the xor-with-shift breaks linearity, so consecutive steps cannot be
// folded together. 64-bit words are used on purpose: per unit of the
// compiler's unroll-cost estimate they produce about twice as much machine code
// as 32-bit ones, so BODY = 2048 (~256 KiB) still unrolls fully. (nvcc stops
// honouring "#pragma unroll" silently - it falls back to a partial unroll - once
// the estimated unrolled size passes its threshold, e.g. BODY = 4096 here.)
__host__ __device__ __forceinline__ void mix_step(uint64_t &a, uint64_t &b, uint32_t u)
{
    a = a * step_multiplier(u) + b;
    b = b ^ (a >> 29);
}

template <int BODY>
__global__ void hot_loop(const uint64_t *__restrict__ in, uint64_t *__restrict__ out, int outer_iters)
{
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    uint64_t a = in[2 * tid];
    uint64_t b = in[2 * tid + 1];

    // Rolled outer loop: the hot loop's code is exactly one unrolled body.
#pragma unroll 1
    for (int it = 0; it < outer_iters; ++it) {
#pragma unroll
        for (int u = 0; u < BODY; ++u)
            mix_step(a, b, (uint32_t)u);
    }
    out[2 * tid] = a;
    out[2 * tid + 1] = b;
}

// Body sizes, chosen so the hot loop's code is about 4, 8, 16, 32, 48, 64, 96,
// 128 and 256 KiB on sm_90. All divide DEFAULT_TOTAL (lcm = 3 * 2048 = 6144),
// so every instantiation does the same number of steps.
template __global__ void hot_loop<32>(const uint64_t *__restrict__, uint64_t *__restrict__, int);
template __global__ void hot_loop<64>(const uint64_t *__restrict__, uint64_t *__restrict__, int);
template __global__ void hot_loop<128>(const uint64_t *__restrict__, uint64_t *__restrict__, int);
template __global__ void hot_loop<256>(const uint64_t *__restrict__, uint64_t *__restrict__, int);
template __global__ void hot_loop<384>(const uint64_t *__restrict__, uint64_t *__restrict__, int);
template __global__ void hot_loop<512>(const uint64_t *__restrict__, uint64_t *__restrict__, int);
template __global__ void hot_loop<768>(const uint64_t *__restrict__, uint64_t *__restrict__, int);
template __global__ void hot_loop<1024>(const uint64_t *__restrict__, uint64_t *__restrict__, int);
template __global__ void hot_loop<2048>(const uint64_t *__restrict__, uint64_t *__restrict__, int);

#define DEFAULT_TOTAL (6144 * 16)

// ---------------------------------------------------------------------------
// Host side
// ---------------------------------------------------------------------------

typedef void (*HotLoopKernel)(const uint64_t *__restrict__, uint64_t *__restrict__, int);

struct Variant {
    int body;
    HotLoopKernel kernel;
    // .text section size of this instantiation, measured with readelf on a
    // cubin from "nvcc -O3 -arch=sm_90 -cubin" (nvcc 13.0). Printed only when
    // the running binary is sm_90 code; other compilers/arches differ.
    unsigned text_bytes_sm90;
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

// CPU model of one thread: same steps, same order, same uint32 wrap-around.
static void cpu_thread(uint64_t &a, uint64_t &b, int body, int outer_iters)
{
    for (int it = 0; it < outer_iters; ++it)
        for (int u = 0; u < body; ++u) mix_step(a, b, (uint32_t)u);
}

static void usage(const char *prog)
{
    printf("usage: %s [--body N (32,64,128,256,384,512,768,1024,2048; default all)]\n"
           "          [--blocks B (default: #SMs)] [--threads T (default 256)]\n"
           "          [--total S (steps per thread, multiple of every body run; default %d)]\n"
           "          [--reps R (default 5)]\n",
           prog, DEFAULT_TOTAL);
}

int main(int argc, char **argv)
{
    int only_body = 0;
    int blocks = 0;
    int threads = 256;
    long long total = DEFAULT_TOTAL;
    int reps = 5;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--body") == 0 && i + 1 < argc) {
            only_body = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--blocks") == 0 && i + 1 < argc) {
            blocks = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            threads = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--total") == 0 && i + 1 < argc) {
            total = atoll(argv[++i]);
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = atoi(argv[++i]);
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
        {32, hot_loop<32>, 4864},        {64, hot_loop<64>, 8960},     {128, hot_loop<128>, 17152},
        {256, hot_loop<256>, 33536},     {384, hot_loop<384>, 49920},  {512, hot_loop<512>, 66304},
        {768, hot_loop<768>, 99072},     {1024, hot_loop<1024>, 131840}, {2048, hot_loop<2048>, 262912},
    };

    int device = 0;
    CHECK(cudaGetDevice(&device));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, device));
    if (blocks <= 0) blocks = prop.multiProcessorCount;
    if (threads < 32 || threads > 1024 || threads % 32 != 0) {
        fprintf(stderr, "--threads must be a multiple of 32 in 32..1024\n");
        return 2;
    }
    if (blocks > (1 << 20)) {
        fprintf(stderr, "--blocks too large\n");
        return 2;
    }

    bool body_found = (only_body == 0);
    for (const Variant &v : variants) {
        if (only_body != 0 && v.body != only_body) continue;
        body_found = true;
        if (total < v.body || total % v.body != 0 || total / v.body > 0x7fffffff) {
            fprintf(stderr, "--total %lld must be a positive multiple of body %d\n", total, v.body);
            return 2;
        }
    }
    if (!body_found) {
        fprintf(stderr, "--body %d is not an instantiated size\n", only_body);
        usage(argv[0]);
        return 2;
    }

    const int nthreads = blocks * threads;
    std::vector<uint64_t> h_in(2 * (size_t)nthreads), h_out(2 * (size_t)nthreads);
    Rng rng(0xC0FFEE);
    for (uint64_t &x : h_in) {
        do x = ((uint64_t)rng.next() << 32) | rng.next();
        while (x == 0);  // non-zero inputs
    }

    // Threads checked bit-exactly on the CPU: first, last and a spread between.
    std::vector<int> sample;
    const int num_samples = std::min(nthreads, 16);
    for (int s = 0; s < num_samples; ++s)
        sample.push_back((int)((long long)s * (nthreads - 1) / std::max(1, num_samples - 1)));

    uint64_t *d_in, *d_out;
    const size_t bytes = 2 * (size_t)nthreads * sizeof(uint64_t);
    CHECK(cudaMalloc(&d_in, bytes));
    CHECK(cudaMalloc(&d_out, bytes));
    CHECK(cudaMemcpy(d_in, h_in.data(), bytes, cudaMemcpyHostToDevice));

    std::string failed;
    for (const Variant &v : variants) {
        if (only_body != 0 && v.body != only_body) continue;
        const int outer_iters = (int)(total / v.body);

        cudaFuncAttributes attr;
        CHECK(cudaFuncGetAttributes(&attr, (const void *)v.kernel));
        char code_bytes[32];
        if (attr.binaryVersion == 90 && v.text_bytes_sm90 != 0)
            snprintf(code_bytes, sizeof(code_bytes), "%u", v.text_bytes_sm90);
        else
            snprintf(code_bytes, sizeof(code_bytes), "n/a");

        auto launch = [&]() {
            v.kernel<<<blocks, threads>>>(d_in, d_out, outer_iters);
            CHECK(cudaGetLastError());
        };
        CHECK(cudaMemset(d_out, 0xFF, bytes));  // poison
        launch();
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(h_out.data(), d_out, bytes, cudaMemcpyDeviceToHost));

        bool ok = true;
        for (int t : sample) {
            uint64_t a = h_in[2 * (size_t)t], b = h_in[2 * (size_t)t + 1];
            cpu_thread(a, b, v.body, outer_iters);
            if (h_out[2 * (size_t)t] != a || h_out[2 * (size_t)t + 1] != b) {
                fprintf(stderr,
                        "MISMATCH kernel=hot_loop<%d> thread %d: got (%016llx,%016llx) expected (%016llx,%016llx)\n",
                        v.body, t, (unsigned long long)h_out[2 * (size_t)t],
                        (unsigned long long)h_out[2 * (size_t)t + 1], (unsigned long long)a, (unsigned long long)b);
                ok = false;
                break;
            }
        }
        double checksum = 0.0;
        for (uint64_t x : h_out) checksum += (double)x;

        const float ms = median_time_ms(launch, reps);
        printf("kernel=hot_loop<%d> config=body=%d,code_bytes=%s,blocks=%d,threads=%d,total=%lld,regs=%d "
               "time_ms=%.4f check=%s checksum=%.6e\n",
               v.body, v.body, code_bytes, blocks, threads, total, attr.numRegs, ms, ok ? "PASS" : "FAIL",
               checksum);
        if (!ok) {
            char name[32];
            snprintf(name, sizeof(name), "hot_loop<%d>", v.body);
            failed += std::string(failed.empty() ? "" : ",") + name;
        }
    }

    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    if (!failed.empty()) {
        fprintf(stderr, "FAILED kernels: %s\n", failed.c_str());
        return 1;
    }
    return 0;
}
