// The engine's reports mapped onto the protocol's wire types: only what the client shows, with
// the display strings it needs computed here, so the client carries no engine code.
import {
  benchJson,
  findLaunches,
  lineStallText,
  loopLensSummary,
  type FileAnalysis,
  type KernelComparison,
  type LoopReport,
} from '../engine';
import type { SourceLineStalls } from '../schema/types';
import { comparisonAsVariants } from '../schema/comparison';
import type {
  AnalysisStatus,
  BenchLoopResult,
  CompareKernelsResult,
  FileAnalysisResult,
  LineStallNote,
  LoopVariantsResult,
  SweepResult,
} from '../protocol';

/** Lines below this share of the kernel's stall samples get no inline note: one on every line would be noise. */
const LINE_STALL_NOTE_MIN_SHARE = 0.01;

export function toFileAnalysisResult(a: FileAnalysis, text: string): FileAnalysisResult {
  return {
    launched: [...new Set(findLaunches(text).flatMap(l => (l.kernel ? [l.kernel] : [])))],
    kernels: a.kernels.map(k => ({
      name: k.name,
      qualifier: k.qualifier,
      line: k.line,
      templateParameters: k.templateParameters,
      loops: k.loops.map(l => ({
        line: l.line,
        startLine: l.span.line,
        endLine: l.span.endLine,
        kind: l.kind,
        depth: l.depth,
        summary: loopLensSummary(k, l),
      })),
    })),
  };
}

export function toAnalysisStatus(uri: string, a: FileAnalysis, elapsedMs: number): AnalysisStatus {
  return {
    uri,
    kernels: a.kernels.length,
    loops: a.kernels.reduce((n, k) => n + k.loops.length, 0),
    pragmas: a.kernels.reduce((n, k) => n + k.loops.filter(l => l.pragma).length, 0),
    manualUnrolls: a.kernels.reduce((n, k) => n + k.manualUnrolls.length, 0),
    hasSyntaxErrors: a.hasSyntaxErrors,
    elapsedMs,
  };
}

export function toLoopVariantsResult(r: LoopReport, result: SweepResult): LoopVariantsResult {
  return {
    variants: r.variants.map(v => ({
      factor: v.factor,
      status: v.status,
      kernelInstructions: v.kernelInstructions,
      effectiveUnroll: v.effectiveUnroll,
    })),
    // Why loop columns are empty (no nvdisasm) is said with the notes, not left to a silent `ok`.
    notes: r.limitation ? [...r.notes, r.limitation] : r.notes,
    result,
  };
}

export function toBenchLoopResult(result: SweepResult, savedPath: string | null): BenchLoopResult {
  const r = benchJson(result);
  const ran = r.variants.filter(v => v.status === 'ok' && v.medianMs !== null);
  // The first of equal medians wins, as in the hover table's bold row.
  const fastest = ran.length ? ran.reduce((a, b) => (b.medianMs! < a.medianMs! ? b : a)) : null;
  return {
    baseline: 'as-written',
    variants: r.variants.map(v => ({
      label: v.label,
      status: v.status === 'pending' ? 'cancelled' : v.status,
      message: v.message ?? null,
      medianMs: v.medianMs,
      iqrMs: v.iqrMs,
      speedup: v.speedup,
      withinNoise: v.withinNoise,
      icache: v.icache ?? null,
    })),
    fastest: fastest?.label ?? null,
    lineStalls: lineStallNotes(result.lineStalls ?? []),
    result,
    savedPath,
  };
}

/** Inline notes for the lines with a visible share of the stall samples: a bench's and a sweep's per-line stalls alike. */
export function lineStallNotes(lines: Pick<SourceLineStalls, 'line' | 'samples' | 'stallShare'>[]): LineStallNote[] {
  const total = lines.reduce((a, l) => a + l.samples, 0);
  return lines
    .filter(l => l.samples / Math.max(1, total) >= LINE_STALL_NOTE_MIN_SHARE)
    .map(l => ({ line: l.line, text: lineStallText(l, total) }));
}

/** A kernel comparison for the client: its rows as the panel labels them (the result carries the same, with the baseline). */
export function toCompareKernelsResult(c: KernelComparison, savedPath: string | null): CompareKernelsResult {
  const view = comparisonAsVariants(c.result);
  return {
    result: c.result,
    kernels: view.variants.map(v => ({
      label: v.label,
      kernel: v.kernel ?? v.id,
      medianMs: v.medianMs,
      speedup: v.speedup,
      withinNoise: v.withinNoise,
    })),
    baseline: view.variants.find(v => v.id === view.baseline)?.label ?? null,
    savedPath,
  };
}
