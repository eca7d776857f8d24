// A device function the scan cannot read is named (file, line, name, why), never dropped
// silently; a qualifier macro on the line before `template <…>` keeps its function.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, kernel, lineOf } from './helpers';
import { computeFindings } from '../../src/engine/parse/findings';
import { toScanJson } from '../../src/engine/parse/scan';

describe('functions the scan cannot read', () => {
  test('a qualifier macro on the line before `template <…>` qualifies the function after it', async () => {
    const src = `CUTLASS_HOST_DEVICE
template <typename T>
T simd_add(T a) {
  T r = a;
  CUTLASS_PRAGMA_UNROLL
  for (int i = 0; i < 4; ++i) r += a;
  return r;
}
`;
    const a = await analyze(src, 'simd.h');
    const k = kernel(a, 'simd_add');
    assert.equal(k.qualifier, 'device');
    assert.deepEqual(k.qualifierMacros, ['CUTLASS_HOST_DEVICE']);
    assert.deepEqual(
      k.loops.map(l => [l.line, l.pragma?.kind, l.tripCount]),
      [[6, 'full', 4]],
    );
    assert.equal(a.hasSyntaxErrors, false);
    assert.equal(a.unparsedFunctions, undefined);
  });

  test('a device function lost to a syntax error is named with its line and the error', async () => {
    // Two project macros invoked without `;` before the head (defined in a header the scan
    // could not read): the grammar keeps `__global__` in an ERROR node and reads the rest as a
    // host function.
    const src = `__device__ int fine(int x) {
#pragma unroll
  for (int i = 0; i < 4; ++i) x += i;
  return x;
}
DECLARE_TABLE(uint8_t, kvalues) REGISTER_OP(lost)
__global__ void lost_kernel(int * out, int n) {
#pragma unroll
  for (int i = 0; i < 4; ++i) out[i] = n;
}
`;
    const a = await analyze(src, 'lost.cu');
    assert.ok(a.hasSyntaxErrors);
    assert.ok(!a.kernels.some(k => k.name === 'lost_kernel'), 'the test needs a function the grammar loses');
    assert.deepEqual(
      a.unparsedFunctions?.map(u => [u.name, u.line]),
      [['lost_kernel', lineOf(src, '__global__ void lost_kernel')]],
    );
    assert.match(a.unparsedFunctions![0].reason, /syntax error at line \d+/);
    const f = computeFindings(a).find(x => x.code === 'unparsed-function');
    assert.ok(f);
    assert.equal(f.severity, 'warning');
    assert.match(f.message, /`lost_kernel` could not be read: .*not analysed/);
    const json = toScanJson([a]);
    assert.deepEqual(
      json.files[0].unparsedFunctions?.map(u => u.name),
      ['lost_kernel'],
    );
  });

  test('declarations, variables, lambdas and functions that parse are not reported', async () => {
    const src = `__device__ int declared(int x);
__device__ __constant__ float table[4] = {1, 2, 3, 4};
__device__ int counter = init(3);
void host(int * d, int n) {
  auto body = [=] __device__ (int i) { d[i] = i; };
  run(body, n);
}
__device__ int fine(int x) { return ((x + 1); }
`;
    const a = await analyze(src, 'ok.cu');
    assert.ok(a.hasSyntaxErrors);
    assert.equal(a.unparsedFunctions, undefined, JSON.stringify(a.unparsedFunctions));
  });

  test('a definition behind a macro whose header was not read, its head unparsable and an unroll pragma in its body, is named with the macro', async () => {
    const src = `template <typename P, int N>
__launch_bounds__(int(P::threads))
  LIB_KERNEL_ATTRS void lost_kernel(int* a, int n)
{
  #pragma unroll
  for (int i = 0; i < N; ++i) a[i] = 0;
}
LIB_HOST_API void host_helper(int* a) { a[0] = 1; }
LIB_HOST_API void host_with_error(int* a) { a[0] = ((1; }
`;
    const a = await analyze(src, 'lib.cuh');
    assert.ok(a.hasSyntaxErrors);
    assert.deepEqual(
      a.unparsedFunctions?.map(u => [u.name, u.line]),
      [['lost_kernel', lineOf(src, 'lost_kernel')]],
    );
    assert.match(a.unparsedFunctions![0].reason, /LIB_KERNEL_ATTRS before it is a macro whose definition was not read/);
  });
});
