// The per-installation key that authenticates cache entries (build results, listings, GPU
// measurements). A cache folder can be written by others (a shared directory, a repo's planted
// files, a user's hand edit); a plain hash beside a file proves nothing, since whoever edits the
// file recomputes it. An HMAC with a key only this user can read does: an entry whose MAC does not
// verify is a miss (rebuilt or measured again), never an answer.
//
// The key is 32 random bytes in the user's own config folder ($XDG_CONFIG_HOME/unroll-lens/cache-key,
// default ~/.config), never in a workspace; created once (exclusive link of a fully written file,
// so two processes starting together agree on one key), mode 0600 in a 0700 folder. A key file
// that is not a regular file of this user readable only by them is not trusted: this process
// then uses a key of its own, so nothing on disk is believed and nothing it writes outlives it.
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

const KEY_BYTES = 32;

export interface CacheKey {
  /** Names the key in entries (not secret): an entry of another installation is foreign, not damaged. */
  readonly id: string;
  /** HMAC-SHA256 over a purpose and parts, each length-prefixed (no two part lists collide), as lowercase hex. */
  mac(purpose: string, ...parts: (string | Buffer)[]): string;
}

/** The key file's path: the user's config folder, read from the environment on each call (tests move it). */
function cacheKeyFile(): string {
  const base = process.env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config');
  return path.join(base, 'unroll-lens', 'cache-key');
}

function keyOf(secret: Buffer): CacheKey {
  return {
    id: crypto.createHash('sha256').update('unroll-lens cache key id\0').update(secret).digest('hex').slice(0, 16),
    mac(purpose, ...parts) {
      const h = crypto.createHmac('sha256', secret);
      for (const p of [purpose, ...parts]) {
        const b = typeof p === 'string' ? Buffer.from(p, 'utf8') : p;
        h.update(`${b.length}:`);
        h.update(b);
      }
      return h.digest('hex');
    },
  };
}

/** Two MACs as written: exact text (an upper-case spelling of the same bytes is not ours either), in constant time. */
export function sameMac(expected: string, found: unknown): boolean {
  if (typeof found !== 'string') return false;
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(found, 'utf8');
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

/** Why a key file cannot be trusted, or null when it can. */
function untrusted(st: fs.Stats): string | null {
  if (!st.isFile()) return 'it is not a regular file';
  if (st.size !== KEY_BYTES) return `it is ${st.size} bytes, not ${KEY_BYTES}`;
  if (typeof process.getuid === 'function') {
    if (st.uid !== process.getuid()) return 'it belongs to another user';
    if (st.mode & 0o077) return `others may read or write it (mode ${(st.mode & 0o777).toString(8)})`;
  }
  return null;
}

function readKey(file: string): Buffer {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0));
  try {
    const why = untrusted(fs.fstatSync(fd));
    if (why) throw new Error(why);
    const buf = Buffer.alloc(KEY_BYTES);
    if (fs.readSync(fd, buf, 0, KEY_BYTES, 0) !== KEY_BYTES) throw new Error('it was cut short');
    return buf;
  } finally {
    fs.closeSync(fd);
  }
}

/** Writes a fresh key under a private name and links it into place: the first of two racing processes wins. */
function createKey(file: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.tmp-${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
  fs.writeFileSync(tmp, crypto.randomBytes(KEY_BYTES), { mode: 0o600, flag: 'wx' });
  try {
    fs.linkSync(tmp, file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

const loaded = new Map<string, CacheKey>();

/**
 * This installation's key, created on first use. `warn` hears once why the key file cannot be
 * used (then a key private to this process stands in: every stored entry is a miss).
 */
export function installationKey(warn: (message: string) => void = m => process.stderr.write(`unroll-lens: warning: ${m}\n`)): CacheKey {
  const file = cacheKeyFile();
  const known = loaded.get(file);
  if (known) return known;
  let key: CacheKey;
  try {
    let secret: Buffer;
    try {
      secret = readKey(file);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      createKey(file);
      secret = readKey(file);
    }
    key = keyOf(secret);
  } catch (e) {
    warn(
      `the cache key ${file} cannot be used (${(e as Error).message}): cached builds and measurements are not trusted in this run; delete the file to make a new one`,
    );
    key = keyOf(crypto.randomBytes(KEY_BYTES));
  }
  loaded.set(file, key);
  return key;
}
