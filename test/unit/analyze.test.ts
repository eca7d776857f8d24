import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, kernel, loopAt, lineOf } from './helpers';
import { parsePragmaText } from '../../src/engine/parse/pragmas';
import { computeFindings } from '../../src/engine/parse/findings';

describe('kernels and device functions', () => {
  test('finds __global__, __device__, templates, launch bounds; skips host code', async () => {
    const src = `#include <cstdio>
template <int BLOCK, typename T>
__global__ void __launch_bounds__(256, 2) tiled(T* a, int n) { for (int i = 0; i < n; ++i) a[i] = 0; }
static __device__ __forceinline__ float helper(float x) { return x * 2; }
__host__ __device__ int both(int x) { for (int i = 0; i < 4; ++i) x += i; return x; }
namespace ns { __global__ void inNamespace() {} }
extern "C" __global__ void cLinkage() {}
void hostOnly(int n) { for (int i = 0; i < n; ++i) {} }
int main() { for (int r = 0; r < 3; ++r) {} }
`;
    const a = await analyze(src);
    assert.deepEqual(
      a.kernels.map(k => [k.name, k.qualifier, k.line]),
      [
        ['tiled', 'global', 3],
        ['helper', 'device', 4],
        ['both', 'device', 5],
        ['inNamespace', 'global', 6],
        ['cLinkage', 'global', 7],
      ],
    );
    const t = kernel(a, 'tiled');
    assert.deepEqual(t.templateParameters, ['BLOCK', 'T']);
    assert.deepEqual(t.launchBounds, ['256', '2']);
    assert.equal(a.kernels.flatMap(k => k.loops).length, 2, 'host loops are not reported');
    assert.equal(a.hasSyntaxErrors, false);
  });

  test('qualified out-of-class definitions use the source name', async () => {
    const a = await analyze('struct S { __device__ void f(); };\n__device__ void S::f() { while (true) {} }\n');
    assert.equal(a.kernels[0].name, 'f');
    assert.equal(a.kernels[0].loops[0].kind, 'while');
  });
});

describe('loops and nesting', () => {
  test('for/while/do with depth, parent and 1-based keyword lines', async () => {
    const src = `__global__ void k(float* a, int n) {
  for (int i = 0; i < n; ++i) {
    int j = 0;
    while (j < n) {
      do { a[j]++; } while (a[j] < 0);
      ++j;
    }
  }
  for (int x : {1, 2}) {}
}`;
    const k = kernel(await analyze(src), 'k');
    assert.deepEqual(
      k.loops.map(l => [l.line, l.kind, l.depth, l.parentLine]),
      [
        [2, 'for', 0, null],
        [4, 'while', 1, 2],
        [5, 'do', 2, 4],
        [9, 'for', 0, null],
      ],
    );
  });

  test('loops inside if/else, switch, lambdas and #if blocks are found', async () => {
    const src = `__global__ void k(int* a, int n) {
  if (n > 0) { for (int i = 0; i < 4; ++i) a[i] = 0; } else for (int i = 0; i < 2; ++i) a[i] = 1;
  switch (n) { case 1: for (int i = 0; i < 8; ++i) a[i] = 2; break; }
  auto f = [&](int m) { for (int i = 0; i < m; ++i) a[i] = 3; };
#if 1
  for (int i = 0; i < 16; ++i) a[i] = 4;
#endif
}`;
    const k = kernel(await analyze(src), 'k');
    assert.deepEqual(
      k.loops.map(l => [l.line, l.tripCount]),
      [
        [2, 4],
        [2, 2],
        [3, 8],
        [4, 'runtime'],
        [6, 16],
      ],
    );
  });
});

describe('unroll pragmas', () => {
  test('pragma text forms', () => {
    assert.deepEqual(parsePragmaText('unroll'), { kind: 'full', factor: null, text: 'unroll' });
    assert.deepEqual(parsePragmaText('unroll 4'), { kind: 'count', factor: 4, text: 'unroll 4' });
    assert.deepEqual(parsePragmaText('unroll 1'), { kind: 'disable', factor: 1, text: 'unroll 1' });
    assert.deepEqual(parsePragmaText('unroll 0x10'), { kind: 'count', factor: 16, text: 'unroll 0x10' });
    assert.equal(parsePragmaText('unroll (B/2)')?.kind, 'expr');
    assert.equal(parsePragmaText('unroll TILE')?.kind, 'expr');
    assert.equal(parsePragmaText('unroll // keep it')?.kind, 'full');
    assert.equal(parsePragmaText('once'), null);
    assert.equal(parsePragmaText('unrolled'), null);
  });

  test('every form nvcc accepts attaches to the following loop, through comments and blank lines', async () => {
    const src = `#define TILE 8
template <int B> __global__ void k(float* a, int n) {
  #pragma unroll
  for (int i = 0; i < 16; ++i) a[i] = 0;
#pragma unroll 4
  for (int i = 0; i < n; ++i) a[i] = 1;
  #pragma unroll 1
  for (int i = 0; i < n; ++i) a[i] = 2;
  #pragma unroll (B / 2)
  for (int i = 0; i < B; ++i) a[i] = 3;
  #pragma unroll TILE

  // a comment between pragma and loop
  /* and another */
  for (int i = 0; i < n; ++i) a[i] = 4;
  _Pragma("unroll 2")
  for (int i = 0; i < n; ++i) a[i] = 5;
  _Pragma("unroll") for (int i = 0; i < 4; ++i) a[i] = 6;
  #pragma unroll 4
  while (n--) a[n] = 7;
}
void launch() { k<64><<<1, 1>>>(nullptr, 0); }`;
    const a = await analyze(src);
    const k = kernel(a, 'k');
    const p = (needle: string, nth = 1) => loopAt(k, lineOf(src, needle, nth)).pragma;
    assert.deepEqual(p('a[i] = 0'), { ...p('a[i] = 0')!, kind: 'full', factor: null, text: 'unroll', line: 3, form: 'directive' });
    assert.equal(p('a[i] = 1')?.kind, 'count');
    assert.equal(p('a[i] = 1')?.factor, 4);
    assert.equal(p('a[i] = 2')?.kind, 'disable');
    assert.deepEqual([p('a[i] = 3')?.kind, p('a[i] = 3')?.factor, p('a[i] = 3')?.text], ['expr', 32, 'unroll (B / 2)']);
    assert.deepEqual([p('a[i] = 4')?.kind, p('a[i] = 4')?.factor, p('a[i] = 4')?.line], ['expr', 8, 11]);
    assert.deepEqual([p('a[i] = 5')?.kind, p('a[i] = 5')?.factor, p('a[i] = 5')?.form], ['count', 2, 'operator']);
    assert.deepEqual([p('a[i] = 6')?.kind, p('a[i] = 6')?.form], ['full', 'operator']);
    assert.equal(p('a[n] = 7')?.factor, 4);
    assert.equal(a.strayPragmas.length, 0);
    assert.equal(a.hasSyntaxErrors, false, '_Pragma without semicolon is valid CUDA');
  });

  test('a pragma followed by a statement or at the end of a block is stray', async () => {
    const src = `__global__ void k(float* a, int n) {
  #pragma unroll 4
  a[0] = 1;
  for (int i = 0; i < n; ++i) a[i] = 0;
  #pragma unroll
}`;
    const a = await analyze(src);
    assert.deepEqual(
      a.strayPragmas.map(s => s.pragma.line),
      [2, 5],
    );
    assert.equal(kernel(a, 'k').loops[0].pragma, null);
  });

  test('pragma on an unbraced inner loop keeps the nesting', async () => {
    const src = `__global__ void k(float* a) {
  for (int i = 0; i < 4; ++i)
  #pragma unroll
    for (int j = 0; j < 8; ++j) a[i * 8 + j] = 0;
}`;
    const k = kernel(await analyze(src), 'k');
    assert.deepEqual(
      k.loops.map(l => [l.line, l.depth, l.parentLine, l.pragma?.kind ?? null]),
      [
        [2, 0, null, null],
        [4, 1, 2, 'full'],
      ],
    );
  });

  test('unrelated pragmas between unroll pragma and loop do not detach it', async () => {
    const src = `__global__ void k(float* a) {
  #pragma unroll 2
  #pragma nv_diag_suppress 177
  for (int i = 0; i < 4; ++i) a[i] = 0;
}`;
    const k = kernel(await analyze(src), 'k');
    assert.equal(k.loops[0].pragma?.factor, 2);
  });
});

describe('trip counts', () => {
  const trips = async (body: string, prelude = '') => {
    const a = await analyze(`${prelude}\n__global__ void k(float* a, int n) {\n${body}\n}`);
    return kernel(a, 'k').loops.map(l => l.tripCount);
  };

  test('literal bounds, all comparison and update forms', async () => {
    assert.deepEqual(await trips('for (int i = 0; i < 16; ++i) {}'), [16]);
    assert.deepEqual(await trips('for (int i = 0; i <= 16; i++) {}'), [17]);
    assert.deepEqual(await trips('for (int i = 16; i > 0; --i) {}'), [16]);
    assert.deepEqual(await trips('for (int i = 0; i < 10; i += 3) {}'), [4]);
    assert.deepEqual(await trips('for (int i = 0; 10 > i; i = i + 2) {}'), [5]);
    assert.deepEqual(await trips('for (int s = 128; s > 0; s >>= 1) {}'), [8]);
    assert.deepEqual(await trips('for (int s = 1; s < 1024; s *= 2) {}'), [10]);
    assert.deepEqual(await trips('for (int s = 1; s < 32; s <<= 1) {}'), [5]);
    assert.deepEqual(await trips('for (int i = 0; i != 8; ++i) {}'), [8]);
    assert.deepEqual(await trips('for (int i = 5; i < 5; ++i) {}'), [0]);
    assert.deepEqual(await trips('int i; for (i = 2; i < 6; ++i) {}'), [4]);
  });

  test('constexpr, const, #define, enum, sizeof and static members', async () => {
    const prelude = `#define N 32
#define M (N * 2)
constexpr int kTile = 4;
enum { WARP = 32, HALF = WARP / 2 };
struct Cfg { static constexpr int Steps = 3; };`;
    assert.deepEqual(await trips('for (int i = 0; i < N; ++i) {}', prelude), [32]);
    assert.deepEqual(await trips('for (int i = 0; i < M; ++i) {}', prelude), [64]);
    assert.deepEqual(await trips('for (int i = 0; i < kTile * 2; ++i) {}', prelude), [8]);
    assert.deepEqual(await trips('for (int i = 0; i < HALF; ++i) {}', prelude), [16]);
    assert.deepEqual(await trips('for (int i = 0; i < sizeof(float4) / sizeof(float); ++i) {}', prelude), [4]);
    assert.deepEqual(await trips('for (int i = 0; i < Cfg::Steps; ++i) {}', prelude), [3]);
    assert.deepEqual(await trips('constexpr int L = 6; const int S = 2;\nfor (int i = 0; i < L; i += S) {}'), [3]);
  });

  test('runtime: kernel arguments, threadIdx, non-canonical loops, body writes the counter', async () => {
    assert.deepEqual(await trips('for (int i = 0; i < n; ++i) {}'), ['runtime']);
    assert.deepEqual(await trips('for (int i = threadIdx.x; i < 256; i += blockDim.x) {}'), ['runtime']);
    assert.deepEqual(await trips('for (int i = 0; i < 8; ++i) { if (a[i] > 0) i++; }'), ['runtime']);
    assert.deepEqual(await trips('for (;;) {}'), ['runtime']);
    // A non-const local that nothing writes is folded by nvcc (checked: `int k = 7;` before
    // `#pragma unroll` gives 7 stores and no back edge on sm_90); one that is written is run time.
    assert.deepEqual(await trips('int k = 4; for (int i = 0; i < k; ++i) {}'), [4], 'an unmodified local folds');
    assert.deepEqual(await trips('int k = 4; k += n; for (int i = 0; i < k; ++i) {}'), ['runtime'], 'a written local is a runtime value');
    assert.deepEqual(await trips('while (n > 0) { n--; }'), ['runtime']);
    assert.deepEqual(await trips('do { } while (0);'), [1]);
  });

  test('template parameters: resolved from visible instantiations, otherwise dependent', async () => {
    const src = `template <int B, int U = 2> __global__ void k(float* a) {
  for (int i = 0; i < B; ++i) a[i] = 0;
  for (int i = 0; i < U; ++i) a[i] = 1;
  for (int i = 0; i < B / U; ++i) a[i] = 2;
}
template <int B> __global__ void unseen(float* a) { for (int i = 0; i < B; ++i) a[i] = 0; }
template <int B> __global__ void many(float* a) { for (int i = 0; i < B; ++i) a[i] = 0; for (int i = 0; i < 4; ++i) a[i] = 1; }
template __global__ void many<8>(float*);
void launch(float* p) {
  k<128><<<1, 1>>>(p);
  many<16><<<1, 1>>>(p);
}`;
    const a = await analyze(src);
    assert.deepEqual(
      kernel(a, 'k').loops.map(l => l.tripCount),
      [128, 2, 64],
    );
    assert.deepEqual(kernel(a, 'k').instantiations, [{ B: 128, U: 2 }]);
    assert.deepEqual(
      kernel(a, 'unseen').loops.map(l => l.tripCount),
      ['dependent'],
    );
    assert.deepEqual(
      kernel(a, 'many').loops.map(l => l.tripCount),
      ['dependent', 4],
      'two instantiations disagree',
    );
    assert.equal(kernel(a, 'many').instantiations.length, 2);
  });

  test('a recursive self-instantiation inside the template is not a visible instantiation', async () => {
    const a = await analyze('template <int B> __device__ int f(int x) { for (int i = 0; i < B; ++i) x += f<B / 2>(x); return x; }');
    assert.equal(a.kernels[0].loops[0].tripCount, 'dependent');
  });
});

describe('broken and half-typed code never throws', () => {
  const broken = [
    '',
    '__global__',
    '__global__ void k(',
    '__global__ void k(float* a, int n) { for (int i = 0; i < n',
    '__global__ void k(float* a, int n) {\n#pragma unroll\n for (int i = 0; i <',
    '__global__ void k() { #pragma unroll 4 }',
    '__global__ void k() { for (;;) { while ( } }',
    '}}}} __device__ int f() { do { } while (',
    '_Pragma("unroll',
    'template <int B __global__ void k() { for (int i = 0; i < B; ++i) {} }',
    '__global__ void k(int n) { for (int i = 0; i < 0x; i += ) {} }',
    '#define N (\n__global__ void k() { for (int i = 0; i < N; ++i) {} }',
    '__global__ void k() { for (int s = 1; s < 100; s *= 1) {} for (int s = 9; s > 0; s /= 1) {} }',
    '\u0000\u0001 __global__ void ☃() { for (int i = 0; i < 4; ++i) {} }',
  ];
  for (const src of broken) {
    test(JSON.stringify(src).slice(0, 60), async () => {
      const a = await analyze(src);
      assert.ok(Array.isArray(a.kernels));
    });
  }

  test('analysis of a half-typed loop still reports what it can', async () => {
    const a = await analyze('__global__ void k(float* a, int n) {\n#pragma unroll 4\n  for (int i = 0; i < n; ++i) {\n    a[i] = \n}\n');
    const k = kernel(a, 'k');
    assert.equal(a.hasSyntaxErrors, true);
    assert.equal(k.loops[0].pragma?.factor, 4);
  });
});

describe('trip counts by C++ scope rules (issue 21)', () => {
  const tripsOf = async (src: string, name: string) => kernel(await analyze(src), name).loops.map(l => l.tripCount);

  test('class template parameters and members of template parameters are dependent, never runtime', async () => {
    const src = `template <int N> struct Merge {
  __device__ void run(float* x) {
#pragma unroll
    for (int i = 0; i < N / 2; ++i) x[i] = x[i + N / 2];
  }
};
template <typename T> __device__ void fill(T& t, float* x, int n) {
  for (int i = 0; i < T::kN; ++i) x[i] = 0;
  for (int i = 0; i < t.kN; ++i) x[i] = 0;
  for (int i = 0; i < n; ++i) x[i] = 0;
}`;
    assert.deepEqual(await tripsOf(src, 'run'), ['dependent']);
    assert.deepEqual(await tripsOf(src, 'fill'), ['dependent', 'dependent', 'runtime']);
    assert.ok(!computeFindings(await analyze(src)).some(f => f.code === 'full-unroll-runtime-trip'));
  });

  test('a member constant comes from the enclosing class, not another class or specialisation', async () => {
    const src = `struct A {
  static constexpr int kN = 4;
  __device__ void f(float* x) {
    for (int i = 0; i < kN; ++i) x[i] = 0;
  }
};
struct B { static constexpr int kN = 4096; };
template <typename T> struct Op {
  enum { kFirst = 2, kN };
  __device__ void g(float* x) { for (int i = 0; i < kN; ++i) x[i] = 0; }
};
template <> struct Op<double> {
  static constexpr int kN = 64;
  __device__ void h(float* x) { for (int i = 0; i < kN; ++i) x[i] = 0; }
};`;
    assert.deepEqual(await tripsOf(src, 'f'), [4]);
    assert.deepEqual(await tripsOf(src, 'g'), [3]);
    assert.deepEqual(await tripsOf(src, 'h'), [64]);
  });

  test('template-ids pick the matching explicit specialisation; misparsed `i < T<8>::k` conditions', async () => {
    const src = `template <int N> struct Traits { static constexpr int kCount = N / 2; };
template <> struct Traits<8> { static constexpr int kCount = 16; };
__global__ void k(float* x) {
  for (int i = 0; i < Traits<8>::kCount; ++i) x[i] = 0;
  for (int i = 0; i < Traits<6>::kCount; ++i) x[i] = 0;
}`;
    assert.deepEqual(await tripsOf(src, 'k'), [16, 3]);
  });

  test('class template members take the instantiations visible in the file', async () => {
    const src = `template <int N> struct Tile {
  __device__ void run(float* x) { for (int i = 0; i < N; ++i) x[i] = 0; }
};
__global__ void k(float* x) { Tile<8> t; t.run(x); }`;
    const f = kernel(await analyze(src), 'run');
    assert.deepEqual(
      f.loops.map(l => l.tripCount),
      [8],
    );
    assert.deepEqual(f.instantiations, [{ N: 8 }]);
  });

  test('every member of a class template takes the same instantiations; a member defined outside is no instantiation', async () => {
    // scopes.ts reads a class's instantiations once and gives them to each member (cached by
    // class); \`Tile<N, M>::both\` names the template itself, not an instantiation with N and M unknown
    const src = `template <int N, int M> struct Tile {
  __device__ void run(float* x) { for (int i = 0; i < N; ++i) x[i] = 0; }
  __device__ void cols(float* x) { for (int j = 0; j < M; ++j) x[j] = 0; }
  __device__ void both(float* x);
};
template <int N, int M> __device__ void Tile<N, M>::both(float* x) { for (int k = 0; k < N * M; ++k) x[k] = 0; }
__global__ void k(float* x) { Tile<8, 2> a; a.run(x); Tile<4, 3>::cols(x); Tile<8, 2> b; b.both(x); }`;
    const a = await analyze(src);
    const byInst = (name: string) => kernel(a, name).loops.map(l => l.tripCountByInstantiation?.map(b => b.tripCount));
    assert.deepEqual(kernel(a, 'run').instantiations, [
      { N: 8, M: 2 },
      { N: 4, M: 3 },
    ]);
    assert.deepEqual(kernel(a, 'cols').instantiations, [
      { N: 8, M: 2 },
      { N: 4, M: 3 },
    ]);
    assert.deepEqual(byInst('run'), [[8, 4]]);
    assert.deepEqual(byInst('cols'), [[2, 3]]);
  });

  test('wmma num_elements, CuTe static shapes, sizeof and constexpr functions are compile-time', async () => {
    const src = `constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }
struct Cfg { int n; };
__device__ void f(wmma::fragment<wmma::accumulator, 16, 16, 16, float>& acc, Cfg c, float* x) {
  Tensor t = make_tensor<float>(Shape<_4, _8>{});
  for (int i = 0; i < acc.num_elements; ++i) x[i] = 0;
  for (int i = 0; i < size<1>(t); ++i) x[i] = 0;
  for (int i = 0; i < size(t); ++i) x[i] = 0;
  for (int i = 0; i < Int<8>{}; ++i) x[i] = 0;
  for (int i = 0; i < ceil_div(10, 4); ++i) x[i] = 0;
  for (int i = 0; i < sizeof(Cfg); ++i) x[i] = 0;
  for (int i = 0; i < c.n; ++i) x[i] = 0;
}`;
    assert.deepEqual(await tripsOf(src, 'f'), ['dependent', 8, 32, 8, 3, 'dependent', 'runtime']);
  });

  test('comma increments, conditions of another shape, starts before the loop, unrolled outer counters', async () => {
    const src = `template <int BINS> __device__ void f(float* x, unsigned reg) {
  constexpr int iters = 4;
  for (int ii = 0; ii < iters; ii += 2, reg >>= 8) x[ii] = reg;
  for (int b = 4 % 3; (b + 3) <= 10; b += 3) x[b] = 0;
  int off = 0;
  for (; off + 32 <= 128; off += 32) x[off] = 0;
#pragma unroll
  for (int i = 0; i < 4; ++i)
    for (int j = 1 & i; j < i; j += 2) x[j] = 0;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < i; ++j) x[j] = 0;
}`;
    assert.deepEqual(await tripsOf(src, 'f'), [2, 3, 4, 4, 'dependent', 4, 'runtime']);
  });
});
