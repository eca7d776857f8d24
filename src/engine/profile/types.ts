// The bench's types: its options (shared by every stage in ./stages/), a variant's row, its progress
// and its report. Apart from bench.ts so that the stages import their option types without importing
// the orchestrator that imports them (no cycle).
import type { RunStatus } from '../../schema/types';
import type { RunTiming, VariantIcache } from '../../schema/types';
import type { Toolchain } from '../toolchain/toolchain';
import type { CompileFlags } from '../toolchain/flags';
import type { UnrollFactor } from '../variants/rewrite';
import type { SassStalls } from './sassStalls';
import type { LineStalls } from './stalls';

export type { RunStatus };

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

/**
 * How ncu passes are spent. combined: every metric on every timed launch, one ncu run per
 * variant (what a hand-written loop does). split: durations alone on the timed launches (one
 * pass each), then the stall metrics on a few launches in a second run. On an H100 the combined
 * run was the faster and its medians are the hand loop's (docs/measurements.md, "GPU sweep speed").
 */
export type NcuPasses = 'combined' | 'split';
