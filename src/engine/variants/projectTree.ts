// A project's own build and run for a benchmark (issue 39): every variant is built by the
// project's build command in a copy of its source tree that we own (`<cache>/projects/…/tree`),
// never in the user's tree or build folder. The copy stays between runs, so after its first build
// a variant costs what the build's own incremental rebuild of the changed file costs. It is
// brought up to date with the source tree before each bench (a manifest of what we copied, so a
// file edited by anyone is copied again and a file we wrote a variant into is restored), one
// process at a time per copy (a lock with its owner's pid; a second bench takes another copy).
// What we never copy: version-control folders, CMake build folders (their caches name the
// original tree's absolute paths: a build there would write into the user's build folder), links
// that lead out of the tree, FIFOs and devices.
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { SafeWriteError, safeCopyFile, safeMkdir, safeWriteFile } from '../base/safeWrite';
import type { ProcessRunner } from '../toolchain/process';

/** The project's commands, as the user gave them (shell command lines, run in the copy's root). */
export interface ProjectCommands {
  /** The source tree copied (the CLI's --project-root, the editor's workspace folder). */
  root: string;
  build: string;
  run: string;
  /** Run after each variant's run with UNROLL_LENS_STDOUT and UNROLL_LENS_BASELINE_STDOUT: exit 0 says it agrees. */
  check: string | null;
}

/** A benchmark through the project's build and run: the copy and the commands. */
export interface ProjectRun {
  /** The copies variants are built in: as many variants build at once (one each), each copy's first build building everything. */
  trees: ProjectTree[];
  commands: ProjectCommands;
  /** Per build of a variant, milliseconds. */
  buildTimeoutMs: number;
}

/** Where the project copies live: beside the build cache `cacheDir` (as the measurements are). */
export function projectsDirFor(cacheDir: string): string {
  return path.join(path.dirname(cacheDir), 'projects');
}

/**
 * The copies a run builds in (`copies` of them), checked, locked and brought up to date for
 * `file`, with what each sync did; every copy taken is released again when one step fails. Bad
 * commands, a file outside the root or a copy that cannot be made throw ProjectError.
 */
export function openProjectRun(
  commands: ProjectCommands,
  o: { file: string; cacheDir: string; copies: number; buildTimeoutMs: number; signal?: AbortSignal },
): { run: ProjectRun; syncs: TreeSync[] } {
  const run: ProjectRun = { trees: [], commands, buildTimeoutMs: o.buildTimeoutMs };
  const syncs: TreeSync[] = [];
  try {
    checkProjectCommands(commands);
    for (let n = 0; n < o.copies; n++) {
      const tree = ProjectTree.open(commands.root, projectsDirFor(o.cacheDir));
      run.trees.push(tree);
      tree.copyOf(o.file);
      syncs.push(tree.sync(undefined, o.signal));
    }
    return { run, syncs };
  } catch (e) {
    closeProjectRun(run);
    throw e;
  }
}

/** Releases every copy of a project run (they stay for the next run). */
export function closeProjectRun(p: ProjectRun | undefined): void {
  for (const t of p?.trees ?? []) t.close();
}

/** Bad project commands or a tree that cannot be copied: the message says which and why. */
export class ProjectError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProjectError';
  }
}

const NEVER_COPIED = new Set(['.git', '.hg', '.svn', '.unroll-lens']);
/** Copies held at once per source tree (benches of one project running side by side). */
const MAX_COPIES = 8;
export const PROJECT_LIMITS = { files: 200_000, bytes: 8 * 1024 ** 3 };

/** Refuses commands that would reach the user's own tree: they run in a copy, relative to its root. */
export function checkProjectCommands(c: ProjectCommands): void {
  let st: fs.Stats;
  try {
    st = fs.statSync(c.root);
  } catch {
    throw new ProjectError(`project root ${c.root}: no such folder`);
  }
  if (!st.isDirectory()) throw new ProjectError(`project root ${c.root} is not a folder`);
  const roots = new Set([path.resolve(c.root), fs.realpathSync(c.root)]);
  for (const [name, cmd] of [
    ['build', c.build],
    ['run', c.run],
    ['check', c.check],
  ] as const) {
    if (cmd === null) continue;
    if (!cmd.trim()) throw new ProjectError(`the ${name} command is empty`);
    for (const r of roots)
      if (r !== '/' && cmd.includes(r))
        throw new ProjectError(
          `the ${name} command names the project's own folder (${r}): it runs in a copy of the project, from the copy's root, ` +
            'so it must use paths relative to the project root (e.g. cmake --build build), never the original tree or build folder',
        );
  }
}

interface ManifestEntry {
  /** Size, modification time and inode of the source file when we copied it; dirty: we wrote a variant over the copy. */
  size: number;
  mtimeMs: number;
  ino: number;
  dirty?: boolean;
}

/** What bringing the copy up to date did. */
export interface TreeSync {
  copied: number;
  unchanged: number;
  removed: number;
  /** Paths (relative to the root) left out, with why, for a note. */
  skipped: string[];
  ms: number;
}

/** One build of a variant in the copy. */
export interface ProjectBuildOutcome {
  status: 'ok' | 'failed' | 'timeout' | 'cancelled';
  exitCode: number | null;
  ms: number;
  /** The build's first error lines (failed), else empty. */
  firstErrors: string[];
}

/** The copy's folder for `root` under `projectsDir`: one per source tree (its real path). */
function projectFolder(root: string, projectsDir: string): string {
  const real = fs.realpathSync(root);
  const id = crypto.createHash('sha256').update(real).digest('hex').slice(0, 16);
  return path.join(
    projectsDir,
    `${path
      .basename(real)
      .replace(/[^A-Za-z0-9_.-]/g, '_')
      .slice(0, 40)}-${id}`,
  );
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the lock of one copy slot: the first free one, or one whose owner is gone (killed). */
function lockSlot(base: string): { slot: string; lock: string } {
  fs.mkdirSync(base, { recursive: true });
  for (let n = 0; n < MAX_COPIES; n++) {
    const slot = path.join(base, String(n));
    fs.mkdirSync(slot, { recursive: true });
    const lock = path.join(slot, 'lock');
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        fs.writeFileSync(lock, `${process.pid}\n`, { flag: 'wx' });
        return { slot, lock };
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        const owner = Number.parseInt(fs.readFileSync(lock, 'utf8'), 10);
        // ours (another open copy in this process) or a live process's: the next slot
        if (Number.isFinite(owner) && (owner === process.pid || alive(owner))) break;
        fs.rmSync(lock, { force: true }); // its owner was killed: the copy is ours, and the sync repairs it
      }
    }
  }
  throw new ProjectError(`${MAX_COPIES} benches of this project are running already (copies under ${base} are all locked)`);
}

export class ProjectTree {
  private manifest: Record<string, ManifestEntry> = {};
  private lastWriteMs = 0;

  private constructor(
    /** The user's source tree (real path). */
    readonly root: string,
    /** The copy's root, where the commands run. */
    readonly dir: string,
    private readonly slot: string,
    private readonly lock: string,
  ) {
    try {
      this.manifest = JSON.parse(fs.readFileSync(path.join(slot, 'manifest.json'), 'utf8')) as Record<string, ManifestEntry>;
    } catch {
      this.manifest = {};
    }
  }

  /** Locks a copy of `root` under `projectsDir` (made on first use; beside the build cache). close() releases it. */
  static open(root: string, projectsDir: string): ProjectTree {
    const real = fs.realpathSync(root);
    const { slot, lock } = lockSlot(projectFolder(real, projectsDir));
    const dir = path.join(slot, 'tree');
    fs.mkdirSync(dir, { recursive: true });
    return new ProjectTree(real, fs.realpathSync(dir), slot, lock);
  }

  /** The copy's path of a file of the source tree. Throws for a file outside the tree. */
  copyOf(file: string): string {
    const rel = this.relative(file);
    return path.join(this.dir, rel);
  }

  private relative(file: string): string {
    const real = fs.realpathSync(file);
    const rel = path.relative(this.root, real);
    if (!rel || rel.startsWith('..') || path.isAbsolute(rel))
      throw new ProjectError(`${file} is not inside the project root ${this.root}: pass --project-root with the folder that holds it`);
    return rel;
  }

  /** Brings the copy up to date with the source tree (see the module comment). */
  sync(limits = PROJECT_LIMITS, signal?: AbortSignal): TreeSync {
    try {
      return this.syncOnce(limits, signal);
    } catch (e) {
      if (e instanceof SafeWriteError) throw new ProjectError(`cannot bring the copy ${this.dir} up to date: ${e.message}`);
      throw e;
    }
  }

  private syncOnce(limits: typeof PROJECT_LIMITS, signal?: AbortSignal): TreeSync {
    const t0 = Date.now();
    const out: TreeSync = { copied: 0, unchanged: 0, removed: 0, skipped: [], ms: 0 };
    const seen: Record<string, ManifestEntry> = {};
    let bytes = 0;
    let files = 0;
    const stack = [''];
    // our own folders are never copied into themselves: the copies, and the cache when it lies inside the project
    const ours = [path.dirname(path.dirname(this.slot)), path.dirname(path.dirname(path.dirname(this.slot)))].flatMap(d => {
      try {
        const real = fs.realpathSync(d);
        return real.startsWith(this.root + path.sep) ? [real] : [];
      } catch {
        return [];
      }
    });
    while (stack.length) {
      if (signal?.aborted) throw new ProjectError('cancelled while copying the project');
      const rel = stack.pop()!;
      const abs = path.join(this.root, rel);
      if (rel && fs.existsSync(path.join(abs, 'CMakeCache.txt'))) {
        out.skipped.push(`${rel}/ (a CMake build folder: its cache names the original tree)`);
        continue;
      }
      if (ours.some(o => abs === o || abs.startsWith(o + path.sep))) continue;
      if (rel) {
        // a file or link where the source now has a folder: ours, replaced
        const st = fs.lstatSync(path.join(this.dir, rel), { throwIfNoEntry: false });
        if (st && !st.isDirectory()) fs.rmSync(path.join(this.dir, rel), { force: true });
        safeMkdir(this.dir, rel);
      }
      for (const d of fs.readdirSync(abs, { withFileTypes: true })) {
        if (NEVER_COPIED.has(d.name)) continue;
        const r = rel ? path.join(rel, d.name) : d.name;
        const a = path.join(abs, d.name);
        if (d.isDirectory()) stack.push(r);
        else if (d.isSymbolicLink()) this.copyLink(r, a, out);
        else if (d.isFile()) {
          const st = fs.statSync(a);
          bytes += st.size;
          if (++files > limits.files || bytes > limits.bytes)
            throw new ProjectError(
              `the project under ${this.root} has more than ${limits.files} files or ${(limits.bytes / 1024 ** 3).toFixed(0)} GiB: ` +
                'give --project-root a smaller folder (the one the build needs)',
            );
          const entry: ManifestEntry = { size: st.size, mtimeMs: st.mtimeMs, ino: st.ino };
          const had = this.manifest[r];
          const copy = path.join(this.dir, r);
          const same = had && !had.dirty && had.size === entry.size && had.mtimeMs === entry.mtimeMs && had.ino === entry.ino;
          if ((same && fs.lstatSync(copy, { throwIfNoEntry: false })?.isFile()) || (!had?.dirty && sameBytes(a, copy, st.size)))
            out.unchanged++; // a file touched but not changed (a checkout, a fresh copy) keeps its copy's time: no rebuild
          else {
            // a folder or link where the source now has a file: ours, replaced (rm never follows a link)
            const cst = fs.lstatSync(copy, { throwIfNoEntry: false });
            if (cst && !cst.isFile()) fs.rmSync(copy, { recursive: true, force: true });
            safeCopyFile(this.dir, r, a, { fsync: false });
            out.copied++;
          }
          seen[r] = entry;
        } else out.skipped.push(`${r} (not a regular file)`);
      }
    }
    for (const r of Object.keys(this.manifest)) if (!seen[r] && this.removeCopy(r)) out.removed++;
    this.manifest = seen;
    this.saveManifest();
    out.ms = Date.now() - t0;
    return out;
  }

  /** A link whose target stays inside the tree becomes the same link inside the copy; others are left out. */
  private copyLink(rel: string, abs: string, out: TreeSync): void {
    let target: string;
    try {
      target = fs.realpathSync(abs);
    } catch {
      out.skipped.push(`${rel} (a broken link)`);
      return;
    }
    const inside = path.relative(this.root, target);
    if (!inside || inside.startsWith('..') || path.isAbsolute(inside)) {
      out.skipped.push(`${rel} (a link out of the project, to ${target})`);
      return;
    }
    const copy = path.join(this.dir, rel);
    const want = path.relative(path.dirname(copy), path.join(this.dir, inside));
    const st = fs.lstatSync(copy, { throwIfNoEntry: false });
    if (st?.isSymbolicLink() && fs.readlinkSync(copy) === want) return;
    if (st && !st.isDirectory()) fs.rmSync(copy, { force: true });
    if (st?.isDirectory()) {
      out.skipped.push(`${rel} (a link in the project, a folder in the copy)`);
      return;
    }
    safeMkdir(this.dir, path.dirname(rel) === '.' ? '' : path.dirname(rel));
    fs.symlinkSync(want, copy);
  }

  /** Removes a copy we made whose source is gone; never through a folder that leads out of the copy. */
  private removeCopy(rel: string): boolean {
    const copy = path.join(this.dir, rel);
    try {
      const parent = fs.realpathSync(path.dirname(copy));
      if (parent !== this.dir && !parent.startsWith(this.dir + path.sep)) return false;
      if (!fs.lstatSync(copy).isFile()) return false;
      fs.rmSync(copy);
      return true;
    } catch {
      return false;
    }
  }

  private saveManifest(): void {
    safeWriteFile(this.slot, 'manifest.json', JSON.stringify(this.manifest), { fsync: false });
  }

  /**
   * Writes a variant of the source file `file` into the copy (its modification time after every
   * build output so far: the build sees a change), marked so the next sync restores the original.
   */
  writeVariant(file: string, data: string | Buffer): void {
    const rel = this.relative(file);
    if (this.manifest[rel]) this.manifest[rel] = { ...this.manifest[rel], dirty: true };
    else this.manifest[rel] = { size: -1, mtimeMs: -1, ino: -1, dirty: true };
    this.saveManifest();
    safeWriteFile(this.dir, rel, data, { fsync: false });
    // two variants written within one timestamp tick must still look different to make/ninja
    const now = Math.max(Date.now(), this.lastWriteMs + 10);
    this.lastWriteMs = now;
    fs.utimesSync(path.join(this.dir, rel), now / 1000, now / 1000);
  }

  /** Runs the build command in the copy's root. */
  async build(
    command: string,
    o: { runner: ProcessRunner; timeoutMs: number; signal?: AbortSignal; variant: string; onOutput?: (chunk: string) => void },
  ): Promise<ProjectBuildOutcome> {
    const r = await o.runner('/bin/sh', ['-c', command], {
      cwd: this.dir,
      timeoutMs: o.timeoutMs,
      signal: o.signal,
      env: { UNROLL_LENS_VARIANT: o.variant },
      onOutput: o.onOutput,
    });
    const status = r.cancelled ? 'cancelled' : r.timedOut ? 'timeout' : r.exitCode === 0 && !r.spawnError ? 'ok' : 'failed';
    return {
      status,
      exitCode: r.exitCode,
      ms: r.durationMs,
      firstErrors: status === 'failed' ? firstErrorLines(`${r.stdout}\n${r.stderr}`, r.spawnError) : [],
    };
  }

  /** Releases the copy's lock (the copy stays for the next bench). */
  close(): void {
    try {
      if (fs.readFileSync(this.lock, 'utf8').trim() === String(process.pid)) fs.rmSync(this.lock, { force: true });
    } catch {
      // already gone
    }
  }
}

/** A failed build's first error lines (compiler errors, make's and ninja's failures), else its last lines. */
export function firstErrorLines(output: string, spawnError?: string, max = 8): string[] {
  if (spawnError) return [spawnError];
  const lines = output.split('\n').map(l => l.trimEnd());
  const errors = lines.filter(l => /\berror\b|\bError \d+|^FAILED:|undefined reference|fatal|No rule to make target|CMake Error/i.test(l));
  return (errors.length ? errors : lines.filter(Boolean).slice(-max)).slice(0, max).map(l => (l.length > 300 ? `${l.slice(0, 300)}…` : l));
}

/** Whether the copy holds the source's bytes (a regular file of the same size and content). */
function sameBytes(source: string, copy: string, size: number): boolean {
  const st = fs.lstatSync(copy, { throwIfNoEntry: false });
  if (!st?.isFile() || st.size !== size || size > 64 * 1024 * 1024) return false;
  return fs.readFileSync(source).equals(fs.readFileSync(copy));
}

/** Every copy slot under `projectsDir` (`<project>-<id>/<n>/` holding a manifest.json or a tree/): ours only. */
function copySlots(projectsDir: string): string[] {
  const out: string[] = [];
  for (const p of fs.readdirSync(projectsDir, { withFileTypes: true }).filter(d => d.isDirectory()))
    for (const n of fs
      .readdirSync(path.join(projectsDir, p.name), { withFileTypes: true })
      .filter(d => d.isDirectory() && /^\d+$/.test(d.name))) {
      const slot = path.join(projectsDir, p.name, n.name);
      if (fs.existsSync(path.join(slot, 'manifest.json')) || fs.existsSync(path.join(slot, 'tree'))) out.push(slot);
    }
  return out;
}

function folderBytes(dir: string): number {
  let bytes = 0;
  const stack = [dir];
  while (stack.length) {
    const d = stack.pop()!;
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) stack.push(p);
      else if (e.isFile()) bytes += fs.lstatSync(p).size;
    }
  }
  return bytes;
}

/** The project copies `bench --build` keeps (cache info): how many and their size on disk. */
export function projectCopiesInfo(projectsDir: string): { location: string; copies: number; bytes: number } {
  if (!fs.existsSync(projectsDir)) return { location: projectsDir, copies: 0, bytes: 0 };
  const slots = copySlots(projectsDir);
  return { location: projectsDir, copies: slots.length, bytes: slots.reduce((n, s) => n + folderBytes(s), 0) };
}

/**
 * Deletes the project copies no bench holds (cache clear): a copy whose lock names a live process
 * stays. Only our slot folders are removed, and removal never follows a link out of them.
 */
export function clearProjectCopies(projectsDir: string): { location: string; copies: number; bytes: number; kept: number } {
  const out = { location: projectsDir, copies: 0, bytes: 0, kept: 0 };
  if (!fs.existsSync(projectsDir)) return out;
  for (const slot of copySlots(projectsDir)) {
    let owner = NaN;
    try {
      owner = Number.parseInt(fs.readFileSync(path.join(slot, 'lock'), 'utf8'), 10);
    } catch {
      // no lock: free
    }
    if (Number.isFinite(owner) && alive(owner)) {
      out.kept++;
      continue;
    }
    const bytes = folderBytes(slot);
    fs.rmSync(slot, { recursive: true, force: true });
    out.copies++;
    out.bytes += bytes;
  }
  return out;
}
