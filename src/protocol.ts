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
