// The one way Unroll Lens writes a file into a folder it does not own outright (a workspace, the
// folder of a --report, a cache folder): never through a symbolic link that leads out of that
// folder, never into a FIFO or device, never half a file. A repository is untrusted input, and a
// `.unroll-lens -> /home/user/.ssh` link planted in it must not turn `sweep --save` into a write
// there. Each folder on the way is lstat'ed (a link is followed only when its real path stays
// inside the root's real path), the file is created under a fresh temporary name with
// O_CREAT|O_EXCL|O_NOFOLLOW in its final folder, then renamed (or, for names that must not be
// replaced, hard-linked) onto its name. Every failure is a SafeWriteError saying what and why.
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';

export type SafeWriteRefusal =
  /** The target, after `..` and links, is not inside the root. */
  | 'outside-root'
  /** A link on the way leads out of the root, or the file itself is a link. */
  | 'symlink'
  /** Something on the way that should be a folder is a file, FIFO, device… */
  | 'not-a-folder'
  /** The file exists and is not a regular file (a folder, FIFO, socket, device). */
  | 'not-a-file'
  /** The file exists and the caller may not replace it (not ours, or a name that must stay unique). */
  | 'exists'
  /** No file name, a NUL byte, or an empty root. */
  | 'bad-path'
  /** The file system said no (permission, full disk, read-only, name too long…). */
  | 'io';

export class SafeWriteError extends Error {
  constructor(
    readonly refusal: SafeWriteRefusal,
    message: string,
  ) {
    super(message);
    this.name = 'SafeWriteError';
  }
}

export interface SafeWriteOptions {
  /**
   * What to do when the file exists: `replace` renames over it; `keep` refuses (the name must be
   * new: link() fails on an existing name, so two writers cannot both take it). A function is asked
   * with the existing file's path (a regular file, not a link) and replaces only when it returns true.
   */
  existing?: 'replace' | 'keep' | ((file: string) => boolean);
  /** Permission bits of a new file (before the umask). */
  mode?: number;
  /**
   * Create missing folders between the root and the file (default). With false nothing is created:
   * safeTargetPath then only checks the part that exists (a check before any work is done).
   */
  createFolders?: boolean;
  /** fsync the file before it takes its name (default true: a crash leaves the old file or the new one). */
  fsync?: boolean;
}

const O_NOFOLLOW = fs.constants.O_NOFOLLOW ?? 0;

function isInside(root: string, p: string): boolean {
  const rel = path.relative(root, p);
  return rel === '' || (!rel.startsWith('..' + path.sep) && rel !== '..' && !path.isAbsolute(rel));
}

function ioError(e: unknown, what: string): SafeWriteError {
  if (e instanceof SafeWriteError) return e;
  const err = e as NodeJS.ErrnoException;
  return new SafeWriteError('io', `cannot write ${what}: ${err.code ? `${err.code}: ` : ''}${err.message ?? String(e)}`);
}

function lstatOrNull(p: string): fs.Stats | null {
  try {
    return fs.lstatSync(p);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/** The root's real path; it must exist and be a folder (following links: the user chose it). */
function realRoot(root: string): string {
  if (typeof root !== 'string' || !root || root.includes('\0')) throw new SafeWriteError('bad-path', `bad folder ${JSON.stringify(root)}`);
  let real: string;
  try {
    real = fs.realpathSync(path.resolve(root));
  } catch (e) {
    throw ioError(e, `into ${root}`);
  }
  if (!fs.statSync(real).isDirectory()) throw new SafeWriteError('not-a-folder', `${root} is not a folder`);
  return real;
}

/**
 * The target's path as components below the root: `target` may be relative (to the root) or
 * absolute (under the root as given, or under its real path); `..` is resolved lexically here and
 * never handed to the kernel, so `link/../x` means the root's own `x`.
 */
function componentsBelow(root: string, rootReal: string, target: string): string[] {
  if (typeof target !== 'string' || target.includes('\0')) throw new SafeWriteError('bad-path', `bad file name ${JSON.stringify(target)}`);
  const abs = path.resolve(root, target);
  const base = isInside(path.resolve(root), abs) ? path.resolve(root) : isInside(rootReal, abs) ? rootReal : null;
  if (base === null) throw new SafeWriteError('outside-root', `${target} is outside ${root}: Unroll Lens writes only inside it`);
  const parts = path.relative(base, abs).split(path.sep).filter(Boolean);
  if (!parts.length) throw new SafeWriteError('bad-path', `${target} names the folder ${root} itself, not a file in it`);
  return parts;
}

/**
 * The real path of the folder `parts` names below `rootReal`, each component checked with lstat:
 * a link is followed only when it resolves inside the root; missing folders are created (one
 * mkdir per component, never recursive through a link) when `create`.
 */
function walkFolders(rootReal: string, parts: string[], create: boolean, shown: string): string {
  let cur = rootReal;
  for (const [i, part] of parts.entries()) {
    const next = path.join(cur, part);
    let st = lstatOrNull(next);
    if (!st) {
      // Checking only: nothing below a missing folder exists, so nothing there can be a link.
      if (!create) return path.join(cur, ...parts.slice(i));
      try {
        fs.mkdirSync(next);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
      st = fs.lstatSync(next);
    }
    if (st.isSymbolicLink()) {
      let real: string;
      try {
        real = fs.realpathSync(next);
      } catch (e) {
        throw new SafeWriteError('symlink', `refusing to write ${shown}: ${next} is a broken or looping link (${(e as Error).message})`);
      }
      if (!isInside(rootReal, real))
        throw new SafeWriteError('symlink', `refusing to write ${shown}: ${next} is a link to ${real}, outside ${rootReal}`);
      if (!fs.statSync(real).isDirectory()) throw new SafeWriteError('not-a-folder', `cannot write ${shown}: ${next} is not a folder`);
      cur = real;
    } else if (st.isDirectory()) {
      cur = next;
    } else {
      throw new SafeWriteError('not-a-folder', `cannot write ${shown}: ${next} is not a folder`);
    }
  }
  return cur;
}

/** Creates `tmp` (never an existing name, never through a link) holding `data`, flushed. */
function writeFresh(tmp: string, data: string | Buffer, mode: number, sync: boolean): void {
  const fd = fs.openSync(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | O_NOFOLLOW, mode);
  try {
    fs.writeFileSync(fd, data);
    if (sync) fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Checks where `target` would be written, creating missing folders when asked; returns the real
 * path the file would get. Used to refuse an output before any work is done.
 */
export function safeTargetPath(root: string, target: string, o: SafeWriteOptions = {}): string {
  const shown = String(target);
  try {
    const rootReal = realRoot(root);
    const parts = componentsBelow(root, rootReal, target);
    const name = parts.pop()!;
    const folder = walkFolders(rootReal, parts, o.createFolders ?? true, shown);
    const file = path.join(folder, name);
    checkExisting(file, shown, o.existing ?? 'replace');
    if (o.createFolders === false) checkWritableFolder(folder, shown);
    return file;
  } catch (e) {
    throw ioError(e, shown);
  }
}

/** The nearest existing folder at or above `folder` is one we may create files in. */
function checkWritableFolder(folder: string, shown: string): void {
  let dir = folder;
  while (!lstatOrNull(dir)) dir = path.dirname(dir);
  try {
    fs.accessSync(dir, fs.constants.W_OK | fs.constants.X_OK);
  } catch {
    throw new SafeWriteError('io', `cannot write ${shown}: the folder ${dir} is not writable`);
  }
}

function checkExisting(file: string, shown: string, existing: SafeWriteOptions['existing']): void {
  const st = lstatOrNull(file);
  if (!st) return;
  if (st.isSymbolicLink()) throw new SafeWriteError('symlink', `refusing to write ${shown}: ${file} is a link`);
  if (!st.isFile()) throw new SafeWriteError('not-a-file', `refusing to write ${shown}: ${file} exists and is not a regular file`);
  if (existing === 'keep' || (typeof existing === 'function' && !existing(file)))
    throw new SafeWriteError('exists', `refusing to overwrite ${shown}: it exists and was not written by Unroll Lens`);
}

/**
 * Writes `data` to `target` inside `root` as the module comment says; returns the file's real
 * path. With `existing: 'keep'` the name must be new (EEXIST becomes an 'exists' refusal).
 */
export function safeWriteFile(root: string, target: string, data: string | Buffer, o: SafeWriteOptions = {}): string {
  return placeFile(root, target, o, tmp => writeFresh(tmp, data, o.mode ?? 0o644, o.fsync ?? true));
}

/** Copies the file `source` (ours: an ncu report in a run folder) to `target` inside `root`, as safeWriteFile writes. */
export function safeCopyFile(root: string, target: string, source: string, o: SafeWriteOptions = {}): string {
  // COPYFILE_EXCL: the temporary name is created, never opened through a link planted under it.
  return placeFile(root, target, o, tmp => fs.copyFileSync(source, tmp, fs.constants.COPYFILE_EXCL));
}

/** The temporary name a file is written under before it takes `name`: `.<name>.<pid>-<12 hex>.tmp`. */
function temporaryName(name: string): string {
  return `.${name.slice(0, 64)}.${process.pid}-${crypto.randomBytes(6).toString('hex')}.tmp`;
}

/** Whether `name` is one temporaryName gives (what a writer killed between its write and its rename leaves). */
export function isTemporaryName(name: string): boolean {
  return /^\..+\.\d+-[0-9a-f]{12}\.tmp$/.test(name);
}

/** Checks the target, fills a fresh temporary file beside it, then gives it the target's name. */
function placeFile(root: string, target: string, o: SafeWriteOptions, fill: (tmp: string) => void): string {
  const shown = String(target);
  let tmp: string | null = null;
  try {
    const file = safeTargetPath(root, target, o);
    const folder = path.dirname(file);
    tmp = path.join(folder, temporaryName(path.basename(file)));
    fill(tmp);
    if (o.existing === 'keep') {
      try {
        fs.linkSync(tmp, file);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw new SafeWriteError('exists', `refusing to overwrite ${shown}: it exists`);
        // A file system without hard links: rename, after one more look that the name is free.
        if (lstatOrNull(file)) throw new SafeWriteError('exists', `refusing to overwrite ${shown}: it exists`);
        fs.renameSync(tmp, file);
        tmp = null;
      }
    } else {
      // The folder could have changed since the check: look again right before the rename, which
      // replaces a link itself (never what it points to).
      checkExisting(file, shown, o.existing ?? 'replace');
      fs.renameSync(tmp, file);
      tmp = null;
    }
    return file;
  } catch (e) {
    throw ioError(e, shown);
  } finally {
    if (tmp) fs.rmSync(tmp, { force: true });
  }
}

/** Creates (if missing) the folder `target` inside `root` under the same rules; returns its real path. */
export function safeMkdir(root: string, target: string): string {
  const shown = String(target);
  try {
    const rootReal = realRoot(root);
    const abs = path.resolve(root, target);
    if (abs === path.resolve(root) || abs === rootReal) return rootReal;
    return walkFolders(rootReal, componentsBelow(root, rootReal, target), true, shown);
  } catch (e) {
    throw ioError(e, shown);
  }
}

/**
 * The first `max` bytes of a regular file, opened without following a link and without blocking
 * on a FIFO; null when it is not a regular file or cannot be read. For "did we write this?" checks.
 */
export function readHead(file: string, max: number): Buffer | null {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | O_NOFOLLOW | (fs.constants.O_NONBLOCK ?? 0));
  } catch {
    return null;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return null;
    const buf = Buffer.alloc(Math.min(max, st.size + 1));
    max = buf.length;
    let n = 0;
    for (let got; n < max && (got = fs.readSync(fd, buf, n, max - n, n)) > 0;) n += got;
    return buf.subarray(0, n);
  } catch {
    return null;
  } finally {
    fs.closeSync(fd);
  }
}
