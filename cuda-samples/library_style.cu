// library_style.cu - kernels written the way CUDA libraries write them: function qualifiers
// and unroll pragmas behind macros (CUTLASS_GLOBAL, CUTLASS_DEVICE, _CCCL_DEVICE
// _CCCL_FORCEINLINE; CUTLASS_PRAGMA_UNROLL / CUTLASS_PRAGMA_NO_UNROLL, _CCCL_PRAGMA_UNROLL(N),
// _CCCL_PRAGMA_UNROLL_FULL()). The macros are defined here the way the libraries define them
// for nvcc, so the file builds on its own; Unroll Lens recognises them from its built-in table.
//
//   library_matvec : y = A x, one thread per row; the runtime-length row loop is kept rolled
//                    with CUTLASS_PRAGMA_NO_UNROLL; a 4-term polynomial (a _CCCL_DEVICE
//                    function) is fully unrolled with _CCCL_PRAGMA_UNROLL_FULL().
//   library_rowsum : y = row sums of A; the runtime-length loop asks for _CCCL_PRAGMA_UNROLL(4);
//                    a 4-trip CUTLASS_PRAGMA_UNROLL loop folds the partial sums.
//
// Build:  nvcc -O3 -arch=sm_90 -o library_style library_style.cu
// Run:    ./library_style [--rows R] [--cols C]

#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

int main(int argc, char** argv)
{
  int rows = 4096, cols = 257;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--rows")) rows = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--cols")) cols = atoi(argv[i + 1]);
  }
  std::vector<float> ha(static_cast<size_t>(rows) * cols), hx(cols), hy(rows);
  for (size_t i = 0; i < ha.size(); ++i) ha[i] = static_cast<float>((i * 37 % 101) - 50) / 1000.0f;
  for (int k = 0; k < cols; ++k) hx[k] = static_cast<float>((k * 13 % 17) - 8) / 100.0f;

  float *da, *dx, *dy;
  CHECK(cudaMalloc(&da, ha.size() * sizeof(float)));
  CHECK(cudaMalloc(&dx, cols * sizeof(float)));
  CHECK(cudaMalloc(&dy, rows * sizeof(float)));
  CHECK(cudaMemcpy(da, ha.data(), ha.size() * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dx, hx.data(), cols * sizeof(float), cudaMemcpyHostToDevice));

  const int threads = 128, grid = (rows + threads - 1) / threads;
  int failed = 0;
  for (int which = 0; which < 2; ++which) {
    const char* name = which == 0 ? "library_matvec" : "library_rowsum";
    CHECK(cudaMemset(dy, 0xFF, rows * sizeof(float)));
    if (which == 0) library_matvec<<<grid, threads>>>(da, dx, dy, rows, cols);
    else library_rowsum<<<grid, threads>>>(da, dy, rows, cols);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(hy.data(), dy, rows * sizeof(float), cudaMemcpyDeviceToHost));
    bool ok = true;
    double checksum = 0.0;
    for (int r = 0; r < rows; ++r) {
      double ref = 0.0;
      for (int k = 0; k < cols; ++k) ref += which == 0 ? double(ha[size_t(r) * cols + k]) * hx[k] : double(ha[size_t(r) * cols + k]);
      if (which == 0) ref = poly4_host(ref);
      checksum += hy[r];
      if (ok && !(std::fabs(hy[r] - ref) <= 1e-3 * (1.0 + std::fabs(ref)))) {
        fprintf(stderr, "MISMATCH kernel=%s at y[%d]: got %.7g expected %.7g\n", name, r, hy[r], ref);
        ok = false;
      }
    }
    printf("kernel=%s config=rows=%d,cols=%d,block=%d,grid=%d check=%s checksum=%.6e\n", name, rows, cols, threads, grid,
           ok ? "PASS" : "FAIL", checksum);
    if (!ok) ++failed;
  }
  CHECK(cudaFree(da));
  CHECK(cudaFree(dx));
  CHECK(cudaFree(dy));
  return failed ? 1 : 0;
}
