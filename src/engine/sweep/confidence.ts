// Issue 25, "Stop when the answer is known": how sure a GPU sweep is of its best. Each variant's
// kernel durations are resampled with replacement (a bootstrap, with a seeded generator so the same
// durations always give the same numbers), and the medians are compared resample by resample:
// the best against the file as written (is it faster, and by how much: the ratio of medians with
// its 95% interval) and against the other leading variants (in how many resamples is it first).
// Apply best is offered only when the best is distinguishable from the file as written: the
// interval of the ratio lies above 1 and the gain is at least the drift between separate runs of
// one program (RUN_DRIFT, 3%): each variant is timed in runs of its own, so a smaller gain, however
// tight its interval, may be that drift (the interval only sees the noise within the runs).
import type { SweepConfidence, SweepResult, SweepVariant } from '../../schema/types';
import { intervalText } from '../../schema/applyBest';
import { RUN_DRIFT } from '../gpu/stages/summary';

/** 2000 resamples for a 95% interval; a fixed seed, so a result and its tests are reproducible. */
const BOOTSTRAP = { resamples: 2000, level: 0.95, seed: 25 } as const;
/** The smallest gain over the file as written that counts (3%: the run-to-run drift of summary.ts). */
export const MIN_GAIN = RUN_DRIFT;
/** The leading variants the best is ranked among: the fastest distinct programs. */
const MAX_CONTENDERS = 4;
/** The leader is certain when it is first in this share of resamples (or its interval against the runner-up lies above 1). */
export const CERTAIN = 0.95;

export interface BootstrapOptions {
  resamples?: number;
  level?: number;
  seed?: number;
}

/** mulberry32: a small seeded generator of uniform numbers in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The `q` quantile of sorted values, interpolated as summarize() does (the median of an even count: the middle two's midpoint). */
function quantileOfSorted(s: ArrayLike<number>, q: number): number {
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo] + (s[hi] - s[lo]) * (pos - lo);
}

/** The median of the durations, as the variant's medianMs. */
export function median(values: readonly number[]): number {
  return quantileOfSorted(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}

/** The median of one resample of `sorted` (drawn with replacement), from how often each value was drawn: O(n). */
function resampleMedian(sorted: readonly number[], rand: () => number, counts: Uint32Array): number {
  const n = sorted.length;
  counts.fill(0);
  for (let i = 0; i < n; i++) counts[Math.floor(rand() * n)]++;
  const lo = (n - 1) >> 1;
  const hi = n >> 1;
  let seen = 0;
  let low = NaN;
  for (let j = 0; j < n; j++) {
    seen += counts[j];
    if (Number.isNaN(low) && seen > lo) low = sorted[j];
    if (seen > hi) return low + (sorted[j] - low) * 0.5;
  }
  return low;
}

/** Every group's median in every resample (`[group][resample]`); one generator, drawn group after group within a resample. */
export function bootstrapMedians(groups: readonly (readonly number[])[], o: BootstrapOptions = {}): Float64Array[] {
  if (groups.some(g => !g.length)) throw new Error('a bootstrap needs at least one duration per group');
  const resamples = o.resamples ?? BOOTSTRAP.resamples;
  const rand = seededRandom(o.seed ?? BOOTSTRAP.seed);
  const sorted = groups.map(g => [...g].sort((a, b) => a - b));
  const counts = sorted.map(s => new Uint32Array(s.length));
  const out = groups.map(() => new Float64Array(resamples));
  for (let r = 0; r < resamples; r++) sorted.forEach((s, g) => (out[g][r] = resampleMedian(s, rand, counts[g])));
  return out;
}

/** The central `level` share of the resampled ratios a[r] / b[r] (percentile bootstrap). */
function ratioInterval(a: Float64Array, b: Float64Array, level: number): { low: number; high: number } {
  const ratios = a.map((x, r) => x / b[r]).sort();
  const tail = (1 - level) / 2;
  return { low: quantileOfSorted(ratios, tail), high: quantileOfSorted(ratios, 1 - tail) };
}

export interface RatioEstimate {
  /** median(numerator) ÷ median(denominator). */
  ratio: number;
  low: number;
  high: number;
}

/** median(num) ÷ median(den) with its bootstrap interval: > 1 when `den` is the faster. */
export function medianRatio(num: readonly number[], den: readonly number[], o: BootstrapOptions = {}): RatioEstimate {
  const [a, b] = bootstrapMedians([num, den], o);
  return { ratio: median(num) / median(den), ...ratioInterval(a, b, o.level ?? BOOTSTRAP.level) };
}

/** The share of resamples in which group `leader` has the smallest median; a tie of k groups gives each 1/k. */
export function firstShare(medians: readonly Float64Array[], leader: number): number {
  const resamples = medians[0]?.length ?? 0;
  if (!resamples) return 0;
  let first = 0;
  for (let r = 0; r < resamples; r++) {
    const mine = medians[leader][r];
    let tied = 1;
    let beaten = false;
    for (let g = 0; g < medians.length && !beaten; g++) {
      if (g === leader) continue;
      if (medians[g][r] < mine) beaten = true;
      else if (medians[g][r] === mine) tied++;
    }
    if (!beaten) first += 1 / tied;
  }
  return first / resamples;
}

/** A variant with durations to resample. */
function timed(v: SweepVariant | undefined): v is SweepVariant & { durationsMs: number[] } {
  return !!v && v.status === 'ok' && !!v.durationsMs?.length;
}

/** The program a variant's timing is: its own, or the one it has the same machine code as. */
function programOf(v: SweepVariant): string {
  return v.identicalTo ?? v.id;
}

/** `best` first, then the fastest other distinct programs with durations, MAX_CONTENDERS in all. */
function contendersOf(variants: readonly SweepVariant[], best: SweepVariant & { durationsMs: number[] }) {
  const seen = new Set([programOf(best)]);
  const others: { v: SweepVariant & { durationsMs: number[] }; median: number }[] = [];
  for (const v of variants) {
    if (!timed(v) || seen.has(programOf(v))) continue;
    seen.add(programOf(v));
    others.push({ v, median: median(v.durationsMs) });
  }
  others.sort((a, b) => a.median - b.median);
  return [best, ...others.slice(0, MAX_CONTENDERS - 1).map(x => x.v)];
}

/**
 * How sure the result's GPU timings are of its best (the fastest median): null when the best has
 * no durations (a static result, a result saved before them).
 */
export function sweepConfidence(r: SweepResult, o: BootstrapOptions = {}): SweepConfidence | null {
  const best = r.best ? r.variants.find(v => v.id === r.best) : undefined;
  if (!timed(best)) return null;
  const level = o.level ?? BOOTSTRAP.level;
  const resamples = o.resamples ?? BOOTSTRAP.resamples;
  const seed = o.seed ?? BOOTSTRAP.seed;
  const base = r.variants.find(v => v.id === r.baseline);
  const contenders = contendersOf(r.variants, best);
  const baseAt = timed(base) ? contenders.findIndex(v => programOf(v) === programOf(base)) : -1;
  // the file as written joins the one bootstrap when it is not a contender itself
  const groups = contenders.map(v => v.durationsMs);
  if (timed(base) && baseAt < 0) groups.push(base.durationsMs);
  const medians = bootstrapMedians(groups, { resamples, seed });
  const ofGroup = (i: number, j: number): RatioEstimate => ({
    ratio: median(groups[i]) / median(groups[j]),
    ...ratioInterval(medians[i], medians[j], level),
  });
  const runnerUp = contenders[1] ?? null;
  const lead = runnerUp ? ofGroup(1, 0) : null;
  const vsBase = !timed(base) ? null : baseAt === 0 ? { ratio: 1, low: 1, high: 1 } : ofGroup(baseAt < 0 ? groups.length - 1 : baseAt, 0);
  const { distinguishable, reason } = decide(best, base, vsBase, level);
  return {
    method: 'bootstrap',
    resamples,
    seed,
    level,
    best: best.id,
    ratio: vsBase?.ratio ?? null,
    ratioLow: vsBase?.low ?? null,
    ratioHigh: vsBase?.high ?? null,
    minGain: MIN_GAIN,
    distinguishable,
    reason,
    contenders: contenders.map(v => v.id),
    pFirst: runnerUp ? firstShare(medians.slice(0, contenders.length), 0) : 1,
    runnerUp: runnerUp?.id ?? null,
    leadRatio: lead?.ratio ?? null,
    leadLow: lead?.low ?? null,
    leadHigh: lead?.high ?? null,
  };
}

/** Is the best distinguishable from the file as written, and the line that says so. */
function decide(
  best: SweepVariant,
  base: SweepVariant | undefined,
  vsBase: RatioEstimate | null,
  level: number,
): { distinguishable: boolean; reason: string } {
  const no = (reason: string) => ({ distinguishable: false, reason });
  if (base && best.id === base.id) return no('the file as written is the fastest');
  if (!base || !vsBase)
    return no(`the file as written has no timing (${base?.status ?? 'not measured'}): ${best.label} cannot be shown faster`);
  if (programOf(best) === programOf(base)) return no(`${best.label} has the same machine code as the file as written`);
  const ci = intervalText(level, vsBase.low, vsBase.high);
  if (vsBase.low <= 1)
    return no(`the code as written is as fast, within noise: ${best.label} is ${vsBase.ratio.toFixed(2)}× the file as written ${ci}`);
  if (vsBase.ratio < 1 + MIN_GAIN) {
    return no(
      `the code as written is as fast: ${best.label} is ${vsBase.ratio.toFixed(2)}× the file as written ${ci}, ` +
        `under the ${Math.round(MIN_GAIN * 100)}% separate runs of one program can drift`,
    );
  }
  return { distinguishable: true, reason: `${best.label} is faster than the file as written by ${vsBase.ratio.toFixed(2)}× ${ci}` };
}
