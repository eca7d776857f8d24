// Kernel launches read from the text (parse/launches.ts) and the warps per SM resolved from them
// (occupancy/warpsPerSm.ts), in the order of evidence: override, launch, __launch_bounds__, occupancy.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { evaluateInFile, findLaunches, gridInSms, launchesIn } from '../../src/engine/parse/launches';
import { resolveWarpsPerSm, smCountOf, warpsPerSmInFile } from '../../src/engine/occupancy/warpsPerSm';
import { analyze, lineOf, REPO_ROOT, SAMPLES } from './helpers';

const FIXTURE = path.join(REPO_ROOT, 'test', 'fixtures', 'cuda', 'launch_config.cu');
const source = fs.readFileSync(FIXTURE, 'utf8');
const H100 = { count: 132, gpu: 'NVIDIA H100 80GB HBM3' };

describe('launch finder', () => {
  const launches = findLaunches(source);

  test('finds every launch with its line, callee and the sizes it can evaluate', () => {
    assert.deepEqual(
      launches.map(l => [l.kernel, l.callee, l.line]),
      [
        ['scale', 'scale', lineOf(source, 'scale<<<')],
        ['tiled', 'tiled<8>', lineOf(source, 'tiled<8><<<')],
        ['runtime_block', 'runtime_block', lineOf(source, 'runtime_block<<<')],
        ['bounded', 'bounded', lineOf(source, 'bounded<<<')],
        [null, 'v.kernel', lineOf(source, 'v.kernel<<<')],
      ],
    );
    const [scale, tiled, runtime] = launches;
    assert.deepEqual([scale.grid, scale.block, scale.sharedBytes], [{ text: 'GRID', value: 132 }, { text: 'BLOCK', value: 128 }, null]);
    // dim3 literal and dim3 variable: x·y·z; dynamic shared memory with sizeof.
    assert.deepEqual([tiled.grid.value, tiled.block.value, tiled.sharedBytes?.value], [4, 128, 4096]);
    // A non-const variable is a run-time value.
    assert.deepEqual(runtime.block, { text: 'threads', value: null });
    assert.equal(runtime.grid.value, 132);
  });

  test('ignores launches in comments and strings; later definitions win; expressions evaluate', () => {
    const text = [
      '// k<<<1, 32>>>(x);',
      'const char *s = "k<<<1, 32>>>";',
      '#define T 64',
      'static constexpr unsigned W = T * 2;',
      'void f() { ns::k<<<(1000 + W - 1) / W, W, 0, stream>>>(x); }',
      '#undef T',
    ].join('\n');
    const l = findLaunches(text);
    assert.equal(l.length, 1);
    assert.deepEqual([l[0].kernel, l[0].line, l[0].grid.value, l[0].block.value, l[0].sharedBytes?.value], ['k', 5, 8, 128, 0]);
    assert.equal(evaluateInFile(text, 'W / 4'), 32);
    assert.equal(evaluateInFile(text, 'n * 2'), null);
  });
});

describe('resolveWarpsPerSm', () => {
  test('an explicit override wins over everything and says where it was set', () => {
    const w = resolveWarpsPerSm({
      kernel: 'scale',
      arch: 'sm_90',
      override: { warpsPerSm: 12, origin: '--warps-per-sm' },
      launches: findLaunches(source),
    });
    assert.deepEqual([w.warpsPerSm, w.kind], [12, 'override']);
    assert.match(w.source, /--warps-per-sm/);
    // 0 means infer.
    const inferred = resolveWarpsPerSm({
      kernel: 'scale',
      arch: 'sm_90',
      override: { warpsPerSm: 0, origin: 'x' },
      launches: findLaunches(source),
    });
    assert.equal(inferred.kind, 'launch');
  });

  test('a constant launch: blocks per SM from the grid over the SMs, capped by occupancy', async () => {
    const analysis = await analyze(source, FIXTURE);
    const w = warpsPerSmInFile(source, analysis, { kernel: 'scale', arch: 'sm_90', registers: 16, sharedBytes: 0, sms: H100 });
    assert.deepEqual([w.warpsPerSm, w.kind], [4, 'launch']);
    assert.equal(
      w.source,
      `from the launch \`<<<GRID, BLOCK>>>\` at line ${lineOf(source, 'scale<<<')}: 1 block of 4 warps per SM (grid 132 blocks on 132 SMs of the NVIDIA H100 80GB HBM3; 16 would fit)` +
        ` — \`GRID\` = 132 (line ${lineOf(source, 'constexpr int GRID')}); \`BLOCK\` = 128 (#define, line ${lineOf(source, '#define BLOCK')}); 16 registers/thread, 0 B static shared memory`,
    );
    assert.match(w.short, /^from the launch at line \d+$/);
    // Without the SM count (issue 22: no longer every SM assumed busy): sm_90 GPUs have 114 or 132
    // SMs, so 132 blocks are 1 or 2 per SM; the likeliest is the 132-SM part.
    const unknown = warpsPerSmInFile(source, analysis, { kernel: 'scale', arch: 'sm_90', registers: 16, sharedBytes: 0 });
    assert.deepEqual([unknown.warpsPerSm, unknown.range], [4, { low: 4, high: 8 }]);
    assert.match(unknown.source, /1–2 blocks of 4 warps per SM \(grid 132 blocks on 114 or 132 SMs \(sm_90 GPUs; the GPU is not named\)/);
    // Registers limit how many fit: 128 registers/thread → 16 K per block of 4 warps → 4 blocks.
    const heavy = warpsPerSmInFile(source, analysis, {
      kernel: 'scale',
      arch: 'sm_90',
      registers: 128,
      sharedBytes: 0,
      sms: { count: 8, gpu: 'small GPU' },
    });
    assert.equal(heavy.warpsPerSm, 16);
    assert.match(heavy.source, /4 blocks of 4 warps per SM, as many as fit \(registers\)/);
  });

  test('dim3 sizes: a 4-block grid puts at most 1 block on an SM', async () => {
    const analysis = await analyze(source, FIXTURE);
    const w = warpsPerSmInFile(source, analysis, { kernel: 'tiled', arch: 'sm_90', registers: 32, sharedBytes: 0, sms: H100 });
    assert.deepEqual([w.warpsPerSm, w.kind], [4, 'launch']);
    assert.match(w.source, /`<<<dim3\(2, 2\), block>>>`.*1 block of 4 warps per SM \(grid 4 blocks on 132 SMs/);
  });

  test('__launch_bounds__(256, 2) without a launch: a lower bound of 2 blocks of 8 warps, up to as many as fit', () => {
    const w = resolveWarpsPerSm({ kernel: 'bounded', arch: 'sm_90', registers: 16, launchBounds: [256, 2], launches: [] });
    assert.deepEqual([w.warpsPerSm, w.kind, w.range], [16, 'launch-bounds', { low: 16, high: 64 }]);
    assert.match(
      w.source,
      /^at least 2 blocks of 8 warps per SM from `__launch_bounds__\(256, 2\)` \(a lower bound; no launch found in the file\); the prediction covers 16–64 warps\/SM$/,
    );
  });

  test('a launch whose block size is read at run time: the range over block sizes the kernel allows, and why', async () => {
    const analysis = await analyze(source, FIXTURE);
    // __launch_bounds__(256, 2) caps the block at 256 threads: 1 to 16 warps/SM.
    const bounded = warpsPerSmInFile(source, analysis, { kernel: 'bounded', arch: 'sm_90', registers: 16, sharedBytes: 0, sms: H100 });
    assert.deepEqual([bounded.kind, bounded.range], ['launch', { low: 1, high: 8 }]);
    assert.match(
      bounded.source,
      /block size not known: `threads` = 32 \* argc \(line \d+\), and `argc` is a parameter of main\(\) \(line \d+\)/,
    );
    const free = warpsPerSmInFile(source, analysis, { kernel: 'runtime_block', arch: 'sm_90', registers: 16, sharedBytes: 0, sms: H100 });
    assert.deepEqual([free.warpsPerSm, free.range], [8, { low: 1, high: 32 }]);
    assert.match(free.source, /the prediction covers 1–32 warps\/SM$/);
  });

  test('no launch: occupancy at the __launch_bounds__ block size, else 256 threads, with the range it cannot rule out', async () => {
    const analysis = await analyze(source, FIXTURE);
    const none = resolveWarpsPerSm({ kernel: 'k', arch: 'sm_90', registers: 128, launches: [] });
    assert.deepEqual([none.warpsPerSm, none.range], [16, { low: 1, high: 16 }]);
    assert.equal(
      none.source,
      'theoretical occupancy at 256 threads/block (no launch found in the file; block size and grid not known: the prediction covers 1–16 warps/SM)',
    );
    const unlaunched = warpsPerSmInFile(source, analysis, { kernel: 'unlaunched', arch: 'sm_90', registers: 16, sharedBytes: 0 });
    assert.deepEqual([unlaunched.kind, unlaunched.warpsPerSm], ['occupancy', 64]);
    assert.match(unlaunched.source, /no launch of it by name in the file/);
  });

  test('a launch through a pointer counts for the kernel the file stores in it (bounded_threads)', async () => {
    const analysis = await analyze(source, FIXTURE);
    const w = warpsPerSmInFile(source, analysis, { kernel: 'bounded_threads', arch: 'sm_90', registers: 16, sharedBytes: 0 });
    assert.deepEqual([w.warpsPerSm, w.kind], [2, 'launch']);
    assert.match(w.source, /^from the launch `<<<1, 64>>>` through `v\.kernel` \(the file names bounded_threads as a value at line \d+\)/);
  });

  test("a header's kernel launched from its translation unit: the unit is named; a 1-block grid is 1 block per SM", () => {
    const unit = ['#include "ops.cuh"', 'int main() {', '  k<<<1, 64>>>(nullptr);', '  j<<<n, t>>>(nullptr);', '}'].join('\n');
    const launches = launchesIn('/src/unit.cu', unit);
    const w = resolveWarpsPerSm({ kernel: 'k', arch: 'sm_90', launches });
    assert.deepEqual([w.warpsPerSm, w.kind], [2, 'launch']);
    assert.equal(
      w.source,
      'from the launch `<<<1, 64>>>` at unit.cu:3: 1 block of 2 warps per SM (grid of 1 block; 32 would fit) — registers not known, 0 B static shared memory',
    );
    assert.equal(w.short, 'from the launch at unit.cu:3');
    const j = resolveWarpsPerSm({ kernel: 'j', arch: 'sm_90', launches });
    assert.match(j.source, /grid `n` not known: `n` is not defined in the file; block size not known: `t` is not defined in the file/);
  });

  test('SM count from the product name only where the name fixes it', () => {
    assert.equal(smCountOf('NVIDIA H100 80GB HBM3'), 132);
    assert.equal(smCountOf('NVIDIA H100 PCIe'), 114);
    assert.equal(smCountOf('NVIDIA H200'), 132);
    assert.equal(smCountOf('NVIDIA GeForce RTX 4090'), null);
  });
});

describe('grids sized by the SM count', () => {
  test('multiProcessorCount directly, a multiple of it, or a variable assigned from it (icache_ilp.cu)', () => {
    assert.equal(gridInSms('', 'prop.multiProcessorCount'), 1);
    assert.equal(gridInSms('', '2 * prop.multiProcessorCount'), 2);
    assert.equal(gridInSms('int nsm; nsm = prop.multiProcessorCount;', 'nsm'), 1);
    assert.equal(gridInSms('int n = 4096;', 'n'), null);
    assert.equal(gridInSms('blocks = (n + 255) / 256;', 'blocks'), null);
    const src = fs.readFileSync(path.join(SAMPLES, 'icache_ilp.cu'), 'utf8');
    const [l] = findLaunches(src).filter(x => x.kernel === 'ilp_chains');
    assert.equal(l.block.value, 128);
    assert.equal(l.grid.value, null);
    assert.equal(l.grid.blocksPerSm, 1);
  });
});
