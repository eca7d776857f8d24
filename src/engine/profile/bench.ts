// "Benchmark this loop": build each unroll variant as a whole program, then time and profile
// the target kernel under Nsight Compute (durations from gpu__time_duration.sum, stall reasons
// from the warp-state metrics); the program's output in that run says whether it still computes
// the file as written's result. Programs build while the GPUs measure those already built (a few
// ncu processes per GPU, gpuSlots.ts); the same machine code is measured once and a measurement
// already taken comes from the measurement cache.
//
// The stages live in ./stages/, each callable on its own for one variant: build (cubins and
// programs), check (a plain run against the baseline), time (ncu durations and stalls per
// instantiation), lineStalls (per source line) and summary (statistics, speedups, tables).
// benchLoop below only strings them together.
import { setMaxListeners } from 'events';
import type { FileAnalysis } from '../parse/model';
import { MissingToolError } from '../toolchain/discover';
import type { LoopVariant } from '../variants/reports';
import type { BuildResult } from '../variants/build';
import { BenchSource, BenchVariant, buildFailure, findTargetKernels, startBuilds } from './stages/build';
import { BaselineOutput, checkOutput, parseChecksums, reportsMismatch } from './stages/check';
import { defaultRunDir } from './gpuSelection';
import { defaultLockRoot, GpuClock, GpuSlot, gpuSlots, GpuTurns, PROFILES_PER_GPU } from './gpuSlots';
import { MeasurementCache, measuredGroups, measurementKeyFor, storedMeasurement } from './measurementCache';
import { cachedLineStalls } from './stages/lineStalls';
import type { VariantProgram } from './stages/program';
import { withIcache } from './stages/icache';
import { instantiationTables, summariseVariant, withSpeedups } from './stages/summary';
import { KernelSamples, TimeResult, timeVariant } from './stages/time';

export { parseChecksums } from './stages/check';
export { iqrOverlap, RUN_DRIFT, summarize, withinNoise } from './stages/summary';
export type { BenchOptions, BenchProgress, BenchReport, VariantRun } from './types';
export type { RunTiming } from '../../schema/types';
import type { BenchOptions, BenchProgress, BenchReport, RunStatus, VariantRun } from './types';

// ---------------------------------------------------------------------------------------------

/**
 * Benchmarks the file as written (the baseline) and one variant per factor, each setting every
 * loop of o.loops to that factor. Programs build in parallel while the GPUs measure the ones
 * built; variants with the same machine code are measured once; a measurement already in the
 * cache costs no GPU run. Each program's first run under ncu is also its result check.
 */
export async function benchLoop(file: string, text: string, analysis: FileAnalysis, o: BenchOptions): Promise<BenchReport> {
  if (!o.toolchain.ncu) throw new MissingToolError('ncu', []);
  const startedMs = Date.now();
  const focus = o.loops[0];
  if (!analysis.kernels.some(k => k.loops.some(l => l.line === focus)))
    throw new Error(`no loop in device code at line ${focus} of ${file}`);
  const src: BenchSource = { file, text, analysis, focus };
  const variants: BenchVariant[] = [{ label: 'as-written', factors: new Map() }];
  for (const f of o.factors) variants.push({ label: String(f), factors: new Map(o.loops.map(l => [l, f])) });
  const n = variants.length;
  const clock = new GpuClock();
  const tally = { done: 0, measureTimes: [] as number[] };
  const perGpu = Math.max(1, o.profilesPerGpu ?? PROFILES_PER_GPU);
  const slots = gpuSlots(o.gpus, perGpu, o.launcher, defaultLockRoot());
  const turnsOf = turnsPerGpu();
  // Every build and run listens to the one cancellation signal.
  if (o.signal) setMaxListeners(0, o.signal);
  const emit = progressEmitter(o, startedMs, n, slots, tally);

  emit(null, 'build', null);
  const builds = startBuilds(src, variants, o);
  builds.programs.forEach((b, i) => void b.then(() => emit(variants[i].label, 'build', null)));
  const sass = await builds.sass;
  const target = await findTargetKernels(src, sass, o);
  const runs: VariantRun[] = variants.map((v, i) => newRun(v, target.kernel, sass[i]));
  // The same machine code in two variants (the file as written and `default`; `full` that nvcc
  // made ×4; a factor nvcc ignored) is measured once, by the first of them.
  const measuredBy = variants.map((_, i) => {
    const h = sass[i]?.machineCode;
    return h ? sass.findIndex(s => s?.machineCode === h) : i;
  });
  const unique = variants.map((_, i) => i).filter(i => measuredBy[i] === i);

  const cache = o.measurementCacheDir ? new MeasurementCache(o.measurementCacheDir) : null;
  const runDir = o.runDir ?? defaultRunDir(o.cacheDir, o.launcher);
  const results: (TimeResult & { cached: boolean })[] = [];
  let next = 0;
  const measure = async (i: number, program: string, slot: GpuSlot): Promise<TimeResult & { cached: boolean }> => {
    const p: VariantProgram = { label: variants[i].label, program, file };
    const key = cache ? measurementKeyFor(o, program, slot.gpu, target.kernels) : null;
    const hit = key ? cache!.get(key) : null;
    if (hit) {
      emit(p.label, 'cached', slot.gpu);
      return { status: 'ok', message: null, groups: measuredGroups(hit), stdout: hit.stdout, programFailed: null, cached: true };
    }
    const t0 = Date.now();
    const r = await timeVariant(p, target, {
      ...o,
      env: slot.env,
      runDir,
      onRun: run => clock.add(slot.gpu, run),
      onSamples: (have, _wanted, phase) => emit(p.label, phase, slot.gpu, have),
    });
    tally.measureTimes.push((Date.now() - t0) / 1000);
    if (key && r.status === 'ok' && r.stdout !== null) cache!.put(key, storedMeasurement(r.groups, r.stdout));
    return { ...r, cached: false };
  };
  await Promise.all(
    slots.map(async slot => {
      while (next < unique.length) {
        const i = unique[next++];
        const program = await builds.programs[i];
        const run = runs[i];
        if (o.signal?.aborted) run.status = 'cancelled';
        else {
          const failed = buildFailure(program);
          if (failed) Object.assign(run, failed);
          else {
            // Failed beside other ncu processes on this GPU (memory, a timeout spent waiting for
            // ncu's lock): measured again with the GPU to itself before it counts as a failure.
            results[i] = await turnsOf(slot.gpu).sharedThenAlone(
              () => measure(i, program.outputPath!, slot),
              () => perGpu > 1 && !o.signal?.aborted,
              () => emit(run.label, 'time', slot.gpu, 0, ' · again, alone on the GPU'),
            );
          }
        }
        tally.done += variants.filter((_, j) => measuredBy[j] === i).length;
        emit(run.label, 'done', slot.gpu);
      }
    }),
  );
  const programs = await Promise.all(builds.programs);
  const { timings, checkMs } = await checkAll(unique, results, runs, target.kernel, o);
  copyIdentical(variants, runs, timings, measuredBy);
  const baselineProgram = programs[0].outputPath;
  const stalls =
    o.sourceStalls && runs[0].status === 'ok' && baselineProgram && !o.signal?.aborted
      ? await benchSourceStalls(o, { label: variants[0].label, program: baselineProgram, file }, text, target.kernel, {
          slot: slots[0],
          cache,
          clock,
          runDir,
          emit,
          n,
        })
      : { lineStalls: null, lineStallsProblem: null, sassStalls: null };
  return assembleReport({ o, target, runs, timings, measuredBy, sass, programs, slots, clock, startedMs, checkMs }, stalls);
}

/** Each GPU's turns at profiling alone, made when first asked for. */
function turnsPerGpu(): (gpu: number | null) => GpuTurns {
  const turns = new Map<number | null, GpuTurns>();
  return gpu => turns.get(gpu) ?? (turns.set(gpu, new GpuTurns()), turns.get(gpu)!);
}

/** The bench's progress callbacks: each step with its GPU, samples, variants done and the time left. */
function progressEmitter(
  o: BenchOptions,
  startedMs: number,
  n: number,
  slots: GpuSlot[],
  tally: { done: number; measureTimes: number[] },
): (variant: string | null, phase: BenchProgress['phase'], gpu: number | null, samples?: number, extra?: string) => void {
  const gpuCount = new Set(slots.map(s => s.gpu)).size;
  return (variant, phase, gpu, samples = 0, extra = '') => {
    const { done, measureTimes } = tally;
    const elapsedS = (Date.now() - startedMs) / 1000;
    // Left: the variants not finished, at the mean GPU time of those measured, over the GPUs in use.
    const mean = measureTimes.length ? measureTimes.reduce((a, b) => a + b, 0) / measureTimes.length : null;
    const etaS = mean === null ? null : Math.max(0, ((n - done) * mean) / Math.max(1, slots.length));
    const what = phase === 'done' ? 'done' : phase === 'time' || phase === 'stalls' ? `${phase} ${samples}/${o.samples} samples` : phase;
    const message = `${variant ?? 'bench'}: ${what}${gpu !== null && gpuCount > 1 ? ` · GPU ${gpu}` : ''}${extra}`;
    o.progress?.({ variant, phase, gpu, samples, samplesWanted: o.samples, done, total: n, elapsedS, etaS, message });
    o.onProgress?.(message, done, n);
  };
}

/** Per-line stalls of the file as written (one more ncu run, or the measurement cache), with the bench's progress and GPU clock. */
async function benchSourceStalls(
  o: BenchOptions,
  p: VariantProgram,
  text: string,
  kernel: string,
  at: {
    slot: GpuSlot;
    cache: MeasurementCache | null;
    clock: GpuClock;
    runDir: string | undefined;
    emit: (variant: string | null, phase: BenchProgress['phase'], gpu: number | null) => void;
    n: number;
  },
): Promise<Pick<BenchReport, 'lineStalls' | 'lineStallsProblem' | 'sassStalls'>> {
  const t0 = Date.now();
  let sampling = false;
  const r = await cachedLineStalls(
    p,
    kernel,
    text,
    { ...o, runDir: at.runDir, env: at.slot.env },
    { store: at.cache, gpu: at.slot.gpu },
    message => {
      if (!sampling) at.emit(p.label, 'source-stalls', at.slot.gpu);
      sampling = true;
      o.onProgress?.(message, at.n, at.n);
    },
  );
  if (r.cached) at.emit(p.label, 'cached', at.slot.gpu);
  else at.clock.add(at.slot.gpu, { kind: 'stalls', startMs: t0, endMs: Date.now() });
  return { lineStalls: r.lineStalls, lineStallsProblem: r.problem, sassStalls: r.sassStalls };
}

/**
 * Every measured variant checked against the file as written's output, whatever became of it;
 * its row summarised from its launches. Returns each variant's launches (by index) and the check time.
 */
async function checkAll(
  unique: number[],
  results: (TimeResult & { cached: boolean })[],
  runs: VariantRun[],
  kernel: string,
  o: BenchOptions,
): Promise<{ timings: (Map<string, KernelSamples> | undefined)[]; checkMs: number }> {
  let checkMs = 0;
  let baseline: BaselineOutput | null = null;
  const timings: (Map<string, KernelSamples> | undefined)[] = [];
  for (const i of unique) {
    const r = results[i];
    if (!r) continue;
    const run = runs[i];
    run.cached = r.cached;
    if (r.programFailed !== null || r.stdout === null) {
      const status: RunStatus = r.programFailed !== null ? (reportsMismatch(r.stdout ?? '') ? 'correctness' : 'runtime') : r.status;
      Object.assign(run, { status, message: r.message, checksums: parseChecksums(r.stdout ?? '') });
      if (i === 0) baseline = { checksums: run.checksums, stdout: null };
      continue;
    }
    const t0 = Date.now();
    const check = await checkOutput(r.stdout, i === 0 ? null : (baseline ?? { checksums: {}, stdout: null }), o);
    checkMs += Date.now() - t0;
    run.checksums = check.checksums;
    if (i === 0) baseline = { checksums: check.checksums, stdout: check.stdout };
    if (check.status !== 'ok') {
      Object.assign(run, { status: check.status, message: check.message });
      continue;
    }
    timings[i] = r.groups;
    if (r.status !== 'ok') Object.assign(run, { status: r.status, message: r.message });
    // a profile that failed part-way still reports what it collected
    runs[i] = summariseVariant(run, r.groups, kernel);
  }
  return { timings, checkMs };
}

/** Rows with the same machine code as an earlier one carry its measurement. */
function copyIdentical(
  variants: BenchVariant[],
  runs: VariantRun[],
  timings: (Map<string, KernelSamples> | undefined)[],
  measuredBy: number[],
): void {
  variants.forEach((v, i) => {
    const j = measuredBy[i];
    if (j === i) return;
    const own = { factors: runs[i].factors, label: v.label, kernelInstructions: runs[i].kernelInstructions, registers: runs[i].registers };
    runs[i] = { ...runs[j], ...own, identicalTo: variants[j].label };
    timings[i] = timings[j];
  });
}

interface Measured {
  o: BenchOptions;
  target: Awaited<ReturnType<typeof findTargetKernels>>;
  runs: VariantRun[];
  timings: (Map<string, KernelSamples> | undefined)[];
  measuredBy: number[];
  sass: (LoopVariant | undefined)[];
  programs: BuildResult[];
  slots: GpuSlot[];
  clock: GpuClock;
  startedMs: number;
  checkMs: number;
}

/** Speedups, i-cache entries, per-instantiation tables and what the run cost: the report. */
function assembleReport(m: Measured, stalls: Pick<BenchReport, 'lineStalls' | 'lineStallsProblem' | 'sassStalls'>): BenchReport {
  const { o, target, runs, timings, measuredBy, sass, programs, slots, clock } = m;
  // A build's i-cache facts and occupancy describe its loop kernel: only a table of that kernel uses them.
  const sassOf = (kernel: string | null) => sass.map(s => (s?.kernel === kernel ? s : undefined));
  const withSpeedup = withIcache(
    // the same cubin as the file as written is the same program: never outside its noise
    withSpeedups(runs, i => measuredBy[i] === measuredBy[0]),
    sassOf(target.kernel),
    o.arch,
  );
  const instantiations = instantiationTables(withSpeedup, timings, sass, target.kernel).map(x => ({
    ...x,
    variants: withIcache(x.variants, sassOf(x.kernel), o.arch),
  }));
  const compileMs =
    programs.reduce((a, b) => a + (b.cached ? 0 : b.compileMs), 0) + sass.reduce((a, v) => a + (v && !v.cached ? v.compileMs : 0), 0);
  return {
    kernel: target.kernel,
    gpu: o.toolchain.gpus[slots[0].gpu ?? 0]?.name ?? o.toolchain.gpus[0]?.name ?? null,
    clockControl: o.clockControl,
    baseline: 'as-written',
    variants: withSpeedup,
    instantiations,
    ...(target.demangled ? { demangled: target.demangled } : {}),
    ...stalls,
    timing: {
      wallS: (Date.now() - m.startedMs) / 1000,
      compileS: compileMs / 1000,
      checkS: m.checkMs / 1000,
      profileS: clock.busyS(),
      gpuIdleS: clock.idleS(),
      gpuRuns: clock.count,
      gpus: [...new Set(slots.map(s => s.gpu))],
    },
  };
}

/** A variant's row before it runs: its SASS figures, no measurements yet. */
function newRun(variant: BenchVariant, kernel: string, sass: LoopVariant | undefined): VariantRun {
  return {
    factors: Object.fromEntries([...variant.factors].map(([l, f]) => [String(l), f])),
    label: variant.label,
    status: 'ok',
    message: null,
    kernel,
    kernelInstructions: sass?.kernelInstructions ?? null,
    registers: sass?.registers ?? null,
    samples: 0,
    durationsMs: [],
    medianMs: null,
    iqrMs: null,
    q1Ms: null,
    q3Ms: null,
    cv: null,
    speedup: null,
    withinNoise: null,
    stalls: null,
    stallShare: null,
    executedInstructions: null,
    achievedOccupancy: null,
    checksums: {},
    identicalTo: null,
    cached: false,
    icache: null,
  };
}

/** The documented `bench --json` contract (docs/cli.md). */
export function benchJson(r: BenchReport) {
  return {
    kernel: r.kernel,
    gpu: r.gpu,
    clockControl: r.clockControl,
    variants: r.variants.map(v => ({
      factors: v.factors,
      label: v.label,
      status: v.status,
      kernelInstructions: v.kernelInstructions,
      registers: v.registers,
      samples: v.samples,
      medianMs: v.medianMs,
      iqrMs: v.iqrMs,
      cv: v.cv,
      speedup: v.speedup,
      withinNoise: v.withinNoise,
      stallShare: v.stallShare,
      achievedOccupancy: v.achievedOccupancy,
      executedInstructions: v.executedInstructions,
      identicalTo: v.identicalTo,
      cached: v.cached,
      icache: v.icache,
      ...(v.message ? { message: v.message } : {}),
    })),
    ...(r.instantiations.length > 1
      ? {
          instantiations: r.instantiations.map(x => ({
            kernel: x.kernel,
            blockSize: x.blockSize,
            variants: x.variants.map(v => ({
              label: v.label,
              status: v.status,
              kernelInstructions: v.kernelInstructions,
              samples: v.samples,
              medianMs: v.medianMs,
              iqrMs: v.iqrMs,
              cv: v.cv,
              speedup: v.speedup,
              withinNoise: v.withinNoise,
              stallShare: v.stallShare,
              identicalTo: v.identicalTo,
              cached: v.cached,
              icache: v.icache,
            })),
          })),
        }
      : {}),
    ...(r.lineStalls ? { lineStalls: r.lineStalls.map(l => ({ line: l.line, samples: l.samples, stallShare: l.stallShare })) } : {}),
    ...(r.sassStalls
      ? {
          sassStalls: {
            kernel: r.sassStalls.kernel,
            factor: r.sassStalls.factor,
            instructionCount: r.sassStalls.instructions.length,
            totalSamples: r.sassStalls.totalSamples,
            // Only the sampled instructions: a big kernel has thousands of unsampled ones.
            instructions: r.sassStalls.instructions
              .filter(i => i.samples > 0)
              .map(i => ({ offset: i.offset, text: i.text, samples: i.samples, stalls: i.stalls })),
          },
        }
      : {}),
    timing: {
      wallS: r.timing.wallS,
      compileS: r.timing.compileS,
      checkS: r.timing.checkS,
      profileS: r.timing.profileS,
      gpuIdleS: r.timing.gpuIdleS,
      gpuRuns: r.timing.gpuRuns,
      gpus: [...r.timing.gpus],
    },
  };
}
