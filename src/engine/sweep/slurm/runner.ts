// A GPU sweep on a Slurm cluster (issue 28). The points not yet measured are built here first
// (SASS and programs, into the shared build cache: build.ts), then submitted as one job array
// (`sbatch --array`, `--gres=gpu:N`, partition, account, time limit and extra options from the
// settings); each task runs `unroll-lens slurm-task` on its node, which runs, checks and times the
// programs built for its points with the local GPU runner and writes each result whole into the
// shared directory. A point that failed to build, or has the machine code of an earlier one, is
// never submitted. This side
// polls squeue (sacct where accounting is on) and the results folder, reports each task's state
// and each point as it lands, and hands the variants on in point order, finding identical code
// across tasks as a local run does. Re-running the same sweep reuses every result already there
// and waits for tasks an earlier run left queued; cancelling runs scancel and waits for the queue.
import * as path from 'path';
import type { RunTiming, SweepVariant } from '../../../schema/types';
import { runProcess, ProcessRunner } from '../../toolchain/process';
import type { RunnerContext, SweepRunner } from '../runners/runner';
import { AS_WRITTEN, AS_WRITTEN_ID, pointId, SweepPoint } from '../space';
import { CodeRegistry, emptyVariant, GPU_FIELDS } from '../variant';
import { SlurmBuildOptions, SlurmBuilds } from './build';
import {
  jobScript,
  logTail,
  makeSweepFolder,
  newJobFolder,
  PreparedPoint,
  QueuedJob,
  readQueued,
  readResult,
  readSourceStalls,
  readTaskCost,
  removeJobFolder,
  removeTemporaries,
  SlurmManifest,
  SlurmPointResult,
  SlurmSourceStalls,
  SlurmSweepSpec,
  sweepDirFor,
  writeAtomic,
  writeManifest,
  writeQueued,
} from './manifest';
import { cancelJobs, checkSubmission, isTerminal, queueState, sbatchArgs, SlurmOptions, submit, TaskState, TaskStatus } from './queue';
import { isTransient } from './task';
import { timerFor } from '../../gpu/timer';

export interface SlurmRunnerOptions {
  spec: SlurmSweepSpec;
  /** How the points are built here before submission (absent: a test whose stand-in tasks need no programs). */
  build?: SlurmBuildOptions;
  /** The shared directory every node sees (--shared-dir). */
  sharedRoot: string;
  slurm: SlurmOptions;
  /** The command the job script runs on the node before `slurm-task MANIFEST INDEX` (node and our CLI; the same paths there). */
  command: string[];
  /** Runs sbatch, squeue, sacct and scancel (tests stand in for Slurm). */
  run?: ProcessRunner;
}

/** One array task this run waits for. */
interface Tracked {
  job: string;
  index: string;
  ids: string[];
  folder: string;
  /** When sbatch took it (ms since the epoch; null: an earlier run's, not recorded). */
  submittedAt: number | null;
  state: TaskState | null;
  node: string | null;
  /** Polls it was missing from the queue in a row. */
  missing: number;
}

/** A node whose GPU model could not be read (a launcher, a stand-in GPU). */
const UNKNOWN = 'unknown GPU';
const taskId = (t: Pick<Tracked, 'job' | 'index'>) => `${t.job}_${t.index}`;
/** Polls a task may be missing from squeue and sacct before it counts as ended (a queue just written). */
const MISSING_POLLS = 3;
/** How long a sweep whose points all settled waits for its tasks to leave the queue (settle), and how often it looks. */
const SETTLE_MS = 15_000;
const SETTLE_POLL_MS = 1_000;

export class SlurmRunner implements SweepRunner {
  readonly static = false;
  readonly dir: string;
  private readonly run: ProcessRunner;
  /** GPU model → points measured on it. */
  private readonly models = new Map<string, number>();
  private readonly hosts = new Set<string>();
  private baselineModel: string | null | undefined;
  private submitted = 0;
  private reused = 0;
  private adopted = 0;
  private readonly failures: string[] = [];
  private readonly builds: SlurmBuilds | null;
  /** Every task this run waited for (submitted or adopted): their costs are the run's. */
  private readonly waitedFor: Tracked[] = [];
  /** Points not submitted because their machine code is an earlier point's. */
  private copied = 0;
  private buildFailed = 0;
  /** What cancelling left on the cluster (a note), once cancelled. */
  private cancelled: string | null = null;

  constructor(private readonly o: SlurmRunnerOptions) {
    this.dir = sweepDirFor(o.sharedRoot, o.spec);
    this.run = o.run ?? runProcess;
    this.builds = o.build ? new SlurmBuilds(o.build) : null;
  }

  get gpu(): string | null {
    if (this.baselineModel !== undefined) return this.baselineModel;
    const first = [...this.models.keys()][0];
    return first && first !== UNKNOWN ? first : null;
  }

  /** The builds here, and what the tasks reported of their runs (their check, profile and GPU runs; queue and run times). */
  cost(): Omit<RunTiming, 'wallS'> {
    const c = { compileS: this.builds?.compileS() ?? 0, checkS: 0, profileS: 0, gpuIdleS: 0, gpuRuns: 0, gpus: [] };
    let reported = 0;
    let queueS: number | null = null;
    let taskS: number | null = null;
    for (const t of this.waitedFor) {
      const r = readTaskCost(this.dir, taskId(t));
      if (!r) continue;
      reported++;
      c.checkS += r.cost.checkS;
      c.profileS += r.cost.profileS;
      c.gpuIdleS += r.cost.gpuIdleS;
      c.gpuRuns += r.cost.gpuRuns;
      taskS = (taskS ?? 0) + Math.max(0, r.endedAt - r.startedAt) / 1000;
      if (t.submittedAt !== null) queueS = (queueS ?? 0) + Math.max(0, r.startedAt - t.submittedAt) / 1000;
    }
    return { ...c, slurm: { tasks: this.waitedFor.length, reported, queueS, taskS } };
  }

  /** Only points measured on the file as written's GPU model rank with it (a mixed cluster's others are shown, not ranked). */
  comparable(v: SweepVariant): boolean {
    if (this.models.size < 2 || this.baselineModel === undefined) return true;
    return (v.measuredOn?.gpu ?? UNKNOWN) === (this.baselineModel ?? UNKNOWN);
  }

  notes(): string[] {
    const n = [
      timerFor(this.o.spec.gpu).note(this.o.spec.gpu, this.gpu),
      `measured on Slurm (${[...this.hosts].sort().join(', ') || 'no node'}): ${this.submitted} points submitted, ` +
        `${this.reused} from earlier runs of this sweep, ${this.adopted} from tasks an earlier run left queued` +
        (this.copied ? `, ${this.copied} not submitted (the machine code of an earlier point)` : '') +
        (this.buildFailed ? `, ${this.buildFailed} not submitted (their build failed here)` : ''),
      ...(this.builds ? ['programs built on this machine before submission (the tasks run them; nodes need no nvcc)'] : []),
      ...(this.o.spec.gpu.maxSamples && this.o.spec.gpu.maxSamples > this.o.spec.gpu.samples
        ? [
            `adaptive sampling (up to ${this.o.spec.gpu.maxSamples} samples) is not done in a Slurm sweep: every point has ${this.o.spec.gpu.samples}`,
          ]
        : []),
      ...(this.builds?.notes() ?? []),
    ];
    if (this.models.size > 1) {
      const list = [...this.models].map(([m, k]) => `${m} (${k})`).join(', ');
      n.push(
        `points ran on different GPU models: ${list}; only those on ${this.baselineModel ?? 'the file as written’s GPU'} are ranked ` +
          '(times from different models are not one ranking)',
      );
    }
    return [...n, ...this.failures, ...(this.cancelled ? [this.cancelled] : [])];
  }

  async measure(points: SweepPoint[], ctx: RunnerContext): Promise<SweepVariant[]> {
    makeSweepFolder(this.dir);
    // a writer killed mid-write left these; one younger than a minute may be a live task's, about to be renamed
    removeTemporaries(this.dir, 60_000);
    const ids = points.map(pointId);
    const results = new Map<string, SlurmPointResult>();
    for (const [i, id] of ids.entries()) {
      const r = readResult(this.dir, id);
      if (!r || isTransient(r.variant)) continue;
      // its per-line stalls asked for and missing (the task was cancelled after its result): measured again (the cache answers)
      if (id === AS_WRITTEN_ID && this.o.spec.gpu.sourceStalls && !readSourceStalls(this.dir)) continue;
      results.set(id, { ...r, variant: { ...r.variant, cached: true } });
      ctx.onPhase?.(points[i], 'cached', `measured before on ${r.measuredOn.host}`);
      this.reused++;
    }
    const tracked = await this.adopt(ids, results, ctx.signal);
    this.waitedFor.push(...tracked);
    const waiting = points.filter((_, i) => !results.has(ids[i]) && !tracked.some(t => t.ids.includes(ids[i])));
    const local: Local = { final: new Map(), copies: new Map() };
    if (waiting.length && !ctx.signal?.aborted) {
      // the scheduler's word on these options before anything is built (an unknown partition, account, time limit)
      await checkSubmission(this.run, this.o.slurm, this.o.sharedRoot, ctx.signal);
      const submission = await this.prepare(points, waiting, results, local, ctx);
      if (submission && submission.points.length && !ctx.signal?.aborted) {
        const more = await this.submitPoints(submission, tracked, ctx);
        tracked.push(...more);
        this.waitedFor.push(...more);
      }
    }
    const failed = new Map<string, string>();
    const out = new Emitter(points, ctx, local, (v, r) => this.landed(v, r));
    try {
      await this.poll(points, tracked, results, failed, out, ctx);
      await this.settle(points, tracked, ctx);
    } finally {
      if (ctx.signal?.aborted) await this.cancel(tracked);
      this.forget(tracked);
    }
    return out.finish(results, failed);
  }

  /**
   * The build stage, here: the waiting points' SASS and programs (and the file as written's, which
   * every task checks against). A point that failed to build is final; one with the machine code
   * of an earlier point (measured before, or built here) waits for that one's timing. The rest
   * are submitted. Null without a build stage (stand-in tasks in tests): every waiting point goes.
   */
  private async prepare(
    points: SweepPoint[],
    waiting: SweepPoint[],
    results: Map<string, SlurmPointResult>,
    local: Local,
    ctx: RunnerContext,
  ): Promise<Submission | null> {
    if (!this.builds) {
      const none = (p: SweepPoint): PreparedPoint => ({ point: p, variant: emptyVariant(p, 'ok'), codeHash: null, program: null });
      return { points: waiting.map(none), asWritten: none(AS_WRITTEN), timerLibrary: null };
    }
    ctx.onPhase?.(waiting[0], 'build', `building ${waiting.length} point${waiting.length > 1 ? 's' : ''} here before submitting`);
    const list = [AS_WRITTEN, ...waiting.filter(p => pointId(p) !== AS_WRITTEN_ID)];
    const [prepared, timerLibrary] = await Promise.all([this.builds.prepare(list, ctx), this.builds.timerLibrary(ctx.signal)]);
    if (ctx.signal?.aborted) return null;
    const byId = new Map(prepared.map(x => [pointId(x.point), x]));
    const seen = new CodeRegistry(true);
    const submit: PreparedPoint[] = [];
    for (const p of points) {
      const id = pointId(p);
      const r = results.get(id);
      if (r) seen.claim(r.codeHash, r.variant);
      const x = waiting.includes(p) ? byId.get(id) : undefined;
      if (!x) continue;
      if (x.variant.status !== 'ok') {
        local.final.set(id, x.variant);
        this.buildFailed++;
        continue;
      }
      const earlier = ctx.registry.lookup(x.codeHash, p.params) ?? seen.claim(x.codeHash, x.variant);
      if (earlier) {
        local.copies.set(id, { variant: x.variant, codeHash: x.codeHash, of: earlier.id });
        ctx.onPhase?.(p, 'reuse', earlier.label);
        this.copied++;
      } else submit.push(x);
    }
    return { points: submit, asWritten: byId.get(AS_WRITTEN_ID)!, timerLibrary };
  }

  /** The file as written's stalls per source line, as the task that measured it sampled them (on its node). */
  async sourceStalls(): Promise<SlurmSourceStalls> {
    const s = readSourceStalls(this.dir);
    if (s) return s;
    const why = 'the Slurm task measuring the file as written ended without sampling them; re-run the sweep';
    return { lineStalls: null, sassStalls: null, problem: why, cached: false };
  }

  /** A variant handed on: its GPU model and host counted. */
  private landed(v: SweepVariant, r: SlurmPointResult | null): void {
    if (!r) return;
    this.hosts.add(r.measuredOn.host);
    if (v.status === 'ok' && !v.identicalTo) {
      const m = r.measuredOn.gpu ?? UNKNOWN;
      this.models.set(m, (this.models.get(m) ?? 0) + 1);
    }
    if (v.id === AS_WRITTEN_ID) this.baselineModel = r.measuredOn.gpu;
  }

  /** Tasks an earlier run submitted for these points and Slurm still runs or queues: waited for, not submitted again. */
  private async adopt(ids: string[], results: Map<string, SlurmPointResult>, signal?: AbortSignal): Promise<Tracked[]> {
    const queued = readQueued(this.dir);
    if (!queued.length) return [];
    const states = await queueState(
      this.run,
      queued.map(j => j.job),
      signal,
    );
    const out: Tracked[] = [];
    for (const j of queued)
      for (const [index, tids] of Object.entries(j.tasks)) {
        const s = states.get(`${j.job}_${index}`);
        const wanted = tids.filter(id => ids.includes(id) && !results.has(id));
        if (!s || isTerminal(s.state) || !wanted.length) continue;
        out.push({
          job: j.job,
          index,
          ids: tids,
          folder: j.folder,
          submittedAt: j.submittedAt ?? null,
          state: s.state,
          node: s.node,
          missing: 0,
        });
        this.adopted += wanted.length;
      }
    // submissions with nothing left to wait for: their folders go
    for (const j of queued) if (!out.some(t => t.job === j.job)) this.removeFolder(j.folder);
    writeQueued(this.dir, this.queuedOf(out));
    return out;
  }

  /** One submission: a manifest, a job script, and one array (the file as written first, the others after it). */
  private async submitPoints(sub: Submission, inFlight: Tracked[], ctx: RunnerContext): Promise<Tracked[]> {
    const s = this.o.slurm;
    const folder = newJobFolder(this.dir);
    const logs = path.join(folder, 'logs');
    makeSweepFolder(this.dir, logs);
    const isBase = (x: PreparedPoint) => pointId(x.point) === AS_WRITTEN_ID;
    const base = sub.points.filter(isBase);
    const rest = sub.points.filter(x => !isBase(x));
    const per = Math.max(1, s.pointsPerTask);
    const chunks = [...(base.length && rest.length ? [base] : []), ...chunk(base.length && rest.length ? rest : sub.points, per)];
    const tasks = chunks.map((c, index) => ({ index, points: c }));
    const manifest = path.join(folder, 'manifest.json');
    const m = {
      format: 2 as const,
      sweepDir: this.dir,
      spec: this.o.spec,
      asWritten: sub.asWritten,
      timerLibrary: sub.timerLibrary,
      tasks,
    };
    writeManifest(manifest, m);
    const script = path.join(folder, 'job.sh');
    writeAtomic(this.dir, script, jobScript(this.o.command, manifest), 0o755);
    const name = `unroll-lens-${path.basename(this.dir).slice(0, 8)}`;
    const job = { name, script, logDir: logs, chdir: this.o.sharedRoot };
    // every point is checked against the file as written's output: its task goes first, the others wait for it to end
    const groups = base.length && rest.length ? [[0], tasks.slice(1).map(t => t.index)] : [tasks.map(t => t.index)];
    let after = inFlight.find(t => t.ids.includes(AS_WRITTEN_ID))?.job;
    const out: Tracked[] = [];
    try {
      for (const indices of groups) {
        ctx.onPhase?.(tasks[indices[0]].points[0].point, 'time', `sbatch: ${indices.length} task${indices.length > 1 ? 's' : ''}`);
        const id = await submit(this.run, sbatchArgs(s, { ...job, indices, after }), ctx.signal);
        const submittedAt = Date.now();
        after = id;
        for (const i of indices) {
          const ids = tasks[i].points.map(x => pointId(x.point));
          out.push({ job: id, index: String(i), ids, folder, submittedAt, state: null, node: null, missing: 0 });
          this.submitted += ids.length;
        }
        writeQueued(this.dir, this.queuedOf([...inFlight, ...out]));
      }
    } catch (e) {
      await this.cancel(out);
      this.forget([...inFlight, ...out]);
      throw e;
    }
    return out;
  }

  private queuedOf(tracked: Tracked[]): QueuedJob[] {
    const jobs = new Map<string, QueuedJob>();
    for (const t of tracked) {
      const j = jobs.get(t.job) ?? {
        job: t.job,
        tasks: {},
        folder: t.folder,
        ...(t.submittedAt !== null ? { submittedAt: t.submittedAt } : {}),
      };
      j.tasks[t.index] = t.ids;
      jobs.set(t.job, j);
    }
    return [...jobs.values()];
  }

  /** Until every point has a result or its task has ended: results read as they land, task states as they change. */
  private async poll(
    points: SweepPoint[],
    tracked: Tracked[],
    results: Map<string, SlurmPointResult>,
    failed: Map<string, string>,
    out: Emitter,
    ctx: RunnerContext,
  ): Promise<void> {
    const byId = new Map(points.map(p => [pointId(p), p]));
    const open = () => points.some(p => !results.has(pointId(p)) && !failed.has(pointId(p)) && !out.settled(pointId(p)));
    const scan = () => {
      for (const t of tracked)
        for (const id of t.ids) {
          if (results.has(id) || !byId.has(id)) continue;
          const r = readResult(this.dir, id);
          if (!r) continue;
          results.set(id, r);
          ctx.onPhase?.(byId.get(id)!, 'time', `measured on ${r.measuredOn.host}${r.measuredOn.gpu ? ` (${r.measuredOn.gpu})` : ''}`);
        }
    };
    while (open() && !ctx.signal?.aborted) {
      scan();
      const states = await queueState(this.run, [...new Set(tracked.map(t => t.job))], ctx.signal);
      for (const t of tracked) this.update(t, states.get(taskId(t)), byId, ctx);
      scan();
      for (const t of tracked) {
        if (!t.state || !isTerminal(t.state)) continue;
        for (const id of t.ids) if (byId.has(id) && !results.has(id) && !failed.has(id)) failed.set(id, this.reasonOf(t));
      }
      out.flush(results, failed);
      if (open() && !ctx.signal?.aborted) await sleep(this.o.slurm.pollSeconds * 1000, ctx.signal);
    }
  }

  /**
   * Every point settled: the tasks still ending (a result written, the task not yet out of the
   * queue: RUNNING, COMPLETING) get a few seconds to end, so that `forget` removes their folders
   * too; one still live then stays in `queued.json` for the next run. The test cluster's task
   * ended a moment after the sweep returned, and its submission folder was left behind.
   */
  private async settle(points: SweepPoint[], tracked: Tracked[], ctx: RunnerContext): Promise<void> {
    const byId = new Map(points.map(p => [pointId(p), p]));
    const deadline = Date.now() + SETTLE_MS;
    for (;;) {
      const live = tracked.filter(t => t.state && !isTerminal(t.state));
      if (!live.length || ctx.signal?.aborted || Date.now() >= deadline) return;
      await sleep(Math.min(this.o.slurm.pollSeconds * 1000, SETTLE_POLL_MS), ctx.signal);
      const states = await queueState(this.run, [...new Set(live.map(t => t.job))], ctx.signal);
      for (const t of live) this.update(t, states.get(taskId(t)), byId, ctx);
    }
  }

  /** A task's new state: reported on its first open point; missing from the queue for a while: ended. */
  private update(t: Tracked, s: TaskStatus | undefined, byId: Map<string, SweepPoint>, ctx: RunnerContext): void {
    if (t.state && isTerminal(t.state)) return;
    const next: TaskState | null = s ? s.state : ++t.missing >= MISSING_POLLS ? 'UNKNOWN' : t.state;
    if (s) t.missing = 0;
    if (next === t.state) return;
    t.state = next;
    t.node = s?.node ?? t.node;
    const first = t.ids.map(id => byId.get(id)).find(p => p);
    const why = s?.reason && next === 'PENDING' ? ` (${s.reason})` : '';
    if (first) ctx.onPhase?.(first, 'time', `Slurm task ${taskId(t)} ${next}${t.node ? ` on ${t.node}` : ''}${why}`);
  }

  /** Why a task's points have no result: its state, and the end of its log. */
  private reasonOf(t: Tracked): string {
    // no log (never started), or not a regular file: no tail
    const tail = logTail(path.join(t.folder, 'logs', `${t.job}_${t.index}.out`));
    const m = `Slurm task ${taskId(t)} ended ${t.state}${t.node ? ` on ${t.node}` : ''} before measuring it${tail ? `: ${tail}` : ''}`;
    if (!this.failures.some(f => f.startsWith(`Slurm task ${taskId(t)} `)))
      this.failures.push(`${m}; re-run the sweep to measure what is missing`);
    return m;
  }

  /**
   * scancel for every task this run waits for; waits until the queue has none of them. Never
   * throws: what became of them is the run's note (the CLI prints it, the editor reports it).
   */
  private async cancel(tracked: Tracked[]): Promise<void> {
    const live = [...new Set(tracked.filter(t => !t.state || !isTerminal(t.state)).map(t => t.job))];
    try {
      await cancelJobs(this.run, live);
      this.cancelled = live.length
        ? `Slurm: cancelled; scancel ${live.join(' ')} ran and squeue lists none of this sweep's tasks queued or running`
        : 'Slurm: cancelled with no task of this sweep queued or running (nothing to scancel)';
    } catch (e) {
      this.cancelled = `Slurm: cancelled, but ${(e as Error).message}: check with squeue -j ${live.join(',')}`;
    } finally {
      // the tasks are gone (scancel waited for them): nothing of theirs is still being written
      removeTemporaries(this.dir, 0);
    }
  }

  /** Every task ended: the queue file and the submissions' folders go (the results stay). */
  private forget(tracked: Tracked[]): void {
    const live = tracked.filter(t => t.state && !isTerminal(t.state));
    writeQueued(this.dir, this.queuedOf(live));
    for (const f of new Set(tracked.map(t => t.folder))) if (!live.some(t => t.folder === f)) this.removeFolder(f);
  }

  /** A submission's folder: only this sweep's jobs/<name> by real path, only our files in it (manifest.ts). */
  private removeFolder(folder: string): void {
    removeJobFolder(this.dir, folder);
  }
}

/** What this side settles itself: points whose build failed (final), points with an earlier point's machine code. */
interface Local {
  final: Map<string, SweepVariant>;
  copies: Map<string, { variant: SweepVariant; codeHash: string | null; of: string }>;
}

/** What one sbatch submits: the points, the file as written's program every task checks against, the CUPTI timer library. */
interface Submission {
  points: PreparedPoint[];
  asWritten: PreparedPoint;
  timerLibrary: SlurmManifest['timerLibrary'];
}

/** Hands variants on in point order, identical code found across tasks as a local run finds it. */
class Emitter {
  private next = 0;
  readonly out: SweepVariant[] = [];

  constructor(
    private readonly points: SweepPoint[],
    private readonly ctx: RunnerContext,
    private readonly local: Local,
    private readonly onLanded: (v: SweepVariant, r: SlurmPointResult | null) => void,
  ) {}

  flush(results: Map<string, SlurmPointResult>, failed: Map<string, string>, cancelled = false): void {
    for (; this.next < this.points.length; this.next++) {
      const p = this.points[this.next];
      const id = pointId(p);
      const r = results.get(id);
      const why = failed.get(id);
      const own = this.local.final.get(id) ?? this.copyOf(id);
      if (!r && !own && why === undefined && !cancelled) return;
      const v = r ? this.variantOf(r) : (own ?? { ...emptyVariant(p, why !== undefined ? 'runtime' : 'cancelled'), message: why ?? null });
      this.out.push(v);
      this.onLanded(v, r ?? null);
      if (v.status !== 'cancelled') this.ctx.onVariant?.(v);
    }
  }

  /** Settled here (a build failure, a copy): no task measures it. */
  settled(id: string): boolean {
    return this.local.final.has(id) || this.local.copies.has(id);
  }

  /** A point not submitted for its machine code: the earlier point's timing (or failure) once that one is in. */
  private copyOf(id: string): SweepVariant | undefined {
    const c = this.local.copies.get(id);
    if (!c) return undefined;
    const same = this.out.find(v => v.id === c.of) ?? this.ctx.registry.lookup(c.codeHash, c.variant.params);
    if (!same) return undefined;
    const v: SweepVariant = { ...structuredClone(c.variant), identicalTo: same.identicalTo ?? same.id };
    for (const k of GPU_FIELDS) (v as unknown as Record<string, unknown>)[k] = same[k];
    return { ...v, status: same.status, message: same.message, ...(same.measuredOn ? { measuredOn: same.measuredOn } : {}) };
  }

  /** The task's variant; a point with the machine code of an earlier one takes that one's timing, as locally. */
  private variantOf(r: SlurmPointResult): SweepVariant {
    const v: SweepVariant = { ...structuredClone(r.variant), identicalTo: null, measuredOn: r.measuredOn };
    const same = this.ctx.registry.claim(r.codeHash, v);
    if (!same) return v;
    for (const k of GPU_FIELDS) (v as unknown as Record<string, unknown>)[k] = same[k];
    return { ...v, status: same.status, message: same.message, identicalTo: same.id, measuredOn: same.measuredOn };
  }

  finish(results: Map<string, SlurmPointResult>, failed: Map<string, string>): SweepVariant[] {
    this.flush(results, failed, true);
    return this.out;
  }
}

function chunk<T>(xs: T[], n: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += n) out.push(xs.slice(i, i + n));
  return out;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise(resolve => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done);
  });
}
