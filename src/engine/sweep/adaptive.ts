// Adaptive sampling (issue 25, --max-samples, unrollLens.profile.maxSamples): after every variant
// has its first `samples` durations, the leading variants are timed again, `samples` more at a time,
// while the leader is uncertain (first in under 95% of bootstrap resamples, and its interval against
// the runner-up reaching 1), up to `maxSamples` each. Only the leader and the contenders not yet
// clearly slower than it run again, through the runner's measureAgain (the same programs, timing
// only: each already passed its check).
import type { SamplingStop, SweepConfidence, SweepResult, SweepVariant } from '../../schema/types';
import { CERTAIN, medianRatio } from './confidence';
import type { RunnerContext, SweepRunner } from './runners/runner';
import { GPU_FIELDS } from './variant';

type Sampling = NonNullable<SweepConfidence['sampling']>;

export interface SamplingOptions {
  /** Durations every variant got in the first round, and how many more a variant gets per round. */
  minSamples: number;
  /** The most durations one variant may get. */
  maxSamples: number;
  signal?: AbortSignal;
}

/** The leader needs no more samples: alone, first in CERTAIN of the resamples, or its interval against the runner-up above 1. */
function leaderCertain(c: SweepConfidence): boolean {
  return c.runnerUp === null || c.pFirst >= CERTAIN || (c.leadLow !== null && c.leadLow > 1);
}

/** The leader and the contenders whose median ÷ the leader's may still be 1 or below, each still under maxSamples. */
function toMeasureAgain(r: SweepResult, c: SweepConfidence, maxSamples: number): SweepVariant[] {
  const byId = new Map(r.variants.map(v => [v.id, v]));
  const leader = byId.get(c.best);
  if (!leader?.durationsMs?.length) return [];
  // a row with the same machine code as another stands for that one: the original is timed again
  const open = c.contenders
    .map(id => byId.get(id))
    .map(v => (v?.identicalTo ? (byId.get(v.identicalTo) ?? v) : v))
    .filter((v): v is SweepVariant => !!v?.durationsMs?.length)
    .filter(v => v === leader || medianRatio(v.durationsMs!, leader.durationsMs!, { level: c.level, seed: c.seed }).low <= 1);
  return open.filter(v => v.samples < maxSamples);
}

/** A variant measured again replaces its row, and its numbers those of the rows with the same machine code. */
function replace(r: SweepResult, v: SweepVariant): SweepVariant[] {
  const changed = [v];
  r.variants = r.variants.map(x => (x.id === v.id ? v : x));
  for (const x of r.variants) {
    if (x.identicalTo !== v.id || x.status !== 'ok') continue;
    for (const k of GPU_FIELDS) (x as unknown as Record<string, unknown>)[k] = v[k];
    changed.push(x);
  }
  return changed;
}

/**
 * Times the leading variants again until the leader is certain (r.confidence, which `update`
 * recomputes with the sweep's best after each round) or they have maxSamples durations each.
 * `update` gets every row that changed.
 */
export async function sampleUntilCertain(
  r: SweepResult,
  measureAgain: NonNullable<SweepRunner['measureAgain']>,
  ctx: RunnerContext,
  o: SamplingOptions,
  update: (changed: SweepVariant[]) => void,
): Promise<Sampling> {
  let rounds = 0;
  const stop = (stopped: SamplingStop): Sampling => ({ minSamples: o.minSamples, maxSamples: o.maxSamples, rounds, stopped });
  for (;;) {
    if (o.signal?.aborted) return stop('cancelled');
    const c = r.confidence;
    if (!c) return stop('no new samples');
    if (leaderCertain(c)) return stop('leader certain');
    const again = toMeasureAgain(r, c, o.maxSamples);
    if (!again.length) return stop('max samples reached');
    const measured = await measureAgain(
      again.map(v => ({ variant: v, samples: Math.min(o.minSamples, o.maxSamples - v.samples) })),
      ctx,
    );
    rounds++;
    const grown = measured.filter((v, i) => v.samples > again[i].samples);
    if (!grown.length) return stop(o.signal?.aborted ? 'cancelled' : 'no new samples');
    update(grown.flatMap(v => replace(r, v)));
  }
}
