// A Slurm sweep's files on the shared directory (issue 28). One folder per sweep, named by the hash
// of everything its numbers depend on (source, kernel, space, flags, toolkit, run settings), so
// re-running the same sweep finds it: `results/` holds one sealed file per measured point, written
// whole under a temporary name and renamed (a reader never sees half of one); `queued.json` the
// jobs submitted and their points, so a re-run after the laptop slept waits for tasks still queued
// instead of submitting them twice; `jobs/<job>/` a submission's manifest, script and logs, removed
// once its tasks have ended.
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import type { MeasuredOn, RunTiming, SweepVariant } from '../../../schema/types';
import type { CompileFlags } from '../../toolchain/flags';
import { installationKey } from '../../variants/cacheKey';
import { safeWriteFile } from '../../safeWrite';
import { DAMAGED, FOREIGN, readCacheFile, seal, unseal } from '../../variants/cacheEntry';
import type { GpuSettings } from '../runners/gpu';
import type { SweepRunner } from '../runners/runner';
import type { SpaceOptions, SweepPoint } from '../space';

/** What a task needs to rebuild the sweep's GPU runner on its node: the sweep's own options, as data. */
export interface SlurmSweepSpec extends SpaceOptions {
  file: string;
  text: string;
  arch: string;
  flags: CompileFlags;
  /** The build cache (under the shared directory): where the programs were built, and beside it runs/. */
  cacheDir: string;
  kernelFilter?: string;
  compileTimeoutMs?: number;
  gpu: GpuSettings;
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

const FORMAT = 1;
const PURPOSE = 'slurm-result';
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

/**
 * Writes `text` to `file` whole, through the project's safe writer: a fresh temporary file beside
 * it, synced, renamed into place, never through a link planted at the name (the shared folder is
 * written by every node).
 */
export function writeAtomic(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  safeWriteFile(path.dirname(file), path.basename(file), text);
}

export function writeResult(sweepDir: string, r: SlurmPointResult): void {
  writeAtomic(resultFile(sweepDir, r.id), seal(installationKey(), FORMAT, PURPOSE, [r.id], r));
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
  writeAtomic(costFile(sweepDir, c.job), seal(installationKey(), FORMAT, COST_PURPOSE, [c.job], c));
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
  writeAtomic(stallsFile(sweepDir), seal(installationKey(), FORMAT, STALLS_PURPOSE, [], s));
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
  writeAtomic(file, JSON.stringify(m));
}

export function readManifest(file: string): SlurmManifest {
  const m = JSON.parse(fs.readFileSync(file, 'utf8')) as SlurmManifest;
  if (m.format !== 2 || !Array.isArray(m.tasks) || !m.spec || !m.asWritten)
    throw new Error(`${file} is not a Slurm manifest of this Unroll Lens version (re-run the sweep to submit it again)`);
  return m;
}

const queuedFile = (sweepDir: string) => path.join(sweepDir, 'queued.json');

export function readQueued(sweepDir: string): QueuedJob[] {
  try {
    const q = JSON.parse(fs.readFileSync(queuedFile(sweepDir), 'utf8')) as QueuedJob[];
    return Array.isArray(q)
      ? q.filter(j => typeof j.job === 'string' && /^\d+$/.test(j.job) && j.tasks && typeof j.folder === 'string')
      : [];
  } catch {
    return [];
  }
}

export function writeQueued(sweepDir: string, jobs: QueuedJob[]): void {
  if (!jobs.length) fs.rmSync(queuedFile(sweepDir), { force: true });
  else writeAtomic(queuedFile(sweepDir), JSON.stringify(jobs));
}

/** Temporary files a killed writer left in the sweep's folder (never a finished result). */
export function removeTemporaries(sweepDir: string): void {
  for (const d of [sweepDir, path.join(sweepDir, 'results'), path.join(sweepDir, 'tasks')]) {
    let names: string[] = [];
    try {
      names = fs.readdirSync(d);
    } catch {
      continue;
    }
    for (const n of names) if (/\.\d+\.[0-9a-f]{8}\.tmp$/.test(n)) fs.rmSync(path.join(d, n), { force: true });
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
