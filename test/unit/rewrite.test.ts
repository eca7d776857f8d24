import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from './helpers';
import {
  makeVariantSource,
  parseFactorList,
  variantKey,
  writtenFactor,
  VariantError,
  UnrollFactor,
} from '../../src/engine/variants/rewrite';

const SRC = `__global__ void k(float* a, int n) {
  #pragma unroll 4
  for (int i = 0; i < n; ++i) a[i] = 0;
  for (int j = 0; j < n; ++j) a[j] += 1;
  _Pragma("unroll") for (int m = 0; m < 8; ++m) a[m] *= 2;
}
`;

describe('variant sources', () => {
  test('lines never move; #line names the original file', async () => {
    const a = await analyze(SRC);
    for (const f of ['default', 1, 2, 'full'] as const) {
      const out = makeVariantSource(
        SRC,
        a,
        new Map<number, UnrollFactor>([
          [3, f],
          [4, f],
          [5, f],
        ]),
        '/abs/k.cu',
      );
      const lines = out.split('\n');
      assert.equal(lines[0], '#line 1 "/abs/k.cu"');
      assert.equal(lines.length - 1, SRC.split('\n').length, 'same line count after the #line directive');
      // every loop keyword is still on its original line
      for (const [line, word] of [
        [3, 'for (int i'],
        [4, 'for (int j'],
        [5, 'for (int m'],
      ] as const) {
        assert.ok(lines[line].includes(word), `${f}: line ${line}: ${lines[line]}`);
      }
    }
  });

  test("replace a directive, insert on an unpragma'd loop, keep the operator form, remove for default", async () => {
    const a = await analyze(SRC);
    const out = makeVariantSource(
      SRC,
      a,
      new Map<number, UnrollFactor>([
        [3, 8],
        [4, 'full'],
        [5, 1],
      ]),
      '/abs/k.cu',
    ).split('\n');
    assert.equal(out[2].trim(), '#pragma unroll 8');
    assert.equal(out[4].trim(), '_Pragma("unroll") for (int j = 0; j < n; ++j) a[j] += 1;');
    assert.equal(out[5].trim(), '_Pragma("unroll 1") for (int m = 0; m < 8; ++m) a[m] *= 2;');
    const def = makeVariantSource(
      SRC,
      a,
      new Map<number, UnrollFactor>([
        [3, 'default'],
        [5, 'default'],
      ]),
      '/abs/k.cu',
    ).split('\n');
    assert.equal(def[2].trim(), '');
    assert.equal(def[5].trim(), 'for (int m = 0; m < 8; ++m) a[m] *= 2;');
  });

  test('the rewritten file re-analyses to the requested pragmas', async () => {
    const a = await analyze(SRC);
    const out = makeVariantSource(
      SRC,
      a,
      new Map<number, UnrollFactor>([
        [3, 16],
        [4, 2],
        [5, 'full'],
      ]),
      '/abs/k.cu',
    );
    const b = await analyze(out.slice(out.indexOf('\n') + 1));
    assert.deepEqual(
      b.kernels[0].loops.map(l => [l.line, writtenFactor(l)]),
      [
        [3, 16],
        [4, 2],
        [5, 'full'],
      ],
    );
  });

  test('unknown loop line is an error; factor lists parse and dedupe', async () => {
    const a = await analyze(SRC);
    assert.throws(() => makeVariantSource(SRC, a, new Map([[2, 4]]), '/abs/k.cu'), VariantError);
    assert.deepEqual(parseFactorList('default,1,2,4,8,16,full,4'), ['default', 1, 2, 4, 8, 16, 'full']);
    assert.throws(() => parseFactorList('0'));
    assert.throws(() => parseFactorList('x'));
    assert.equal(
      variantKey(
        new Map<number, UnrollFactor>([
          [40, 4],
          [12, 'full'],
        ]),
      ),
      'L12=full,L40=4',
    );
    assert.equal(variantKey(new Map()), 'as-written');
  });
});
