// Counters for every timed kernel with the CUPTI timer (issue 26, `--counters on`): executed
// instructions and achieved occupancy are hardware counters the Activity API does not give, so
// one ncu run per variant profiles one launch of each timed kernel after the warm-up, without
// flushing caches or locking clocks (as the CUPTI timer runs it). The times stay the CUPTI
// timer's; only the counters are taken from ncu, and a failed ncu run leaves them unknown with
// its reason, never the timing failed.
import type { BenchTarget } from '../../gpu/stages/build';
import type { VariantProgram } from '../../gpu/stages/program';
import { TimeOptions, TimeResult, timeVariant } from '../../gpu/stages/time';
import type { KernelProfile } from '../../profile/stalls';

/** What the counters are, in a note saying they are unknown. */
export const COUNTERS = 'executed instructions and achieved occupancy';

/** The counters a CUPTI timing lacks: what ncu adds per kernel (its last launch's profile). */
export interface CountersResult {
  timing: TimeResult;
  /** Why the counters are unknown (no ncu, ncu refused or failed); null when every kernel got them. */
  problem: string | null;
}

/**
 * `timing` (an ok CUPTI timing) with executed instructions and achieved occupancy from one ncu
 * launch per kernel. `o` are the stage's options; ncu runs with samples 1 after the same warm-up.
 */
export async function withCounters(
  timing: TimeResult,
  p: VariantProgram,
  target: BenchTarget,
  o: TimeOptions,
  progress: (m: string) => void,
): Promise<CountersResult> {
  if (!o.toolchain.ncu) return { timing, problem: 'they need Nsight Compute (ncu), which was not found' };
  let counted: TimeResult;
  try {
    // stalls on: PROFILE_METRICS, which hold smsp__inst_executed.sum and the achieved occupancy
    counted = await timeVariant(
      p,
      target,
      { ...o, stalls: true, passes: 'combined', samples: 1, clockControl: 'none', cacheControl: 'none' },
      m => progress(`counters: ${m}`),
    );
  } catch (e) {
    return { timing, problem: `ncu could not count: ${(e as Error).message}` };
  }
  if (counted.status !== 'ok') return { timing, problem: `ncu could not count: ${counted.message ?? counted.status}` };
  const groups = new Map(timing.groups);
  const missing: string[] = [];
  for (const [key, g] of groups) {
    const c = counted.groups.get(key)?.last;
    if (!c || c.executedInstructions === null) {
      missing.push(g.kernel);
      continue;
    }
    const last = g.last ?? c;
    const got = {
      executedInstructions: c.executedInstructions,
      instructionsPerThread: c.instructionsPerThread,
      threadInstructions: c.threadInstructions,
      achievedOccupancy: c.achievedOccupancy,
    };
    groups.set(key, { ...g, last: { ...last, ...got } });
  }
  return {
    timing: { ...timing, groups },
    problem: missing.length ? `ncu gave no counters for ${missing.join(', ')}` : null,
  };
}

/**
 * A launch's counters as a result shows them: executed warp instructions, achieved occupancy, the
 * work per thread and, when the user named how many elements a launch processes (`--elements N`),
 * per element (all threads' instructions ÷ N). Null where ncu did not count.
 */
export function countersOf(
  last: KernelProfile | null | undefined,
  elements: number | undefined,
): {
  executedInstructions: number | null;
  achievedOccupancy: number | null;
  instructionsPerThread: number | null;
  instructionsPerElement?: number | null;
} {
  const counted = {
    executedInstructions: last?.executedInstructions ?? null,
    achievedOccupancy: last?.achievedOccupancy ?? null,
    instructionsPerThread: last?.instructionsPerThread ?? null,
  };
  if (!elements) return counted;
  const total = last?.threadInstructions ?? null;
  return { ...counted, instructionsPerElement: total !== null ? total / elements : null };
}

/** A compared kernel's spill bytes for its row (nothing for a benchmark's instantiations, whose spills the variant has). */
export function spillsOf(t: BenchTarget | null, kernel: string): { spillStores?: number | null; spillLoads?: number | null } {
  const s = t?.spills?.[kernel];
  return s ? { spillStores: s.stores, spillLoads: s.loads } : {};
}
