// The unrollLens.profile.* settings as the engine's run options: the one mapping the bench and
// sweep services share (the engine knows nothing of settings).
import type { ProfileSettings } from '../settings';
import type { BenchOptions } from '../engine/sweep/bench';

/** How programs are run and timed, from the unrollLens.profile.* settings: the one mapping the bench and sweep services share. */
export function runOptionsFromSettings(
  p: ProfileSettings,
): Pick<
  BenchOptions,
  | 'args'
  | 'samples'
  | 'maxSamples'
  | 'warmup'
  | 'clockControl'
  | 'cacheControl'
  | 'timer'
  | 'stalls'
  | 'counters'
  | 'timeoutMs'
  | 'launcher'
  | 'runCommand'
  | 'compileCommand'
  | 'checkCommand'
> {
  // clockControl and cacheControl are ncu's options: the CUPTI timer (the default) ignores them
  // without a note (their defaults, base and all, would make it on every run: a default cannot be
  // told from a choice here); the result's measurement conditions say what the run really had.
  // An empty template means "not set": the program itself, nvcc, no check command.
  const template = (t: string[]) => (t.length ? t : undefined);
  return {
    args: p.args,
    samples: p.samples,
    maxSamples: p.maxSamples,
    warmup: p.warmup,
    clockControl: p.clockControl,
    cacheControl: p.cacheControl,
    timer: p.timer,
    stalls: p.stalls === 'on',
    counters: p.counters === 'on',
    timeoutMs: p.timeoutSeconds * 1000,
    launcher: p.launcher,
    runCommand: template(p.runCommand),
    compileCommand: template(p.compileCommand),
    checkCommand: template(p.checkCommand),
  };
}
