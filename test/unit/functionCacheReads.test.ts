// The per-function cache is checked against the top-level items that spell the names a
// function's lookups asked for (fileIndex.ts NameReads, functionCache.ts), not against every
// item of the file: an edit of an unrelated class, or a host function that error recovery breaks
// into items, re-analysed all 72 functions of the bench's file (52–108 ms a keystroke). Each case
// checks both halves: what must be re-analysed is, and the answer equals a fresh analysis.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeTree } from '../../src/engine/parse/analyze';
import { FunctionCache } from '../../src/engine/parse/functionCache';
import { createCudaParser } from '../../src/engine/parse/parser';

/** Analyses `before` then `after` with one cache: the second analysis, a fresh one of `after`, and what the second re-analysed. */
async function twice(before: string, after: string) {
  const parser = await createCudaParser();
  const cache = new FunctionCache();
  const analyse = (src: string, c?: FunctionCache) => {
    const tree = parser.parse(src)!;
    try {
      return analyzeTree(tree, 'u.cu', c);
    } finally {
      tree.delete();
    }
  };
  analyse(before, cache);
  const misses = cache.misses;
  const got = analyse(after, cache);
  assert.deepEqual(got, analyse(after), 'the cached answer equals a fresh one');
  const trip = (fn: string) => got.kernels.find(k => k.name === fn)?.loops[0]?.tripCount;
  return { reanalysed: cache.misses - misses, trip };
}

const KERNELS = `struct Cfg {
  static constexpr int N = Other::M;
};
__device__ void f(float *a) {
  for (int i = 0; i < Cfg::N; ++i) a[i] = 0;
}
__device__ void g(float *a) {
  for (int i = 0; i < Cfg::N; ++i) a[i] = 1;
}
__global__ void h(float *a, int n) {
  for (int i = 0; i < n; ++i) a[i] = 2;
}
`;

describe('the function cache re-analyses what an edit outside functions reaches, and only that', () => {
  test('a class no lookup asked for: nothing re-analysed', async () => {
    const src = `struct Other { static constexpr int M = 4; };\nstruct Rng { unsigned long long state; };\n${KERNELS}`;
    const r = await twice(src, src.replace('unsigned long long state;', 'unsigned long long statex;'));
    assert.equal(r.reanalysed, 0);
    assert.equal(r.trip('f'), 4);
  });

  test('a value read through a memoised member (Cfg::N = Other::M): every function that reads it, including the one that reused the memo', async () => {
    const src = `struct Other { static constexpr int M = 4; };\n${KERNELS}`;
    const r = await twice(src, src.replace('M = 4', 'M = 8'));
    // f computed Cfg::N; g reused ScopeLookup's memo entry, and must depend on Other too. h reads neither.
    assert.equal(r.reanalysed, 2);
    assert.equal(r.trip('f'), 8);
    assert.equal(r.trip('g'), 8);
  });

  test('a host function that error recovery breaks into items: no device function re-analysed', async () => {
    // The bench's keystroke `if (… i + 1 < argc)x {` in main: main is no function definition then.
    const src = `__global__ void k(float *a, int n) {
  for (int i = 0; i < n; ++i) a[i] = 0;
}
int main(int argc, char **argv)
{
  int n = 16;
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-' && i + 1 < argc) {
      n = 4;
    }
  }
  k<<<1, 32>>>(nullptr, n);
  return 0;
}
`;
    const r = await twice(src, src.replace('i + 1 < argc)', 'i + 1 < argc)x'));
    assert.equal(r.reanalysed, 0);
    assert.equal(r.trip('k'), 'runtime');
  });

  test('a namespace variable declared where a comment was: the function that reads the name, not the other', async () => {
    const src = `__global__ void k(float *a) {
  for (int i = 0; i < LIMIT; ++i) a[i] = 0;
}
__global__ void other(float *a, int n) {
  for (int i = 0; i < n; ++i) a[i] = 1;
}
// LIMIT comes from elsewhere
`;
    const r = await twice(src, src.replace('// LIMIT comes from elsewhere', '__device__ int LIMIT;'));
    assert.equal(r.trip('k'), 'runtime');
    assert.equal(r.reanalysed, 1);
  });

  test('an item that spells a name only inside a longer token does not count', async () => {
    const src = `struct Other { static constexpr int M = 4; };\nint OtherCount = 0;\n${KERNELS}`;
    const r = await twice(src, src.replace('OtherCount = 0', 'OtherCount = 1'));
    assert.equal(r.reanalysed, 0);
  });
});
