// What the results panel says about occupancy: the achieved-occupancy series of the resources
// chart, drawn only where a row has one, and the chart's caption, which names where it came from.
// ncu counts achieved occupancy, whichever timer timed the run: in its own timed runs (the ncu
// timer), or in one extra run beside the CUPTI timer's (--counters on); the CUPTI timer alone has
// none. No DOM here: test/unit/occupancyCaption.test.ts reads it under Node.
import type { ViewModel } from './model';

/** The achieved-occupancy series' name (legend and dataset), or null when no row has one: nothing to draw. */
export function achievedSeries(m: Pick<ViewModel, 'achieved'>): string | null {
  return m.achieved ? 'Achieved occupancy (%, ncu)' : null;
}

/** The resources chart's caption; a GPU result without achieved occupancy says why there is none. */
export function resourcesCaption(m: Pick<ViewModel, 'achieved' | 'comparison' | 'gpu' | 'result'>): string {
  const theoretical = m.comparison
    ? 'Registers per thread of each kernel'
    : m.gpu
      ? 'Theoretical occupancy from registers and shared memory'
      : 'Theoretical occupancy from registers and shared memory at the block size of the estimate';
  if (!m.gpu) return `${theoretical}.`;
  const cupti = m.result.measurement?.tool === 'cupti';
  if (m.achieved)
    return cupti
      ? `${theoretical}; achieved occupancy counted by ncu in an extra run beside the CUPTI timer's (--counters on; % of peak warps).`
      : `${theoretical}; achieved occupancy measured by ncu in its timed runs (% of peak warps).`;
  return cupti
    ? `${theoretical}; no achieved occupancy: the CUPTI timer counts it only with --counters on (unrollLens.profile.counters), in one extra ncu run.`
    : `${theoretical}; no achieved occupancy recorded.`;
}
