// The on-disk build cache: where entries live, how they are written, checked, used and evicted.
// Several processes share one cache (two VS Code windows, the CLI beside the editor), so:
// - an entry is built in a scratch folder inside the cache and renamed into place whole: a reader
//   never sees half an entry; of two writers of the same entry the second discards its copy;
// - a finished entry is never rewritten; a damaged one is renamed into trash/ and deleted there
//   (a process that has a file open keeps reading it), as are evicted ones;
// - files added to an entry later (disassembly listings) are written beside it under a temporary
//   name and renamed, with their size and hash in a second file: a cut or garbled one is a miss;
// - a failed write (full disk, read-only folder, file size limit) leaves nothing behind and is
//   reported as one line; the build is still returned, uncached, from its scratch folder.
//
// Layout under the root: <ab>/<key hash>/<entry id>/ (the id hashes the entry's dependency list,
// so a header change adds an entry instead of rewriting one), tmp/ (scratch builds, named
// <hash>.tmp-<pid>-<random>), trash/ (entries being deleted).
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { scratchDir } from '../toolchain/processGuard';

/** The largest build output Unroll Lens reads (Node reads at most 2 GiB into one buffer). */
export const DEFAULT_MAX_OUTPUT_BYTES = 1024 ** 3;

/** Entries kept per key (one per state of the headers it read); older ones go first. */
const MAX_ENTRIES_PER_KEY = 8;

/** Uncached scratch builds a process keeps before deleting its oldest (they are removed at exit too). */
const MAX_LIVE_SCRATCH = 1000;

export interface CacheOptions {
  /** Size cap in bytes: after a write pushes the total over it, least recently used entries are evicted. 0: unlimited. */
  maxBytes?: number;
  /** Writes of the cache's own files (result.json, listings); tests inject failures here. */
  writeFile?: (file: string, data: string | Buffer) => void;
  /** A problem with the cache itself (not writable, full): one line, reported once per process and message. */
  warn?: (message: string) => void;
}

export interface CacheEntryInfo {
  dir: string;
  bytes: number;
  /** When it was last used (ms): the mtime of its result.json, touched on every use. */
  lastUsed: number;
}

export interface CacheInfo {
  location: string;
  entries: number;
  bytes: number;
}

/** sha256 of a file, read in chunks (a file over 2 GiB cannot be read into one buffer). */
export function hashFile(p: string): string {
  const h = crypto.createHash('sha256');
  const fd = fs.openSync(p, 'r');
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    for (;;) {
      const n = fs.readSync(fd, buf, 0, buf.length, null);
      if (n <= 0) break;
      h.update(buf.subarray(0, n));
    }
  } finally {
    fs.closeSync(fd);
  }
  return h.digest('hex');
}

export function sha256(data: string | Buffer): string {
  return crypto.createHash('sha256').update(data).digest('hex');
}

function errCode(e: unknown): string {
  return (e as NodeJS.ErrnoException)?.code ?? '';
}

/** "EACCES: permission denied" from a Node fs error, without the path (the message names it). */
export function describeFsError(e: unknown): string {
  const code = errCode(e);
  const text = e instanceof Error ? e.message : String(e);
  const why =
    code === 'ENOSPC'
      ? 'the disk is full'
      : code === 'EFBIG'
        ? 'over the file size limit (ulimit -f)'
        : code === 'EROFS'
          ? 'read-only file system'
          : code === 'EACCES' || code === 'EPERM'
            ? 'permission denied'
            : code === 'ENOTDIR'
              ? 'a part of the path is not a folder'
              : code === 'EDQUOT'
                ? 'disk quota exceeded'
                : text.replace(/^\w+: /, '').replace(/, \w+ '.*'$/, '');
  return code ? `${code}: ${why}` : why;
}

const warned = new Set<string>();
/** Names of scratch and trash folders carry the host: a cache on a shared disk is swept only of this host's dead processes. */
const HOST = crypto.createHash('sha256').update(os.hostname()).digest('hex').slice(0, 8);
const liveScratch = new Set<string>();
let exitHook = false;

function pidAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return errCode(e) === 'EPERM';
  }
}

/** A scratch or trash folder of a process of this host that is gone. */
function deadHere(name: string): boolean {
  const m = /-(\d+)-[0-9a-f]{8}-([0-9a-f]{8})$/.exec(name);
  return !!m && m[2] === HOST && !pidAlive(Number(m[1]));
}

function dirBytes(dir: string): number {
  let total = 0;
  let names: fs.Dirent[];
  try {
    names = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of names) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) total += dirBytes(p);
    else
      try {
        total += fs.lstatSync(p).size;
      } catch {
        // gone meanwhile
      }
  }
  return total;
}

function mtimeOf(p: string): number {
  try {
    return fs.statSync(p).mtimeMs;
  } catch {
    return 0;
  }
}

function rmQuiet(p: string): void {
  try {
    fs.rmSync(p, { recursive: true, force: true });
  } catch {
    // another process is deleting it too, or it cannot be deleted: nothing reads it
  }
}

export class BuildCache {
  readonly maxBytes: number;
  /** Total size as last counted plus what this process wrote since (null: not counted yet). */
  private approxBytes: number | null = null;
  private readonly writeFileImpl: (file: string, data: string | Buffer) => void;

  constructor(
    readonly root: string,
    private readonly o: CacheOptions = {},
  ) {
    this.maxBytes = Math.max(0, o.maxBytes ?? 0);
    this.writeFileImpl = o.writeFile ?? ((f, d) => fs.writeFileSync(f, d));
  }

  warn(message: string): void {
    if (warned.has(message)) return;
    warned.add(message);
    if (this.o.warn) this.o.warn(message);
    else process.stderr.write(`unroll-lens: warning: ${message}\n`);
  }

  /** The folder of one key's entries. */
  keyDir(hash: string): string {
    return path.join(this.root, hash.slice(0, 2), hash);
  }

  /** The key's entries, most recently used first. */
  candidates(hash: string): string[] {
    const dir = this.keyDir(hash);
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch {
      return [];
    }
    return names
      .map(n => path.join(dir, n))
      .map(d => ({ d, t: mtimeOf(path.join(d, 'result.json')) }))
      .sort((a, b) => b.t - a.t)
      .map(x => x.d);
  }

  /**
   * A fresh folder to build in: in the cache (so the finished entry is one rename away), else, when
   * the cache cannot be written, in the system's temp folder (the build is then not cached).
   * Removed at process exit unless committed.
   */
  scratch(hash: string): { dir: string; inCache: boolean } {
    const name = `${hash.slice(0, 16)}.tmp-${process.pid}-${crypto.randomBytes(4).toString('hex')}-${HOST}`;
    let dir: string;
    let inCache = true;
    try {
      fs.mkdirSync(path.join(this.root, 'tmp'), { recursive: true });
      dir = path.join(this.root, 'tmp', name);
      fs.mkdirSync(dir);
    } catch (e) {
      this.warn(`the build cache ${this.root} cannot be written (${describeFsError(e)}): builds are not cached`);
      dir = scratchDir(undefined, 'unroll-lens-build-');
      inCache = false;
    }
    this.keep(dir);
    return { dir, inCache };
  }

  /** A scratch folder the caller still reads (an uncached build): deleted at exit. */
  keep(dir: string): void {
    liveScratch.add(dir);
    if (liveScratch.size > MAX_LIVE_SCRATCH) {
      const oldest = liveScratch.values().next().value as string;
      liveScratch.delete(oldest);
      rmQuiet(oldest);
    }
    if (!exitHook) {
      exitHook = true;
      process.once('exit', releaseScratch);
    }
  }

  /** Deletes a scratch folder now (a failed build, or one committed by another process first). */
  discard(dir: string): void {
    liveScratch.delete(dir);
    rmQuiet(dir);
  }

  /** Writes one of the cache's files; on failure removes what was written and rethrows. */
  writeFile(file: string, data: string | Buffer): void {
    try {
      this.writeFileImpl(file, data);
    } catch (e) {
      rmQuiet(file);
      throw e;
    }
  }

  /**
   * Moves a finished scratch build into place as entry `id` of key `hash`. Returns the entry's
   * folder, or null when another process put the same entry there first (the caller reads that one).
   * Throws on a failure of the disk.
   */
  commit(scratch: string, hash: string, id: string): string | null {
    const keyDir = this.keyDir(hash);
    const dest = path.join(keyDir, id);
    fs.mkdirSync(keyDir, { recursive: true });
    try {
      fs.renameSync(scratch, dest);
    } catch (e) {
      const code = errCode(e);
      if (code === 'ENOTEMPTY' || code === 'EEXIST') {
        this.discard(scratch);
        return null;
      }
      throw e;
    }
    liveScratch.delete(scratch);
    if (this.approxBytes !== null) this.approxBytes += dirBytes(dest);
    // Old states of the same key's headers: the least recently used beyond a few go.
    const all = this.candidates(hash);
    for (const old of all.slice(MAX_ENTRIES_PER_KEY)) if (old !== dest) this.remove(old);
    return dest;
  }

  /** Marks an entry used now (LRU order). A read-only cache just keeps its order. */
  touch(entryDir: string): void {
    const now = new Date();
    try {
      fs.utimesSync(path.join(entryDir, 'result.json'), now, now);
    } catch {
      // not writable: the order is only a hint
    }
  }

  /** Removes an entry without pulling it from under a reader: rename into trash/, then delete. */
  remove(entryDir: string): void {
    const trash = path.join(this.root, 'trash');
    const target = path.join(trash, `${path.basename(entryDir)}-${process.pid}-${crypto.randomBytes(4).toString('hex')}-${HOST}`);
    try {
      fs.mkdirSync(trash, { recursive: true });
      fs.renameSync(entryDir, target);
    } catch {
      return; // already gone (another process removed it), or the cache is not writable
    }
    rmQuiet(target);
  }

  /** Every entry with its size and last use. Legacy entries (files right in a key folder) count as one. */
  entries(): CacheEntryInfo[] {
    const out: CacheEntryInfo[] = [];
    let tops: fs.Dirent[];
    try {
      tops = fs.readdirSync(this.root, { withFileTypes: true });
    } catch {
      return out;
    }
    for (const top of tops) {
      if (!top.isDirectory() || top.name === 'tmp' || top.name === 'trash') continue;
      const topDir = path.join(this.root, top.name);
      let keys: fs.Dirent[];
      try {
        keys = fs.readdirSync(topDir, { withFileTypes: true });
      } catch {
        continue;
      }
      for (const key of keys) {
        const keyDir = path.join(topDir, key.name);
        if (!key.isDirectory()) continue;
        let items: fs.Dirent[];
        try {
          items = fs.readdirSync(keyDir, { withFileTypes: true });
        } catch {
          continue;
        }
        if (items.some(i => !i.isDirectory())) {
          out.push({ dir: keyDir, bytes: dirBytes(keyDir), lastUsed: mtimeOf(path.join(keyDir, 'result.json')) || mtimeOf(keyDir) });
          continue;
        }
        for (const i of items) {
          const dir = path.join(keyDir, i.name);
          out.push({ dir, bytes: dirBytes(dir), lastUsed: mtimeOf(path.join(dir, 'result.json')) || mtimeOf(dir) });
        }
      }
    }
    return out;
  }

  /** Scratch folders of processes that are gone, and trash a crashed delete left. */
  sweepLeftovers(): void {
    const tmp = path.join(this.root, 'tmp');
    try {
      for (const name of fs.readdirSync(tmp)) {
        if (deadHere(name)) rmQuiet(path.join(tmp, name));
      }
    } catch {
      // no tmp folder
    }
    const trash = path.join(this.root, 'trash');
    try {
      for (const name of fs.readdirSync(trash)) {
        if (deadHere(name)) rmQuiet(path.join(trash, name));
      }
    } catch {
      // no trash folder
    }
  }

  /**
   * After a write: when the total is over the cap, evicts least recently used entries (never one
   * in `keep`: the builds being handed to a caller) until it is under 90% of the cap.
   */
  evictIfNeeded(keep: ReadonlySet<string> = new Set()): void {
    if (!this.maxBytes) return;
    if (this.approxBytes !== null && this.approxBytes <= this.maxBytes) return;
    const all = this.entries();
    let total = all.reduce((s, e) => s + e.bytes, 0);
    this.approxBytes = total;
    if (total <= this.maxBytes) return;
    this.sweepLeftovers();
    const target = this.maxBytes * 0.9;
    for (const e of all.sort((a, b) => a.lastUsed - b.lastUsed)) {
      if (total <= target) break;
      if (keep.has(e.dir)) continue;
      this.remove(e.dir);
      total -= e.bytes;
    }
    this.approxBytes = total;
  }

  info(): CacheInfo {
    const all = this.entries();
    return { location: this.root, entries: all.length, bytes: all.reduce((s, e) => s + e.bytes, 0) };
  }

  /** Deletes every entry (through trash/, so running readers keep their open files); returns what went. */
  clear(): CacheInfo {
    const before = this.info();
    let tops: string[] = [];
    try {
      tops = fs.readdirSync(this.root);
    } catch {
      return before;
    }
    for (const name of tops) {
      if (name === 'tmp' || name === 'trash') continue;
      this.remove(path.join(this.root, name));
    }
    this.sweepLeftovers();
    this.approxBytes = null;
    return before;
  }

  // --- Files added to an entry after it was committed (disassembly listings) ---------------------

  /** A file written beside an entry's output by writeSidecar, if intact; a damaged one is deleted. */
  readSidecar(file: string): string | null {
    let text: Buffer;
    let check: string;
    try {
      text = fs.readFileSync(file);
      check = fs.readFileSync(`${file}.sha256`, 'utf8');
    } catch {
      return null;
    }
    if (check.trim() === `${text.length} ${sha256(text)}`) return text.toString('utf8');
    // Cut or garbled (or a writer between its two renames): not used; the next writer replaces it.
    for (const f of [file, `${file}.sha256`]) rmQuiet(f);
    return null;
  }

  /** Writes a file beside an entry's output, atomically; a failure leaves nothing and is reported. */
  writeSidecar(file: string, text: string): void {
    const suffix = `.tmp-${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
    const bytes = Buffer.from(text, 'utf8');
    const parts: [string, string, Buffer | string][] = [
      [file, file + suffix, bytes],
      [`${file}.sha256`, `${file}.sha256${suffix}`, `${bytes.length} ${sha256(bytes)}\n`],
    ];
    try {
      for (const [, tmp, data] of parts) this.writeFile(tmp, data);
      for (const [dest, tmp] of parts) fs.renameSync(tmp, dest);
    } catch (e) {
      for (const [, tmp] of parts) rmQuiet(tmp);
      this.warn(`cannot write to the build cache ${this.root} (${describeFsError(e)}): disassembly listings are not cached`);
    }
  }
}

/** Deletes this process's uncached scratch builds (at exit). */
export function releaseScratch(): void {
  for (const d of liveScratch) rmQuiet(d);
  liveScratch.clear();
}

/** "1.5 GiB", "12.0 MiB": sizes in messages. */
export function formatBytes(n: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return i === 0 ? `${n} bytes` : `${n.toFixed(1)} ${units[i]}`;
}
