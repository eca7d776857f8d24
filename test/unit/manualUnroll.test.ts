// Unit tests of the manual-unroll detectors (src/engine/parse/manualUnroll.ts): each snippet holds
// one __global__ function whose body is handed to findManualUnrolls directly, with a tiny
// constant evaluator (literals and + - * / << >> of literals).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { createCudaParser } from '../../src/engine/parse/parser';
import type { Node, Parser } from '../../src/engine/parse/parser';
import type { Kernel, ManualUnroll } from '../../src/engine/parse/model';
import { findManualUnrolls, describeManualUnroll } from '../../src/engine/parse/manualUnroll';
import { MANUAL_UNROLL_PATTERN_TEXT, manualUnrollHoverMarkdown, manualUnrollSummary } from '../../src/engine/parse/describe';

const SAMPLES = path.resolve(__dirname, '..', '..', '..', 'cuda-samples');

let parserP: Promise<Parser> | undefined;
function parser(): Promise<Parser> {
  parserP ??= createCudaParser();
  return parserP;
}

/** Integral constant evaluator for tests: literals and + - * / << >> of constants. */
function evalConst(n: Node): number | null {
  switch (n.type) {
    case 'number_literal':
      return /^\d+$/.test(n.text) ? Number(n.text) : /^0[xX][0-9a-fA-F]+$/.test(n.text) ? parseInt(n.text, 16) : null;
    case 'parenthesized_expression':
      return n.namedChildCount === 1 && n.namedChild(0) ? evalConst(n.namedChild(0)!) : null;
    case 'binary_expression': {
      const l = n.childForFieldName('left');
      const r = n.childForFieldName('right');
      const a = l ? evalConst(l) : null;
      const b = r ? evalConst(r) : null;
      if (a === null || b === null) return null;
      switch (n.childForFieldName('operator')?.type) {
        case '+':
          return a + b;
        case '-':
          return a - b;
        case '*':
          return a * b;
        case '/':
          return b === 0 ? null : Math.trunc(a / b);
        case '<<':
          return a << b;
        case '>>':
          return a >> b;
        default:
          return null;
      }
    }
    default:
      return null;
  }
}

/** Body of the first function definition (or the best container the parser recovered). */
function bodyOf(root: Node): Node {
  const fn = root.descendantsOfType('function_definition')[0];
  const body = fn?.childForFieldName('body');
  if (body) return body;
  return root.descendantsOfType('compound_statement')[0] ?? root;
}

async function detect(src: string, ev: (n: Node) => number | null = evalConst): Promise<ManualUnroll[]> {
  const tree = (await parser()).parse(src);
  assert.ok(tree);
  return findManualUnrolls(bodyOf(tree.rootNode), ev);
}

/** 1-based line of the n-th line containing `needle`. */
function lineOf(src: string, needle: string, nth = 1): number {
  const lines = src.split('\n');
  let seen = 0;
  for (let i = 0; i < lines.length; i++) if (lines[i].includes(needle) && ++seen === nth) return i + 1;
  throw new Error(`'${needle}' not found`);
}

const brief = (ms: ManualUnroll[]) => ms.map(m => [m.pattern, m.factor, m.line, m.endLine]);

describe('strided-body', () => {
  test('unguarded body with 4 copies, k += 4: factor 4, loop lines, not guarded', async () => {
    const src = `__global__ void k(const float* A, const float* B, float* C, int n, int row, int col) {
  float sum = 0.0f;
  for (int k = 0; k < n; k += 4) {
    sum += A[row * n + k + 0] * B[(k + 0) * n + col];
    sum += A[row * n + k + 1] * B[(k + 1) * n + col];
    sum += A[row * n + k + 2] * B[(k + 2) * n + col];
    sum += A[row * n + k + 3] * B[(k + 3) * n + col];
  }
  C[row * n + col] = sum;
}`;
    const m = await detect(src);
    assert.deepEqual(brief(m), [['strided-body', 4, lineOf(src, 'for ('), lineOf(src, '  }')]]);
    assert.equal(m[0].guarded, false);
    assert.match(m[0].detail, /4 copies of `sum \+= A\[row \* n \+ k \+ j\] \* B\[\(k \+ j\) \* n \+ col\]`, j = 0\.\.3/);
    assert.match(m[0].detail, /no remainder/);
  });

  test('per-copy guards `if (k + j < n)`: guarded, guard shown in the detail', async () => {
    const src = `__global__ void k(const float* A, float* out, int n) {
  float sum = 0.0f;
  for (int k = 0; k < n; k += 4) {
    if (k + 0 < n) sum += A[k + 0];
    if (k + 1 < n) sum += A[k + 1];
    if (k + 2 < n) sum += A[k + 2];
    if (k + 3 < n) sum += A[k + 3];
  }
  out[0] = sum;
}`;
    const m = await detect(src);
    assert.deepEqual(brief(m), [['strided-body', 4, 3, 8]]);
    assert.equal(m[0].guarded, true);
    assert.match(m[0].detail, /each guarded by `if \(k \+ j < n\)`/);
  });

  test('only some copies guarded (first copy needs no check) still counts all copies', async () => {
    const src = `__global__ void k(const float* a, float* out, int n) {
  float s = 0.0f;
  for (int i = 0; i < n; i += 4) {
    s += a[i];
    if (i + 1 < n) s += a[i + 1];
    if (i + 2 < n) s += a[i + 2];
    if (i + 3 < n) s += a[i + 3];
  }
  out[0] = s;
}`;
    const m = await detect(src);
    assert.deepEqual(
      m.map(x => [x.pattern, x.factor, x.guarded]),
      [['strided-body', 4, true]],
    );
  });

  test('remainder loop after the unrolled loop marks it guarded', async () => {
    const src = `__global__ void k(const float* a, float* out, int n) {
  float s = 0.0f;
  int k = 0;
  for (; k + 3 < n; k += 4) {
    s += a[k];
    s += a[k + 1];
    s += a[k + 2];
    s += a[k + 3];
  }
  for (; k < n; ++k) s += a[k];
  out[0] = s;
}`;
    const m = await detect(src);
    assert.deepEqual(brief(m), [['strided-body', 4, 4, 9]]);
    assert.equal(m[0].guarded, true);
    assert.match(m[0].detail, /remainder loop/);
  });

  test('guarded tail `if (k < n)` after the loop also counts as a remainder guard', async () => {
    const src = `__global__ void k(const float* a, float* out, int n) {
  float s = 0.0f;
  int k = 0;
  for (; k + 1 < n; k += 2) {
    s += a[k];
    s += a[k + 1];
  }
  if (k < n) s += a[k];
  out[0] = s;
}`;
    const m = await detect(src);
    assert.deepEqual(
      m.map(x => [x.pattern, x.factor, x.guarded]),
      [['strided-body', 2, true]],
    );
  });

  test('a following loop that restarts the variable is not a remainder; `n - n % 4` start is', async () => {
    const src = `__global__ void k(float* a, const float* b, int n) {
  for (int k = 0; k < n; k += 2) {
    a[k + 0] = b[k + 0];
    a[k + 1] = b[k + 1];
  }
  for (int k = 0; k < 64; k += 2) {
    a[k + 0] = b[k + 0];
    a[k + 1] = b[k + 1];
  }
  for (int j = n - n % 2; j < n; ++j) a[j] = b[j];
}`;
    const m = await detect(src);
    assert.deepEqual(
      m.map(x => [x.pattern, x.factor, x.line, x.guarded]),
      [
        ['strided-body', 2, 2, false],
        ['strided-body', 2, 6, true],
      ],
    );
  });

  test('`k = k + 2` update, step from the constant evaluator `(1 << 1)`', async () => {
    const src = `__global__ void k(float* a, const float* b, int n) {
  for (int k = 0; k < n; k = k + (1 << 1)) {
    a[k] = b[k] * 2.0f;
    a[k + 1] = b[k + 1] * 2.0f;
  }
}`;
    const m = await detect(src);
    assert.deepEqual(
      m.map(x => [x.pattern, x.factor, x.guarded]),
      [['strided-body', 2, false]],
    );
  });

  test('copies of a group of statements (2 statements per copy, 3 copies)', async () => {
    const src = `__global__ void k(const float* x, const float* y, float* out, int n) {
  float s = 0.0f;
  for (int i = 0; i < n; i += 3) {
    float a0 = x[i + 0] * y[i + 0];
    s += a0;
    float a1 = x[i + 1] * y[i + 1];
    s += a1;
    float a2 = x[i + 2] * y[i + 2];
    s += a2;
  }
  out[0] = s;
}`;
    const m = await detect(src);
    assert.deepEqual(brief(m), [['strided-body', 3, 3, 10]]);
  });

  test('stride in units of blockDim.x: i += 4 * blockDim.x with copies at i + j * blockDim.x', async () => {
    const src = `__global__ void k(const float* a, float* out, int n) {
  float s = 0.0f;
  for (int i = threadIdx.x; i < n; i += 4 * blockDim.x) {
    s += a[i];
    s += a[i + blockDim.x];
    s += a[i + 2 * blockDim.x];
    s += a[i + 3 * blockDim.x];
  }
  out[threadIdx.x] = s;
}`;
    const m = await detect(src);
    assert.deepEqual(brief(m), [['strided-body', 4, 3, 8]]);
  });

  test('copies behind a bounds check inside the body (fast path) are guarded', async () => {
    const src = `__global__ void k(const float* a, float* out, int n) {
  float s = 0.0f;
  for (int k = 0; k < n; k += 4) {
    if (k + 3 < n) {
      s += a[k + 0];
      s += a[k + 1];
      s += a[k + 2];
      s += a[k + 3];
    } else {
      for (int j = k; j < n; ++j) s += a[j];
    }
  }
  out[0] = s;
}`;
    const m = await detect(src);
    assert.deepEqual(
      m.map(x => [x.pattern, x.factor, x.guarded, x.line]),
      [['strided-body', 4, true, 3]],
    );
  });

  test('negative: a plain loop stepping by 2 with one statement', async () => {
    const src = `__global__ void k(float* a, int n) {
  for (int i = 0; i < n; i += 2)
    a[i] = 0.0f;
  for (int i = 0; i < n; i += 2) {
    a[i] += 1.0f;
  }
}`;
    assert.deepEqual(await detect(src), []);
  });

  test('negative: step 4 but only 2 copies is not a strided body (reported as a run instead)', async () => {
    const src = `__global__ void k(float* a, const float* b, int n) {
  for (int k = 0; k < n; k += 4) {
    a[k] = b[k];
    a[k + 1] = b[k + 1];
  }
}`;
    const m = await detect(src);
    assert.ok(!m.some(x => x.pattern === 'strided-body'), JSON.stringify(m));
    assert.deepEqual(brief(m), [['offset-run', 2, 3, 4]]);
  });

  test('statements inside a strided body are not reported again as an offset run', async () => {
    const src = `__global__ void k(float* a, const float* b, int n) {
  for (int k = 0; k < n; k += 2) {
    a[k] = b[k];
    a[k + 1] = b[k + 1];
    c[k] = d[2 * k];
    c[k + 1] = d[2 * k + 2];
  }
}`;
    const m = await detect(src);
    assert.deepEqual(
      m.map(x => x.pattern),
      ['strided-body'],
    );
  });
});

describe('offset-run', () => {
  test('loads a1..a4 at idx + j * blockDim.x of a 4-block index are block-level', async () => {
    const src = `__global__ void k(const int* g_idata, int* out, unsigned int n) {
  unsigned int idx = blockIdx.x * blockDim.x * 4 + threadIdx.x;
  int sum = 0;
  if (idx + 3 * blockDim.x < n) {
    int a1 = g_idata[idx];
    int a2 = g_idata[idx + blockDim.x];
    int a3 = g_idata[idx + 2 * blockDim.x];
    int a4 = g_idata[idx + 3 * blockDim.x];
    sum = a1 + a2 + a3 + a4;
  }
  out[blockIdx.x] = sum;
}`;
    const m = await detect(src);
    // the index covers 4 data blocks: block-level names the run (blockLevel.test.ts)
    assert.deepEqual(brief(m), [['block-level', 4, lineOf(src, 'int a1'), lineOf(src, 'int a4')]]);
    assert.match(m[0].detail, /idx \+ k \* blockDim\.x, k = 0…3/);
  });

  test('two copies with a blockDim.x stride of a 2-block index (unroll2) are block-level ×2', async () => {
    const src = `__global__ void k(const int* g, int* out) {
  unsigned int idx = blockIdx.x * blockDim.x * 2 + threadIdx.x;
  int a1 = g[idx];
  int a2 = g[idx + blockDim.x];
  out[idx] = a1 + a2;
}`;
    assert.deepEqual(brief(await detect(src)), [['block-level', 2, 3, 4]]);
  });

  test('2-D index A[2*y+0][x], A[2*y+1][x]', async () => {
    const src = `__global__ void k(float A[64][64], const float* src, int x, int y) {
  A[2*y+0][x] = src[0];
  A[2*y+1][x] = src[1];
}`;
    const m = await detect(src);
    assert.deepEqual(brief(m), [['offset-run', 2, 2, 3]]);
  });

  test('suffixed accumulators sum0..sum3 with stepping indices', async () => {
    const src = `__global__ void k(const float* x, float* out, int i) {
  float sum0 = 0.f, sum1 = 0.f, sum2 = 0.f, sum3 = 0.f;
  sum0 += x[i + 0];
  sum1 += x[i + 1];
  sum2 += x[i + 2];
  sum3 += x[i + 3];
  out[i] = sum0 + sum1 + sum2 + sum3;
}`;
    const m = await detect(src);
    assert.deepEqual(brief(m), [['offset-run', 4, 3, 6]]);
    assert.match(m[0].detail, /sum\{0\.\.3\} \+= x\[i \+ j\]/);
  });

  test('negative: declarations without a stepping offset (`int a = 0; int b = 0;`)', async () => {
    const src = `__global__ void k(int* out) {
  int a = 0;
  int b = 0;
  int c = 0;
  out[0] = a + b + c;
}`;
    assert.deepEqual(await detect(src), []);
  });

  test('negative: identical statements, and a value (not an index) that changes', async () => {
    const src = `__global__ void k(int* out, int x, int y) {
  x = y;
  x = y;
  x = 1;
  x = 2;
  out[0] = x;
}`;
    assert.deepEqual(await detect(src), []);
  });

  test('negative: unrelated statements that only look alike', async () => {
    const src = `__global__ void k(float* a, float* b, int i) {
  a[i] = b[i];
  b[i] = a[i + 1];
  float t = a[i];
  float u = b[i + 4];
  a[i] = t * u;
}`;
    assert.deepEqual(await detect(src), []);
  });

  test('negative: suffixed names alone (accumulator initialisation) are not a run', async () => {
    const src = `__global__ void k(float* out) {
  float s0 = 0.0f;
  float s1 = 0.0f;
  float s2 = 0.0f;
  out[0] = s0 + s1 + s2;
}`;
    assert.deepEqual(await detect(src), []);
  });
});

describe('warp-tail', () => {
  test('classic volatile tail 32..1 inside if (tid < 32): factor 6', async () => {
    const src = `__global__ void k(int* idata, int* out) {
  unsigned int tid = threadIdx.x;
  if (tid < 32) {
    volatile int* vmem = idata;
    vmem[tid] += vmem[tid + 32];
    vmem[tid] += vmem[tid + 16];
    vmem[tid] += vmem[tid + 8];
    vmem[tid] += vmem[tid + 4];
    vmem[tid] += vmem[tid + 2];
    vmem[tid] += vmem[tid + 1];
  }
  if (tid == 0) out[blockIdx.x] = idata[0];
}`;
    const m = await detect(src);
    assert.deepEqual(brief(m), [['warp-tail', 6, lineOf(src, 'tid + 32'), lineOf(src, 'tid + 1]')]]);
    assert.match(m[0].detail, /32, 16, 8, 4, 2, 1/);
  });

  test('tail from 16 with __syncwarp() between steps and per-lane guards: factor 5', async () => {
    const src = `__global__ void k(int* vmem) {
  unsigned int tid = threadIdx.x;
  vmem[tid] += vmem[tid + 16];
  __syncwarp();
  if (tid < 8) vmem[tid] += vmem[tid + 8];
  __syncwarp();
  if (tid < 4) vmem[tid] += vmem[tid + 4];
  __syncwarp();
  if (tid < 2) vmem[tid] += vmem[tid + 2];
  __syncwarp();
  if (tid < 1) vmem[tid] += vmem[tid + 1];
}`;
    const m = await detect(src);
    assert.deepEqual(brief(m), [['warp-tail', 5, 3, 11]]);
  });

  test('shuffle tail val += __shfl_down_sync(mask, val, 16..1): factor 5', async () => {
    const src = `__global__ void k(float* out, float val) {
  val += __shfl_down_sync(0xffffffff, val, 16);
  val += __shfl_down_sync(0xffffffff, val, 8);
  val += __shfl_down_sync(0xffffffff, val, 4);
  val += __shfl_down_sync(0xffffffff, val, 2);
  val += __shfl_down_sync(0xffffffff, val, 1);
  if (threadIdx.x == 0) out[blockIdx.x] = val;
}`;
    const m = await detect(src);
    assert.deepEqual(brief(m), [['warp-tail', 5, 2, 6]]);
    assert.match(m[0].detail, /__shfl_down_sync/);
  });

  test('each step guarded by `if (blockSize >= 64)`: factor 6', async () => {
    const src = `template <unsigned int blockSize>
__global__ void k(volatile float* sdata, unsigned int tid) {
  if (blockSize >= 64) sdata[tid] += sdata[tid + 32];
  if (blockSize >= 32) sdata[tid] += sdata[tid + 16];
  if (blockSize >= 16) sdata[tid] += sdata[tid + 8];
  if (blockSize >= 8) sdata[tid] += sdata[tid + 4];
  if (blockSize >= 4) sdata[tid] += sdata[tid + 2];
  if (blockSize >= 2) sdata[tid] += sdata[tid + 1];
}`;
    assert.deepEqual(brief(await detect(src)), [['warp-tail', 6, 3, 8]]);
  });

  test('`sdata[tid] = sum = sum + sdata[tid + K]` and `v[tid] = v[tid] + v[tid + K]` forms', async () => {
    const src = `__global__ void k(volatile float* sdata, volatile float* v, unsigned int tid, float sum) {
  sdata[tid] = sum = sum + sdata[tid + 32];
  sdata[tid] = sum = sum + sdata[tid + 16];
  sdata[tid] = sum = sum + sdata[tid + 8];
  sdata[tid] = sum = sum + sdata[tid + 4];
  sdata[tid] = sum = sum + sdata[tid + 2];
  sdata[tid] = sum = sum + sdata[tid + 1];
  if (tid < 32) {
    v[tid] = v[tid] + v[tid + 16];
    v[tid] = v[tid] + v[tid + 8];
    v[tid] = v[tid] + v[tid + 4];
    v[tid] = v[tid] + v[tid + 2];
    v[tid] = v[tid] + v[tid + 1];
  }
}`;
    assert.deepEqual(brief(await detect(src)), [
      ['warp-tail', 6, 2, 7],
      ['warp-tail', 5, 9, 13],
    ]);
  });

  test('an in-block tree leading into the warp tail is reported with it', async () => {
    const src = `__global__ void k(int* idata, unsigned int tid) {
  if (tid < 128) idata[tid] += idata[tid + 128];
  __syncthreads();
  if (tid < 64) idata[tid] += idata[tid + 64];
  __syncthreads();
  if (tid < 32) {
    volatile int* vmem = idata;
    vmem[tid] += vmem[tid + 32];
    vmem[tid] += vmem[tid + 16];
    vmem[tid] += vmem[tid + 8];
    vmem[tid] += vmem[tid + 4];
    vmem[tid] += vmem[tid + 2];
    vmem[tid] += vmem[tid + 1];
  }
}`;
    const m = await detect(src);
    assert.deepEqual(brief(m), [['warp-tail', 8, 2, 13]]);
    assert.match(m[0].detail, /128, 64/);
  });

  test('negative: offsets in the wrong order (1, 2, 4, …) are neither a tail nor a run', async () => {
    const src = `__global__ void k(volatile int* v, unsigned int tid) {
  v[tid] += v[tid + 1];
  v[tid] += v[tid + 2];
  v[tid] += v[tid + 4];
  v[tid] += v[tid + 8];
  v[tid] += v[tid + 16];
}`;
    assert.deepEqual(await detect(src), []);
  });
});

describe('coarsening', () => {
  test('r0 = 2 * threadIdx.x with two copies at r0 + 0, r0 + 1: coarsening, not an offset run', async () => {
    const src = `__global__ void k(const float* in, float* out) {
  const int r0 = 2 * threadIdx.x;
  out[r0 + 0] = in[r0 + 0] * 2.0f;
  out[r0 + 1] = in[r0 + 1] * 2.0f;
}`;
    const m = await detect(src);
    assert.deepEqual(brief(m), [['coarsening', 2, 3, 4]]);
    assert.match(m[0].detail, /r0 = 2 \* threadIdx\.x/);
  });

  test('x = 4 * (blockIdx.x * blockDim.x + threadIdx.x) with 4 guarded stores', async () => {
    const src = `__global__ void k(float* out, const float* in, int n) {
  const int x = 4 * (blockIdx.x * blockDim.x + threadIdx.x);
  if (x + 0 < n) out[x + 0] = in[x + 0];
  if (x + 1 < n) out[x + 1] = in[x + 1];
  if (x + 2 < n) out[x + 2] = in[x + 2];
  if (x + 3 < n) out[x + 3] = in[x + 3];
}`;
    assert.deepEqual(brief(await detect(src)), [['coarsening', 4, 3, 6]]);
  });

  test('threadIdx.x * 8 index, suffixed accumulators inside a loop over atoms: one group per run', async () => {
    const src = `__global__ void k(float* grid, const float4* atoms, int natoms, float h) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  int xi = tid * 8;
  float cx = h * xi;
  float e1 = 0.0f, e2 = 0.0f, e3 = 0.0f, e4 = 0.0f, e5 = 0.0f, e6 = 0.0f, e7 = 0.0f, e8 = 0.0f;
  for (int a = 0; a < natoms; a++) {
    float4 at = atoms[a];
    float dx = cx - at.x;
    e1 += at.w * rsqrtf(dx * dx);
    e2 += at.w * rsqrtf((dx + h) * (dx + h));
    e3 += at.w * rsqrtf((dx + 2 * h) * (dx + 2 * h));
    e4 += at.w * rsqrtf((dx + 3 * h) * (dx + 3 * h));
    e5 += at.w * rsqrtf((dx + 4 * h) * (dx + 4 * h));
    e6 += at.w * rsqrtf((dx + 5 * h) * (dx + 5 * h));
    e7 += at.w * rsqrtf((dx + 6 * h) * (dx + 6 * h));
    e8 += at.w * rsqrtf((dx + 7 * h) * (dx + 7 * h));
  }
  grid[xi + 0] = e1;
  grid[xi + 1] = e2;
  grid[xi + 2] = e3;
  grid[xi + 3] = e4;
  grid[xi + 4] = e5;
  grid[xi + 5] = e6;
  grid[xi + 6] = e7;
  grid[xi + 7] = e8;
}`;
    const m = await detect(src);
    assert.deepEqual(brief(m), [
      ['coarsening', 8, lineOf(src, 'e1 += '), lineOf(src, 'e8 += ')],
      ['coarsening', 8, lineOf(src, 'grid[xi + 0]'), lineOf(src, 'grid[xi + 7]')],
    ]);
  });

  test('index written in place: out[4 * threadIdx.x + j]', async () => {
    const src = `__global__ void k(float* out, float v) {
  out[4 * threadIdx.x + 0] = v;
  out[4 * threadIdx.x + 1] = v;
  out[4 * threadIdx.x + 2] = v;
  out[4 * threadIdx.x + 3] = v;
}`;
    assert.deepEqual(brief(await detect(src)), [['coarsening', 4, 2, 5]]);
  });

  test('a run shorter than the coarsening factor stays an offset run', async () => {
    const src = `__global__ void k(float* out, const float* in) {
  int x = 4 * threadIdx.x;
  out[x + 0] = in[x + 0];
  out[x + 1] = in[x + 1];
}`;
    assert.deepEqual(brief(await detect(src)), [['offset-run', 2, 3, 4]]);
  });

  test('factor 1 (`1 * threadIdx.x`) is not coarsening', async () => {
    const src = `__global__ void k(float* out, const float* in) {
  const int r0 = 1 * threadIdx.x;
  out[r0 + 0] = in[r0 + 0];
}`;
    assert.deepEqual(await detect(src), []);
  });
});

describe('multi-declarator', () => {
  test('float a0 = g[i], a1 = g[i + s], a2 = g[i + 2*s], a3 = g[i + 3*s]: ×4 on the declaration line', async () => {
    const src = `__global__ void k(const float* g, float* out, int s) {
  int i = blockIdx.x;
  float a0 = g[i], a1 = g[i + s], a2 = g[i + 2*s], a3 = g[i + 3*s];
  out[i] = a0 + a1 + a2 + a3;
}`;
    const m = await detect(src);
    assert.deepEqual(brief(m), [['multi-declarator', 4, 3, 3]]);
    assert.match(m[0].detail, /one declaration with 4 declarators \(`a0` … `a3`\) loading `g\[i\]` … `g\[i \+ 3\*s\]` \(per copy: \+s\)/);
  });

  test('constant offsets give a template; the longest uniform stretch of declarators counts', async () => {
    const src = `__global__ void k(const float* x, float* out) {
  float n = 4.0f, x0 = x[0], x1 = x[1], x2 = x[2];
  out[0] = (x0 + x1 + x2) / n;
}`;
    const m = await detect(src);
    assert.deepEqual(brief(m), [['multi-declarator', 3, 2, 2]]);
    assert.match(m[0].detail, /loading `x\[j\]`, j = 0\.\.2/);
  });

  test('negative: unrelated declarators, values that are not loads, names that do not step', async () => {
    const src = `__global__ void k(const float* p, const unsigned long long* h, float* out, int i, int t) {
  int a = 0, b = 1;
  int a0 = 0, a1 = 1, a2 = 2;
  int lo = i, hi = i + 1;
  unsigned long long u = h[2 * t], v = h[2 * t + 1];
  float x = p[0], y = p[1], z = p[2];
  float f0 = p[i], f1 = p[t];
  out[i] = a + b + a0 + a1 + a2 + lo + hi + u + v + x + y + z + f0 + f1;
}`;
    assert.deepEqual(await detect(src), []);
  });

  test('negative: struct initialisers and a declaration with one declarator', async () => {
    const src = `struct P { float a, b; };
__global__ void k(const float* g, float* out, int i) {
  P p = {g[i], g[i + 1]};
  float2 q = make_float2(g[i], g[i + 1]);
  float r0 = g[i];
  out[i] = p.a + q.y + r0;
}`;
    assert.deepEqual(await detect(src.split('\n').slice(1).join('\n')), []);
  });
});

describe('element-assignments', () => {
  test('v[0] = x[i]; … v[3] = x[i + 3] on one line: ×4', async () => {
    const src = `__global__ void k(const float* x, float* out, int i) {
  float v[4];
  v[0] = x[i]; v[1] = x[i + 1]; v[2] = x[i + 2]; v[3] = x[i + 3];
  out[i] = v[0] * v[3];
}`;
    const m = await detect(src);
    assert.deepEqual(brief(m), [['element-assignments', 4, 3, 3]]);
    assert.match(m[0].detail, /assigning elements of `v`/);
  });

  test('with a stride (x[i + j*s]) on separate lines, and v[j] = f(a[j])', async () => {
    const src = `__global__ void k(const float* x, const float* a, float* out, int i, int s) {
  float v[4], w[3];
  v[0] = x[i];
  v[1] = x[i + s];
  v[2] = x[i + 2 * s];
  v[3] = x[i + 3 * s];
  out[i] = v[0] + v[3];
  w[0] = sqrtf(a[0]); w[1] = sqrtf(a[1]); w[2] = sqrtf(a[2]);
  out[i + 1] = w[0] + w[2];
}`;
    const m = await detect(src);
    assert.deepEqual(brief(m), [
      ['element-assignments', 4, 3, 6],
      ['element-assignments', 3, 8, 8],
    ]);
    assert.match(m[1].detail, /3 copies of `w\[j\] = sqrtf\(a\[j\]\)`, j = 0\.\.2/);
  });

  test('negative: zeroing an array is not element assignments (a constant value stays an offset run)', async () => {
    const src = `__global__ void k(float* out) {
  float v[4];
  v[0] = 0.0f; v[1] = 0.0f; v[2] = 0.0f; v[3] = 0.0f;
  out[0] = v[0];
}`;
    assert.ok(!(await detect(src)).some(m => m.pattern === 'element-assignments'));
  });

  test('negative: stores at a computed index stay an offset run; fields of a struct are not copies', async () => {
    const src = `struct S { float x, y; };
__global__ void k(float* a, const float* b, const float* g, S* s, int k2) {
  a[k2] = b[k2];
  a[k2 + 1] = b[k2 + 1];
  s->x = g[0];
  s->y = g[1];
}`;
    const m = await detect(src.split('\n').slice(1).join('\n'));
    assert.deepEqual(brief(m), [['offset-run', 2, 2, 3]]);
  });
});

describe('accumulate-chain', () => {
  test('sum += a[i]; … sum += a[i + 3]: ×4 into one target', async () => {
    const src = `__global__ void k(const float* a, float* out, int i) {
  float sum = 0.0f;
  sum += a[i]; sum += a[i + 1]; sum += a[i + 2]; sum += a[i + 3];
  out[0] = sum;
}`;
    const m = await detect(src);
    assert.deepEqual(brief(m), [['accumulate-chain', 4, 3, 3]]);
    assert.match(m[0].detail, /accumulating into `sum`/);
  });

  test('accumulator array acc[j] += a[k] * b[j], and m = fmaxf(m, a[i + j])', async () => {
    const src = `__global__ void k(const float* a, const float* b, float* out, int k, int i) {
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  acc[0] += a[k] * b[0];
  acc[1] += a[k] * b[1];
  acc[2] += a[k] * b[2];
  acc[3] += a[k] * b[3];
  float m = -1e30f;
  m = fmaxf(m, a[i]);
  m = fmaxf(m, a[i + 1]);
  m = fmaxf(m, a[i + 2]);
  out[0] = acc[0] + acc[3] + m;
}`;
    const m = await detect(src);
    assert.deepEqual(brief(m), [
      ['accumulate-chain', 4, 3, 6],
      ['accumulate-chain', 3, 8, 10],
    ]);
    assert.match(m[0].detail, /accumulating into `acc\[0\]` … `acc\[3\]`/);
    assert.match(m[1].detail, /accumulating into `m`/);
  });

  test('negative: a value (not an index) that changes, and suffixed accumulators stay an offset run', async () => {
    const src = `__global__ void k(const float* x, float* out, int i) {
  float s = 0.0f;
  s += 1.0f;
  s += 2.0f;
  s += 3.0f;
  float sum0 = 0.f, sum1 = 0.f;
  sum0 += x[i + 0];
  sum1 += x[i + 1];
  out[i] = s + sum0 + sum1;
}`;
    assert.deepEqual(brief(await detect(src)), [['offset-run', 2, 7, 8]]);
  });
});

describe('expression-sum', () => {
  test('sum += a[i] + a[i+1] + a[i+2] + a[i+3], and a dot product in a declaration', async () => {
    const src = `__global__ void k(const float* a, const float* x, const float* y, float* out, int i) {
  float sum = 0.0f;
  sum += a[i] + a[i+1] + a[i+2] + a[i+3];
  float s = x[0]*y[0] + x[1]*y[1] + x[2]*y[2] + x[3]*y[3];
  out[0] = sum + s;
}`;
    const m = await detect(src);
    assert.deepEqual(brief(m), [
      ['expression-sum', 4, 3, 3],
      ['expression-sum', 4, 4, 4],
    ]);
    assert.match(m[1].detail, /from `x\[0\]\*y\[0\]` to `x\[3\]\*y\[3\]`/);
  });

  test('a pairwise tree (a[0] + a[1]) + (a[2] + a[3]), a sum after a bias term, and 2 terms as the whole `+=`', async () => {
    const src = `__global__ void k(const float* a, float* out, float bias, int k) {
  float t = (a[0] + a[1]) + (a[2] + a[3]);
  float u = bias + a[k] + a[k + 2] + a[k + 4];
  float w = 0.0f;
  w += a[k] + a[k + 1];
  out[0] = t + u + w;
}`;
    assert.deepEqual(brief(await detect(src)), [
      ['expression-sum', 4, 2, 2],
      ['expression-sum', 3, 3, 3],
      ['expression-sum', 2, 5, 5],
    ]);
  });

  test('the whole body of a loop without braces (a strided loop summing its copies in one statement)', async () => {
    const src = `__global__ void k(const float* a, float* out, int n) {
  float sum = 0.0f;
  for (int k = 0; k + 3 < n; k += 4) sum += a[k] + a[k + 1] + a[k + 2] + a[k + 3];
  out[0] = sum;
}`;
    assert.deepEqual(brief(await detect(src)), [['expression-sum', 4, 3, 3]]);
  });

  test('negative: two-term sums, weighted stencils, sums of registers, element-wise adds', async () => {
    const src = `__global__ void k(const float* a, const float* b, const float* u, float* out, int i) {
  float avg = 0.5f * (a[i] + a[i + 1]);
  float len = a[0] * a[0] + a[1] * a[1];
  float lap = u[i - 1] - 2.0f * u[i] + u[i + 1];
  float a1 = a[i], a2 = b[i], a3 = u[i];
  float r = a1 + a2 + a3;
  out[i] = a[i] + b[i];
  out[i] += a[i] + b[i];
  out[i + 1] = avg + len + lap + r + a[i + 2] + b[i + 3] + u[i + 4];
}`;
    assert.deepEqual(await detect(src), []);
  });
});

describe('vector-load', () => {
  test('float4 v = reinterpret_cast<const float4*>(p)[i]; s += v.x; … s += v.w: ×4 with the vector type', async () => {
    const src = `__global__ void k(const float* p, float* out, int i) {
  float4 v = reinterpret_cast<const float4*>(p)[i];
  float s = 0.0f;
  s += v.x; s += v.y;
  s += v.z; s += v.w;
  out[i] = s;
}`;
    const m = await detect(src);
    assert.deepEqual(brief(m), [['vector-load', 4, 2, 5]]);
    assert.equal(m[0].vectorType, 'float4');
    assert.match(
      m[0].detail,
      /one `float4` load of 4 elements, `reinterpret_cast<const float4\*>\(p\)\[i\]`, then v\.x, v\.y, v\.z, v\.w used/,
    );
    assert.equal(describeManualUnroll(m[0]), 'manual unroll ×4 (vector-load, float4)');
  });

  test('*reinterpret_cast<const float4*>(&p[4*i]), int4, __ldg of a float2, a C-style cast, a cast pointer variable', async () => {
    const src = `__global__ void k(const float* p, const int* q, float* out, int i) {
  const float4 v = *reinterpret_cast<const float4*>(&p[4 * i]);
  out[i] = v.x + v.y + v.z + v.w;
  int4 w = reinterpret_cast<const int4*>(q)[i];
  out[i + 1] = w.x * w.y + w.z * w.w;
  float2 h = __ldg(reinterpret_cast<const float2*>(p) + i);
  out[i + 2] = h.x - h.y;
  float2 c = *((const float2*)p + i);
  out[i + 3] = c.x * c.y;
  const float4* p4 = reinterpret_cast<const float4*>(p);
  auto z = p4[i + 1];
  float4 y = __ldg(&p4[i + 2]);
  out[i + 4] = y.x + y.y + y.z + y.w + z.x;
}`;
    const m = await detect(src);
    assert.deepEqual(
      m.map(x => [x.pattern, x.factor, x.vectorType, x.line, x.endLine]),
      [
        ['vector-load', 4, 'float4', 2, 3],
        ['vector-load', 4, 'int4', 4, 5],
        ['vector-load', 2, 'float2', 6, 7],
        ['vector-load', 2, 'float2', 8, 9],
        ['vector-load', 4, 'float4', 12, 13],
      ],
    );
    assert.match(m[4].detail, /`p4` is a cast pointer/);
  });

  test('the stores that use the components are part of the load, not a second finding', async () => {
    const src = `__global__ void k(const float* p, float* out, int i) {
  float4 v = reinterpret_cast<const float4*>(p)[i];
  out[4 * i + 0] = v.x;
  out[4 * i + 1] = v.y;
  out[4 * i + 2] = v.z;
  out[4 * i + 3] = v.w;
}`;
    assert.deepEqual(brief(await detect(src)), [['vector-load', 4, 2, 6]]);
  });

  test('negative: a zero vector set component by component, a vector-typed pointer, a partial use, the cast pointer itself', async () => {
    const src = `__global__ void k(const float* p, const float4* in4, float4* o4, float* out, int i) {
  float4 z;
  z.x = 0.0f; z.y = 0.0f; z.z = 0.0f; z.w = 0.0f;
  float4 t = make_float4(0.f, 0.f, 0.f, 0.f);
  t.x = 1.0f; t.y = 1.0f; t.z = 1.0f; t.w = 1.0f;
  float4 a = in4[i];
  out[i] = a.x + a.y + a.z + a.w;
  float4 b = reinterpret_cast<const float4*>(p)[i];
  out[i + 1] = b.x + b.y;
  auto q = reinterpret_cast<const float4*>(p);
  out[i + 2] = q->x + q->y + q->z + q->w;
  o4[i] = z;
  o4[i + 1] = t;
}`;
    assert.deepEqual(await detect(src), []);
  });
});

describe('results and robustness', () => {
  test('results are sorted by line, one per region, several patterns in one function', async () => {
    const src = `__global__ void k(const int* g, int* idata, float* o, int n) {
  unsigned int tid = threadIdx.x;
  unsigned int idx = blockIdx.x * blockDim.x * 2 + threadIdx.x;
  int a1 = g[idx];
  int a2 = g[idx + blockDim.x];
  idata[tid] = a1 + a2;
  for (int k = 0; k < n; k += 2) {
    o[k] = 0.0f;
    o[k + 1] = 0.0f;
  }
  if (tid < 32) {
    volatile int* vmem = idata;
    vmem[tid] += vmem[tid + 32];
    vmem[tid] += vmem[tid + 16];
    vmem[tid] += vmem[tid + 8];
    vmem[tid] += vmem[tid + 4];
    vmem[tid] += vmem[tid + 2];
    vmem[tid] += vmem[tid + 1];
  }
}`;
    const m = await detect(src);
    assert.deepEqual(brief(m), [
      ['block-level', 2, 4, 5],
      ['strided-body', 2, 7, 10],
      ['warp-tail', 6, 13, 18],
    ]);
    for (let i = 1; i < m.length; i++) assert.ok(m[i - 1].line <= m[i].line);
  });

  test('pair results shared between the functions of one file keep their own offsets', async () => {
    const src = `__global__ void a(volatile int* v, int t) {
  v[t] += v[t + 32];
  v[t] += v[t + 16];
  v[t] += v[t + 8];
  v[t] += v[t + 4];
  v[t] += v[t + 2];
  v[t] += v[t + 1];
}
__global__ void b(volatile int* v, int t) {
  v[t] += v[t + 48];
  v[t] += v[t + 32];
  v[t] += v[t + 16];
  v[t] += v[t + 8];
  v[t] += v[t + 4];
  v[t] += v[t + 2];
  v[t] += v[t + 1];
}
__global__ void c(float* out, float x) {
  out[4 * threadIdx.x + 0] = x;
  out[4 * threadIdx.x + 1] = x;
}
__global__ void d(float* out, float x) {
  out[2 * threadIdx.x + 0] = x;
  out[2 * threadIdx.x + 1] = x;
}`;
    const tree = (await parser()).parse(src);
    assert.ok(tree);
    const bodies = tree.rootNode.descendantsOfType('function_definition').map(f => f!.childForFieldName('body')!);
    const results = bodies.map(b => brief(findManualUnrolls(b, evalConst)));
    assert.deepEqual(results, [
      [['warp-tail', 6, 2, 7]],
      [['warp-tail', 6, 11, 16]], // 48 → 32 is not a halving step
      [['offset-run', 2, 19, 20]], // 4 * threadIdx.x with 2 copies: not a ×4 coarsening
      [['coarsening', 2, 23, 24]],
    ]);
  });

  test('describeManualUnroll gives a one-line summary', () => {
    assert.equal(
      describeManualUnroll({ line: 1, endLine: 5, pattern: 'strided-body', factor: 4, guarded: true, detail: '' }),
      'manual unroll ×4 (strided-body, guarded)',
    );
    assert.equal(
      describeManualUnroll({ line: 1, endLine: 6, pattern: 'warp-tail', factor: 6, detail: '' }),
      'manual unroll ×6 (warp-tail)',
    );
    assert.equal(
      describeManualUnroll({ line: 1, endLine: 2, pattern: 'offset-run', factor: 2, guarded: false, detail: '' }),
      'manual unroll ×2 (offset-run)',
    );
  });

  test('every pattern has a hover sentence; the hover names the pattern and the vector type', () => {
    const patterns: ManualUnroll['pattern'][] = [
      'strided-body',
      'offset-run',
      'warp-tail',
      'coarsening',
      'multi-declarator',
      'element-assignments',
      'accumulate-chain',
      'expression-sum',
      'vector-load',
      'block-level',
    ];
    for (const p of patterns) assert.ok(MANUAL_UNROLL_PATTERN_TEXT[p].length > 20, p);
    const kernel = { name: 'k', qualifier: 'global', templateParameters: [] } as unknown as Kernel;
    const md = manualUnrollHoverMarkdown(kernel, {
      line: 3,
      endLine: 3,
      pattern: 'multi-declarator',
      factor: 4,
      detail: 'one declaration with 4 declarators (`a0` … `a3`) loading `g[i]` … `g[i + 3*s]` (per copy: +s)',
    });
    assert.match(md, /manual unroll ×4 \(multi-declarator\) — one declaration with several declarators/);
    assert.match(md, /Lines 3–3 in `__global__ k`: one declaration with 4 declarators/);
    const v = manualUnrollSummary({ line: 1, endLine: 2, pattern: 'vector-load', factor: 2, vectorType: 'float2', detail: '' });
    assert.equal(v, 'manual unroll ×2 (vector-load, float2)');
  });

  test('missing closing braces: no throw, the copies before the break are still found', async () => {
    const src = `__global__ void k(const int* g, int* out) {
  unsigned int idx = blockIdx.x * blockDim.x * 4 + threadIdx.x;
  int a1 = g[idx];
  int a2 = g[idx + blockDim.x];
  int a3 = g[idx + 2 * blockDim.x];
  int a4 = g[idx + 3 * blockDim.x];
  for (int k = 0; k < 8; k += 2) {
    out[k] = a1;
`;
    const m = await detect(src);
    assert.ok(Array.isArray(m));
    assert.ok(
      m.some(x => x.pattern === 'block-level' && x.factor === 4),
      JSON.stringify(m),
    );
  });

  test('half-typed statements and ERROR nodes never throw', async () => {
    const snippets = [
      `__global__ void k(float* a, int n) { for (int k = 0; k < n; k += 4 { a[k] = a[k + ; a[k + 1] = }`,
      `__global__ void k(float* a) { a[0] = ; a[1] = ; a[2] = ; }`,
      `__global__ void k(float* a) { int a1 = a[idx]\n int a2 = a[idx + blockDim.x]\n int a3 = a[idx + 2 * ]; }`,
      `__global__ void k(volatile int* v, int tid) { v[tid] += v[tid + 32]; v[tid] += v[tid + ]; v[tid] += v[tid + 8]; )) }`,
      `__global__ void k() { for (;;) { if ( { } } } } }`,
      `__global__ void k() {`,
      `__global__ void k() { int r0 = 4 * threadIdx.; out[r0 + 0] = 1; out[r0 + 1] = 1; out[r0 + 2] = `,
    ];
    for (const s of snippets) {
      const m = await detect(s);
      assert.ok(Array.isArray(m), s);
      for (const x of m) assert.ok(x.line >= 1 && x.endLine >= x.line && x.factor >= 2, JSON.stringify(x));
    }
  });

  test('every prefix of a kernel (typing it in) analyses without throwing', async () => {
    const full = `__global__ void k(const float* A, float* C, const int* g, int n) {
  const int x = 4 * (blockIdx.x * blockDim.x + threadIdx.x);
  float sum = 0.0f;
  for (int k = 0; k < n; k += 4) {
    if (k + 0 < n) sum += A[x + k + 0];
    if (k + 1 < n) sum += A[x + k + 1];
    if (k + 2 < n) sum += A[x + k + 2];
    if (k + 3 < n) sum += A[x + k + 3];
  }
  C[x + 0] = sum;
  C[x + 1] = sum;
  C[x + 2] = sum;
  C[x + 3] = sum;
  sum += __shfl_down_sync(0xffffffff, sum, 4);
  sum += __shfl_down_sync(0xffffffff, sum, 2);
  sum += __shfl_down_sync(0xffffffff, sum, 1);
}`;
    for (let i = 0; i <= full.length; i += 5) await detect(full.slice(0, i));
    const m = await detect(full);
    assert.deepEqual(
      m.map(x => [x.pattern, x.factor]),
      [
        ['strided-body', 4],
        ['coarsening', 4],
        ['warp-tail', 3],
      ],
    );
  });

  test('an evaluator that throws is tolerated', async () => {
    const src = `__global__ void k(float* a, int n) {
  for (int k = 0; k < n; k += 2) {
    a[k] = 0.0f;
    a[k + 1] = 0.0f;
  }
}`;
    const m = await detect(src, () => {
      throw new Error('boom');
    });
    assert.ok(Array.isArray(m));
  });

  test('long inputs stay linear: 3,000 statements and a 2,000-copy run', async () => {
    const lines: string[] = [];
    for (let i = 0; i < 1000; i++) {
      lines.push(`  float t${i} = a[i${i} * 3] + b[${i}];`);
      lines.push(`  if (x > ${i}) c[x] = d[x * ${i}];`);
      lines.push(`  acc += foo(t${i}, ${i});`);
    }
    const mixed = `__global__ void k(float* a, float* b, float* c, float* d, int x) {\n  float acc = 0.0f;\n${lines.join('\n')}\n}`;
    let run = '';
    for (let j = 0; j < 2000; j++) run += `  out[idx + ${j}] = in[idx + ${j}];\n`;
    const long = `__global__ void k(float* out, const float* in, int idx) {\n${run}}`;
    const t0 = performance.now();
    await detect(mixed);
    const m = await detect(long);
    const ms = performance.now() - t0;
    assert.deepEqual(
      m.map(x => [x.pattern, x.factor, x.line, x.endLine]),
      [['offset-run', 2000, 2, 2001]],
    );
    assert.ok(ms < 5000, `took ${ms.toFixed(0)} ms`);
  });
});

describe('cuda-samples', () => {
  async function sampleKernels(file: string): Promise<Map<string, ManualUnroll[]>> {
    const src = fs.readFileSync(path.join(SAMPLES, file), 'utf8');
    const tree = (await parser()).parse(src);
    assert.ok(tree);
    const out = new Map<string, ManualUnroll[]>();
    for (const fn of tree.rootNode.descendantsOfType('function_definition')) {
      if (!fn) continue;
      const body = fn.childForFieldName('body');
      const decl = fn.childForFieldName('declarator');
      const name = decl?.childForFieldName('declarator')?.text ?? '';
      if (body && name) out.set(name, findManualUnrolls(body, evalConst));
    }
    return out;
  }
  const has = (file: string) => fs.existsSync(path.join(SAMPLES, file));
  const summary = (ms: ManualUnroll[] | undefined) => (ms ?? []).map(m => [m.pattern, m.factor, m.guarded ?? null]);

  test('matmul_unroll.cu: guarded strided bodies ×2/4/8/16 and the unguarded ×4', { skip: !has('matmul_unroll.cu') }, async () => {
    const k = await sampleKernels('matmul_unroll.cu');
    for (const u of [2, 4, 8, 16]) assert.deepEqual(summary(k.get(`matmul_unroll${u}`)), [['strided-body', u, true]], `matmul_unroll${u}`);
    assert.deepEqual(summary(k.get('matmul_unroll4_noguard')), [['strided-body', 4, false]]);
    assert.deepEqual(summary(k.get('matmul_basic')), []);
    assert.deepEqual(summary(k.get('matmul_pragma')), []);
    for (const [name, ms] of k) if (!name.startsWith('matmul_')) assert.deepEqual(ms, [], name);
  });

  test('reduce_unroll.cu: unroll2/4/8 block-level runs (grid / N) and the warp tails', { skip: !has('reduce_unroll.cu') }, async () => {
    const k = await sampleKernels('reduce_unroll.cu');
    const pf = (name: string) => (k.get(name) ?? []).map(m => [m.pattern, m.factor]);
    assert.deepEqual(pf('reduce_interleaved'), []);
    assert.deepEqual(pf('reduce_unroll2'), [['block-level', 2]]);
    assert.deepEqual(pf('reduce_unroll4'), [['block-level', 4]]);
    assert.deepEqual(pf('reduce_unroll8'), [['block-level', 8]]);
    assert.deepEqual(pf('reduce_unroll8_warptail'), [
      ['block-level', 8],
      ['warp-tail', 6],
    ]);
    // the template's in-block tree 512..64 runs straight into the 32..1 warp tail
    assert.deepEqual(pf('reduce_complete'), [
      ['block-level', 8],
      ['warp-tail', 10],
    ]);
  });

  test('coarsening.cu: every copied group of gj_rowsN / potential_ptsN is coarsening ×N', { skip: !has('coarsening.cu') }, async () => {
    const k = await sampleKernels('coarsening.cu');
    for (const n of [1, 2, 4, 8]) {
      for (const [name, groups] of [
        [`gj_rows${n}`, 3],
        [`potential_pts${n}`, 5],
      ] as const) {
        const ms = k.get(name) ?? [];
        if (n === 1) {
          assert.deepEqual(ms, [], name);
          continue;
        }
        assert.equal(ms.length, groups, `${name}: ${JSON.stringify(brief(ms))}`);
        for (const m of ms) {
          assert.equal(m.pattern, 'coarsening', name);
          assert.equal(m.factor, n, name);
          assert.equal(m.endLine - m.line + 1, n, `${name}: one line per copy`);
        }
      }
    }
    assert.deepEqual(k.get('gj_load'), []);
  });

  test('pragma-only samples have no manual unrolls', async () => {
    for (const file of ['matvec.cu', 'linear_small.cu', 'icache_cliff.cu'].filter(has)) {
      for (const [name, ms] of await sampleKernels(file)) assert.deepEqual(ms, [], `${file}: ${name}`);
    }
  });
});
