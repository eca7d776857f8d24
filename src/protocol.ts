// The one typed contract shared by the extension client, the language server and the webview.
// Only types and string constants live here, so every side can import it without pulling in
// `vscode` or Node APIs.
import type { FileAnalysis } from './engine/parse/model';

export type { FileAnalysis };

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

export interface Settings {
  bloatThresholdStatements: number;
  codeLensEnabled: boolean;
}

export const DEFAULT_SETTINGS: Settings = { bloatThresholdStatements: 2048, codeLensEnabled: true };

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
