// A persistent cache of answers computed from files (a scan's analysis of a source file): each
// entry records the hash of its input and every file the computation read (sha256 of the bytes)
// or looked for (whether a regular file was there). An entry answers only while every one of
// them is as recorded, so an edit by anyone (another editor, a `git checkout`, a header created
// earlier on the include path) is a miss, never a stale answer; dates are not trusted.
//
// Several processes share one folder: an entry is written whole under a temporary name and
// renamed into place (a reader sees the old entry or the new one, never half of one); entries
// are sealed with this installation's key (cacheEntry.ts), so one edited or planted by anyone
// else is a miss. The folder carries our marker (cacheFolder.ts); clearing and pruning delete
// only entry files of our layout in a marked folder.
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { installationKey } from './cacheKey';
import { DAMAGED, FOREIGN, readCacheFile, seal, unseal } from './cacheEntry';
import { claimFolder, ownership, requireOurs, type CacheKind } from './cacheFolder';
import { READ_CAPS, readBoundedBuffer } from './boundedRead';

/** What a computation depended on besides its input. */
export interface FileDependencies {
  /** Files read: path → sha256 of their bytes, null when it could not be read. */
  read: [string, string | null][];
  /** Paths looked for: whether each was a regular file. */
  probed: [string, boolean][];
}

/**
 * On disk, grouped by folder (a library's headers live in a few dozen): [dir, names, states],
 * a state being the file's hash (HASH_CHARS of its sha256; '' when it could not be read), 1 (a
 * regular file), 0 (no regular file) or 2 (nothing at all: a missing folder stands for every
 * path looked for under it, so a toolkit's dozens of misses in one absent folder are one).
 */
export type PackedDependencies = [string, string[], (string | 0 | 1 | 2)[]][];

/** 128 bits of sha256: a changed file is told from the old one, the list stays small. */
const HASH_CHARS = 32;

interface Entry {
  input: string;
  deps: PackedDependencies;
  /** The answer, base64. */
  value: string;
}

const FORMAT = 1;
const SHARD = /^[0-9a-f]{2}$/;
const ENTRY_FILE = /^[0-9a-f]{64}\.json$/;
const TMP_FILE = /^[0-9a-f]{64}\.json\.\d+\.[0-9a-f]{8}\.tmp$/;
/** An entry holds one file's analysis and its dependency list; a bigger file is not ours. */
const MAX_ENTRY_BYTES = 64 * 1024 ** 2;
/** A temporary entry file this old was left by a process that died before renaming it. */
const STALE_TMP_MS = 60 * 60 * 1000;
/** Total size kept by default: past it, the least recently used entries go (prune). */
const DEFAULT_DEPENDENT_CACHE_BYTES = 256 * 1024 ** 2;

/** Whether anything (file, folder, link target) is at `p`. */
function existsNow(p: string): boolean {
  try {
    fs.statSync(p);
    return true;
  } catch {
    return false;
  }
}

/**
 * Dependencies as stored, made where the computation ran (a scan's worker thread): folders are
 * checked once per packer.
 */
export class DependencyPacker {
  private readonly folders = new Map<string, boolean>();
  /** Each path's folder and name (the same strings each time: their hashes are computed once). */
  private readonly split = new Map<string, [string, string]>();

  private folderExists(dir: string): boolean {
    let e = this.folders.get(dir);
    if (e === undefined) this.folders.set(dir, (e = existsNow(dir)));
    return e;
  }

  private parts(p: string): [string, string] {
    let s = this.split.get(p);
    if (!s) this.split.set(p, (s = [path.dirname(p), path.basename(p)]));
    return s;
  }

  pack(d: FileDependencies): PackedDependencies {
    const byDir = new Map<string, Map<string, string | 0 | 1 | 2>>();
    const add = ([dir, name]: [string, string], state: string | 0 | 1 | 2) => {
      let names = byDir.get(dir);
      if (!names) byDir.set(dir, (names = new Map()));
      names.set(name, state);
    };
    const hashed = new Set<string>();
    // A file read that could not be read is stored as '' (hashNow's answer for it): read again to check.
    for (const [p, sha] of d.read) {
      add(this.parts(p), sha ? sha.slice(0, HASH_CHARS) : '');
      if (sha) hashed.add(p);
    }
    for (const [p, isFile] of d.probed) {
      // A file whose bytes are checked is a regular file: its hash says so.
      if (isFile) {
        if (!hashed.has(p)) add(this.parts(p), 1);
        continue;
      }
      // Looked for and not there. When its folder is missing now, the highest missing folder above
      // it stands for it (while that is missing, so is the file); else the path itself.
      const at = this.parts(p);
      if (this.folderExists(at[0])) {
        add(at, 0);
        continue;
      }
      let top = this.parts(at[0]);
      while (top[0] !== path.dirname(top[0]) && !this.folderExists(top[0])) top = this.parts(top[0]);
      add(top, 2);
    }
    return [...byDir].map(([dir, names]) => [dir, [...names.keys()], [...names.values()]]);
  }
}

function validEntry(o: unknown): o is Entry {
  const e = o as Partial<Entry>;
  return !!e && typeof e === 'object' && typeof e.input === 'string' && typeof e.value === 'string' && Array.isArray(e.deps);
}

export class DependentCache {
  private claimed: boolean | null = null;
  /** This process's view of each path (a scan checks each header once), by folder then name: hashes, regular files, anything there. */
  private readonly hashes = new Map<string, Map<string, string>>();
  private readonly files = new Map<string, Map<string, boolean>>();
  private readonly things = new Map<string, Map<string, boolean>>();

  /** `purpose`: what the answers are (part of each entry's seal: a scan entry never answers for anything else). */
  constructor(
    readonly dir: string,
    private readonly kind: CacheKind,
    private readonly purpose: string,
  ) {}

  private fileOf(key: string): string {
    return path.join(this.dir, key.slice(0, 2), `${key}.json`);
  }

  /** The memo of `memo` for folder `dir`, `compute`d (from the joined path) on first use. */
  private static now<T>(memo: Map<string, Map<string, T>>, dir: string, name: string, compute: (p: string) => T): T {
    let names = memo.get(dir);
    if (!names) memo.set(dir, (names = new Map()));
    let v = names.get(name);
    if (v === undefined) names.set(name, (v = compute(path.join(dir, name))));
    return v;
  }

  /** HASH_CHARS of the sha256 of the file's bytes now, '' when it cannot be read as a header would be (missing, not a regular file, too large). */
  private static hashNow(p: string): string {
    try {
      return crypto
        .createHash('sha256')
        .update(readBoundedBuffer(p, { maxBytes: READ_CAPS.header, what: 'header' }))
        .digest('hex')
        .slice(0, HASH_CHARS);
    } catch {
      return '';
    }
  }

  private static isFileNow(p: string): boolean {
    try {
      return fs.statSync(p).isFile();
    } catch {
      return false;
    }
  }

  private holds(deps: PackedDependencies): boolean {
    for (const group of deps) {
      if (!Array.isArray(group)) return false;
      const [dir, names, states] = group;
      if (typeof dir !== 'string' || !Array.isArray(names) || !Array.isArray(states) || names.length !== states.length) return false;
      for (let i = 0; i < names.length; i++) {
        const name = names[i];
        const state = states[i];
        if (typeof name !== 'string') return false;
        const ok =
          typeof state === 'string'
            ? DependentCache.now(this.hashes, dir, name, DependentCache.hashNow) === state
            : state === 2
              ? !DependentCache.now(this.things, dir, name, existsNow)
              : DependentCache.now(this.files, dir, name, DependentCache.isFileNow) === (state === 1);
        if (!ok) return false;
      }
    }
    return true;
  }

  /**
   * The answer stored under `key` when it was computed from an input hashing to `input` and
   * every dependency is as it was; null otherwise (none, damaged, another installation's, stale).
   */
  get(key: string, input: string): Buffer | null {
    const file = this.fileOf(key);
    let text: string;
    try {
      text = readCacheFile(file, MAX_ENTRY_BYTES).toString('utf8');
    } catch {
      return null;
    }
    const body = unseal(installationKey(), FORMAT, this.purpose, [key], text);
    if (body === DAMAGED || body === FOREIGN || !validEntry(body) || body.input !== input || !this.holds(body.deps)) return null;
    try {
      // Used now: the last to be pruned.
      const now = new Date();
      fs.utimesSync(file, now, now);
    } catch {
      /* removed meanwhile: the answer read stands */
    }
    return Buffer.from(body.value, 'base64');
  }

  /**
   * Stores `value` as the answer for `key` from an input hashing to `input`. Call it only with a
   * complete answer. A cache that cannot be written costs the next run its work, nothing else.
   */
  put(key: string, input: string, deps: PackedDependencies, value: Buffer): void {
    const file = this.fileOf(key);
    const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
    try {
      if (this.claimed === null) this.claimed = claimFolder(this.dir, this.kind, e => e.isDirectory() && SHARD.test(e.name));
      if (!this.claimed) return;
      fs.mkdirSync(path.dirname(file), { recursive: true });
      const entry: Entry = { input, deps, value: value.toString('base64') };
      fs.writeFileSync(tmp, seal(installationKey(), FORMAT, this.purpose, [key], entry), { flag: 'wx' });
      fs.renameSync(tmp, file);
    } catch {
      fs.rmSync(tmp, { force: true });
    }
  }

  /** False when the folder is someone else's (it holds other files and no marker of ours): nothing is written there. */
  get usable(): boolean {
    return this.claimed !== false;
  }

  /** The entry files of our layout (and temporary ones) under the folder. */
  private ownFiles(pattern: RegExp): string[] {
    const out: string[] = [];
    let shards: fs.Dirent[] = [];
    try {
      shards = fs.readdirSync(this.dir, { withFileTypes: true }).filter(e => e.isDirectory() && SHARD.test(e.name));
    } catch {
      /* no folder yet: empty */
    }
    for (const s of shards) {
      try {
        for (const e of fs.readdirSync(path.join(this.dir, s.name), { withFileTypes: true }))
          if (e.isFile() && pattern.test(e.name) && e.name.startsWith(s.name)) out.push(path.join(this.dir, s.name, e.name));
      } catch {
        /* removed meanwhile */
      }
    }
    return out;
  }

  private sizes(): { file: string; bytes: number; used: number }[] {
    const out: { file: string; bytes: number; used: number }[] = [];
    for (const file of this.ownFiles(ENTRY_FILE)) {
      try {
        const st = fs.lstatSync(file);
        out.push({ file, bytes: st.size, used: st.mtimeMs });
      } catch {
        /* removed meanwhile */
      }
    }
    return out;
  }

  info(): { location: string; entries: number; bytes: number } {
    const s = this.sizes();
    return { location: this.dir, entries: s.length, bytes: s.reduce((n, e) => n + e.bytes, 0) };
  }

  /**
   * After entries were written (by this process's threads): when the folder holds more than
   * `maxBytes`, deletes the least recently used entries down to 80 % of it (another process
   * reading one meanwhile misses). Only in a folder with our marker. Returns how many were deleted.
   */
  prune(maxBytes = DEFAULT_DEPENDENT_CACHE_BYTES): number {
    if (ownership(this.dir, this.kind) !== 'ours') return 0;
    // A temporary file left by a process killed between its write and its rename (a write takes
    // milliseconds: one an hour old is nobody's any more).
    for (const f of this.ownFiles(TMP_FILE)) {
      try {
        if (Date.now() - fs.lstatSync(f).mtimeMs > STALE_TMP_MS) fs.rmSync(f, { force: true });
      } catch {
        /* removed meanwhile */
      }
    }
    const s = this.sizes();
    let total = s.reduce((n, e) => n + e.bytes, 0);
    if (total <= maxBytes) return 0;
    let gone = 0;
    for (const e of s.sort((a, b) => a.used - b.used)) {
      if (total <= maxBytes * 0.8) break;
      fs.rmSync(e.file, { force: true });
      total -= e.bytes;
      gone++;
    }
    return gone;
  }

  /**
   * Deletes every entry: only in a folder with our marker (else NotOurCacheError, nothing
   * deleted), only files of our layout.
   */
  clear(): { location: string; entries: number; bytes: number } {
    const before = this.info();
    if (!requireOurs(this.dir, this.kind)) return { ...before, entries: 0, bytes: 0 };
    for (const f of [...this.ownFiles(ENTRY_FILE), ...this.ownFiles(TMP_FILE)]) fs.rmSync(f, { force: true });
    for (const s of fs.readdirSync(this.dir, { withFileTypes: true })) {
      if (!s.isDirectory() || !SHARD.test(s.name)) continue;
      try {
        fs.rmdirSync(path.join(this.dir, s.name));
      } catch {
        /* not empty: a file of the user's, or an entry just written */
      }
    }
    return before;
  }
}
