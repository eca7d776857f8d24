// What a GPU timing was measured with, in words: the sweep's best-variant basis, the bench table's
// header, the hover and the results panel's charts say it the same way.
import type { MeasurementConditions, SweepResult } from './types';

/** Each timer in words, by what the result recorded (measurement.tool). */
const TOOL_WORDS: Record<MeasurementConditions['tool'], { name: string; chart: string; warm: string }> = {
  ncu: { name: 'ncu', chart: 'ncu', warm: 'caches not flushed between launches (warm)' },
  cupti: { name: 'CUPTI timer, program run as itself', chart: 'CUPTI timer (program run as itself)', warm: 'caches warm' },
};

/** The CUPTI timer's clock in words (measurement.duration); "" where none was recorded. */
const DURATION_WORDS: Record<NonNullable<MeasurementConditions['duration']>, string> = {
  'gpu-time': 'gpu__time_duration per launch',
  'kernel-record': 'kernel records: ~0.6 µs a launch over ncu, short kernels read long',
  mixed: 'gpu__time_duration for some variants, kernel records for others',
};
const durationWords = (m: MeasurementConditions | undefined): string =>
  m?.duration && Object.prototype.hasOwnProperty.call(DURATION_WORDS, m.duration) ? DURATION_WORDS[m.duration] : '';

/** The recorded tool's words; none for a result saved before conditions were kept (ncu's) or a tool not known here. */
function toolWords(m: MeasurementConditions | undefined): (typeof TOOL_WORDS)[keyof typeof TOOL_WORDS] | undefined {
  return m && Object.prototype.hasOwnProperty.call(TOOL_WORDS, m.tool) ? TOOL_WORDS[m.tool] : undefined;
}

/**
 * `ncu, 20 samples; clocks not locked, caches flushed before each launch`. Results saved before
 * conditions were kept read as ncu's. Warm caches under ncu (--cache-control none) are said to be
 * unflushed: ncu flushes unless told not to.
 */
export function conditionsText(m: MeasurementConditions | undefined, samples: number, clockControl?: 'base' | 'none'): string {
  const words = toolWords(m);
  const tool = words?.name ?? TOOL_WORDS.ncu.name;
  const base = m ? m.clocks === 'base' : clockControl !== 'none';
  const caches = m?.caches !== 'warm' ? 'caches flushed before each launch' : (words?.warm ?? TOOL_WORDS.cupti.warm);
  const clock = durationWords(m);
  const timer = clock ? tool.replace(/^CUPTI timer/, `CUPTI timer (${clock})`) : tool;
  return `${timer}, ${samples} samples; clocks ${base ? 'locked to base' : 'not locked'}, ${caches}`;
}

/**
 * One line for the top of every chart of a result: the GPU, the tool, the clocks and the caches
 * (`NVIDIA H100 80GB HBM3 · ncu · clocks locked to base · caches flushed before each launch`), or
 * `SASS only` for a static result. A result saved before the conditions were kept was timed by ncu
 * with its cache flush; its clocks are named only where `clockControl` recorded them.
 */
export function chartConditionsText(r: Pick<SweepResult, 'static' | 'gpu' | 'arch' | 'measurement' | 'clockControl'>): string {
  if (r.static) return `SASS only (${r.arch}, no GPU run): compiler output, no timings`;
  const m = r.measurement;
  const tool = toolWords(m)?.chart ?? TOOL_WORDS.ncu.chart;
  const clocksBase = m ? m.clocks === 'base' : r.clockControl ? r.clockControl === 'base' : null;
  const clocks = clocksBase === null ? 'clocks not recorded' : clocksBase ? 'clocks locked to base' : 'clocks as-is (not locked)';
  const caches = m?.caches === 'warm' ? 'caches warm (as the program runs)' : 'caches flushed before each launch';
  const clock = durationWords(m);
  return [r.gpu ?? 'GPU not named', clock ? `${tool}: ${clock}` : tool, clocks, caches].join(' · ');
}
