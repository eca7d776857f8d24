// "Compare kernels in this file" in the editor (issue 26): the comparison result as the panel and
// the exports read it (one row per kernel), what the server answers the command with, and the
// CodeLens that starts it. The result is the replay of the H100 reduction ladder
// (test/fixtures/sweep/compare/README.md); its rows must be those the H100 run printed.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { analyze, REPO_ROOT } from './helpers';
import { checkSweepResult } from '../../src/schema/result';
import { comparisonAsVariants, comparisonBaselineLabel } from '../../src/schema/comparison';
import { sweepCsv, sweepT4 } from '../../src/engine/sweep/export';
import { toCompareKernelsResult } from '../../src/server/wire';
import { codeLenses } from '../../src/server/features';
import { Commands, DEFAULT_SETTINGS } from '../../src/protocol';
import type { SweepResult } from '../../src/protocol';

const FIXTURE = path.join(REPO_ROOT, 'test', 'fixtures', 'sweep', 'compare', 'reduce_unroll.json');
const RECORDED = path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100', 'compare', 'reduce.cupti.json');
const LABELS = [
  'reduce_interleaved',
  'reduce_unroll2',
  'reduce_unroll4',
  'reduce_unroll8',
  'reduce_unroll8_warptail',
  'reduce_complete<256u>',
];

const load = (): SweepResult => JSON.parse(fs.readFileSync(FIXTURE, 'utf8'));
const recorded = () =>
  JSON.parse(fs.readFileSync(RECORDED, 'utf8')) as { kernels: { kernel: string; medianMs: number; speedup: number }[] };

describe('a kernel comparison read as one row per kernel', () => {
  test('the result is a valid SweepResult and keeps its baseline through the check', () => {
    const r = load();
    const checked = checkSweepResult(r);
    assert.equal(checked.origin, 'compare');
    assert.equal(checked.compareBaseline, '_Z18reduce_interleavedPKiPij');
    assert.deepEqual(checked, r);
  });

  test('rows in the order named, labelled as the source writes them, speedups and medians as the H100 run printed', () => {
    const v = comparisonAsVariants(load());
    const rec = recorded();
    assert.deepEqual(
      v.variants.map(x => x.label),
      LABELS,
    );
    assert.deepEqual(
      v.variants.map(x => [x.id, x.medianMs]),
      rec.kernels.map(k => [k.kernel, k.medianMs]),
    );
    assert.deepEqual(
      v.variants.map(x => x.speedup!.toFixed(6)),
      rec.kernels.map(k => k.speedup.toFixed(6)),
    );
    assert.equal(v.baseline, '_Z18reduce_interleavedPKiPij');
    assert.equal(comparisonBaselineLabel(load()), 'reduce_interleaved');
    // the fastest median (0.1697 ms), not a factor to apply
    assert.equal(v.best, '_Z23reduce_unroll8_warptailPKiPij');
    assert.deepEqual(v.loops, []);
    assert.equal(v.confidence, undefined);
    assert.ok(v.variants.every(x => x.status === 'ok' && !Object.keys(x.factors).length));
    assert.deepEqual(
      v.variants.map(x => x.kernelBytes),
      [56, 56, 64, 80, 168, 160].map(n => n * 16),
    );
  });

  test('a baseline without time gives no speedups; a kernel without time shares the run status', () => {
    const r = load();
    const inst = r.variants[0].instantiations!;
    inst[0] = { ...inst[0], medianMs: null, q1Ms: null, q3Ms: null };
    const v = comparisonAsVariants(r);
    assert.ok(v.variants.every(x => x.speedup === null));
    assert.equal(v.variants[0].status, 'profile');
    assert.equal(v.variants[0].message, 'no launch of this kernel was timed');
    assert.equal(v.best, '_Z23reduce_unroll8_warptailPKiPij');
  });

  test('results of other origins are not changed', () => {
    const sweep = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'sweep', 'matmul_basic.json'), 'utf8'));
    assert.equal(comparisonAsVariants(sweep), sweep);
  });
});

describe('exports of a comparison', () => {
  test('CSV: one row per kernel, with its speedup against the baseline kernel', () => {
    const rows = sweepCsv(load()).trimEnd().split('\r\n');
    const header = rows[0].split(',');
    assert.equal(rows.length, 7);
    const col = (name: string) => rows.slice(1).map(r => r.split(',')[header.indexOf(name)]);
    assert.deepEqual(col('label'), LABELS);
    assert.deepEqual(
      col('speedup').map(s => Number(s).toFixed(2)),
      ['1.00', '1.90', '3.22', '3.49', '3.49', '3.49'],
    );
    assert.deepEqual(col('registers'), ['16', '16', '17', '24', '24', '26']);
    assert.ok(header.includes('executedInstructions'));
    assert.ok(!header.some(h => /^L\d/.test(h)), 'no loop columns');
  });

  test('T4: one result per kernel, configured by its name', () => {
    const t4 = sweepT4(load());
    assert.deepEqual(
      t4.results.map(r => r.configuration),
      LABELS.map(kernel => ({ kernel })),
    );
    assert.ok(t4.results.every(r => r.invalidity === 'correct' && r.times.runtimes.length === 1));
  });
});

test('the server answers the command with the rows it logs and the baseline label', () => {
  const result = load();
  const w = toCompareKernelsResult({ result, rows: [], baseline: result.compareBaseline ?? null }, '/tmp/r.json');
  assert.equal(w.result, result);
  assert.equal(w.baseline, 'reduce_interleaved');
  assert.deepEqual(
    w.kernels.map(k => k.label),
    LABELS,
  );
  assert.equal(w.kernels[0].speedup, 1);
  assert.equal(w.savedPath, '/tmp/r.json');
});

describe('the "Compare kernels in this file" CodeLens', () => {
  const TWO = `__global__ void a(float* x) { x[0] = 1; }
template <int N>
__global__ void b(float* x) { x[0] = N; }
int main() { return 0; }
`;
  const title = 'Compare kernels in this file';

  test('on the first kernel of a program with two kernels, with the file as its argument', async () => {
    const lenses = codeLenses('file:///x.cu', await analyze(TWO), DEFAULT_SETTINGS, null, null, true);
    const compare = lenses.filter(l => l.command?.title === title);
    assert.equal(compare.length, 1);
    assert.equal(compare[0].range.start.line, 0);
    assert.equal(compare[0].command?.command, Commands.compareKernels);
    assert.deepEqual(compare[0].command?.arguments, [{ uri: 'file:///x.cu' }]);
  });

  test('none without a program, with one kernel, or in a header', async () => {
    const none = (l: ReturnType<typeof codeLenses>) => !l.some(x => x.command?.title === title);
    assert.ok(none(codeLenses('file:///x.cu', await analyze(TWO), DEFAULT_SETTINGS, null, null, false)));
    const one = '__global__ void a(float* x) { x[0] = 1; }\nint main() { return 0; }\n';
    assert.ok(none(codeLenses('file:///x.cu', await analyze(one), DEFAULT_SETTINGS, null, null, true)));
    assert.ok(none(codeLenses('file:///x.cuh', await analyze(TWO), DEFAULT_SETTINGS, null, { unit: null, via: null }, true)));
  });
});
