// The one typed contract shared by the extension client, the language server and the webview.
// Only types and string constants live here, so every side can import it without pulling in
// `vscode` or Node APIs.
import type { FileAnalysis } from './engine/parse/model';
import type { FileSassReport, LoopReport } from './engine/variants/inspect';
import type { BenchReport } from './engine/profile/bench';

export type { FileAnalysis, FileSassReport, LoopReport, BenchReport };

export const EXTENSION_ID = 'unroll-lens.unroll-lens';
export const DIAGNOSTIC_SOURCE = 'unroll-lens';

/** Language ids VS Code assigns to CUDA files (built-in `cuda-cpp`; `cuda` from older extensions). */
export const CUDA_LANGUAGE_IDS = ['cuda-cpp', 'cuda'] as const;
export const CUDA_FILE_PATTERN = '**/*.{cu,cuh}';

export const Commands = {
  benchmarkLoop: 'unrollLens.benchmarkLoop',
  sweepKernel: 'unrollLens.sweepKernel',
  showLoops: 'unrollLens.showLoops',
  showOutput: 'unrollLens.showOutput',
  sassVariants: 'unrollLens.sassVariants',
} as const;

/** Arguments of "Benchmark this loop" (CodeLens above a loop). */
export interface BenchmarkLoopArgs {
  uri: string;
  /** 1-based line of the loop keyword. */
  line: number;
  kernel: string;
}

/** Arguments of "Sweep unroll factors" (CodeLens above a kernel). */
export interface SweepKernelArgs {
  uri: string;
  /** 1-based line of the kernel definition. */
  line: number;
  kernel: string;
}

export interface ToolchainSettings {
  cudaHome: string;
  nvccPath: string;
  cuobjdumpPath: string;
  nvdisasmPath: string;
  ncuPath: string;
}

export interface Settings {
  bloatThresholdStatements: number;
  codeLensEnabled: boolean;
  /** Target arch ("sm_90"); empty: compile flags, then the GPU, then sm_90. */
  arch: string;
  nvccArgs: string[];
  includePaths: string[];
  defines: string[];
  unrollFactors: string[];
  /** Loop code above this many bytes gets an instruction-cache warning; 0: the calibrated per-arch budget. */
  icacheBudgetBytes: number;
  /** Compile the file as written (and rolled) on open and save, for SASS counts. */
  buildOnSave: boolean;
  /** Parallel nvcc processes; 0 = number of cores. */
  jobs: number;
  toolchain: ToolchainSettings;
  profile: ProfileSettings;
}

export interface ProfileSettings {
  /** Program arguments for benchmark runs. */
  args: string[];
  samples: number;
  warmup: number;
  /** ncu --clock-control: base locks clocks to base for stable comparisons (ncu's default). */
  clockControl: 'base' | 'none';
  timeoutSeconds: number;
  /** Prefix for every run, e.g. ["srun", "-p", "gpu", "--gres=gpu:1"]. */
  launcher: string[];
  /** Run command template ({program}, {args}); empty: the program itself. */
  runCommand: string[];
  /** Compile command template ({source}, {output}, {arch}, {dir}); empty: nvcc on the .cu file. */
  compileCommand: string[];
  /** Optional check command ({stdout}, {baselineStdout}); exit 0 = same result. */
  checkCommand: string[];
  /** Sample warp stalls per source line (one extra ncu run). */
  sourceStalls: boolean;
}

export const DEFAULT_SETTINGS: Settings = {
  bloatThresholdStatements: 2048,
  codeLensEnabled: true,
  arch: '',
  nvccArgs: [],
  includePaths: [],
  defines: [],
  unrollFactors: ['default', '1', '2', '4', '8', '16', 'full'],
  icacheBudgetBytes: 0,
  buildOnSave: true,
  jobs: 0,
  toolchain: { cudaHome: '', nvccPath: '', cuobjdumpPath: '', nvdisasmPath: '', ncuPath: '' },
  profile: { args: [], samples: 20, warmup: 2, clockControl: 'base', timeoutSeconds: 120, launcher: [], runCommand: [], compileCommand: [], checkCommand: [], sourceStalls: true },
};

/** Request: the server's analysis of an open document. */
export const FileAnalysisRequest = 'unrollLens/fileAnalysis';
export interface FileAnalysisParams { uri: string }
export type FileAnalysisResult = FileAnalysis | null;

/** Notification from the server after each analysis, for the status bar. */
export const AnalysisStatusNotification = 'unrollLens/analysisStatus';
export interface AnalysisStatus {
  uri: string;
  kernels: number;
  loops: number;
  pragmas: number;
  manualUnrolls: number;
  hasSyntaxErrors: boolean;
  /** Milliseconds spent parsing and analysing the last change. */
  elapsedMs: number;
}

/** Notification from the server: what toolchain it found (status bar). */
export const ToolchainStatusNotification = 'unrollLens/toolchainStatus';
export interface ToolchainStatus {
  /** "nvcc 13.0 · sm_90 · H200", or null when nvcc is missing. */
  summary: string | null;
  /** A missing tool or another problem, with how to fix it. */
  problem: string | null;
  /** A build is running for this file. */
  building: string | null;
}

/** Request: build every unroll factor of one loop (with $/progress and cancellation). */
export const LoopVariantsRequest = 'unrollLens/loopVariants';
export interface LoopVariantsParams {
  uri: string;
  /** 1-based line of the loop keyword. */
  line: number;
  /** Factors to build; default: the unrollLens.unrollFactors setting. */
  factors?: string[];
  workDoneToken?: string | number;
}
export type LoopVariantsResult = LoopReport;

/** Request: build, check, time and profile every unroll factor of one loop on the GPU. */
export const BenchLoopRequest = 'unrollLens/benchLoop';
export interface BenchLoopParams {
  uri: string;
  line: number;
  factors?: string[];
  workDoneToken?: string | number;
}
export type BenchLoopResult = BenchReport;

// ---------------------------------------------------------------------------------------------
// Sweeps and the results panel. One shape for every result the panel shows: a kernel sweep,
// one loop's SASS variants and one loop's GPU benchmark are all a SweepResult (the last two
// are one-loop sweeps). Saved as JSON under .unroll-lens/results/ and read back by the panel.

/** An unroll factor as results write it: no pragma ("default"), a full unroll, or ×N. */
export type FactorValue = 'default' | 'full' | number;

export type SweepVariantStatus = 'ok' | 'compile' | 'runtime' | 'timeout' | 'correctness' | 'profile' | 'cancelled' | 'pending';

export interface SweepLoop {
  /** 1-based line of the loop keyword in `SweepResult.file`. */
  line: number;
  /** The factor the loop has as written. */
  written: FactorValue;
  /** Constant trip count, or why it is not one. */
  tripCount: number | 'runtime' | 'dependent' | null;
  /** The pragma as written (`unroll 4`), or null. */
  pragma: string | null;
}

export interface SweepVariant {
  /** Stable id from factors and params: `40=4,52=full` or `40=4|BLOCK=8`; `as-written` for the file as written. */
  id: string;
  /** Short human label: `×4`, `full`, `default`, `L40 ×4 · L52 full · BLOCK=8`, `as written`. */
  label: string;
  /** Loop line → factor; empty for the file as written. */
  factors: Record<string, FactorValue>;
  /** Extra axes: macro values (`BLOCK` → `8`) or template arguments. */
  params: Record<string, string>;
  status: SweepVariantStatus;
  message: string | null;
  /** Mangled name of the kernel holding the loops. */
  kernel: string | null;
  kernelInstructions: number | null;
  kernelBytes: number | null;
  /** Per loop line: SASS instructions attributed to the loop's lines (16 bytes each on sm_70+). */
  loopInstructions: Record<string, number | null>;
  /** Per loop line: copies of one iteration nvcc emitted in the hot machine-code loop. */
  effectiveUnroll: Record<string, number | null>;
  /** Per loop line: no machine-code loop remains. */
  fullyUnrolled: Record<string, boolean>;
  registers: number | null;
  spillStores: number | null;
  spillLoads: number | null;
  /** Theoretical occupancy (0..1) at the block size used for the estimate. */
  occupancy: number | null;
  /** Id of an earlier variant whose machine code is identical: measured once, reported as that one. */
  identicalTo: string | null;
  compileMs: number | null;
  // GPU measurements: null (samples 0) in a static sweep.
  samples: number;
  medianMs: number | null;
  q1Ms: number | null;
  q3Ms: number | null;
  iqrMs: number | null;
  cv: number | null;
  /** Baseline median / this median (> 1: faster than the baseline). */
  speedup: number | null;
  /** The IQRs of this variant and the baseline overlap. */
  withinNoise: boolean | null;
  /** Warp-stall reasons as shares of all stalls (`no_instruction`, `long_scoreboard`, …). */
  stallShare: Record<string, number> | null;
  /** Achieved occupancy, % of peak (ncu). */
  achievedOccupancy: number | null;
}

export interface SweepResult {
  /** Format version of this JSON. */
  schema: 1;
  /** Absolute path of the source file. */
  file: string;
  /** Source name of the kernel. */
  kernel: string;
  /** 1-based line of the kernel definition. */
  kernelLine: number;
  loops: SweepLoop[];
  arch: string;
  nvcc: string | null;
  /** GPU name when measured on one. */
  gpu: string | null;
  /** No GPU measurements (SASS, registers and occupancy only). */
  static: boolean;
  /** `exhaustive`, or the search strategy's name. */
  strategy: string;
  /** What produced it: a kernel sweep, one loop's SASS variants, or one loop's GPU benchmark. */
  origin: 'sweep' | 'variants' | 'bench';
  /** ISO time the run started. */
  createdAt: string;
  /** The factor set swept. */
  factors: FactorValue[];
  /** Extra axes and their values. */
  params: Record<string, string[]>;
  /** Points in the whole space (factor combinations × parameter values). */
  spaceSize: number;
  /** Variants built (and, on a GPU, measured) so far. */
  evaluations: number;
  /** Id of the variant speedups are relative to. */
  baseline: string;
  /** Id of the best variant, or null when none finished. */
  best: string | null;
  /** How `best` was chosen (fastest median on the GPU, or the static rule). */
  bestBasis: string | null;
  /** Instruction-cache budget for `arch`, bytes, and where it comes from. */
  icacheBudgetBytes: number;
  icacheBudgetNote: string;
  variants: SweepVariant[];
  notes: string[];
  /** False while running, and after a cancel. */
  complete: boolean;
}
