// The instruction-cache prediction as the CLI, the hover and the diagnostics show it (issue 13):
// each loop variant's prediction at the kernel's warps per SM, against the most unrolled variant
// that fits the instruction cache.
import type { FileSassReport, LoopReport, LoopVariant } from '../variants/reports';
import { sourceNameOf } from '../../schema/kernelNames';
import type { FileAnalysis } from '../parse/model';
import { findLaunches, KernelLaunch } from '../parse/launches';
import { calibrationFor, describePrediction, kib, predictIcache } from './model';
import type { IcacheCalibration, IcachePrediction } from './types';
import type { IcacheLoopFacts } from '../sass/issueRate';
import type { WarpsPerSm } from '../occupancy/warpsPerSm';
import { smCountOf, warpsLabel, warpsPerSmInFile } from '../occupancy/warpsPerSm';

export interface VariantIcache {
  bytes: number;
  predictedSlowdown: { low: number; high: number };
  warpsPerSm: number;
  /** The lowest and highest warps per SM the code allows when a launch value is not known: the prediction covers both. */
  warpsRange: { low: number; high: number } | null;
  /** Where warpsPerSm comes from (occupancy/warpsPerSm.ts), and the same in a few words. */
  warpsSource: string;
  warpsShort: string;
  demand: number;
  shape: string;
  fits: boolean;
  basis: string;
  /** What the slowdown is relative to: the most unrolled variant that fits, else a size that fits. */
  reference: string;
  /** describePrediction's sentence. */
  text: string;
}

/** "a version that fits (≤ 17 KiB)": the reference when no built variant fits. */
function fittingSizeReference(cal: IcacheCalibration): string {
  return `a version that fits (≤ ${kib(cal.fitsUpTo)})`;
}

/** How a variant is named beside a prediction: the unroll nvcc applied (×16), else the factor asked for. */
function variantLabel(v: LoopVariant): string {
  // The factor the user asked for names the variant (nvcc's own count is in the table beside it).
  if (typeof v.factor === 'number') return `×${v.factor}`;
  return v.factor === 'full' ? 'full unroll' : "the compiler's default";
}

function unrollRank(v: LoopVariant): number {
  return v.fullyUnrolled ? Infinity : (v.effectiveUnroll ?? 0);
}

function icacheOf(
  facts: IcacheLoopFacts,
  warps: WarpsPerSm,
  arch: string,
  reference: string,
  cal: IcacheCalibration = calibrationFor(arch),
): VariantIcache {
  const p: IcachePrediction = predictIcache(facts, warps.warpsPerSm, arch, cal);
  const range = warps.range && warps.range.low !== warps.range.high ? warps.range : null;
  // Not known exactly: the prediction spans the predictions at both ends of the range.
  const ends = range ? [range.low, range.high].map(w => predictIcache(facts, w, arch, cal)) : [];
  const predictedSlowdown = range
    ? {
        low: Math.min(p.predictedSlowdown.low, ...ends.map(e => e.predictedSlowdown.low)),
        high: Math.max(p.predictedSlowdown.high, ...ends.map(e => e.predictedSlowdown.high)),
      }
    : p.predictedSlowdown;
  const merged = { ...p, predictedSlowdown };
  return {
    bytes: p.bytes,
    predictedSlowdown,
    warpsPerSm: p.warpsPerSm,
    warpsRange: range,
    warpsSource: warps.source,
    warpsShort: warps.short,
    demand: p.demand,
    shape: p.shape,
    fits: p.fits,
    basis: range ? `${p.basis}; ${range.low}–${range.high} warps/SM: the range spans both ends` : p.basis,
    reference,
    text: describePrediction(merged, reference, arch, cal, range ? warpsLabel(warps) : undefined),
  };
}

/**
 * Each variant's prediction (null where the variant has no hot-code facts). `warpsFor` gives the
 * warps per SM of a variant (its registers may change how many blocks fit).
 */
export function loopIcache(loop: LoopReport, warpsFor: (v: LoopVariant) => WarpsPerSm): (VariantIcache | null)[] {
  const cal = calibrationFor(loop.arch);
  const predictions = loop.variants.map(v => (v.icache ? predictIcache(v.icache, warpsFor(v).warpsPerSm, loop.arch, cal) : null));
  let best: LoopVariant | null = null;
  loop.variants.forEach((v, i) => {
    const p = predictions[i];
    if (!p?.fits) return;
    if (!best || unrollRank(v) > unrollRank(best) || (unrollRank(v) === unrollRank(best) && p.bytes > (best.icache?.bytes ?? 0))) best = v;
  });
  const reference = best ? variantLabel(best) : fittingSizeReference(cal);
  return loop.variants.map(v => (v.icache ? icacheOf(v.icache, warpsFor(v), loop.arch, reference, cal) : null));
}

/** The range in a table cell: "i-cache 66 KiB: 2.6–3.4× vs ×16", or "i-cache 12 KiB: fits". */
export function icacheCell(p: VariantIcache): string {
  if (p.fits) return `i-cache ${kib(p.bytes)}: fits`;
  const { low, high } = p.predictedSlowdown;
  return `i-cache ${kib(p.bytes)}: ${low.toFixed(1)}–${high.toFixed(1)}× vs ${p.reference}`;
}

/** What a prediction for the file as written needs besides the build (the editor's side). */
export interface IcacheContext {
  text: string;
  analysis: FileAnalysis;
  /** unrollLens.warpsPerSm (0: inferred). */
  warpsPerSm: number;
  /** Where an explicit warpsPerSm was set ("unrollLens.warpsPerSm"). */
  warpsOrigin: string;
  /** The first GPU's name (nvidia-smi), for its SM count; null without one. */
  gpuName: string | null;
  /** findLaunches(text), when the caller has it already. */
  launches?: KernelLaunch[];
}

/** The warps per SM of the kernel whose code holds a loop of the file as written. */
export function writtenLoopWarps(r: FileSassReport, line: number, ctx: IcacheContext): WarpsPerSm | null {
  const m = r.loops.find(l => l.line === line);
  if (!m) return null;
  const k = m.kernel ? r.kernels.find(x => x.name === m.kernel) : undefined;
  const owner = ctx.analysis.kernels.find(x => x.loops.some(l => l.line === line));
  const count = ctx.gpuName ? smCountOf(ctx.gpuName) : null;
  return warpsPerSmInFile(ctx.text, ctx.analysis, {
    kernel: k ? sourceNameOf(k.demangled) : (owner?.name ?? ''),
    arch: r.arch,
    override: { warpsPerSm: ctx.warpsPerSm, origin: ctx.warpsOrigin },
    launches: ctx.launches ?? findLaunches(ctx.text),
    registers: k?.registers ?? null,
    sharedBytes: k?.sharedBytes ?? null,
    sms: count && ctx.gpuName ? { count, gpu: ctx.gpuName } : null,
  });
}

/** The prediction for a loop of the file as written, against a size that fits; null without hot-code facts. */
export function writtenLoopIcache(r: FileSassReport, line: number, ctx: IcacheContext): VariantIcache | null {
  const facts = r.loops.find(l => l.line === line)?.icache;
  if (!facts || r.status !== 'ok') return null;
  const warps = writtenLoopWarps(r, line, ctx);
  if (!warps) return null;
  const cal = calibrationFor(r.arch);
  return icacheOf(facts, warps, r.arch, fittingSizeReference(cal), cal);
}

/**
 * The hover's i-cache line for a loop as written: the prediction, or that it fits, with where the
 * warps per SM come from. Empty without a build or hot-code facts.
 */
export function loopIcacheMarkdown(r: FileSassReport | null | undefined, line: number, ctx: IcacheContext | null): string {
  if (!r || !ctx) return '';
  const p = writtenLoopIcache(r, line, ctx);
  if (!p) return '';
  const cal = calibrationFor(r.arch);
  const what = p.fits
    ? `loop body ${kib(p.bytes)}: fits the instruction cache (no penalty measured up to ${kib(cal.fitsUpTo)} on ${cal.arch})`
    : p.text;
  return `**i-cache**: ${what}  \n_${warpsLabel({ warpsPerSm: p.warpsPerSm, range: p.warpsRange })} warps/SM: ${p.warpsSource}._`;
}
