// manual_forms.cu - the everyday forms of a hand-unrolled loop, each next to the
// `#pragma unroll` loop it replaces (same result, checked against the CPU).
//
//   multi_decl_*    one declaration, four declarators: float a0 = in[t], a1 = in[t + m], …
//   elements_*      a register array filled element by element: v[0] = in[t]; v[1] = in[t + m]; …
//   accum_*         an accumulate chain: sum += in[t]; sum += in[t + m]; …
//   accum_array_*   an accumulator array: acc[0] += x * b[4k]; acc[1] += x * b[4k + 1]; …
//   expr_sum_*      one expression: in[t] + in[t + m] + in[t + 2 * m] + in[t + 3 * m]
//   dot_*           one expression: x[t] * y[t] + x[t + m] * y[t + m] + …
//   vec4_*          one float4 load through reinterpret_cast, then v.x, v.y, v.z, v.w
//   vec2_*          one float2 load through __ldg(reinterpret_cast<const float2*>(…)), then v.x, v.y
//
// Inputs are small integers stored as floats, so every sum is exact and the check is exact.
//
// Build:  nvcc -O3 -arch=sm_90 -o manual_forms manual_forms.cu
// Run:    ./manual_forms [--size M] [--reps R] [--only NAME]

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(call)                                                                        \
    do {                                                                                   \
        cudaError_t err_ = (call);                                                         \
        if (err_ != cudaSuccess) {                                                         \
            fprintf(stderr, "CUDA error %s at %s:%d: %s\n", cudaGetErrorName(err_), __FILE__, \
                    __LINE__, cudaGetErrorString(err_));                                   \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

#define BLOCK 256

// --- 1. several declarators in one declaration -------------------------------------------

__global__ void multi_decl_manual(const float *__restrict__ in, float *__restrict__ out, int m)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= m) return;
    float a0 = in[t], a1 = in[t + m], a2 = in[t + 2 * m], a3 = in[t + 3 * m];
    out[t] = (a0 + a1) + (a2 + a3);
}

__global__ void multi_decl_pragma(const float *__restrict__ in, float *__restrict__ out, int m)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= m) return;
    float a[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) a[j] = in[t + j * m];
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < 4; ++j) s += a[j];
    out[t] = s;
}

// --- 2. array element assignments -------------------------------------------------------

__global__ void elements_manual(const float *__restrict__ in, float *__restrict__ out, int m)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= m) return;
    float v[4];
    v[0] = in[t];
    v[1] = in[t + m];
    v[2] = in[t + 2 * m];
    v[3] = in[t + 3 * m];
    out[t] = fmaxf(fmaxf(v[0], v[1]), fmaxf(v[2], v[3]));
}

__global__ void elements_pragma(const float *__restrict__ in, float *__restrict__ out, int m)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= m) return;
    float v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) v[j] = in[t + j * m];
    out[t] = fmaxf(fmaxf(v[0], v[1]), fmaxf(v[2], v[3]));
}

// --- 3. accumulate chains ----------------------------------------------------------------

__global__ void accum_manual(const float *__restrict__ in, float *__restrict__ out, int m)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= m) return;
    float sum = 0.0f;
    sum += in[t];
    sum += in[t + m];
    sum += in[t + 2 * m];
    sum += in[t + 3 * m];
    out[t] = sum;
}

__global__ void accum_pragma(const float *__restrict__ in, float *__restrict__ out, int m)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= m) return;
    float sum = 0.0f;
#pragma unroll
    for (int j = 0; j < 4; ++j) sum += in[t + j * m];
    out[t] = sum;
}

// out[t] = acc[0] - acc[1] + acc[2] - acc[3], acc[j] = sum over k < 8 of in[t + k*m] * b[4k + j]
__global__ void accum_array_manual(const float *__restrict__ in, const float *__restrict__ b,
                                   float *__restrict__ out, int m)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= m / 2) return;
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int k = 0; k < 8; ++k) {
        float x = in[t + k * (m / 2)];
        acc[0] += x * b[4 * k + 0];
        acc[1] += x * b[4 * k + 1];
        acc[2] += x * b[4 * k + 2];
        acc[3] += x * b[4 * k + 3];
    }
    out[t] = acc[0] - acc[1] + acc[2] - acc[3];
}

__global__ void accum_array_pragma(const float *__restrict__ in, const float *__restrict__ b,
                                   float *__restrict__ out, int m)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= m / 2) return;
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int k = 0; k < 8; ++k) {
        float x = in[t + k * (m / 2)];
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[j] += x * b[4 * k + j];
    }
    out[t] = acc[0] - acc[1] + acc[2] - acc[3];
}

// --- 4. sums in one expression -----------------------------------------------------------

__global__ void expr_sum_manual(const float *__restrict__ in, float *__restrict__ out, int m)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= m) return;
    float sum = 0.0f;
    sum += in[t] + in[t + m] + in[t + 2 * m] + in[t + 3 * m];
    out[t] = sum;
}

__global__ void expr_sum_pragma(const float *__restrict__ in, float *__restrict__ out, int m)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= m) return;
    float sum = 0.0f;
#pragma unroll
    for (int j = 0; j < 4; ++j) sum += in[t + j * m];
    out[t] = sum;
}

__global__ void dot_manual(const float *__restrict__ x, const float *__restrict__ y,
                           float *__restrict__ out, int m)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= m) return;
    float s = x[t] * y[t] + x[t + m] * y[t + m] + x[t + 2 * m] * y[t + 2 * m] + x[t + 3 * m] * y[t + 3 * m];
    out[t] = s;
}

__global__ void dot_pragma(const float *__restrict__ x, const float *__restrict__ y,
                           float *__restrict__ out, int m)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= m) return;
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < 4; ++j) s += x[t + j * m] * y[t + j * m];
    out[t] = s;
}

// --- 5. vector loads ---------------------------------------------------------------------

__global__ void vec4_manual(const float *__restrict__ in, float *__restrict__ out, int m)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= m) return;
    float4 v = reinterpret_cast<const float4 *>(in)[t];
    float s = 0.0f;
    s += v.x;
    s += v.y;
    s += v.z;
    s += v.w;
    out[t] = s;
}

__global__ void vec4_pragma(const float *__restrict__ in, float *__restrict__ out, int m)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= m) return;
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < 4; ++j) s += in[4 * t + j];
    out[t] = s;
}

__global__ void vec2_manual(const float *__restrict__ in, float *__restrict__ out, int m)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= 2 * m) return;
    float2 v = __ldg(reinterpret_cast<const float2 *>(in) + t);
    out[t] = v.x - v.y;
}

__global__ void vec2_pragma(const float *__restrict__ in, float *__restrict__ out, int m)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= 2 * m) return;
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < 2; ++j) s += (j == 0 ? 1.0f : -1.0f) * in[2 * t + j];
    out[t] = s;
}

// --- host ---------------------------------------------------------------------------------

enum Ref { STRIDED_SUM, STRIDED_MAX, ACC_ARRAY, DOT, CONTIG_SUM4, CONTIG_DIFF2 };

struct Variant {
    const char *name;
    Ref ref;
    int outputs;  // in units of m/2: 2 = m outputs, 1 = m/2, 4 = 2m
};

static void usage(const char *argv0)
{
    fprintf(stderr, "usage: %s [--size M] [--reps R] [--only NAME]\n", argv0);
}

int main(int argc, char **argv)
{
    int m = 1 << 20;  // outputs of the 4-to-1 kernels; inputs hold 4*m values
    int reps = 20;
    const char *only = nullptr;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--size") == 0 && i + 1 < argc) {
            m = atoi(argv[++i]);
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
    if (m < 2 || m % 2 != 0 || m > (1 << 26)) {
        fprintf(stderr, "--size must be even, between 2 and 2^26\n");
        return 2;
    }
    if (reps < 1) reps = 1;

    const size_t nin = 4 * (size_t)m;
    std::vector<float> h_in(nin), h_x(nin), h_y(nin), h_b(32);
    unsigned s = 12345u;
    auto next = [&]() { s = s * 1664525u + 1013904223u; return (float)(1 + (s >> 24) % 15); };
    for (size_t i = 0; i < nin; ++i) h_in[i] = next();
    for (size_t i = 0; i < nin; ++i) h_x[i] = next();
    for (size_t i = 0; i < nin; ++i) h_y[i] = next();
    for (int i = 0; i < 32; ++i) h_b[i] = next();

    float *d_in, *d_x, *d_y, *d_b, *d_out;
    CHECK(cudaMalloc(&d_in, nin * sizeof(float)));
    CHECK(cudaMalloc(&d_x, nin * sizeof(float)));
    CHECK(cudaMalloc(&d_y, nin * sizeof(float)));
    CHECK(cudaMalloc(&d_b, 32 * sizeof(float)));
    CHECK(cudaMalloc(&d_out, 2 * (size_t)m * sizeof(float)));
    CHECK(cudaMemcpy(d_in, h_in.data(), nin * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_x, h_x.data(), nin * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_y, h_y.data(), nin * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_b, h_b.data(), 32 * sizeof(float), cudaMemcpyHostToDevice));

    const Variant variants[] = {
        {"multi_decl_manual", STRIDED_SUM, 2}, {"multi_decl_pragma", STRIDED_SUM, 2},
        {"elements_manual", STRIDED_MAX, 2},   {"elements_pragma", STRIDED_MAX, 2},
        {"accum_manual", STRIDED_SUM, 2},      {"accum_pragma", STRIDED_SUM, 2},
        {"accum_array_manual", ACC_ARRAY, 1},  {"accum_array_pragma", ACC_ARRAY, 1},
        {"expr_sum_manual", STRIDED_SUM, 2},   {"expr_sum_pragma", STRIDED_SUM, 2},
        {"dot_manual", DOT, 2},                {"dot_pragma", DOT, 2},
        {"vec4_manual", CONTIG_SUM4, 2},       {"vec4_pragma", CONTIG_SUM4, 2},
        {"vec2_manual", CONTIG_DIFF2, 4},      {"vec2_pragma", CONTIG_DIFF2, 4},
    };

    std::vector<std::string> failed;
    int ran = 0;
    for (const Variant &v : variants) {
        if (only && strcmp(only, v.name) != 0) continue;
        ++ran;
        const size_t nout = (size_t)v.outputs * (m / 2);
        std::vector<float> ref(nout);
        for (size_t t = 0; t < nout; ++t) {
            float r = 0.0f;
            switch (v.ref) {
            case STRIDED_SUM:
                r = (h_in[t] + h_in[t + m]) + (h_in[t + 2 * (size_t)m] + h_in[t + 3 * (size_t)m]);
                break;
            case STRIDED_MAX:
                r = std::max(std::max(h_in[t], h_in[t + m]), std::max(h_in[t + 2 * (size_t)m], h_in[t + 3 * (size_t)m]));
                break;
            case ACC_ARRAY: {
                float acc[4] = {0, 0, 0, 0};
                for (int k = 0; k < 8; ++k)
                    for (int j = 0; j < 4; ++j) acc[j] += h_in[t + (size_t)k * (m / 2)] * h_b[4 * k + j];
                r = acc[0] - acc[1] + acc[2] - acc[3];
                break;
            }
            case DOT:
                for (int j = 0; j < 4; ++j) r += h_x[t + (size_t)j * m] * h_y[t + (size_t)j * m];
                break;
            case CONTIG_SUM4:
                r = h_in[4 * t] + h_in[4 * t + 1] + h_in[4 * t + 2] + h_in[4 * t + 3];
                break;
            case CONTIG_DIFF2:
                r = h_in[2 * t] - h_in[2 * t + 1];
                break;
            }
            ref[t] = r;
        }

        const int grid = (int)((nout + BLOCK - 1) / BLOCK);
        auto launch = [&]() {
            const std::string n = v.name;
            if (n == "multi_decl_manual") multi_decl_manual<<<grid, BLOCK>>>(d_in, d_out, m);
            else if (n == "multi_decl_pragma") multi_decl_pragma<<<grid, BLOCK>>>(d_in, d_out, m);
            else if (n == "elements_manual") elements_manual<<<grid, BLOCK>>>(d_in, d_out, m);
            else if (n == "elements_pragma") elements_pragma<<<grid, BLOCK>>>(d_in, d_out, m);
            else if (n == "accum_manual") accum_manual<<<grid, BLOCK>>>(d_in, d_out, m);
            else if (n == "accum_pragma") accum_pragma<<<grid, BLOCK>>>(d_in, d_out, m);
            else if (n == "accum_array_manual") accum_array_manual<<<grid, BLOCK>>>(d_in, d_b, d_out, m);
            else if (n == "accum_array_pragma") accum_array_pragma<<<grid, BLOCK>>>(d_in, d_b, d_out, m);
            else if (n == "expr_sum_manual") expr_sum_manual<<<grid, BLOCK>>>(d_in, d_out, m);
            else if (n == "expr_sum_pragma") expr_sum_pragma<<<grid, BLOCK>>>(d_in, d_out, m);
            else if (n == "dot_manual") dot_manual<<<grid, BLOCK>>>(d_x, d_y, d_out, m);
            else if (n == "dot_pragma") dot_pragma<<<grid, BLOCK>>>(d_x, d_y, d_out, m);
            else if (n == "vec4_manual") vec4_manual<<<grid, BLOCK>>>(d_in, d_out, m);
            else if (n == "vec4_pragma") vec4_pragma<<<grid, BLOCK>>>(d_in, d_out, m);
            else if (n == "vec2_manual") vec2_manual<<<grid, BLOCK>>>(d_in, d_out, m);
            else if (n == "vec2_pragma") vec2_pragma<<<grid, BLOCK>>>(d_in, d_out, m);
        };

        CHECK(cudaMemset(d_out, 0xFF, nout * sizeof(float)));
        launch();
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        std::vector<float> got(nout);
        CHECK(cudaMemcpy(got.data(), d_out, nout * sizeof(float), cudaMemcpyDeviceToHost));
        size_t bad = 0, first_bad = 0;
        double checksum = 0.0;
        for (size_t t = 0; t < nout; ++t) {
            checksum += got[t];
            if (got[t] != ref[t] && bad++ == 0) first_bad = t;
        }

        cudaEvent_t e0, e1;
        CHECK(cudaEventCreate(&e0));
        CHECK(cudaEventCreate(&e1));
        std::vector<float> times;
        for (int r = 0; r < reps; ++r) {
            CHECK(cudaEventRecord(e0));
            launch();
            CHECK(cudaEventRecord(e1));
            CHECK(cudaGetLastError());
            CHECK(cudaEventSynchronize(e1));
            float ms = 0.0f;
            CHECK(cudaEventElapsedTime(&ms, e0, e1));
            times.push_back(ms);
        }
        CHECK(cudaEventDestroy(e0));
        CHECK(cudaEventDestroy(e1));
        std::sort(times.begin(), times.end());

        printf("kernel=%s config=m=%d,block=%d time_ms=%.4f check=%s checksum=%.6e\n", v.name, m, BLOCK,
               times[times.size() / 2], bad ? "FAIL" : "PASS", checksum);
        if (bad) {
            printf("MISMATCH kernel=%s bad=%zu first=%zu got=%g want=%g\n", v.name, bad, first_bad,
                   got[first_bad], ref[first_bad]);
            failed.push_back(v.name);
        }
    }
    if (only && ran == 0) {
        fprintf(stderr, "no kernel named %s\n", only);
        return 2;
    }

    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_x));
    CHECK(cudaFree(d_y));
    CHECK(cudaFree(d_b));
    CHECK(cudaFree(d_out));
    if (!failed.empty()) {
        printf("FAILED kernels:");
        for (const std::string &f : failed) printf(" %s", f.c_str());
        printf("\n");
        return 1;
    }
    return 0;
}
