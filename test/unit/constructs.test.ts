// Library constructs that must not drop device code (issue 21): macro-qualified constructors
// and template-id return types, `struct ALIGN_MACRO name`, nvcc head attributes, unknown macros
// before loops, pragmas under preprocessor conditions, device lambdas in host code. Fixtures are
// written for these tests in the libraries' styles.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, kernel, loopAt, lineOf } from './helpers';
import { CudaDocuments } from '../../src/engine/parse/documents';
import { MacroTable } from '../../src/engine/parse/macros/table';
import { computeFindings } from '../../src/engine/parse/findings';
import { toScanJson } from '../../src/engine/parse/scan';

const ITERATOR = `struct TileIterator {
  int stride_, offset_;
  float frag_[8];

  CUTLASS_HOST_DEVICE
  TileIterator(int stride, int offset) : stride_(stride), offset_(offset) { frag_[0] = 0.f; }

  CUTLASS_DEVICE
  void load() {
    CUTLASS_PRAGMA_UNROLL
    for (int s = 0; s < 8; ++s) frag_[s] = float(s * stride_);
  }

  CUTLASS_HOST_DEVICE
  TileIterator &operator++() { offset_ += stride_; return *this; }
};

template <typename Element, int kCount>
struct Scale {
  CUTLASS_HOST_DEVICE
  Fragment<Element, kCount> operator()(Fragment<Element, kCount> const &in) const {
    Fragment<Element, kCount> out;
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < kCount; ++i) out[i] = in[i] * Element(2);
    return out;
  }
};
`;

describe('constructs that used to drop code', () => {
  test('a macro-qualified constructor with two initialisers and a body keeps itself and later members', async () => {
    const a = await analyze(ITERATOR);
    assert.deepEqual(
      a.kernels.map(k => [k.name, k.line]),
      [
        ['TileIterator', 5],
        ['load', 8],
        ['operator++', 14],
        ['operator()', 20],
      ],
    );
    const load = loopAt(kernel(a, 'load'), 11);
    assert.equal(load.pragma?.macro?.name, 'CUTLASS_PRAGMA_UNROLL');
    assert.equal(load.tripCount, 8);
    assert.deepEqual(kernel(a, 'load').qualifierMacros, ['CUTLASS_DEVICE']);
    assert.equal(loopAt(kernel(a, 'operator()'), lineOf(ITERATOR, 'i < kCount')).pragma?.kind, 'full');
    assert.equal(a.hasSyntaxErrors, false);
  });

  test('conversion operators and friends qualified by a macro; a qualifier alone in an #if branch loses no later member', async () => {
    const src = `struct half_like {
  CUTLASS_HOST_DEVICE
  operator float() const { return 1.f; }
  CUTLASS_HOST_DEVICE
  explicit operator bool() const { for (int i = 0; i < 2; ++i) {} return true; }
  CUTLASS_HOST_DEVICE
  friend half_like operator+(half_like const &a, half_like const &b) { return a; }
  #if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ < 530)
    __device__ __noinline__
  #else
    CUTLASS_HOST_DEVICE
  #endif
  static half_like convert(float const &f) { return half_like(); }
  CUTLASS_HOST_DEVICE
  static half_like bitcast(unsigned short x) { return half_like(); }
  CUTLASS_DEVICE
  void clear() { for (int i = 0; i < 4; ++i) {} }
};
`;
    const a = await analyze(src);
    assert.deepEqual(
      a.kernels.map(k => [k.name, k.line]),
      [
        ['operator float', 2],
        ['operator bool', 4],
        ['operator+', 7],
        // Not yet: `convert`, whose qualifier is the last item of an #if branch before it.
        ['bitcast', 14],
        ['clear', 16],
      ],
    );
    assert.equal(kernel(a, 'operator bool').loops[0].tripCount, 2);
  });

  test('struct ALIGN_MACRO name and nvcc head attributes keep their functions', async () => {
    const src = `#define TILE_ALIGN alignas(16)
struct TILE_ALIGN tile {
  float data[16];
  __device__ void zero() {
    #pragma unroll
    for (int i = 0; i < 16; ++i) data[i] = 0;
  }
};
class LIB_ALIGN(32) row : public tile {
  __device__ void one() { for (int i = 0; i < 2; ++i) data[i] = 1; }
};
__global__ void __cluster_dims__(2, 1, 1) clustered(float* x) {
  #pragma unroll
  for (int i = 0; i < 4; ++i) x[i] = 0;
}
__global__ void __launch_bounds__(128) __cluster_dims__(2, 1, 1) bounded(float* x) {
  #pragma unroll 2
  for (int i = 0; i < 4; ++i) x[i] = 0;
}
__global__ void __maxnreg__(64) capped(float* x) { for (int i = 0; i < 4; ++i) x[i] = 0; }
`;
    const a = await analyze(src);
    assert.deepEqual(
      a.kernels.map(k => [k.name, k.qualifier, k.loops.map(l => [l.line, l.pragma?.text ?? null, l.tripCount])]),
      [
        ['zero', 'device', [[6, 'unroll', 16]]],
        ['one', 'device', [[10, null, 2]]],
        ['clustered', 'global', [[14, 'unroll', 4]]],
        ['bounded', 'global', [[18, 'unroll 2', 4]]],
        ['capped', 'global', [[20, null, 4]]],
      ],
    );
    assert.deepEqual(kernel(a, 'bounded').launchBounds, ['128']);
    assert.equal(a.hasSyntaxErrors, false);
  });

  test('qualifier macros among other specifier macros (CCCL style) and after the type', async () => {
    const src = `template <class T>
_CCCL_NODISCARD _CCCL_HIDE_FROM_ABI _CCCL_DEVICE shuffle_result<T> shuffle(const T& v) {
  _CCCL_PRAGMA_UNROLL_FULL()
  for (int i = 0; i < 4; ++i) {}
  return {};
}
inline CUTE_HOST_DEVICE int twice(int x) { for (int i = 0; i < 2; ++i) x += x; return x; }
`;
    const a = await analyze(src);
    assert.deepEqual(
      a.kernels.map(k => [k.name, k.qualifier, k.loops.length, k.qualifierMacros]),
      [
        ['shuffle', 'device', 1, ['_CCCL_DEVICE']],
        ['twice', 'device', 1, ['CUTE_HOST_DEVICE']],
      ],
    );
    assert.equal(a.kernels[0].loops[0].pragma?.kind, 'full');
  });
});

describe('an unknown macro before a loop', () => {
  const SRC = `#include <mylib/config.h>
__global__ void k(float* x, int n) {
  MYLIB_UNROLL
  for (int i = 0; i < 4; ++i) x[i] = 0;
  MYLIB_UNROLL for (int i = 0; i < n; ++i) x[i] = 1;
  MYLIB_UNROLL
  x[0] = 2;
}
MYLIB_ATTR
__device__ float f(float v) { for (int i = 0; i < 3; ++i) v *= 2; return v; }
MYLIB_ATTR __device__ float g(float v) { return v; }
`;

  test('keeps the loop, says which macro stands before it, and leaves function heads alone', async () => {
    const a = await analyze(SRC);
    assert.deepEqual(
      a.kernels.map(k => k.name),
      ['k', 'f', 'g'],
    );
    const k = kernel(a, 'k');
    assert.deepEqual(
      k.loops.map(l => [l.line, l.pragma, l.unknownMacro ?? null, l.tripCount]),
      [
        [4, null, 'MYLIB_UNROLL', 4],
        [5, null, 'MYLIB_UNROLL', 'runtime'],
      ],
    );
    assert.equal(kernel(a, 'f').loops[0].unknownMacro, undefined);
    const json = toScanJson([a]);
    assert.equal(json.files[0].kernels[0].loops[0].unknownMacro, 'MYLIB_UNROLL');
  });

  test('masking keeps every offset and line', () => {
    const table = MacroTable.builtin;
    const t = SRC + ITERATOR + 'struct LIB_ALIGN(32) r {};\n__global__ void __cluster_dims__(2, 1, 1) c() {}\n';
    const m = table.maskForParse(t);
    assert.equal(m.length, t.length);
    assert.deepEqual(
      m.split('\n').map(l => l.length),
      t.split('\n').map(l => l.length),
    );
    assert.match(m, /^ {2}MYLIB_UNR\(\);$/m);
    assert.match(m, /^ {2}MYLIB_UNROLL\n {2}x\[0\] = 2;$/m, 'not before a loop: left as written');
    assert.match(m, /^MYLIB_ATTR$/m);
    assert.match(m, /^ {2}\[\[CUTLASS_HOST_DE\]\]$/m);
    assert.match(m, /struct \[\[LIB_A\(32\)\]\] r/);
    assert.match(m, /void \[\[__cluster_di\(2, 1, 1\)\]\] c/);
    assert.equal(table.unmask('[[CUTLASS_HOST_DE]] int f()'), '[[CUTLASS_HOST_DEVICE]] int f()');
  });
});

describe('pragmas under preprocessor conditions', () => {
  const SRC = `__global__ void k(float* x, int n) {
#if defined(__CUDA_ARCH__)
  #pragma unroll 4
#endif
  for (int i = 0; i < n; ++i) x[i] = 0;
}
__global__ void k2(float* x, int n) {
  #pragma unroll 4
#ifdef USE_ONES
  for (int i = 0; i < n; ++i) x[i] = 1;
#else
  for (int i = 0; i < n; ++i) x[i] = 0;
#endif
}
__global__ void k3(float* x, int n) {
#if __CUDA_ARCH__ >= 800
  #pragma unroll 8
#elif __CUDA_ARCH__ >= 700
  #pragma unroll 4
#else
  #pragma unroll 1
#endif
  for (int i = 0; i < n; ++i) x[i] = 0;
#if FAST
  x[0] = 1;
#endif
  for (int i = 0; i < n; ++i) x[i] = 0;
}
`;

  test('attach to their loops, name the branch, and are never pragmas without a loop', async () => {
    const a = await analyze(SRC);
    const k = kernel(a, 'k');
    assert.deepEqual([k.loops[0].pragma?.factor, k.loops[0].pragma?.condition], [4, '#if defined(__CUDA_ARCH__)']);
    assert.deepEqual(
      kernel(a, 'k2').loops.map(l => [l.line, l.pragma?.line, l.pragma?.condition]),
      [
        [10, 8, '#ifdef USE_ONES'],
        [12, 8, '#else of #ifdef USE_ONES'],
      ],
    );
    const k3 = kernel(a, 'k3');
    const l = loopAt(k3, 23);
    assert.deepEqual(
      [l.pragma?.factor, l.pragma?.condition, l.alternativePragmas?.map(p => [p.factor, p.condition])],
      [
        8,
        '#if __CUDA_ARCH__ >= 800',
        [
          [4, '#elif __CUDA_ARCH__ >= 700 of #if __CUDA_ARCH__ >= 800'],
          [1, '#else of #if __CUDA_ARCH__ >= 800'],
        ],
      ],
    );
    assert.equal(loopAt(k3, 27).pragma, null, 'a statement in the conditional stands between');
    assert.deepEqual(a.strayPragmas, []);
    assert.deepEqual(
      computeFindings(a).filter(f => f.code === 'pragma-without-loop'),
      [],
    );
    const json = toScanJson([a]).files[0].kernels[2].loops[0];
    assert.equal(json.pragma?.condition, '#if __CUDA_ARCH__ >= 800');
    assert.equal(json.alternativePragmas?.length, 2);
  });

  test('a pragma in a conditional with no loop after it is still stray', async () => {
    const a = await analyze('__global__ void k(float* x) {\n#ifdef A\n  #pragma unroll\n#endif\n  x[0] = 1;\n}\n');
    assert.deepEqual(
      a.strayPragmas.map(s => s.pragma.line),
      [3],
    );
  });
});

describe('device lambdas in host code', () => {
  test('are device functions named by their line; one inside a kernel stays part of it', async () => {
    const src = `template <typename F> __global__ void run(F f) {
  f(threadIdx.x);
  auto g = [] __device__ (int j) { for (int i = 0; i < 2; ++i) j += i; return j; };
}
void launch(float* x, cudaStream_t s) {
  for (int r = 0; r < 3; ++r) {}
  run<<<1, 32, 0, s>>>([=] __device__ (int t) {
    #pragma unroll
    for (int i = 0; i < 4; ++i) x[t * 4 + i] = 0;
  });
  parallel_for(s, [x] __host__ __device__ (int t) { x[t] = 1; });
  auto host = [=] (int t) { for (int i = 0; i < t; ++i) {} };
}
`;
    const a = await analyze(src);
    assert.deepEqual(
      a.kernels.map(k => [k.name, k.qualifier, k.loops.map(l => [l.line, l.pragma?.kind ?? null, l.tripCount])]),
      [
        ['run', 'global', [[3, null, 2]]],
        ['lambda@7', 'device', [[9, 'full', 4]]],
        ['lambda@11', 'device', []],
      ],
    );
    assert.equal(a.hasSyntaxErrors, false);
  });
});

describe('incremental edits with the new masking match a fresh parse', () => {
  test('typing a loop under an unknown macro, and other edits in library-style code', async () => {
    const docs = await CudaDocuments.create();
    const src = `__global__ void k(float* x, int n) {
  MYLIB_UNROLL
  x[0] = 0;
}
void launch(float* x) {
  int y = 0;
}
${ITERATOR}`;
    docs.open('c.cu', src);
    const check = (what: string) => assert.deepEqual(docs.analysis('c.cu'), docs.analyzeOnce(docs.text('c.cu')!, 'c.cu'), what);
    check('open');
    // The line after the macro becomes a loop: the macro's line is masked anew.
    const at = src.indexOf('  x[0] = 0;');
    docs.update('c.cu', [{ start: at, length: 0, text: '  for (int i = 0; i < 4; ++i)\n' }]);
    check('loop typed');
    assert.equal(docs.analysis('c.cu')!.kernels[0].loops[0].unknownMacro, 'MYLIB_UNROLL');
    docs.update('c.cu', [{ start: at, length: '  for (int i = 0; i < 4; ++i)\n'.length, text: '' }]);
    check('loop removed');
    assert.equal(docs.analysis('c.cu')!.kernels[0].loops.length, 0);
    // A device lambda typed into the host body, then removed.
    const body = docs.text('c.cu')!.indexOf('  int y = 0;');
    const lambda = '  auto f = [=] __device__ (int t) { for (int i = 0; i < 2; ++i) x[i] = t; };\n';
    docs.update('c.cu', [{ start: body, length: 0, text: lambda }]);
    check('lambda typed');
    assert.ok(docs.analysis('c.cu')!.kernels.some(k => k.name === 'lambda@6'));
    docs.update('c.cu', [{ start: body, length: lambda.length, text: '' }]);
    check('lambda removed');
    // Lines added above move a lambda's name with it.
    docs.update('c.cu', [{ start: body, length: 0, text: lambda }]);
    docs.update('c.cu', [{ start: 0, length: 0, text: '// header\n\n' }]);
    check('lines added above');
    assert.ok(docs.analysis('c.cu')!.kernels.some(k => k.name === 'lambda@8'));
    // Random single-character edits over the qualifier macros and constructors.
    let seed = 11;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const pieces = [' ', 'x', ';', '\n', 'CUTLASS_HOST_DEVICE ', 'MY_MACRO\n', 'for (;;) ', '#if A\n', '#endif\n'];
    let compared = 0;
    for (let step = 0; step < 80; step++) {
      const text = docs.text('c.cu')!;
      const at2 = rand(text.length);
      const e = rand(3) === 0 ? { start: at2, length: 1, text: '' } : { start: at2, length: 0, text: pieces[rand(pieces.length)] };
      const undo = { start: e.start, length: e.text.length, text: text.slice(e.start, e.start + e.length) };
      for (const edit of [e, undo]) {
        docs.update('c.cu', [edit]);
        const got = docs.analysis('c.cu')!;
        const want = docs.analyzeOnce(docs.text('c.cu')!, 'c.cu');
        if (!got.hasSyntaxErrors && !want.hasSyntaxErrors) {
          assert.deepEqual(got, want, `step ${step}, edit ${JSON.stringify(edit)}`);
          compared++;
        }
      }
    }
    assert.ok(compared > 60, `only ${compared} error-free states compared`);
    docs.close('c.cu');
  });
});
