// The one typed contract shared by the extension client, the language server and the webview.
// Types, string constants and the typed LSP messages live here. The wire types are this file's
// own: the server maps the engine's internal reports onto them (src/server/wire.ts), so the
// client never sees an engine type. The message objects come from vscode-jsonrpc, the smallest
// package that has them, whose browser build (package.json "browser") has no Node APIs: a webview
// may import this file (test/unit/protocol.test.ts bundles it for the browser); a type-only
// import pulls in nothing at all.
import { NotificationType, RequestType } from 'vscode-jsonrpc';
import type { FactorValue, RunStatus, SweepResult, VariantIcache } from './schema/types';
import type { SassListingResult } from './schema/sassListing';

export const DIAGNOSTIC_SOURCE = 'unroll-lens';

/** Language ids VS Code assigns to CUDA files (built-in `cuda-cpp`; `cuda` from older extensions). */
export const CUDA_LANGUAGE_IDS = ['cuda-cpp', 'cuda'] as const;
export const CUDA_FILE_PATTERN = '**/*.{cu,cuh}';
/**
 * C/C++ headers that may hold device code (library-style CUDA: CUTLASS `.hpp`, CCCL `.h`). The
 * client selects them; the server serves one only while its text holds device code
 * (`__device__`/`__global__` or a library qualifier macro), so plain C++ headers stay untouched.
 */
export const CUDA_HEADER_PATTERN = '**/*.{h,hpp,inl}';

/** Whether a URI or path names a header the server serves only when it holds device code. */
export function isContentCheckedHeader(uriOrPath: string): boolean {
  return /\.(h|hpp|inl)$/i.test(uriOrPath.replace(/[?#].*$/, ''));
}

export const Commands = {
  benchmarkLoop: 'unrollLens.benchmarkLoop',
  sweepKernel: 'unrollLens.sweepKernel',
  showLoops: 'unrollLens.showLoops',
  showOutput: 'unrollLens.showOutput',
  sassVariants: 'unrollLens.sassVariants',
  showResults: 'unrollLens.showResults',
  chooseTranslationUnit: 'unrollLens.chooseTranslationUnit',
  clearBuildCache: 'unrollLens.clearBuildCache',
  showSass: 'unrollLens.showSass',
  showSassForLine: 'unrollLens.showSassForLine',
  goToSourceLine: 'unrollLens.goToSourceLine',
  compareVariants: 'unrollLens.compareVariants',
  compareKernels: 'unrollLens.compareKernels',
  checkTool: 'unrollLens.checkTool',
  openWalkthrough: 'unrollLens.openWalkthrough',
  openSample: 'unrollLens.openSample',
  openProjectSettings: 'unrollLens.openProjectSettings',
} as const;

/** The Get Started walkthrough (package.json contributes.walkthroughs), as workbench.action.openWalkthrough names it with the extension id. */
export const WALKTHROUGH_ID = 'unrollLens.getStarted';
/** The walkthrough's sample kernel, relative to the extension's folder (.vscodeignore ships it). */
export const WALKTHROUGH_SAMPLE = 'walkthrough/sample/first_benchmark.cu';
/** The context key a check sets to true when it finds what it looks for: the walkthrough step's completion event. */
export function foundContextKey(id: ToolCheckId): string {
  return `unrollLens.found.${id}`;
}

/**
 * The `data` of a loop's summary CodeLens sent before the file's analysis is done (the server
 * answers a CodeLens request during an open from the parse alone): codeLens/resolve gives its
 * title from the analysis. The client passes it back unread.
 */
export interface LoopSummaryLensData {
  uri: string;
  /** Index of the function in the file's analysis, and its 1-based line (checked when resolving). */
  kernel: number;
  kernelLine: number;
  /** Index of the loop in the function, and its 1-based line. */
  loop: number;
  line: number;
}

/** Arguments of "Show SASS" (CodeLens, hover link, palette). */
export interface ShowSassArgs {
  uri: string;
  /** 1-based line of the loop keyword. */
  line: number;
  /** as-written when absent. */
  factor?: string;
  arch?: string;
}

/** URI scheme of the read-only SASS listings (virtual documents the client serves). */
export const SASS_SCHEME = 'unroll-lens-sass';

/** The results panel's webview type (its serializer restores it after a window reload). */
export const RESULTS_VIEW_TYPE = 'unrollLens.results';

/** Search strategies a sweep can use: every point, or a coordinate descent for large spaces. */
export const SWEEP_STRATEGIES = [
  { name: 'exhaustive', description: 'every combination of per-loop factors and parameter values' },
  { name: 'coordinate', description: 'coordinate descent: one loop or parameter at a time, a fraction of the evaluations' },
] as const;

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

/** Arguments of "Compare kernels in this file" (CodeLens above the file's first kernel); a caller that gives the rest is asked nothing. */
export interface CompareKernelsArgs {
  uri: string;
  /** Source names of the kernels to compare; asked for when absent. */
  kernels?: string[];
  /** The kernel the speedups are against; asked for when absent. */
  baseline?: string;
  /** Program arguments as one line (split like a shell would, never run through one); asked for, prefilled with unrollLens.profile.args, when absent. */
  args?: string;
}

// Settings are declared once in ./settings (package.json and the docs are generated from it).
export type { Settings } from './settings';
export { DEFAULT_SETTINGS } from './settings';

// ---------------------------------------------------------------------------------------------
// Custom LSP messages (server ⇄ client). Results carry only what the client shows or returns from
// its commands, display strings included, so the client needs no engine code to present them.

/** A loop in device code as the client lists and picks it. */
interface LoopOutline {
  /** 1-based line of the loop keyword: the `line` that loop requests take. */
  line: number;
  /** 1-based first and last line of the whole loop statement (the cursor is "in" the loop between them). */
  startLine: number;
  endLine: number;
  kind: 'for' | 'while' | 'do';
  /** 0 for a loop directly in the function body, 1 inside one loop, … */
  depth: number;
  /** The loop's CodeLens summary, e.g. "unroll 4 requested · trip count runtime". */
  summary: string;
}

/** A `__global__` kernel or `__device__` function and its loops. */
interface KernelOutline {
  name: string;
  qualifier: 'global' | 'device';
  /** 1-based line of the definition. */
  line: number;
  loops: LoopOutline[];
  /** Template parameter names, in order (a kernel without loops can still sweep these). */
  templateParameters?: string[];
}

export interface FileAnalysisParams {
  uri: string;
}
export interface FileAnalysisResult {
  kernels: KernelOutline[];
  /** Names of the kernels the file itself launches (`<<<>>>`, cudaLaunchKernel*, through a table of kernel pointers). */
  launched?: string[];
}
/** Request: the kernels and loops of an open document (null when the server does not have it open). */
export const FileAnalysisRequest = new RequestType<FileAnalysisParams, FileAnalysisResult | null, void>('unrollLens/fileAnalysis');

/** Notification from the server after each analysis, for the status bar. */
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
export const AnalysisStatusNotification = new NotificationType<AnalysisStatus>('unrollLens/analysisStatus');

/** Notification from the server: what toolchain it found (status bar). */
export interface ToolchainStatus {
  /** "nvcc 13.0 · sm_90 · H200", or null when nvcc is missing. */
  summary: string | null;
  /** A missing tool or another problem, with how to fix it. */
  problem: string | null;
  /** A build is running for this file. */
  building: string | null;
  /** Counts the server's looks for the tools (settings changed, trust granted, a recheck): a new count, new details to ask for. */
  survey?: number;
}
export const ToolchainStatusNotification = new NotificationType<ToolchainStatus>('unrollLens/toolchainStatus');

/** The checks of the Get Started walkthrough, one per step: nvcc, cuobjdump + nvdisasm, Nsight Compute, the GPU and counter permission. */
export const TOOL_CHECKS = ['nvcc', 'disassemblers', 'ncu', 'gpu'] as const;
export type ToolCheckId = (typeof TOOL_CHECKS)[number];

/** A tool a check looked for: found (path, version, where from) or not (path null). */
interface CheckedTool {
  name: string;
  version: string | null;
  path: string | null;
  /** Where the path came from: setting, PATH, CUDA_HOME, … */
  source: string | null;
}
export interface ToolCheckResult {
  id: ToolCheckId;
  /** What the check looks for is there (its walkthrough step completes). */
  found: boolean;
  /** ok: ready; info: missing, not needed with these settings; warning: missing and needed (or Restricted Mode); error: nothing builds without it. */
  severity: 'ok' | 'info' | 'warning' | 'error';
  /** One line: what was found where, or what is missing. */
  message: string;
  /** How to fix what is missing or refused, or null. */
  fix: string | null;
  tools: CheckedTool[];
}
/** The toolchain at a glance (language status item) and each walkthrough check. */
export interface ToolchainInfo {
  /** Workspace Trust: when false nothing was run, and every check says how to allow it. */
  trusted: boolean;
  /** "nvcc 13.0 · sm_90 · H100" (the status bar's words). */
  text: string;
  /** The other tools' versions, the GPUs and the counter permission, one line. */
  detail: string;
  /** The worst check's: error without nvcc, warning when something the settings need is missing. */
  severity: 'information' | 'warning' | 'error';
  checks: ToolCheckResult[];
}
export interface ToolchainInfoParams {
  /** Look for the tools again (they may have been installed since); else the server's cached answer. */
  recheck?: boolean;
}
/** Request: the toolchain found (cached per settings, found again on recheck); runs nothing in an untrusted workspace. */
export const ToolchainInfoRequest = new RequestType<ToolchainInfoParams, ToolchainInfo, void>('unrollLens/toolchainInfo');

/** What the client passes when it starts the server. */
export interface InitializationOptions {
  /** Where variant builds are cached (the extension's global storage). */
  storagePath?: string;
  /**
   * VS Code's Workspace Trust. Untrusted (or not said): the server parses and answers CodeLens,
   * hover and diagnostics, and runs no program at all (nvcc passes -D/-Xcompiler values through a
   * shell, and compile_commands.json comes from the repository).
   */
  trusted?: boolean;
  /** Header path → the translation unit the user chose for it (remembered in the workspace's state). */
  translationUnits?: Record<string, string>;
}
/** Notification from the client: the user trusted the workspace (trust is never taken back without a reload). */
export const WorkspaceTrustNotification = new NotificationType<{ trusted: boolean }>('unrollLens/workspaceTrust');

// A loop in a header is built through a translation unit that includes it: one the user chose
// (remembered per workspace by the client), else the nearest compile_commands.json entry whose
// text includes it.

/** A .cu file that includes a header, as the chooser lists it. */
interface TranslationUnitCandidate {
  path: string;
  /** An entry of compile_commands.json, or found by a text search of the workspace. */
  via: 'compile_commands' | 'search';
  /** Its `#include` resolves to the header from its own folder (not only the same file name). */
  exact: boolean;
}
export interface TranslationUnitsResult {
  /** The header's path. */
  header: string;
  /** The unit its variants are built through now, and why; null when none is known. */
  current: string | null;
  currentVia: 'chosen' | 'compile_commands' | null;
  candidates: TranslationUnitCandidate[];
}
/** Request: the translation units that could build a header's loops (for the chooser). */
export const TranslationUnitsRequest = new RequestType<{ uri: string }, TranslationUnitsResult, void>('unrollLens/translationUnits');
/** Notification from the client: the user chose a header's translation unit (null: forget the choice). */
export const SetTranslationUnitNotification = new NotificationType<{ header: string; unit: string | null }>(
  'unrollLens/setTranslationUnit',
);

export interface LoopVariantsParams {
  uri: string;
  /** 1-based line of the loop keyword. */
  line: number;
  /** Factors to build; default: the unrollLens.unrollFactors setting. */
  factors?: string[];
  /** LSP work-done progress: the server reports $/progress on it; cancelling the request stops the work. */
  workDoneToken?: string | number;
}

/** Outcome of one variant's build: `failed` is an nvcc error, `timeout` and `cancelled` stopped it. */
type VariantBuildStatus = 'ok' | 'failed' | 'timeout' | 'cancelled';

interface LoopVariantResult {
  factor: FactorValue;
  status: VariantBuildStatus;
  /** SASS instructions of the kernel holding the loop. */
  kernelInstructions: number | null;
  /** Copies of one source iteration nvcc emitted in the hot machine-code loop (from the SASS line info). */
  effectiveUnroll: number | null;
}

export interface LoopVariantsResult {
  variants: LoopVariantResult[];
  /** Plain-language notes: requested factors nvcc ignored or capped. */
  notes: string[];
  /** The same variants for the results panel (a one-loop static sweep). */
  result: SweepResult;
}
/** Request: build every unroll factor of one loop; the results also feed the loop's hover and CodeLens. */
export const LoopVariantsRequest = new RequestType<LoopVariantsParams, LoopVariantsResult, void>('unrollLens/loopVariants');

export type BenchLoopParams = LoopVariantsParams;

interface BenchVariantResult {
  /** `as-written`, `default`, `full` or the factor. */
  label: string;
  status: RunStatus;
  /** Why it did not finish, when it did not. */
  message: string | null;
  medianMs: number | null;
  iqrMs: number | null;
  /** Baseline median / this median (> 1: faster than the file as written). */
  speedup: number | null;
  /** The IQRs of this variant and the baseline overlap. */
  withinNoise: boolean | null;
  /** Instruction-cache slowdown, measured or predicted; null when neither is known. */
  icache: VariantIcache | null;
}

/** An inline note after one source line: its share of the kernel's warp-stall samples and top reasons. */
export interface LineStallNote {
  /** 1-based line of the file as written. */
  line: number;
  text: string;
}

export interface BenchLoopResult {
  /** Label of the variant speedups are relative to (the file as written). */
  baseline: string;
  variants: BenchVariantResult[];
  /** Label of the variant with the lowest median, or null when none ran. */
  fastest: string | null;
  /** Lines with a visible share (≥ 1 %) of the stall samples; empty when none were collected. */
  lineStalls: LineStallNote[];
  /** The same run for the results panel (a one-loop sweep). */
  result: SweepResult;
  /** Where the result was saved (.unroll-lens/results/…), or null when it could not be. */
  savedPath: string | null;
}
export interface SassListingParams {
  uri: string;
  /** 1-based line of the loop keyword. */
  line: number;
  /** as-written (default), default, full or a number. */
  factor?: string;
  /** sm_XX; default: the arch variant builds use. */
  arch?: string;
  /** Normalised for comparing: no addresses, labels and registers renumbered in order of use, no stall notes. */
  normalise?: boolean;
  workDoneToken?: string | number;
}

/** Request: the annotated SASS listing of one variant of a loop (builds it when needed; $/progress, cancellable). */
export const SassListingRequest = new RequestType<SassListingParams, SassListingResult, void>('unrollLens/sassListing');

/** Request: build, check, time and profile every unroll factor of one loop on the GPU. */
export const BenchLoopRequest = new RequestType<BenchLoopParams, BenchLoopResult, void>('unrollLens/benchLoop');

export interface SweepParams {
  uri: string;
  /** 1-based line of the kernel definition. */
  kernelLine: number;
  /** Loop lines to sweep; default: every loop of the kernel. */
  loops?: number[];
  /** Factor set; default: the unrollLens.unrollFactors setting; empty for a kernel without loops (its params alone). */
  factors?: string[];
  /** Extra axes, one `NAME=v1,v2,…` each: a template parameter of the kernel (its instantiations) or a macro (-D). */
  params?: string[];
  /** A name from SWEEP_STRATEGIES; default exhaustive. */
  strategy?: string;
  /** SASS only, even where a GPU run is possible. */
  static?: boolean;
  /** Names this run's SweepUpdateNotifications. */
  runId: string;
  workDoneToken?: string | number;
}
export interface SweepRunResult {
  result: SweepResult;
  /** Per-line stall notes of the file as written (unrollLens.profile.sourceStalls on a GPU sweep); empty when none were sampled. */
  lineStalls: LineStallNote[];
  /** Where the result was saved (.unroll-lens/results/…), or null when it could not be. */
  savedPath: string | null;
}
/** Request: sweep a kernel's unroll factors (with $/progress; cancelling returns what finished). */
export const SweepRequest = new RequestType<SweepParams, SweepRunResult, void>('unrollLens/sweep');

export interface CompareKernelsParams {
  uri: string;
  /** Source names of the `__global__` kernels to compare (every instantiation of each is a row). */
  kernels: string[];
  /** The kernel the speedups are against (a source or mangled name); default: the first row. */
  baseline?: string;
  /** Program arguments as one line, split like a shell would but never run through one; default: unrollLens.profile.args. */
  args?: string;
  workDoneToken?: string | number;
}
/** One compared kernel as the client logs it. */
interface ComparedKernelSummary {
  /** `reduce_complete<256>` (with the block size when the kernel ran with several). */
  label: string;
  /** Mangled name. */
  kernel: string;
  medianMs: number | null;
  /** The baseline kernel's median / this median. */
  speedup: number | null;
  withinNoise: boolean | null;
}
export interface CompareKernelsResult {
  /** Origin 'compare': the file as written, its instantiations the compared kernels, for the results panel. */
  result: SweepResult;
  /** The kernels in the order named. */
  kernels: ComparedKernelSummary[];
  /** Label of the kernel the speedups are against, or null when it got no time. */
  baseline: string | null;
  /** Where the result was saved (.unroll-lens/results/…), or null when it could not be (or did not finish). */
  savedPath: string | null;
}
/** Request: time several kernels of one program side by side on the GPU ($/progress; cancellable). */
export const CompareKernelsRequest = new RequestType<CompareKernelsParams, CompareKernelsResult, void>('unrollLens/compareKernels');

/** Progress of a running sweep as the panel shows it. */
interface SweepProgressInfo {
  message: string;
  done: number;
  /** Variants in all, or with atMost an upper bound (the strategy may finish below it). */
  total: number;
  atMost?: boolean;
}
/** Notification: a sweep's result so far, after each variant (live panel). */
export interface SweepUpdate {
  runId: string;
  result: SweepResult;
  progress: SweepProgressInfo | null;
}
export const SweepUpdateNotification = new NotificationType<SweepUpdate>('unrollLens/sweepUpdate');

/** A result saved under a workspace folder's .unroll-lens/results/. */
interface SavedResultSummary {
  path: string;
  kernel: string;
  file: string;
  createdAt: string;
  origin: SweepResult['origin'];
  static: boolean;
  /** Label of the best variant and its speedup, when there is one. */
  best: string | null;
}
export interface ListResultsResult {
  results: SavedResultSummary[];
  /** Files in the results folders that are not results (unreadable, foreign, older format). */
  skipped: { path: string; reason: string }[];
}
/** Request: the saved results of every workspace folder, newest first. */
export const ListResultsRequest = new RequestType<Record<string, never>, ListResultsResult, void>('unrollLens/listResults');

/** Request: one saved result (validated). */
export const LoadResultRequest = new RequestType<{ path: string }, SweepResult, void>('unrollLens/loadResult');

/** Request: a result as CSV or as JSON in the T4 autotuning results schema. */
export interface ExportResultParams {
  result: SweepResult;
  format: 'csv' | 't4';
}
export const ExportResultRequest = new RequestType<ExportResultParams, { text: string; fileName: string }, void>('unrollLens/exportResult');

/**
 * "Clear Build Cache": the server owns the variant builds and GPU measurements it cached under the
 * extension's global storage (<storage>/builds, <storage>/measurements), so it counts and clears
 * them; the client asks twice (count, then after the user confirms, clear) and shows the answers.
 */
export interface ClearCacheParams {
  /** false: only count what is there (for the confirmation); true: delete it. */
  clear: boolean;
}
/** The build cache's entries and the measurements beside them: there (counting) or deleted (clearing). */
interface BuildCacheCount {
  /** The builds folder. */
  location: string;
  builds: number;
  /** Bytes of those builds (freed, when clearing), and the same as "12.0 MiB". */
  bytes: number;
  size: string;
  measurements: number;
  /** After clearing: builds still there (they could not be deleted); 0 when counting. */
  left: number;
}
export type ClearCacheResult =
  /** The client gave the server no global storage folder: there is no build cache of the editor's to clear. */
  | { status: 'no-storage' }
  | ({ status: 'counted' | 'cleared' } & BuildCacheCount)
  /** Nothing was deleted: the folder is not one Unroll Lens made (it has no marker of ours); `reason` says so. */
  | { status: 'refused'; location: string; reason: string };
export const ClearCacheRequest = new RequestType<ClearCacheParams, ClearCacheResult, void>('unrollLens/clearCache');

/** A text edit in LSP terms (0-based lines and UTF-16 columns). */
export interface WireTextEdit {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  newText: string;
}
export interface PragmaEditsParams {
  uri: string;
  /** Loop line → the factor to write (`default` removes the pragma). */
  factors: Record<string, FactorValue>;
  /**
   * The result the factors come from: the server refuses (a problem, no edits) unless `uri` is the
   * file it was measured from, inside a workspace folder, with the text it was measured on.
   */
  measured: { file: string; sourceSha256?: string; loops: { line: number; written: FactorValue }[] };
}
export interface PragmaEditsResult {
  /** Non-overlapping edits of the current text; empty when every loop already has its factor. */
  edits: WireTextEdit[];
  /** Loops that could not be edited (gone, or changed since the result was measured). */
  problems: string[];
}
/** Request: the edits that write the chosen unroll pragmas into the open document (Apply). */
export const PragmaEditsRequest = new RequestType<PragmaEditsParams, PragmaEditsResult, void>('unrollLens/pragmaEdits');

// The result and listing contracts live in src/schema (the engine builds them; the wire carries them unchanged).
export type * from './schema/types';
export type * from './schema/sassListing';
