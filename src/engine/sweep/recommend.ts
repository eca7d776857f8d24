// Issue 13: the unroll factor the static rule (objective.ts) recommends before any GPU run, for
// one loop's SASS variants (the hover), and how often that recommendation lands within 5% of the
// GPU-measured best on recorded sweeps (docs/measurements.md, test/unit/recommend.test.ts).
import type { SweepResult, SweepVariant } from '../../schema/types';
import { calibrationFor } from '../icache/model';
import { theoreticalOccupancy } from '../occupancy/limits';
import type { LoopVariant } from '../variants/reports';
import type { UnrollFactor } from '../variants/factors';
import { bestBy, ICACHE_TOLERANCE, StaticRule, staticRuleOf, staticScore, staticViolations } from './objective';
import { modelWarpsPerSm } from '../occupancy/warpsPerSm';
import { AS_WRITTEN_ID } from './space';
import { sweepVariantOfLoop } from './loopVariantsResult';

/** A hit: the recommended variant's median is within this factor of the best median. */
const HIT_TOLERANCE = 1.05;

export interface FactorRecommendation {
  factor: UnrollFactor;
  /** "most unrolled without a predicted i-cache penalty, spills or occupancy loss (sm_90 model, 4 warps/SM)" */
  reason: string;
  /** Conditions the recommended variant still breaks (every variant broke one): empty normally. */
  violations: string[];
}

/** Block size for the occupancy estimate when the launch is unknown (the static runner's default). */
const DEFAULT_BLOCK_SIZE = 256;

/** One loop's SASS variant as a one-loop sweep variant, so the sweep's static rule judges it. */
function asSweepVariant(lv: LoopVariant, line: string, arch: string, blockSize: number): SweepVariant {
  const v = sweepVariantOfLoop(lv, line, lv.status === 'ok' ? 'ok' : 'compile');
  // A LoopVariant carries registers but no occupancy: estimate it from them (shared memory does not
  // change with the unroll factor, so leaving it out keeps the comparison between variants fair).
  const occ =
    lv.registers !== null
      ? theoreticalOccupancy({ registersPerThread: lv.registers, sharedBytesPerBlock: 0, threadsPerBlock: blockSize, arch })
      : null;
  v.occupancy = occ?.occupancy ?? null;
  return v;
}

/**
 * The factor the static rule picks among one loop's SASS variants (inspectVariants), before any
 * GPU run: no spills, no predicted i-cache penalty, no occupancy loss against the loop as
 * written, then the most unrolled, then fewer instructions. `warpsPerSm` null: each variant's
 * theoretical occupancy at `blockSize` threads. Null when no variant built.
 */
export function recommendFactor(
  variants: LoopVariant[],
  warpsPerSm: number | null,
  arch: string,
  opts: { written?: UnrollFactor; blockSize?: number } = {},
): FactorRecommendation | null {
  const line = 'loop';
  const sweepVariants = variants.map(lv => asSweepVariant(lv, line, arch, opts.blockSize ?? DEFAULT_BLOCK_SIZE));
  const writtenIndex = variants.findIndex(v => String(v.factor) === String(opts.written ?? 'default'));
  const baseline = sweepVariants[writtenIndex >= 0 ? writtenIndex : 0] ?? null;
  const rule: StaticRule = { arch, icacheBudgetBytes: 0, warpsPerSm };
  const best = bestBy(sweepVariants, v => staticScore(v, baseline, rule, sweepVariants));
  if (!best) return null;
  const factor = variants[sweepVariants.indexOf(best)].factor;
  const violations = staticViolations(best, baseline, rule);
  const model = `${calibrationFor(arch).arch} model, ${modelWarpsPerSm(best.occupancy, rule.arch, rule.warpsPerSm)} warps/SM${warpsPerSm ? '' : ' at theoretical occupancy'}`;
  const reason = violations.length
    ? `every variant breaks a condition; this one only ${violations.join(' and ')} (${model})`
    : `most unrolled without a predicted i-cache penalty (over ${Math.round((ICACHE_TOLERANCE - 1) * 100)}%), spills or occupancy loss, ` +
      `and no less unrolled variant runs an iteration in fewer instructions (${model})`;
  return { factor, reason, violations };
}

/** The GPU side of a recorded sweep: what `sweep --json` keeps (ids and medians). */
export interface MeasuredVariants {
  variants: { id: string; status: string; medianMs: number | null }[];
}

interface RecommendationScore {
  /** Id of the variant the static rule recommends (`72=16`, `as-written`). */
  recommended: string;
  /** Id of the fastest measured variant. */
  gpuBest: string;
  recommendedMs: number;
  bestMs: number;
  /** recommendedMs / bestMs (1: the recommendation is the fastest). */
  ratio: number;
  hit: boolean;
}

/**
 * Scores the static recommendation of a recorded sweep against its GPU measurements: the static
 * rule runs over `staticResult` (the SASS facts of the same points, rebuilt with --static), its
 * pick is looked up among the measured variants by id. Null when the pick was not measured.
 */
function scoreRecommendation(
  staticResult: SweepResult,
  measured: MeasuredVariants,
  rule: StaticRule = staticRuleOf(staticResult),
): RecommendationScore | null {
  const baseline = staticResult.variants.find(v => v.id === (staticResult.baseline || AS_WRITTEN_ID)) ?? null;
  const pick = bestBy(staticResult.variants, v => staticScore(v, baseline, rule, staticResult.variants));
  const ok = measured.variants.filter(v => v.status === 'ok' && v.medianMs !== null);
  const fastest = ok.reduce<(typeof ok)[number] | null>((a, v) => (!a || v.medianMs! < a.medianMs! ? v : a), null);
  const mine = pick ? ok.find(v => v.id === pick.id) : undefined;
  if (!pick || !fastest || !mine) return null;
  const ratio = mine.medianMs! / fastest.medianMs!;
  return {
    recommended: pick.id,
    gpuBest: fastest.id,
    recommendedMs: mine.medianMs!,
    bestMs: fastest.medianMs!,
    ratio,
    hit: ratio <= HIT_TOLERANCE,
  };
}

/** One row of the hit-rate table (docs/measurements.md). */
export interface RecommendationRow extends RecommendationScore {
  /** Recorded sweep's name (the fixture's file name). */
  name: string;
  sample: string;
  kernel: string;
  /** Swept loop lines, `70,74`. */
  loops: string;
}

/** The hit-rate table's row for one recorded sweep (null when its recommendation was not measured). */
export function recommendationRow(
  name: string,
  staticResult: SweepResult,
  measured: MeasuredVariants,
  rule?: StaticRule,
): RecommendationRow | null {
  const s = scoreRecommendation(staticResult, measured, rule);
  if (!s) return null;
  const sample = staticResult.file.split(/[\\/]/).pop() ?? staticResult.file;
  return { name, sample, kernel: staticResult.kernel, loops: staticResult.loops.map(l => l.line).join(','), ...s };
}

/** A row as the docs' table shows it: sample | loop | recommended | GPU best | recommended vs best | hit. */
export function recommendationTableRow(r: RecommendationRow): string {
  const pct = `${r.ratio >= 1 ? '+' : ''}${((r.ratio - 1) * 100).toFixed(1)}%`;
  const id = (s: string) => `\`${s.replace(/\|/g, '\\|')}\``; // `|` would end the table cell
  return `| ${r.sample} | ${r.kernel} L${r.loops} | ${id(r.recommended)} | ${id(r.gpuBest)} | ${pct} | ${r.hit ? 'yes' : 'no'} |`;
}
