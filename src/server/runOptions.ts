// The unrollLens.profile.* settings as the engine's run options: the one mapping the bench and
// sweep services share (the engine knows nothing of settings).
import type { ProfileSettings } from '../settings';
import type { BenchOptions } from '../engine/profile/bench';
import { UnmetCondition, unmetConditions } from '../engine/profile/timerConditions';

/** How programs are run and timed, from the unrollLens.profile.* settings: the one mapping the bench and sweep services share. */
export function runOptionsFromSettings(
  p: ProfileSettings,
): Pick<
  BenchOptions,
  | 'args'
  | 'samples'
  | 'warmup'
  | 'clockControl'
  | 'cacheControl'
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
    warmup: p.warmup,
    clockControl: p.clockControl,
    cacheControl: p.cacheControl,
    timer: p.timer,
    timeoutMs: p.timeoutSeconds * 1000,
    launcher: p.launcher,
    runCommand: template(p.runCommand),
    compileCommand: template(p.compileCommand),
    checkCommand: template(p.checkCommand),
  };
}

const UNMET_SETTINGS: Record<UnmetCondition, { setting: string; instead: string; want: string }> = {
  'base-clocks': { setting: 'unrollLens.profile.clockControl base', instead: 'at the clocks the GPU sets', want: 'base clocks' },
  'flushed-caches': {
    setting: 'unrollLens.profile.cacheControl all',
    instead: 'with its caches as it leaves them',
    want: 'flushed caches',
  },
};

/**
 * A note for a result the CUPTI timer measured while the settings ask for base clocks or flushed
 * caches, which it cannot give (the rule: engine/profile/timerConditions.ts); null otherwise. The
 * command line refuses such flags; here a default cannot be told from a choice, so the run goes on
 * and its result says what did not apply.
 */
export function timerSettingsNote(p: Pick<ProfileSettings, 'timer' | 'clockControl' | 'cacheControl'>): string | null {
  const unmet = unmetConditions(p);
  if (!unmet.length) return null;
  const words = unmet.map(u => UNMET_SETTINGS[u]);
  const all = (k: 'setting' | 'instead' | 'want') => words.map(w => w[k]).join(' and ');
  return (
    `unrollLens.profile.timer is cupti: the program ran as itself, ${all('instead')}, so ${all('setting')} did not apply ` +
    `(set unrollLens.profile.timer to ncu for ${all('want')}, or set ${unmet.length > 1 ? 'them' : 'it'} to none)`
  );
}
