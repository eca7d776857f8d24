// What a GPU timing was measured with, in words: the sweep's best-variant basis, the bench table's
// header and the hover say it the same way.
import type { MeasurementConditions } from './types';

/**
 * `ncu, 20 samples; clocks not locked, caches flushed before each launch`. Results saved before
 * conditions were kept read as ncu's. Warm caches under ncu (--cache-control none) are said to be
 * unflushed: ncu flushes unless told not to.
 */
export function conditionsText(m: MeasurementConditions | undefined, samples: number, clockControl?: 'base' | 'none'): string {
  const tool = m?.tool === 'cupti' ? 'CUPTI timer, program run as itself' : 'ncu';
  const base = m ? m.clocks === 'base' : clockControl !== 'none';
  const caches =
    m?.caches !== 'warm'
      ? 'caches flushed before each launch'
      : m.tool === 'ncu'
        ? 'caches not flushed between launches (warm)'
        : 'caches warm';
  return `${tool}, ${samples} samples; clocks ${base ? 'locked to base' : 'not locked'}, ${caches}`;
}
