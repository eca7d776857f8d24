// What keeps the GPU busy in a GPU sweep besides the runner's own turns: each point's SASS as a
// promise of its own (so the GPU need not wait for the last cubin), and first runs started ahead
// of their turn with the CUPTI timer, held at their first kernel launch (timeNative's startAhead).
import type { SweepVariant } from '../../../schema/types';
import type { VariantProgram } from '../../profile/stages/program';
import { AheadRun, NativeTimeOptions, startAhead } from '../../profile/native/timeNative';
import { PC_SAMPLING_PERIOD } from '../../profile/native/pcStalls';
import type { BenchOptions } from '../../profile/types';
import type { BuildResult } from '../../variants/build';
import type { SweepPoint } from '../space';
import { pointId } from '../space';
import type { RunnerContext } from './runner';

/**
 * The SASS side's result of each point as a promise of its own, resolved as the static runner
 * hands results on (in point order, identical code already marked), and all of them.
 */
export function streamSass(
  measure: (points: SweepPoint[], ctx: RunnerContext) => Promise<SweepVariant[]>,
  points: SweepPoint[],
  ctx: RunnerContext,
): { each: Promise<SweepVariant>[]; all: Promise<SweepVariant[]> } {
  const ids = points.map(pointId);
  const waiting = points.map(() => {
    let resolve!: (v: SweepVariant) => void;
    let reject!: (e: unknown) => void;
    const promise = new Promise<SweepVariant>((res, rej) => ((resolve = res), (reject = rej)));
    promise.catch(() => undefined); // measure() rejects with the same error
    return { promise, resolve, reject };
  });
  const all = measure(points, { ...ctx, onVariant: v => waiting[ids.indexOf(v.id)]?.resolve(v) });
  all.then(
    vs => vs.forEach((v, i) => waiting[i].resolve(v)),
    e => waiting.forEach(w => w.reject(e)),
  );
  return { each: waiting.map(w => w.promise), all };
}

/**
 * Calls `start` with a point's SASS and program once both are in, if `running` (the point timed
 * before it) has not ended by then: a run started later would gain nothing.
 */
export function whileRunning(
  running: Promise<unknown>,
  sass: Promise<SweepVariant>,
  built: Promise<BuildResult | undefined>,
  start: (sass: SweepVariant, built: BuildResult | undefined) => void,
): void {
  let over = false;
  running.then(
    () => (over = true),
    () => (over = true),
  );
  Promise.all([sass, built]).then(
    ([s, b]) => !over && start(s, b),
    () => undefined,
  );
}

/** First runs started ahead, by program path: taken by the timing of that program, or stopped. */
export class AheadRuns {
  private readonly runs = new Map<string, AheadRun>();

  has(program: string): boolean {
    return this.runs.has(program);
  }

  start(p: VariantProgram, o: NativeTimeOptions): void {
    if (!this.runs.has(p.program)) this.runs.set(p.program, startAhead(p, o));
  }

  /** The run started ahead for this program, now the caller's to let go. */
  take(program: string): AheadRun | undefined {
    const run = this.runs.get(program);
    this.runs.delete(program);
    return run;
  }

  /** Stops the run started ahead for this build, if it was not taken (a cache hit, a failure). */
  async drop(built: BuildResult | undefined): Promise<void> {
    const run = built?.outputPath ? this.take(built.outputPath) : undefined;
    if (run) await run.stop();
  }
}

/** How a GPU sweep timed its variants, in words: the tool, samples, clocks, caches and stalls. */
export function timingNote(
  g: Pick<BenchOptions, 'samples' | 'warmup' | 'timer' | 'stalls' | 'clockControl' | 'cacheControl'> & { maxSamples?: number },
  gpu: string | null,
): string {
  // adaptive sampling: the leading variants get more (confidence.sampling says how many rounds)
  const max = g.maxSamples ?? 0;
  const launches = `${g.samples} launches per variant${max > g.samples ? ` (the leading ones up to ${max})` : ''}`;
  return g.timer === 'cupti'
    ? `timed by the CUPTI kernel timer in the program's own runs on ${gpu ?? 'the GPU'}, ${launches} ` +
        `after ${g.warmup} warm-up: clocks as the GPU sets them, caches warm between launches, ` +
        (g.stalls === false
          ? 'no stall reasons (--stalls off)'
          : `stall reasons from CUPTI PC sampling (every 2^${PC_SAMPLING_PERIOD} cycles, first run)`)
    : `timed under ncu on ${gpu ?? 'the GPU'}, ${launches} after ${g.warmup} warm-up, ` +
        `clocks ${g.clockControl === 'base' ? 'locked to base' : 'not locked (--clock-control none)'}, ` +
        (g.cacheControl === 'none' ? 'caches not flushed between launches (--cache-control none)' : 'caches flushed before each launch');
}
