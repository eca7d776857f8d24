// Block-level unrolling (issue 26): each thread block reduces N data blocks, the rungs of the
// reduction ladder in test/fixtures/cuda/reduction_ladder.cu, in every ordering and form it is
// written in; neighbours one block size away (stencils, halos) are not it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import type { FileAnalysis } from '../../src/engine/parse/model';
import { findLaunches } from '../../src/engine/parse/launches';
import { describeManualUnroll } from '../../src/engine/parse/manualUnroll';
import { manualUnrollHoverMarkdown, manualUnrollSummary } from '../../src/engine/parse/describe';
import { analyze, lineOf, REPO_ROOT } from './helpers';

const FIXTURE = path.join(REPO_ROOT, 'test', 'fixtures', 'cuda', 'reduction_ladder.cu');
const source = fs.readFileSync(FIXTURE, 'utf8');

let analysisP: Promise<FileAnalysis> | undefined;
const ladder = () => (analysisP ??= analyze(source, FIXTURE));
const kernel = async (name: string) => (await ladder()).kernels.find(k => k.name === name)!;
const brief = async (name: string) =>
  (await kernel(name)).manualUnrolls.map(m => [m.pattern, m.factor, m.gridDivisor ?? null, m.line, m.endLine]);

describe('block-level unroll', () => {
  test('×2 in one statement: `g[idx] += g[idx + blockDim.x]`, guarded', async () => {
    const at = lineOf(source, 'g_idata[idx] += g_idata[idx + blockDim.x]');
    assert.deepEqual(await brief('ladder_x2'), [['block-level', 2, 2, at, at]]);
    const [m] = (await kernel('ladder_x2')).manualUnrolls;
    assert.match(m.detail, /^each thread block reduces 2 data blocks \(`idx = blockIdx\.x \* blockDim\.x \* 2 \+ threadIdx\.x`\)/);
    assert.match(m.detail, /guarded by `idx \+ blockDim\.x < n`; the host launches grid \/ 2 blocks$/);
  });

  test('×4 as loads a1…a4 with the `blockDim.x * 4 * blockIdx.x + tid` ordering: block-level absorbs the offset run', async () => {
    const ms = (await kernel('ladder_x4')).manualUnrolls;
    assert.deepEqual(await brief('ladder_x4'), [['block-level', 4, 4, lineOf(source, 'int a1'), lineOf(source, 'int a4')]]);
    assert.ok(!ms.some(m => m.pattern === 'offset-run'));
  });

  test('×8 read through a pointer to the block chunk (`8 * blockIdx.x * blockDim.x`), no guard', async () => {
    const [m] = (await kernel('ladder_x8_pointer')).manualUnrolls;
    assert.deepEqual([m.pattern, m.factor, m.gridDivisor], ['block-level', 8, 8]);
    assert.match(m.detail, /reads at idata\[tid \+ k \* blockDim\.x\], k = 0…7; the host launches grid \/ 8 blocks$/);
  });

  test('the unrolled-warp and complete-unroll rungs: block-level ×8 and the warp tail, each where it is', async () => {
    assert.deepEqual(await brief('ladder_x8_warp'), [
      ['block-level', 8, 8, lineOf(source, 'int b1'), lineOf(source, 'int b8')],
      ['warp-tail', 6, null, lineOf(source, 'vmem[tid] += vmem[tid + 32]'), lineOf(source, 'vmem[tid] += vmem[tid + 1]')],
    ]);
    const complete = await kernel('ladder_complete');
    assert.deepEqual(complete.templateParameters, ['iBlockSize']);
    const [b, tail] = complete.manualUnrolls;
    assert.deepEqual([b.pattern, b.factor, b.gridDivisor, b.line], ['block-level', 8, 8, lineOf(source, 'int c1')]);
    assert.match(b.detail, /reads at idx \+ k \* iBlockSize, k = 0…7, guarded by `idx \+ 7 \* iBlockSize < n`/);
    assert.equal(tail.pattern, 'warp-tail');
  });

  test('a plain index read a grid apart (`idx + gridDim.x * blockDim.x`) is ×2 of the grid', async () => {
    const at = lineOf(source, 'g_idata[idx] += g_idata[idx + gridDim.x');
    assert.deepEqual(await brief('ladder_grid_x2'), [['block-level', 2, 2, at, at]]);
    assert.match((await kernel('ladder_grid_x2')).manualUnrolls[0].detail, /2 data blocks a grid apart/);
  });

  test('not block-level: a halo one block size on, a doubled index read one element on, three reads of a 2-block index', async () => {
    for (const k of ['stencil_next_block', 'two_adjacent', 'three_of_two'])
      assert.ok(!(await kernel(k)).manualUnrolls.some(m => m.pattern === 'block-level'), k);
    const snippets = [
      // 2-D: the y block index is no data-block ladder
      '__global__ void k(float *a, int w) { int row = blockIdx.y * blockDim.y * 2 + threadIdx.y; a[row * w] = a[(row + blockDim.y) * w]; }',
      // coarsening scales the thread index too: 2 * (blockIdx.x * blockDim.x + threadIdx.x)
      '__global__ void k(float *a) { int i = 2 * (blockIdx.x * blockDim.x + threadIdx.x); a[i] = a[i + blockDim.x]; }',
      // a neighbour of a plain index, no guard
      '__global__ void k(float *a) { int i = blockIdx.x * blockDim.x + threadIdx.x; a[i] += a[i + blockDim.x]; }',
    ];
    for (const s of snippets) {
      const a = await analyze(s);
      assert.ok(!a.kernels[0].manualUnrolls.some(m => m.pattern === 'block-level'), s);
    }
  });

  test('summary, description and hover name the grid divisor', async () => {
    const m = (await kernel('ladder_x4')).manualUnrolls[0];
    assert.equal(manualUnrollSummary(m), 'manual unroll ×4 (block-level, grid / 4)');
    assert.equal(describeManualUnroll(m), 'manual unroll ×4 (block-level, grid / 4)');
    const md = manualUnrollHoverMarkdown(await kernel('ladder_x4'), m);
    assert.match(md, /manual unroll ×4 \(block-level, grid \/ 4\) — each thread block reduces N data blocks/);
  });

  test('the host launches every rung through its table: each rung has its launch', async () => {
    const launched = findLaunches(source).map(l => l.kernel);
    for (const k of ['ladder_x2', 'ladder_x4', 'ladder_x8_pointer', 'ladder_x8_warp', 'ladder_complete', 'ladder_grid_x2'])
      assert.ok(launched.includes(k), k);
  });
});
