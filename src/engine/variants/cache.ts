// The on-disk build cache: where entries live, how they are written, checked, used and evicted.
// Several processes share one cache (two VS Code windows, the CLI beside the editor), so:
// - an entry is built in a scratch folder inside the cache and renamed into place whole: a reader
//   never sees half an entry; of two writers of the same entry the second discards its copy;
// - a finished entry is never rewritten; a damaged one is renamed into trash/ and deleted there
//   (a process that has a file open keeps reading it), as are evicted ones;
// - files added to an entry later (disassembly listings) are written beside it under a temporary
//   name and renamed, with their size and hash in a second file: a cut or garbled one is a miss;
// - a failed write (full disk, read-only folder, file size limit) leaves nothing behind and is
//   reported as one line; the build is still returned, uncached, from its scratch folder;
// - an entry handed to a caller is hard-linked into a lease folder of the caller's own first, so
//   a clear or an eviction by any process never pulls a file from under a build in use (the
//   link keeps the bytes; the lease goes when the process exits);
// - result.json and listings are sealed with this installation's key (cacheKey.ts): a file
//   anyone else wrote or edited is a miss;
// - the cache folder carries our marker (cacheFolder.ts); clearing and eviction delete only names
//   of our layout inside a marked folder, never a file of the user's.
//
// Layout under the root: .unroll-lens-cache (the marker), <ab>/<key hash>/<entry id>/ (the id
// hashes the key id and the entry's dependency list, so a header change adds an entry instead of
// rewriting one), tmp/ (scratch builds <hash>.tmp-<pid>-<random>-<host> and leases
// <entry id>.lease-<pid>-<random>-<host>), trash/ (entries being deleted).
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { claimFolder, hasMarker, requireOurs } from '../base/cacheFolder';
import { installationKey, sameMac, type CacheKey } from '../base/cacheKey';
import { readCacheFile } from '../base/cacheEntry';
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

/** Names of our layout: only these are ever deleted, and only inside a folder with our marker. */
const SHARD = /^[0-9a-f]{2}$/;
const KEY_DIR = /^[0-9a-f]{64}$/;
const ENTRY_ID = /^[0-9a-f]{16}$/;
const TMP_NAME = /^[0-9a-f]{16}\.(tmp|lease)-\d+-[0-9a-f]{8}-[0-9a-f]{8}$/;
const TRASH_NAME = /^[0-9a-f]{16}-\d+-[0-9a-f]{8}-[0-9a-f]{8}$/;

/** A name an earlier version's cache holds at its top: such a folder without a marker is adopted. */
function legacyTopName(e: fs.Dirent): boolean {
  return e.isDirectory() && (SHARD.test(e.name) || e.name === 'tmp' || e.name === 'trash');
}

/** A listing beside an entry: its check file holds the size and the key's MAC, nothing else. */
const MAX_LISTING_BYTES = 2 ** 31 - 1;

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

function subdirs(dir: string, name: RegExp): string[] {
  try {
    return fs
      .readdirSync(dir, { withFileTypes: true })
      .filter(e => e.isDirectory() && name.test(e.name))
      .map(e => path.join(dir, e.name));
  } catch {
    return [];
  }
}

function mtimeOf(p: string): number {
  try {
    return fs.statSync(p).mtimeMs;
  } catch {
    return 0;
  }
}

function rmdirQuiet(p: string): void {
  try {
    fs.rmdirSync(p);
  } catch {
    // not empty (a file of the user's, or an entry just committed): kept
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
  /** null: not asked yet; false: the folder is someone else's (nothing is cached in it). */
  private claimed: boolean | null = null;
  private keyValue: CacheKey | null = null;
  /** Leased outputs (hard links in this process's lease folders) → the entry they came from. */
  private readonly leased = new Map<string, string>();

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
    // Nothing is read (or removed as damaged) in a folder that is not a cache of ours.
    if (!hasMarker(this.root, 'build')) return [];
    return subdirs(this.keyDir(hash), ENTRY_ID)
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
      if (!this.claim()) throw new Error('not ours');
      fs.mkdirSync(path.join(this.root, 'tmp'), { recursive: true });
      dir = path.join(this.root, 'tmp', name);
      fs.mkdirSync(dir);
    } catch (e) {
      if (this.claimed === false) {
        this.warn(
          `${this.root} is not an Unroll Lens build cache (it holds other files and no marker of ours): builds are not cached there, and nothing in it is touched`,
        );
      } else this.warn(`the build cache ${this.root} cannot be written (${describeFsError(e)}): builds are not cached`);
      dir = scratchDir(undefined, 'unroll-lens-build-');
      inCache = false;
    }
    this.keep(dir);
    return { dir, inCache };
  }

  /** This installation's key, loaded on first use. */
  get key(): CacheKey {
    if (!this.keyValue) this.keyValue = installationKey(m => this.warn(m));
    return this.keyValue;
  }

  /** Whether the root is a cache of ours, making it one if it is new, empty or of an earlier version's layout. */
  private claim(): boolean {
    if (this.claimed === null) this.claimed = claimFolder(this.root, 'build', legacyTopName);
    return this.claimed;
  }

  /**
   * Hard-links `file` (an entry's output, or a scratch build's about to become one) into a lease
   * folder of this process and returns the link: the caller's path stays valid whatever another
   * process clears or evicts. Null when the file is gone (removed meanwhile: a miss). Where links
   * cannot be made (a read-only cache), the file's own path is returned.
   */
  lease(file: string, entryDir: string): string | null {
    const dir = path.join(
      this.root,
      'tmp',
      `${path.basename(entryDir)}.lease-${process.pid}-${crypto.randomBytes(4).toString('hex')}-${HOST}`,
    );
    const target = path.join(dir, path.basename(file));
    try {
      fs.mkdirSync(path.join(this.root, 'tmp'), { recursive: true });
      fs.mkdirSync(dir);
    } catch {
      return fs.existsSync(file) ? file : null;
    }
    this.keep(dir);
    try {
      fs.linkSync(file, target);
    } catch (e) {
      if (errCode(e) === 'ENOENT') {
        this.discard(dir);
        return null;
      }
      try {
        fs.copyFileSync(file, target); // a file system without hard links
      } catch {
        this.discard(dir);
        return fs.existsSync(file) ? file : null;
      }
    }
    // The rest of the entry beside it (the variant's source, its listing): a program's folder
    // looks the same leased as in the entry, for a launcher or tool that reads beside it.
    // Best effort: the output alone is what the caller asked for.
    try {
      // (The folder the output lies in: the entry, or the scratch build about to become it.)
      const from = path.dirname(file);
      for (const e of fs.readdirSync(from, { withFileTypes: true }))
        if (e.isFile() && e.name !== path.basename(file))
          try {
            fs.linkSync(path.join(from, e.name), path.join(dir, e.name));
          } catch {
            /* gone meanwhile, or no hard links here: the output is still leased */
          }
    } catch {
      /* the entry folder went away: the output link keeps its bytes */
    }
    this.leased.set(target, entryDir);
    return target;
  }

  /** Gives up a lease that turned out unusable (its entry was damaged). */
  unlease(leasedFile: string): void {
    if (!this.leased.delete(leasedFile)) return;
    this.discard(path.dirname(leasedFile));
  }

  /** The entry a build's output belongs to (listings are cached beside it there), leased or not. */
  entryOf(outputPath: string): string {
    return this.leased.get(outputPath) ?? path.dirname(outputPath);
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
   * folder, or null when another process put the same entry there first (the scratch folder is
   * then still the caller's: it discards it once it has read theirs).
   * Throws on a failure of the disk.
   */
  commit(scratch: string, hash: string, id: string): string | null {
    const keyDir = this.keyDir(hash);
    const dest = path.join(keyDir, id);
    // A clear in another process may remove the (empty) key folder between mkdir and rename.
    for (let attempt = 0; ; attempt++) {
      fs.mkdirSync(keyDir, { recursive: true });
      try {
        fs.renameSync(scratch, dest);
        break;
      } catch (e) {
        const code = errCode(e);
        // The caller reads that one, or removes it when it does not hold and commits again.
        if (code === 'ENOTEMPTY' || code === 'EEXIST') return null;
        if (code !== 'ENOENT' || attempt >= 20 || !fs.existsSync(scratch)) throw e;
      }
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

  /** Every entry (a folder <ab>/<key hash>/<entry id> of our layout) with its size and last use. */
  entries(): CacheEntryInfo[] {
    const out: CacheEntryInfo[] = [];
    for (const shard of subdirs(this.root, SHARD)) {
      for (const keyDir of subdirs(shard, KEY_DIR)) {
        if (!path.basename(keyDir).startsWith(path.basename(shard))) continue;
        for (const dir of subdirs(keyDir, ENTRY_ID)) {
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
        if (TMP_NAME.test(name) && deadHere(name)) rmQuiet(path.join(tmp, name));
      }
    } catch {
      // no tmp folder
    }
    const trash = path.join(this.root, 'trash');
    try {
      for (const name of fs.readdirSync(trash)) {
        if (TRASH_NAME.test(name) && deadHere(name)) rmQuiet(path.join(trash, name));
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
    if (!this.maxBytes || !hasMarker(this.root, 'build')) return;
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

  /**
   * Deletes every entry (through trash/; builds in hand are leased, so their callers keep them) and
   * returns what went. Only in a folder with our marker (else NotOurCacheError: nothing deleted),
   * and only names of our layout: a file the user put inside stays.
   */
  clear(): CacheInfo {
    if (!requireOurs(this.root, 'build')) return { location: this.root, entries: 0, bytes: 0 };
    const all = this.entries();
    const before = { location: this.root, entries: all.length, bytes: all.reduce((s, e) => s + e.bytes, 0) };
    for (const e of all) this.remove(e.dir);
    this.sweepLeftovers();
    // Empty key and shard folders go too (a committer that loses one makes it again).
    for (const shard of subdirs(this.root, SHARD)) {
      for (const keyDir of subdirs(shard, KEY_DIR)) rmdirQuiet(keyDir);
      rmdirQuiet(shard);
    }
    this.approxBytes = null;
    return before;
  }

  // --- Files added to an entry after it was committed (disassembly listings) ---------------------

  /** What a listing's check file must hold: its size and the key's MAC over its place in the cache and its bytes. */
  private sidecarCheck(file: string, bytes: Buffer): string {
    const place = path.relative(this.root, file).split(path.sep).join('/');
    return `${bytes.length} ${this.key.mac('listing', place, bytes)}\n`;
  }

  /** A file written beside an entry's output by writeSidecar, if intact and ours; a damaged one is deleted. */
  readSidecar(file: string): string | null {
    let text: Buffer;
    let check: string;
    try {
      check = readCacheFile(`${file}.sha256`, 200).toString('utf8');
      const size = Number(/^(\d+) /.exec(check)?.[1] ?? -1);
      if (size < 0 || size > MAX_LISTING_BYTES) throw new Error('no size');
      text = readCacheFile(file, size);
    } catch (e) {
      if (errCode(e) === 'ENOENT') return null;
      text = Buffer.alloc(0);
      check = '';
    }
    if (check && sameMac(this.sidecarCheck(file, text), check)) return text.toString('utf8');
    // Cut, garbled, edited or not ours (or a writer between its two renames): not used; the next writer replaces it.
    if (path.basename(path.dirname(file)).match(ENTRY_ID)) for (const f of [file, `${file}.sha256`]) rmQuiet(f);
    return null;
  }

  /** Writes a file beside an entry's output, atomically; a failure leaves nothing and is reported. */
  writeSidecar(file: string, text: string): void {
    const suffix = `.tmp-${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
    const bytes = Buffer.from(text, 'utf8');
    const parts: [string, string, Buffer | string][] = [
      [file, file + suffix, bytes],
      [`${file}.sha256`, `${file}.sha256${suffix}`, this.sidecarCheck(file, bytes)],
    ];
    try {
      for (const [, tmp, data] of parts) this.writeFile(tmp, data);
      for (const [dest, tmp] of parts) fs.renameSync(tmp, dest);
    } catch (e) {
      for (const [, tmp] of parts) rmQuiet(tmp);
      // The entry was cleared or evicted meanwhile: nothing to cache the listing beside.
      if (errCode(e) === 'ENOENT' && !fs.existsSync(path.dirname(file))) return;
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
