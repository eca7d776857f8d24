// Sealed cache files: a JSON body with the MAC of this installation's key (cacheKey.ts) over what
// it is (purpose), where it belongs (its key and entry id: a file moved to another entry is not
// that entry's) and its exact text. The file must be exactly as we write it: whitespace added, a
// field reordered or a MAC spelled in upper case is not ours either. Reads are of regular files
// only, never through a link, and size-capped (a planted FIFO or /dev/zero cannot hang or fill us).
import * as fs from 'fs';
import { sameMac, type CacheKey } from './cacheKey';

interface Sealed {
  format: number;
  keyId: string;
  mac: string;
  body: string;
}

/** The text of a sealed file. */
export function seal(key: CacheKey, format: number, purpose: string, name: string[], body: unknown): string {
  const text = JSON.stringify(body);
  const sealed: Sealed = { format, keyId: key.id, mac: key.mac(purpose, String(format), ...name, text), body: text };
  return JSON.stringify(sealed);
}

/**
 * The body of a sealed file if this installation wrote it for `name`; 'foreign': sealed by
 * another key (another user's entry in a shared cache: a miss, left alone); 'damaged': anything
 * else (cut, edited, moved, an older unsealed format).
 */
export function unseal(key: CacheKey, format: number, purpose: string, name: string[], text: string): unknown {
  let o: Partial<Sealed>;
  try {
    o = JSON.parse(text) as Partial<Sealed>;
  } catch {
    return DAMAGED;
  }
  if (!o || typeof o !== 'object' || typeof o.body !== 'string' || typeof o.mac !== 'string' || typeof o.keyId !== 'string') return DAMAGED;
  if (JSON.stringify({ format: o.format, keyId: o.keyId, mac: o.mac, body: o.body }) !== text) return DAMAGED;
  if (o.format !== format) return DAMAGED;
  if (o.keyId !== key.id) return FOREIGN;
  const want = key.mac(purpose, String(format), ...name, o.body);
  if (!sameMac(want, o.mac)) return DAMAGED;
  try {
    return JSON.parse(o.body) as unknown;
  } catch {
    return DAMAGED;
  }
}

export const DAMAGED = Symbol('damaged');
export const FOREIGN = Symbol('foreign');

/** Reads a cache file: a regular file (no link, FIFO or device) of at most `maxBytes`; throws otherwise (ENOENT when gone). */
export function readCacheFile(file: string, maxBytes: number): Buffer {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0));
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw Object.assign(new Error(`${file} is not a regular file`), { code: 'EINVAL' });
    if (st.size > maxBytes) throw Object.assign(new Error(`${file} is over ${maxBytes} bytes`), { code: 'EFBIG' });
    const buf = Buffer.alloc(st.size);
    let off = 0;
    while (off < buf.length) {
      const n = fs.readSync(fd, buf, off, buf.length - off, off);
      if (n <= 0) break;
      off += n;
    }
    return buf.subarray(0, off);
  } finally {
    fs.closeSync(fd);
  }
}
