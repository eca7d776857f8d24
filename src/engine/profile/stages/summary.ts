// Stage 5, summarise: statistics of the timed launches, speedups against the baseline (the
// first variant) and one table per instantiation.
import type { VariantRun } from '../types';
import type { LoopVariant } from '../../variants/reports';
import type { KernelSamples } from './time';

function quantile(sorted: number[], q: number): number {
  if (!sorted.length) return NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

export function summarize(durationsMs: number[]): Pick<VariantRun, 'medianMs' | 'iqrMs' | 'q1Ms' | 'q3Ms' | 'cv' | 'samples'> {
  const s = [...durationsMs].sort((a, b) => a - b);
  if (!s.length) return { medianMs: null, iqrMs: null, q1Ms: null, q3Ms: null, cv: null, samples: 0 };
  const mean = s.reduce((a, b) => a + b, 0) / s.length;
  const sd = Math.sqrt(s.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, s.length - 1));
  const q1 = quantile(s, 0.25);
  const q3 = quantile(s, 0.75);
  return { medianMs: quantile(s, 0.5), q1Ms: q1, q3Ms: q3, iqrMs: q3 - q1, cv: mean > 0 ? sd / mean : null, samples: s.length };
}

/**
 * Run-to-run drift of one program's median on one GPU, as a share of the median (issue 22). The
 * same machine code timed in separate runs on the recorded H100 (test/fixtures/gpu/h100: cli/,
 * bench-gpu/, bench-gpu-final/, cache-check/ of matmul_basic; icache-ilp-bench/ vs recommend/ of
 * icache_ilp; sweep/matvec_coordinate vs matvec_exhaustive) spreads by up to 1.9 % (matmul_basic ×4,
 * 59.34–60.48 µs), and the identical cubins measured 28.7 vs 29.5 µs (2.8 %): 3 %.
 * Each run's IQR only shows the noise within that run; this term covers the drift between runs.
 */
export const RUN_DRIFT = 0.03;

type Timed = Pick<VariantRun, 'q1Ms' | 'q3Ms' | 'medianMs'>;

/**
 * Whether two timings are within noise: the same machine code always is (the same program cannot
 * differ); otherwise their interquartile ranges overlap once the gap between them is allowed
 * RUN_DRIFT of the larger median. Null without quartiles.
 */
export function withinNoise(a: Timed, b: Timed, sameCode = false): boolean | null {
  if (sameCode) return true;
  if (a.q1Ms === null || a.q3Ms === null || b.q1Ms === null || b.q3Ms === null) return null;
  const drift = RUN_DRIFT * Math.max(a.medianMs ?? 0, b.medianMs ?? 0);
  return a.q1Ms - drift <= b.q3Ms && b.q1Ms - drift <= a.q3Ms;
}

/** The interquartile ranges overlap (no drift term; withinNoise is the noise model). */
export function iqrOverlap(a: Pick<VariantRun, 'q1Ms' | 'q3Ms'>, b: Pick<VariantRun, 'q1Ms' | 'q3Ms'>): boolean | null {
  if (a.q1Ms === null || a.q3Ms === null || b.q1Ms === null || b.q3Ms === null) return null;
  return a.q1Ms <= b.q3Ms && b.q1Ms <= a.q3Ms;
}

/** A variant's row once timed: the durations, statistics and last profile of `kernel` (else of the first group). */
export function summariseVariant(run: VariantRun, groups: Map<string, KernelSamples>, kernel: string): VariantRun {
  const out: VariantRun = { ...run };
  const primary = groups.get(kernel) ?? [...groups.values()][0];
  if (primary) {
    out.durationsMs = primary.durations;
    const last = primary.last;
    if (last) {
      out.stalls = last.stalls;
      out.stallShare = last.stallShare;
      out.executedInstructions = last.executedInstructions;
      out.achievedOccupancy = last.achievedOccupancy;
      out.registers = last.registers ?? out.registers;
    }
  }
  return Object.assign(out, summarize(out.durationsMs));
}

/**
 * Speedup against the first row for every row timed: first median / this median, and whether it
 * is within noise (withinNoise). `sameCode(i)`: row i has the first row's machine code (by default
 * when it carries the first row's measurement, `identicalTo`).
 */
export function withSpeedups(list: VariantRun[], sameCode?: (i: number) => boolean): VariantRun[] {
  const base = list[0];
  const same = sameCode ?? ((i: number) => list[i].identicalTo !== null && list[i].identicalTo === base.label);
  return list.map((r, i) => {
    if (r.medianMs === null || base.medianMs === null || r.status !== 'ok') return r;
    return { ...r, speedup: base.medianMs / r.medianMs, withinNoise: i === 0 ? true : withinNoise(r, base, same(i)) };
  });
}

/**
 * One table per instantiation (and per block size when a kernel runs with several), from each
 * variant's time-stage groups (`groups[i]`, missing for a variant that was not timed).
 */
export function instantiationTables(
  runs: VariantRun[],
  groups: (Map<string, KernelSamples> | undefined)[],
  sass: (LoopVariant | undefined)[],
  kernel: string,
): { kernel: string; blockSize: string | null; variants: VariantRun[] }[] {
  const keys = [...new Set(groups.flatMap(g => (g ? [...g.keys()] : [])))];
  return keys.map(key => {
    const any = groups.find(g => g?.has(key))!.get(key)!;
    const variants = runs.map((r, i) => {
      const g = groups[i]?.get(key);
      const v: VariantRun = {
        ...r,
        kernel: any.kernel,
        durationsMs: g?.durations ?? [],
        stalls: g?.last?.stalls ?? null,
        stallShare: g?.last?.stallShare ?? null,
        executedInstructions: g?.last?.executedInstructions ?? null,
        achievedOccupancy: g?.last?.achievedOccupancy ?? null,
        registers: g?.last?.registers ?? r.registers,
        kernelInstructions: sass[i]?.kernelSizes?.[any.kernel] ?? (any.kernel === kernel ? r.kernelInstructions : null),
        speedup: null,
        withinNoise: null,
      };
      return Object.assign(v, summarize(v.durationsMs));
    });
    return { kernel: any.kernel, blockSize: any.blockSize, variants: withSpeedups(variants) };
  });
}
