// What "best" means. On a GPU: the fastest median. Without one: a rule over the SASS that
// prefers what unrolling is for (more work per machine-code iteration) as long as it costs
// nothing measurable statically (spills, a predicted instruction-cache penalty, occupancy).
import type { SweepResult, SweepVariant } from '../../schema/types';
import { modelWarpsPerSm } from '../occupancy/warpsPerSm';
import { calibrationFor, predictIcache } from '../icache/model';
import type { IcachePrediction } from '../icache/types';
import type { IcacheLoopFacts } from '../sass/issueRate';

/** Bytes per SASS instruction on sm_70 and later (when a variant lacks its byte count). */
const BYTES_PER_INSTRUCTION = 16;

/** Lower is better; null for a variant that failed or was not timed. */
export function gpuScore(v: SweepVariant): number | null {
  return v.status === 'ok' && v.medianMs !== null ? v.medianMs : null;
}

/** Product of the loops' effective unroll factors; an unknown factor counts as 1 (no evidence). */
function unrollProduct(v: SweepVariant): number {
  return Object.values(v.effectiveUnroll).reduce<number>((a, u) => a * (u && u > 0 ? u : 1), 1);
}

/** The largest swept loop's machine code, bytes (the hot loop the instruction cache must hold). */
function largestLoopBytes(v: SweepVariant): number | null {
  const sizes = Object.values(v.loopInstructions).filter((n): n is number => n !== null);
  if (!sizes.length) return null;
  const perInstruction = v.kernelBytes && v.kernelInstructions ? v.kernelBytes / v.kernelInstructions : BYTES_PER_INSTRUCTION;
  return Math.max(...sizes) * perInstruction;
}

/**
 * How the static rule judges the instruction cache. With `budgetOverride` (an explicit
 * icacheBudgetBytes) the largest loop must fit that many bytes; otherwise the i-cache model
 * predicts each loop's slowdown, and `icacheBudgetBytes` is only the fallback for variants
 * recorded without the model's facts (results saved before it).
 */
export interface StaticRule {
  arch: string;
  icacheBudgetBytes: number;
  budgetOverride?: boolean;
  /** Resident warps per SM for the model; absent or null: the variant's theoretical occupancy × the arch's maximum. */
  warpsPerSm?: number | null;
}

/**
 * A predicted slowdown above this breaks the i-cache condition. 5%: the same tolerance the
 * recommendation is scored with against the GPU (docs/measurements.md).
 */
export const ICACHE_TOLERANCE = 1.05;

/**
 * The point estimate of a predicted range: its geometric centre. The range is the fit's error
 * spread (2.5th–97.5th percentile, in log space) around the central prediction, so the centre
 * is the model's best guess; `low` would admit variants the model expects to lose time.
 */
export function centralSlowdown(p: IcachePrediction): number {
  const { low, high } = p.predictedSlowdown;
  return Math.sqrt(Math.max(low, 1e-9) * Math.max(high, 1e-9));
}

export interface IcacheJudgement {
  line: string;
  prediction: IcachePrediction;
  /** 1 when the hot code fits the first cache level, else centralSlowdown(prediction). */
  slowdown: number;
}

/** The loop the model predicts slowest (null: no loop has the model's facts). */
export function worstIcache(v: Pick<SweepVariant, 'occupancy' | 'hotCode'>, rule: StaticRule): IcacheJudgement | null {
  let worst: IcacheJudgement | null = null;
  const cal = calibrationFor(rule.arch);
  for (const [line, facts] of Object.entries(v.hotCode ?? {})) {
    if (!facts) continue;
    const prediction = predictIcache(facts as IcacheLoopFacts, modelWarpsPerSm(v.occupancy, rule.arch, rule.warpsPerSm), rule.arch, cal);
    // Code that fits is the reference itself: its range is only the fit's error spread around 1,
    // whose centre need not be 1 (and a refit could move it past the tolerance).
    const slowdown = prediction.fits ? 1 : centralSlowdown(prediction);
    if (!worst || slowdown > worst.slowdown) worst = { line, prediction, slowdown };
  }
  return worst;
}

function breaksIcache(v: SweepVariant, rule: StaticRule): boolean {
  const hasFacts = Object.values(v.hotCode ?? {}).some(f => !!f);
  if (!rule.budgetOverride && hasFacts) return (worstIcache(v, rule)?.slowdown ?? 1) > ICACHE_TOLERANCE;
  const bytes = largestLoopBytes(v);
  return bytes !== null && rule.icacheBudgetBytes > 0 && bytes > rule.icacheBudgetBytes;
}

/** A plain number is the fixed budget alone (callers and recordings from before the model). */
function ruleOf(rule: StaticRule | number): StaticRule {
  return typeof rule === 'number' ? { arch: 'sm_90', icacheBudgetBytes: rule, budgetOverride: true } : rule;
}

/** The static rule a recorded result was (or would be) judged by. */
export function staticRuleOf(r: Pick<SweepResult, 'arch' | 'icacheBudgetBytes' | 'icacheRule' | 'warpsPerSm'>): StaticRule {
  return {
    arch: r.arch,
    icacheBudgetBytes: r.icacheBudgetBytes,
    budgetOverride: r.icacheRule !== 'model',
    warpsPerSm: r.warpsPerSm ?? null,
  };
}

/** Which static conditions a variant breaks (empty: none). */
export function staticViolations(v: SweepVariant, baseline: SweepVariant | null, rule: StaticRule | number): string[] {
  const out: string[] = [];
  if ((v.spillStores ?? 0) > 0 || (v.spillLoads ?? 0) > 0) out.push('spills');
  if (breaksIcache(v, ruleOf(rule))) out.push('i-cache');
  if (v.occupancy !== null && baseline?.occupancy !== null && baseline?.occupancy !== undefined && v.occupancy < baseline.occupancy - 1e-9)
    out.push('occupancy');
  return out;
}

/**
 * Machine instructions per source iteration of the swept loops (summed over them): each loop's hot
 * machine loop per pass over the copies it holds, or, unrolled completely, its instructions over
 * its trip. Null when a loop's is unknown.
 */
export function instructionsPerIteration(v: SweepVariant): number | null {
  let sum = 0;
  for (const [line, unroll] of Object.entries(v.effectiveUnroll)) {
    const perPass = v.hotCode?.[line]?.issue.instructions ?? v.loopInstructions[line] ?? null;
    if (perPass === null || !unroll || unroll <= 0) return null;
    sum += perPass / unroll;
  }
  return Object.keys(v.effectiveUnroll).length ? sum : null;
}

/** Fewer instructions per iteration counts only beyond this factor (scheduling noise of a few %). */
export const PER_ITERATION_TOLERANCE = 1.02;

/**
 * Is more unrolling wasted on `v`: does a less unrolled peer, breaking no more conditions, run a
 * source iteration in fewer machine instructions? Unrolling is worth its code only while it cuts
 * the work per iteration (counter, compare, branch, address arithmetic); past that nvcc's
 * schedule of the longer body can need more (icache_cliff ×64 runs 11.6 instructions per
 * iteration against ×16's 10.2, and is 32% slower with no instruction-cache stalls).
 */
export function unrollWasted(
  v: SweepVariant,
  peers: readonly SweepVariant[],
  baseline: SweepVariant | null,
  rule: StaticRule | number,
): boolean {
  const mine = instructionsPerIteration(v);
  if (mine === null) return false;
  const product = unrollProduct(v);
  const broken = staticViolations(v, baseline, rule).length;
  return peers.some(u => {
    if (u === v || u.status !== 'ok' || unrollProduct(u) >= product) return false;
    const theirs = instructionsPerIteration(u);
    return theirs !== null && theirs * PER_ITERATION_TOLERANCE < mine && staticViolations(u, baseline, rule).length <= broken;
  });
}

// The static rank as one number, lower better, compared lexicographically by construction:
// conditions broken (steps of 2^40), then wasted unrolling (2^39), then more unrolling (2^20
// minus the product, capped), then fewer kernel instructions (a fraction below 1). All terms stay
// exact in a double.
export const VIOLATION = 2 ** 40;
const WASTED = 2 ** 39;
const UNROLL_CAP = 2 ** 20;
const INSTRUCTION_SCALE = 2 ** 32;

/** `peers`: the variants it is ranked among (for wasted unrolling); none given, none judged. */
export function staticScore(
  v: SweepVariant,
  baseline: SweepVariant | null,
  rule: StaticRule | number,
  peers: readonly SweepVariant[] = [],
): number | null {
  if (v.status !== 'ok' || v.kernelInstructions === null) return null;
  const violations = staticViolations(v, baseline, rule).length;
  const wasted = unrollWasted(v, peers, baseline, rule) ? WASTED : 0;
  const product = Math.min(unrollProduct(v), UNROLL_CAP - 1);
  return (
    violations * VIOLATION + wasted + (UNROLL_CAP - product) + Math.min(v.kernelInstructions, INSTRUCTION_SCALE - 1) / INSTRUCTION_SCALE
  );
}

export function staticBasis(rule: StaticRule | number, loops = true): string {
  const r = ruleOf(rule);
  // Without a swept loop nothing is unrolled and no loop's code is cached: the rule comes down to these two.
  if (!loops)
    return "no GPU run: among variants without spills whose theoretical occupancy is not below the file as written's, the fewest kernel instructions (no loop swept)";
  const warps = r.warpsPerSm && r.warpsPerSm > 0 ? `${r.warpsPerSm} warps/SM` : "each variant's theoretical occupancy";
  const icache = r.budgetOverride
    ? `whose largest loop fits the ${r.icacheBudgetBytes}-byte instruction-cache budget`
    : `whose loops the instruction-cache model (${calibrationFor(r.arch).arch} calibration, at ${warps}) predicts at most ` +
      `${Math.round((ICACHE_TOLERANCE - 1) * 100)}% slower than at a size that fits`;
  return (
    `no GPU run: among variants without spills, ${icache} and whose ` +
    "theoretical occupancy is not below the file as written's, the one nvcc unrolled most (product of effective unroll factors) " +
    `unless a less unrolled one runs a source iteration in fewer machine instructions (by over ${Math.round((PER_ITERATION_TOLERANCE - 1) * 100)}%), ` +
    'ties to fewer kernel instructions'
  );
}

/** The best variant by a score (lower better), first on ties; null when none has a score. */
export function bestBy(variants: SweepVariant[], score: (v: SweepVariant) => number | null): SweepVariant | null {
  let best: SweepVariant | null = null;
  let bestScore = Infinity;
  for (const v of variants) {
    const s = score(v);
    if (s !== null && s < bestScore) {
      best = v;
      bestScore = s;
    }
  }
  return best;
}
