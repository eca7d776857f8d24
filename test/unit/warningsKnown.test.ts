// A warning claims only what is known (issue 40): full unrolls nvcc completes are not "run time"
// (a lambda called with a constant, a range-for over a braced list, a default all callers use),
// a template argument decides a "depends on" note, and true run-time bounds still warn.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, kernel, lineOf } from './helpers';
import { computeFindings } from '../../src/engine/parse/findings';
import { CudaDocuments, TextChange } from '../../src/engine/parse/documents';

const SRC = `template <int SHAPE_K>
__global__ void gemm_tail(float * out, int n) {
  auto body = [&](int count) {
#pragma unroll
    for (int i = 0; i < count; ++i) out[i] += 1.f;
  };
  body(4);
  body(8);
#pragma unroll
  for (int w : {1, 2, 4, 8}) out[w] = w;
#pragma unroll
  for (int k = 0; k < SHAPE_K; ++k) out[k] = k;
}
template __global__ void gemm_tail<0>(float *, int);
template __global__ void gemm_tail<128>(float *, int);

__device__ void fill(float * out, int steps = 8) {
#pragma unroll
  for (int s = 0; s < steps; ++s) out[s] = s;
}
__global__ void use_fill(float * out) { fill(out); fill(out + 8); }

template <int GROUP_THREADS>
__global__ void topk(float * out, const Tensor query, int limit, int n) {
  const int rows = query.getSize(1) - limit;
#pragma unroll
  for (int i = 0; i < rows; ++i) out[i] = i;
#pragma unroll
  for (int i = threadIdx.x % GROUP_THREADS; i < 64; i += GROUP_THREADS) out[i] = i;
  auto step = [&](int count) {
#pragma unroll
    for (int j = 0; j < count; ++j) out[j] = j;
  };
  step(n);
}
template __global__ void topk<32>(float *, const Tensor, int, int);
`;

describe('warnings claim only what is known', () => {
  test('constant uses are not run-time; template arguments are "depends on"; run-time bounds warn', async () => {
    const a = await analyze(SRC, 'warn.cu');
    const g = kernel(a, 'gemm_tail');
    const trip = (line: number) => g.loops.find(l => l.line === line)?.tripCount;
    assert.equal(trip(lineOf(SRC, 'i < count')!), 'dependent');
    assert.equal(trip(lineOf(SRC, 'int w : {1, 2, 4, 8}')!), 4);
    const findings = computeFindings(a).map(f => [f.span.line, f.code]);
    assert.deepEqual(findings, [
      [lineOf(SRC, 'k < SHAPE_K')! - 1, 'full-unroll-dependent-trip'],
      [lineOf(SRC, 'i < rows')! - 1, 'full-unroll-runtime-trip'],
      [lineOf(SRC, 'threadIdx.x % GROUP_THREADS')! - 1, 'full-unroll-runtime-trip'],
      [lineOf(SRC, 'j < count')! - 1, 'full-unroll-runtime-trip'],
    ]);
    const dep = computeFindings(a).find(f => f.code === 'full-unroll-dependent-trip')!;
    assert.match(dep.message, /depends on `SHAPE_K`: the instantiations in this file give 0, 128/);
    // nvcc unrolls such a loop partially, or leaves it rolled when its step is a run-time value (blockDim)
    const rt = computeFindings(a).find(f => f.code === 'full-unroll-runtime-trip')!;
    assert.match(rt.message, /nvcc cannot fully unroll it; it unrolls it partially by its own choice, or leaves it a loop\./);
  });

  test('the second sample (ggml, apex): shadowed counters, enclosing unrolled counters, lambdas handed to a template, bit intrinsics', async () => {
    const src = `template <int n> struct unroll_n {
  template <typename F> __device__ void operator()(const F & f) const { f(n - 1); unroll_n<n - 1>{}(f); }
};
template <int P, int D, int CH>
__global__ void sample2(float * p, int m) {
  float x[P];
#pragma unroll
  for (int i = 0; i < P; ++i) {
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < 4; ++i) s += p[i];
    x[i] = s;
  }
#pragma unroll
  for (int c0 = 0; c0 < D; c0 += CH) {
    const int c1 = c0 + CH < D ? c0 + CH : D;
#pragma unroll
    for (int c = c0; c < c1; c += 8) p[c] += x[0];
  }
  auto body = [&](const int k) {
    const int stride = 32 >> k;
#pragma unroll
    for (int r = 0; r < 64; r += stride) p[r] = 0.f;
  };
  unroll_n<3>{}(body);
  const int top = 32 - __clz(P - 1);
#pragma unroll
  for (int step = 1 << (top - 1); step > 0; step /= 2) p[step] += 1.f;
  const int t = 32 - __clz(m);
#pragma unroll
  for (int step = 1 << t; step > 0; step /= 2) p[step] += 1.f;
}
template __global__ void sample2<5, 128, 48>(float *, int);
`;
    const a = await analyze(src, 'sample2.cu');
    const k = kernel(a, 'sample2');
    const trip = (needle: string) => k.loops.find(l => l.line === lineOf(src, needle))?.tripCount;
    assert.equal(trip('i < P; ++i'), 5, 'the inner loop declares its own i: no write to the outer one');
    assert.equal(trip('c = c0; c < c1'), 'dependent', 'c1 is constant in each copy of the c0 loop');
    assert.equal(trip('step = 1 << (top - 1)'), 3, '__clz of a template argument folds: top = 32 - __clz(4) = 3, steps 4, 2, 1');
    assert.equal(trip('step = 1 << t'), 'runtime', '__clz of a run-time value stays run time');
    const findings = computeFindings(a);
    assert.deepEqual(
      findings.filter(f => f.code === 'full-unroll-runtime-trip').map(f => f.span.line + 1),
      [lineOf(src, 'step = 1 << t')],
      'only the loop over a run-time bound warns (not the lambda handed to unroll_n<3>)',
    );
    const dep = findings.find(f => f.code === 'full-unroll-dependent-trip' && f.span.line + 1 === lineOf(src, 'c = c0; c < c1'))!;
    assert.match(
      dep.message,
      /depends on `c0`, the counter of the unrolled loop at line \d+, and `CH`, `D`: a constant in each copy of the unrolled loop around it/,
    );
  });

  test('"depends on" names what the constants in the header come from, and says when the instantiations it found could not be evaluated', async () => {
    const src = `template <int warp_size, int DV>
__device__ __forceinline__ void iter(const float * s, float * d) {
  constexpr int DVp = (DV + 2*warp_size - 1) & ~(2*warp_size - 1);
#pragma unroll
  for (int i0 = 0; i0 < DVp/2; i0 += warp_size) d[i0] = s[i0];
}
template <int DV>
__global__ void tile(const float * s, float * d) {
  constexpr int warp_size = 32;
  iter<warp_size, DV>(s, d);
#pragma unroll
  for (int i = 0; i < DV; ++i) {
#pragma unroll
    for (int i = 0; i < 4; ++i) d[i] += 1.f;
  }
}
`;
    const a = await analyze(src, 'dep.cu');
    const inner = kernel(a, 'iter').loops[0];
    assert.deepEqual(inner.tripDependsOn, ['warp_size', 'DV']);
    assert.equal(inner.unevaluatedInstantiations, 1);
    assert.deepEqual(inner.unevaluatedParameters, ['DV'], "warp_size is tile's local constexpr 32 where iter<warp_size, DV> is written");
    const f = computeFindings(a).find(x => x.span.line + 1 === lineOf(src, 'i0 < DVp/2'))!;
    assert.match(f.message, /depends on `warp_size`, `DV`: Unroll Lens could not evaluate `DV` in the instantiations in this file/);
    const t = kernel(a, 'tile');
    assert.equal(t.loops.find(l => l.line === lineOf(src, 'int i = 0; i < 4'))?.tripCount, 4, 'its own i, not the outer counter');
  });

  test('a parameter re-assigned before the loop takes the value written: "depends on SHAPE_K", run time only where it is 0', async () => {
    const src = `template <int SHAPE_K, int BLOCK_K>
__global__ void gemm(float* out, int shape_k) {
  shape_k = SHAPE_K != 0 ? SHAPE_K : shape_k;
  const int num_k_blocks = (shape_k + BLOCK_K - 1) / BLOCK_K;
#pragma unroll
  for (int k = 0; k < num_k_blocks; ++k) out[k] = 0.f;
}
template __global__ void gemm<0, 64>(float*, int);
template __global__ void gemm<256, 64>(float*, int);
__global__ void guarded(float* out, int n) {
  if (n > 64) n = 64;
#pragma unroll
  for (int k = 0; k < n; ++k) out[k] = 0.f;
}
`;
    const a = await analyze(src, 'shapek.cu');
    const loop = kernel(a, 'gemm').loops[0];
    assert.equal(loop.tripCount, 'dependent');
    assert.deepEqual(
      loop.tripCountByInstantiation?.map(b => b.tripCount),
      ['runtime', 4],
    );
    assert.deepEqual(loop.tripDependsOn, ['BLOCK_K', 'SHAPE_K']);
    // a write under a condition is not followed: the caller's value, run time, as before
    assert.equal(kernel(a, 'guarded').loops[0].tripCount, 'runtime');
    assert.deepEqual(
      computeFindings(a).map(f => f.code),
      ['full-unroll-dependent-trip', 'full-unroll-runtime-trip'],
    );
  });

  test('an update through a lambda or function that takes the counter by reference: its constant step is read, anything else is not evaluated', async () => {
    const src = `template <unsigned SHAPE_K, unsigned BLOCK_K>
__global__ void pipe(float* out, unsigned shape_k, unsigned n) {
  shape_k = SHAPE_K != 0 ? SHAPE_K : shape_k;
  const unsigned num_k_blocks = (shape_k + BLOCK_K - 1) / BLOCK_K;
  unsigned stage = 0, phase = 0;
  auto advance = [&](unsigned& k) {
    ++k;
    stage = stage == 3 ? 0 : stage + 1;
    phase ^= stage == 0;
  };
  auto back = [&](int& k) { k -= 2; };
  auto maybe = [&](unsigned& k) { if (stage) ++k; };
  auto twice = [&](unsigned& k) { ++k; k++; };
#pragma unroll
  for (unsigned k = 0; k < num_k_blocks; advance(k)) out[k] = stage + phase;
#pragma unroll
  for (int k = 16; k > 0; back(k)) out[k] = 0.f;
#pragma unroll
  for (unsigned k = 0; k < 16; maybe(k)) out[k] = 0.f;
#pragma unroll
  for (unsigned k = 0; k < 16; twice(k)) out[k] = 0.f;
#pragma unroll
  for (unsigned k = 0; k < 16; k = next(k)) out[k] = 0.f;
#pragma unroll
  for (unsigned k = 0; k < n; opaque(k)) out[k] = 0.f;
}
template __global__ void pipe<0, 128>(float*, unsigned, unsigned);
template __global__ void pipe<1024, 128>(float*, unsigned, unsigned);

__device__ __forceinline__ void step2(unsigned& k) { k += 2; }
__global__ void by_function(float* out) {
#pragma unroll
  for (unsigned k = 0; k < 16; step2(k)) out[k] = 0.f;
}
`;
    const a = await analyze(src, 'pipe.cu');
    const k = kernel(a, 'pipe');
    const loop = (needle: string) => k.loops.find(l => l.line === lineOf(src, needle))!;
    const pipeline = loop('advance(k)) out');
    assert.equal(pipeline.tripCount, 'dependent');
    assert.deepEqual(
      pipeline.tripCountByInstantiation?.map(b => b.tripCount),
      ['runtime', 8],
      'run time where SHAPE_K is 0, 1024 / 128 = 8 trips where it is 1024',
    );
    assert.equal(pipeline.inductionVariable, 'k');
    assert.equal(loop('back(k)) out').tripCount, 8, 'a decrement by 2 from 16');
    assert.equal(loop('maybe(k)) out').tripCount, 'dependent', 'a conditional increment is not read: not evaluated');
    assert.equal(loop('twice(k)) out').tripCount, 'dependent', 'two writes are not read: not evaluated');
    assert.equal(loop('k = next(k)').tripCount, 'dependent', 'an update it cannot read, to a constant bound: not evaluated');
    assert.equal(loop('opaque(k)').tripCount, 'runtime', 'a run-time bound is run time whatever the update');
    assert.equal(kernel(a, 'by_function').loops[0].tripCount, 8, 'a __device__ function that adds 2: 16 / 2 trips');
    const findings = computeFindings(a).map(f => [f.span.line + 1, f.code]);
    assert.deepEqual(findings, [
      [lineOf(src, 'advance(k)) out'), 'full-unroll-dependent-trip'],
      [lineOf(src, 'opaque(k)'), 'full-unroll-runtime-trip'],
    ]);
    assert.match(
      computeFindings(a)[0].message,
      /depends on `BLOCK_K`, `SHAPE_K`: the instantiations in this file give 8, a run-time count/,
    );
  });

  test('DeepGEMM: the write of the parameter under the `#if` around the body is seen, and the lambda the update calls names nothing', async () => {
    const src = `template <unsigned SHAPE_K, unsigned BLOCK_K, unsigned kNumStages>
__global__ void pipe(float* out, unsigned shape_k) {
#if defined(__CUDA_ARCH__)
  shape_k = SHAPE_K != 0 ? SHAPE_K : shape_k;
  const unsigned num_k_blocks = math::ceil_div(shape_k, BLOCK_K);
  unsigned stage = 0;
  auto advance = [&](unsigned& k) { ++k; stage = stage == kNumStages - 1 ? 0 : stage + 1; };
#pragma unroll
  for (unsigned k = 0; k < num_k_blocks; advance(k)) out[k] = stage;
#endif
}
`;
    const a = await analyze(src, 'deepgemm.cu');
    const loop = kernel(a, 'pipe').loops[0];
    assert.equal(loop.tripCount, 'dependent');
    assert.deepEqual(loop.tripDependsOn, ['BLOCK_K', 'SHAPE_K']);
    assert.deepEqual(
      computeFindings(a).map(f => f.code),
      ['full-unroll-dependent-trip'],
    );
  });

  test('an unsigned counter from a run-time start to a run-time bound with a compile-time ceiling is not "run time" (nvcc 13.0 unrolls it to guarded copies)', async () => {
    // Checked with nvcc 13.0, sm_90: lay<128, 8, 64> (ceiling 128 * 8 / 4 = 256, step 64) became 5
    // guarded copies with no back edge, sfb<512, …> 2; sfb<0, …> (run-time shape) stayed a loop.
    const src = `template <unsigned BLOCK_MN, unsigned SF_K, unsigned kNumThreads>
__global__ void lay(float* out, unsigned mn) {
  const auto in_block_mn = min(BLOCK_MN, mn - blockIdx.x * BLOCK_MN);
  const auto num_uint4 = in_block_mn * SF_K / 4;
#pragma unroll
  for (uint32_t i = threadIdx.x; i < in_block_mn * SF_K; i += kNumThreads) out[i] = 0.f;
#pragma unroll
  for (uint32_t i = threadIdx.x; i < num_uint4; i += kNumThreads) out[i] = 0.f;
#pragma unroll
  for (int i = threadIdx.x; i < in_block_mn * SF_K; i += kNumThreads) out[i] = 0.f;
#pragma unroll
  for (uint32_t i = threadIdx.x; i < mn * SF_K; i += kNumThreads) out[i] = 0.f;
#pragma unroll
  for (uint32_t i = threadIdx.x; i < min(1024u, mn); ++i) out[i] = 0.f;
}
__global__ void signed_ceiling(float* out, int n, int m) {
#pragma unroll
  for (int k = 0; k < min(4, n) * 2; ++k) out[k] = 0.f;
#pragma unroll
  for (int k = 0; k < (n > 3 ? 4 : 8); ++k) out[k] = 0.f;
  const int c = n > 3 ? min(m, 3) : 5;
#pragma unroll
  for (int k = 0; k < c; ++k) out[k] = 0.f;
}
template <unsigned SHAPE_K, unsigned BLOCK_K, unsigned kNumMathThreads>
__global__ void sfb(float* out, unsigned shape_k, unsigned n_block) {
  shape_k = SHAPE_K != 0 ? SHAPE_K : shape_k;
  const unsigned scales = (shape_k + BLOCK_K - 1) / BLOCK_K;
  unsigned former = n_block % 8, full = n_block / 8;
  unsigned num_sfb = scales * (former >= full ? 1 : 2);
#pragma unroll
  for (uint32_t i = threadIdx.x - 32; i < num_sfb; i += kNumMathThreads - 32) out[i] = 0.f;
}
`;
    const a = await analyze(src, 'layout.cu');
    const k = kernel(a, 'lay');
    const trip = (n: number) => k.loops[n].tripCount;
    assert.equal(trip(0), 'dependent', 'i < min(BLOCK_MN, …) * SF_K');
    assert.equal(trip(1), 'dependent', 'i < min(BLOCK_MN, …) * SF_K / 4');
    assert.equal(trip(2), 'runtime', 'a signed counter from threadIdx.x stays a loop');
    assert.equal(trip(3), 'runtime', 'no ceiling on mn * SF_K');
    assert.equal(trip(4), 'runtime', 'a ceiling of 1024 trips is too many to unroll');
    const signed = kernel(a, 'signed_ceiling').loops.map(l => l.tripCount);
    assert.deepEqual(
      signed,
      ['runtime', 'dependent', 'runtime'],
      'from 0, signed: min(4, n) * 2 and c ? min(m, 3) : 5 stayed loops, c ? 4 : 8 was unrolled',
    );
    const sfb = kernel(a, 'sfb').loops[0];
    assert.equal(sfb.tripCount, 'dependent', 'scales * (c ? 1 : 2): no more than twice the scales');
    assert.deepEqual(sfb.tripDependsOn, ['kNumMathThreads', 'BLOCK_K', 'SHAPE_K'], 'SHAPE_K, three constants away from the header');
    assert.deepEqual(
      computeFindings(a)
        .filter(f => f.code === 'full-unroll-runtime-trip')
        .map(f => f.span.line + 1),
      [
        lineOf(src, 'int i = threadIdx.x; i < in_block_mn'),
        lineOf(src, 'i < mn * SF_K'),
        lineOf(src, 'min(1024u, mn)'),
        lineOf(src, 'k < min(4, n) * 2'),
        lineOf(src, 'k < c;'),
      ],
    );
  });

  test("an instantiation written inside another template takes that template's instantiations (ggml mmq.cuh: launch<8> -> mmq<J> -> tile<J>)", async () => {
    const src = `template <int J> __device__ void tile(float* d) {
#pragma unroll
  for (int j = 0; j < J; j += 4) d[j] = 0;
}
template <int J> __global__ void mmq_like(float* d) {
#pragma unroll
  for (int j = 0; j < J; j += 8) d[j] = 0;
  tile<J>(d);
}
template <int J> void launch(float* d) { mmq_like<J><<<1, 32>>>(d); }
void run(float* d, int n) {
  if (n) launch<8>(d); else launch<16>(d);
}
template <int N, int M> __device__ void two(float* d) {
#pragma unroll
  for (int j = 0; j < N * M; ++j) d[j] = 0;
}
template <int N> __device__ void one(float* d) { two<N, 4>(d); }
template <int N> __device__ void never(float* d) { two<N, N>(d); }
__global__ void entry(float* d) { one<2>(d); }
template <typename T, int ne> __device__ void deq(T* d) {
#pragma unroll
  for (int i = 0; i < ne; ++i) d[i] = 0;
}
template <typename T, int ne> __global__ void copy(float* d) { d[0] = 0; }
void host(float* d) { copy<deq<float, 32>, 32><<<1, 1>>>(d); }
template <int ncols> __device__ void open_only(float* d) {
#pragma unroll
  for (int i = 0; i < ncols; ++i) d[i] = 0;
}
template <int ncols> __global__ void caller(float* d) { open_only<ncols>(d); }
`;
    const a = await analyze(src, 'chain.cu');
    const trips = (name: string) => kernel(a, name).loops[0].tripCountByInstantiation?.map(b => b.tripCount);
    assert.deepEqual(trips('tile'), [2, 4], 'J = 8, 16 through mmq_like<J> and launch<J>');
    assert.deepEqual(trips('mmq_like'), [1, 2]);
    assert.deepEqual(trips('two'), [8, 'dependent'], 'two<2, 4> through one<2>; never<N> has no instantiation');
    assert.equal(kernel(a, 'deq').loops[0].tripCount, 32, 'a function template handed to another as a template argument');
    const open = kernel(a, 'open_only').loops[0];
    assert.equal(open.unevaluatedInstantiations, 1);
    const messages = computeFindings(a).map(f => f.message);
    assert.ok(messages.some(m => /depends on `J`: the instantiations in this file give 2, 4\./.test(m)));
    assert.ok(
      messages.some(m => /depends on `ncols`: Unroll Lens could not evaluate `ncols` in the instantiations in this file\./.test(m)),
    );
    assert.ok(!messages.some(m => /no instantiation visible/.test(m)), 'each of these functions is instantiated in the file');
  });

  test('a template whose name the file uses only where no instantiation is read (a macro) is not said to have none', async () => {
    const src = `template <int N> __global__ void by_macro(float* d) {
#pragma unroll
  for (int i = 0; i < N; ++i) d[i] = 0;
}
#define CASE(kernel, n) kernel<n><<<1, 32>>>(d)
void host(float* d) { CASE(by_macro, 64); }
template <typename T> __device__ T sum(T x) {
#pragma unroll
  for (int o = 0; o < sizeof(T); ++o) x += x;
  return x;
}
__device__ float2 sum(float2 a) { return a; } // an overload and a comment naming sum are no use
static_assert(true, "sum");
`;
    const a = await analyze(src, 'macro.cu');
    const messages = computeFindings(a).map(f => [f.kernel ?? '', f.message]);
    assert.match(
      messages.find(m => m[0] === 'by_macro')![1],
      /depends on `N`: its name is used elsewhere in this file \(a macro, a function pointer\) where no instantiation was read/,
    );
    assert.match(messages.find(m => m[0] === 'sum')![1], /depends on `T`, with no instantiation visible in this file\./);
  });

  test('an edit to an instantiation further out in a chain, or to a use the reader does not read, equals a fresh analysis', async () => {
    const src = `template <int J> __device__ void tile(float* d) {
#pragma unroll
  for (int j = 0; j < J; j += 4) d[j] = 0;
}
template <int J> void launch(float* d) { tile_kernel<J><<<1, 32>>>(d); }
template <int J> __global__ void tile_kernel(float* d) { tile<J>(d); }
void run(float* d) { launch<8>(d); }
template <int N> __global__ void by_macro(float* d) {
#pragma unroll
  for (int i = 0; i < N; ++i) d[i] = 0;
}
#define CASE(kernel, n) kernel<n><<<1, 32>>>(d)
void host(float* d) { CASE(by_macro, 64); }
`;
    for (const [from, to] of [
      ['launch<8>', 'launch<32>'],
      ['CASE(by_macro, 64)', 'CASE(other, 64)'],
    ]) {
      for (const wholeFile of [false, true]) {
        const docs = await CudaDocuments.create();
        docs.open('u', src, 'u');
        docs.analysis('u');
        const changes: TextChange[] = [{ start: src.indexOf(from), length: from.length, text: to }];
        if (wholeFile) changes.push({ start: 0, length: 0, text: '' });
        docs.update('u', changes);
        assert.deepEqual(docs.analysis('u'), docs.analyzeOnce(docs.text('u')!, 'u'), `${from} → ${to}`);
      }
    }
  });
});
