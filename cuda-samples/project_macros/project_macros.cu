// project_macros.cu - kernels whose qualifiers and unroll pragmas are the project's own macros
// (pm_config.h), defined through several levels and chosen by #if on __CUDA_ARCH__. Unroll
// Lens expands them from the header, as nvcc's device pass would, and replaces the macro
// invocation in variants (PM_UNROLL(4) → PM_UNROLL(8)).
//
//   pm_axpy_rows : y[r] = sum_k a * x[r*cols + k]; the runtime-length loop asks for PM_UNROLL(4).
//   pm_poly      : an 8-term Horner polynomial per element, fully unrolled with PM_UNROLL_ALL
//                  inside a PM_DEVICE function; a PM_NO_UNROLL loop repeats it `reps` times.
//
// Build:  nvcc -O3 -arch=sm_90 -o project_macros project_macros.cu
// Run:    ./project_macros [--rows R] [--cols C] [--reps R] [--only NAME]
//         one line per kernel: time_ms (median of --reps), check=PASS|FAIL, checksum; exit 1 on FAIL

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "pm_config.h"

#define CHECK(call)                                                                                \
  do {                                                                                             \
    cudaError_t err_ = (call);                                                                     \
    if (err_ != cudaSuccess) {                                                                     \
      fprintf(stderr, "CUDA error at %s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
      exit(EXIT_FAILURE);                                                                          \
    }                                                                                              \
  } while (0)

PM_KERNEL void pm_axpy_rows(const float* __restrict__ x, float* __restrict__ y, float a, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float acc = 0.0f;
  PM_UNROLL(4)
  for (int k = 0; k < cols; ++k) acc += a * x[r * cols + k];
  y[r] = acc;
}

PM_DEVICE float pm_horner(const float* c, float v) {
  float s = 0.0f;
  PM_UNROLL_ALL
  for (int i = 7; i >= 0; --i) s = s * v + c[i];
  return s;
}

PM_KERNEL void pm_poly(const float* __restrict__ in, float* __restrict__ out, int n, int reps) {
  __shared__ float coeff[8];
  if (threadIdx.x < 8) coeff[threadIdx.x] = 1.0f / (1.0f + threadIdx.x);
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = in[i];
  PM_NO_UNROLL
  for (int r = 0; r < reps; ++r) v = 0.5f * pm_horner(coeff, v);
  out[i] = v;
}

static float horner_cpu(float v) {
  float s = 0.0f;
  for (int i = 7; i >= 0; --i) s = s * v + 1.0f / (1.0f + i);
  return s;
}

static void usage(const char* argv0) {
  fprintf(stderr, "usage: %s [--rows R] [--cols C] [--reps R] [--only pm_axpy_rows|pm_poly]\n", argv0);
  exit(2);
}

int main(int argc, char** argv) {
  int rows = 4096, cols = 1000, reps = 11, polyReps = 3;
  const char* only = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (i + 1 >= argc) usage(argv[0]);
    if (!strcmp(argv[i], "--rows")) rows = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--cols")) cols = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--reps")) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--only")) only = argv[++i];
    else usage(argv[0]);
  }
  if (rows <= 0 || cols <= 0 || reps <= 0) usage(argv[0]);
  if (only && strcmp(only, "pm_axpy_rows") && strcmp(only, "pm_poly")) usage(argv[0]);
  std::vector<float> x(static_cast<size_t>(rows) * cols), y(rows), in(rows), out(rows);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7919) % 1000) / 1000.0f;
  for (int i = 0; i < rows; ++i) in[i] = static_cast<float>(i % 100) / 100.0f;
  float *dx, *dy, *din, *dout;
  CHECK(cudaMalloc(&dx, x.size() * sizeof(float)));
  CHECK(cudaMalloc(&dy, rows * sizeof(float)));
  CHECK(cudaMalloc(&din, rows * sizeof(float)));
  CHECK(cudaMalloc(&dout, rows * sizeof(float)));
  CHECK(cudaMemcpy(dx, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(din, in.data(), rows * sizeof(float), cudaMemcpyHostToDevice));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  const int block = 256, grid = (rows + block - 1) / block;
  int failures = 0;
  // Times `launch` reps times (median), then checks its output against the CPU.
  auto run = [&](const char* name, auto launch, auto check, const std::vector<float>& host, float* dev) {
    if (only && strcmp(only, name)) return;
    std::vector<float> ms(reps);
    for (int r = 0; r < reps; ++r) {
      CHECK(cudaEventRecord(start));
      launch();
      CHECK(cudaEventRecord(stop));
      CHECK(cudaEventSynchronize(stop));
      CHECK(cudaEventElapsedTime(&ms[r], start, stop));
    }
    CHECK(cudaGetLastError());
    std::vector<float> got(host.size());
    CHECK(cudaMemcpy(got.data(), dev, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
    int bad = 0;
    double sum = 0.0;
    for (int r = 0; r < rows; ++r) {
      sum += got[r];
      if (!check(r, got[r]) && bad++ < 3) printf("MISMATCH kernel=%s row=%d got=%.7g\n", name, r, got[r]);
    }
    std::sort(ms.begin(), ms.end());
    printf("kernel=%s config=rows=%d,cols=%d time_ms=%.4f check=%s checksum=%.6e\n", name, rows, cols, ms[reps / 2],
           bad ? "FAIL" : "PASS", sum);
    failures += bad ? 1 : 0;
  };
  run(
      "pm_axpy_rows", [&] { pm_axpy_rows<<<grid, block>>>(dx, dy, 0.5f, rows, cols); },
      [&](int r, float got) {
        double want = 0.0;
        for (int k = 0; k < cols; ++k) want += 0.5 * x[static_cast<size_t>(r) * cols + k];
        return std::fabs(got - want) <= 1e-3 * std::fabs(want) + 1e-3;
      },
      y, dy);
  run(
      "pm_poly", [&] { pm_poly<<<grid, block>>>(din, dout, rows, polyReps); },
      [&](int r, float got) {
        float v = in[r];
        for (int k = 0; k < polyReps; ++k) v = 0.5f * horner_cpu(v);
        return std::fabs(got - v) <= 1e-4f * std::fabs(v) + 1e-5f;
      },
      out, dout);
  CHECK(cudaFree(dx));
  CHECK(cudaFree(dy));
  CHECK(cudaFree(din));
  CHECK(cudaFree(dout));
  if (failures) printf("FAILED kernels: %d\n", failures);
  return failures ? 1 : 0;
}
