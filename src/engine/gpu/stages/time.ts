// Stage 3, time: kernel durations and stall reasons of one variant under Nsight Compute
// (gpu__time_duration.sum and the warp-state metrics), from one ncu run per instantiation
// repeated until each has enough launches.
import * as fs from 'fs';
import * as path from 'path';
import { safeCopyFile, safeWriteFile } from '../../base/safeWrite';
import { MissingToolError } from '../../toolchain/discover';
import type { ProcessResult } from '../../toolchain/process';
import type { BenchOptions, NcuPasses } from '../options';
import type { RawKernelRow } from '../../profile/ncuCsv';
import { parseRawPageStrict, RawPageError } from '../../profile/rawPageStream';
import { applicationExitCode, classifyNcuFailure, programOutput } from '../../profile/ncuErrors';
import { KernelProfile, kernelProfile } from '../../profile/stalls';
import { neverLaunched, type BenchTarget } from './build';
import type { PcSampling } from '../cupti/timerRecords';
import { escapeRegex, launch, LaunchOptions, programCommand, runFolder, VariantProgram } from './program';
import { scratchDir } from '../../toolchain/processGuard';

/** ncu metrics collected per launch: duration, warp-state stall ratios, work and occupancy. */
export const PROFILE_METRICS = [
  'gpu__time_duration.sum',
  'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio',
  'smsp__inst_executed.sum',
  // thread-level instructions: per thread, the work one thread does (a coarsening factor's point)
  'smsp__thread_inst_executed.sum',
  'sm__warps_active.avg.pct_of_peak_sustained_active',
  'launch__registers_per_thread',
];

/** The launches of one instantiation (and block size, when it runs with several). */
export interface KernelSamples {
  /** Mangled name. */
  kernel: string;
  /** `(x, y, z)` when the kernel runs with several block sizes, else null. */
  blockSize: string | null;
  durations: number[];
  /**
   * The clock of `durations` under the CUPTI timer: gpu-time, each launch's gpu__time_duration
   * (the counter ncu reports) read in the program's run; kernel-record, CUPTI's kernel record's
   * span (~0.6 µs a launch longer on an H200). Absent under ncu (its gpu__time_duration).
   */
  durationSource?: 'gpu-time' | 'kernel-record';
  /** The profile of the last launch read. */
  last: KernelProfile | null;
}

/** Program runs per kernel at most, however few launches one run gives. */
const MAX_PROGRAM_RUNS = 50;

/** The warp-state metrics alone: what the stall run of the split mode collects. */
export const STALL_METRICS = PROFILE_METRICS.filter(m => m !== 'gpu__time_duration.sum');

/** Durations and registers alone: the split mode's timed runs, and every run when no stalls are wanted. */
export const TIME_ONLY_METRICS = ['gpu__time_duration.sum', 'launch__registers_per_thread'];

export interface TimeResult {
  status: 'ok' | 'cancelled' | 'timeout' | 'profile';
  message: string | null;
  /** Keyed by mangled name, plus ` (x, y, z)` when a kernel runs with several block sizes; what was collected before a failure. */
  groups: Map<string, KernelSamples>;
  /** What the program printed in the first ncu run (ncu's own lines removed), null when it did not finish. */
  stdout: string | null;
  /** The first ncu run failed because the program itself did (non-zero exit, crash): its message. */
  programFailed: string | null;
  /** Why the stall reasons are missing although they were asked for (CUPTI PC sampling refused, too few samples); the times stand. */
  stallProblem?: string | null;
  /** Why the counters (--counters on with the CUPTI timer: executed instructions, achieved occupancy) are missing; the times stand. */
  countersProblem?: string | null;
  /** Program runs the timing took (the CUPTI timer): the next variant of the same program starts its second run early from it. */
  runs?: number;
  /**
   * The CUPTI timer's first run's PC samples, when it sampled (every kernel of the program): the
   * file as written's per-line stalls come from them (native/pcSourceStalls.ts), no ncu run.
   */
  pcSampling?: PcSampling | null;
  /** Why the CUPTI timer's durations are its kernel records' spans, not gpu__time_duration (null: every one is). */
  gpuTimeProblem?: string | null;
}

/** One ncu process on the GPU, for the run's cost accounting. */
export interface GpuRun {
  /** time, stalls: ncu runs; check: a plain program run for its result. */
  kind: 'time' | 'stalls' | 'check';
  startMs: number;
  endMs: number;
}

export type TimeOptions = LaunchOptions &
  Pick<
    BenchOptions,
    'samples' | 'warmup' | 'clockControl' | 'cacheControl' | 'timeoutMs' | 'signal' | 'keepReportsDir' | 'loops' | 'stalls'
  > & {
    passes?: NcuPasses;
    /** Launches the split mode's stall run profiles (default 3). */
    stallLaunches?: number;
    /** Environment of the ncu runs (CUDA_VISIBLE_DEVICES, the lock's TMPDIR). */
    env?: Record<string, string>;
    /** Folder for ncu reports: on storage the launcher's nodes see (default: the system temp folder). */
    runDir?: string;
    /** Each ncu process, once it ends. */
    onRun?: (r: GpuRun) => void;
    /** Durations collected so far for the kernel being timed. */
    onSamples?: (have: number, wanted: number, phase: 'time' | 'stalls') => void;
  };

/**
 * The raw page ncu printed after the program's own output (`--csv --page raw`, no report file):
 * its CSV lines from the header row on. The program's lines come before it; ncu's own
 * `==PROF==` lines are not quoted.
 */
export function rawPageOf(ncuStdout: string): string {
  const lines = ncuStdout.split(/\r?\n/);
  const header = lines.findIndex(l => l.startsWith('"ID",'));
  if (header < 0) return '';
  return (
    lines
      .slice(header)
      .filter(l => l.startsWith('"'))
      .join('\n') + '\n'
  );
}

/** Mean stall ratios, shares, work and occupancy over the launches of a stall run. */
function meanProfile(list: KernelProfile[]): KernelProfile | null {
  if (!list.length) return null;
  const mean = (get: (p: KernelProfile) => Record<string, number>) => {
    const out: Record<string, number> = {};
    for (const p of list) for (const [k, v] of Object.entries(get(p))) out[k] = (out[k] ?? 0) + v / list.length;
    return out;
  };
  const avg = (get: (p: KernelProfile) => number | null) => {
    const xs = list.map(get).filter((x): x is number => x !== null);
    return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null;
  };
  const last = list[list.length - 1];
  return {
    ...last,
    stalls: mean(p => p.stalls),
    stallShare: mean(p => p.stallShare),
    executedInstructions: avg(p => p.executedInstructions),
    instructionsPerThread: avg(p => p.instructionsPerThread ?? null),
    threadInstructions: avg(p => p.threadInstructions ?? null),
    achievedOccupancy: avg(p => p.achievedOccupancy),
    registers: avg(p => p.registers),
  };
}

/**
 * Profiles every kernel of `target` in the program until each has o.samples launches (at most 10
 * ncu runs each; a run that adds no launch ends it). In split mode a second, short run adds the
 * stall metrics. The first run's program output is kept: it is the variant's result check.
 */
export async function timeVariant(
  p: VariantProgram,
  target: BenchTarget,
  o: TimeOptions,
  progress?: (message: string) => void,
): Promise<TimeResult> {
  if (!o.toolchain.ncu) throw new MissingToolError('ncu', []);
  const profiler = new VariantProfiler(p, target, o, progress);
  try {
    for (const k of target.kernels) if (!(await profiler.profileKernel(k))) break;
  } finally {
    profiler.dispose();
  }
  const r = profiler.result();
  // a project's run that reached none of the loop's kernels: built, never launched
  if (target.anyLaunched && r.status === 'ok' && !r.groups.size)
    return { ...r, status: 'profile', message: neverLaunched(target, o.warmup) };
  return r;
}

/** One variant's ncu runs: the launches collected per kernel (and block size), and how the runs ended. */
class VariantProfiler {
  readonly groups = new Map<string, KernelSamples>();
  private status: TimeResult['status'] = 'ok';
  private message: string | null = null;
  private stdout: string | null = null;
  private programFailed: string | null = null;
  private runs = 0;
  private readonly work: string;
  private readonly ncu: string;
  private readonly command: string[];
  private readonly direct: boolean;

  constructor(
    private readonly p: VariantProgram,
    private readonly target: BenchTarget,
    private readonly o: TimeOptions,
    private readonly progress?: (message: string) => void,
  ) {
    this.ncu = o.toolchain.ncu!.path;
    this.command = programCommand(p.program, o);
    // Without reports to keep, ncu prints the raw page itself when the program ends: no
    // report file and no `ncu --import` afterwards (0.75 s a variant on an H100).
    this.direct = !o.keepReportsDir;
    this.work = scratchDir(o.runDir, 'unroll-lens-time-');
  }

  result(): TimeResult {
    return { status: this.status, message: this.message, groups: this.groups, stdout: this.stdout, programFailed: this.programFailed };
  }

  dispose(): void {
    fs.rmSync(this.work, { recursive: true, force: true });
  }

  private fail(status: TimeResult['status'], message: string | null = null): null {
    this.status = status;
    if (message !== null) this.message = message;
    return null;
  }

  /** Launches of k collected so far (the smallest over its block sizes). */
  private count(k: string): number {
    const n = Math.min(...[...this.groups.values()].filter(g => g.kernel === k).map(g => g.durations.length), Infinity);
    return n === Infinity ? 0 : n;
  }

  /**
   * One ncu run per instantiation: --launch-skip and --launch-count then count that kernel's own
   * launches (a program usually launches instantiations one after another). False: stop profiling.
   */
  async profileKernel(k: string): Promise<boolean> {
    const o = this.o;
    const kernels = this.target.kernels;
    const timeMetrics = (o.passes ?? 'combined') === 'combined' && o.stalls !== false ? PROFILE_METRICS : TIME_ONLY_METRICS;
    // Program runs: one, then as many as the launches the first one gave call for (a program
    // that launches the kernel 5 times past its warm-up needs 4 runs for 20 samples).
    let runsWanted = 1;
    for (let attempt = 0; this.count(k) < o.samples && attempt < runsWanted; attempt++) {
      const have = this.count(k);
      this.progress?.(
        `${this.p.label}: profiling ${kernels.length > 1 ? `${k} ` : ''}(${have}/${o.samples} samples${runsWanted > 1 ? `, run ${attempt + 1} of ${runsWanted}` : ''})`,
      );
      o.onSamples?.(have, o.samples, 'time');
      const raw = await this.profileRun(k, 'time', o.samples - have, timeMetrics, attempt);
      if (raw === null) return false;
      if (raw === 'none') break;
      for (const r of raw) {
        const launched = kernelProfile(r);
        const { key, blockSize } = keyOf(k, raw, r);
        const g = this.groups.get(key) ?? { kernel: k, blockSize, durations: [], last: null };
        if (launched.durationNs !== null) g.durations.push(launched.durationNs / 1e6);
        g.last = launched;
        this.groups.set(key, g);
      }
      // A run that added nothing will not add anything the next time either.
      if (this.count(k) === have) break;
      if (attempt === 0 && this.count(k) < o.samples)
        runsWanted = Math.min(MAX_PROGRAM_RUNS, 1 + Math.ceil((o.samples - this.count(k)) / this.count(k)));
    }
    o.onSamples?.(this.count(k), o.samples, 'time');
    if ((o.passes ?? 'combined') === 'split' && o.stalls !== false && [...this.groups.values()].some(g => g.kernel === k))
      return this.stallRun(k);
    return true;
  }

  /** Split mode: the stall metrics on a few launches, averaged into each group's last profile. */
  private async stallRun(k: string): Promise<boolean> {
    const o = this.o;
    this.progress?.(`${this.p.label}: stall reasons${this.target.kernels.length > 1 ? ` of ${k}` : ''}`);
    o.onSamples?.(this.count(k), o.samples, 'stalls');
    const raw = await this.profileRun(k, 'stalls', Math.max(1, o.stallLaunches ?? 3), STALL_METRICS, 0);
    if (raw === null) return false;
    if (raw === 'none') return true;
    const byKey = new Map<string, KernelProfile[]>();
    for (const r of raw) {
      const { key } = keyOf(k, raw, r);
      byKey.set(key, [...(byKey.get(key) ?? []), kernelProfile(r)]);
    }
    for (const [key, list] of byKey) {
      const g = this.groups.get(key);
      const mean = meanProfile(list);
      if (g && mean) g.last = { ...mean, durationNs: g.last?.durationNs ?? null, registers: mean.registers ?? g.last?.registers ?? null };
    }
    return true;
  }

  /** One ncu run of kernel k: its launches, 'none' when it profiled none of an optional instantiation, or null after a failure (status set). */
  private async profileRun(
    k: string,
    kind: 'time' | 'stalls',
    count: number,
    metrics: string[],
    attempt: number,
  ): Promise<RawKernelRow[] | 'none' | null> {
    const o = this.o;
    const first = this.runs++ === 0;
    const report = path.join(this.work, `${this.target.kernels.indexOf(k)}-${kind}-${attempt}`);
    const ncuArgs = [
      '--kernel-name-base',
      'mangled',
      '--kernel-name',
      `regex:^${escapeRegex(k)}$`,
      '--launch-skip',
      String(o.warmup),
      '--launch-count',
      String(count),
      '--metrics',
      metrics.join(','),
      '--clock-control',
      o.clockControl,
      '--cache-control',
      o.cacheControl ?? 'all',
      ...(this.direct ? ['--csv', '--page', 'raw', '--print-kernel-base', 'mangled'] : ['--export', report, '--force-overwrite']),
      ...this.command,
    ];
    const startMs = Date.now();
    const prof = await launch(o, [this.ncu, ...ncuArgs], {
      timeoutMs: o.timeoutMs * 4,
      signal: o.signal,
      cwd: runFolder(this.p),
      env: o.env,
      sharedTemp: true, // ncu's profiling lock lives in $TMPDIR (gpuSlots.ts)
    });
    o.onRun?.({ kind, startMs, endMs: Date.now() });
    if (prof.cancelled) return this.fail('cancelled');
    if (prof.timedOut) return this.fail('timeout', 'profiling under ncu timed out');
    const appExit = applicationExitCode((prof.stdout + '\n' + prof.stderr).split(/\r?\n/));
    if (first) {
      this.stdout = programOutput(prof.stdout);
      if (appExit !== undefined && appExit !== 0) {
        this.programFailed = classifyNcuFailure(prof.stdout, prof.stderr, prof.exitCode).message;
        return this.fail('profile', this.programFailed);
      }
    }
    const failure =
      prof.exitCode !== 0 || /No kernels were profiled/.test(prof.stdout + prof.stderr)
        ? classifyNcuFailure(prof.stdout, prof.stderr, prof.exitCode)
        : null;
    if (failure) {
      if ((k !== this.target.kernel || this.target.anyLaunched) && failure.kind === 'no-kernels') return 'none'; // this instantiation is not launched with these arguments
      return this.fail('profile', `${failure.message}${failure.fix ? ` Fix: ${failure.fix}` : ''}`);
    }
    const csv = this.direct
      ? { ...prof, stdout: rawPageOf(prof.stdout) }
      : await o.toolchain.runner(this.ncu, ['--import', `${report}.ncu-rep`, '--csv', '--page', 'raw', '--print-kernel-base', 'mangled'], {
          timeoutMs: 120_000,
          signal: o.signal,
        });
    if (o.keepReportsDir) this.keep(k, kind, attempt, csv.stdout, report);
    if (csv.cancelled) return this.fail('cancelled');
    return this.readPage(k, csv, report);
  }

  /** A page cut off or damaged (ncu killed, disk full, a crash part-way) is a failure, never a launch with empty stalls. */
  private readPage(
    k: string,
    csv: Pick<ProcessResult, 'stdout' | 'stderr' | 'exitCode' | 'signal' | 'timedOut'>,
    report: string,
  ): RawKernelRow[] | 'none' | null {
    try {
      if (csv.exitCode !== 0 || csv.timedOut)
        throw new RawPageError(
          csv.timedOut
            ? `ncu --import timed out after ${120} s`
            : `ncu${this.direct ? '' : ' --import'} exited with ${csv.exitCode ?? csv.signal}: ${(csv.stderr || csv.stdout).trim().split('\n').slice(-2).join(' | ')}`,
        );
      const raw = parseRawPageStrict(csv.stdout).kernels;
      if (!raw.length && (k !== this.target.kernel || this.target.anyLaunched)) return 'none';
      if (!raw.length)
        return this.fail(
          'profile',
          `ncu profiled no launch of ${k} (launch-skip ${this.o.warmup}); does the program launch it with these arguments?`,
        );
      return raw;
    } catch (e) {
      if (!(e instanceof RawPageError)) throw e;
      const where = this.direct ? 'printed after the program' : `${path.basename(report)}.ncu-rep`;
      return this.fail('profile', `could not read ncu's raw page for ${k} (${where}): ${e.message}`);
    }
  }

  /** --keep-reports: the raw page and the report, in the user's folder, written without following a link planted in it. */
  private keep(k: string, kind: 'time' | 'stalls', attempt: number, page: string, report: string): void {
    const o = this.o;
    const dir = o.keepReportsDir!;
    fs.mkdirSync(dir, { recursive: true });
    const kernels = this.target.kernels;
    const instantiation = kernels.length > 1 ? `-${kernels.indexOf(k)}` : '';
    const stage = kind === 'stalls' ? '-stalls' : '';
    const kept = `${path.basename(this.p.file, '.cu')}-L${o.loops.join('_')}-${this.p.label}${instantiation}${stage}-${attempt}`;
    safeWriteFile(dir, `${kept}.raw.csv`, page, { fsync: false });
    try {
      safeCopyFile(dir, `${kept}.ncu-rep`, `${report}.ncu-rep`, { fsync: false });
    } catch {
      /* report missing: the CSV says why */
    }
  }
}

/** Group key of a launch: the kernel, plus its block size when the kernel runs with several. */
function keyOf(k: string, raw: RawKernelRow[], r: RawKernelRow): { key: string; blockSize: string | null } {
  const several = new Set(raw.map(x => String(x.blockSize))).size > 1;
  const block = r.blockSize ? `(${r.blockSize.join(', ')})` : null;
  return { key: several ? `${k} ${block}` : k, blockSize: several ? block : null };
}
