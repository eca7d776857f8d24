// library_style.cu - kernels written the way CUDA libraries write them: function qualifiers
// and unroll pragmas behind macros (CUTLASS_GLOBAL, CUTLASS_DEVICE, _CCCL_DEVICE
// _CCCL_FORCEINLINE; CUTLASS_PRAGMA_UNROLL / CUTLASS_PRAGMA_NO_UNROLL, _CCCL_PRAGMA_UNROLL(N),
// _CCCL_PRAGMA_UNROLL_FULL()). The macros are defined here the way the libraries define them
// for nvcc, so the file builds on its own; Unroll Lens expands these definitions (its built-in
// table of the libraries' macros is only the fallback for names no readable header defines).
//
//   library_matvec : y = A x, one thread per row; the runtime-length row loop is kept rolled
//                    with CUTLASS_PRAGMA_NO_UNROLL; a 4-term polynomial (a _CCCL_DEVICE
//                    function) is fully unrolled with _CCCL_PRAGMA_UNROLL_FULL().
//   library_rowsum : y = row sums of A; the runtime-length loop asks for _CCCL_PRAGMA_UNROLL(4);
//                    a 4-trip CUTLASS_PRAGMA_UNROLL loop folds the partial sums.
//
// Build:  nvcc -O3 -arch=sm_90 -o library_style library_style.cu
// Run:    ./library_style [--rows R] [--cols C] [--reps R] [--only NAME]

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

// As cutlass/detail/helper_macros.hpp defines them under nvcc.
#define CUTLASS_PRAGMA_UNROLL _Pragma("unroll")
#define CUTLASS_PRAGMA_NO_UNROLL _Pragma("unroll 1")
#define CUTLASS_DEVICE __forceinline__ __device__
#define CUTLASS_GLOBAL __global__

// As cuda/std/__cccl (CCCL) defines them under nvcc.
#define _CCCL_TO_STRING2(X) #X
#define _CCCL_TO_STRING(X) _CCCL_TO_STRING2(X)
#define _CCCL_PRAGMA(X) _Pragma(_CCCL_TO_STRING(X))
#define _CCCL_PRAGMA_UNROLL(N) _CCCL_PRAGMA(unroll N)
#define _CCCL_PRAGMA_UNROLL_FULL() _CCCL_PRAGMA(unroll)
#define _CCCL_PRAGMA_NOUNROLL() _CCCL_PRAGMA_UNROLL(1)
#define _CCCL_DEVICE __device__
#define _CCCL_FORCEINLINE __forceinline__

#define CHECK(call)                                                                                                \
  do {                                                                                                             \
    cudaError_t err_ = (call);                                                                                     \
    if (err_ != cudaSuccess) {                                                                                     \
      fprintf(stderr, "CUDA error at %s:%d: %s returned %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_)); \
      exit(EXIT_FAILURE);                                                                                          \
    }                                                                                                              \
  } while (0)

_CCCL_DEVICE _CCCL_FORCEINLINE float poly4(float v)
{
  float s = 0.0f;
  _CCCL_PRAGMA_UNROLL_FULL()
  for (int i = 0; i < 4; ++i) s = s * v + static_cast<float>(i + 1);
  return s;
}

CUTLASS_GLOBAL void library_matvec(const float* __restrict__ a, const float* __restrict__ x, float* __restrict__ y, int rows, int cols)
{
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* row = a + static_cast<size_t>(r) * cols;
  float acc = 0.0f;
  CUTLASS_PRAGMA_NO_UNROLL
  for (int k = 0; k < cols; ++k) acc += row[k] * x[k];
  y[r] = poly4(acc);
}

CUTLASS_DEVICE float fold4(const float (&part)[4])
{
  float s = 0.0f;
  CUTLASS_PRAGMA_UNROLL
  for (int j = 0; j < 4; ++j) s += part[j];
  return s;
}

CUTLASS_GLOBAL void library_rowsum(const float* __restrict__ a, float* __restrict__ y, int rows, int cols)
{
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* row = a + static_cast<size_t>(r) * cols;
  float part[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  _CCCL_PRAGMA_UNROLL(4)
  for (int k = 0; k < cols; ++k) part[k & 3] += row[k];
  y[r] = fold4(part);
}

static double poly4_host(double v)
{
  double s = 0.0;
  for (int i = 0; i < 4; ++i) s = s * v + (i + 1);
  return s;
}

static float median_time_ms(const std::function<void()>& launch, int reps)
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

static void usage(const char* prog)
{
  printf("usage: %s [--rows R (default 4096)] [--cols C (default 257)] [--reps N (default 20)] [--only NAME]\n", prog);
}

int main(int argc, char** argv)
{
  int rows = 4096, cols = 257, reps = 20;
  const char* only = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--rows") && i + 1 < argc) rows = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--cols") && i + 1 < argc) cols = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else {
      usage(argv[0]);
      return 2;
    }
  }
  if (rows < 1 || cols < 1 || reps < 1) {
    usage(argv[0]);
    return 2;
  }
  // Fixed-seed inputs (non-zero, reproducible).
  std::vector<float> ha(static_cast<size_t>(rows) * cols), hx(cols), hy(rows);
  uint32_t seed = 12345u;
  auto next = [&seed]() {
    seed = seed * 1664525u + 1013904223u;
    return static_cast<float>((seed >> 8) % 1999 + 1) / 1000.0f - 1.0f;  // in (-1, 1), never 0 exactly
  };
  for (auto& v : ha) v = next() * 0.05f;
  for (auto& v : hx) v = next() * 0.1f;

  float *da, *dx, *dy;
  CHECK(cudaMalloc(&da, ha.size() * sizeof(float)));
  CHECK(cudaMalloc(&dx, cols * sizeof(float)));
  CHECK(cudaMalloc(&dy, rows * sizeof(float)));
  CHECK(cudaMemcpy(da, ha.data(), ha.size() * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dx, hx.data(), cols * sizeof(float), cudaMemcpyHostToDevice));

  const int threads = 128, grid = (rows + threads - 1) / threads;
  std::string failed;
  int ran = 0;
  for (int which = 0; which < 2; ++which) {
    const char* name = which == 0 ? "library_matvec" : "library_rowsum";
    if (only && strcmp(only, name) != 0) continue;
    ++ran;
    auto launch = [&]() {
      if (which == 0) library_matvec<<<grid, threads>>>(da, dx, dy, rows, cols);
      else library_rowsum<<<grid, threads>>>(da, dy, rows, cols);
      CHECK(cudaGetLastError());
    };
    CHECK(cudaMemset(dy, 0xFF, rows * sizeof(float)));  // poison (NaN)
    launch();
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(hy.data(), dy, rows * sizeof(float), cudaMemcpyDeviceToHost));
    bool ok = true;
    double checksum = 0.0;
    for (int r = 0; r < rows; ++r) {
      double ref = 0.0, mag = 0.0;
      for (int k = 0; k < cols; ++k) {
        const double t = which == 0 ? double(ha[size_t(r) * cols + k]) * hx[k] : double(ha[size_t(r) * cols + k]);
        ref += t;
        mag += std::fabs(t);
      }
      if (which == 0) ref = poly4_host(ref);
      checksum += hy[r];
      if (ok && !(std::fabs(hy[r] - ref) <= 1e-4 * (1.0 + mag) * (which == 0 ? 10.0 : 1.0))) {
        fprintf(stderr, "MISMATCH kernel=%s at y[%d]: got %.7g expected %.7g\n", name, r, hy[r], ref);
        ok = false;
      }
    }
    const float ms = median_time_ms(launch, reps);
    printf("kernel=%s config=rows=%d,cols=%d,block=%d,grid=%d time_ms=%.4f check=%s checksum=%.6e\n", name, rows, cols, threads,
           grid, ms, ok ? "PASS" : "FAIL", checksum);
    if (!ok) failed += std::string(failed.empty() ? "" : ",") + name;
  }
  CHECK(cudaFree(da));
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
