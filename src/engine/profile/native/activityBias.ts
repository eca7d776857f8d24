// What the CUPTI timer's activity records read against ncu's gpu__time_duration, per GPU model
// measured (warm caches, clocks as the GPU sets them, the same binaries): the bias a result timed
// from them carries when the range profiler cannot run (GPU counters not permitted). Kernels for
// which that bias is over 1 % are flagged. Measured, not assumed: docs/measurements.md, issue 42.
import type { MeasurementConditions } from '../../../schema/types';
import type { DurationSource } from './gpuTime';

interface MeasuredBias {
  model: RegExp;
  /** The largest median (activity − ncu) on that model's short kernels, µs. */
  biasUs: number;
}

const MEASURED: MeasuredBias[] = [
  // H200, 2026-12-01 (test/fixtures/gpu/h200/short-kernels/, three recordings): 0.54–0.64 µs on every kernel
  // under 20 µs, up to 1.85 µs on the DRAM-bound 100–200 µs ones
  { model: /\bH200\b/, biasUs: 1.9 },
  // H100, issue 25/26 (test/fixtures/gpu/h100/bench-gpu-serial/): 56–88 µs kernels, 0.23–0.98 µs over
  { model: /\bH100\b/, biasUs: 1.0 },
];

/** The activity records' measured bias on this GPU's model, µs; null when nobody measured it. */
export function activityBiasUs(gpu: string | null): number | null {
  return gpu ? (MEASURED.find(m => m.model.test(gpu))?.biasUs ?? null) : null;
}

/** The bias is over 1 % of kernels shorter than this, µs. */
const shortUnder = (biasUs: number) => biasUs / 0.01;

/** The conditions with the CUPTI timer's durations source and, for activity records, their bias and the short-kernel line. */
export function withDurations(m: MeasurementConditions, source: DurationSource, gpu: string | null): MeasurementConditions {
  if (source === 'gpu__time_duration') return { ...m, durations: source };
  const bias = activityBiasUs(gpu);
  return { ...m, durations: source, activityBiasUs: bias, shortUnderUs: bias === null ? null : shortUnder(bias) };
}

/** Whether a kernel of this median is flagged under these conditions (activity records, bias over 1 % of it, or unmeasured). */
export function shortForTimer(m: MeasurementConditions | undefined, medianMs: number | null): boolean {
  if (m?.durations !== 'activity-records' || medianMs === null) return false;
  return m.shortUnderUs === null || m.shortUnderUs === undefined || medianMs * 1000 < m.shortUnderUs;
}
