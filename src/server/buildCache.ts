// "Clear Build Cache" on the server's side: the variant builds this server cached in the
// extension's global storage (<storage>/builds, as the client tells it at start) and the GPU
// measurements beside them (<storage>/measurements). The client counts them through this for its
// modal confirmation, then asks again to clear, and only shows the answers (its bundle holds no
// engine code). Entries are moved aside before deletion, so a build being read is not lost under
// its reader (see engine/variants/cache.ts).
import * as path from 'path';
import { BuildCache, MeasurementCache, NotOurCacheError, formatBytes } from '../engine';
import type { ClearCacheParams, ClearCacheResult } from '../protocol';

/** `storagePath`: the extension's global storage folder from the client's initialization options (null: none). */
export function clearBuildCache(storagePath: string | null, p: ClearCacheParams): ClearCacheResult {
  if (!storagePath) return { status: 'no-storage' };
  const cache = new BuildCache(path.join(storagePath, 'builds'));
  const measurements = new MeasurementCache(path.join(storagePath, 'measurements'));
  const measured = measurements.info().entries;
  if (!p.clear) {
    const info = cache.info();
    return {
      status: 'counted',
      location: info.location,
      builds: info.entries,
      bytes: info.bytes,
      size: formatBytes(info.bytes),
      measurements: measured,
      left: 0,
    };
  }
  let gone;
  try {
    gone = cache.clear();
    measurements.clear();
  } catch (e) {
    // Not a folder of ours (no marker): nothing in it is deleted.
    if (!(e instanceof NotOurCacheError)) throw e;
    return { status: 'refused', location: cache.root, reason: e.message };
  }
  const left = cache.info().entries;
  return {
    status: 'cleared',
    location: gone.location,
    builds: gone.entries,
    bytes: gone.bytes,
    size: formatBytes(gone.bytes),
    measurements: measured,
    left,
  };
}
