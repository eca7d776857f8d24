// What times the kernels, as a value: the two timers and the facts each one has, chosen once from
// the run options (timerFor). ncu (gpu/stages/time.ts, gpu/stages/lineStalls.ts) profiles each
// launch under Nsight Compute: it locks clocks to base or leaves them (--clock-control), flushes
// every cache before each launch or leaves them warm (--cache-control), and needs the GPU's
// performance-counter permission. The CUPTI timer (gpu/cupti/) runs the program as itself with our
// timer library injected: clocks as the GPU sets them, caches as the program leaves them, stall
// reasons and per-line stalls from CUPTI PC sampling in the same run, no ncu process. Everything
// that depends on which timer runs asks it here; the name stays the setting's and the flag's
// value and the result's `measurement.tool`.
import type { MeasurementConditions } from '../../schema/types';
import type { GpuRunConfig } from './options';
import { PC_SAMPLING_PERIOD } from './cupti/pcStalls';
import { PROFILE_METRICS, STALL_METRICS, TIME_ONLY_METRICS } from './stages/time';

/** The timer's name: the value of unrollLens.profile.timer and --timer, and the result's measurement.tool. */
type TimerName = NonNullable<GpuRunConfig['timer']>;

/** A condition asked for that the timer cannot give: base clocks, or flushed caches. */
export type UnmetCondition = 'base-clocks' | 'flushed-caches';

/** What a timing note and the result's conditions depend on. */
type TimedWith = Pick<GpuRunConfig, 'samples' | 'warmup' | 'stalls' | 'clockControl' | 'cacheControl' | 'maxSamples'>;

/** What the measurement cache keys a timing of this timer by (besides the program, GPU and arguments). */
type KeyedWith = Pick<GpuRunConfig, 'passes' | 'stalls' | 'counters'> & { timerLibrary?: string };

/** Bumped when the CUPTI timer's records change meaning (native/cupti_timer.c). */
const CUPTI_TIMER_VERSION = 4; // 3: serialized kernel records (no per-block instrumentation); 4: gpu__time_duration per launch

export interface KernelTimer {
  readonly name: TimerName;
  /** Each launch runs under ncu: without ncu nothing is timed. */
  readonly needsNcu: boolean;
  /** Timing reads the GPU performance counters (the permission ERR_NVGPUCTRPERM is about). */
  readonly needsCounterPermission: boolean;
  /** Can lock the clocks to base (clockControl is its option). */
  readonly locksClocks: boolean;
  /** Can flush every cache before each launch (cacheControl is its option; also a key of its measurements). */
  readonly flushesCaches: boolean;
  /** Several of its processes may share one GPU (ncu makes their profiles take turns). */
  readonly sharesGpu: boolean;
  /**
   * Programs load our CUPTI timer library: built once before the runs (its path keys the
   * measurements), and a variant's first run may start ahead, held at its first launch.
   */
  readonly loadsTimerLibrary: boolean;
  /** Its timed run's PC samples give the stalls per source line (no extra ncu run). */
  readonly samplesSourceLines: boolean;
  /** The conditions its timings were taken under, for the result (`measurement`). */
  conditions(g: TimedWith): MeasurementConditions;
  /** The clocks the result records (`clockControl`): what the timer really did, whatever was asked. */
  clockControl(g: TimedWith): 'base' | 'none';
  /** How it timed, in words (a note on the result). */
  note(g: TimedWith, gpu: string | null): string;
  /** The method part of a measurement's cache key: another method is another answer. */
  cacheMethod(o: KeyedWith): string;
}

/** `20 launches per variant (the leading ones up to 60)`: adaptive sampling gives the leading variants more. */
function launchesText(g: TimedWith): string {
  const max = g.maxSamples ?? 0;
  return `${g.samples} launches per variant${max > g.samples ? ` (the leading ones up to ${max})` : ''}`;
}

const NCU_TIMER: KernelTimer = {
  name: 'ncu',
  needsNcu: true,
  needsCounterPermission: true,
  locksClocks: true,
  flushesCaches: true,
  sharesGpu: true,
  loadsTimerLibrary: false,
  samplesSourceLines: false,
  conditions: g => ({
    tool: 'ncu',
    clocks: g.clockControl === 'base' ? 'base' : 'as-is',
    caches: g.cacheControl === 'none' ? 'warm' : 'flushed',
  }),
  clockControl: g => g.clockControl,
  note: (g, gpu) =>
    `timed under ncu on ${gpu ?? 'the GPU'}, ${launchesText(g)} after ${g.warmup} warm-up, ` +
    `clocks ${g.clockControl === 'base' ? 'locked to base' : 'not locked (--clock-control none)'}, ` +
    (g.cacheControl === 'none' ? 'caches not flushed between launches (--cache-control none)' : 'caches flushed before each launch'),
  cacheMethod: o => {
    const passes = o.passes ?? 'combined';
    const metrics =
      o.stalls === false ? TIME_ONLY_METRICS : passes === 'split' ? ['gpu__time_duration.sum', ...STALL_METRICS] : PROFILE_METRICS;
    return `${passes}:${metrics.join(',')}`;
  },
};

const CUPTI_TIMER: KernelTimer = {
  name: 'cupti',
  needsNcu: false,
  needsCounterPermission: false,
  locksClocks: false,
  flushesCaches: false,
  sharesGpu: false,
  loadsTimerLibrary: true,
  samplesSourceLines: true,
  conditions: () => ({ tool: 'cupti', clocks: 'as-is', caches: 'warm' }),
  // the CUPTI timer leaves the clocks to the GPU whatever the ncu setting says
  clockControl: () => 'none',
  note: (g, gpu) =>
    `timed by the CUPTI kernel timer in the program's own runs on ${gpu ?? 'the GPU'}, ${launchesText(g)} ` +
    `after ${g.warmup} warm-up: each launch's gpu__time_duration (ncu's counter) read by CUPTI's range profiler, ` +
    `clocks as the GPU sets them, caches warm between launches, ` +
    (g.stalls === false
      ? 'no stall reasons (--stalls off)'
      : `stall reasons from CUPTI PC sampling (every 2^${PC_SAMPLING_PERIOD} cycles, in a run of their own before the timed runs)`),
  cacheMethod: o =>
    `cupti-timer:v${CUPTI_TIMER_VERSION}:${o.timerLibrary ?? ''}:${o.stalls !== false ? `pc-sampling-2^${PC_SAMPLING_PERIOD}` : 'times-only'}` +
    // counted by ncu besides (runners/counters.ts): an entry with counters is another answer
    (o.counters ? `+ncu-counters:${PROFILE_METRICS.join(',')}` : ''),
};

const TIMERS: Record<TimerName, KernelTimer> = { ncu: NCU_TIMER, cupti: CUPTI_TIMER };

/** The timer the options name; unset: ncu, the engine's default (the settings' default is cupti). */
export function timerFor(o: Pick<GpuRunConfig, 'timer'>): KernelTimer {
  return TIMERS[o.timer ?? 'ncu'];
}

/**
 * What `asked` wants that its timer cannot give (empty: all of it can be given): the one rule the
 * command line and the editor apply (a usage error for flags, a note on the result for settings).
 * Pass only what was asked for: an option left at ncu's default is no request (undefined).
 */
export function unmetConditions(asked: Partial<Pick<GpuRunConfig, 'timer' | 'clockControl' | 'cacheControl'>>): UnmetCondition[] {
  const t = timerFor(asked);
  return [
    ...(!t.locksClocks && asked.clockControl === 'base' ? (['base-clocks'] as const) : []),
    ...(!t.flushesCaches && asked.cacheControl === 'all' ? (['flushed-caches'] as const) : []),
  ];
}
