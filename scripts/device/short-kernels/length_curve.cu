// length_curve.cu - one kernel at many lengths, from about 3 µs to about 0.7 ms on an H100/H200,
// for issue 42's length curve: how far a timer's median is from ncu's gpu__time_duration as the
// kernel gets shorter (a fixed bias is 0.3 % of 600 µs and 30 % of 3 µs).
//
//   lc_triad<CHUNKS> : c = a + 1.5 b over CHUNKS x 2^18 floats (memory-bound: 3 MB moved a chunk)
//   lc_chain<STEPS>  : every thread runs STEPS dependent FMAs on its own value (compute-bound,
//                      132 x 8 blocks of 256 threads), then writes it
//
// Every instantiation is its own kernel (`unroll-lens compare --kernels lc_triad,lc_chain` times
// each as a row). The triad is checked against the CPU's fmaf (exact: one rounding), every element
// up to 64 chunks and every 13th above; the chain on every 997th thread against the CPU's chain.
//
// Build:  nvcc -O3 -arch=sm_90 -o length_curve length_curve.cu
// Run:    ./length_curve [--reps R] [--only NAME]   (--only lc_triad runs every lc_triad<…>)
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(call)                                                                                  \
  do {                                                                                               \
    cudaError_t err_ = (call);                                                                       \
    if (err_ != cudaSuccess) {                                                                       \
      fprintf(stderr, "CUDA error at %s:%d: %s returned %s\n", __FILE__, __LINE__, #call,             \
              cudaGetErrorString(err_));                                                             \
      exit(EXIT_FAILURE);                                                                            \
    }                                                                                                \
  } while (0)

constexpr size_t CHUNK = 1u << 18;  // floats a triad chunk
constexpr int MAX_CHUNKS = 512;
constexpr int CHAIN_BLOCKS = 132 * 8, CHAIN_THREADS = 256;

template <int CHUNKS>
__global__ void lc_triad(const float4 *a, const float4 *b, float4 *c) {
  size_t n4 = CHUNKS * CHUNK / 4;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x) {
    float4 x = a[i], y = b[i];
    c[i] = make_float4(fmaf(1.5f, y.x, x.x), fmaf(1.5f, y.y, x.y), fmaf(1.5f, y.z, x.z), fmaf(1.5f, y.w, x.w));
  }
}

template <int STEPS>
__global__ void lc_chain(const float *seed, float *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float v = seed[t];
  for (int i = 0; i < STEPS; ++i) v = fmaf(v, 0.999f, 0.001f);
  out[t] = v;
}

struct Rung {
  std::string name;
  int chunks;  // triad: chunks; chain: 0
  int steps;   // chain: steps; triad: 0
};

static void usage(const char *self) { printf("usage: %s [--reps R (default 20)] [--only NAME]\n", self); }

template <int C>
static void launchTriad(const float *a, const float *b, float *c) {
  int blocks = (int)std::min<size_t>(C * CHUNK / 4 / 256, 132 * 16);
  lc_triad<C><<<blocks, 256>>>((const float4 *)a, (const float4 *)b, (float4 *)c);
}

template <int S>
static void launchChain(const float *seed, float *out) {
  lc_chain<S><<<CHAIN_BLOCKS, CHAIN_THREADS>>>(seed, out);
}

int main(int argc, char **argv) {
  int reps = 20;
  const char *only = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = atoi(argv[++i]);
    else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
    else if (strcmp(argv[i], "--help") == 0) return usage(argv[0]), 0;
    else {
      fprintf(stderr, "unknown or incomplete option: %s\n", argv[i]);
      return usage(argv[0]), 2;
    }
  }
  if (reps < 1) return fprintf(stderr, "--reps must be at least 1\n"), 2;
  struct Entry {
    Rung r;
    void (*triad)(const float *, const float *, float *);
    void (*chain)(const float *, float *);
  };
  const Entry entries[] = {
      {{"lc_triad<1>", 1, 0}, launchTriad<1>, nullptr},         {{"lc_triad<4>", 4, 0}, launchTriad<4>, nullptr},
      {{"lc_triad<16>", 16, 0}, launchTriad<16>, nullptr},      {{"lc_triad<32>", 32, 0}, launchTriad<32>, nullptr},
      {{"lc_triad<64>", 64, 0}, launchTriad<64>, nullptr},      {{"lc_triad<128>", 128, 0}, launchTriad<128>, nullptr},
      {{"lc_triad<256>", 256, 0}, launchTriad<256>, nullptr},   {{"lc_triad<512>", 512, 0}, launchTriad<512>, nullptr},
      {{"lc_chain<512>", 0, 512}, nullptr, launchChain<512>},   {{"lc_chain<8192>", 0, 8192}, nullptr, launchChain<8192>},
      {{"lc_chain<65536>", 0, 65536}, nullptr, launchChain<65536>},
  };
  size_t n = (size_t)MAX_CHUNKS * CHUNK, bytes = n * sizeof(float);
  std::vector<float> ha(n), hb(n), hc(n);
  unsigned s = 2024u;
  for (size_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u, ha[i] = 1.0f + (float)(s >> 8) / (float)(1u << 24);
    s = s * 1664525u + 1013904223u, hb[i] = 0.5f + (float)(s >> 8) / (float)(1u << 24);
  }
  float *a, *b, *c;
  CHECK(cudaMalloc(&a, bytes));
  CHECK(cudaMalloc(&b, bytes));
  CHECK(cudaMalloc(&c, bytes));
  CHECK(cudaMemcpy(a, ha.data(), bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(b, hb.data(), bytes, cudaMemcpyHostToDevice));
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  std::string failed;
  int ran = 0;
  for (const Entry &e : entries) {
    const std::string &name = e.r.name;
    if (only && name != only && name.substr(0, name.find('<')) != only) continue;
    ++ran;
    size_t elems = e.triad ? (size_t)e.r.chunks * CHUNK : (size_t)CHAIN_BLOCKS * CHAIN_THREADS;
    CHECK(cudaMemset(c, 0xFF, elems * sizeof(float)));  // poison: NaN where nothing is written
    std::vector<float> ms;
    for (int i = 0; i < reps; ++i) {
      CHECK(cudaEventRecord(e0));
      if (e.triad) e.triad(a, b, c);
      else e.chain(a, c);
      CHECK(cudaGetLastError());
      CHECK(cudaEventRecord(e1));
      CHECK(cudaEventSynchronize(e1));
      float t = 0;
      CHECK(cudaEventElapsedTime(&t, e0, e1));
      ms.push_back(t);
    }
    CHECK(cudaMemcpy(hc.data(), c, elems * sizeof(float), cudaMemcpyDeviceToHost));
    size_t bad = 0, checked = 0;
    double sum = 0;
    for (size_t i = 0; i < elems; i += e.triad ? (e.r.chunks <= 64 ? 1 : 13) : 997) {
      float want;
      if (e.triad) want = fmaf(1.5f, hb[i], ha[i]);
      else {
        want = ha[i];
        for (int k = 0; k < e.r.steps; ++k) want = fmaf(want, 0.999f, 0.001f);
      }
      bad += !(hc[i] == want);
      sum += hc[i];
      ++checked;
    }
    std::sort(ms.begin(), ms.end());
    if (bad) {
      fprintf(stderr, "MISMATCH kernel=%s: %zu of %zu checked elements wrong\n", name.c_str(), bad, checked);
      failed += (failed.empty() ? "" : ",") + name;
    }
    printf("kernel=%s config=%s time_ms=%.4f check=%s checksum=%.6e\n", name.c_str(),
           e.triad ? ("floats=" + std::to_string(elems)).c_str() : ("steps=" + std::to_string(e.r.steps)).c_str(),
           ms[ms.size() / 2], bad ? "FAIL" : "PASS", sum);
  }
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaFree(c));
  if (!ran) return fprintf(stderr, "no kernel matches --only %s\n", only), 2;
  if (!failed.empty()) return fprintf(stderr, "FAILED kernels: %s\n", failed.c_str()), 1;
  return 0;
}
