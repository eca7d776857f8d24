// A warning claims only what is known (issue 40): full unrolls nvcc completes are not "run time"
// (a lambda called with a constant, a range-for over a braced list, a default all callers use),
// a template argument decides a "depends on" note, and true run-time bounds still warn.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, kernel, lineOf } from './helpers';
import { computeFindings } from '../../src/engine/parse/findings';

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
  });
});
