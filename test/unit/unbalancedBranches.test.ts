// `#if` groups whose branches each open a brace closed once after the `#endif` (ggml's mmf.cuh,
// mmq-load-tiles.cuh, fattn-tile.cuh): the parser reads the branch the configuration takes, so
// the function and its loops are found; balanced groups are read as written.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, documents, kernel, lineOf } from './helpers';
import { selectUnbalancedBranches } from '../../src/engine/parse/macros/branches';
import { MacroTable } from '../../src/engine/parse/macros/table';
import { parseDefine } from '../../src/engine/parse/macros/expand';

const KERNEL = `template <typename T, int nwarps>
__launch_bounds__(32*nwarps, 1)
static __global__ void mul_mat_f(const T * x, float * dst, const int ncols) {
#if defined(AMD_WMMA_AVAILABLE)
    if constexpr (nwarps != 4) {NO_DEVICE_CODE;} else {
    typedef int tile_A;
#elif defined(VOLTA_MMA_AVAILABLE)
    if constexpr (nwarps != 2) {NO_DEVICE_CODE;} else {
    typedef short tile_A;
#else
    if constexpr (nwarps != 8) {NO_DEVICE_CODE;} else {
    typedef float tile_A;
#endif // defined(AMD_WMMA_AVAILABLE)
    const char * s = "}{ )";  // braces in strings and comments do not count: }
#pragma unroll
    for (int i = 0; i < 4; ++i) dst[i] = x[i];
    }
}

template <int I>
static __device__ __forceinline__ void load_tiles(const int * x, int * x_tile) {
#if defined(AMD_MFMA_AVAILABLE) || defined(TURING_MMA_AVAILABLE)
    int * x_qs = x_tile;
#else
    int * x_qs = x_tile + 1;
#endif
#pragma unroll
    for (int i0 = 0; i0 < I; i0 += 8) x_qs[i0] = x[i0];
}
`;

/** A table that sees `names` #defined (as a header or the compile flags would). */
function tableDefining(...names: string[]): MacroTable {
  const defs = new Map(names.map(n => [n, parseDefine(`${n} 1`, 'defs.h', 1)!]));
  return MacroTable.fromDefinitions(defs);
}

describe('#if groups whose branches do not balance', () => {
  test('a kernel whose `{` is written in each branch and closed once is found with its loop', async () => {
    const a = await analyze(KERNEL);
    const k = kernel(a, 'mul_mat_f');
    assert.deepEqual(
      k.loops.map(l => [l.line, l.pragma?.kind, l.tripCount]),
      [[lineOf(KERNEL, 'for (int i = 0')!, 'full', 4]],
    );
    assert.equal(a.hasSyntaxErrors, false);
    // The balanced group of load_tiles is read as written (both branches, no blanking).
    assert.equal(kernel(a, 'load_tiles').loops.length, 1);
  });

  test('without the file’s macros the first branch is read; with them, the branch they select', () => {
    const none = selectUnbalancedBranches(KERNEL, () => null);
    assert.match(none, /nwarps != 4/);
    assert.doesNotMatch(none.slice(0, none.indexOf('load_tiles')), /nwarps != 2|nwarps != 8|#if|#elif|#else|#endif/);
    assert.equal(none.length, KERNEL.length);
    assert.equal(none.split('\n').length, KERNEL.split('\n').length);
    const volta = tableDefining('VOLTA_MMA_AVAILABLE').selectBranches(KERNEL);
    assert.match(volta, /nwarps != 2/);
    assert.doesNotMatch(volta, /nwarps != 4|nwarps != 8/);
    const neither = tableDefining('OTHER').selectBranches(KERNEL);
    assert.match(neither, /nwarps != 8/);
    assert.doesNotMatch(neither, /nwarps != 4|nwarps != 2/);
    // A balanced group keeps every branch and its directives.
    assert.match(neither, /int \* x_qs = x_tile;\n#else\n {4}int \* x_qs = x_tile \+ 1;\n#endif/);
  });

  test('the analysis follows the configured branch (defines from the headers or flags)', async () => {
    const docs = await documents();
    const a = docs.analyzeOnce(KERNEL, 'mmf.cuh', tableDefining('AMD_WMMA_AVAILABLE'));
    assert.equal(kernel(a, 'mul_mat_f').loops.length, 1);
    assert.equal(a.hasSyntaxErrors, false);
  });

  test('matching groups across a function (open in one, close in another) take the same branch', () => {
    const src = `__device__ void f(int n) {
#ifdef GUARDED
  if (n > 0) {
#endif
  n++;
#ifdef GUARDED
  }
#endif
}
`;
    const first = selectUnbalancedBranches(src, () => null);
    assert.match(first, /if \(n > 0\) \{[\s\S]*\}[\s\S]*\}/);
    const off = tableDefining('X').selectBranches(src);
    assert.doesNotMatch(off, /if \(n > 0\)/);
    assert.equal((off.match(/[{}]/g) ?? []).length, 2);
  });

  test('an edit that makes a group unbalanced (or balanced again) reparses what the parser reads', async () => {
    const docs = await documents();
    const balancedSrc = KERNEL.replace(/\{NO_DEVICE_CODE;\} else \{/g, '{NO_DEVICE_CODE;}').replace(
      /\n {4}\}\n\}\n\ntemplate <int I>/,
      '\n}\n\ntemplate <int I>',
    );
    docs.open('k.cu', balancedSrc);
    assert.equal(kernel(docs.analysis('k.cu')!, 'mul_mat_f').loops.length, 1);
    // Write `else {` back into each branch and the closing brace: as the user types it.
    let text = balancedSrc;
    for (const needle of ['nwarps != 4) {NO_DEVICE_CODE;}', 'nwarps != 2) {NO_DEVICE_CODE;}', 'nwarps != 8) {NO_DEVICE_CODE;}']) {
      const at = text.indexOf(needle) + needle.length;
      docs.update('k.cu', [{ start: at, length: 0, text: ' else {' }]);
      text = text.slice(0, at) + ' else {' + text.slice(at);
    }
    const close = text.indexOf('dst[i] = x[i];\n') + 'dst[i] = x[i];\n'.length;
    docs.update('k.cu', [{ start: close, length: 0, text: '    }\n' }]);
    text = text.slice(0, close) + '    }\n' + text.slice(close);
    assert.equal(text, KERNEL);
    const incremental = docs.analysis('k.cu')!;
    const fresh = docs.analyzeOnce(KERNEL, 'k.cu');
    assert.deepEqual(incremental.kernels, fresh.kernels);
    assert.equal(kernel(incremental, 'mul_mat_f').loops.length, 1);
    docs.close('k.cu');
  });

  test('a group inside a declaration (a requires-clause between the template head and the kernel, a parameter) is read as the preprocessor reads it', async () => {
    const src = `template <typename P, int N>
#if _CCCL_HAS_CONCEPTS()
  requires my_selector<P>
#endif // _CCCL_HAS_CONCEPTS()
__global__ void InitKernel(int* out,
#ifdef WITH_COUNT
                                        int count,
#else
                                        unsigned count,
#endif
                                        int n)
{
#pragma unroll
  for (int i = 0; i < N; ++i) out[i] = i;
}

__device__ void g(int* o) {
  o[0] = 1;
#if A
  o[1] = 2;
#else
  o[1] = 3;
#endif
}
`;
    const a = await analyze(src);
    assert.equal(a.hasSyntaxErrors, false);
    const k = kernel(a, 'InitKernel');
    assert.deepEqual(
      k.loops.map(l => [l.line, l.pragma?.kind]),
      [[lineOf(src, 'for (int i = 0')!, 'full']],
    );
    const read = selectUnbalancedBranches(src, () => null);
    assert.match(read, /requires my_selector<P>/);
    assert.doesNotMatch(read.slice(0, read.indexOf('__device__ void g')), /#if|#ifdef|#else|#endif|unsigned count/);
    // A group between statements stays as written, both branches and directives.
    assert.match(read, /o\[0\] = 1;\n#if A\n {2}o\[1\] = 2;\n#else\n {2}o\[1\] = 3;\n#endif/);
    assert.equal(read.length, src.length);
  });

  test('an edit that moves a group into a declaration (a `;` deleted before it) reparses as a fresh parse does', async () => {
    const docs = await documents();
    const src = `__device__ int h;
#if A
__device__ int h2;
#endif
template <int N> __global__ void k(float* x) {
#pragma unroll
  for (int i = 0; i < N; ++i) x[i] = 0.f;
}
`;
    docs.open('m.cu', src);
    const at = src.indexOf('h;') + 1;
    docs.update('m.cu', [{ start: at, length: 1, text: '' }]);
    const edited = src.slice(0, at) + src.slice(at + 1);
    assert.deepEqual(docs.analysis('m.cu')!.kernels, docs.analyzeOnce(edited, 'm.cu').kernels);
    docs.update('m.cu', [{ start: at, length: 0, text: ';' }]);
    assert.deepEqual(docs.analysis('m.cu')!.kernels, docs.analyzeOnce(src, 'm.cu').kernels);
    docs.close('m.cu');
  });

  test('an edit of a directive line (a #define body, a continuation, a name) reparses as a fresh parse does', async () => {
    // Edits of non-conditional directives skip re-reading the branches (documents.ts); one that
    // makes a conditional (`#  define C` → `#  if define C`) opens a group with the stray #else
    // and #endif below, whose branches do not balance: the branches must be read again.
    const src = `#define A 1
#  define B 2 \\
     + 3
__global__ void k(float* x) {
#ifdef A
  x[1] = 2.f;
#endif
#pragma unroll
  for (int i = 0; i < 4; ++i) x[i] = 0.f;
}
#  define C 4
#else
__global__ void k2(float* x) {
#endif
#pragma unroll 2
  for (int i = 0; i < 8; ++i) x[i] = 1.f;
}
`;
    const docs = await documents();
    const directiveLines = [...src.matchAll(/^#.*(?:\\\n.*)*$/gm)].map(m => [m.index, m.index + m[0].length]);
    let checked = 0;
    for (const [from, to] of directiveLines)
      for (let at = from; at <= to; at++)
        for (const text of ['x', 'if ', ' ', 'else ', 'endif', 'e']) {
          docs.open('d.cu', src);
          docs.analysis('d.cu');
          docs.update('d.cu', [{ start: at, length: 0, text }]);
          const edited = src.slice(0, at) + text + src.slice(at);
          assert.deepEqual(
            docs.analysis('d.cu')!.kernels,
            docs.analyzeOnce(edited, 'd.cu').kernels,
            JSON.stringify(edited.slice(at - 10, at + 15)),
          );
          docs.close('d.cu');
          checked++;
        }
    assert.ok(checked > 500, `${checked} edits`);
  });

  test('an edit in a `//` comment line before a group (a digit typed over one, a character typed or deleted) reparses as a fresh parse does', async () => {
    // A comment line's text is no code (documents.ts keepsBranchSelection skips reading the
    // branches again for it), except where the edit makes the comment go on: the `x` after its
    // `\\` deleted, the next line (`3;`) is comment too and the group stands inside h's
    // declaration (its first branch is read then, and no kernel comes of it).
    const src = `__device__ int h = 2 +
//   tiles 1/2/4/8 "q" 'c' #x R"(*/ \\x
3;
#if A
__global__ void k1(float* x) {
#pragma unroll
  for (int i = 0; i < 4; ++i) x[i] = 0.f;
}
#else
__global__ void k2(float* x) {
#pragma unroll 2
  for (int i = 0; i < 8; ++i) x[i] = 1.f;
}
#endif
`;
    const docs = await documents();
    const from = src.indexOf('//');
    const to = src.indexOf('\n', from);
    assert.deepEqual(
      docs.analyzeOnce(src, 'c.cu').kernels.map(k => k.name),
      ['k1', 'k2'],
    );
    assert.deepEqual(
      docs.analyzeOnce(src.slice(0, to - 1) + src.slice(to), 'c.cu').kernels.map(k => k.name),
      [],
    );
    let checked = 0;
    for (let at = from; at <= to; at++)
      for (const [length, text] of [
        [0, 'x'],
        [1, '7'],
        [1, ''],
      ] as const) {
        if (length && at === to) continue;
        docs.open('c.cu', src);
        docs.analysis('c.cu');
        docs.update('c.cu', [{ start: at, length, text }]);
        const edited = src.slice(0, at) + text + src.slice(at + length);
        assert.deepEqual(
          docs.analysis('c.cu')!.kernels.map(k => k.name),
          docs.analyzeOnce(edited, 'c.cu').kernels.map(k => k.name),
          JSON.stringify(edited.slice(at - 10, at + 10)),
        );
        docs.close('c.cu');
        checked++;
      }
    assert.ok(checked > 100, `${checked} edits`);
  });
});
