// The instruction-cache calibration grid recorded on the H100 (test/fixtures/gpu/h100/icache-grid,
// scripts/device/icache-grid/run.sh): read back into points, and the table docs/measurements.md
// quotes recomputed from the recorded files.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { gridPoints, gridTable, GridPoint, parseGridSizes } from '../../src/engine/icache/grid';
import { REPO_ROOT } from './helpers';

const dirOf = (gpu: string) => path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', gpu, 'icache-grid');
const DIR = dirOf('h100');
const read = (f: string, dir = DIR) => fs.readFileSync(path.join(dir, f), 'utf8');

function load(gpu = 'h100'): GridPoint[] {
  const dir = dirOf(gpu);
  const profiles = fs
    .readdirSync(dir)
    .filter(f => f.startsWith('ncu-') && f.endsWith('.csv'))
    .map(f => read(f, dir));
  return gridPoints(read('points.txt', dir), read('sizes.txt', dir), profiles);
}
const at = (ps: GridPoint[], mix: string, chains: number, warps: number, kib: number) =>
  ps.find(p => p.mix === mix && p.chains === chains && p.warps === warps && p.targetKib === kib)!;

describe('instruction-cache calibration grid (H100)', () => {
  test('every recorded point has its size and its no_instruction share', () => {
    const ps = load();
    // 3 mixes × 4 chain counts × 4 occupancies; 12 sizes (ldg: 10). int64 with 8 chains stopped
    // at its first 32-warp launch (too many registers for 1,024 threads): 496 points.
    assert.equal(ps.length, 496);
    assert.ok(ps.every(p => p.bytes !== null && p.noInstruction !== null && p.slowdown !== null));
    // The sizes the generator aimed at, as cuobjdump measured them: within 2 KiB.
    for (const p of ps) assert.ok(Math.abs(p.bytes! / 1024 - p.targetKib) < 2.1, `${p.kernel}: ${p.bytes} bytes`);
    assert.equal(parseGridSizes(read('sizes.txt')).size, 136);
  });

  test('the shape the issue reports: FFMA, 4 chains, 4 warps/SM costs ~2.7× from 48 to 128 KiB and ~5.6× beyond', () => {
    const ps = load();
    assert.ok(at(ps, 'fp32', 4, 4, 32).slowdown! < 1.2);
    for (const kib of [48, 64, 96, 128]) assert.ok(Math.abs(at(ps, 'fp32', 4, 4, kib).slowdown! - 2.7) < 0.1, `${kib} KiB`);
    for (const kib of [192, 256, 384, 512]) assert.ok(Math.abs(at(ps, 'fp32', 4, 4, kib).slowdown! - 5.63) < 0.05, `${kib} KiB`);
    assert.ok(at(ps, 'fp32', 4, 4, 64).noInstruction! > 0.5);
    // One dependent chain hides the misses up to 128 KiB.
    assert.ok(at(ps, 'fp32', 1, 4, 128).slowdown! < 1.06);
    assert.ok(at(ps, 'fp32', 1, 4, 192).slowdown! > 1.4);
  });

  test('docs/measurements.md quotes the tables these files give (H100 and H200)', () => {
    const doc = fs.readFileSync(path.join(REPO_ROOT, 'docs', 'measurements.md'), 'utf8');
    for (const gpu of ['h100', 'h200'])
      assert.ok(
        doc.includes(gridTable(load(gpu), [4, 32])),
        `regenerate the table in docs/measurements.md from test/fixtures/gpu/${gpu}/icache-grid`,
      );
  });

  test('the H200 (same SM) gives the same grid: 543 points, slowdowns within 5 % of the H100 at 98 % of the shared points', () => {
    const h100 = load('h100');
    const h200 = load('h200');
    // The H200 ran the generator that skips shapes a block cannot hold: one int64 8-chain point.
    assert.equal(h200.length, 543);
    assert.ok(h200.every(p => p.noInstruction !== null && p.slowdown !== null));
    const pairs = h100
      .map(p => [p, h200.find(q => q.kernel === p.kernel && q.warps === p.warps)] as const)
      .filter((x): x is readonly [GridPoint, GridPoint] => x[1] !== undefined);
    assert.equal(pairs.length, 496);
    const close = pairs.filter(([a, b]) => Math.abs(a.slowdown! / b.slowdown! - 1) <= 0.05).length;
    assert.ok(close / pairs.length >= 0.98, `${close} of ${pairs.length}`);
  });
});
