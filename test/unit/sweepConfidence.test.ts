// Issue 25: the bootstrap of the variants' medians (engine/sweep/confidence.ts) as properties
// (fast-check: the interval holds its point estimate, identical durations are never
// distinguishable, clearly separated ones always are, a seed reproduces every number) and on
// kernel durations recorded on an H100 (test/fixtures/gpu/h100/*.raw.csv).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import fc from 'fast-check';
import { REPO_ROOT } from './helpers';
import { propertyRuns } from './propertyRuns';
import {
  bootstrapMedians,
  CERTAIN,
  firstShare,
  median,
  medianRatio,
  MIN_GAIN,
  seededRandom,
  sweepConfidence,
} from '../../src/engine/sweep/confidence';
import { summarize } from '../../src/engine/gpu/stages/summary';
import { parseRawPage, toNanoseconds } from '../../src/engine/profile/ncuCsv';
import { gpuResult, timedVariant } from './confidenceFixtures';

/** The launches of a recorded ncu raw page, ms (one kernel per file). */
function recorded(name: string): number[] {
  const page = parseRawPage(fs.readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100', `${name}.raw.csv`), 'utf8'));
  return page.kernels.map(k => toNanoseconds(k.metrics['gpu__time_duration.sum'].value, k.metrics['gpu__time_duration.sum'].unit)! / 1e6);
}

const positive = fc.double({ min: 0.001, max: 100, noNaN: true, noDefaultInfinity: true });
const durations = fc.array(positive, { minLength: 1, maxLength: 40 });

describe('bootstrap of medians', () => {
  test('the seeded generator: one seed, one stream, uniform in [0, 1)', () => {
    const a = seededRandom(7);
    const b = seededRandom(7);
    const xs = Array.from({ length: 10_000 }, () => a());
    assert.deepEqual(
      xs.slice(0, 100),
      Array.from({ length: 100 }, () => b()),
    );
    assert.ok(xs.every(x => x >= 0 && x < 1));
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
    assert.ok(Math.abs(mean - 0.5) < 0.01, `mean ${mean}`);
    assert.notEqual(seededRandom(8)(), seededRandom(7)());
  });

  test('the median is summarize()’s, and one duration resamples to itself', () => {
    for (const d of [[3], [1, 2], [5, 1, 4, 2], recorded('matmul_basic')]) assert.equal(median(d), summarize(d).medianMs);
    const [m] = bootstrapMedians([[0.25]], { resamples: 50 });
    assert.ok(m.every(x => x === 0.25));
    assert.throws(() => bootstrapMedians([[]]), /at least one duration/);
  });

  test('property: the interval of median(a) ÷ median(b) holds the point estimate', () => {
    fc.assert(
      fc.property(durations, durations, fc.integer({ min: 0, max: 2 ** 31 }), (a, b, seed) => {
        const e = medianRatio(a, b, { seed });
        return e.low <= e.ratio && e.ratio <= e.high && e.ratio === median(a) / median(b);
      }),
      propertyRuns(60, 2501, 20_000),
    );
  });

  test('property: the same seed gives the same numbers; the confidence records its seed', () => {
    fc.assert(
      fc.property(durations, durations, fc.integer({ min: 0, max: 2 ** 31 }), (a, b, seed) => {
        assert.deepEqual(medianRatio(a, b, { seed }), medianRatio(a, b, { seed }));
        const r = gpuResult([timedVariant('as-written', a), timedVariant(4, b)]);
        const c = sweepConfidence(r, { seed })!;
        assert.equal(c.seed, seed);
        assert.deepEqual(sweepConfidence(structuredClone(r), { seed: c.seed }), c);
      }),
      propertyRuns(30, 2502, 20_000),
    );
  });

  test('property: identical durations (in any order) are never distinguishable', () => {
    fc.assert(
      fc.property(durations, fc.integer({ min: 0, max: 2 ** 31 }), (d, seed) => {
        const shuffled = [...d].reverse();
        // the variant judged best even on a tie: the decision itself must say "as fast"
        const c = sweepConfidence(gpuResult([timedVariant('as-written', d), timedVariant(4, shuffled)], '2=4'), { seed })!;
        assert.equal(c.ratio, 1);
        assert.ok(c.ratioLow! <= 1 && c.ratioHigh! >= 1);
        assert.equal(c.distinguishable, false);
        assert.match(c.reason, /^the code as written is as fast, within noise: ×4 is 1\.00× the file as written \(95% CI /);
      }),
      propertyRuns(40, 2503, 20_000),
    );
  });

  test('property: clearly separated durations are always distinguishable, and the leader certain', () => {
    // spread within each variant at most 10%; the slower at least 1.2× the faster: every resampled
    // ratio is at least 1.2 / 1.1 > 1 + MIN_GAIN
    const spread = fc.array(fc.double({ min: 1, max: 1.1, noNaN: true }), { minLength: 1, maxLength: 30 });
    fc.assert(
      fc.property(
        fc.double({ min: 0.001, max: 10, noNaN: true }),
        spread,
        spread,
        fc.double({ min: 1.2, max: 5, noNaN: true }),
        (base, fast, slow, k) => {
          const r = gpuResult([
            timedVariant(
              'as-written',
              slow.map(x => base * k * x),
            ),
            timedVariant(
              4,
              fast.map(x => base * x),
            ),
            timedVariant(
              8,
              slow.map(x => base * k * k * x),
            ),
          ]);
          const c = sweepConfidence(r)!;
          assert.equal(c.best, '2=4');
          assert.ok(c.ratioLow! > 1 + MIN_GAIN, `${c.ratioLow}`);
          assert.equal(c.distinguishable, true);
          assert.match(c.reason, /^×4 is faster than the file as written by \d+\.\d\d× \(95% CI \d+\.\d\d–\d+\.\d\d\)$/);
          assert.equal(c.pFirst, 1);
          assert.ok(c.leadLow! > 1);
        },
      ),
      propertyRuns(40, 2504, 20_000),
    );
  });

  test('first place: shared on ties, a leader alone is certain', () => {
    const same = Float64Array.from([1, 2, 3]);
    assert.equal(firstShare([same, same], 0), 0.5);
    assert.equal(firstShare([Float64Array.from([1, 1]), Float64Array.from([2, 0])], 0), 0.5);
    // a copy of the file as written's program (the same durations) is no contender of its own
    const alone = sweepConfidence(gpuResult([timedVariant('as-written', [2, 2.1]), timedVariant(4, [2, 2.1], 'as-written')], '2=4'))!;
    assert.deepEqual(alone.contenders, ['2=4']);
    assert.equal(alone.ratio, 1);
    assert.equal(alone.distinguishable, false);
    assert.equal(alone.reason, '×4 has the same machine code as the file as written');
    assert.equal(alone.pFirst, 1);
    assert.equal(alone.runnerUp, null);
  });
});

describe('recorded H100 durations', () => {
  test('linear_small against its rolled loop: 3.1× faster, far beyond noise', () => {
    const c = sweepConfidence(
      gpuResult([timedVariant('as-written', recorded('linear_small_rolled')), timedVariant(4, recorded('linear_small'))]),
    )!;
    assert.equal(c.best, '2=4');
    assert.ok(Math.abs(c.ratio! - 0.4473 / 0.1425) < 0.01, `${c.ratio}`);
    assert.ok(c.ratioLow! > 3.1 && c.ratioHigh! < 3.2, `${c.ratioLow}–${c.ratioHigh}`);
    assert.equal(c.distinguishable, true);
    assert.equal(c.pFirst, 1);
  });

  test('one recording against itself (the replayed GPU sweeps): not distinguishable', () => {
    const d = recorded('matvec_warp_per_row');
    const c = sweepConfidence(gpuResult([timedVariant('as-written', d), timedVariant(4, d)], '2=4'))!;
    assert.equal(c.distinguishable, false);
    assert.ok(c.pFirst > 0.3 && c.pFirst < 0.7, `${c.pFirst}`);
    assert.ok(c.leadLow! <= 1 && c.leadHigh! >= 1);
  });

  test('1% faster on every launch: the interval lies above 1, but under the drift between runs it is the same', () => {
    const d = recorded('matmul_basic');
    const c = sweepConfidence(
      gpuResult([
        timedVariant(
          'as-written',
          d.map(x => x * 1.01),
        ),
        timedVariant(4, d),
      ]),
    )!;
    assert.ok(c.ratioLow! > 1, `${c.ratioLow}`);
    assert.equal(c.distinguishable, false);
    assert.match(
      c.reason,
      /×4 is 1\.01× the file as written \(95% CI 1\.0\d–1\.0\d\), under the 3% separate runs of one program can drift$/,
    );
  });

  test('matmul_basic against the hand-unrolled ×4 of the same program: 3.6% apart, distinguishable', () => {
    const c = sweepConfidence(
      gpuResult([timedVariant('as-written', recorded('matmul_unroll4')), timedVariant(4, recorded('matmul_basic'))]),
    )!;
    assert.ok(c.ratio! > 1 + MIN_GAIN && c.ratioLow! > 1, `${c.ratio} ${c.ratioLow}`);
    assert.equal(c.distinguishable, true);
    assert.ok(c.pFirst >= CERTAIN);
  });
});
