// The results panel's "Registers, spills and occupancy" chart (issue 43): the achieved-occupancy
// line and its legend entry only where a row has a measured achieved occupancy (a result of the
// default CUPTI timer has none without --counters on), and a caption that names where it came
// from: ncu's timed runs, or the extra ncu counter run beside the CUPTI timer's
// (webview/src/occupancy.ts, which chartConfigs.ts and charts.ts draw from; the drawn chart is
// checked in Chromium by test/webview/panel.test.mjs). Recorded results of test/fixtures/sweep,
// as measured and as the CUPTI timer would have left them.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import type { SweepResult } from '../../src/protocol';
import { buildModel } from '../../webview/src/model';
import { achievedSeries, resourcesCaption } from '../../webview/src/occupancy';

const FIXTURES = path.resolve(__dirname, '..', '..', '..', 'test', 'fixtures', 'sweep');
const fixture = (name: string): SweepResult => JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}.json`), 'utf8'));

/** The same result as the CUPTI timer records it: its conditions, and (without counters) no ncu counts. */
function asCupti(r: SweepResult, counters: boolean): SweepResult {
  const c = structuredClone(r);
  c.measurement = { tool: 'cupti', clocks: 'as-is', caches: 'warm' };
  if (!counters) for (const v of c.variants) Object.assign(v, { achievedOccupancy: null, executedInstructions: null });
  return c;
}

const chart = (r: SweepResult) => {
  const m = buildModel(r);
  return { series: achievedSeries(m), caption: resourcesCaption(m) };
};

describe('the resources chart: achieved occupancy only where measured, its source named', () => {
  test('timed under ncu: the series, and "measured by ncu in its timed runs"', () => {
    const c = chart(fixture('gpu-h100-icache_cliff'));
    assert.equal(c.series, 'Achieved occupancy (%, ncu)');
    assert.equal(
      c.caption,
      'Theoretical occupancy from registers and shared memory; achieved occupancy measured by ncu in its timed runs (% of peak warps).',
    );
  });

  test('the CUPTI timer without counters: no series, and the caption says why', () => {
    const c = chart(asCupti(fixture('gpu-h100-icache_cliff'), false));
    assert.equal(c.series, null);
    assert.doesNotMatch(c.caption, /measured by ncu/);
    assert.match(c.caption, /; no achieved occupancy: the CUPTI timer counts it only with --counters on \(unrollLens\.profile\.counters\)/);
  });

  test('the CUPTI timer with counters: the series, counted by ncu in an extra run', () => {
    const c = chart(asCupti(fixture('gpu-h100-icache_cliff'), true));
    assert.equal(c.series, 'Achieved occupancy (%, ncu)');
    assert.match(
      c.caption,
      /; achieved occupancy counted by ncu in an extra run beside the CUPTI timer's \(--counters on; % of peak warps\)\.$/,
    );
  });

  test('one row with it is enough to draw the series (a failed variant has none)', () => {
    const r = asCupti(fixture('gpu-h100-icache_cliff'), false);
    r.variants[1].achievedOccupancy = 12.5;
    assert.equal(chart(r).series, 'Achieved occupancy (%, ncu)');
  });

  test('a static result: theoretical occupancy only', () => {
    const c = chart(fixture('static-matmul_basic'));
    assert.equal(c.series, null);
    assert.equal(c.caption, 'Theoretical occupancy from registers and shared memory at the block size of the estimate.');
  });

  test('a kernel comparison timed by the CUPTI timer without counters says none was counted', () => {
    const recorded = fixture('compare/reduce_unroll');
    assert.equal(recorded.measurement?.tool, 'cupti');
    const c = chart(recorded);
    assert.equal(c.series, null);
    assert.match(
      c.caption,
      /^Registers per thread of each kernel; no achieved occupancy: the CUPTI timer counts it only with --counters on/,
    );
  });
});
