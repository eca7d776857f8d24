// The engine's front door: everything the CLI (src/cli/) and the language server (src/server/)
// may use, and nothing else (dependency-cruiser rule `front-door`). Grouped by the folder that
// owns it, lowest layer first (docs/architecture.md); what is not here is the engine's own
// business: a caller that needs more adds it here, in its folder's group.

// base/ — Safe files: bounded reads, link-safe writes, sealed caches; the words of a remedy.
export { BoundedReadError, READ_CAPS, fileKind, readBoundedText } from './base/boundedRead';
export { NotOurCacheError, ownership } from './base/cacheFolder';
export { useRemedies } from './base/remedies';
export type { Remedies } from './base/remedies';
export { SafeWriteError, safeTargetPath, safeWriteFile } from './base/safeWrite';

// toolchain/ — The CUDA tools: discovery, compile flags, processes.
export { MissingToolError, installHint } from './toolchain/discover';
export type { ToolInfo, ToolName } from './toolchain/discover';
export { flagsOriginText, normaliseArch, resolveCompileFlags, splitCommandLine } from './toolchain/flags';
export type { CompileFlags } from './toolchain/flags';
export type { CompilerMessage } from './toolchain/nvccErrors';
export { withToolTimeouts } from './toolchain/process';
export type { ProcessRunner, ToolTimeout } from './toolchain/process';
export { processGuard } from './toolchain/processGuard';
export { FileDoesNotCompileError, describeRejectedFlag } from './toolchain/rejectedFlag';
export {
  DEFAULT_ARCH,
  chooseArch,
  detectToolchain,
  shortGpuName,
  surveyToolchain,
  toolchainOf,
  toolchainSummary,
} from './toolchain/toolchain';
export type { ToolSurvey, Toolchain } from './toolchain/toolchain';

// parse/ — CUDA source: kernels, loops, pragmas, launches, the workspace scan, editor documents.
export { kernelLabel, loopHoverMarkdown, loopLensSummary, manualUnrollHoverMarkdown, manualUnrollSummary } from './parse/describe';
export { CudaDocuments } from './parse/documents';
export { SegmentedText } from './parse/segmentedText';
export { computeFindings } from './parse/findings';
export { findLaunches, launchesIn } from './parse/launches';
export type { KernelLaunch } from './parse/launches';
export { mayHoldDeviceCode } from './parse/libraryMacros';
export { MacroTable, MacroTables, preprocessOptionsFromFlags, scanFallbackDirs, toolkitIncludeDirs } from './parse/macros';
export type { FileAnalysis, Kernel, Loop, SourceSpan } from './parse/model';
export type { FileOutline, OutlineKernel } from './parse/outline';
export { ScanInputError, collectScanFiles, projectScanMacros, toScanJson } from './parse/scan';
export type { SkippedFile } from './parse/scan';
export { scanInParallel } from './parse/scanPool';
export { scanCacheBeside } from './parse/scanCache';
export { compileWasmWithBaselineOnly } from './parse/wasmTiers';

// occupancy/ — Occupancy and warps per SM.
export { smCountOf, warpsLabel, warpsPerSmInFile } from './occupancy/warpsPerSm';

// profile/ — Nsight Compute's output: raw pages, stalls, permissions.
export { probeCounterPermission } from './profile/counterPermission';
export type { CounterPermission } from './profile/counterPermission';
export type { RawKernelRow } from './profile/ncuCsv';
export { ENABLE_COUNTERS } from './profile/permissionHelp';
export { RawPageError, RawPageStream, readRawPageFile } from './profile/rawPageStream';
export type { RawPageSummary } from './profile/rawPageStream';
export { readSassStallsFile } from './profile/sassStalls';
export type { SassStalls } from './profile/sassStalls';
export { isProfileMetric, kernelProfile, stallsJson } from './profile/stalls';

// variants/ — Unroll variants: rewrite, build, inspect, cache, projects.
export { unrollPragmaEdit } from './variants/applyEdit';
export { VariantBuilder, defaultCacheDir } from './variants/build';
export { BuildCache, formatBytes } from './variants/cache';
export { UnrollFactors, UnrollFactorsError, factorLabel, parseVariantFactor, writtenFactor } from './variants/factors';
export type { UnrollFactor } from './variants/factors';
export { ListingError, NotInstantiatedError, VariantInspector } from './variants/inspect';
export { withStalls } from './variants/listing';
export { isHeaderFile } from './variants/overlay';
export type { FileSassReport, LoopReport } from './variants/reports';
export {
  ProjectError,
  clearProjectCopies,
  closeProjectRun,
  openProjectRun,
  projectCopiesInfo,
  projectsDirFor,
} from './variants/projectTree';
export type { ProjectRun } from './variants/projectTree';
export { unitsByTextSearch, unitsFromCompileCommands } from './variants/translationUnit';
export type { UnitCandidate, UnitSearch } from './variants/translationUnit';

// icache/ — The instruction-cache model.
export { kib } from './icache/model';
export { icacheCell, loopIcache, loopIcacheMarkdown, writtenLoopIcache, writtenLoopWarps } from './icache/report';
export type { IcacheContext, VariantIcache } from './icache/report';

// gpu/ — Running and timing variants on a GPU.
export { MeasurementCache } from './gpu/measurementCache';
export type { GpuRunConfig, NcuPasses } from './gpu/options';
export { benchStopsAt, gpuBlocker } from './gpu/readiness';
export type { GpuBlocker } from './gpu/readiness';
export { GpuSelectionError, parseGpuSelection, runLocations } from './gpu/selection';
export { timerFor, unmetConditions } from './gpu/timer';
export type { UnmetCondition } from './gpu/timer';

// sweep/ — The measurement pipeline: sweeps, bench, compare, results.
export { applyTargetProblem } from './sweep/applyTarget';
export { benchJson, benchLabel, benchLabelOfId, benchLoop, benchRows } from './sweep/bench';
export type { RunTiming } from './sweep/bench';
export { compareKernels } from './sweep/compare';
export type { KernelComparison } from './sweep/compare';
export { sweepCsv, sweepT4 } from './sweep/export';
export { writtenByUs } from './sweep/exportOwnership';
export type { ExportFormat } from './sweep/exportOwnership';
export { sweepJson } from './sweep/json';
export { fromLoopReport } from './sweep/loopVariantsResult';
export type { ConvertContext } from './sweep/loopVariantsResult';
export { progressCount } from './sweep/observers/observer';
export { recommendFactor } from './sweep/recommend';
export { recommendationRecordText } from './sweep/recommendRecord';
export { slurmSweepRunner } from './sweep/slurm/factory';
export { SharedFolderError, readManifest } from './sweep/slurm/manifest';
export { SlurmRefusedError } from './sweep/slurm/queue';
export type { SlurmOptions } from './sweep/slurm/queue';
export { runSlurmTask, taskToolchain } from './sweep/slurm/task';
export { SweepSpaceError, parseParamSpec, resolveSpace } from './sweep/space';
export { RESULTS_DIR, listResults, loadResult, resultsDir, saveResult } from './sweep/store';
export { STRATEGIES } from './sweep/strategies';
export { runSweep } from './sweep/sweep';
export type { SweepOptions } from './sweep/sweep';

// report/ — Text and Markdown for results.
export { benchMarkdown, lineStallText, lineStallsMarkdown } from './report/benchText';
export { lineStallsText } from './report/lineStallsText';
export { renderListing } from './report/sassListing';
export { loopSassLensTitle, loopSassMarkdown } from './report/sassText';
export type { SassFacts } from './report/sassText';
export { sweepText } from './report/sweepText';
