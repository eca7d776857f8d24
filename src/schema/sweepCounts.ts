// How many points of a sweep's space were measured, in one wording for the CLI table's header,
// the results panel and the editor's notifications (issue 43: a header once gave three counts,
// "14 variants of 49 points", "13 of 49 points evaluated" and "[14/14]"). The file as written is
// measured besides the points and is not counted as one.
import type { SweepResult } from './types';

/** `13 of 49 points + the file as written` (or `… points` when the file as written was not built). */
export function pointsText(r: Pick<SweepResult, 'variants' | 'spaceSize'>): string {
  const written = r.variants.some(v => v.id === 'as-written');
  const points = r.variants.length - (written ? 1 : 0);
  return `${points} of ${r.spaceSize} point${r.spaceSize === 1 ? '' : 's'}${written ? ' + the file as written' : ''}`;
}
