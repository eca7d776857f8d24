// Stage 6, i-cache (issue 13): each row gets its instruction-cache entry, predicted from its
// SASS and, once measured, attributed (icache/entries.ts holds the model's side).
import type { VariantIcache } from '../../../schema/types';
import { icacheEntries, type IcacheBuild, type IcacheRow } from '../../icache/entries';

/** Rows with their i-cache entries (see icacheEntries). */
export function withIcache<T extends IcacheRow & { icache: VariantIcache | null }>(
  rows: T[],
  sass: (IcacheBuild | undefined)[],
  arch: string,
): T[] {
  const entries = icacheEntries(rows, sass, arch);
  return rows.map((r, i) => ({ ...r, icache: entries[i] }));
}
