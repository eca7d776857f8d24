// Issue 21: every warning the scanner gives on library code must be true. Each fixture below is
// written in the style of a library loop that used to draw a false `full-unroll-runtime-trip` or
// `manual-unroll-no-remainder`, next to the true case of the same shape, which must still warn.
// What nvcc does with each shape was checked with nvcc 13.0 (-arch=sm_90, cuobjdump -sass: a
// backward branch left or not); the comments say so where the rule rests on it.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, kernel, lineOf, loopAt } from './helpers';
import { computeFindings } from '../../src/engine/parse/findings';

async function warnings(src: string): Promise<[string, number][]> {
  return computeFindings(await analyze(src))
    .filter(f => f.severity === 'warning')
    .map(f => [f.code, f.span.line]);
}

describe('full-unroll-runtime-trip only for provably run-time trip counts', () => {
  test('CuTe size of a register fragment minus one (`k < size<2>(tCrA) - 1`) is not evaluated, not run-time', async () => {
    const src = `template <class TiledMma, class SmemA>
__device__ void mma_tail(TiledMma const& tiled_mma, SmemA const& sA, float* out) {
  auto thr_mma = tiled_mma.get_thread_slice(threadIdx.x);
  Tensor tCrA = thr_mma.partition_fragment_A(sA(_, _, 0));
  #pragma unroll
  for (int k_block = 0; k_block < size<2>(tCrA) - 1; ++k_block) {
    out[k_block] = 0.f;
  }
}`;
    const a = await analyze(src);
    const loop = loopAt(kernel(a, 'mma_tail'), lineOf(src, 'for (int k_block'));
    assert.equal(loop.tripCount, 'dependent');
    assert.deepEqual(loop.tripDependsOn, []);
    assert.deepEqual(await warnings(src), []);
  });

  test('a functional cast of a CuTe size (`i < uint32_t(N)`, `N % Int<NumThreads>{}`) is not run-time', async () => {
    const src = `template <uint32_t NumThreads, class SrcT, class DstT>
__device__ void coop_copy(SrcT const& src, DstT& dst, uint32_t const& tid) {
  auto N = size(dst);
  auto R = N % Int<NumThreads>{};
  #pragma unroll
  for (uint32_t i = uint32_t(R); i < uint32_t(N); i += NumThreads) {
    dst[tid + i] = src[tid + i];
  }
}`;
    assert.deepEqual(await warnings(src), []);
  });

  test('a redeclaration in a sibling scope is not a write of the local', async () => {
    const src = `template <bool Swap, class T>
__device__ void reduce_rows(T const& rows, float* out) {
  if constexpr (Swap) {
    auto PerLane = size(rows) / size<0>(lane_layout);
    #pragma unroll
    for (int i = 0; i < PerLane; ++i) out[i] = 0.f;
  } else {
    auto PerLane = size(rows);
    out[PerLane] = 1.f;
  }
}`;
    assert.deepEqual(await warnings(src), []);
  });

  test('a counter among several declarators is the one the update writes', async () => {
    const src = `namespace globals { constexpr int NUM_EXPERTS = 8; }
__global__ void dispatch(int sm_idx, int* out) {
  #pragma unroll
  for (int task = sm_idx, cum = 0, expert = 0; expert < globals::NUM_EXPERTS; expert++) {
    out[expert] = task + cum;
  }
}`;
    const a = await analyze(src);
    assert.equal(loopAt(kernel(a, 'dispatch'), lineOf(src, 'for (int task')).tripCount, 8);
    assert.deepEqual(await warnings(src), []);
  });

  test('min of a compile-time constant and a run-time count: nvcc unrolls to the constant (CUTLASS prologue)', async () => {
    // nvcc 13.0 fully unrolls `for (k = c; k > 0; --k)` and `for (k = 0; k < c; ++k)` with
    // `int c = min(4, n)` into guarded copies: no backward branch.
    const src = `template <int K_PIPE_MMAS>
__device__ void prologue(float* acc, int k_tile_count) {
  int prologue_mma_count = min(K_PIPE_MMAS, k_tile_count);
  #pragma unroll
  for (int k_tile_prologue = prologue_mma_count - 1; k_tile_prologue > 0; --k_tile_prologue) acc[k_tile_prologue] = 0.f;
  #pragma unroll
  for (int stage = 0; stage < prologue_mma_count; ++stage) acc[stage] += 1.f;
}
__global__ void k(float* acc, int k_tile_count) {
  #pragma unroll
  for (int s = 0; s < k_tile_count; ++s) acc[s] = 0.f;
}`;
    assert.deepEqual(await warnings(src), [['full-unroll-runtime-trip', lineOf(src, 'for (int s = 0') - 1]]);
  });

  test('an unsigned counter from a thread index up to a constant is unrolled by its bound; a signed one is not', async () => {
    // nvcc 13.0: `unsigned i = t; i < 256; i += 32` became 8 guarded copies, `i < 1024` 32
    // copies, `i < 2048` stayed a loop; `int i = threadIdx.x; i < 256; i += 128` stayed a loop.
    const src = `template <int GROUP_THREADS, int total_calls>
__device__ void group_load(float* dst) {
  #pragma unroll
  for (uint32_t i = threadIdx.x % GROUP_THREADS; i < total_calls; i += GROUP_THREADS) dst[i] = 0.f;
}
__global__ void k(float* dst) {
  #pragma unroll
  for (unsigned i = threadIdx.x; i < 256; i += 32) dst[i] = 0.f;
  #pragma unroll
  for (unsigned i = threadIdx.x; i < 4096; i += 32) dst[i] = 1.f;
  #pragma unroll
  for (int bin = threadIdx.x; bin < 256; bin += 128) dst[bin] = 2.f;
}`;
    assert.deepEqual(await warnings(src), [
      ['full-unroll-runtime-trip', lineOf(src, 'i < 4096') - 1],
      ['full-unroll-runtime-trip', lineOf(src, 'int bin = threadIdx.x') - 1],
    ]);
  });

  test('a __device__ parameter that a call in the file passes a constant for is not run-time; a kernel parameter is', async () => {
    // nvcc 13.0 propagates a constant argument into the callee (inlined or not) and unrolls fully.
    const src = `constexpr int kStageCount = 4;
struct Gemv {
  __device__ void load_stages(int buffer, int num_stages, float* smem) {
    #pragma unroll
    for (int s = 0; s < num_stages; ++s) smem[buffer * 8 + s] = 0.f;
  }
  __device__ void run(float* smem) {
    for (int b = 0; b < 2; ++b) load_stages(b, kStageCount, smem);
  }
};
__device__ void scale(float* x, int n) {
  #pragma unroll
  for (int i = 0; i < n; ++i) x[i] *= 2.f;
}
__global__ void icm(float* x, int M) {
  scale(x, M);
  #pragma unroll
  for (int m = 0; m < M; m++) x[m] = 0.f;
}`;
    assert.deepEqual(await warnings(src), [
      ['full-unroll-runtime-trip', lineOf(src, 'for (int i = 0; i < n') - 1],
      ['full-unroll-runtime-trip', lineOf(src, 'for (int m = 0') - 1],
    ]);
  });

  test('run-time values still warn: data members, warpSize, a thread index start, a written local', async () => {
    const src = `template <int RADIX_DIGITS, int BLOCK_THREADS>
struct Histogram {
  int num_passes;
  int lane;
  __device__ void init(int* bins) {
    #pragma unroll
    for (int pass = 0; pass < num_passes; ++pass) bins[pass] = 0;
    #pragma unroll
    for (int bin = lane; bin < RADIX_DIGITS; bin += 32) bins[bin] = 0;
  }
};
__global__ void warp_sum(float* v) {
  float x = v[threadIdx.x];
  #pragma unroll
  for (int offset = warpSize / 2; offset > 0; offset /= 2) x += __shfl_xor_sync(0xffffffff, x, offset);
  int count = 0;
  while (v[count] > 0) ++count;
  #pragma unroll
  for (int i = 0; i < count; ++i) v[i] = x;
}`;
    assert.deepEqual(await warnings(src), [
      ['full-unroll-runtime-trip', lineOf(src, 'pass < num_passes') - 1],
      ['full-unroll-runtime-trip', lineOf(src, 'int bin = lane') - 1],
      ['full-unroll-runtime-trip', lineOf(src, 'warpSize / 2') - 1],
      ['full-unroll-runtime-trip', lineOf(src, 'i < count') - 1],
    ]);
  });

  test('an element of a constant table is not evaluated; an element of a parameter array is run-time', async () => {
    const src = `__constant__ int kSizes[4] = {1, 2, 4, 8};
__global__ void k(float* x, const int* sizes) {
  #pragma unroll
  for (int i = 0; i < kSizes[2]; ++i) x[i] = 0.f;
  #pragma unroll
  for (int i = 0; i < sizes[threadIdx.x]; ++i) x[i] = 1.f;
}`;
    assert.deepEqual(await warnings(src), [['full-unroll-runtime-trip', lineOf(src, 'sizes[threadIdx.x]') - 1]]);
  });
});

describe('manual-unroll-no-remainder only where a tail can be left', () => {
  test('a compile-time bound we cannot evaluate is no warning; a run-time bound is', async () => {
    const src = `template <class Config>
__device__ void row_max(float2 const* scores, float* out) {
  float lm0 = 0.f, lm1 = 0.f;
  #pragma unroll
  for (int j = 0; j < Config::Nb / 2; j += 2) {
    lm0 = fmaxf(lm0, scores[j + 0].x);
    lm1 = fmaxf(lm1, scores[j + 1].x);
  }
  out[0] = fmaxf(lm0, lm1);
}
__global__ void ref_gemm(float const* a, float* out, int K) {
  float acc = 0.f;
  for (int k = 0; k < K; k += 2) {
    acc += a[k + 0];
    acc += a[k + 1];
  }
  out[0] = acc;
}`;
    assert.deepEqual(await warnings(src), [['manual-unroll-no-remainder', lineOf(src, 'for (int k = 0; k < K')]]);
  });
});

describe('full-unroll-dependent-trip says only what the instantiations give', () => {
  test('an instantiation we cannot evaluate is counted, never printed as a trip count', async () => {
    const src = `template <int N>
__device__ void fill(float* x) {
  #pragma unroll
  for (int i = 0; i < N; ++i) x[i] = 0.f;
}
template <int M>
__global__ void k(float* x) {
  fill<4>(x);
  fill<M>(x);
}`;
    const f = computeFindings(await analyze(src)).find(x => x.code === 'full-unroll-dependent-trip');
    assert.ok(f);
    assert.doesNotMatch(f.message, /give[^.]*dependent/);
    assert.match(f.message, /give 4 \(and some whose arguments Unroll Lens could not evaluate\)\./);
  });
});

describe('full-unroll-runtime-trip quotes what makes the trip count run time', () => {
  test('a counter from threadIdx.x to a constant: the start is quoted with the condition', async () => {
    // ggml lightning-indexer.cu's shape: the bound is a constant, the start is not
    const src = `__global__ void k(float* x) {
  constexpr int N_Q_TILE = 64;
  const int tid = threadIdx.x;
  #pragma unroll
  for (int i_q = tid; i_q < N_Q_TILE; i_q += 32) x[i_q] = 0.f;
  #pragma unroll
  for (; tid < N_Q_TILE;) x[tid] = 1.f;
}`;
    const found = computeFindings(await analyze(src)).filter(x => x.code === 'full-unroll-runtime-trip');
    assert.equal(found.length, 2);
    assert.match(found[0].message, /this for loop \(`int i_q = tid; i_q < N_Q_TILE`\) is not a compile-time constant/);
    assert.match(found[0].message, /or leaves it a loop\.$/);
    // no initializer: the condition alone, as before
    assert.match(found[1].message, /this for loop \(`tid < N_Q_TILE`\) is not/);
  });
});
