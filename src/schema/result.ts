// The shape and ranges of a SweepResult (a saved result file, a result the panel shows or sends
// back): every field, every number in its range. Used by the server when it loads or exports a
// result, by the extension before it shows a restored panel, by the webview for every message,
// and by Apply. A result with any impossible number is rejected as a whole, naming the field and
// the value: a forged median or an unroll factor of -4 is never shown, let alone written.
import type {
  IcacheAttribution,
  InstantiationTiming,
  MeasurementConditions,
  MeasuredOn,
  SassInstructionStalls,
  SassStalls,
  RunTiming,
  SourceLineStalls,
  SweepConfidence,
  SweepIcacheFacts,
  SweepLoop,
  SweepResult,
  SweepVariant,
  VariantIcache,
} from './types';
import {
  array,
  bool,
  Check,
  either,
  factor,
  factorIn,
  nullable,
  num,
  object,
  oneOf,
  optional,
  record,
  SchemaError,
  str,
  withDefault,
} from './check';
import { RANGES } from './ranges';

export { SchemaError };

/** Why `k` is not a loop line as results key them ("40"), or null. */
function lineKeyProblem(k: string): string | null {
  return /^[1-9]\d*$/.test(k) && Number(k) <= RANGES.sourceLine.max
    ? null
    : `expected a source line from 1 to ${RANGES.sourceLine.max} as the key, got "${k.slice(0, 40)}"`;
}

const line = num(RANGES.sourceLine);
const count = num(RANGES.count);
const ms = num(RANGES.durationMs);
const perLoop = <T>(c: Check<T>) => record(c, lineKeyProblem);
const strings = array(str);

const tripCount = nullable(
  either<number, 'runtime' | 'dependent'>(
    count,
    oneOf(['runtime', 'dependent'] as const),
    'a trip count (an integer ≥ 0), runtime, dependent or null',
  ),
);

const loop = object<SweepLoop>({ line, written: factorIn(RANGES.writtenUnrollFactor), tripCount, pragma: nullable(str) });

const hotCode = object<SweepIcacheFacts>({
  bytes: num(RANGES.bytes),
  issue: object<SweepIcacheFacts['issue']>({
    instructions: num(RANGES.instructions),
    latencyCycles: num(RANGES.cycles),
    pipes: record(num(RANGES.cycles)),
    mainOpcode: str,
    chains: count,
    loads: count,
  }),
});

const attribution = object<IcacheAttribution>({
  cause: oneOf(['icache', 'other', 'none'] as const),
  why: str,
  topStall: nullable(object<{ reason: string; share: number }>({ reason: str, share: num(RANGES.share) })),
});

const icache = object<VariantIcache>({
  bytes: nullable(num(RANGES.bytes)),
  predicted: nullable(object<{ low: number; high: number }>({ low: num(RANGES.ratio), high: num(RANGES.ratio) })),
  fits: nullable(bool),
  warpsPerSm: nullable(num(RANGES.warpsPerSm)),
  warpsSource: nullable(oneOf(['achieved', 'theoretical'] as const)),
  shape: nullable(str),
  basis: str,
  reference: nullable(str),
  measured: nullable(
    object<NonNullable<VariantIcache['measured']>>({
      slowdown: num(RANGES.ratio),
      noInstruction: nullable(num(RANGES.share)),
      attribution: optional(attribution),
    }),
  ),
  shown: oneOf(['measured', 'predicted', 'not-icache'] as const),
});

const instantiationTiming = object<InstantiationTiming>({
  kernel: str,
  blockSize: nullable(str),
  kernelInstructions: nullable(num(RANGES.instructions)),
  registers: nullable(num(RANGES.registers)),
  samples: count,
  medianMs: nullable(ms),
  q1Ms: nullable(ms),
  q3Ms: nullable(ms),
  iqrMs: nullable(num(RANGES.spreadMs)),
  cv: nullable(num(RANGES.cv)),
  speedup: nullable(num(RANGES.ratio)),
  withinNoise: nullable(bool),
  stallShare: nullable(record(num(RANGES.share))),
  achievedOccupancy: nullable(num(RANGES.percent)),
  executedInstructions: nullable(num(RANGES.executedInstructions)),
  instructionsPerThread: optional(nullable(num(RANGES.instructionsPerThread))),
  instructionsPerElement: optional(nullable(num(RANGES.instructionsPerThread))),
  spillStores: optional(nullable(num(RANGES.bytes))),
  spillLoads: optional(nullable(num(RANGES.bytes))),
});

const sassStalls = object<SassStalls>({
  kernel: str,
  factor: nullable(str),
  totalSamples: count,
  instructions: array(object<SassInstructionStalls>({ offset: num(RANGES.bytes), text: str, samples: count, stalls: record(count) })),
});

/** A clock in MHz: 0 to 100 GHz (nvidia-smi prints what the GPU reports). */
const mhz = nullable(num({ what: 'a clock in MHz', integer: false, min: 0, max: 100_000 }));

const measuredOn = object<MeasuredOn>({
  host: str,
  gpu: nullable(str),
  clocks: nullable(object<NonNullable<MeasuredOn['clocks']>>({ smMHz: mhz, memMHz: mhz, maxSmMHz: mhz, maxMemMHz: mhz })),
  job: nullable(str),
});

const variant = object<SweepVariant>({
  id: str,
  label: str,
  factors: perLoop(factor),
  params: record(str),
  status: oneOf(['ok', 'compile', 'runtime', 'timeout', 'correctness', 'profile', 'cancelled', 'pending'] as const),
  message: nullable(str),
  kernel: nullable(str),
  instantiation: optional(nullable(str)),
  kernelInstructions: nullable(num(RANGES.instructions)),
  kernelBytes: nullable(num(RANGES.bytes)),
  loopInstructions: perLoop(nullable(num(RANGES.instructions))),
  effectiveUnroll: perLoop(nullable(num(RANGES.observedUnroll))),
  fullyUnrolled: perLoop(bool),
  registers: nullable(num(RANGES.registers)),
  spillStores: nullable(num(RANGES.spills)),
  spillLoads: nullable(num(RANGES.spills)),
  occupancy: nullable(num(RANGES.occupancy)),
  hotCode: optional(perLoop(nullable(hotCode))),
  identicalTo: nullable(str),
  compileMs: nullable(num(RANGES.elapsedMs)),
  samples: count,
  medianMs: nullable(ms),
  q1Ms: nullable(ms),
  q3Ms: nullable(ms),
  iqrMs: nullable(num(RANGES.spreadMs)),
  cv: nullable(num(RANGES.cv)),
  speedup: nullable(num(RANGES.ratio)),
  withinNoise: nullable(bool),
  stallShare: nullable(record(num(RANGES.share))),
  achievedOccupancy: nullable(num(RANGES.percent)),
  icache: optional(nullable(icache)),
  executedInstructions: optional(nullable(num(RANGES.executedInstructions))),
  instructionsPerThread: optional(nullable(num(RANGES.instructionsPerThread))),
  instructionsPerElement: optional(nullable(num(RANGES.instructionsPerThread))),
  cached: optional(bool),
  measuredOn: optional(measuredOn),
  durationsMs: optional(array(ms)),
  instantiations: optional(array(instantiationTiming)),
});

const ratio = num(RANGES.ratio);
const share = num(RANGES.share);

const confidence = object<SweepConfidence>({
  method: oneOf(['bootstrap'] as const),
  resamples: count,
  seed: count,
  level: share,
  best: str,
  ratio: nullable(ratio),
  ratioLow: nullable(ratio),
  ratioHigh: nullable(ratio),
  minGain: share,
  distinguishable: bool,
  reason: str,
  contenders: strings,
  pFirst: share,
  runnerUp: nullable(str),
  leadRatio: nullable(ratio),
  leadLow: nullable(ratio),
  leadHigh: nullable(ratio),
  sampling: optional(
    object<NonNullable<SweepConfidence['sampling']>>({
      minSamples: count,
      maxSamples: count,
      rounds: count,
      stopped: oneOf(['leader certain', 'max samples reached', 'no new samples', 'cancelled'] as const),
    }),
  ),
});

const timing = object<RunTiming>({
  wallS: num(RANGES.seconds),
  compileS: num(RANGES.seconds),
  checkS: num(RANGES.seconds),
  profileS: num(RANGES.seconds),
  gpuIdleS: num(RANGES.seconds),
  gpuRuns: count,
  gpus: array(nullable(num(RANGES.gpuIndex))),
  slurm: optional(
    object<NonNullable<RunTiming['slurm']>>({
      tasks: count,
      reported: count,
      queueS: nullable(num(RANGES.seconds)),
      taskS: nullable(num(RANGES.seconds)),
    }),
  ),
});

const sourceLine = object<SourceLineStalls>({
  line,
  samples: count,
  stallShare: record(num(RANGES.share)),
});

const sweepResult = object<SweepResult>({
  schema: (v, path) => {
    if (v !== 1)
      throw new SchemaError(
        path,
        v === undefined ? 'missing: not an Unroll Lens result' : `${JSON.stringify(v)} is not supported (this version reads 1)`,
      );
    return 1;
  },
  file: str,
  // Apply compares it with the open document's text: a forged one only makes Apply refuse.
  sourceSha256: optional(str),
  kernel: str,
  kernelLine: line,
  loops: array(loop),
  arch: str,
  nvcc: nullable(str),
  gpu: nullable(str),
  static: bool,
  strategy: str,
  origin: oneOf(['sweep', 'variants', 'bench', 'compare'] as const),
  createdAt: str,
  factors: array(factor),
  params: record(strings),
  spaceSize: count,
  evaluations: count,
  baseline: str,
  best: nullable(str),
  bestBasis: nullable(str),
  icacheBudgetBytes: num(RANGES.bytes),
  icacheBudgetNote: str,
  icacheRule: optional(oneOf(['model', 'budget'] as const)),
  warpsPerSm: optional(nullable(num(RANGES.warpsPerSm))),
  variants: array(variant),
  notes: strings,
  // Results saved before `complete` was recorded were all finished ones.
  complete: withDefault(bool, true),
  timing: optional(timing),
  lineStalls: optional(nullable(array(sourceLine))),
  lineStallsProblem: optional(nullable(str)),
  lineStallsSource: optional(oneOf(['pc-sampling', 'ncu'] as const)),
  sassStalls: optional(nullable(sassStalls)),
  clockControl: optional(oneOf(['base', 'none'] as const)),
  measurement: optional(
    object<MeasurementConditions>({
      tool: oneOf(['ncu', 'cupti'] as const),
      clocks: oneOf(['base', 'as-is'] as const),
      caches: oneOf(['flushed', 'warm'] as const),
      duration: optional(oneOf(['gpu-time', 'kernel-record', 'mixed'] as const)),
    }),
  ),
  demangled: optional(record(str)),
  compareBaseline: optional(nullable(str)),
  compareLines: optional(record(line)),
  // Results saved before issue 25 have none: Apply best is offered as it was then.
  confidence: optional(confidence),
});

/**
 * The result in `value` (parsed JSON or a message), checked field by field: a copy holding only
 * the fields of SweepResult, every number in its range. Throws SchemaError naming the first field
 * that is missing, of the wrong type or out of range, and its value.
 */
export function checkSweepResult(value: unknown): SweepResult {
  return sweepResult(value, '');
}

/** Like checkSweepResult, without throwing: the result, or the problem. */
export function sweepResultProblem(value: unknown): { result: SweepResult } | { problem: string; field: string } {
  try {
    return { result: checkSweepResult(value) };
  } catch (e) {
    if (e instanceof SchemaError) return { problem: e.message, field: e.field };
    throw e;
  }
}

/**
 * The factors Apply receives (loop line → factor), checked: a variant's factors (at most 4096) or
 * the loops as written (what nvcc honours), so every factor in nvcc's range. Throws SchemaError.
 */
export function checkAppliedFactors(value: unknown): Record<string, SweepVariant['factors'][string]> {
  return perLoop(factorIn(RANGES.writtenUnrollFactor))(value, 'factors');
}
