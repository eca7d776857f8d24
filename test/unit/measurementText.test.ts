// The measurement conditions in words (src/schema/measurementText.ts): the line under every chart
// of the results panel names the GPU, the tool, the clocks and the caches, or SASS only.
import { shortForTimer, withDurations } from '../../src/engine/profile/native/activityBias';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import type { SweepResult } from '../../src/protocol';
import { chartConditionsText, conditionsText } from '../../src/schema/measurementText';

const FIXTURES = path.resolve(__dirname, '..', '..', '..', 'test', 'fixtures', 'sweep');
const fixture = (name: string): SweepResult => JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}.json`), 'utf8'));

describe('measurement conditions on the charts', () => {
  const r = fixture('matmul_basic');
  test('GPU, tool, clocks and caches as the result records them', () => {
    assert.equal(
      chartConditionsText({ ...r, clockControl: 'base', measurement: { tool: 'ncu', clocks: 'base', caches: 'flushed' } }),
      'NVIDIA H100 80GB HBM3 · ncu · clocks locked to base · caches flushed before each launch',
    );
    assert.equal(
      chartConditionsText({ ...r, measurement: { tool: 'cupti', clocks: 'as-is', caches: 'warm' } }),
      'NVIDIA H100 80GB HBM3 · CUPTI timer (program run as itself) · clocks as-is (not locked) · caches warm (as the program runs)',
    );
  });
  test('saved before the conditions were kept: clocks only where clockControl says, ncu with its flush', () => {
    assert.equal(r.measurement, undefined);
    assert.equal(chartConditionsText(r), 'NVIDIA H100 80GB HBM3 · ncu · clocks not recorded · caches flushed before each launch');
    assert.equal(
      chartConditionsText({ ...r, clockControl: 'none' }),
      'NVIDIA H100 80GB HBM3 · ncu · clocks as-is (not locked) · caches flushed before each launch',
    );
  });
  test('static: SASS only, nothing about clocks or caches', () => {
    const s = chartConditionsText(fixture('static-matmul_basic'));
    assert.equal(s, 'SASS only (sm_90, no GPU run): compiler output, no timings');
  });
  test('the one-line form the bench table and the best basis use is unchanged', () => {
    assert.equal(conditionsText(undefined, 20), 'ncu, 20 samples; clocks locked to base, caches flushed before each launch');
    assert.equal(conditionsText(undefined, 20, 'none'), 'ncu, 20 samples; clocks not locked, caches flushed before each launch');
    assert.equal(
      conditionsText({ tool: 'cupti', clocks: 'as-is', caches: 'warm' }, 5),
      'CUPTI timer, program run as itself, 5 samples; clocks not locked, caches warm',
    );
  });
  test('issue 42: how the CUPTI timer timed a launch, and the activity-record fallback with its bias', () => {
    const m = { tool: 'cupti', clocks: 'as-is', caches: 'warm' } as const;
    assert.equal(
      conditionsText(withDurations(m, 'gpu__time_duration', 'NVIDIA H200'), 20),
      'CUPTI timer, program run as itself, gpu__time_duration per launch, 20 samples; clocks not locked, caches warm',
    );
    const h200 = withDurations(m, 'activity-records', 'NVIDIA H200');
    assert.deepEqual(h200, { ...m, durations: 'activity-records', activityBiasUs: 1.9, shortUnderUs: 190 });
    assert.match(
      conditionsText(h200, 20),
      /ACTIVITY RECORDS \(GPU counters not read; up to \+1\.9 µs a launch over ncu's gpu__time_duration on this GPU model: kernels under 190 µs marked !\)/,
    );
    assert.equal(shortForTimer(h200, 0.189), true);
    assert.equal(shortForTimer(h200, 0.191), false);
    assert.equal(shortForTimer(withDurations(m, 'gpu__time_duration', 'NVIDIA H200'), 0.003), false);
    // a model nobody measured: the bias unknown, every kernel marked
    const other = withDurations(m, 'activity-records', 'NVIDIA GeForce RTX 4090');
    assert.equal(other.activityBiasUs, null);
    assert.equal(shortForTimer(other, 5), true);
    assert.match(conditionsText(other, 20), /their bias against ncu not measured on this GPU: every kernel marked !/);
  });
});
