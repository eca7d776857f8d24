// Hand-made bench results (one-loop GPU sweeps, origin 'bench') for the tests of what shows them:
// the CLI table and --json, the hover, the wire and the panel. Rows are named as the bench names
// them ('as-written', '4'); their ids and labels are the sweep's.
import type { RunTiming, SweepResult, SweepVariant } from '../../src/schema/types';
import { pointId, pointLabel } from '../../src/engine/sweep/space';

/** The loop line the hand-made rows set. */
export const BENCH_LOOP = 51;

/** A bench row's sweep id: `as-written`, or `51=4`. */
export function benchId(label: string, line = BENCH_LOOP): string {
  return label === 'as-written' ? 'as-written' : `${line}=${label}`;
}

/** One timed row; `identicalTo` and other fields may be given by bench label through `same`. */
export function benchRow(label: string, over: Partial<SweepVariant> & { same?: string } = {}): SweepVariant {
  const { same, ...rest } = over;
  const factors: Record<string, number | 'default' | 'full'> =
    over.factors ??
    (label === 'as-written' ? {} : { [String(BENCH_LOOP)]: /^\d+$/.test(label) ? Number(label) : (label as 'default' | 'full') });
  const line = Number(Object.keys(factors)[0] ?? BENCH_LOOP);
  return {
    id: pointId({ factors, params: {} }),
    label: pointLabel({ factors, params: {} }),
    factors,
    params: {},
    status: 'ok',
    message: null,
    kernel: '_Z1kPf',
    kernelInstructions: 100,
    kernelBytes: 1600,
    loopInstructions: {},
    effectiveUnroll: {},
    fullyUnrolled: {},
    registers: 32,
    spillStores: 0,
    spillLoads: 0,
    occupancy: null,
    identicalTo: same !== undefined ? benchId(same, line) : null,
    compileMs: null,
    samples: 20,
    medianMs: 0.05,
    q1Ms: 0.0495,
    q3Ms: 0.0505,
    iqrMs: 0.001,
    cv: 0.01,
    speedup: 1,
    withinNoise: true,
    stallShare: { long_scoreboard: 0.5, no_instruction: 0.01 },
    achievedOccupancy: 70,
    executedInstructions: 1000,
    cached: false,
    icache: null,
    ...rest,
  };
}

export const BENCH_TIMING: RunTiming = { wallS: 42.25, compileS: 61.5, checkS: 3.2, profileS: 30, gpuIdleS: 4.5, gpuRuns: 9, gpus: [0, 1] };

/** A finished bench of the loop at BENCH_LOOP with the given rows (default: as-written, 4 same code, 8 cached). */
export function benchResult(over: Partial<SweepResult> = {}): SweepResult {
  const variants = over.variants ?? [
    benchRow('as-written'),
    benchRow('4', { same: 'as-written' }),
    benchRow('8', { cached: true, speedup: 1.2, withinNoise: false }),
  ];
  const factors = variants.filter(v => v.id !== 'as-written').map(v => Object.values(v.factors)[0]);
  return {
    schema: 1,
    file: '/x/k.cu',
    kernel: 'k',
    kernelLine: 40,
    loops: [{ line: BENCH_LOOP, written: 'default', tripCount: 'runtime', pragma: null }],
    arch: 'sm_90',
    nvcc: '13.0',
    gpu: 'NVIDIA H100',
    static: false,
    strategy: 'exhaustive',
    origin: 'bench',
    createdAt: '2026-11-26T00:00:00.000Z',
    factors,
    params: {},
    spaceSize: factors.length,
    evaluations: variants.length,
    baseline: 'as-written',
    best: null,
    bestBasis: null,
    icacheBudgetBytes: 49920,
    icacheBudgetNote: 'measured',
    icacheRule: 'model',
    warpsPerSm: null,
    clockControl: 'base',
    variants,
    notes: [],
    complete: true,
    timing: BENCH_TIMING,
    ...over,
  };
}
