// A Slurm sweep's files on the shared directory (issue 28). One folder per sweep, named by the hash
// of everything its numbers depend on (source, kernel, space, flags, toolkit, run settings), so
// re-running the same sweep finds it: `results/` holds one sealed file per measured point, written
// whole under a temporary name and renamed (a reader never sees half of one); `queued.json` the
// jobs submitted and their points, so a re-run after the laptop slept waits for tasks still queued
// instead of submitting them twice; `jobs/<job>/` a submission's manifest, script and logs, removed
// once its tasks have ended.
//
// The shared folder is written by everyone in the group (issue 37): whatever is read back from it
// and decides what runs or what is shown (manifest, queue, results, costs, stalls) is sealed with
// this user's installation key (base/cacheKey.ts: the same key that seals the caches), read
// as a regular file only (no link, FIFO or device, size-capped: base/boundedRead.ts), and a manifest
// whose seal fails is refused with its path, never run. Writes go through the safe writer from
// the shared root (no link followed out of it); a submission's folder is removed only when its
// real path is this sweep's jobs/<name>, and then only the files we put there.
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import type { MeasuredOn, RunTiming, SweepVariant } from '../../../schema/types';
import type { CompileFlags } from '../../toolchain/flags';
import { installationKey } from '../../base/cacheKey';
import { BoundedReadError, READ_CAPS, readBoundedBuffer, readBoundedTail } from '../../base/boundedRead';
import { isTemporaryName, safeMkdir, SafeWriteError, safeWriteFile } from '../../base/safeWrite';
import { DAMAGED, FOREIGN, readCacheFile, seal, unseal } from '../../base/cacheEntry';
import type { GpuRunConfig } from '../../gpu/options';
import type { SweepRunner } from '../runners/runner';
import type { SpaceOptions, SweepPoint } from '../space';
import type { UnrollFactor } from '../../variants/factors';

/** What a task needs to rebuild the sweep's GPU runner on its node: the sweep's own options, as data. */
export interface SlurmSweepSpec extends Omit<SpaceOptions, 'factors'> {
  /** The loop axes' factors as JSON holds them (UnrollFactors.toJSON): the task makes them a list again. */
  factors?: UnrollFactor[];
  file: string;
  text: string;
  arch: string;
  flags: CompileFlags;
  /** The build cache (under the shared directory): where the programs were built, and beside it runs/. */
  cacheDir: string;
  kernelFilter?: string;
  compileTimeoutMs?: number;
  gpu: GpuRunConfig;
  /** ncu as found where the sweep was started (a node with the same path uses it; else its own). Nodes need no nvcc. */
  tools: { ncu: string | null };
  /** The folder the sweep was started in; not part of its identity. */
  cwd?: string;
  /** nvcc and ncu versions: part of the sweep's identity. */
  versions: { nvcc: string; ncu: string | null };
}

/** A file built on the submitting machine, and its sha256 when it was: a task runs it only while it still has that hash. */
export interface BuiltFile {
  path: string;
  sha256: string;
}

/** One point as the submitting machine prepared it: its SASS side measured there, its program built there. */
export interface PreparedPoint {
  point: SweepPoint;
  /** The SASS side's variant (status ok), or the file as written's build failure (every task still checks against it). */
  variant: SweepVariant;
  /** Its kernel's machine-code hash: identical code is found across tasks with it. */
  codeHash: string | null;
  /** Its program; null when it failed to build (then `variant` says why). */
  program: BuiltFile | null;
}

/** One submission: the spec, the programs built for it, and per array index the points its task measures. */
export interface SlurmManifest {
  format: 2;
  sweepDir: string;
  spec: SlurmSweepSpec;
  /** The file as written: every task measures it first (usually from the measurement cache) and checks its points against its output. */
  asWritten: PreparedPoint;
  /** The CUPTI timer library (timer cupti), or why it could not be built; null with the ncu timer. */
  timerLibrary: BuiltFile | { problem: string } | null;
  tasks: { index: number; points: PreparedPoint[] }[];
}

/** One measured point as a task leaves it. */
export interface SlurmPointResult {
  id: string;
  variant: SweepVariant;
  /** The SASS code hash (identical code across tasks is found by the submitting side, as a local run does). */
  codeHash: string | null;
  measuredOn: MeasuredOn;
}

/** Jobs submitted for this sweep and not yet seen ended: re-runs wait for them. */
export interface QueuedJob {
  job: string;
  /** Array index → point ids. */
  tasks: Record<string, string[]>;
  /** The submission's folder (manifest, script, logs): removed once every task has ended. */
  folder: string;
  /** When sbatch took it, ms since the epoch (a re-run that waits for it counts its queue time). */
  submittedAt?: number;
}

/** What a task's run cost, as it reports it when it ends (a task killed hard reports nothing). */
export interface SlurmTaskCost {
  job: string;
  host: string;
  /** The task's process start and end, ms since the epoch (the node's clock). */
  startedAt: number;
  endedAt: number;
  cost: Omit<RunTiming, 'wallS' | 'slurm'>;
}

/**
 * Something in the shared folder is not what we wrote (a manifest whose seal fails, a link where
 * our folder was, a FIFO where our file was): the user's to look at (exit 65), never a run.
 */
export class SharedFolderError extends Error {}

const FORMAT = 1;
const PURPOSE = 'slurm-result';
const MANIFEST_PURPOSE = 'slurm-manifest';
const QUEUED_PURPOSE = 'slurm-queued';
const COST_PURPOSE = 'slurm-task-cost';
const STALLS_PURPOSE = 'slurm-source-stalls';
const MAX_RESULT_BYTES = 64 * 1024 ** 2;

const sha = (s: string) => crypto.createHash('sha256').update(s).digest('hex');

/** The sweep's folder under `<shared>/slurm/`: the same for the same sweep (flags and scheduling options aside). */
export function sweepDirFor(sharedRoot: string, spec: SlurmSweepSpec): string {
  const { tools: _tools, cwd: _cwd, ...what } = spec;
  // where the tools are does not change a number; their versions do
  return path.join(sharedRoot, 'slurm', sha(JSON.stringify({ v: FORMAT, ...what })).slice(0, 24));
}

function resultFile(sweepDir: string, id: string): string {
  return path.join(sweepDir, 'results', `${sha(id).slice(0, 32)}.json`);
}

/** The shared root a sweep's folder (`<shared>/slurm/<hash>`) is in: writes never follow a link out of it. */
const sharedRootOf = (sweepDir: string) => path.dirname(path.dirname(sweepDir));

/**
 * Writes `text` to `file` (inside `sweepDir`) whole, through the project's safe writer: a fresh
 * temporary file beside it, synced, renamed into place, never through a link planted on the way
 * from the shared root or at the name (the shared folder is written by every node).
 */
export function writeAtomic(sweepDir: string, file: string, text: string, mode?: number): void {
  const root = sharedRootOf(sweepDir);
  shared(() => safeWriteFile(root, path.relative(root, file), text, mode === undefined ? {} : { mode }));
}

/** Creates `folder` inside the sweep's folder (and the sweep's folder) under the safe writer's rules. */
export function makeSweepFolder(sweepDir: string, folder = sweepDir): void {
  const root = sharedRootOf(sweepDir);
  fs.mkdirSync(root, { recursive: true });
  shared(() => safeMkdir(root, path.relative(root, folder)));
}

/** A refusal of the safe writer (a link out of the shared root, a FIFO at our name) is the shared folder's, said as such. */
function shared<T>(write: () => T): T {
  try {
    return write();
  } catch (e) {
    if (e instanceof SafeWriteError && e.refusal !== 'io') throw new SharedFolderError(`the shared folder: ${e.message}`);
    throw e;
  }
}

export function writeResult(sweepDir: string, r: SlurmPointResult): void {
  writeAtomic(sweepDir, resultFile(sweepDir, r.id), seal(installationKey(), FORMAT, PURPOSE, [r.id], r));
}

/** The point's result, or null: none yet, half-written, edited or written by another installation. */
export function readResult(sweepDir: string, id: string): SlurmPointResult | null {
  let text: string;
  try {
    text = readCacheFile(resultFile(sweepDir, id), MAX_RESULT_BYTES).toString('utf8');
  } catch {
    return null;
  }
  const body = unseal(installationKey(), FORMAT, PURPOSE, [id], text);
  if (body === DAMAGED || body === FOREIGN || !body || typeof body !== 'object') return null;
  const r = body as SlurmPointResult;
  return r.id === id && r.variant?.id === id && typeof r.measuredOn?.host === 'string' ? r : null;
}

const costFile = (sweepDir: string, job: string) => path.join(sweepDir, 'tasks', `${job.replace(/[^0-9_]/g, '')}.json`);

export function writeTaskCost(sweepDir: string, c: SlurmTaskCost): void {
  writeAtomic(sweepDir, costFile(sweepDir, c.job), seal(installationKey(), FORMAT, COST_PURPOSE, [c.job], c));
}

/** A task's reported cost, or null: none (still running, killed hard), edited, or another installation's. */
export function readTaskCost(sweepDir: string, job: string): SlurmTaskCost | null {
  try {
    const text = readCacheFile(costFile(sweepDir, job), MAX_RESULT_BYTES).toString('utf8');
    const c = unseal(installationKey(), FORMAT, COST_PURPOSE, [job], text) as SlurmTaskCost;
    const n = (x: unknown) => typeof x === 'number' && Number.isFinite(x) && x >= 0;
    const k = c && typeof c === 'object' ? c.cost : null;
    return c && c.job === job && n(c.startedAt) && n(c.endedAt) && k && n(k.checkS) && n(k.profileS) && n(k.gpuIdleS) && n(k.gpuRuns)
      ? c
      : null;
  } catch {
    return null;
  }
}

/** The file as written's stalls per source line, as the task that measured it sampled them. */
export type SlurmSourceStalls = Awaited<ReturnType<NonNullable<SweepRunner['sourceStalls']>>>;

const stallsFile = (sweepDir: string) => path.join(sweepDir, 'source-stalls.json');

export function writeSourceStalls(sweepDir: string, s: SlurmSourceStalls): void {
  writeAtomic(sweepDir, stallsFile(sweepDir), seal(installationKey(), FORMAT, STALLS_PURPOSE, [], s));
}

export function readSourceStalls(sweepDir: string): SlurmSourceStalls | null {
  try {
    const text = readCacheFile(stallsFile(sweepDir), MAX_RESULT_BYTES).toString('utf8');
    const s = unseal(installationKey(), FORMAT, STALLS_PURPOSE, [], text) as SlurmSourceStalls;
    return s && typeof s === 'object' && 'lineStalls' in s && 'problem' in s ? s : null;
  } catch {
    return null;
  }
}

export function writeManifest(file: string, m: SlurmManifest): void {
  writeAtomic(m.sweepDir, file, seal(installationKey(), FORMAT, MANIFEST_PURPOSE, [path.resolve(file)], m));
}

/** Reads a file of the sweep's state: a regular file, no link, capped; BoundedReadError otherwise. */
const readState = (file: string, what: string) =>
  readBoundedBuffer(file, { maxBytes: READ_CAPS.slurmState, what, followLinks: false }).toString('utf8');

/**
 * The manifest a task was started with, if this user's key sealed it at this path. Anything else
 * (edited while queued, another user's, not a regular file, too large) is a SharedFolderError
 * naming the file: nothing of it runs.
 */
export function readManifest(file: string): SlurmManifest {
  let text: string;
  try {
    text = readState(file, 'the Slurm manifest');
  } catch (e) {
    if (e instanceof BoundedReadError) throw new SharedFolderError(`${e.message} (re-run the sweep to submit it again)`);
    throw e;
  }
  const key = installationKey();
  const body = unseal(key, FORMAT, MANIFEST_PURPOSE, [path.resolve(file)], text);
  if (body === FOREIGN || body === DAMAGED)
    throw new SharedFolderError(
      `refusing the Slurm manifest ${file}: it is not sealed with your installation key ` +
        (body === FOREIGN
          ? '(sealed by another key: another user wrote it, or this node does not see the key file in your $XDG_CONFIG_HOME/unroll-lens/)'
          : '(changed since it was written, or not written by Unroll Lens)') +
        '; nothing of it runs. Re-run the sweep to submit it again (docs/slurm.md, "Cluster setup")',
    );
  const m = body as SlurmManifest;
  if (!m || typeof m !== 'object' || m.format !== 2 || !Array.isArray(m.tasks) || !m.spec || !m.asWritten)
    throw new SharedFolderError(`${file} is not a Slurm manifest of this Unroll Lens version (re-run the sweep to submit it again)`);
  return m;
}

const queuedFile = (sweepDir: string) => path.join(sweepDir, 'queued.json');

/** Jobs an earlier run of this sweep left queued, as this user sealed them; none when the file is missing, not ours, or not a file. */
export function readQueued(sweepDir: string): QueuedJob[] {
  let text: string;
  try {
    text = readState(queuedFile(sweepDir), 'the queue file');
  } catch {
    return [];
  }
  const q = unseal(installationKey(), FORMAT, QUEUED_PURPOSE, [path.basename(sweepDir)], text) as QueuedJob[];
  return Array.isArray(q)
    ? q.filter(
        j =>
          j && typeof j.job === 'string' && /^\d+$/.test(j.job) && j.tasks && typeof j.tasks === 'object' && typeof j.folder === 'string',
      )
    : [];
}

export function writeQueued(sweepDir: string, jobs: QueuedJob[]): void {
  if (jobs.length)
    writeAtomic(sweepDir, queuedFile(sweepDir), seal(installationKey(), FORMAT, QUEUED_PURPOSE, [path.basename(sweepDir)], jobs));
  else
    try {
      // unlink: a link planted at the name goes, never what it points to (a folder there stays)
      fs.unlinkSync(queuedFile(sweepDir));
    } catch {
      /* gone already */
    }
}

/**
 * Temporary files a killed writer left in the sweep's folder (never a finished result, never a
 * file of another name): only those older than `minAgeMs`, which no live writer still renames.
 */
export function removeTemporaries(sweepDir: string, minAgeMs: number): void {
  for (const d of [sweepDir, path.join(sweepDir, 'results'), path.join(sweepDir, 'tasks')]) {
    let names: string[] = [];
    try {
      if (!fs.lstatSync(d).isDirectory()) continue;
      names = fs.readdirSync(d);
    } catch {
      continue;
    }
    for (const n of names) {
      if (!isTemporaryName(n)) continue;
      const f = path.join(d, n);
      try {
        const st = fs.lstatSync(f);
        if ((st.isFile() || st.isSymbolicLink()) && Date.now() - st.mtimeMs >= minAgeMs) fs.unlinkSync(f);
      } catch {
        /* gone, or another's */
      }
    }
  }
}

/** What a submission's folder holds: its manifest, job script and the tasks' logs (all we ever delete of it). */
const JOB_FOLDER = /^[0-9a-z]+-[0-9a-f]{6}$/;
const JOB_LOG = /^\d+_\d+\.out$/;

/** A fresh submission folder's path: `<sweep>/jobs/<time>-<hex>`. */
export function newJobFolder(sweepDir: string): string {
  return path.join(sweepDir, 'jobs', `${Date.now().toString(36)}-${crypto.randomBytes(3).toString('hex')}`);
}

/**
 * Removes a submission's folder: only when it is this sweep's `jobs/<name>` by real path (no link
 * on the way: a link there is a SharedFolderError naming it), and then only our files in it; a
 * folder that still holds anything else stays.
 */
export function removeJobFolder(sweepDir: string, folder: string): void {
  const jobs = path.join(sweepDir, 'jobs');
  if (path.dirname(path.resolve(folder)) !== jobs || !JOB_FOLDER.test(path.basename(folder))) return;
  const lst = (p: string) => {
    try {
      return fs.lstatSync(p);
    } catch {
      return null;
    }
  };
  for (const p of [sweepDir, jobs, folder]) {
    const st = lst(p);
    if (!st) return;
    if (st.isSymbolicLink())
      throw new SharedFolderError(
        `${p} is a symbolic link (to ${fs.readlinkSync(p)}), not the folder Unroll Lens made: refusing to delete through it or write there; remove the link`,
      );
    if (!st.isDirectory()) return;
  }
  if (fs.realpathSync(folder) !== path.join(fs.realpathSync(sweepDir), 'jobs', path.basename(folder))) return;
  const unlinkIf = (f: string, ok: (st: fs.Stats) => boolean) => {
    const st = lst(f);
    if (st && ok(st)) fs.rmSync(f, { force: true });
  };
  for (const n of ['manifest.json', 'job.sh']) unlinkIf(path.join(folder, n), st => st.isFile() || st.isSymbolicLink());
  const logs = path.join(folder, 'logs');
  const lstLogs = lst(logs);
  if (lstLogs?.isDirectory() && !lstLogs.isSymbolicLink()) {
    for (const n of fs.readdirSync(logs)) if (JOB_LOG.test(n)) unlinkIf(path.join(logs, n), st => !st.isDirectory());
    rmdirIfEmpty(logs);
  }
  rmdirIfEmpty(folder);
}

function rmdirIfEmpty(d: string): void {
  try {
    fs.rmdirSync(d);
  } catch {
    /* not empty: something not ours is there */
  }
}

/** The last lines of a task's log (why it ended), `a | b | c`; empty when there is none or it is not a regular file. */
export function logTail(file: string, lines = 3): string {
  try {
    const text = readBoundedTail(file, 4096, { what: 'task log', followLinks: false }).toString('utf8');
    return text.trim().split('\n').slice(-lines).join(' | ');
  } catch {
    return '';
  }
}

/** A job script that runs the task worker: `command` (node and our CLI), the manifest and the array index, each quoted for sh. */
export function jobScript(command: string[], manifest: string): string {
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  return (
    '#!/bin/sh\n' +
    '# Unroll Lens: one task of a Slurm sweep (issue 28); written by the sweep, removed when its job has ended.\n' +
    // our run marker (processGuard) is not the task's: the submitting process's exit must not reap it
    `exec env -u UNROLL_LENS_RUN ${command.map(q).join(' ')} slurm-task ${q(manifest)} "$SLURM_ARRAY_TASK_ID"\n`
  );
}
