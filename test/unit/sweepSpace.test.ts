import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, lineOf } from './helpers';
import { AS_WRITTEN, defineArgs, parseParamSpec, pointId, pointLabel, resolveSpace, SweepSpaceError } from '../../src/engine/sweep/space';
import { UnrollFactors } from '../../src/engine/variants/factors';

const SRC = `#define BLOCK 16
__global__ void two(float* a, int n) {
  for (int i = 0; i < n; ++i) a[i] = 0;
  #pragma unroll 4
  for (int j = 0; j < 8; ++j) a[j] += 1;
}
__global__ void other(float* a) {
  for (int k = 0; k < 4; ++k) a[k] = 2;
}
`;

describe('sweep space', () => {
  test('ids and labels as documented on SweepVariant.id', () => {
    assert.equal(pointId({ factors: { 52: 'full', 40: 4 }, params: {} }), '40=4,52=full');
    assert.equal(pointId({ factors: { 40: 4 }, params: { BLOCK: '8' } }), '40=4|BLOCK=8');
    assert.equal(pointId({ factors: { 40: 4 }, params: { TILE: '2', BLOCK: '8' } }), '40=4|BLOCK=8,TILE=2');
    assert.equal(pointId(AS_WRITTEN), 'as-written');
    // numeric line order, not string order
    assert.equal(pointId({ factors: { 100: 1, 9: 2 }, params: {} }), '9=2,100=1');
    assert.equal(pointLabel({ factors: { 40: 4 }, params: {} }), '×4');
    assert.equal(pointLabel({ factors: { 40: 'full' }, params: {} }), 'full');
    assert.equal(pointLabel({ factors: { 40: 'default' }, params: {} }), 'default');
    assert.equal(pointLabel({ factors: { 52: 'full', 40: 4 }, params: { BLOCK: '8' } }), 'L40 ×4 · L52 full · BLOCK=8');
    assert.equal(pointLabel(AS_WRITTEN), 'as written');
    assert.deepEqual(defineArgs({ TILE: '2', BLOCK: '8' }), ['-DBLOCK=8', '-DTILE=2']);
  });

  test('a space: loops in line order, points, size, start at the written factors and #define', async () => {
    const a = await analyze(SRC, '/x/two.cu');
    const i = lineOf(SRC, 'int i = 0');
    const j = lineOf(SRC, 'int j = 0');
    const s = resolveSpace(a, '/x/two.cu', {
      kernel: 'two',
      factors: UnrollFactors.parse('default,1,4,full'),
      params: { BLOCK: ['8', '16', '32'] },
    });
    assert.deepEqual(
      s.axes.map(x => (x.kind === 'loop' ? x.lines[0] : x.name)),
      [i, j, 'BLOCK'],
    );
    assert.equal(s.size, 4 * 4 * 3);
    const all = [...s.points()];
    assert.equal(all.length, s.size);
    assert.equal(new Set(all.map(pointId)).size, s.size, 'ids are unique');
    assert.equal(pointId(all[0]), `${i}=default,${j}=default|BLOCK=8`);
    // i has no pragma: default; j has `unroll 4`: 4; BLOCK is #defined 16
    assert.deepEqual(s.start(SRC), [0, 2, 1]);
    assert.deepEqual(s.indexOf(s.point([3, 1, 2])), [3, 1, 2]);
    // tied (bench --loop i,j): one factor axis setting both loops; a point with them apart is off it
    const tied = resolveSpace(a, '/x/two.cu', { kernel: 'two', loops: [i, j], factors: UnrollFactors.parse('default,1,4'), tied: true });
    assert.deepEqual(
      tied.axes.map(x => (x.kind === 'loop' ? x.lines : x.name)),
      [[i, j]],
    );
    assert.equal(tied.size, 3);
    assert.deepEqual([...tied.points()].map(pointId), [`${i}=default,${j}=default`, `${i}=1,${j}=1`, `${i}=4,${j}=4`]);
    assert.deepEqual(tied.indexOf({ factors: { [i]: 4, [j]: 4 }, params: {} }), [2]);
    assert.equal(tied.indexOf({ factors: { [i]: 4, [j]: 1 }, params: {} }), null);
    assert.deepEqual(tied.start(SRC), [0], 'the first loop’s written factor (i: default)');
    // default: every loop of the kernel, factors from UnrollFactors.DEFAULT
    const d = resolveSpace(a, '/x/two.cu', { kernel: 'two' });
    assert.equal(d.size, 49);
    // kernel from the loop
    assert.equal(resolveSpace(a, '/x/two.cu', { loops: [j] }).kernel.name, 'two');
  });

  test('validation: unknown loop line, loop of another kernel, kernel name, factors, empty axes', async () => {
    const a = await analyze(SRC, '/x/two.cu');
    const k = lineOf(SRC, 'int k = 0');
    const err = (o: Parameters<typeof resolveSpace>[2]) => assert.throws(() => resolveSpace(a, '/x/two.cu', o), SweepSpaceError);
    assert.throws(() => resolveSpace(a, '/x/two.cu', { kernel: 'two', loops: [2] }), /no loop at line 2 of \/x\/two\.cu \(loops at lines/);
    assert.throws(() => resolveSpace(a, '/x/two.cu', { kernel: 'two', loops: [k] }), /belongs to other \(line 7\), not to two/);
    assert.throws(() => resolveSpace(a, '/x/two.cu', { kernel: 'nope' }), /no kernel or device function named nope.*have two, other/);
    assert.throws(() => resolveSpace(a, '/x/two.cu', {}), /which kernel\?/);
    // a bad list is refused where it is parsed (UnrollFactors.parse); the space refuses only no factors for its loops
    assert.throws(() => UnrollFactors.parse('1,0'), /bad unroll factor '0'/);
    assert.throws(() => UnrollFactors.parse(' , '), /empty factor list/);
    err({ kernel: 'two', factors: UnrollFactors.NONE });
    assert.throws(() => resolveSpace(a, '/x/two.cu', { kernel: 'two', factors: UnrollFactors.NONE }), /empty factor list/);
    assert.throws(() => resolveSpace(a, '/x/two.cu', { kernel: 'two', params: { BLOCK: [] } }), /BLOCK has no values/);
    err({ kernel: 'two', loops: [0] });
    const empty = await analyze('__global__ void k(float* a) { a[0] = 1; }\n', '/x/e.cu');
    // a kernel without loops sweeps only parameters (issue 26): without any there is nothing to sweep
    assert.throws(
      () => resolveSpace(empty, '/x/e.cu', { kernel: 'k' }),
      /k has no loops; give --param NAME=v1,v2 to sweep its template or macro values/,
    );
  });

  test('parameters: C identifier names, shell-safe values only', async () => {
    assert.deepEqual(parseParamSpec('BLOCK=8,16,32'), { name: 'BLOCK', values: ['8', '16', '32'] });
    assert.deepEqual(parseParamSpec('SCALE=1.5f,-2,+3,1e-3,x_y'), { name: 'SCALE', values: ['1.5f', '-2', '+3', '1e-3', 'x_y'] });
    assert.deepEqual(parseParamSpec('B=8,8'), { name: 'B', values: ['8'] });
    assert.throws(() => parseParamSpec('BLOCK'), /use NAME=v1,v2/);
    assert.throws(() => parseParamSpec('=8'), SweepSpaceError);
    assert.throws(() => parseParamSpec('1BLOCK=8'), /bad parameter name '1BLOCK'/);
    assert.throws(() => parseParamSpec('BL-OCK=8'), /bad parameter name/);
    assert.throws(() => parseParamSpec('BLOCK='), /BLOCK has no values/);
    // nvcc passes -D values to the host compiler through sh: none of these may reach it
    for (const bad of ['$(touch /tmp/x)', '`id`', '8;rm', '8 9', "'8'", '"8"', '8|cat', 'a&b', '8>x', '${X}', '8\\n']) {
      assert.throws(() => parseParamSpec(`BLOCK=${bad}`), /bad value .* for BLOCK/, bad);
    }
    const a = await analyze(SRC, '/x/two.cu');
    assert.throws(
      () => resolveSpace(a, '/x/two.cu', { kernel: 'two', params: { BLOCK: ['$(touch /tmp/x)'] } }),
      /bad value '\$\(touch \/tmp\/x\)' for BLOCK/,
    );
    assert.throws(() => resolveSpace(a, '/x/two.cu', { kernel: 'two', params: { 'A B': ['1'] } }), /bad parameter name/);
  });
});
