// The measurement conditions in words (src/schema/measurementText.ts): the line under every chart
// of the results panel names the GPU, the tool, the clocks and the caches, or SASS only.
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
});
