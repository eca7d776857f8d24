import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, lineOf } from './helpers';
import { computeFindings } from '../../src/engine/parse/findings';

describe('static findings', () => {
  test('pragma not followed by a loop', async () => {
    const src = '__global__ void k(float* a, int n) {\n#pragma unroll 4\n  a[0] = 1;\n}';
    const f = computeFindings(await analyze(src));
    assert.deepEqual(
      f.map(x => [x.code, x.span.line]),
      [['pragma-without-loop', 2]],
    );
    assert.match(f[0].message, /not followed by a loop/);
  });

  test('full unroll on a runtime trip count; not on a constant one', async () => {
    const src = `__global__ void k(float* a, int n) {
#pragma unroll
  for (int i = 0; i < n; ++i) a[i] = 0;
#pragma unroll
  for (int i = 0; i < 8; ++i) a[i] = 0;
#pragma unroll 4
  for (int i = 0; i < n; ++i) a[i] = 0;
}`;
    const f = computeFindings(await analyze(src));
    assert.deepEqual(
      f.map(x => [x.code, x.span.line]),
      [['full-unroll-runtime-trip', 2]],
    );
    assert.match(f[0].message, /`int i = 0; i < n`/);
  });

  test('full unroll with an unresolved template trip count is information, not a warning', async () => {
    const src = 'template <int B> __global__ void k(float* a) {\n#pragma unroll\n  for (int i = 0; i < B; ++i) a[i] = 0;\n}';
    const f = computeFindings(await analyze(src));
    assert.deepEqual(
      f.map(x => [x.code, x.severity]),
      [['full-unroll-dependent-trip', 'information']],
    );
  });

  // Found by the fuzzer (test/fuzz): a loop nested on its parent's line was its own child (stack overflow).
  test('loops nested on one line: no endless recursion', async () => {
    const src = `__global__ void k(float* a) {
#pragma unroll
  for (int i = 0; i < 64; ++i) for (int j = 0; j < 64; ++j) for (int l = 0; l < 4; ++l) a[(i * 64 + j) * 4 + l] = 0;
}`;
    const a = await analyze(src);
    assert.deepEqual(
      a.kernels[0].loops.map(l => [l.line, l.depth, l.parentLine]),
      [
        [3, 0, null],
        [3, 1, 3],
        [3, 2, 3],
      ],
    );
    assert.deepEqual(
      computeFindings(a, { bloatThresholdStatements: 2048 }).map(x => x.code),
      [],
    );
  });

  test('nested full unrolls above the threshold warn once, at the outermost loop', async () => {
    const src = `__global__ void k(float* y, const float* x, const float* w) {
#pragma unroll
  for (int r = 0; r < 8; ++r) {
#pragma unroll
    for (int c = 0; c < 64; ++c) {
      float acc = 0.f;
#pragma unroll
      for (int k = 0; k < 256; ++k) acc += x[r * 256 + k] * w[k * 64 + c];
      y[r * 64 + c] = acc;
    }
  }
}`;
    const a = await analyze(src);
    const f = computeFindings(a, { bloatThresholdStatements: 2048 });
    assert.deepEqual(
      f.map(x => [x.code, x.span.line]),
      [['nested-unroll-bloat', 2]],
    );
    // r: 8 copies of (1 for its own overhead + 64 copies of c's body: 2 statements + 256 copies of 1)
    assert.match(f[0].message, /132,104/);
    assert.equal(computeFindings(a, { bloatThresholdStatements: 200000 }).length, 0);
  });

  test('one fully unrolled loop alone is not a nest', async () => {
    const src = '__global__ void k(float* a) {\n#pragma unroll\n  for (int i = 0; i < 100000; ++i) a[i] = 0;\n}';
    assert.equal(computeFindings(await analyze(src), { bloatThresholdStatements: 10 }).length, 0);
  });
});

describe('manual unroll remainder', () => {
  test('unguarded strided body on a runtime bound warns; guarded or dividing constant does not', async () => {
    const src = `__global__ void k(float* a, const float* b, int n) {
  for (int k = 0; k < n; k += 4) {
    a[k + 0] = b[k + 0];
    a[k + 1] = b[k + 1];
    a[k + 2] = b[k + 2];
    a[k + 3] = b[k + 3];
  }
  for (int k = 0; k < 64; k += 4) {
    a[k + 0] = b[k + 0];
    a[k + 1] = b[k + 1];
    a[k + 2] = b[k + 2];
    a[k + 3] = b[k + 3];
  }
  for (int k = 0; k < n; k += 2) {
    if (k + 0 < n) a[k + 0] = b[k + 0];
    if (k + 1 < n) a[k + 1] = b[k + 1];
  }
}`;
    const a = await analyze(src);
    const manual = a.kernels[0].manualUnrolls;
    assert.equal(manual.length, 3, JSON.stringify(manual));
    const f = computeFindings(a).filter(x => x.code === 'manual-unroll-no-remainder');
    assert.deepEqual(
      f.map(x => x.span.line),
      [lineOf(src, 'k < n; k += 4')],
    );
  });
});
