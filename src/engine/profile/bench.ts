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
import type { RunTiming, VariantIcache } from '../../schema/types';
import type { FileAnalysis } from '../parse/model';
import type { Toolchain } from '../toolchain/toolchain';
import { MissingToolError } from '../toolchain/discover';
import type { CompileFlags } from '../toolchain/flags';
import type { LoopVariant } from '../variants/reports';
import type { UnrollFactor } from '../variants/rewrite';
import type { SassStalls } from './sassStalls';
import type { LineStalls } from './stalls';
import { BenchSource, BenchVariant, buildFailure, findTargetKernels, startBuilds } from './stages/build';
import { BaselineOutput, checkOutput, parseChecksums, reportsMismatch } from './stages/check';
import { defaultRunDir } from './gpuSelection';
import { defaultLockRoot, GpuClock, GpuSlot, gpuSlots, GpuTurns, PROFILES_PER_GPU } from './gpuSlots';
import { MeasurementCache, measuredGroups, measurementKeyFor, storedMeasurement } from './measurementCache';
import { sampleLineStalls } from './stages/lineStalls';
import type { VariantProgram } from './stages/program';
import { withIcache } from './stages/icache';
import { instantiationTables, summariseVariant, withSpeedups } from './stages/summary';
import { KernelSamples, NcuPasses, TimeResult, timeVariant } from './stages/time';

export { parseChecksums, reportsMismatch } from './stages/check';
export { iqrOverlap, quantile, RUN_DRIFT, summarize, withinNoise } from './stages/summary';
export { PROFILE_METRICS } from './stages/time';

export type RunStatus = 'ok' | 'compile' | 'runtime' | 'timeout' | 'correctness' | 'profile' | 'cancelled';

export interface VariantRun {
  /** Loop line → factor; empty for the file as written. */
  factors: Record<string, UnrollFactor>;
  label: string;
  status: RunStatus;
  message: string | null;
  kernel: string | null;
  kernelInstructions: number | null;
  registers: number | null;
  samples: number;
  durationsMs: number[];
  medianMs: number | null;
  iqrMs: number | null;
  q1Ms: number | null;
  q3Ms: number | null;
  cv: number | null;
  speedup: number | null;
  withinNoise: boolean | null;
  stalls: Record<string, number> | null;
  stallShare: Record<string, number> | null;
  executedInstructions: number | null;
  achievedOccupancy: number | null;
  /** Checksums the program printed (kernel → value), compared with the baseline's. */
  checksums: Record<string, string>;
  /** Label of an earlier variant with the same machine code: measured once, its numbers copied here. */
  identicalTo: string | null;
  /** Its measurement came from the persistent measurement cache (no GPU run). */
  cached: boolean;
  /** Instruction-cache slowdown: measured when this row ran, else predicted from its SASS (stages/icache.ts). */
  icache: VariantIcache | null;
}

export type { RunTiming } from '../../schema/types';

/** One step of a bench run, for progress bars and logs. */
export interface BenchProgress {
  /** Variant label ("as-written", "4"); null for whole-run steps. */
  variant: string | null;
  phase: 'build' | 'check' | 'time' | 'stalls' | 'cached' | 'done' | 'source-stalls';
  /** CUDA device index the step runs on, when several GPUs are used. */
  gpu: number | null;
  /** Kernel durations collected so far for this variant, and wanted. */
  samples: number;
  samplesWanted: number;
  /** Variants finished (measured, copied, cached or failed) and in all. */
  done: number;
  total: number;
  elapsedS: number;
  /** Estimated seconds left; null until one variant has been measured. */
  etaS: number | null;
  /** The same as one short line of text. */
  message: string;
}

export interface BenchReport {
  kernel: string;
  gpu: string | null;
  clockControl: 'base' | 'none';
  baseline: string;
  variants: VariantRun[];
  /**
   * Every kernel holding the loop (template instantiations), and block size when one kernel is
   * launched with several, each with its own variants table; `variants` above is the first.
   */
  instantiations: { kernel: string; blockSize: string | null; variants: VariantRun[] }[];
  /**
   * Mangled → demangled name of every kernel holding the loop: `kernel` is the one with most of
   * the loop's code in the file as written (absent in reports saved before it).
   */
  demangled?: Record<string, string>;
  /** Warp-stall samples per source line of the file as written (ncu SourceCounters), when collected. */
  lineStalls: LineStalls[] | null;
  /** Why lineStalls is missing, when it was asked for. */
  lineStallsProblem: string | null;
  /**
   * The same GPU run's samples per SASS instruction of the kernel (factor "as-written": the file
   * as written was sampled), when collected; attach them to a listing with attachSassStalls.
   */
  sassStalls: SassStalls | null;
  timing: RunTiming;
}

export interface BenchOptions {
  toolchain: Toolchain;
  arch: string;
  flags: CompileFlags;
  cacheDir: string;
  /** Per nvcc compile, milliseconds (default 300 s). */
  nvccTimeoutMs?: number;
  /** Loop lines; each variant sets all of them to the same factor. */
  loops: number[];
  factors: UnrollFactor[];
  /** Mangled or demangled-substring kernel name; default: the kernel holding the loop. */
  kernel?: string;
  /** Program arguments. */
  args: string[];
  /** Kernel durations to collect per variant (at least 20 is what the statistics assume). */
  samples: number;
  /** Launches of the kernel skipped per program run before profiling (warm-up). */
  warmup: number;
  clockControl: 'base' | 'none';
  /** Per program run, milliseconds. */
  timeoutMs: number;
  /** Prefix for every run (e.g. ["srun", "-p", "gpu", "--gres=gpu:1"]). */
  launcher: string[];
  /** Project run command (setting unrollLens.profile.runCommand): {program} {args…}. Default: the program itself. */
  runCommand?: string[];
  /** Project compile command (unrollLens.profile.compileCommand): {source} {output} {arch} {dir}. Default: nvcc. */
  compileCommand?: string[];
  /** Check command run after each variant (unrollLens.profile.checkCommand): {stdout} {baselineStdout}; exit 0 = same. */
  checkCommand?: string[];
  signal?: AbortSignal;
  onProgress?: (message: string, done: number, total: number) => void;
  /** Keep every ncu report and its raw-page CSV here (for the record; default: deleted). */
  keepReportsDir?: string;
  /** Also sample warp stalls per source line of the file as written (one extra ncu run; unrollLens.profile.sourceStalls). */
  sourceStalls?: boolean;
  /** Structured progress: variant, phase, samples, elapsed and estimated time left. */
  progress?: (p: BenchProgress) => void;
  /**
   * CUDA device indices to spread variants over (one ncu process per GPU, CUDA_VISIBLE_DEVICES);
   * empty or undefined: the default device, environment untouched.
   */
  gpus?: number[];
  /**
   * Where ncu reports and other run files go. With a launcher they must be on storage the
   * nodes share (as must cacheDir, which holds the programs); default: a folder beside cacheDir
   * with a launcher, the system temp folder without.
   */
  runDir?: string;
  /** Persistent measurement cache folder (runLocations puts it beside the build cache); null or unset: off, always measure. */
  measurementCacheDir?: string | null;
  /** How ncu passes are spent (default combined: measured the faster, docs/measurements.md). */
  passes?: NcuPasses;
  /** ncu processes in flight per GPU (default PROFILES_PER_GPU). */
  profilesPerGpu?: number;
}

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
  let checkMs = 0;
  let done = 0;
  const measureTimes: number[] = [];
  const perGpu = Math.max(1, o.profilesPerGpu ?? PROFILES_PER_GPU);
  const slots = gpuSlots(o.gpus, perGpu, o.launcher, defaultLockRoot());
  const turns = new Map<number | null, GpuTurns>();
  const turnsOf = (gpu: number | null) => turns.get(gpu) ?? (turns.set(gpu, new GpuTurns()), turns.get(gpu)!);
  // Every build and run listens to the one cancellation signal.
  if (o.signal) setMaxListeners(0, o.signal);
  const gpuCount = new Set(slots.map(s => s.gpu)).size;
  const emit = (variant: string | null, phase: BenchProgress['phase'], gpu: number | null, samples = 0, extra = '') => {
    const elapsedS = (Date.now() - startedMs) / 1000;
    // Left: the variants not finished, at the mean GPU time of those measured, over the GPUs in use.
    const mean = measureTimes.length ? measureTimes.reduce((a, b) => a + b, 0) / measureTimes.length : null;
    const etaS = mean === null ? null : Math.max(0, ((n - done) * mean) / Math.max(1, slots.length));
    const what = phase === 'done' ? 'done' : phase === 'time' || phase === 'stalls' ? `${phase} ${samples}/${o.samples} samples` : phase;
    const message = `${variant ?? 'bench'}: ${what}${gpu !== null && gpuCount > 1 ? ` · GPU ${gpu}` : ''}${extra}`;
    o.progress?.({ variant, phase, gpu, samples, samplesWanted: o.samples, done, total: n, elapsedS, etaS, message });
    o.onProgress?.(message, done, n);
  };

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
    measureTimes.push((Date.now() - t0) / 1000);
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
        done += variants.filter((_, j) => measuredBy[j] === i).length;
        emit(run.label, 'done', slot.gpu);
      }
    }),
  );
  const programs = await Promise.all(builds.programs);

  // Every variant is checked against the file as written's output, whatever became of it.
  let baseline: BaselineOutput | null = null;
  const timings: (Map<string, KernelSamples> | undefined)[] = [];
  for (const i of unique) {
    const r = results[i];
    if (!r) continue;
    let run = runs[i];
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
    run = runs[i] = summariseVariant(run, r.groups, target.kernel);
  }
  // Rows with the same machine code as an earlier one carry its measurement.
  variants.forEach((v, i) => {
    const j = measuredBy[i];
    if (j === i) return;
    const own = { factors: runs[i].factors, label: v.label, kernelInstructions: runs[i].kernelInstructions, registers: runs[i].registers };
    runs[i] = { ...runs[j], ...own, identicalTo: variants[j].label };
    timings[i] = timings[j];
  });

  const baselineProgram = programs[0].outputPath;
  let lineStalls: LineStalls[] | null = null;
  let lineStallsProblem: string | null = null;
  let sassStalls: SassStalls | null = null;
  if (o.sourceStalls && runs[0].status === 'ok' && baselineProgram && !o.signal?.aborted) {
    // Per-line stalls of an unchanged program and source come from the cache too: a cached re-run runs nothing.
    const key = cache ? measurementKeyFor(o, baselineProgram, slots[0].gpu, [target.kernel], text) : null;
    const hit = key ? cache!.get(key) : null;
    // An entry from before SASS-level samples were kept has no sassStalls key: not complete, sampled again.
    if (hit?.lineStalls && hit.sassStalls !== undefined) {
      emit(variants[0].label, 'cached', slots[0].gpu);
      lineStalls = hit.lineStalls;
      sassStalls = hit.sassStalls;
    } else {
      emit(variants[0].label, 'source-stalls', slots[0].gpu);
      const t0 = Date.now();
      const r = await sampleLineStalls(
        { label: variants[0].label, program: baselineProgram, file },
        target.kernel,
        { ...o, runDir, env: slots[0].env },
        message => o.onProgress?.(message, n, n),
      );
      clock.add(slots[0].gpu, { kind: 'stalls', startMs: t0, endMs: Date.now() });
      lineStalls = r.lineStalls;
      sassStalls = r.sassStalls;
      lineStallsProblem = r.problem;
      if (key && r.lineStalls && !r.problem)
        cache!.put(key, { groups: [], stdout: '', lineStalls: r.lineStalls, sassStalls: r.sassStalls });
    }
  }
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
    lineStalls,
    lineStallsProblem,
    sassStalls,
    timing: {
      wallS: (Date.now() - startedMs) / 1000,
      compileS: compileMs / 1000,
      checkS: checkMs / 1000,
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
