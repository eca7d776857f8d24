// From a SweepResult to what the charts and the table show: identical variants resolved to the
// variant they copy, speedup intervals from the quartiles, stall reasons grouped for stacking.
import type { SweepResult, SweepVariant, VariantIcache } from '../../src/protocol';
// Pure (no Node API): bundled into the panel so that it and the CLI table decide alike.
import { showInstantiations } from '../../src/schema/kernelNames';
import { comparisonAsVariants, isComparison } from '../../src/schema/comparison';

/**
 * Stall reasons stacked by name besides no_instruction; the rest are summed as "other". Four keep
 * every stack colour distinct (VS Code's chart palette has six colours; red is no_instruction's).
 */
const TOP_STALL_REASONS = 4;
export const NO_INSTRUCTION = 'no_instruction';
export const OTHER_STALLS = 'other';
/** Part of the shares' sum (cycles between issues) but not a stall: left out of "top stall". */
const ISSUING = 'selected';
/** SASS instructions are 16 bytes on every architecture the tool supports (sm_70 and later). */
const SASS_INSTRUCTION_BYTES = 16;

type NumericKey = {
  [K in keyof SweepVariant]-?: Exclude<SweepVariant[K], undefined> extends number | null ? K : never;
}[keyof SweepVariant];

export interface VariantView {
  v: SweepVariant;
  index: number;
  /** The variant `identicalTo` points at (its numbers stand for this one), or null. */
  ref: SweepVariant | null;
  ok: boolean;
  pending: boolean;
  /** Finished without a usable build or measurement (compile, runtime, …, cancelled). */
  failed: boolean;
  /** Own value, else the identical variant's (the sweep measures identical code once). */
  num(key: NumericKey): number | null;
  withinNoise: boolean | null;
  stallShare: Record<string, number> | null;
  loopInstructions(line: string): number | null;
  loopBytes(line: string): number | null;
  effectiveUnroll(line: string): number | null;
  fullyUnrolled(line: string): boolean;
  /** Speedup at the variant's q3 and q1 (baseline median / quartile). */
  speedupLow: number | null;
  speedupHigh: number | null;
  /** Grouped stall shares in `ViewModel.stallGroups` order. */
  stallGroups: (number | null)[];
  topStall: { reason: string; share: number } | null;
  /** Chart axis label: label, then "= ×4" for identical code, then a status that is not ok. */
  axisLabel: string[];
  /** Instruction-cache slowdown, measured or predicted (own, else the identical variant's); null when unknown. */
  icache: VariantIcache | null;
}

export interface ViewModel {
  /** What is shown: a kernel comparison as one variant per compared kernel (src/schema/comparison.ts). */
  result: SweepResult;
  /** A kernel comparison (origin 'compare'): rows are kernels, nothing can be applied. */
  comparison: boolean;
  /** Some row has executed instructions (ncu): the table shows the column. */
  executed: boolean;
  /**
   * Some row has an achieved occupancy (ncu counts it: in its timed runs, or in the extra counter
   * run beside the CUPTI timer's): the resources chart draws it.
   */
  achieved: boolean;
  variants: VariantView[];
  byId: Map<string, VariantView>;
  /** Loop lines as the variant records key them ("72"). */
  loopLines: string[];
  paramKeys: string[];
  /** no_instruction, the top other reasons by mean share, then "other". */
  stallGroups: string[];
  baseline: VariantView | null;
  best: VariantView | null;
  /** Finished variants that did not build or run. */
  failed: VariantView[];
  pending: number;
  gpu: boolean;
  /** Some variant has an i-cache entry: the table shows the column and its legend. */
  icache: boolean;
  /** Label of the variant measured i-cache slowdowns are against (null when none was measured). */
  icacheReference: string | null;
  /** Rows name their instantiation (a template kernel, or rows of different ones): the table shows the column. */
  instantiations: boolean;
}

export function stallLabel(group: string): string {
  if (group === NO_INSTRUCTION) return 'no_instruction (i-cache miss)';
  if (group === OTHER_STALLS) return 'other reasons';
  if (group === ISSUING) return 'selected (issuing)';
  return group;
}

export function buildModel(recorded: SweepResult): ViewModel {
  // A comparison is stored as one run of the file with the kernels as its instantiations: shown one row (and bar) per kernel.
  const result = comparisonAsVariants(recorded);
  const comparison = isComparison(recorded);
  const raw = new Map(result.variants.map(v => [v.id, v]));
  const loopLines = result.loops.map(l => String(l.line));
  for (const v of result.variants) for (const k of Object.keys(v.factors)) if (!loopLines.includes(k)) loopLines.push(k);
  const paramKeys = [...new Set([...Object.keys(result.params), ...result.variants.flatMap(v => Object.keys(v.params))])];

  const views: VariantView[] = result.variants.map((v, index) =>
    variantView(v, index, v.identicalTo ? (raw.get(v.identicalTo) ?? null) : null),
  );
  const byId = new Map(views.map(x => [x.v.id, x]));
  const baseline = byId.get(result.baseline) ?? null;
  setSpeedupIntervals(views, baseline);
  const stallGroups = groupStalls(views);

  return {
    result,
    comparison,
    executed: views.some(x => x.num('executedInstructions') !== null),
    achieved: views.some(x => x.num('achievedOccupancy') !== null),
    variants: views,
    byId,
    loopLines,
    paramKeys,
    // a comparison's labels are the instantiations (`reduce_complete<256>`): no column repeats them
    instantiations: !comparison && showInstantiations(result.variants),
    stallGroups,
    baseline,
    best: result.best ? (byId.get(result.best) ?? null) : null,
    failed: views.filter(x => x.failed),
    pending: views.filter(x => x.pending).length,
    gpu: !result.static,
    icache: views.some(x => x.icache),
    icacheReference: views.find(x => x.icache?.reference)?.icache?.reference ?? null,
  };
}

/** One variant's view: its own numbers, else (when it built) those of the variant it is identical to. */
function variantView(v: SweepVariant, index: number, ref: SweepVariant | null): VariantView {
  const num = (key: NumericKey): number | null => {
    const own = v[key];
    if (typeof own === 'number' && Number.isFinite(own)) return own;
    const theirs = ref?.[key];
    return typeof theirs === 'number' && Number.isFinite(theirs) && v.status === 'ok' ? theirs : null;
  };
  const li = (line: string) => v.loopInstructions[line] ?? (ref && v.status === 'ok' ? (ref.loopInstructions[line] ?? null) : null);
  const eu = (line: string) => v.effectiveUnroll[line] ?? (ref && v.status === 'ok' ? (ref.effectiveUnroll[line] ?? null) : null);
  const fu = (line: string) => v.fullyUnrolled[line] ?? (ref ? (ref.fullyUnrolled[line] ?? false) : false);
  const axisLabel = [v.label];
  if (ref) axisLabel.push(`= ${ref.label}`);
  if (v.status !== 'ok') axisLabel.push(v.status);
  return {
    v,
    index,
    ref,
    ok: v.status === 'ok',
    pending: v.status === 'pending',
    failed: v.status !== 'ok' && v.status !== 'pending',
    num,
    withinNoise: v.withinNoise ?? (ref && v.status === 'ok' ? ref.withinNoise : null),
    stallShare: v.stallShare ?? (ref && v.status === 'ok' ? ref.stallShare : null),
    loopInstructions: li,
    loopBytes: (line: string) => {
      const n = li(line);
      return n === null ? null : n * SASS_INSTRUCTION_BYTES;
    },
    effectiveUnroll: eu,
    fullyUnrolled: fu,
    speedupLow: null,
    speedupHigh: null,
    stallGroups: [],
    topStall: null,
    axisLabel,
    icache: v.icache ?? (ref && v.status === 'ok' ? (ref.icache ?? null) : null),
  };
}

// Speedup interval: the baseline median over this variant's quartiles (q3 gives the low end).
function setSpeedupIntervals(views: VariantView[], baseline: VariantView | null): void {
  const baseMedian = baseline?.num('medianMs') ?? null;
  for (const x of views) {
    const q1 = x.num('q1Ms');
    const q3 = x.num('q3Ms');
    if (baseMedian !== null && x.ok && q1 !== null && q3 !== null && q1 > 0 && q3 > 0) {
      x.speedupLow = baseMedian / q3;
      x.speedupHigh = baseMedian / q1;
    }
  }
}

/**
 * Stall groups: the reasons with the largest mean share over measured variants. Sets each view's
 * grouped shares and top stall; returns the groups (none when no variant was measured).
 */
function groupStalls(views: VariantView[]): string[] {
  const measured = views.filter(x => x.ok && x.stallShare);
  const mean = new Map<string, number>();
  for (const x of measured) {
    for (const [reason, share] of Object.entries(x.stallShare!)) {
      if (reason !== NO_INSTRUCTION && Number.isFinite(share)) mean.set(reason, (mean.get(reason) ?? 0) + share / measured.length);
    }
  }
  const ranked = [...mean]
    .filter(([, m]) => m > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([r]) => r);
  const top = ranked.slice(0, TOP_STALL_REASONS);
  const hasOther = ranked.length > top.length;
  const stallGroups = measured.length ? [NO_INSTRUCTION, ...top, ...(hasOther ? [OTHER_STALLS] : [])] : [];
  for (const x of views) {
    const s = x.ok ? x.stallShare : null;
    if (!s) {
      x.stallGroups = stallGroups.map(() => null);
      continue;
    }
    x.stallGroups = stallGroups.map(g => {
      if (g !== OTHER_STALLS) return s[g] ?? 0;
      return Object.entries(s)
        .filter(([r]) => r !== NO_INSTRUCTION && !top.includes(r))
        .reduce((a, [, v]) => a + (Number.isFinite(v) ? v : 0), 0);
    });
    const best = Object.entries(s)
      .filter(([r, v]) => r !== ISSUING && Number.isFinite(v))
      .sort((a, b) => b[1] - a[1])[0];
    x.topStall = best ? { reason: best[0], share: best[1] } : null;
  }
  return stallGroups;
}
