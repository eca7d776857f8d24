// The instruction-cache prediction as the CLI, the hover and the diagnostics show it (issue 13):
// each loop variant's prediction at the kernel's warps per SM, against the most unrolled variant
// that fits the first-level cache.
import type { LoopReport, LoopVariant } from '../variants/inspect';
import {
  calibrationFor,
  describePrediction,
  IcacheCalibration,
  IcacheLoopFacts,
  IcachePrediction,
  kib,
  predictIcache,
} from './icacheModel';
import type { WarpsPerSm } from './warpsPerSm';

export interface VariantIcache {
  bytes: number;
  predictedSlowdown: { low: number; high: number };
  warpsPerSm: number;
  /** Where warpsPerSm comes from (warpsPerSm.ts). */
  warpsSource: string;
  demand: number;
  shape: string;
  fits: boolean;
  basis: string;
  /** What the slowdown is relative to: the most unrolled variant that fits, else a size that fits. */
  reference: string;
  /** describePrediction's sentence. */
  text: string;
}

/** "a version that fits (≤ 33 KiB)": the reference when no built variant fits. */
export function fittingSizeReference(cal: IcacheCalibration): string {
  return cal.steps[0] ? `a version that fits (≤ ${kib(cal.steps[0].before)})` : 'a version that fits';
}

/** How a variant is named beside a prediction: the unroll nvcc applied (×16), else the factor asked for. */
export function variantLabel(v: LoopVariant): string {
  if (v.effectiveUnroll !== null && !v.fullyUnrolled) return `×${v.effectiveUnroll}`;
  return v.fullyUnrolled ? 'full unroll' : String(v.factor);
}

function unrollRank(v: LoopVariant): number {
  return v.fullyUnrolled ? Infinity : (v.effectiveUnroll ?? 0);
}

export function icacheOf(
  facts: IcacheLoopFacts,
  warps: WarpsPerSm,
  arch: string,
  reference: string,
  cal: IcacheCalibration = calibrationFor(arch),
): VariantIcache {
  const p: IcachePrediction = predictIcache(facts, warps.warpsPerSm, arch, cal);
  return {
    bytes: p.bytes,
    predictedSlowdown: p.predictedSlowdown,
    warpsPerSm: p.warpsPerSm,
    warpsSource: warps.source,
    demand: p.demand,
    shape: p.shape,
    fits: p.fits,
    basis: p.basis,
    reference,
    text: describePrediction(p, reference, arch, cal),
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
