// "Benchmark this loop": build each unroll variant as a whole program, run it to check it
// still computes the same result, then time and profile the target kernel under Nsight
// Compute (durations from gpu__time_duration.sum, stall reasons from the warp-state metrics).
// Variants run one after another: they share one GPU.
//
// The stages live in ./stages/, each callable on its own for one variant: build (cubins and
// programs), check (a plain run against the baseline), time (ncu durations and stalls per
// instantiation), lineStalls (per source line) and summary (statistics, speedups, tables).
// benchLoop below only strings them together.
import type { ProfileSettings } from '../../settings';
import type { FileAnalysis } from '../parse/model';
import type { Toolchain } from '../toolchain/toolchain';
import { MissingToolError } from '../toolchain/discover';
import type { CompileFlags } from '../toolchain/flags';
import type { LoopVariant } from '../variants/inspect';
import type { UnrollFactor } from '../variants/rewrite';
import type { LineStalls } from './stalls';
import { BenchSource, BenchVariant, buildFailure, buildVariants, findTargetKernels } from './stages/build';
import { checkVariant } from './stages/check';
import { sampleLineStalls } from './stages/lineStalls';
import type { VariantProgram } from './stages/program';
import { instantiationTables, summariseVariant, withSpeedups } from './stages/summary';
import { KernelSamples, timeVariant } from './stages/time';

export { parseChecksums, reportsMismatch } from './stages/check';
export { iqrOverlap, quantile, summarize } from './stages/summary';
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
}

/** What a bench run cost, in seconds (docs/cli.md, `timing`). */
export interface RunTiming {
  /** Start to end of the whole run. */
  wallS: number;
  /** nvcc time summed over every compile (cubins and programs; parallel compiles overlap, so it can exceed wallS). */
  compileS: number;
  /** GPU-side time spent running programs for their result check (summed over GPUs). */
  checkS: number;
  /** GPU-side time spent in ncu timing and stall runs (summed over GPUs). */
  profileS: number;
  /** Time the GPUs waited with variants left to measure (for builds, mostly), summed over GPUs. */
  gpuIdleS: number;
  /** Program and ncu processes started on the GPU; 0 when every measurement came from the cache. */
  gpuRuns: number;
  /** GPUs used (CUDA device indices; null: the default device). */
  gpus: (number | null)[];
}

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
  /** Warp-stall samples per source line of the file as written (ncu SourceCounters), when collected. */
  lineStalls: LineStalls[] | null;
  /** Why lineStalls is missing, when it was asked for. */
  lineStallsProblem: string | null;
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
  /** Persistent measurement cache folder; null: off (always measure). Default: beside cacheDir. */
  measurementCacheDir?: string | null;
}

/** How programs are run and timed, from the unrollLens.profile.* settings: the one mapping the bench and sweep services share. */
export function runOptionsFromSettings(
  p: ProfileSettings,
): Pick<
  BenchOptions,
  'args' | 'samples' | 'warmup' | 'clockControl' | 'timeoutMs' | 'launcher' | 'runCommand' | 'compileCommand' | 'checkCommand'
> {
  // An empty template means "not set": the program itself, nvcc, no check command.
  const template = (t: string[]) => (t.length ? t : undefined);
  return {
    args: p.args,
    samples: p.samples,
    warmup: p.warmup,
    clockControl: p.clockControl,
    timeoutMs: p.timeoutSeconds * 1000,
    launcher: p.launcher,
    runCommand: template(p.runCommand),
    compileCommand: template(p.compileCommand),
    checkCommand: template(p.checkCommand),
  };
}

// ---------------------------------------------------------------------------------------------

/**
 * Benchmarks the file as written (the baseline) and one variant per factor, each setting every
 * loop of o.loops to that factor: build → check → time per variant, in turn (they share one
 * GPU), then per-line stalls of the baseline and the summary tables.
 */
export async function benchLoop(file: string, text: string, analysis: FileAnalysis, o: BenchOptions): Promise<BenchReport> {
  if (!o.toolchain.ncu) throw new MissingToolError('ncu', []);
  const focus = o.loops[0];
  if (!analysis.kernels.some(k => k.loops.some(l => l.line === focus)))
    throw new Error(`no loop in device code at line ${focus} of ${file}`);
  const src: BenchSource = { file, text, analysis, focus };
  const variants: BenchVariant[] = [{ label: 'as-written', factors: new Map() }];
  for (const f of o.factors) variants.push({ label: String(f), factors: new Map(o.loops.map(l => [l, f])) });
  const n = variants.length;

  const built = await buildVariants(src, variants, o);
  const target = await findTargetKernels(src, built, o);
  let runs: VariantRun[] = [];
  const timings: (Map<string, KernelSamples> | undefined)[] = [];
  let baselineStdout: string | null = null;
  for (let i = 0; i < n; i++) {
    const { variant, program, sass } = built[i];
    const progress = (message: string) => o.onProgress?.(message, i, n);
    const run = newRun(variant, target.kernel, sass);
    runs.push(run);
    if (o.signal?.aborted) {
      run.status = 'cancelled';
      continue;
    }
    const failed = buildFailure(program);
    if (failed) {
      Object.assign(run, failed);
      continue;
    }
    const p: VariantProgram = { label: variant.label, program: program.outputPath!, file };
    // every variant is checked against the baseline's checksums, whatever became of the baseline
    const check = await checkVariant(p, i === 0 ? null : { checksums: runs[0].checksums, stdout: baselineStdout }, o, progress);
    run.checksums = check.checksums;
    if (check.status !== 'ok') {
      Object.assign(run, { status: check.status, message: check.message });
      continue;
    }
    if (i === 0) baselineStdout = check.stdout;
    const timing = await timeVariant(p, target, o, progress);
    timings[i] = timing.groups;
    if (timing.status !== 'ok') Object.assign(run, { status: timing.status, message: timing.message });
    // a profile that failed part-way still reports what it collected
    runs[i] = summariseVariant(run, timing.groups, target.kernel);
  }

  const baseline = built[0].program.outputPath;
  const { lineStalls, problem } =
    o.sourceStalls && runs[0].status === 'ok' && baseline && !o.signal?.aborted
      ? await sampleLineStalls({ label: variants[0].label, program: baseline, file }, target.kernel, o, message =>
          o.onProgress?.(message, n, n),
        )
      : { lineStalls: null, problem: null };
  runs = withSpeedups(runs);
  const instantiations = instantiationTables(
    runs,
    timings,
    built.map(b => b.sass),
    target.kernel,
  );
  return {
    kernel: target.kernel,
    gpu: o.toolchain.gpus[0]?.name ?? null,
    clockControl: o.clockControl,
    baseline: 'as-written',
    variants: runs,
    instantiations,
    lineStalls,
    lineStallsProblem: problem,
    // interim: replaced by the pipeline's own accounting (issue 11)
    timing: { wallS: 0, compileS: 0, checkS: 0, profileS: 0, gpuIdleS: 0, gpuRuns: 0, gpus: [null] },
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
            })),
          })),
        }
      : {}),
    ...(r.lineStalls ? { lineStalls: r.lineStalls.map(l => ({ line: l.line, samples: l.samples, stallShare: l.stallShare })) } : {}),
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
