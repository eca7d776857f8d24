// Talking to Slurm (issue 28): sbatch to submit a job array, squeue (and sacct, where accounting
// is on) for each task's state, scancel to stop them. Every option travels as its own argv
// element, never through a shell; the ProcessRunner is injectable, so tests can stand in for Slurm.
import type { ProcessResult, ProcessRunner } from '../../toolchain/process';

/** A job array task's state as squeue and sacct print it (the base word: `CANCELLED by 0` → CANCELLED). */
export type TaskState =
  | 'PENDING'
  | 'CONFIGURING'
  | 'RUNNING'
  | 'COMPLETING'
  | 'SUSPENDED'
  | 'REQUEUED'
  | 'COMPLETED'
  | 'FAILED'
  | 'CANCELLED'
  | 'TIMEOUT'
  | 'PREEMPTED'
  | 'NODE_FAIL'
  | 'OUT_OF_MEMORY'
  | 'BOOT_FAIL'
  | 'DEADLINE'
  /** Gone from the queue and from accounting: it ended, how is unknown (its results say). */
  | 'UNKNOWN';

/** States after which a task runs no more (a pre-empted task Slurm requeues shows PENDING again). */
const TERMINAL = new Set<TaskState>([
  'COMPLETED',
  'FAILED',
  'CANCELLED',
  'TIMEOUT',
  'PREEMPTED',
  'NODE_FAIL',
  'OUT_OF_MEMORY',
  'BOOT_FAIL',
  'DEADLINE',
  'UNKNOWN',
]);

export function isTerminal(s: TaskState): boolean {
  return TERMINAL.has(s);
}

/** One task's state, where it runs and why it waits. */
export interface TaskStatus {
  /** `JOBID_INDEX`. */
  id: string;
  state: TaskState;
  node: string | null;
  reason: string | null;
}

/** How a job array is asked for: the settings and flags (unrollLens.profile.slurm.*, --partition …). */
export interface SlurmOptions {
  partition: string;
  account: string;
  /** --time: `MINUTES`, `H:MM:SS`, `D-HH` …; empty: the partition's default. */
  time: string;
  /** --gres=gpu:N per task; 0: none asked (a cluster without gres, or a test). */
  gpusPerTask: number;
  /** Tasks of the array running at once (`%N`); 0: no limit. */
  arrayMax: number;
  /** Variants each task measures. */
  pointsPerTask: number;
  /** More sbatch options, each one argv element (`--qos=high`, `--constraint=h100`). */
  extra: string[];
  /** squeue polls and result scans, seconds. */
  pollSeconds: number;
}

class SlurmError extends Error {}

/**
 * The scheduler refused the job (an unknown partition or account, a time limit over the
 * partition's, a bad extra option) or sbatch is not there: the user's to change (exit 2), with
 * sbatch's own words, never an internal error.
 */
export class SlurmRefusedError extends Error {}

/** What to change when sbatch refuses: the flags and the settings that reach it. */
const CHANGE =
  'change what it names: --partition, --account, --time, --gres-gpus or --sbatch-arg ' +
  '(unrollLens.profile.slurm.* in the editor); `sinfo` lists the partitions you may use';

function refusal(r: ProcessResult, when: string): SlurmRefusedError {
  if (r.spawnError)
    return new SlurmRefusedError(
      `sbatch was not found or could not be started (${r.spawnError.slice(0, 200)}): a Slurm sweep runs where Slurm's commands are ` +
        '(a login node, with the Slurm module loaded); leave out --slurm (unrollLens.profile.slurm.enabled) to measure on this machine',
    );
  const said = (r.stderr.trim() || r.stdout.trim() || `exit ${r.exitCode ?? r.signal}`).slice(0, ENV_LIMIT);
  return new SlurmRefusedError(`sbatch refused the job ${when}: ${said}\nTo fix: ${CHANGE}`);
}

const ENV_LIMIT = 2000;

function failure(what: string, r: ProcessResult): SlurmError {
  const why = r.spawnError ?? (r.stderr.trim() || r.stdout.trim() || `exit ${r.exitCode}`);
  return new SlurmError(`${what} failed: ${why.slice(0, ENV_LIMIT)}`);
}

/** sbatch's argv for a job array of `indices` running `script`; its log files go to `logDir`. */
export function sbatchArgs(
  o: SlurmOptions,
  job: { name: string; indices: number[]; script: string; logDir: string; chdir: string; after?: string },
): string[] {
  const args = ['--parsable', `--job-name=${job.name}`, `--array=${arraySpec(job.indices)}${o.arrayMax > 0 ? `%${o.arrayMax}` : ''}`];
  args.push(`--output=${job.logDir}/%A_%a.out`, `--chdir=${job.chdir}`);
  if (o.partition) args.push(`--partition=${o.partition}`);
  if (o.account) args.push(`--account=${o.account}`);
  if (o.time) args.push(`--time=${o.time}`);
  if (o.gpusPerTask > 0) args.push(`--gres=gpu:${o.gpusPerTask}`);
  // a task whose file as written has not been measured waits for the task that measures it (it is checked against its output)
  if (job.after) args.push(`--dependency=afterany:${job.after}`);
  // the extra options come before the script: sbatch reads everything after it as the script's arguments
  return [...args, ...o.extra, job.script];
}

/** `0-3,7,9-10`: the indices as sbatch's --array takes them. */
export function arraySpec(indices: number[]): string {
  const sorted = [...new Set(indices)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
    parts.push(j > i ? `${sorted[i]}-${sorted[j]}` : `${sorted[i]}`);
    i = j + 1;
  }
  return parts.join(',');
}

/** Submits; the job id (`--parsable` prints `ID` or `ID;CLUSTER`). */
export async function submit(run: ProcessRunner, args: string[], signal?: AbortSignal): Promise<string> {
  const r = await run('sbatch', args, { signal, timeoutMs: 120_000 });
  if (r.cancelled) throw new SlurmError('sbatch was cancelled');
  const id = /^(\d+)/.exec(r.stdout.trim())?.[1];
  if (r.spawnError || (r.exitCode !== 0 && !r.timedOut)) throw refusal(r, '(nothing of this submission is queued)');
  if (!id) throw failure('sbatch', r);
  return id;
}

/**
 * Asks the scheduler whether it would take a job with these options (`sbatch --test-only`, a
 * one-line script on stdin; nothing is queued), before anything is built: an unknown partition
 * or account, or no sbatch at all, is a SlurmRefusedError with sbatch's own message.
 */
export async function checkSubmission(run: ProcessRunner, o: SlurmOptions, chdir: string, signal?: AbortSignal): Promise<void> {
  const args = ['--test-only', '--job-name=unroll-lens-check', `--chdir=${chdir}`];
  if (o.partition) args.push(`--partition=${o.partition}`);
  if (o.account) args.push(`--account=${o.account}`);
  if (o.time) args.push(`--time=${o.time}`);
  if (o.gpusPerTask > 0) args.push(`--gres=gpu:${o.gpusPerTask}`);
  const r = await run('sbatch', [...args, ...o.extra], { signal, timeoutMs: 120_000, input: '#!/bin/sh\ntrue\n' });
  if (r.cancelled || r.timedOut) return; // cancelled: the caller stops; a slow controller: the submission says
  if (r.spawnError || r.exitCode !== 0) throw refusal(r, 'when asked first (sbatch --test-only; nothing was built or queued)');
}

/** The base state word: `CANCELLED by 0` → CANCELLED; an unknown word is RUNNING's cousin: not ended. */
function stateOf(word: string): TaskState {
  const w = word.trim().split(/\s+/)[0]?.toUpperCase() ?? '';
  const known: TaskState[] = [...TERMINAL, 'PENDING', 'CONFIGURING', 'RUNNING', 'COMPLETING', 'SUSPENDED', 'REQUEUED'];
  if (w === 'CA') return 'CANCELLED';
  return known.includes(w as TaskState) ? (w as TaskState) : 'RUNNING';
}

/** `12_3|RUNNING|node7|None` lines (squeue -r -o '%i|%T|%N|%r'); `12_[4-6]` lines expanded. */
export function parseSqueue(text: string): TaskStatus[] {
  const out: TaskStatus[] = [];
  for (const line of text.split('\n')) {
    const [id, state, node, reason] = line.trim().split('|');
    if (!id || !state) continue;
    const range = /^(\d+)_\[([\d,-]+)(?:%\d+)?\]$/.exec(id);
    const ids = range ? expand(range[2]).map(i => `${range[1]}_${i}`) : [id];
    for (const x of ids)
      out.push({ id: x, state: stateOf(state), node: node?.trim() || null, reason: reason && reason !== 'None' ? reason.trim() : null });
  }
  return out;
}

function expand(spec: string): number[] {
  return spec.split(',').flatMap(p => {
    const [a, b] = p.split('-').map(Number);
    return b === undefined ? [a] : Array.from({ length: b - a + 1 }, (_, k) => a + k);
  });
}

/**
 * The tasks of `jobs` Slurm still knows: squeue (finished ones stay listed for MinJobAge), then
 * sacct for those it no longer lists, where accounting is on. A task neither knows is absent.
 */
export async function queueState(run: ProcessRunner, jobs: string[], signal?: AbortSignal): Promise<Map<string, TaskStatus>> {
  const out = new Map<string, TaskStatus>();
  if (!jobs.length) return out;
  // one job at a time: squeue refuses the whole list when one id has left its memory
  for (const job of jobs) {
    const q = await run('squeue', ['-h', '-r', '-t', 'all', '-j', job, '-o', '%i|%T|%N|%r'], { signal, timeoutMs: 60_000 });
    const listed = q.exitCode === 0 ? parseSqueue(q.stdout) : [];
    for (const t of listed) out.set(t.id, t);
    if (listed.length) continue;
    const a = await run('sacct', ['-n', '-P', '-X', '-j', job, '--format=JobID,State,NodeList,Reason'], { signal, timeoutMs: 60_000 });
    if (a.exitCode === 0) for (const t of parseSqueue(a.stdout)) out.set(t.id, t);
  }
  return out;
}

/** Cancels the jobs (every task) and waits until squeue lists none of them as queued or running. */
export async function cancelJobs(run: ProcessRunner, jobs: string[], waitMs = 60_000): Promise<void> {
  if (!jobs.length) return;
  const r = await run('scancel', jobs, { timeoutMs: 60_000 });
  if (r.exitCode !== 0 && !/Invalid job id|already completing or completed/i.test(r.stderr)) throw failure('scancel', r);
  const end = Date.now() + waitMs;
  for (;;) {
    const states = await queueState(run, jobs);
    if ([...states.values()].every(t => isTerminal(t.state))) return;
    if (Date.now() > end) throw new SlurmError(`scancel ${jobs.join(' ')}: tasks still listed after ${waitMs / 1000} s`);
    await new Promise(res => setTimeout(res, 500));
  }
}
