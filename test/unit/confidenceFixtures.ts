// Hand-made GPU results for the confidence and Apply-best tests (issue 25): variants of one loop
// (line 2) with their kernel durations, the file as written among them.
import { summarize } from '../../src/engine/gpu/stages/summary';
import { emptyVariant } from '../../src/engine/sweep/variant';
import { AS_WRITTEN } from '../../src/engine/sweep/space';
import type { SweepResult, SweepVariant } from '../../src/schema/types';

/** A timed variant of loop 2 (`factor`: 'as-written' for the file as written), or another program copying `identicalTo`. */
export function timedVariant(factor: number | 'as-written', durationsMs: number[], identicalTo: string | null = null): SweepVariant {
  const v = emptyVariant(factor === 'as-written' ? AS_WRITTEN : { factors: { 2: factor }, params: {} }, 'ok');
  return { ...v, ...summarize(durationsMs), durationsMs, identicalTo };
}

/** A GPU result of these variants, `best` the fastest median unless given. */
export function gpuResult(variants: SweepVariant[], best?: string): SweepResult {
  const fastest = variants.reduce((a, v) => (v.medianMs! < a.medianMs! ? v : a));
  return {
    schema: 1,
    file: '/tmp/k.cu',
    kernel: 'k',
    kernelLine: 1,
    loops: [{ line: 2, written: 'default', tripCount: 'runtime', pragma: null }],
    arch: 'sm_90',
    nvcc: '13.0',
    gpu: 'NVIDIA H100 80GB HBM3',
    static: false,
    strategy: 'exhaustive',
    origin: 'sweep',
    createdAt: '2025-01-01T00:00:00.000Z',
    factors: [1, 4],
    params: {},
    spaceSize: 2,
    evaluations: variants.length,
    baseline: 'as-written',
    best: best ?? fastest.id,
    bestBasis: 'fastest median kernel time',
    icacheBudgetBytes: 131072,
    icacheBudgetNote: 'test',
    variants,
    notes: [],
    complete: true,
  };
}
