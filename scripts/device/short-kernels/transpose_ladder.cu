// transpose_ladder.cu - a ladder of short kernels (3-20 µs on an H100/H200): copies and matrix
// transposes of an N x N float matrix (default 1024: 4 MB in, 4 MB out), from the plain copy that
// bounds them to the naive transpose that writes one column a warp. Issue 42 times it with
// `unroll-lens compare` and with `ncu --cache-control none --clock-control none` on the same
// binary (scripts/device/short-kernels.sh): speedups of 3-20 µs kernels, where a microsecond
// of timer bias decides the answer.
//
//   tl_copy           : out = in, coalesced rows, 4 rows per thread (the bandwidth bound)
//   tl_copy_tile      : out = in through a shared-memory tile (the tile's own cost)
//   tl_naive          : out[x][y] = in[y][x] straight from global memory (strided writes)
//   tl_gather         : the same, read strided and written by rows (strided reads)
//   tl_tile           : through a 32 x 32 shared tile, read by columns (32-way bank conflicts)
//   tl_tile_padded    : the same tile padded to 33 columns (no bank conflicts)
//   tl_tile_one       : padded tile, 32 x 32 threads a block, one element a thread
//   tl_tile_diagonal  : padded tile, blocks walked along diagonals (spreads DRAM partitions)
//
// Build:  nvcc -O3 -arch=sm_90 -o transpose_ladder transpose_ladder.cu
// Run:    ./transpose_ladder [--n N (multiple of 32)] [--reps R] [--only NAME]
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <algorithm>

#define CHECK(call)                                                                                  \
  do {                                                                                               \
    cudaError_t err_ = (call);                                                                       \
    if (err_ != cudaSuccess) {                                                                       \
      fprintf(stderr, "CUDA error at %s:%d: %s returned %s\n", __FILE__, __LINE__, #call,             \
              cudaGetErrorString(err_));                                                             \
      exit(EXIT_FAILURE);                                                                            \
    }                                                                                                \
  } while (0)

constexpr int TILE = 32;  // tile edge, elements
constexpr int ROWS = 8;   // thread rows of a 32 x 8 block: each thread moves TILE / ROWS elements

__global__ void tl_copy(const float *in, float *out, int n) {
  int x = blockIdx.x * TILE + threadIdx.x, y0 = blockIdx.y * TILE;
  for (int r = threadIdx.y; r < TILE; r += ROWS) out[(y0 + r) * n + x] = in[(y0 + r) * n + x];
}

__global__ void tl_copy_tile(const float *in, float *out, int n) {
  __shared__ float t[TILE][TILE];
  int x = blockIdx.x * TILE + threadIdx.x, y0 = blockIdx.y * TILE;
  for (int r = threadIdx.y; r < TILE; r += ROWS) t[r][threadIdx.x] = in[(y0 + r) * n + x];
  __syncthreads();
  for (int r = threadIdx.y; r < TILE; r += ROWS) out[(y0 + r) * n + x] = t[r][threadIdx.x];
}

__global__ void tl_naive(const float *in, float *out, int n) {
  int x = blockIdx.x * TILE + threadIdx.x, y0 = blockIdx.y * TILE;
  for (int r = threadIdx.y; r < TILE; r += ROWS) out[x * n + y0 + r] = in[(y0 + r) * n + x];
}

__global__ void tl_gather(const float *in, float *out, int n) {
  int x = blockIdx.x * TILE + threadIdx.x, y0 = blockIdx.y * TILE;
  for (int r = threadIdx.y; r < TILE; r += ROWS) out[(y0 + r) * n + x] = in[x * n + y0 + r];
}

__global__ void tl_tile(const float *in, float *out, int n) {
  __shared__ float t[TILE][TILE];
  int bx = blockIdx.x * TILE, by = blockIdx.y * TILE;
  for (int r = threadIdx.y; r < TILE; r += ROWS) t[r][threadIdx.x] = in[(by + r) * n + bx + threadIdx.x];
  __syncthreads();
  for (int r = threadIdx.y; r < TILE; r += ROWS) out[(bx + r) * n + by + threadIdx.x] = t[threadIdx.x][r];
}

__global__ void tl_tile_padded(const float *in, float *out, int n) {
  __shared__ float t[TILE][TILE + 1];
  int bx = blockIdx.x * TILE, by = blockIdx.y * TILE;
  for (int r = threadIdx.y; r < TILE; r += ROWS) t[r][threadIdx.x] = in[(by + r) * n + bx + threadIdx.x];
  __syncthreads();
  for (int r = threadIdx.y; r < TILE; r += ROWS) out[(bx + r) * n + by + threadIdx.x] = t[threadIdx.x][r];
}

__global__ void tl_tile_one(const float *in, float *out, int n) {
  __shared__ float t[TILE][TILE + 1];
  int bx = blockIdx.x * TILE, by = blockIdx.y * TILE;
  t[threadIdx.y][threadIdx.x] = in[(by + threadIdx.y) * n + bx + threadIdx.x];
  __syncthreads();
  out[(bx + threadIdx.y) * n + by + threadIdx.x] = t[threadIdx.x][threadIdx.y];
}

__global__ void tl_tile_diagonal(const float *in, float *out, int n) {
  __shared__ float t[TILE][TILE + 1];
  // block (i, j) of the grid takes tile ((i + j) mod tiles, i): neighbours in launch order sit on a diagonal
  int tiles = n / TILE;
  int tx = (blockIdx.x + blockIdx.y) % tiles, ty = blockIdx.x;
  int bx = tx * TILE, by = ty * TILE;
  for (int r = threadIdx.y; r < TILE; r += ROWS) t[r][threadIdx.x] = in[(by + r) * n + bx + threadIdx.x];
  __syncthreads();
  for (int r = threadIdx.y; r < TILE; r += ROWS) out[(bx + r) * n + by + threadIdx.x] = t[threadIdx.x][r];
}

struct Rung {
  const char *name;
  void (*kernel)(const float *, float *, int);
  bool transposes;
  int threadRows;  // blockDim.y
};

static void usage(const char *self) {
  printf("usage: %s [--n N (multiple of 32, default 1024)] [--reps R (default 20)] [--only NAME]\n", self);
}

int main(int argc, char **argv) {
  int n = 1024, reps = 20;
  const char *only = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--n") == 0 && i + 1 < argc) n = atoi(argv[++i]);
    else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = atoi(argv[++i]);
    else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
    else if (strcmp(argv[i], "--help") == 0) return usage(argv[0]), 0;
    else {
      fprintf(stderr, "unknown or incomplete option: %s\n", argv[i]);
      return usage(argv[0]), 2;
    }
  }
  if (n < TILE || n > 16384 || n % TILE || reps < 1) {
    fprintf(stderr, "--n must be a multiple of %d in %d..16384 and --reps at least 1\n", TILE, TILE);
    return 2;
  }
  const Rung rungs[] = {
      {"tl_copy", tl_copy, false, ROWS},          {"tl_copy_tile", tl_copy_tile, false, ROWS},
      {"tl_naive", tl_naive, true, ROWS},         {"tl_gather", tl_gather, true, ROWS},
      {"tl_tile", tl_tile, true, ROWS},           {"tl_tile_padded", tl_tile_padded, true, ROWS},
      {"tl_tile_one", tl_tile_one, true, TILE},   {"tl_tile_diagonal", tl_tile_diagonal, true, ROWS},
  };
  size_t count = (size_t)n * n, bytes = count * sizeof(float);
  std::vector<float> host(count), back(count);
  unsigned s = 12345u;  // fixed-seed LCG: non-zero, reproducible values
  for (auto &v : host) s = s * 1664525u + 1013904223u, v = 1.0f + (float)(s >> 8) / (float)(1u << 24);
  float *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, bytes));
  CHECK(cudaMalloc(&out, bytes));
  CHECK(cudaMemcpy(in, host.data(), bytes, cudaMemcpyHostToDevice));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  std::string failed;
  int ran = 0;
  for (const Rung &r : rungs) {
    if (only && strcmp(only, r.name) != 0) continue;
    ++ran;
    dim3 grid(n / TILE, n / TILE), block(TILE, r.threadRows);
    CHECK(cudaMemset(out, 0xFF, bytes));  // poison: NaN where nothing is written
    std::vector<float> ms;
    for (int i = 0; i < reps; ++i) {
      CHECK(cudaEventRecord(a));
      r.kernel<<<grid, block>>>(in, out, n);
      CHECK(cudaGetLastError());
      CHECK(cudaEventRecord(b));
      CHECK(cudaEventSynchronize(b));
      float t = 0;
      CHECK(cudaEventElapsedTime(&t, a, b));
      ms.push_back(t);
    }
    CHECK(cudaMemcpy(back.data(), out, bytes, cudaMemcpyDeviceToHost));
    size_t bad = 0;
    double sum = 0;
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) {
        float want = r.transposes ? host[(size_t)x * n + y] : host[(size_t)y * n + x];
        float got = back[(size_t)y * n + x];
        bad += !(got == want);
        sum += got;
      }
    std::sort(ms.begin(), ms.end());
    if (bad) {
      fprintf(stderr, "MISMATCH kernel=%s: %zu of %zu elements wrong\n", r.name, bad, count);
      failed += std::string(failed.empty() ? "" : ",") + r.name;
    }
    printf("kernel=%s config=n=%d,block=%dx%d time_ms=%.4f check=%s checksum=%.6e\n", r.name, n, TILE, r.threadRows,
           ms[ms.size() / 2], bad ? "FAIL" : "PASS", sum);
  }
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  if (!ran) {
    fprintf(stderr, "no kernel matches --only %s\n", only);
    return 2;
  }
  if (!failed.empty()) {
    fprintf(stderr, "FAILED kernels: %s\n", failed.c_str());
    return 1;
  }
  return 0;
}
