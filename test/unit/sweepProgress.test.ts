// Issue 27: the sweep's progress counter is honest. A coordinate search does not know how many
// points it will need: its denominator is a real upper bound, shown as such (`[3/≤38]`), that
// only shrinks as the search learns, and the sweep ends at `[n/n]`. An exhaustive sweep knows its
// count from the start and shows it plain. Through runSweep with a fake GPU runner (no nvcc).
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from './helpers';
import { runSweep, SweepOptions } from '../../src/engine/sweep/sweep';
import type { RunnerContext, SweepRunner } from '../../src/engine/sweep/runners/runner';
import { emptyVariant } from '../../src/engine/sweep/variant';
import { SweepPoint } from '../../src/engine/sweep/space';
import { coordinate, exhaustive, Score, Strategy } from '../../src/engine/sweep/strategies';
import { progressLine } from '../../src/engine/sweep/observers/observer';
import { benchProgressLine } from '../../src/cli/progress';
import { sweepText } from '../../src/engine/report/sweepText';
import type { SweepProgress } from '../../src/schema/progress';
import type { FileAnalysis } from '../../src/engine/parse/model';
import type { Toolchain } from '../../src/engine/toolchain/toolchain';
import type { SweepVariant } from '../../src/schema/types';
import { UnrollFactors } from '../../src/engine/variants/factors';

// Two loops, like matvec_warp_per_row's 70 and 74.
const SOURCE = `__global__ void k(float* a, int n) {
  for (int i = 0; i < n; ++i) a[i] *= 2.0f;
  for (int j = 0; j < n; ++j) a[j] += 1.0f;
}
`;
const FACTORS = UnrollFactors.parse('default,1,2,4,8,16,full');
let analysis: FileAnalysis;
before(async () => {
  analysis = await analyze(SOURCE, '/tmp/progress/k.cu');
});

/** A GPU runner whose kernel time is a sum of per-loop costs by factor (`f(a, b)` of the two factors' texts). */
class FakeGpu implements SweepRunner {
  readonly static = false;
  readonly gpu = 'fake GPU';
  constructor(private readonly ms: (factors: string[]) => number) {}

  async measure(points: SweepPoint[], ctx: RunnerContext): Promise<SweepVariant[]> {
    const out = points.map(p => {
      const f = Object.keys(p.factors)
        .sort((a, b) => Number(a) - Number(b))
        .map(l => String(p.factors[l]));
      const t = this.ms(f.length ? f : ['default', 'default']);
      return { ...emptyVariant(p, 'ok'), medianMs: t, q1Ms: t, q3Ms: t, iqrMs: 0, samples: 20, durationsMs: Array(20).fill(t) };
    });
    for (const v of out) ctx.onVariant?.(v);
    return out;
  }
  notes(): string[] {
    return [];
  }
  cost() {
    return { compileS: 0, checkS: 0, profileS: 0, gpuIdleS: 0, gpuRuns: 0, gpus: [] };
  }
}

const COST: Record<string, number> = { default: 1, '1': 1.3, '2': 1.1, '4': 0.8, '8': 0.75, '16': 0.9, full: 1.2 };
const separable = (f: string[]) => COST[f[0]] + 0.5 * COST[f[1]];
// the best factor of one loop depends on the other's (a shared register budget)
const coupled = (f: string[]) => separable(f) + (f[0] === '8' && f[1] === '8' ? 0.6 : 0) + (f[0] === '4' && f[1] === '16' ? -0.3 : 0);

async function sweep(
  strategy: string,
  ms: (f: string[]) => number,
): Promise<{ progress: SweepProgress[]; evaluations: number; header: string }> {
  const progress: SweepProgress[] = [];
  const o: SweepOptions = {
    file: '/tmp/progress/k.cu',
    text: SOURCE,
    analysis,
    toolchain: { nvcc: { version: '13.0' } } as unknown as Toolchain,
    arch: 'sm_90',
    flags: { arch: null, args: [] } as unknown as SweepOptions['flags'],
    cacheDir: '/tmp/progress/cache',
    loops: [2, 3],
    factors: FACTORS,
    strategy,
    gpu: { args: [], samples: 20, warmup: 2, clockControl: 'none', timeoutMs: 60_000, launcher: [] },
    runner: () => new FakeGpu(ms),
  };
  const r = await runSweep(o, { onProgress: p => progress.push(p) });
  assert.equal(r.complete, true);
  // the count the table's header gives (`… · coordinate: 19 of 49 points + the file as written`)
  const header = /· \w+: (\d+ of \d+ points[^·\n]*)/.exec(sweepText(r).split('\n')[0])?.[1];
  assert.ok(header, sweepText(r).split('\n')[0]);
  return { progress, evaluations: r.evaluations, header: header.trim() };
}

describe('the sweep progress counter (issue 27)', () => {
  for (const [name, ms] of [
    ['separable', separable],
    ['coupled', coupled],
  ] as const)
    test(`coordinate (${name}): a real upper bound shown as one, never growing, ending at n/n`, async () => {
      const { progress, evaluations, header } = await sweep('coordinate', ms);
      const first = progress[0];
      // the file as written + at most 1 + 3 passes × (6 + 6) points of the 7 × 7 space
      assert.equal(first.total, 1 + coordinate.maxEvaluations({ sizes: [7, 7], start: [0, 0] }));
      assert.equal(first.total, 38);
      assert.match(first.message, /^\[0\/≤38\] starting \(49 points, coordinate\)$/);
      assert.equal(first.atMost, true);
      for (const [i, p] of progress.entries()) {
        assert.ok(p.total >= evaluations, `${p.message}: ${p.total} is below the ${evaluations} variants the sweep measured`);
        assert.ok(p.done <= p.total, p.message);
        if (i) assert.ok(p.total <= progress[i - 1].total, `${progress[i - 1].message} → ${p.message}: the bound grew`);
        assert.equal(p.message.startsWith(`[${p.done}/${p.atMost ? '≤' : ''}${p.total}]`), true, p.message);
      }
      const last = progress.at(-1)!;
      // the counter counts the file as written among the variants; the last line says so in the header's words
      assert.equal(header, `${evaluations - 1} of 49 points + the file as written`);
      assert.equal(last.message, `[${evaluations}/${evaluations}] done (${header})`);
      assert.equal(last.atMost, undefined);
      assert.ok(evaluations < 38, `${evaluations}`);
    });

  test('exhaustive: the count is known from the start, shown plain', async () => {
    const { progress, evaluations, header } = await sweep('exhaustive', separable);
    assert.equal(evaluations, 50);
    assert.ok(progress.every(p => p.total === 50 && p.atMost === undefined && !p.message.includes('≤')));
    assert.equal(progress[0].message, '[0/50] starting (49 points, exhaustive)');
    assert.equal(header, '49 of 49 points + the file as written');
    assert.equal(progress.at(-1)!.message, `[50/50] done (${header})`);
  });

  test('the words: the CLI lines and the bench line say ≤ only while the bound is above the count', () => {
    assert.equal(progressLine(3, 38, 'L2 ×4', 'time', undefined, true), '[3/≤38] L2 ×4: timing on the GPU');
    assert.equal(
      progressLine(14, 14, null, 'done', '13 of 49 points + the file as written', true),
      '[14/14] done (13 of 49 points + the file as written)',
    );
    assert.equal(progressLine(3, 8, null, 'build'), '[3/8] building');
    const p: SweepProgress = { message: '', phase: 'build', variant: null, done: 3, total: 38, atMost: true, elapsedS: 1 };
    assert.match(benchProgressLine(p), /^\[3\/≤38\] · build/);
    assert.match(benchProgressLine({ ...p, atMost: undefined, total: 8 }), /^\[3\/8\] · build/);
  });
});

describe('coordinate: what it tells of its length is a promise', () => {
  /** Runs the strategy alone: after each atMost(m), no more than m further points may be asked for. */
  async function check(s: Strategy, sizes: number[], start: number[], f: (p: number[]) => Score) {
    let asked = 0;
    const promises: { at: number; more: number }[] = [{ at: 0, more: s.maxEvaluations({ sizes, start }) }];
    await s.search({
      space: { sizes, start },
      atMost: more => promises.push({ at: asked, more }),
      evaluate: async ps => {
        asked += ps.length;
        return ps.map(f);
      },
    });
    for (const p of promises) assert.ok(asked - p.at <= p.more, `promised at most ${p.more} more after ${p.at}, asked ${asked - p.at}`);
    return { asked, promises };
  }
  const curve = [10, 9, 7, 5, 4.5, 6, 8];

  test('separable, coupled, failing and 3-axis objectives: never more than promised', async () => {
    await check(coordinate, [7, 7], [0, 0], p => curve[p[0]] + curve[p[1]]);
    await check(coordinate, [7, 7], [6, 6], p => curve[p[0]] + curve[p[1]] + 0.35 * Math.max(0, p[0] + p[1] - 6) ** 2);
    await check(coordinate, [7, 7], [0, 0], p => (p[0] === 0 ? null : curve[p[0]] + curve[p[1]]));
    const { asked, promises } = await check(coordinate, [7, 7, 7], [0, 0, 0], p => curve[p[0]] + curve[6 - p[1]] + curve[p[2]]);
    // the bound tightens: before the last line it is that line's new points and the passes left
    assert.ok(promises.length > 3 && promises.at(-1)!.more < promises[0].more, JSON.stringify(promises));
    assert.ok(asked <= coordinate.maxEvaluations({ sizes: [7, 7, 7], start: [0, 0, 0] }));
    await check(exhaustive, [7, 7], [2, 3], p => curve[p[0]] + curve[p[1]]);
  });
});
