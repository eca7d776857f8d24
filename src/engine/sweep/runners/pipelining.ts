// What keeps the GPU busy in a GPU sweep besides the runner's own turns: each point's SASS as a
// promise of its own (so the GPU need not wait for the last cubin), and first runs started ahead
// of their turn with the CUPTI timer, held at their first kernel launch (timeNative's startAhead).
import type { SweepVariant } from '../../../schema/types';
import type { VariantProgram } from '../../gpu/stages/program';
import { AheadRun, NativeTimeOptions, startAhead } from '../../gpu/cupti/timeNative';
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
  const waiting = points.map(() => deferred<SweepVariant>()); // measure() rejects with the same error
  const all = measure(points, { ...ctx, onVariant: v => waiting[ids.indexOf(v.id)]?.resolve(v) });
  all.then(
    vs => vs.forEach((v, i) => waiting[i].resolve(v)),
    e => waiting.forEach(w => w.reject(e)),
  );
  return { each: waiting.map(w => w.promise), all };
}

/** A promise settled from outside; its rejection is awaited elsewhere, so it is never unhandled here. */
export function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

/** A promise resolved once, from outside, however often resolve() is called; `open`: resolved already. */
export function latch(open = false): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>(r => (resolve = r));
  if (open) resolve();
  return { promise, resolve };
}

/** What is known now of each promise: its value once it has resolved (undefined before, or if it rejected). */
export function settledNow<T>(promises: Promise<T>[]): (T | undefined)[] {
  const now: (T | undefined)[] = [];
  promises.forEach((x, i) =>
    x.then(
      v => (now[i] = v),
      () => undefined,
    ),
  );
  return now;
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

/**
 * First runs started ahead, by program, GPU and program arguments: taken by the timing of that
 * program on that GPU with those arguments, or stopped. The arguments are part of the key because
 * the points of a template sweep share one program and differ only in them (`--coarsen {COARSEN}`):
 * a run started for one point's arguments launches another instantiation than the next point times.
 */
export class AheadRuns {
  private readonly runs = new Map<string, AheadRun>();

  /** A run is tied to the GPU its process was started on (the slot's environment) and to its command line. */
  private static key(program: string, env: Record<string, string> | undefined, args: readonly string[]): string {
    return JSON.stringify([program, env?.CUDA_VISIBLE_DEVICES ?? null, args]);
  }

  start(p: VariantProgram, o: NativeTimeOptions): void {
    const key = AheadRuns.key(p.program, o.env, o.args);
    if (!this.runs.has(key)) this.runs.set(key, startAhead(p, o));
  }

  /** The run started ahead for this program on this GPU with these arguments, now the caller's to let go. */
  take(program: string, env: Record<string, string> | undefined, args: readonly string[]): AheadRun | undefined {
    const key = AheadRuns.key(program, env, args);
    const run = this.runs.get(key);
    this.runs.delete(key);
    return run;
  }

  /**
   * Stops every run started ahead for this build and not taken (a cache hit, a failure, another
   * GPU took it); with `args`, only those started with these arguments: the points of a template
   * sweep share one build, and a point done must not stop the run started for the next one.
   */
  async drop(built: BuildResult | undefined, args?: readonly string[]): Promise<void> {
    if (!built?.outputPath) return;
    const program = built.outputPath;
    const left = [...this.runs].filter(([key]) => {
      const [p, , a] = JSON.parse(key) as [string, unknown, string[]];
      return p === program && (!args || JSON.stringify(a) === JSON.stringify(args));
    });
    for (const [key] of left) this.runs.delete(key);
    for (const [, run] of left) await run.stop();
  }
}
