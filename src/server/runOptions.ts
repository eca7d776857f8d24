// The unrollLens.profile.* settings as the engine's run options: the one mapping the bench and
// sweep services share (the engine knows nothing of settings).
import type { ProfileSettings } from '../settings';
import type { BenchOptions } from '../engine/profile/bench';

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
  | 'timer'
  | 'timeoutMs'
  | 'launcher'
  | 'runCommand'
  | 'compileCommand'
  | 'checkCommand'
> {
  // An empty template means "not set": the program itself, nvcc, no check command.
  const template = (t: string[]) => (t.length ? t : undefined);
  return {
    args: p.args,
    samples: p.samples,
    maxSamples: p.maxSamples,
    warmup: p.warmup,
    clockControl: p.clockControl,
    timer: p.timer,
    timeoutMs: p.timeoutSeconds * 1000,
    launcher: p.launcher,
    runCommand: template(p.runCommand),
    compileCommand: template(p.compileCommand),
    checkCommand: template(p.checkCommand),
  };
}
