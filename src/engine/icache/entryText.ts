// One i-cache entry (issue 13) as text, the same in the CLI table and the editor's bench log:
// what is shown, marked (measured) from a GPU run or (predicted) from the SASS alone.
import type { VariantIcache } from '../../schema/types';

/** "2.1–2.8×": a predicted slowdown range (one number when both ends round alike). */
export function icacheRange(p: { low: number; high: number }): string {
  return p.low.toFixed(2) === p.high.toFixed(2) ? `${p.low.toFixed(2)}×` : `${p.low.toFixed(2)}–${p.high.toFixed(2)}×`;
}

/**
 * "1.75× (measured)", "4.35× not i-cache" (measured slower, but not for the instruction cache:
 * icacheWhy says why) or "1.48–2.39× (predicted)"; "-" when the entry has neither.
 */
export function icacheShownText(c: VariantIcache): string {
  if (c.shown === 'not-icache' && c.measured) return `${c.measured.slowdown.toFixed(2)}× not i-cache`;
  if (c.shown === 'measured' && c.measured) return `${c.measured.slowdown.toFixed(2)}× (measured)`;
  return c.predicted ? `${icacheRange(c.predicted)} (predicted)` : '-';
}

/** Why a measured slowdown is (or is not) put on the instruction cache; "" without a measurement or an attribution. */
export function icacheWhy(c: VariantIcache): string {
  return c.measured?.attribution && c.measured.attribution.cause !== 'none' ? c.measured.attribution.why : '';
}
