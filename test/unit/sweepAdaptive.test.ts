// Issue 25: adaptive sampling through the sweep (engine/sweep/adaptive.ts) with a fake GPU runner
// whose kernels take known times with seeded noise: the first round is never cut short, only the
// leading variants are timed again (through the runner's measureAgain), and the result says how
// many durations each variant got and why the sampling stopped; then whether Apply best is offered.
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from './helpers';
import { runSweep, SweepOptions } from '../../src/engine/sweep/sweep';
import type { RunnerContext, SweepRunner } from '../../src/engine/sweep/runners/runner';
import { emptyVariant } from '../../src/engine/sweep/variant';
import { pointId, SweepPoint } from '../../src/engine/sweep/space';
import { seededRandom } from '../../src/engine/sweep/confidence';
import { summarize } from '../../src/engine/gpu/stages/summary';
import { checkSweepResult } from '../../src/schema/result';
import { applyBestOffer } from '../../src/schema/applyBest';
import type { FileAnalysis } from '../../src/engine/parse/model';
import type { Toolchain } from '../../src/engine/toolchain/toolchain';
import type { SweepResult, SweepVariant } from '../../src/schema/types';
import { UnrollFactors } from '../../src/engine/variants/factors';

const SOURCE = `__global__ void k(float* a, int n) {
  for (int i = 0; i < n; ++i) a[i] *= 2.0f;
}
`;
let analysis: FileAnalysis;
before(async () => {
  analysis = await analyze(SOURCE, '/tmp/adaptive/k.cu');
});

/**
 * A GPU runner whose variants' kernels take `ms[id]` (the file as written: `as-written`), each
 * duration off by up to ±`noise` of it (seeded per variant: the same call sequence, the same numbers).
 */
class FakeGpu implements SweepRunner {
  readonly static = false;
  readonly gpu = 'fake GPU';
  /** Every measureAgain call: the ids and how many durations each asked for. */
  readonly again: [string, number][][] = [];
  private readonly draws = new Map<string, () => number>();

  constructor(
    private readonly ms: Record<string, number>,
    private readonly noise: number,
    private readonly onAgain: () => void = () => undefined,
    /** Variants whose noise draws are another's (`2=8` → `2=4`): the same durations, a tie that never settles. */
    private readonly twins: Record<string, string> = {},
  ) {}

  private durations(id: string, n: number): number[] {
    const seed = [...(this.twins[id] ?? id)].reduce((h, c) => h * 31 + c.charCodeAt(0), 7) >>> 0;
    const rand = this.draws.get(id) ?? seededRandom(seed);
    this.draws.set(id, rand);
    return Array.from({ length: n }, () => this.ms[id] * (1 + this.noise * (2 * rand() - 1)));
  }

  private timed(v: SweepVariant, durationsMs: number[]): SweepVariant {
    return { ...v, ...summarize(durationsMs), durationsMs };
  }

  async measure(points: SweepPoint[], ctx: RunnerContext): Promise<SweepVariant[]> {
    const out = points.map(p => this.timed(emptyVariant(p, 'ok'), this.durations(pointId(p), 20)));
    for (const v of out) ctx.onVariant?.(v);
    return out;
  }

  async measureAgain(requests: { variant: SweepVariant; samples: number }[]): Promise<SweepVariant[]> {
    this.again.push(requests.map(r => [r.variant.id, r.samples]));
    this.onAgain();
    return requests.map(r => this.timed(r.variant, [...r.variant.durationsMs!, ...this.durations(r.variant.id, r.samples)]));
  }

  notes(): string[] {
    return [];
  }

  cost() {
    return { compileS: 0, checkS: 0, profileS: 0, gpuIdleS: 0, gpuRuns: 0, gpus: [] };
  }
}

function sweep(runner: FakeGpu, over: Partial<SweepOptions> = {}, observed: SweepResult[] = []): Promise<SweepResult> {
  const o: SweepOptions = {
    file: '/tmp/adaptive/k.cu',
    text: SOURCE,
    analysis,
    toolchain: { nvcc: { version: '13.0' } } as unknown as Toolchain,
    arch: 'sm_90',
    flags: { arch: null, args: [] } as unknown as SweepOptions['flags'],
    cacheDir: '/tmp/adaptive/cache',
    loops: [2],
    factors: UnrollFactors.of([1, 4, 8]),
    gpu: { args: [], samples: 20, maxSamples: 100, warmup: 2, clockControl: 'none', timeoutMs: 60_000, launcher: [] },
    runner: () => runner,
    ...over,
  };
  return runSweep(o, { onVariant: (_v, partial) => observed.push(partial) });
}

const samplesOf = (r: SweepResult) => Object.fromEntries(r.variants.map(v => [v.id, v.samples]));

describe('adaptive sampling (--max-samples)', () => {
  test('a clear leader: no second round; every variant keeps its first 20 durations', async () => {
    const gpu = new FakeGpu({ 'as-written': 1, '2=1': 1.4, '2=4': 0.7, '2=8': 0.8 }, 0.01);
    const r = await sweep(gpu);
    assert.equal(r.best, '2=4');
    assert.deepEqual(gpu.again, []);
    assert.deepEqual(samplesOf(r), { 'as-written': 20, '2=1': 20, '2=4': 20, '2=8': 20 });
    assert.deepEqual(r.confidence!.sampling, { minSamples: 20, maxSamples: 100, rounds: 0, stopped: 'leader certain' });
    assert.equal(r.confidence!.pFirst, 1);
    assert.equal(applyBestOffer(r).offer, true);
  });

  test('two leaders of one speed: only they are timed again, 20 more a round, up to the maximum', async () => {
    const gpu = new FakeGpu({ 'as-written': 1, '2=1': 1.4, '2=4': 0.8, '2=8': 0.8 }, 0.03, undefined, { '2=8': '2=4' });
    const observed: SweepResult[] = [];
    const r = await sweep(gpu, {}, observed);
    assert.deepEqual(r.confidence!.sampling, { minSamples: 20, maxSamples: 100, rounds: 4, stopped: 'max samples reached' });
    // the file as written and ×1 are clearly slower than the leader: never timed again
    assert.deepEqual(samplesOf(r), { 'as-written': 20, '2=1': 20, '2=4': 100, '2=8': 100 });
    for (const round of gpu.again)
      assert.deepEqual(round.map(([id, n]) => [id, n]).sort(), [
        ['2=4', 20],
        ['2=8', 20],
      ]);
    assert.ok(r.confidence!.pFirst < 0.95, `${r.confidence!.pFirst}`);
    // speedups follow the longer timings; each round reaches the observers
    const ms = (id: string) => r.variants.find(v => v.id === id)!;
    assert.equal(ms('2=4').speedup, ms('as-written').medianMs! / ms('2=4').medianMs!);
    assert.equal(observed.at(-1)!.variants.find(v => v.id === r.best)!.samples, 100);
    // faster than the file as written either way: Apply best is offered
    assert.equal(r.confidence!.distinguishable, true);
  });

  test('close leaders: more samples settle the order before the maximum', async () => {
    const gpu = new FakeGpu({ 'as-written': 1, '2=1': 1.4, '2=4': 0.8, '2=8': 0.815 }, 0.05);
    const r = await sweep(gpu, {
      gpu: { args: [], samples: 20, maxSamples: 400, warmup: 2, clockControl: 'none', timeoutMs: 60_000, launcher: [] },
    });
    const c = r.confidence!;
    assert.equal(c.sampling!.stopped, 'leader certain');
    assert.ok(c.sampling!.rounds >= 1, `${c.sampling!.rounds} rounds`);
    assert.equal(c.best, '2=4');
    assert.ok(c.pFirst >= 0.95 || c.leadLow! > 1, `${c.pFirst} ${c.leadLow}`);
    const s = samplesOf(r);
    assert.ok(s['2=4'] > 20 && s['2=4'] < 400, `${s['2=4']}`);
    assert.equal(s['as-written'], 20);
  });

  test('off unless --max-samples is above --samples; cancelled between rounds', async () => {
    for (const maxSamples of [0, 20, undefined]) {
      const gpu = new FakeGpu({ 'as-written': 1, '2=1': 1.4, '2=4': 0.8, '2=8': 0.8 }, 0.03);
      const r = await sweep(gpu, {
        gpu: { args: [], samples: 20, maxSamples, warmup: 2, clockControl: 'none', timeoutMs: 60_000, launcher: [] },
      });
      assert.deepEqual(gpu.again, [], `maxSamples ${maxSamples}`);
      assert.equal(r.confidence!.sampling, undefined);
    }
    const ac = new AbortController();
    const gpu = new FakeGpu({ 'as-written': 1, '2=1': 1.4, '2=4': 0.8, '2=8': 0.8 }, 0.03, () => ac.abort(), { '2=8': '2=4' });
    const r = await sweep(gpu, { signal: ac.signal });
    assert.equal(gpu.again.length, 1);
    assert.equal(r.confidence!.sampling!.stopped, 'cancelled');
    assert.equal(r.complete, false);
  });

  test('within noise of the file as written: Apply best not offered; the result and an older one both load', async () => {
    const gpu = new FakeGpu({ 'as-written': 0.8, '2=1': 1.4, '2=4': 0.8, '2=8': 1.1 }, 0.03, undefined, { '2=4': 'as-written' });
    const r = await sweep(gpu);
    const c = r.confidence!;
    assert.equal(c.distinguishable, false);
    assert.equal(c.sampling!.stopped, 'max samples reached');
    assert.equal(applyBestOffer(r).offer, false);
    const loaded = checkSweepResult(JSON.parse(JSON.stringify(r)));
    assert.deepEqual(loaded.confidence, c);
    assert.deepEqual(
      loaded.variants.map(v => v.durationsMs?.length),
      r.variants.map(v => v.samples),
    );
    // saved before issue 25: no durations, no confidence; it loads, and Apply best is offered as it was
    const old = JSON.parse(JSON.stringify(r)) as Partial<SweepResult>;
    delete old.confidence;
    for (const v of old.variants!) delete v.durationsMs;
    const back = checkSweepResult(old);
    assert.equal(back.confidence, undefined);
    assert.equal(applyBestOffer({ ...back, best: '2=4' }).offer, true);
    // a forged one is refused
    assert.throws(() => checkSweepResult({ ...JSON.parse(JSON.stringify(r)), confidence: { ...c, pFirst: 2 } }), /confidence\.pFirst/);
  });
});
