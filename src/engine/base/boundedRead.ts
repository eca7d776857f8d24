// Every read of a file a repository or a user names goes through here. A FIFO, a socket or a
// device (/dev/zero) named as a header, a response file, a translation unit or a result file
// would block a read forever or never reach its end; a multi-gigabyte file would exhaust memory.
// So: the file is opened without blocking and checked on the open descriptor (a file swapped for
// a FIFO between a stat and the open cannot hang us), only regular files are read, each up to a
// size cap, and one request (a scan, one server request, one compile command's flags) charges
// every file it reads to a shared budget of files and bytes.
import * as crypto from 'crypto';
import * as fs from 'fs';

export type RefusedReason = 'missing' | 'unreadable' | 'not-a-regular-file' | 'too-large' | 'budget';

export class BoundedReadError extends Error {
  constructor(
    readonly file: string,
    readonly reason: RefusedReason,
    message: string,
  ) {
    super(message);
  }
}

const MiB = 1024 * 1024;

/** Files and bytes one request may read in total, however its files include each other. */
export class ReadBudget {
  files = 0;
  bytes = 0;
  /** The first refusal for want of budget, for the warning that says what was left out. */
  exhausted: string | null = null;

  constructor(
    readonly maxFiles = 20_000,
    readonly maxBytes = 512 * MiB,
  ) {
    if (!(maxFiles >= 0 && maxBytes >= 0)) throw new RangeError(`bad read budget ${maxFiles} files, ${maxBytes} bytes`);
  }

  /** Throws (and remembers) when one more file of `bytes` would overrun the budget. */
  charge(file: string, bytes: number): void {
    if (this.files + 1 > this.maxFiles || this.bytes + bytes > this.maxBytes) {
      const message =
        `${file}: not read, this request already read ${this.files} files (${size(this.bytes)}); ` +
        `its budget is ${this.maxFiles} files and ${size(this.maxBytes)}`;
      this.exhausted ??= message;
      throw new BoundedReadError(file, 'budget', message);
    }
    this.files++;
    this.bytes += bytes;
  }
}

export interface BoundedReadOptions {
  /** Largest file accepted, in bytes. */
  maxBytes: number;
  /** What the file is, for messages ("response file", "result file"). */
  what?: string;
  budget?: ReadBudget;
  /**
   * Follow a link at the file's own name (default true: a user's or a repository's file). False for
   * a shared folder, where a link planted at a name we wrote is someone else's file: refused.
   */
  followLinks?: boolean;
}

/** `1536.0 MiB`, or `16 bytes` under a MiB. */
function size(n: number): string {
  return n >= MiB ? `${(n / MiB).toFixed(1)} MiB` : `${n} bytes`;
}

export function fileKind(st: fs.Stats): string {
  return st.isFIFO()
    ? 'a FIFO (named pipe)'
    : st.isCharacterDevice()
      ? 'a character device'
      : st.isBlockDevice()
        ? 'a block device'
        : st.isSocket()
          ? 'a socket'
          : st.isDirectory()
            ? 'a directory'
            : 'not a regular file';
}

const OPEN_FLAGS = fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | (fs.constants.O_NOCTTY ?? 0);
const O_NOFOLLOW = fs.constants.O_NOFOLLOW ?? 0;

function refuseKind(file: string, what: string, st: fs.Stats): BoundedReadError {
  return new BoundedReadError(file, 'not-a-regular-file', `${what} ${file} is ${fileKind(st)}, not a regular file: refusing to read it`);
}

/** `bytes`: the size fstat gave; absent when the file turned out longer than it said (it grew, or /proc). */
function tooLarge(file: string, what: string, max: number, bytes?: number): BoundedReadError {
  const is = bytes === undefined ? `longer than ${size(max)} (more than its size said)` : size(bytes);
  return new BoundedReadError(file, 'too-large', `${what} ${file} is ${is}; ${what}s over ${size(max)} are refused`);
}

/**
 * The bytes of `file`: a regular file (links followed) of at most `maxBytes`, charged to `budget`.
 * Throws BoundedReadError (with a message naming the file and why) for anything else.
 */
export function readBoundedBuffer(file: string, o: BoundedReadOptions): Buffer {
  const what = o.what ?? 'file';
  if (!(Number.isSafeInteger(o.maxBytes) && o.maxBytes >= 0)) throw new RangeError(`bad size cap ${o.maxBytes}`);
  return withRegularFile(file, what, o.followLinks !== false, (fd, st) => {
    if (st.size > o.maxBytes) throw tooLarge(file, what, o.maxBytes, st.size);
    o.budget?.charge(file, st.size);
    return readAtMost(fd, file, what, st.size, o.maxBytes);
  });
}

/**
 * Opens `file` as the module comment says (a regular file only, without blocking; a link at its
 * name refused unless `follow`) and hands the open descriptor to `use`. Every failure is a
 * BoundedReadError naming the file.
 */
function withRegularFile<T>(file: string, what: string, follow: boolean, use: (fd: number, st: fs.Stats) => T): T {
  // A stat first: opening some devices has effects of its own (a tape rewinds), so they are not opened at all.
  let st: fs.Stats;
  try {
    st = follow ? fs.statSync(file) : fs.lstatSync(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const missing = code === 'ENOENT' || code === 'ENOTDIR';
    throw new BoundedReadError(
      file,
      missing ? 'missing' : 'unreadable',
      `${what} ${file} ${missing ? 'does not exist' : `cannot be read: ${describe(e)}`}`,
    );
  }
  if (!follow && st.isSymbolicLink())
    throw new BoundedReadError(file, 'not-a-regular-file', `${what} ${file} is a symbolic link, not a regular file: refusing to read it`);
  if (!st.isFile()) throw refuseKind(file, what, st);
  let fd: number;
  try {
    fd = fs.openSync(file, OPEN_FLAGS | (follow ? 0 : O_NOFOLLOW));
  } catch (e) {
    throw new BoundedReadError(file, 'unreadable', `${what} ${file} cannot be opened: ${describe(e)}`);
  }
  try {
    // Checked again on the descriptor: the name may have been swapped for a FIFO since the stat.
    st = fs.fstatSync(fd);
    if (!st.isFile()) throw refuseKind(file, what, st);
    return use(fd, st);
  } catch (e) {
    if (e instanceof BoundedReadError) throw e;
    throw new BoundedReadError(file, 'unreadable', `${what} ${file} cannot be read: ${describe(e)}`);
  } finally {
    fs.closeSync(fd);
  }
}

/** The last `bytes` bytes of a regular file (a log read for why a task ended): never the whole of a huge one. */
export function readBoundedTail(file: string, bytes: number, o: Pick<BoundedReadOptions, 'what' | 'followLinks'> = {}): Buffer {
  return withRegularFile(file, o.what ?? 'file', o.followLinks !== false, (fd, st) => {
    const n = Math.min(bytes, st.size);
    const buf = Buffer.alloc(n);
    let got = 0;
    while (got < n) {
      const r = fs.readSync(fd, buf, got, n - got, st.size - n + got);
      if (r <= 0) break;
      got += r;
    }
    return buf.subarray(0, got);
  });
}

/** The sha256 of a regular file of at most `maxBytes`, read as the module comment says (a program, a library we run). */
export function hashBoundedFile(
  file: string,
  o: Pick<BoundedReadOptions, 'maxBytes' | 'what' | 'followLinks'> & {
    /** Each chunk as it is hashed (a copy made of exactly the bytes hashed). */
    onChunk?: (chunk: Buffer) => void;
  },
): string {
  const what = o.what ?? 'file';
  return withRegularFile(file, what, o.followLinks !== false, (fd, st) => {
    if (st.size > o.maxBytes) throw tooLarge(file, what, o.maxBytes, st.size);
    const h = crypto.createHash('sha256');
    const buf = Buffer.allocUnsafe(1 << 20);
    let got = 0;
    for (;;) {
      const n = fs.readSync(fd, buf, 0, buf.length, null);
      if (n <= 0) break;
      got += n;
      if (got > o.maxBytes) throw tooLarge(file, what, o.maxBytes);
      h.update(buf.subarray(0, n));
      o.onChunk?.(buf.subarray(0, n));
    }
    return h.digest('hex');
  });
}

/** Reads to the end, but never more than `max` bytes: a file that grows (or a /proc file that says 0) stops there. */
function readAtMost(fd: number, file: string, what: string, size: number, max: number): Buffer {
  let buf = Buffer.allocUnsafe(Math.min(size, max) + 1);
  let got = 0;
  for (;;) {
    if (got === buf.length) {
      if (got > max) throw tooLarge(file, what, max);
      const bigger = Buffer.allocUnsafe(Math.min(buf.length * 2, max + 1));
      buf.copy(bigger, 0, 0, got);
      buf = bigger;
    }
    const n = fs.readSync(fd, buf, got, buf.length - got, null);
    if (n === 0) break;
    got += n;
  }
  if (got > max) throw tooLarge(file, what, max);
  return buf.subarray(0, got);
}

function describe(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  return err?.code ? `${err.code}` : e instanceof Error ? e.message : String(e);
}

/** readBoundedBuffer decoded (`latin1` for directive scans that must not fail on any byte). */
export function readBoundedText(file: string, o: BoundedReadOptions, encoding: BufferEncoding = 'utf8'): string {
  return readBoundedBuffer(file, o).toString(encoding);
}

/** readBoundedText, or null when the file is refused for any reason (callers that skip what they cannot read). */
export function tryReadBoundedText(file: string, o: BoundedReadOptions, encoding: BufferEncoding = 'utf8'): string | null {
  try {
    return readBoundedText(file, o, encoding);
  } catch (e) {
    if (e instanceof BoundedReadError) return null;
    throw e;
  }
}

/** Caps per kind of file (the largest real ones are far below; see each use). */
export const READ_CAPS = {
  /** A .cu/.cuh/.h source or a translation unit (real ones are a few MB). */
  source: 32 * MiB,
  /** A header read for its directives. */
  header: 8 * MiB,
  /** A response (@file, --options-file) file: a few KB of flags. */
  responseFile: 1 * MiB,
  /** compile_commands.json of a very large tree. */
  compileDatabase: 256 * MiB,
  /** A saved sweep result (.unroll-lens/results/*.json). */
  result: 64 * MiB,
  /** The CUPTI kernel timer's records of one program run (~150 bytes a launch: a million launches). */
  timerRecords: 256 * MiB,
  /** A saved ncu source page with stall samples (--stalls). */
  stallSamples: 256 * MiB,
  /** A Slurm sweep's manifest or queue file on the shared folder (a few MB for thousands of points). */
  slurmState: 64 * MiB,
  /** A program or the CUPTI timer library hashed before it runs (real programs are a few MB to a few hundred). */
  executable: 4096 * MiB,
} as const;
