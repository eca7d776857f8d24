// The results panel's speedup heatmap as data (webview/src/heatmap.ts): colour steps of the
// diverging scale, the ranges the legend names, and the grid of a two-loop sweep (cells, axes,
// noise, best, empty points with their reason), on the H100 sweeps recorded in test/fixtures/sweep.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import type { SweepResult } from '../../src/protocol';
import { HEAT_STEPS, MAX_GRIDS, heatLevel, heatmapOf, heatScale, levelRange } from '../../webview/src/heatmap';
import { buildModel } from '../../webview/src/model';

const FIXTURES = path.resolve(__dirname, '..', '..', '..', 'test', 'fixtures', 'sweep');
const fixture = (name: string): SweepResult => JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}.json`), 'utf8'));

describe('heatmap colour scale', () => {
  const scale = Math.log(1.4);

  test('1×, within noise and missing values are neutral; each side has its own sign', () => {
    assert.equal(heatLevel(1, scale), 0);
    assert.equal(heatLevel(null, scale), 0);
    assert.equal(heatLevel(Number.NaN, scale), 0);
    assert.equal(heatLevel(0.5, scale, true), 0, 'within noise: not coloured');
    assert.equal(heatLevel(1.001, scale), 1, 'a hair faster is the first step, not neutral');
    assert.equal(heatLevel(0.999, scale), -1);
  });

  test('steps are symmetric in ln: x and 1/x get the same step on opposite sides', () => {
    for (const s of [1.02, 1.09, 1.1, 1.2, 1.3, 1.39, 1.4]) assert.equal(heatLevel(1 / s, scale), -heatLevel(s, scale), String(s));
    assert.equal(heatLevel(1.4, scale), HEAT_STEPS, 'the end of the scale is the last step');
    assert.equal(heatLevel(1 / 1.4, scale), -HEAT_STEPS);
    assert.equal(heatLevel(3, scale), HEAT_STEPS, 'past the scale: clamped');
    assert.equal(heatLevel(0.1, scale), -HEAT_STEPS);
  });

  test('the legend ranges tile the scale and agree with heatLevel', () => {
    assert.deepEqual(levelRange(0, scale), { low: 1, high: 1 });
    for (let l = 1; l < HEAT_STEPS; l++) {
      assert.ok(Math.abs(levelRange(l, scale).high - levelRange(l + 1, scale).low) < 1e-12, `faster ${l}`);
      assert.ok(Math.abs(levelRange(-l, scale).low - levelRange(-l - 1, scale).high) < 1e-12, `slower ${l}`);
    }
    assert.ok(Math.abs(levelRange(1, scale).low - 1) < 1e-12);
    assert.ok(Math.abs(levelRange(HEAT_STEPS, scale).high - 1.4) < 1e-12);
    assert.ok(Math.abs(levelRange(-HEAT_STEPS, scale).low - 1 / 1.4) < 1e-12);
    for (let l = -HEAT_STEPS; l <= HEAT_STEPS; l++) {
      if (l === 0) continue;
      const r = levelRange(l, scale);
      assert.equal(heatLevel(Math.sqrt(r.low * r.high), scale), l, `middle of step ${l}`);
      assert.equal(heatLevel(l > 0 ? r.high : r.low, scale), l, `outer edge of step ${l}`);
    }
  });

  test('the scale reaches the farthest point outside the noise, at least 1.1×', () => {
    assert.equal(heatScale([]), Math.log(1.1));
    assert.equal(heatScale([{ speedup: 1.02, noise: false }]), Math.log(1.1), 'a 2 % difference does not fill the scale');
    assert.equal(
      heatScale([
        { speedup: 0.5, noise: true },
        { speedup: 1.3, noise: false },
        { speedup: null, noise: false },
      ]),
      Math.log(1.3),
    );
    assert.equal(
      heatScale([
        { speedup: 0.5, noise: false },
        { speedup: 1.3, noise: false },
      ]),
      Math.log(2),
    );
  });
});

describe('heatmap of a two-loop sweep', () => {
  test('exhaustive H100 sweep of matvec_warp_per_row: 7 × 7 points, axes in factor order, noise, best and as written', () => {
    const r = fixture('gpu-h100-matvec_exhaustive');
    const hm = heatmapOf(buildModel(r))!;
    assert.ok(hm);
    assert.deepEqual([hm.x.line, hm.y.line], ['70', '74']);
    assert.deepEqual(hm.x.values, r.factors);
    assert.deepEqual(hm.y.values, r.factors);
    assert.equal(hm.grids.length, 1);
    const cells = hm.grids[0].rows.flat();
    assert.equal(cells.length, 49);
    assert.ok(cells.every(c => c.empty === null && c.view !== null));
    // Row y, column x holds the variant with L70 = x and L74 = y.
    for (const [yi, row] of hm.grids[0].rows.entries())
      for (const [xi, c] of row.entries()) assert.equal(c.view!.v.id, `70=${r.factors[xi]},74=${r.factors[yi]}`);
    assert.deepEqual(
      cells.filter(c => c.best).map(c => c.view!.v.id),
      [r.best],
    );
    for (const c of cells) {
      const v = c.view!.v;
      const ref = r.variants.find(x => x.id === v.identicalTo);
      assert.equal(c.speedup, v.speedup ?? ref?.speedup, v.id);
      assert.equal(c.noise, v.withinNoise === true, `${v.id}: noise from the variant's own check`);
      if (c.noise) assert.equal(c.level, 0);
      else assert.equal(Math.sign(c.level), Math.sign(c.speedup! - 1), v.id);
    }
    // ×1 on L70 is the slowest column (0.73×): the far end of the scale.
    assert.ok(Math.abs(hm.scaleMax - Math.abs(Math.log(Math.min(...cells.map(c => c.speedup!))))) < 1e-12);
    assert.ok(cells.filter(c => c.x === 1).every(c => c.level === -HEAT_STEPS));
    assert.deepEqual(
      cells.filter(c => c.asWritten).map(c => c.view!.v.id),
      ['70=default,74=full'],
    );
  });

  test('coordinate search: the points it did not visit are empty, with the reason', () => {
    const r = fixture('gpu-h100-matvec_coordinate');
    const cells = heatmapOf(buildModel(r))!.grids[0].rows.flat();
    const points = r.variants.filter(v => Object.keys(v.factors).length === 2);
    assert.equal(cells.filter(c => c.view).length, points.length);
    const empty = cells.filter(c => c.empty !== null);
    assert.equal(empty.length, 49 - points.length);
    for (const c of empty) {
      assert.equal(c.empty, 'not evaluated: the coordinate search did not visit this point');
      assert.equal(c.speedup, null);
      assert.equal(c.level, 0);
    }
  });

  test('failed, pending and unfinished runs: empty cells that say why', () => {
    const r = fixture('gpu-h100-matvec_exhaustive');
    const failed = r.variants.find(v => v.id === '70=1,74=2')!;
    Object.assign(failed, { status: 'runtime', message: 'exit 139 (SIGSEGV)', speedup: null, withinNoise: null, medianMs: null });
    const pending = r.variants.find(v => v.id === '70=2,74=2')!;
    Object.assign(pending, { status: 'pending', speedup: null, medianMs: null });
    const partial = { ...r, complete: false, variants: r.variants.filter(v => v.id !== '70=8,74=8') };
    const cell = (id: string) =>
      heatmapOf(buildModel(partial))!
        .grids[0].rows.flat()
        .find(c => `70=${c.x},74=${c.y}` === id)!;
    assert.equal(cell('70=1,74=2').empty, 'runtime: exit 139 (SIGSEGV)');
    assert.equal(cell('70=2,74=2').empty, 'pending: not measured yet');
    assert.equal(cell('70=8,74=8').empty, 'not evaluated: the run stopped, or has not reached this point yet');
    assert.equal(cell('70=8,74=8').view, null);
  });

  test('extra axes: one grid per combination of values; too many, a benchmark, one loop or no GPU: no heatmap', () => {
    const r = fixture('gpu-h100-matvec_exhaustive');
    const tag = (id: string | null, b: string) => (id === null || id === 'as-written' ? id : `${id}|BLOCK=${b}`);
    const withBlock: SweepResult = {
      ...r,
      params: { BLOCK: ['8', '16'] },
      best: tag(r.best, '8'),
      variants: [
        r.variants[0],
        ...['8', '16'].flatMap(b =>
          r.variants.slice(1).map(v => ({ ...v, id: tag(v.id, b)!, params: { BLOCK: b }, identicalTo: tag(v.identicalTo, b) })),
        ),
      ],
    };
    const hm = heatmapOf(buildModel(withBlock))!;
    assert.deepEqual(
      hm.grids.map(g => g.params),
      [{ BLOCK: '8' }, { BLOCK: '16' }],
    );
    assert.ok(hm.grids.every(g => g.rows.flat().every(c => c.view?.v.params.BLOCK === g.params.BLOCK)));
    assert.equal(hm.grids.flatMap(g => g.rows.flat()).filter(c => c.best).length, 1);
    assert.ok(
      hm.grids.flatMap(g => g.rows.flat()).every(c => !c.asWritten),
      'as written is no point of a grid with extra axes',
    );
    const many = { ...withBlock, params: { BLOCK: Array.from({ length: MAX_GRIDS + 1 }, (_, i) => String(i)) } };
    assert.equal(heatmapOf(buildModel(many)), null);
    assert.equal(heatmapOf(buildModel({ ...r, origin: 'bench' })), null, 'a benchmark ties its loops to one axis');
    assert.equal(heatmapOf(buildModel({ ...r, static: true })), null, 'no speedup without a GPU');
    assert.equal(heatmapOf(buildModel(fixture('gpu-h100-icache_cliff'))), null, 'one loop: bars');
  });
});
