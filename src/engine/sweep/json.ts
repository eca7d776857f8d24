// The `unroll-lens sweep --json` contract (docs/cli.md): a compact view of a SweepResult.
import type {
  MeasuredOn,
  SourceLineStalls,
  FactorValue,
  MeasurementConditions,
  RunTiming,
  SweepConfidence,
  SweepIcacheFacts,
  SweepResult,
  SweepVariant,
  VariantIcache,
} from '../../schema/types';
import { AS_WRITTEN_ID } from './space';

interface SweepJsonVariant {
  /** Loop line → "default", "full" or an integer. */
  factors: Record<string, FactorValue>;
  params: Record<string, string>;
  status: SweepVariant['status'];
  kernelInstructions: number | null;
  loopInstructions: Record<string, number | null>;
  registers: number | null;
  /**
   * The variant with the same machine code: its factor value in a one-loop sweep ("as-written"
   * for the file as written), its factors object in a multi-loop sweep, and { factors, params }
   * when the sweep has parameters.
   */
  identicalTo:
    | FactorValue
    | 'as-written'
    | Record<string, FactorValue>
    | { factors: Record<string, FactorValue>; params: Record<string, string> }
    | null;
  /** Kernel durations timed (0 statically; adaptive sampling gives the leading variants more). */
  samples: number;
  medianMs: number | null;
  iqrMs: number | null;
  speedup: number | null;
  stallShare: Record<string, number> | null;
  effectiveUnroll: Record<string, number | null>;
  occupancy: number | null;
  withinNoise: boolean | null;
  id: string;
  /** The instantiation measured, demangled (`void k<64>(float*)`); null when nothing was measured. */
  instantiation: string | null;
  message?: string;
  /** Warp instructions one launch executed (ncu smsp__inst_executed.sum); absent when not measured (CUPTI timer, static). */
  executedInstructions?: number;
  /** Instructions one thread executed on average (ncu); absent when not measured. */
  instructionsPerThread?: number;
  /** All threads' instructions ÷ --elements; absent when not named or not measured. */
  instructionsPerElement?: number;
  /** Achieved occupancy, % of peak (ncu); absent when not measured. */
  achievedOccupancy?: number;
  /** Per loop line: the hot machine code the i-cache model reads (absent when no loop has it). */
  hotCode?: Record<string, SweepIcacheFacts | null>;
  /** The i-cache entry of the variant's largest swept loop, measured or predicted (bench's `icache`). */
  icache?: VariantIcache | null;
  /** Where a Slurm sweep measured it: node, GPU model, clocks, job task (issue 28). */
  measuredOn?: MeasuredOn;
}

export interface SweepJson {
  kernel: string;
  static: boolean;
  variants: SweepJsonVariant[];
  best: SweepJsonVariant | null;
  evaluations: number;
  spaceSize: number;
  strategy: string;
  complete: boolean;
  /** What the run cost (docs/cli.md): wall, compile, check, profile and GPU idle seconds, GPU runs, GPUs. */
  timing?: RunTiming;
  /** GPU sweeps: the tool (ncu or the CUPTI timer), the clocks and the caches the times were taken with. */
  measurement?: MeasurementConditions;
  /** --source-stalls: warp stalls per source line of the file as written (bench --json's lineStalls, same shape). */
  lineStalls?: SourceLineStalls[];
  lineStallsProblem?: string;
  /** Where lineStalls came from: the CUPTI timer's PC samples of the timed run, or an ncu run. */
  lineStallsSource?: 'pc-sampling' | 'ncu';
  /** GPU sweeps: how sure the timings are of `best`, and whether Apply best is offered (SweepResult.confidence). */
  confidence?: SweepConfidence;
}

export function sweepJson(r: SweepResult): SweepJson {
  const byId = new Map(r.variants.map(v => [v.id, v]));
  const oneLoop = r.loops.length === 1 && !Object.keys(r.params).length;
  const hasParams = Object.keys(r.params).length > 0;
  const ref = (id: string): SweepJsonVariant['identicalTo'] => {
    const t = byId.get(id);
    if (!t) return null;
    if (oneLoop) return id === AS_WRITTEN_ID ? 'as-written' : Object.values(t.factors)[0];
    return hasParams ? { factors: t.factors, params: t.params } : t.factors;
  };
  const view = (v: SweepVariant): SweepJsonVariant => ({
    factors: v.factors,
    params: v.params,
    status: v.status,
    kernelInstructions: v.kernelInstructions,
    loopInstructions: v.loopInstructions,
    registers: v.registers,
    identicalTo: v.identicalTo ? ref(v.identicalTo) : null,
    samples: v.samples,
    medianMs: v.medianMs,
    iqrMs: v.iqrMs,
    speedup: v.speedup,
    stallShare: v.stallShare,
    effectiveUnroll: v.effectiveUnroll,
    occupancy: v.occupancy,
    withinNoise: v.withinNoise,
    id: v.id,
    instantiation: v.instantiation ?? null,
    ...(v.message ? { message: v.message } : {}),
    ...(v.executedInstructions != null ? { executedInstructions: v.executedInstructions } : {}),
    ...(v.instructionsPerThread != null ? { instructionsPerThread: v.instructionsPerThread } : {}),
    ...(v.instructionsPerElement != null ? { instructionsPerElement: v.instructionsPerElement } : {}),
    ...(v.achievedOccupancy != null ? { achievedOccupancy: v.achievedOccupancy } : {}),
    ...(v.hotCode && Object.values(v.hotCode).some(f => f) ? { hotCode: v.hotCode } : {}),
    ...(v.icache ? { icache: v.icache } : {}),
    ...(v.measuredOn ? { measuredOn: v.measuredOn } : {}),
  });
  const best = r.best ? byId.get(r.best) : undefined;
  return {
    kernel: r.kernel,
    static: r.static,
    variants: r.variants.map(view),
    best: best ? view(best) : null,
    evaluations: r.evaluations,
    spaceSize: r.spaceSize,
    strategy: r.strategy,
    complete: r.complete,
    ...(r.timing ? { timing: r.timing } : {}),
    // what measured, the clocks and the caches (GPU sweeps)
    ...(r.measurement ? { measurement: r.measurement } : {}),
    ...(r.lineStalls ? { lineStalls: r.lineStalls } : {}),
    ...(r.lineStallsProblem ? { lineStallsProblem: r.lineStallsProblem } : {}),
    ...(r.lineStalls && r.lineStallsSource ? { lineStallsSource: r.lineStallsSource } : {}),
    ...(r.confidence ? { confidence: r.confidence } : {}),
  };
}
