// A kernel-wide sweep: every swept loop's unroll factor (and every extra macro or template value) varied
// together, each point built and measured by a runner (static SASS, or timed on a GPU), the
// points chosen by a strategy (all of them, or a coordinate descent). The result is the
// protocol's SweepResult, streamed to an observer as variants finish.
import type { ProjectRun } from './runners/projectPrograms';
import type { SweepLoop, SweepResult, SweepVariant } from '../../schema/types';
import type { FileAnalysis, Loop } from '../parse/model';
import { icacheBudget } from '../icache/budget';
import { withinNoise } from '../gpu/stages/summary';
import type { CompileFlags } from '../toolchain/flags';
import type { Toolchain } from '../toolchain/toolchain';
import type { TimedKernels } from '../gpu/stages/build';
import { writtenFactor } from '../variants/factors';
import { icacheEntries } from '../icache/entries';
import { launchWarpsPerSm, warpsAtOccupancy } from '../occupancy/warpsPerSm';
import { bestBy, gpuScore, staticBasis, staticRuleOf, staticScore, VIOLATION } from './objective';
import { combineObservers, progressLine, SweepObserver } from './observers/observer';
import type { SweepProgress } from '../../schema/progress';
import type { PhaseAt, RunnerContext, SweepRunner } from './runners/runner';
import type { SweepPhase } from '../../schema/progress';
import { GpuRunner } from './runners/gpu';
import type { GpuRunConfig } from '../gpu/options';
import { timerFor } from '../gpu/timer';
import { StaticRunner, StaticRunnerOptions } from './runners/static';
import { AS_WRITTEN, AS_WRITTEN_ID, pointId, pointLabel, resolveSpace, SpaceOptions, SweepSpace, SweepSpaceError } from './space';
import { exhaustive, Score, SearchSpace, Strategy, strategyByName } from './strategies';
import { CodeRegistry } from './variant';
import { sha256 } from './applyTarget';
import { conditionsText } from '../../schema/measurementText';
import { pointsText } from '../../schema/sweepCounts';
import { sweepConfidence } from './confidence';
import { sampleUntilCertain } from './adaptive';
import { remedies } from '../base/remedies';

export interface SweepOptions extends SpaceOptions {
  file: string;
  text: string;
  analysis: FileAnalysis;
  toolchain: Toolchain;
  arch: string;
  flags: CompileFlags;
  cacheDir: string;
  /** Parallel nvcc processes; default: cores. */
  jobs?: number;
  /** Mangled name or demangled substring: which instantiation of a template kernel to measure. */
  kernelFilter?: string;
  /** A strategy or its name; default exhaustive. */
  strategy?: string | Strategy;
  /**
   * A fixed instruction-cache budget for the static rule, bytes, replacing the i-cache model;
   * 0 or absent: the model (the calibrated budget stays the fallback for variants without its facts).
   */
  icacheBudgetBytes?: number;
  /** Resident warps per SM for the i-cache model; absent: each variant's theoretical occupancy. */
  warpsPerSm?: number;
  /** An exhaustive sweep larger than this is refused (use a search strategy). Default 5000. */
  maxPoints?: number;
  signal?: AbortSignal;
  /** Time every point on the GPU with these settings; absent: a static sweep (SASS only). */
  gpu?: GpuRunConfig;
  /** Per compile, milliseconds (default: the builder's). */
  compileTimeoutMs?: number;
  /** The runner measuring the points, replacing the static or GPU one (replays, tests). */
  runner?: (space: SweepSpace, o: SweepOptions) => SweepRunner;
  /** Clock for createdAt (tests). */
  now?: () => Date;
  /** What the result says produced it: a kernel sweep (default), one loop's benchmark or a comparison of kernels. */
  origin?: 'sweep' | 'bench' | 'compare';
  /**
   * Time every kernel holding this loop (template instantiations; a benchmark; `kernel` narrows
   * them) or the kernels named (a comparison), each in the variants' `instantiations`. GPU sweeps only.
   */
  everyKernel?: TimedKernels;
  /** The space, already resolved (a comparison: the file as written alone); absent: from loops, factors and params. */
  space?: SweepSpace;
  /** A header's variants are built through this translation unit (SASS side and kernel search). */
  translationUnit?: string;
  /** GPU sweeps: build and run through the project's commands in a copy of its tree (runners/projectPrograms.ts). */
  project?: ProjectRun;
}

const DEFAULT_MAX_POINTS = 5000;

function sweepLoop(l: Loop): SweepLoop {
  return { line: l.line, written: writtenFactor(l), tripCount: l.tripCount ?? null, pragma: l.pragma?.text ?? null };
}

/** Two points with the same machine code and parameters (one is `identicalTo` the other, or both to a third). */
export function sameCode(a: SweepVariant, b: SweepVariant): boolean {
  return a.identicalTo === b.id || b.identicalTo === a.id || (a.identicalTo !== null && a.identicalTo === b.identicalTo);
}

/**
 * Speedup and noise against the baseline (GPU medians; the noise model is withinNoise's), for the
 * variant and for each instantiation it timed against the same instantiation in the baseline.
 */
export function relate(v: SweepVariant, baseline: SweepVariant | null): void {
  if (v.status !== 'ok' || !baseline) return;
  const same = v === baseline || sameCode(v, baseline);
  if (v.medianMs !== null && baseline.medianMs !== null) {
    v.speedup = baseline.medianMs / v.medianMs;
    v.withinNoise = v === baseline ? true : withinNoise(v, baseline, same);
  }
  for (const x of v.instantiations ?? []) {
    const b = baseline.instantiations?.find(y => y.kernel === x.kernel && y.blockSize === x.blockSize);
    if (!b || x.medianMs === null || b.medianMs === null) continue;
    x.speedup = b.medianMs / x.medianMs;
    x.withinNoise = v === baseline ? true : withinNoise(x, b, same);
  }
}

/** An exhaustive sweep past the limit is refused before anything is built. */
function refuseTooLarge(space: SweepSpace, strategy: Strategy, maxPoints: number): void {
  if (strategy === exhaustive && space.size > maxPoints)
    throw new SweepSpaceError(
      `${space.size} points is too many for an exhaustive sweep (limit ${maxPoints}): ` +
        'use the coordinate strategy, fewer loops, fewer factors or fewer parameter values',
    );
}

/** The clock the CUPTI timer's durations came from (measurement.duration), known once they ran. */
function recordClock(result: SweepResult, runner: SweepRunner): void {
  const duration = runner.durationSource?.();
  if (duration && result.measurement) result.measurement.duration = duration;
}

export async function runSweep(o: SweepOptions, observer: SweepObserver = {}): Promise<SweepResult> {
  const space = o.space ?? resolveSpace(o.analysis, o.file, o);
  const strategy = typeof o.strategy === 'string' ? strategyByName(o.strategy) : (o.strategy ?? exhaustive);
  refuseTooLarge(space, strategy, o.maxPoints ?? DEFAULT_MAX_POINTS);
  const runner = runnerFor(o, space);
  const obs = combineObservers(observer);
  // Without --warps-per-sm, a launch of the kernel in the file that fixes its warps per SM (block
  // size constant, grid the SM count) is what the diagnostic and hover use too.
  const launchWarps = o.warpsPerSm && o.warpsPerSm > 0 ? null : launchWarpsPerSm(o.text, space.kernel.name, o.arch);
  const startedMs = Date.now();
  const result = emptyResult(o, space, runner, strategy.name, launchWarps?.warpsPerSm ?? null);
  const baseline = () => result.variants.find(v => v.id === AS_WRITTEN_ID) ?? null;
  const rule = staticRuleOf(result);
  const score = (v: SweepVariant): Score => scoreOf(runner, v, () => staticScore(v, baseline(), rule, result.variants));
  const chooseBest = () => {
    const best = bestBy(result.variants, score);
    result.best = best?.id ?? null;
    if (!best) result.bestBasis = null;
    else if (runner.static) {
      const broken = staticScore(best, baseline(), rule, result.variants)! >= VIOLATION;
      result.bestBasis =
        staticBasis(rule, space.loops.length > 0) + (broken ? ' (no variant met every condition: the one breaking fewest)' : '');
    } else {
      recordClock(result, runner);
      result.bestBasis = `fastest median kernel time${runner.gpu ? ` on ${runner.gpu}` : ''} (${conditionsText(result.measurement, best.samples)})`;
    }
    if (!runner.static) setConfidence(result);
  };

  // no axis (a comparison of kernels): the file as written is the only point
  const searching = space.axes.length > 0;
  const searchSpace: SearchSpace = { sizes: space.sizes, start: space.start(o.text) };
  const counter = variantCounter(searching ? strategy : null, searchSpace);
  const progress = progressReporter(obs, runner, startedMs, () => counter.count(result.variants.length));
  const ctx: RunnerContext = {
    signal: o.signal,
    registry: new CodeRegistry(!runner.static),
    onPhase: (p, phase: SweepPhase, detail, at) => progress(phase, pointLabel(p), pointId(p), detail, at),
    onVariant: v => {
      if (runner.comparable?.(v) !== false) relate(v, v.id === AS_WRITTEN_ID ? v : baseline());
      result.variants.push(v);
      result.evaluations = result.variants.length;
      chooseBest();
      obs.onVariant?.(v, structuredClone(result));
      const same = v.identicalTo ? (result.variants.find(x => x.id === v.identicalTo)?.label ?? v.identicalTo) : null;
      progress('done', v.label, v.id, same ? `same machine code as ${same}` : v.status === 'ok' ? undefined : v.status);
    },
  };

  progress('start', null, null, `${space.size} points, ${strategy.name}`);
  // The file as written rides with the strategy's first batch (the runner measures it first and
  // reports it first, so every later score has its baseline): its builds and the others' overlap.
  let baselinePending = true;
  if (searching)
    await strategy.search({
      space: searchSpace,
      signal: o.signal,
      atMost: n => counter.atMost(n),
      evaluate: async idx => {
        counter.asked(idx.length);
        if (o.signal?.aborted) return idx.map(() => null);
        progress(
          'build',
          null,
          null,
          `${idx.length + (baselinePending ? 1 : 0)} variant${idx.length === 1 && !baselinePending ? '' : 's'}`,
        );
        const points = idx.map(i => space.point(i));
        const withBaseline = baselinePending;
        baselinePending = false;
        const variants = await runner.measure(withBaseline ? [AS_WRITTEN, ...points] : points, ctx);
        return variants.slice(withBaseline ? 1 : 0).map(v => (v.status === 'cancelled' ? null : score(v)));
      },
    });
  counter.atMost(0); // the strategy returned: it asks for nothing more
  if (baselinePending && !o.signal?.aborted) await runner.measure([AS_WRITTEN], ctx);
  chooseBest();
  await sampleLeaders(o, result, runner, ctx, changed => {
    for (const v of result.variants) if (runner.comparable?.(v) !== false) relate(v, v.id === AS_WRITTEN_ID ? v : baseline());
    chooseBest();
    for (const v of changed) obs.onVariant?.(v, structuredClone(result));
  });
  if (o.gpu?.sourceStalls && runner.sourceStalls && !o.signal?.aborted) {
    progress('source-stalls', 'as written', AS_WRITTEN_ID);
    const s = await runner.sourceStalls(o.text, o.signal);
    result.lineStalls = s.lineStalls;
    result.lineStallsProblem = s.problem;
    result.sassStalls = s.sassStalls;
    if (s.lineStalls && s.source) result.lineStallsSource = s.source;
    if (s.cached) progress('cached', 'as written', AS_WRITTEN_ID, 'stalls per source line');
  }
  attachIcache(result);
  result.complete = !o.signal?.aborted;
  result.timing = { wallS: (Date.now() - startedMs) / 1000, ...runner.cost() };
  result.notes = sweepNotes(result, space, runner);
  if (runner.demangled) result.demangled = runner.demangled;
  if (launchWarps) result.notes.push(`instruction-cache model at ${launchWarps.warpsPerSm} warps/SM, from ${launchWarps.source}`);
  progress('done', null, null, `${result.complete ? '' : 'cancelled after '}${pointsText(result)}`);
  return result;
}

/**
 * A variant's score: the static rule's, or its GPU median; none for one measured on another GPU
 * model than the file as written (a mixed Slurm cluster: shown, not ranked).
 */
function scoreOf(runner: SweepRunner, v: SweepVariant, staticRule: () => Score): Score {
  if (runner.static) return staticRule();
  return runner.comparable?.(v) === false ? null : gpuScore(v);
}

/**
 * The progress counter: variants finished of at most requested + more (the file as written, the
 * points the strategy asked for, and at most `more` it may still ask for: its bound, tightened as
 * it learns, 0 once it returns). Shown as a bound (`[3/≤38]`) until it is exact, which an
 * exhaustive search (or none) is from the start. The strategy's estimate drives only the time left.
 */
function variantCounter(
  strategy: Strategy | null,
  space: SearchSpace,
): {
  asked(n: number): void;
  atMost(n: number): void;
  count(done: number): { done: number; total: number; atMost: boolean; expected: number };
} {
  let requested = 1;
  let more = strategy ? strategy.maxEvaluations(space) : 0;
  const exactFromStart = !strategy || strategy.asksForAll === true;
  const expected = 1 + (strategy ? strategy.expectedEvaluations(space) : 0);
  return {
    asked: n => {
      requested += n;
      more = Math.max(0, more - n);
    },
    atMost: n => {
      more = Math.max(0, Math.min(more, n));
    },
    count: done => {
      const total = requested + more;
      return { done, total, atMost: more > 0 && !exactFromStart, expected: Math.min(Math.max(expected, requested), total) };
    },
  };
}

/** How sure the GPU timings are of the best (issue 25): recomputed whenever the best or its durations change. */
function setConfidence(r: SweepResult): void {
  const c = sweepConfidence(r);
  if (c) r.confidence = c;
  else delete r.confidence;
}

/**
 * Adaptive sampling (o.gpu.maxSamples above o.gpu.samples): the leading variants timed again until
 * the leader is certain; `onRound` relates and re-ranks after each round. Records how it stopped.
 */
async function sampleLeaders(
  o: SweepOptions,
  result: SweepResult,
  runner: SweepRunner,
  ctx: RunnerContext,
  onRound: (changed: SweepVariant[]) => void,
): Promise<void> {
  const g = o.gpu;
  if (!g?.maxSamples || g.maxSamples <= g.samples || !runner.measureAgain || !result.confidence || o.signal?.aborted) return;
  const again = runner.measureAgain.bind(runner);
  const sampling = await sampleUntilCertain(
    result,
    again,
    ctx,
    { minSamples: g.samples, maxSamples: g.maxSamples, signal: o.signal },
    onRound,
  );
  if (result.confidence) result.confidence.sampling = sampling;
}

/** The static runner, the GPU runner when o.gpu says how to time, or the caller's (replays, tests). */
function runnerFor(o: SweepOptions, space: SweepSpace): SweepRunner {
  const staticOptions = staticOptionsOf(o, space);
  return (
    o.runner?.(space, o) ??
    (o.gpu
      ? new GpuRunner({
          ...staticOptions,
          gpu: o.gpu,
          params: space.macroParams,
          paramDefaults: space.defaults(o.text),
          everyKernel: o.everyKernel,
          project: o.project,
        })
      : new StaticRunner(staticOptions))
  );
}

/** What the SASS side of a sweep builds and measures with (the GPU runner's, and a Slurm sweep's builds). */
export function staticOptionsOf(o: Omit<SweepOptions, 'strategy'>, space: SweepSpace): StaticRunnerOptions {
  return {
    file: o.file,
    text: o.text,
    analysis: o.analysis,
    kernel: space.kernel.name,
    loops: space.loops.map(l => l.line),
    toolchain: o.toolchain,
    arch: o.arch,
    flags: o.flags,
    cacheDir: o.cacheDir,
    jobs: o.jobs,
    kernelFilter: o.kernelFilter,
    timeoutMs: o.compileTimeoutMs,
    templateParams: space.templateParams,
    templateDefaults: space.defaults(o.text),
    translationUnit: o.translationUnit,
  };
}

/** The instruction-cache budget of the static rule: the user's fixed one, or the calibrated one for the arch. */
function budgetFor(o: SweepOptions): { bytes: number; note: string } {
  if (o.icacheBudgetBytes && o.icacheBudgetBytes > 0)
    return { bytes: o.icacheBudgetBytes, note: 'from the unrollLens.icacheBudgetBytes setting' };
  const b = icacheBudget(o.arch);
  return { bytes: b.bytes, note: `${b.status}: ${b.source}` };
}

/** The result before its first variant: what is swept, how, and with which i-cache assumptions. */
function emptyResult(o: SweepOptions, space: SweepSpace, runner: SweepRunner, strategy: string, launchWarps: number | null): SweepResult {
  const budget = budgetFor(o);
  return {
    schema: 1,
    file: o.file,
    sourceSha256: sha256(o.text),
    kernel: space.kernel.name,
    kernelLine: space.kernel.line,
    loops: space.loops.map(sweepLoop),
    arch: o.arch,
    nvcc: o.toolchain.nvcc.version,
    gpu: runner.gpu,
    static: runner.static,
    strategy,
    origin: o.origin ?? 'sweep',
    createdAt: (o.now?.() ?? new Date()).toISOString(),
    factors: space.factors.toJSON(),
    params: Object.fromEntries(space.params.map(p => [p.name, [...p.values]])),
    spaceSize: space.size,
    evaluations: 0,
    baseline: AS_WRITTEN_ID,
    best: null,
    bestBasis: null,
    icacheBudgetBytes: budget.bytes,
    icacheBudgetNote: budget.note,
    icacheRule: o.icacheBudgetBytes && o.icacheBudgetBytes > 0 ? 'budget' : 'model',
    warpsPerSm: o.warpsPerSm && o.warpsPerSm > 0 ? o.warpsPerSm : launchWarps,
    // what the timer really did: the CUPTI timer leaves the clocks to the GPU whatever the ncu setting says
    ...(o.gpu ? { clockControl: timerFor(o.gpu).clockControl(o.gpu), measurement: timerFor(o.gpu).conditions(o.gpu) } : {}),
    variants: [],
    notes: [],
    complete: false,
  };
}

/** The sweep's progress callback: each step with its GPU, samples, variants done of all, elapsed and time left. */
function progressReporter(
  obs: SweepObserver,
  runner: SweepRunner,
  startedMs: number,
  count: () => { done: number; total: number; atMost: boolean; expected: number },
): (phase: SweepProgress['phase'], label: string | null, variant: string | null, detail?: string, at?: PhaseAt) => void {
  const eta = timeLeft(runner.parallel ?? 1);
  return (phase, label, variant, detail, at) => {
    const { done, total, atMost, expected } = count();
    if (variant !== null) eta.step(variant, phase);
    obs.onProgress?.({
      message: progressLine(done, total, label, phase, detail, atMost),
      phase,
      variant,
      done,
      total,
      ...(atMost ? { atMost } : {}),
      gpu: at?.gpu ?? null,
      ...(at?.samples !== undefined ? { samples: at.samples, samplesWanted: at.samplesWanted ?? 0 } : {}),
      elapsedS: (Date.now() - startedMs) / 1000,
      etaS: eta.left(Math.max(0, expected - done)),
    });
  };
}

/**
 * Time left: the points not finished, at the mean time one took from its first GPU step to its
 * end, over the points measured at once; null until one has been measured.
 */
function timeLeft(parallel: number): {
  step(variant: string, phase: SweepProgress['phase']): void;
  left(remaining: number): number | null;
} {
  const started = new Map<string, number>();
  const took: number[] = [];
  return {
    step(variant, phase) {
      if ((phase === 'time' || phase === 'check') && !started.has(variant)) started.set(variant, Date.now());
      else if (phase === 'done' && started.has(variant)) {
        took.push((Date.now() - started.get(variant)!) / 1000);
        started.delete(variant);
      }
    },
    left(remaining) {
      if (!took.length) return null;
      const mean = took.reduce((a, b) => a + b, 0) / took.length;
      return Math.max(0, (remaining * mean) / Math.max(1, parallel));
    },
  };
}

function sweepNotes(r: SweepResult, space: SweepSpace, runner: SweepRunner): string[] {
  const notes: string[] = [];
  // Says why no factor column is there: the kernel has no loop, or the sweep was asked for parameters only
  // (a kernel comparison has no axis at all: nothing to say).
  if (!space.loops.length && space.params.length) {
    const names = space.params.map(p => `${p.name} (${p.template ? 'template parameter' : 'macro'})`).join(', ');
    notes.push(`no loop swept${space.kernel.loops.length ? '' : ` (${space.kernel.name} has none)`}: only the values of ${names}`);
  }
  const base = r.variants.find(v => v.id === AS_WRITTEN_ID);
  if (base && base.status !== 'ok')
    notes.push(`the file as written failed (${base.status})${base.message ? `: ${base.message.split('\n')[0]}` : ''}`);
  const same = r.variants.filter(v => v.identicalTo !== null).length;
  if (same) {
    notes.push(
      `${same} of ${r.variants.length} variants ${same === 1 ? 'has' : 'have'} the same machine code as an earlier one` +
        `${r.static ? '' : same === 1 ? ' and reuses its timing' : ' and reuse its timing'} (nvcc ignored or capped the request, or the change did not matter)`,
    );
  }
  const cached = r.variants.filter(v => v.cached).length;
  if (cached) {
    notes.push(
      `${cached} of ${r.variants.length} measurements reused from earlier runs of the same programs (no GPU run; ` +
        `${remedies().measureAgain})`,
    );
  }
  if (!r.complete) notes.push(`cancelled: ${r.evaluations} variants finished`);
  return [...notes, ...runner.notes()];
}

/**
 * Each variant's i-cache entry for the results panel (issue 13), as a bench has: the largest hot
 * code among its swept loops, predicted at the sweep's warps per SM (or the variant's theoretical
 * occupancy), and measured (median ÷ the reference's, no_instruction share) once the GPU ran it.
 */
export function attachIcache(r: SweepResult): void {
  const rows = r.variants.map(v => ({
    label: v.label,
    status: v.status === 'ok' ? ('ok' as const) : ('compile' as const),
    medianMs: v.medianMs,
    stallShare: v.stallShare,
    achievedOccupancy: v.achievedOccupancy,
  }));
  const builds = r.variants.map(v => {
    const facts = Object.values(v.hotCode ?? {}).filter(f => f !== null);
    const icache = facts.length ? facts.reduce((a, b) => (b!.bytes > a!.bytes ? b : a)) : null;
    const theoretical = v.occupancy !== null ? (warpsAtOccupancy(v.occupancy, r.arch) ?? undefined) : undefined;
    return { icache, warpsPerSm: r.warpsPerSm ?? theoretical };
  });
  if (builds.every(b => !b.icache)) return;
  icacheEntries(rows, builds, r.arch, r.measurement?.tool ?? null).forEach((e, i) => (r.variants[i].icache = e));
}
