// A device function the scan cannot read is named (file, line, name, why), never dropped
// silently; a qualifier macro on the line before `template <…>` keeps its function.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import fc from 'fast-check';
import { analyze, documents, kernel, lineOf, REPO_ROOT } from './helpers';
import { functionDefinitions, Ranges } from '../../src/engine/parse/unparsedFunctions';
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

describe('the lookups behind the lost-function search (issue 41: a keystroke with a syntax error)', () => {
  // every tracked CUDA file, whole and with characters typed that break it, against a full walk
  test('functionDefinitions holds exactly the offsets every function_definition does', async () => {
    const files = execFileSync('git', ['ls-files', '*.cu', '*.cuh'], { cwd: REPO_ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);
    const docs = await documents();
    let trees = 0;
    for (const f of files) {
      const src = fs.readFileSync(path.join(REPO_ROOT, f), 'utf8');
      for (const at of [-1, Math.floor(src.length / 3), Math.floor((src.length * 2) / 3)]) {
        const text = at < 0 ? src : src.slice(0, at) + ') x {' + src.slice(at);
        docs.open('t.cu', text);
        const root = docs.tree('t.cu')!.rootNode;
        const every = root.descendantsOfType('function_definition').flatMap(n => (n ? [{ start: n.startIndex, end: n.endIndex }] : []));
        const outer = functionDefinitions(root);
        const a = new Ranges(every);
        const b = new Ranges(outer);
        for (const r of [...every, ...outer])
          for (const x of [r.start - 1, r.start, r.end - 1, r.end]) assert.equal(b.has(x), a.has(x), `${f} (${at}): offset ${x}`);
        assert.ok(
          outer.every(o => every.some(e => e.start === o.start && e.end === o.end)),
          `${f}: only function_definitions`,
        );
        docs.close('t.cu');
        trees++;
      }
    }
    assert.ok(trees > 30, `${trees} trees`);
  });

  test('Ranges.has answers as a search of every range does, nested and overlapping ones too', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(300), fc.nat(60))), fc.array(fc.integer({ min: -5, max: 370 })), (pairs, probes) => {
        const ranges = pairs.map(([s, n]) => ({ start: s, end: s + n }));
        const r = new Ranges(ranges);
        for (const at of probes)
          assert.equal(
            r.has(at),
            ranges.some(x => x.start <= at && at < x.end),
            `${at}`,
          );
      }),
    );
  });
});
