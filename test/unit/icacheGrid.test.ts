// The instruction-cache calibration grid recorded on the H100 (test/fixtures/gpu/h100/icache-grid,
// scripts/device/icache-grid/run.sh): read back into points, and the table docs/measurements.md
// quotes recomputed from the recorded files.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { gridPoints, gridTable, GridPoint, parseGridSizes } from '../../src/engine/profile/icacheGrid';
import { REPO_ROOT } from './helpers';

const DIR = path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100', 'icache-grid');
const read = (f: string) => fs.readFileSync(path.join(DIR, f), 'utf8');

function load(): GridPoint[] {
  const profiles = fs
    .readdirSync(DIR)
    .filter(f => f.startsWith('ncu-') && f.endsWith('.csv'))
    .map(read);
  return gridPoints(read('points.txt'), read('sizes.txt'), profiles);
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

  test('docs/measurements.md quotes the table these files give', () => {
    const table = gridTable(load(), [4, 32]);
    const doc = fs.readFileSync(path.join(REPO_ROOT, 'docs', 'measurements.md'), 'utf8');
    assert.ok(doc.includes(table), 'regenerate the table in docs/measurements.md from test/fixtures/gpu/h100/icache-grid');
  });
});
