// Where the editor's unroll factors come in: the unrollLens.unrollFactors setting and the factors
// a request names (LoopVariants, BenchLoop, Sweep: `factors?: string[]`). Each is parsed here,
// once, into the engine's UnrollFactors; the services pass that value on and never parse again.
import { UnrollFactors } from '../engine';
import type { Settings } from '../protocol';

/** The setting's list parsed, per settings value: readSettings makes a new array on each read. */
const fromSetting = new WeakMap<readonly string[], UnrollFactors>();

/**
 * unrollLens.unrollFactors as a factor list. readSettings already dropped each invalid entry with
 * a warning (and fell back to the default for an empty list), so this parse does not fail on what
 * readSettings returns; it is the one place that turns the strings into factors.
 */
function settingFactors(s: Pick<Settings, 'unrollFactors'>): UnrollFactors {
  let f = fromSetting.get(s.unrollFactors);
  if (!f) {
    f = UnrollFactors.parse(s.unrollFactors);
    fromSetting.set(s.unrollFactors, f);
  }
  return f;
}

/**
 * The factors a request asks for, else the setting's. The request's strings are parsed as the
 * pieces of one list (`['8', '4']` or `['8,4']`); a bad one throws UnrollFactorsError, whose
 * message the client shows as it is. `emptyIsNone`: an empty list is a sweep of parameters only
 * (the editor's sweep of a kernel without loops), UnrollFactors.NONE; otherwise it is refused.
 */
export function requestedFactors(
  asked: readonly string[] | undefined,
  s: Pick<Settings, 'unrollFactors'>,
  emptyIsNone = false,
): UnrollFactors {
  if (asked === undefined) return settingFactors(s);
  if (emptyIsNone && !asked.length) return UnrollFactors.NONE;
  return UnrollFactors.parse(asked);
}
