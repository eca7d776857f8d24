// header_loops.cu - kernels whose loops live in a header (tile_ops.cuh, included relatively).
// The translation unit Unroll Lens compiles to build the header's unroll variants.
//
//   rows_dot  : y = A x, one thread per row, the row loop is row_dot's (`#pragma unroll 4`)
//   rows_sum  : y = row sums of A, the row loop is row_sum's (no pragma)
//   rows_poly : y = horner8(row sum), the 8-term loop fully unrolled
//
// Build:  nvcc -O3 -arch=sm_90 -o header_loops header_loops.cu
// Run:    ./header_loops [--rows R] [--cols C] [--reps R] [--only NAME]

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tile_ops.cuh"

#define CHECK(call)                                                                                                \
  do {                                                                                                             \
    cudaError_t err_ = (call);                                                                                     \
    if (err_ != cudaSuccess) {                                                                                     \
      fprintf(stderr, "CUDA error at %s:%d: %s returned %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_)); \
      exit(EXIT_FAILURE);                                                                                          \
    }                                                                                                              \
  } while (0)

__global__ void rows_dot(const float* __restrict__ a, const float* __restrict__ x, float* __restrict__ y, int rows, int cols)
{
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) y[r] = row_dot(a + static_cast<size_t>(r) * cols, x, cols);
}

__global__ void rows_sum(const float* __restrict__ a, float* __restrict__ y, int rows, int cols)
{
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) y[r] = row_sum(a + static_cast<size_t>(r) * cols, cols);
}

__global__ void rows_poly(const float* __restrict__ a, float* __restrict__ y, int rows, int cols)
{
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) y[r] = horner8(row_sum(a + static_cast<size_t>(r) * cols, cols));
}

static double horner8_host(double v)
{
  double s = 0.0;
  for (int i = 0; i < 8; ++i) s = s * v + 1.0 / (i + 1);
  return s;
}

static void usage(const char* argv0)
{
  fprintf(stderr, "usage: %s [--rows R] [--cols C] [--reps R] [--only rows_dot|rows_sum|rows_poly]\n", argv0);
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
  uint32_t seed = 2024u;
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

  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  const int threads = 128, grid = (rows + threads - 1) / threads;
  const char* names[] = {"rows_dot", "rows_sum", "rows_poly"};
  std::string failed;
  int ran = 0;
  for (int which = 0; which < 3; ++which) {
    const char* name = names[which];
    if (only && strcmp(only, name) != 0) continue;
    ++ran;
    auto launch = [&]() {
      if (which == 0) rows_dot<<<grid, threads>>>(da, dx, dy, rows, cols);
      else if (which == 1) rows_sum<<<grid, threads>>>(da, dy, rows, cols);
      else rows_poly<<<grid, threads>>>(da, dy, rows, cols);
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
      double tol = 1e-4 * (mag + 1e-3);
      if (which == 2) {
        // horner8's derivative is below 2 on (-1, 1): the sum's rounding grows by at most 2x.
        tol = 2.0 * tol + 1e-5;
        ref = horner8_host(ref);
      }
      checksum += hy[r];
      if (!(std::fabs(hy[r] - ref) <= tol)) {
        if (ok) printf("MISMATCH kernel=%s row=%d got=%.7g want=%.7g\n", name, r, hy[r], ref);
        ok = false;
      }
    }
    std::vector<float> ms(reps);
    for (int i = 0; i < reps; ++i) {
      CHECK(cudaEventRecord(start));
      launch();
      CHECK(cudaEventRecord(stop));
      CHECK(cudaEventSynchronize(stop));
      CHECK(cudaEventElapsedTime(&ms[i], start, stop));
    }
    std::sort(ms.begin(), ms.end());
    printf("kernel=%s config=rows=%d,cols=%d time_ms=%.4f check=%s checksum=%.6e\n", name, rows, cols, ms[reps / 2],
           ok ? "PASS" : "FAIL", checksum);
    if (!ok) failed += failed.empty() ? name : std::string(" ") + name;
  }
  CHECK(cudaFree(da));
  CHECK(cudaFree(dx));
  CHECK(cudaFree(dy));
  if (!ran) {
    usage(argv[0]);
    return 2;
  }
  if (!failed.empty()) {
    printf("FAILED kernels: %s\n", failed.c_str());
    return 1;
  }
  return 0;
}
