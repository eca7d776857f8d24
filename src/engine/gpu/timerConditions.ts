// Which measurement conditions each timer can give: the one rule the command line and the editor
// apply (each words it: a usage error for flags given with --timer cupti, a note on the result for
// settings). ncu sets both: it locks the clocks to base or leaves them (--clock-control) and
// flushes every cache before each launch or leaves them warm (--cache-control). The CUPTI timer
// runs the program as itself: clocks as the GPU sets them, caches as the program leaves them.
import type { BenchOptions } from './options';

/** A condition asked for that the timer cannot give: base clocks, or flushed caches. */
export type UnmetCondition = 'base-clocks' | 'flushed-caches';

/**
 * What `asked` wants that its timer cannot give (empty: all of it can be given). Pass only what
 * was asked for: an option left at ncu's default is no request (undefined).
 */
export function unmetConditions(asked: Partial<Pick<BenchOptions, 'timer' | 'clockControl' | 'cacheControl'>>): UnmetCondition[] {
  if (asked.timer !== 'cupti') return [];
  return [
    ...(asked.clockControl === 'base' ? (['base-clocks'] as const) : []),
    ...(asked.cacheControl === 'all' ? (['flushed-caches'] as const) : []),
  ];
}
