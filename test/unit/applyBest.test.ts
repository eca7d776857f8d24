// Issue 25: "Apply best" is offered only when the best is distinguishable from the file as written
// (schema/applyBest.ts, one rule): the CLI's sweep and bench text, the --json contracts, the
// hover's bench table and the loop's quick fix (server) all follow the result's confidence; a
// static result and a result saved before the confidence offer it as they did.
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from './helpers';
import { gpuResult, timedVariant } from './confidenceFixtures';
import { sweepConfidence } from '../../src/engine/sweep/confidence';
import { sweepText } from '../../src/engine/report/sweepText';
import { benchMarkdown } from '../../src/engine/report/benchText';
import { sweepJson } from '../../src/engine/sweep/json';
import { benchJson } from '../../src/engine/sweep/bench';
import { renderBench } from '../../src/cli/bench';
import { ResultsService } from '../../src/server/results';
import { applyBestOffer } from '../../src/schema/applyBest';
import type { FileAnalysis } from '../../src/engine/parse/model';
import type { SweepResult } from '../../src/schema/types';

const SOURCE = `__global__ void k(float* y, int n) {
  for (int i = 0; i < n; ++i) y[i] *= 2.0f;
}
`;
const URI = 'file:///tmp/apply-best/k.cu';
let analysis: FileAnalysis;
before(async () => {
  analysis = await analyze(SOURCE, '/tmp/apply-best/k.cu');
});

const d = [0.058, 0.0586, 0.0584, 0.0585, 0.0582, 0.0589, 0.0582, 0.0587, 0.058, 0.0587, 0.0585, 0.0593];

/** A GPU result whose file as written takes `k` times ×4's durations, with its confidence. */
function measured(k: number, origin: SweepResult['origin'] = 'sweep'): SweepResult {
  const r = {
    ...gpuResult(
      [
        timedVariant(
          'as-written',
          d.map(x => x * k),
        ),
        timedVariant(4, d),
      ],
      '2=4',
    ),
    origin,
  };
  r.variants[1].speedup = r.variants[0].medianMs! / r.variants[1].medianMs!;
  r.confidence = sweepConfidence(r)!;
  return r;
}

/** The loop quick fixes the server offers on line 2 for these results. */
function quickFixes(...results: SweepResult[]): string[] {
  const service = Object.create(ResultsService.prototype) as ResultsService;
  Object.assign(service, { facts: { get: () => ({ results }) } });
  const range = { start: { line: 1, character: 2 }, end: { line: 1, character: 5 } };
  return service.codeActions(URI, SOURCE, analysis, range).map(a => a.title);
}

describe('Apply best only beyond noise', () => {
  test('clearly faster (1.2×): offered, with the ratio and its interval', () => {
    const r = measured(1.2);
    assert.deepEqual(applyBestOffer(r), { offer: true, why: '×4 is faster than the file as written by 1.20× (95% CI 1.19–1.21)' });
    assert.match(sweepText(r), /\n {2}apply best: ×4 is faster than the file as written by 1\.20× \(95% CI 1\.19–1\.21\)\n/);
    assert.match(
      sweepText(r),
      /\n {2}×4 is first in 100\.0% of 2000 bootstrap resamples of ×4, as written; runner-up as written: median 1\.20× ×4's/,
    );
    assert.equal(sweepJson(r).confidence!.distinguishable, true);
    assert.deepEqual(
      sweepJson(r).variants.map(v => v.samples),
      [12, 12],
    );
    assert.deepEqual(quickFixes(r), ['Apply ×4: best of the last sweep (1.20× vs as written on NVIDIA H100 80GB HBM3, 95% CI 1.19–1.21)']);
  });

  test('within noise (the same durations): not offered anywhere; the text says the code as written is as fast', () => {
    const r = measured(1);
    const why = /the code as written is as fast, within noise: ×4 is 1\.00× the file as written \(95% CI 0\.99–1\.01\)/;
    assert.equal(applyBestOffer(r).offer, false);
    assert.match(applyBestOffer(r).why!, why);
    assert.match(sweepText(r), new RegExp(`\\n {2}no change offered: ${why.source}\\n`));
    assert.equal(sweepJson(r).confidence!.distinguishable, false);
    assert.deepEqual(quickFixes(r), []);
    const bench = measured(1, 'bench');
    assert.match(renderBench(bench), new RegExp(`\\nno change offered: ${why.source}\\n`));
    assert.match(benchMarkdown(bench), new RegExp(`\\n\\nNo change offered: ${why.source}\\.`));
    assert.equal(benchJson(bench).confidence!.distinguishable, false);
  });

  test('2% faster on every launch: a tight interval, but under the 3% drift between runs: not offered', () => {
    const r = measured(1.02);
    assert.ok(r.confidence!.ratioLow! > 1);
    assert.equal(applyBestOffer(r).offer, false);
    assert.match(applyBestOffer(r).why!, /under the 3% separate runs of one program can drift$/);
    assert.deepEqual(quickFixes(r), []);
  });

  test('older and static results: offered as before; a confidence about another variant is not trusted', () => {
    const old = measured(1);
    delete old.confidence;
    assert.deepEqual(applyBestOffer(old), { offer: true, why: null });
    assert.doesNotMatch(sweepText(old), /apply best|no change offered/);
    assert.deepEqual(quickFixes(old), ['Apply ×4: best of the last sweep (1.00× vs as written on NVIDIA H100 80GB HBM3)']);
    const stat = { ...measured(1), static: true };
    assert.deepEqual(applyBestOffer(stat), { offer: true, why: null });
    const other = measured(1.2);
    other.confidence = { ...other.confidence!, best: 'as-written' };
    assert.equal(applyBestOffer(other).offer, false);
    assert.deepEqual(quickFixes(other), []);
    // the file as written as the best: nothing to apply
    assert.equal(applyBestOffer({ ...measured(1.2), best: 'as-written' }).offer, false);
  });
});
