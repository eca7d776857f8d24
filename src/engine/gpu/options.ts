// The GPU run configuration and the bench's options, shared by every stage in ./stages/, the
// timer (./timer.ts) and the sweep's GPU runner. Apart from bench.ts so that the stages and the
// runner import their option types without importing the bench, which runs the sweep (no cycle).
import type { RunStatus } from '../../schema/types';
import type { SweepProgress } from '../../schema/progress';
import type { Toolchain } from '../toolchain/toolchain';
import type { CompileFlags } from '../toolchain/flags';
import type { UnrollFactors } from '../variants/factors';
import type { ProjectRun } from '../variants/projectTree';

export type { RunStatus };

/**
 * How programs are run and timed: the GPU run configuration, declared once. Built in two places
 * only: from the unrollLens.profile.* settings (server/runOptions.ts) and from the flags
 * (cli/runConfig.ts); the bench, the comparison and the sweep pass it through to the GPU runner,
 * and each stage takes the part it needs (a Pick of it).
 */
export interface GpuRunConfig {
  /** Program arguments. */
  args: string[];
  /** Kernel durations to collect per variant (at least 20 is what the statistics assume). */
  samples: number;
  /**
   * Adaptive sampling (issue 25): after every variant has `samples` durations, time the leading
   * variants again, `samples` more at a time, while the fastest is uncertain, up to this many
   * durations each (engine/sweep/adaptive.ts). Absent, 0 or not above `samples`: off.
   */
  maxSamples?: number;
  /** Launches of the kernel skipped per program run before profiling (warm-up). */
  warmup: number;
  clockControl: 'base' | 'none';
  /**
   * ncu --cache-control: all (ncu's default) flushes every GPU cache before each profiled launch;
   * none leaves them as the previous launch left them (warm). Default all. The CUPTI timer never
   * flushes: its caches are as the program leaves them.
   */
  cacheControl?: 'all' | 'none';
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
  /** Keep every ncu report and its raw-page CSV here (for the record; default: deleted). */
  keepReportsDir?: string;
  /** Also sample warp stalls per source line of the file as written (the CUPTI timer's PC samples, else one extra ncu run; unrollLens.profile.sourceStalls). */
  sourceStalls?: boolean;
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
  /**
   * What times the kernels. ncu (the engine's default when unset): under Nsight Compute, caches
   * as cacheControl says (flushed before each launch by default), clocks as clockControl says,
   * with the warp-stall metrics. cupti (the settings' default): the program runs as itself with
   * our CUPTI kernel timer injected (native/cupti_timer.c): warm caches, the GPU's own clocks,
   * stall reasons from CUPTI PC sampling, no ncu process.
   */
  timer?: 'ncu' | 'cupti';
  /**
   * Warp-stall reasons for every variant (default true): ncu's warp-state metrics in its timed
   * run, or CUPTI PC sampling in the CUPTI timer's first run. false: times only (ncu collects
   * durations and registers alone; the CUPTI timer does not sample).
   */
  stalls?: boolean;
  /**
   * With the CUPTI timer: also count executed instructions and achieved occupancy of every timed
   * kernel (one extra ncu run per variant, one launch per kernel, caches and clocks left alone).
   * The ncu timer has them already. Default false.
   */
  counters?: boolean;
  /** Elements one launch of the timed kernel processes, as the user names them: executed instructions per element besides per thread. */
  elements?: number;
  /** How ncu passes are spent (default combined: measured the faster, docs/measurements.md). */
  passes?: NcuPasses;
  /** ncu processes in flight per GPU (default PROFILES_PER_GPU). */
  profilesPerGpu?: number;
}

/** What a bench builds and times, and where: the job besides its run configuration. */
export interface BenchJob {
  toolchain: Toolchain;
  arch: string;
  flags: CompileFlags;
  cacheDir: string;
  /** Per nvcc compile, milliseconds (default 300 s). */
  nvccTimeoutMs?: number;
  /** Loop lines; each variant sets all of them to the same factor. */
  loops: number[];
  factors: UnrollFactors;
  /** Mangled or demangled-substring kernel name; default: the kernel holding the loop. */
  kernel?: string;
  signal?: AbortSignal;
  /** Progress of each step: variant, phase, GPU, samples, elapsed and estimated time left. */
  progress?: (p: SweepProgress) => void;
  /** A header's translation unit (it includes the header and instantiates the loop's kernels). */
  translationUnit?: string;
  /** Build and run through the project's own commands, in a copy of its tree. */
  project?: ProjectRun;
}

/** A bench: the job and how its programs are run and timed. */
export type BenchOptions = BenchJob & GpuRunConfig;

/** A bench's (or a comparison's) run configuration, passed through to the GPU runner as it came: its options less the job. */
export function runConfigOf(o: Partial<BenchJob> & GpuRunConfig): GpuRunConfig {
  const {
    toolchain: _toolchain,
    arch: _arch,
    flags: _flags,
    cacheDir: _cacheDir,
    nvccTimeoutMs: _nvccTimeoutMs,
    loops: _loops,
    factors: _factors,
    kernel: _kernel,
    signal: _signal,
    progress: _progress,
    translationUnit: _translationUnit,
    project: _project,
    ...run
  } = o;
  return run;
}

/**
 * How ncu passes are spent. combined: every metric on every timed launch, one ncu run per
 * variant (what a hand-written loop does). split: durations alone on the timed launches (one
 * pass each), then the stall metrics on a few launches in a second run. On an H100 the combined
 * run was the faster and its medians are the hand loop's (docs/measurements.md, "GPU sweep speed").
 */
export type NcuPasses = 'combined' | 'split';
