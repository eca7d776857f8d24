// Which folders are caches of ours. Clearing and eviction delete files, so they act only on a
// folder that carries our marker file (written when we create the folder, or when we adopt an
// empty one or one that holds nothing but our own layout), and inside it only on names of our
// layout. A folder the user names by mistake (`cache clear --dir ~/project`, a shared directory
// whose builds/ already holds their files) is refused with a clear message and left untouched.
import * as fs from 'fs';
import * as path from 'path';

const CACHE_MARKER = '.unroll-lens-cache';

export type CacheKind = 'build' | 'measurement' | 'scan';

/** A folder that is not a cache of ours: the message names it and says nothing was deleted. */
export class NotOurCacheError extends Error {}

function markerText(kind: CacheKind): string {
  return `Unroll Lens ${kind} cache. Unroll Lens created this folder and deletes only its own entries in it.\n`;
}

/** The folder carries our marker for this kind of cache (a regular file, not a link, with our text). */
export function hasMarker(root: string, kind: CacheKind): boolean {
  const file = path.join(root, CACHE_MARKER);
  try {
    const st = fs.lstatSync(file);
    return st.isFile() && st.size < 4096 && fs.readFileSync(file, 'utf8') === markerText(kind);
  } catch {
    return false;
  }
}

/** 'absent': no such folder; 'ours': it carries our marker; 'foreign': anything else. */
export function ownership(root: string, kind: CacheKind): 'absent' | 'ours' | 'foreign' {
  try {
    if (!fs.statSync(root).isDirectory()) return 'foreign';
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'absent' : 'foreign';
  }
  return hasMarker(root, kind) ? 'ours' : 'foreign';
}

/** Before deleting: true for a cache of ours, false for no folder at all; throws NotOurCacheError otherwise. */
export function requireOurs(root: string, kind: CacheKind): boolean {
  const o = ownership(root, kind);
  if (o === 'foreign') {
    throw new NotOurCacheError(
      `${root} is not an Unroll Lens ${kind} cache (it has no ${CACHE_MARKER} marker file of ours): nothing was deleted`,
    );
  }
  return o === 'ours';
}

/**
 * Before writing: makes `root` a cache of ours and returns true, or returns false when it is
 * someone else's folder. Creates it (and its marker); adopts an existing folder only when it is
 * empty or every name in it is one of ours (`ourName`: a cache an earlier version made).
 */
export function claimFolder(root: string, kind: CacheKind, ourName: (e: fs.Dirent) => boolean): boolean {
  // undefined: it was there already (recursive mkdir names the first folder it made).
  const created = fs.mkdirSync(root, { recursive: true }) !== undefined;
  if (!created) {
    if (hasMarker(root, kind)) return true;
    if (!fs.statSync(root).isDirectory()) return false;
    // Another process may be writing the marker right now: its name counts as ours.
    if (!fs.readdirSync(root, { withFileTypes: true }).every(e => e.name === CACHE_MARKER || ourName(e))) return false;
  }
  try {
    fs.writeFileSync(path.join(root, CACHE_MARKER), markerText(kind), { flag: 'wx' });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  return hasMarker(root, kind) || waitForMarker(root, kind);
}

/** A marker another process is writing at this moment: it is whole once its write returns. */
function waitForMarker(root: string, kind: CacheKind): boolean {
  for (let i = 0; i < 50; i++) {
    if (hasMarker(root, kind)) return true;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2);
  }
  return false;
}
