// The CUPTI timer's two kernel durations (issue 42). Its activity records time a launch from a
// start and an end that sit about a microsecond outside the span ncu reports as
// gpu__time_duration (measured on an H200: +0.5–1.3 µs a launch, 3–550 µs kernels,
// docs/measurements.md): 0.3 % of a 600 µs kernel, 20 % of a 5 µs one. So the timer also reads
// gpu__time_duration.sum itself, with CUPTI's range profiler, one range per launch
// (UNROLL_LENS_GPU_TIME=1), and those are the durations used. Where the range profiler cannot run
// (GPU counters not permitted, a CUPTI without it), the activity records stand, and the result says
// so with their measured bias (activityBias.ts).
import type { KernelLaunch, TimerRecords } from './timerRecords';

/** Where a launch's duration came from: ncu's counter read in the run, or CUPTI's activity records. */
export type DurationSource = 'gpu__time_duration' | 'activity-records';

export type RunDurations =
  | { launches: KernelLaunch[]; source: DurationSource; problem: string | null }
  /** The counters were on (so the activity records carry no times) and failed part-way: the run has no durations. */
  | { unusable: string };

/**
 * The run's launches with their durations from gpu__time_duration, when `asked` and the run read
 * one per launch; otherwise the activity records' durations and why. Ranges are matched to
 * launches kernel by kernel in launch order when CUPTI named every range's kernel, else in
 * overall order (the range profiler serialises launches, and the records come in that order).
 */
export function runDurations(r: TimerRecords, asked: boolean): RunDurations {
  const activity = (problem: string | null): RunDurations =>
    // with the range profiler on, CUPTI writes kernel records without timestamps
    r.launches.length && r.launches.every(l => l.durationNs === 0)
      ? { unusable: `the GPU counters failed part-way and the kernel records have no times (${problem})` }
      : { launches: r.launches, source: 'activity-records', problem };
  if (!asked) return { launches: r.launches, source: 'activity-records', problem: null };
  const g = r.gpuTime;
  if (!g) return activity('the timer did not read gpu__time_duration (an older timer library?)');
  if (g.errors.length) return activity(`the GPU counters could not be read: ${g.errors[0]}`);
  if (!g.end) return activity('the timer ended without its gpu__time_duration summary');
  if (g.end.dropped > 0) return activity(`CUPTI dropped ${g.end.dropped} gpu__time_duration ranges`);
  if (g.ranges.length !== r.launches.length)
    return activity(`${g.ranges.length} gpu__time_duration ranges for ${r.launches.length} kernel launches`);
  // records in the order CUPTI delivered them: with every timestamp equal, a stable sort keeps it
  const ordered = r.launches.map((l, i) => ({ l, i })).sort((a, b) => a.l.startNs - b.l.startNs || a.i - b.i);
  const byKernel = new Map<string, number[]>();
  for (const x of g.ranges) (byKernel.get(x.kernel) ?? byKernel.set(x.kernel, []).get(x.kernel)!).push(x.ns);
  const launched = new Map<string, number>();
  for (const l of r.launches) launched.set(l.kernel, (launched.get(l.kernel) ?? 0) + 1);
  const named = [...launched].every(([k, n]) => byKernel.get(k)?.length === n);
  const out = r.launches.slice();
  ordered.forEach(({ l, i }, n) => {
    out[i] = { ...l, durationNs: named ? byKernel.get(l.kernel)!.shift()! : g.ranges[n].ns };
  });
  return { launches: out, source: 'gpu__time_duration', problem: null };
}
