// What "best" means. On a GPU: the fastest median. Without one: a rule over the SASS that
// prefers what unrolling is for (more work per machine-code iteration) as long as it costs
// nothing measurable statically (spills, instruction-cache overflow, occupancy).
import type { SweepVariant } from '../../protocol';

/** Bytes per SASS instruction on sm_70 and later (when a variant lacks its byte count). */
const BYTES_PER_INSTRUCTION = 16;

/** Lower is better; null for a variant that failed or was not timed. */
export function gpuScore(v: SweepVariant): number | null {
  return v.status === 'ok' && v.medianMs !== null ? v.medianMs : null;
}

/** Product of the loops' effective unroll factors; an unknown factor counts as 1 (no evidence). */
export function unrollProduct(v: SweepVariant): number {
  return Object.values(v.effectiveUnroll).reduce<number>((a, u) => a * (u && u > 0 ? u : 1), 1);
}

/** The largest swept loop's machine code, bytes (the hot loop the instruction cache must hold). */
export function largestLoopBytes(v: SweepVariant): number | null {
  const sizes = Object.values(v.loopInstructions).filter((n): n is number => n !== null);
  if (!sizes.length) return null;
  const perInstruction = v.kernelBytes && v.kernelInstructions ? v.kernelBytes / v.kernelInstructions : BYTES_PER_INSTRUCTION;
  return Math.max(...sizes) * perInstruction;
}

/** Which static conditions a variant breaks (empty: none). */
export function staticViolations(v: SweepVariant, baseline: SweepVariant | null, icacheBudgetBytes: number): string[] {
  const out: string[] = [];
  if ((v.spillStores ?? 0) > 0 || (v.spillLoads ?? 0) > 0) out.push('spills');
  const bytes = largestLoopBytes(v);
  if (bytes !== null && icacheBudgetBytes > 0 && bytes > icacheBudgetBytes) out.push('i-cache');
  if (v.occupancy !== null && baseline?.occupancy !== null && baseline?.occupancy !== undefined && v.occupancy < baseline.occupancy - 1e-9)
    out.push('occupancy');
  return out;
}

// The static rank as one number, lower better, compared lexicographically by construction:
// conditions broken (steps of 2^40), then more unrolling (2^20 minus the product, capped), then
// fewer kernel instructions (a fraction below 1). All terms stay exact in a double.
const VIOLATION = 2 ** 40;
const UNROLL_CAP = 2 ** 20;
const INSTRUCTION_SCALE = 2 ** 32;

export function staticScore(v: SweepVariant, baseline: SweepVariant | null, icacheBudgetBytes: number): number | null {
  if (v.status !== 'ok' || v.kernelInstructions === null) return null;
  const violations = staticViolations(v, baseline, icacheBudgetBytes).length;
  const product = Math.min(unrollProduct(v), UNROLL_CAP - 1);
  return violations * VIOLATION + (UNROLL_CAP - product) + Math.min(v.kernelInstructions, INSTRUCTION_SCALE - 1) / INSTRUCTION_SCALE;
}

export function staticBasis(icacheBudgetBytes: number): string {
  return (
    `no GPU run: among variants without spills, whose largest loop fits the ${icacheBudgetBytes}-byte instruction-cache budget and whose ` +
    "theoretical occupancy is not below the file as written's, the one nvcc unrolled most (product of effective unroll factors), " +
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
