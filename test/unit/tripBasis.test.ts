// What a non-numeric compile-time trip count is said to depend on: per instantiation where the
// file's instantiations differ, "depends on N" for a template parameter, and "not
// evaluated" — with no diagnostic — for a value we cannot derive.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, kernel, loopAt, lineOf } from './helpers';
import { computeFindings } from '../../src/engine/parse/findings';
import { loopHoverMarkdown, tripCountSummary } from '../../src/engine/parse/describe';
import { main } from '../../src/cli/main';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

describe('trip count basis', () => {
  test('instantiations with different trip counts are shown one by one', async () => {
    const src = `template <int N> __global__ void k(float* x) {
  #pragma unroll
  for (int i = 0; i < N; ++i) x[i] = 0;
}
template __global__ void k<4>(float*);
template __global__ void k<16>(float*);
`;
    const a = await analyze(src);
    const l = loopAt(kernel(a, 'k'), 3);
    assert.equal(l.tripCount, 'dependent');
    assert.deepEqual(l.tripCountByInstantiation, [
      { instantiation: { N: 4 }, tripCount: 4 },
      { instantiation: { N: 16 }, tripCount: 16 },
    ]);
    assert.equal(tripCountSummary(l), 'trip count 4 (N=4) · 16 (N=16)');
    const f = computeFindings(a).find(x => x.code === 'full-unroll-dependent-trip');
    assert.match(f!.message, /depends on `N`: the instantiations in this file give 4, 16\./);
  });

  test('instantiations that bind nothing evaluable are not listed one by one; partly evaluable ones say how many were not', async () => {
    const src = `template <typename T> __global__ void k(float* x) {
  #pragma unroll
  for (int i = 0; i < T::kRows; ++i) x[i] = 0;
}
void launch(float* x) { k<Unknown><<<1, 32>>>(x); k<Other><<<1, 32>>>(x); }
`;
    const l = loopAt(kernel(await analyze(src), 'k'), 3);
    assert.equal(l.tripCount, 'dependent');
    assert.equal(l.tripCountByInstantiation, undefined);
    assert.equal(tripCountSummary(l), 'trip count depends on T');
    const partly = `template <int N> __device__ void fill(float* x) {
  #pragma unroll
  for (int i = 0; i < N; ++i) x[i] = 0.f;
}
template <int M> __global__ void k(float* x) { fill<4>(x); fill<M>(x); }
`;
    assert.equal(tripCountSummary(loopAt(kernel(await analyze(partly), 'fill'), 3)), 'trip count 4 (N=4) · 1 not evaluated');
  });

  test('a template parameter with no instantiation: depends on it, by name', async () => {
    const src = `template <typename T> struct Tile {
  __device__ void run(float* x) {
    #pragma unroll
    for (int i = 0; i < T::kRows; ++i) x[i] = 0;
  }
};
`;
    const a = await analyze(src);
    const l = loopAt(kernel(a, 'run'), lineOf(src, 'for ('));
    assert.deepEqual(l.tripDependsOn, ['T']);
    assert.equal(tripCountSummary(l), 'trip count depends on T');
    assert.match(loopHoverMarkdown(kernel(a, 'run'), l), /depends on T \(template parameters with no instantiation visible/);
    assert.equal(computeFindings(a).filter(x => x.code === 'full-unroll-dependent-trip').length, 1);
  });

  test('a constant from an unread header is compile-time, not a template dependence, and not flagged', async () => {
    const src = `#include <mma.h>
using namespace nvcuda;
__device__ void zero(wmma::fragment<wmma::accumulator, 16, 16, 16, float>& acc) {
  #pragma unroll
  for (int t = 0; t < acc.num_elements; ++t) acc.x[t] = 0;
}
__device__ void fill(float* x) {
  #pragma unroll
  for (int i = 0; i < LIB_TILE_ROWS; ++i) x[i] = 0;
}
`;
    const a = await analyze(src);
    for (const name of ['zero', 'fill']) {
      const l = kernel(a, name).loops[0];
      assert.equal(l.tripCount, 'dependent', name);
      assert.deepEqual(l.tripDependsOn, [], name);
      assert.equal(tripCountSummary(l), 'trip count not evaluated');
      assert.match(loopHoverMarkdown(kernel(a, name), l), /not evaluated: a value this file does not let Unroll Lens derive/);
    }
    assert.deepEqual(computeFindings(a), []);
  });

  test('scan --json carries what a dependent trip count depends on', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-trip-'));
    const file = path.join(dir, 'k.cu');
    fs.writeFileSync(
      file,
      `template <int N> __global__ void k(float* x) {
  #pragma unroll
  for (int i = 0; i < N; ++i) x[i] = 0;
}
template __global__ void k<2>(float*);
template __global__ void k<8>(float*);
__device__ void g(float* x) {
  #pragma unroll
  for (int i = 0; i < HEADER_ROWS; ++i) x[i] = 0;
}
`,
    );
    let out = '';
    const code = await main(['scan', file, '--json'], { out: s => (out += s), err: () => {}, isTTY: false });
    fs.rmSync(dir, { recursive: true, force: true });
    assert.equal(code, 0);
    const loops = JSON.parse(out).files[0].kernels.map((k: { loops: unknown[] }) => k.loops[0]);
    assert.deepEqual(loops[0].tripDependsOn, ['N']);
    assert.deepEqual(loops[0].tripCountByInstantiation, [
      { instantiation: { N: 2 }, tripCount: 2 },
      { instantiation: { N: 8 }, tripCount: 8 },
    ]);
    assert.deepEqual(loops[1].tripDependsOn, []);
    assert.equal(loops[1].tripCountByInstantiation, undefined);
  });
});

describe('locals nvcc folds', () => {
  test('a non-const local that nothing writes is as constant as its initialiser; one written is run time', async () => {
    const src = `__device__ float red(float v, float* x, int n) {
  int width = 32;
  #pragma unroll
  for (int off = width / 2; off > 0; off /= 2) v += __shfl_down_sync(0xffffffff, v, off, width);
  int count = n;
  #pragma unroll
  for (int i = 0; i < count; ++i) x[i] = 0;
  int k = 4;
  k += n;
  #pragma unroll
  for (int i = 0; i < k; ++i) x[i] = 0;
  int w = 8;
  bump(&w);
  #pragma unroll
  for (int i = 0; i < w; ++i) x[i] = 0;
  int z = 8;
  if (z && n) x[0] = 1;
  #pragma unroll
  for (int i = 0; i < z; ++i) x[i] = 0;
  return v;
}
`;
    const a = await analyze(src);
    const trips = kernel(a, 'red').loops.map(l => l.tripCount);
    assert.deepEqual(trips, [5, 'runtime', 'runtime', 'runtime', 8]);
    assert.deepEqual(
      computeFindings(a).map(f => f.span.line),
      [lineOf(src, 'count = n') + 1, lineOf(src, 'k += n') + 1, lineOf(src, 'bump(&w)') + 1],
    );
  });
});
