// The instruction-cache model (issue 13): the shipped calibration is a fresh fit of the recorded
// grids, the cache levels come out of the data, and the model fitted without some shapes
// predicts them (the ≥ 90 % goal) — all recomputed from the fixtures.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import {
  fitIcacheModel,
  gridShapes,
  heldOut,
  readGridFolder,
  readGridSass,
  validate,
  calibrationSource,
  supplyTable,
  validationTable,
} from '../../src/engine/icache/fit';
import { SM90_ICACHE } from '../../src/engine/icache/calibration';
import { describePrediction, predictIcache } from '../../src/engine/icache/model';
import { issueRate } from '../../src/engine/sass/issueRate';
import { REPO_ROOT } from './helpers';

const GPU = path.join(REPO_ROOT, 'test', 'fixtures', 'gpu');
const shapes = gridShapes(readGridSass(path.join(GPU, 'h100', 'icache-grid', 'sass-4k.txt.gz')));
const points = [
  ...readGridFolder('H100', path.join(GPU, 'h100', 'icache-grid'), shapes),
  ...readGridFolder('H200', path.join(GPU, 'h200', 'icache-grid'), shapes),
];

describe('instruction-cache model', () => {
  test('the grid shapes read from their SASS: chains, opcode and the issue rate the grid measured at 4 KiB', () => {
    assert.equal(shapes.size, 12);
    for (const c of [1, 2, 4, 8]) {
      const fp = shapes.get(`fp32/${c}`)!;
      assert.equal(fp.mainOpcode, 'FFMA');
      assert.equal(fp.chains, c);
      // One warp per SMSP: 1 FFMA per 4 cycles per chain, at most one per cycle (measured: 2.04,
      // 1.02, 0.53, 0.53 ns per FFMA at 1.98 GHz with 4 warps/SM).
      assert.ok(Math.abs(issueRate(fp, 1) - Math.min(1, c / 4)) < 0.03, `fp32/${c}: ${issueRate(fp, 1)}`);
    }
    assert.equal(shapes.get('int64/1')!.mainOpcode, 'IMAD');
    assert.equal(shapes.get('ldg/4')!.mainOpcode === 'LDG' || shapes.get('ldg/4')!.mainOpcode === 'FFMA', true);
    assert.ok(shapes.get('ldg/4')!.loads >= 64);
  });

  test('the shipped calibration is a fresh fit of both grids (npm run fit:icache)', () => {
    const fresh = fitIcacheModel(points, { arch: 'sm_90', source: calibrationSource(points) });
    assert.deepEqual(fresh, SM90_ICACHE);
  });

  test('two steps, found in the data: between 32 and 48 KiB and between 128 and 192 KiB', () => {
    const kib = SM90_ICACHE.steps.map(s => [Math.round(s.before / 1024), Math.round(s.after / 1024)]);
    assert.deepEqual(kib, [
      [33, 49],
      [129, 193],
    ]);
  });

  test('held out of the fit (every 2-chain shape and every 8-warp point, both GPUs): ≥ 90 % inside the predicted range', () => {
    const train = points.filter(p => !heldOut(p));
    const test_ = points.filter(heldOut);
    const cal = fitIcacheModel(train, { arch: 'sm_90', source: calibrationSource(train) });
    const v = validate(cal, test_);
    assert.ok(test_.length > 400);
    assert.ok(v.inside / v.points >= 0.9, `${v.inside}/${v.points} inside`);
  });

  test("the issue's shape: FFMA, 4 chains, 4 warps/SM — 66 KiB predicted near the 2.6× measured; 32 KiB near 1", () => {
    const issue = shapes.get('fp32/4')!;
    const at66 = predictIcache({ bytes: 66 * 1024, issue }, 4, 'sm_90', SM90_ICACHE);
    assert.ok(at66.predictedSlowdown.low <= 2.63 && at66.predictedSlowdown.high >= 2.63, JSON.stringify(at66));
    assert.ok(at66.predictedSlowdown.high - at66.predictedSlowdown.low < 1.5);
    assert.equal(at66.fits, false);
    const text = describePrediction(at66, '×64', 'sm_90', SM90_ICACHE);
    assert.match(text, /^loop body 66 KiB: predicted \d\.\d–\d\.\d× slower than ×64 at 4 warps\/SM \(FFMA, 4 chains; measured on sm_90\)$/);
    const small = predictIcache({ bytes: 16 * 1024, issue }, 4, 'sm_90', SM90_ICACHE);
    assert.equal(small.fits, true);
    assert.ok(small.predictedSlowdown.low <= 1 && small.predictedSlowdown.high < 1.2);
    // Latency-bound code (1 chain) loses far less at the same size.
    const one = predictIcache({ bytes: 66 * 1024, issue: shapes.get('fp32/1')! }, 4, 'sm_90', SM90_ICACHE);
    assert.ok(one.predictedSlowdown.high < at66.predictedSlowdown.low);
    // More warps hide the misses.
    const many = predictIcache({ bytes: 66 * 1024, issue }, 32, 'sm_90', SM90_ICACHE);
    assert.ok(many.predictedSlowdown.high < at66.predictedSlowdown.low);
  });

  test('other arches carry the sm_90 calibration as an estimate, and say so', () => {
    const p = predictIcache({ bytes: 66 * 1024, issue: shapes.get('fp32/4')! }, 4, 'sm_80', SM90_ICACHE);
    assert.match(p.basis, /applied to sm_80, which was not measured/);
    assert.match(describePrediction(p, '×8', 'sm_80', SM90_ICACHE), /sm_90 data, sm_80 not measured/);
  });
});

describe('docs/measurements.md quotes the model as fitted', () => {
  const doc = fs.readFileSync(path.join(REPO_ROOT, 'docs', 'measurements.md'), 'utf8');
  test('the supply table and the validation table are the ones the fixtures give', () => {
    assert.ok(doc.includes(supplyTable(SM90_ICACHE)), 'supply table differs: rerun and paste supplyTable(SM90_ICACHE)');
    assert.ok(doc.includes(validationTable(points)), 'validation table differs: rerun and paste validationTable(points)');
    assert.ok(doc.includes(`(p = ${SM90_ICACHE.sharpness})`));
  });
});
