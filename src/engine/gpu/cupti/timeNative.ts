// The time stage without ncu: the variant's program runs as itself, with the CUPTI kernel timer
// injected (CUDA_INJECTION64_PATH), and every launch of the timed kernels is recorded with its GPU
// start and end. Caches stay as the program leaves them (warm between launches) and clocks as the
// GPU sets them: the program's own conditions, which ncu's defaults (flush before each launch,
// base clocks) are not. The first run's output is the variant's result check, as under ncu.
import * as fs from 'fs';
import * as path from 'path';
import { launch, programCommand, runFolder, type LaunchOptions, type VariantProgram } from '../stages/program';
import { moreOfSameTemplate } from '../stages/sameTemplate';
import { neverLaunched, type BenchTarget } from '../stages/build';
import type { GpuRun, KernelSamples, TimeResult } from '../stages/time';
import type { BenchOptions } from '../options';
import { scratchDir } from '../../toolchain/processGuard';
import { SafeWriteError, safeWriteFile } from '../../base/safeWrite';
import { BoundedReadError, READ_CAPS, readBoundedText } from '../../base/boundedRead';
import { KernelLaunch, parseTimerRecords, PcSampling, TimerRecords } from './timerRecords';
import { kernelSamples, kernelStalls, PC_SAMPLING_PERIOD, pcSamplingProblem } from './pcStalls';
import type { StallBreakdown } from '../../profile/stalls';

/** Fewer PC samples of a kernel than this: its stall mix is unknown, not a guess from a handful. */
const MIN_PC_SAMPLES = 200;

/** Program runs per variant at most, however few launches one run gives (as under ncu). */
const MAX_PROGRAM_RUNS = 50;

export type NativeTimeOptions = LaunchOptions &
  Pick<BenchOptions, 'samples' | 'warmup' | 'timeoutMs' | 'signal' | 'keepReportsDir'> & {
    /** The built timer library (timerLibrary.ts). */
    library: string;
    env?: Record<string, string>;
    /**
     * Sample warp stalls with CUPTI PC sampling in the first run (its durations are kept: sampling
     * every 2^15 cycles did not move them, docs/measurements.md). Default off.
     */
    stallSampling?: boolean;
    /**
     * Read each launch's gpu__time_duration (ncu's duration) with CUPTI's range profiler in the same
     * run (default on): the kernel records' span reads ~0.6 µs a launch longer on an H200, over 1 %
     * of any kernel under 60 µs (docs/measurements.md, issue 42). Off, or refused: the records time it.
     */
    gpuTime?: boolean;
    /**
     * Program runs an earlier variant of the same program needed: with 2 or more, the second run
     * starts during the first (held at its first launch), as every later run does during the one before.
     */
    expectedRuns?: number;
    /**
     * The first run, started by the caller while the variant before was timed (startAhead), held
     * at its first launch: this timing lets it go instead of starting one.
     */
    ahead?: AheadRun;
    /** Folder for the timer's output files (on storage a launcher's nodes see). */
    runDir?: string;
    onRun?: (r: GpuRun) => void;
    onSamples?: (have: number, wanted: number, phase: 'time' | 'stalls') => void;
  };

/** `(x, y, z)` of a launch's block. */
const blockText = (l: KernelLaunch) => `(${l.block.join(', ')})`;

/**
 * Runs the program until every kernel of `target` has o.samples launches past o.warmup (per run,
 * as ncu's --launch-skip counts them), at most MAX_PROGRAM_RUNS runs; one that adds no launch ends
 * it. Durations come from CUPTI's kernel records (ns, exact); groups are keyed as the ncu stage
 * keys them (the kernel, and its block size when it runs with several).
 */
export async function timeNative(
  p: VariantProgram,
  target: BenchTarget,
  o: NativeTimeOptions,
  progress?: (message: string) => void,
): Promise<TimeResult> {
  const work = scratchDir(o.runDir, 'unroll-lens-timer-');
  const groups = new Map<string, KernelSamples>();
  const count = (k: string) => {
    const n = Math.min(...[...groups.values()].filter(g => g.kernel === k).map(g => g.durations.length), Infinity);
    return n === Infinity ? 0 : n;
  };
  // the loop's kernels, and instantiations of its template that other units built, as they launch
  const kernels = [...target.kernels];
  const least = () => Math.min(...kernels.map(count));
  let stdout: string | null = null;
  let stalls: Map<string, StallBreakdown> | null = null;
  let stallProblem: string | null = null;
  let pcSampling: PcSampling | null = null;
  const sources = new DurationSources();
  // The next run starts while this one is timed, held at its first kernel launch until this one
  // has exited (UNROLL_LENS_HOLD): its start-up (CUDA context, the program's own set-up) hides
  // behind this run's work, and no two programs' kernels share the GPU.
  let next: Started | null = null;
  // gpu__time_duration's profiler (kernel replay) leaves a run without PC samples and its kernel
  // records without times (measured on an H200): stalls are then sampled in a run of their own, first
  let gpuTime = o.gpuTime !== false;
  const separateSampling = gpuTime && !!o.stallSampling;
  try {
    let runsWanted = Math.max(1, Math.min(MAX_PROGRAM_RUNS, o.expectedRuns ?? 1)) + (separateSampling ? 1 : 0);
    for (let run = 0; least() < o.samples && run < runsWanted; run++) {
      const have = least();
      progress?.(`${p.label}: timing (${have}/${o.samples} samples${runsWanted > 1 ? `, run ${run + 1} of ${runsWanted}` : ''})`);
      o.onSamples?.(have, o.samples, 'time');
      const sample = run === 0 && !!o.stallSampling;
      const timed = !(sample && separateSampling);
      const current: Started = next ?? (run === 0 && o.ahead ? o.ahead : startRun(p, o, work, run, sample, false, gpuTime && !sample));
      current.go();
      next = run + 1 < runsWanted ? startRun(p, o, work, run + 1, false, true, gpuTime) : null;
      const r = await current.outcome;
      if ('status' in r) return { ...r, groups, stdout: run === 0 ? r.stdout : stdout };
      if (run === 0) stdout = r.stdout;
      kernels.push(...moreOfSameTemplate(target.sameTemplate ?? [], kernels, new Set(r.records.launches.map(l => l.kernel))));
      if (sample) ({ stalls, problem: stallProblem } = stallsOf(r.records, kernels));
      if (sample) pcSampling = r.records.pcSampling;
      if (!timed) continue;
      sources.run(r.records.gpuTimeProblem);
      if (untimed(r.records)) {
        // the profiler was on and its ranges cannot be read: the records carry no times either; again without it
        gpuTime = false;
        if (next) await next.stop();
        next = null;
        runsWanted = Math.min(MAX_PROGRAM_RUNS + 1, runsWanted + 1);
        continue;
      }
      for (const k of kernels) addLaunches(groups, k, r.records.launches, o, sources);
      if (least() === have) {
        // nothing new: a kernel this run never launched (past its warm-up) will not come later
        const missing = kernels.filter(k => count(k) === 0);
        if (missing.length === kernels.length && target.anyLaunched) return fail('profile', neverLaunched(target, o.warmup));
        if ((missing.includes(target.kernel) && !target.anyLaunched) || missing.length === kernels.length)
          return fail('profile', `the program launched ${missing.join(', ')} no more than ${o.warmup} times (the warm-up) in a run`);
        break;
      }
      if (have === 0 && least() < o.samples) {
        // the first timed run says how many launches a run gives
        runsWanted = run + Math.min(MAX_PROGRAM_RUNS, 1 + Math.ceil((o.samples - least()) / Math.max(1, least())));
        if (!next && runsWanted > run + 1) next = startRun(p, o, work, run + 1, false, true, gpuTime);
      }
    }
    o.onSamples?.(least(), o.samples, 'time');
    if (stalls) withStalls(groups, stalls);
    const gpuTimeProblem = sources.settle(groups);
    const runs = runsWanted - (separateSampling ? 1 : 0);
    return { status: 'ok', message: null, groups, stdout, programFailed: null, stallProblem, runs, pcSampling, gpuTimeProblem };
  } finally {
    // a run started ahead and not needed (enough samples, or a failure): stopped before its first launch
    if (next) await next.stop();
    fs.rmSync(work, { recursive: true, force: true });
  }

  function fail(status: TimeResult['status'], message: string): TimeResult {
    return { status, message, groups, stdout, programFailed: null };
  }
}

/** Each timed kernel's stall mix from the run's PC samples, and why a kernel has none. */
function stallsOf(r: TimerRecords, kernels: string[]): { stalls: Map<string, StallBreakdown>; problem: string | null } {
  const stalls = new Map<string, StallBreakdown>();
  const problem = pcSamplingProblem(r.pcSampling);
  if (problem || !r.pcSampling) return { stalls, problem };
  const few: string[] = [];
  for (const k of kernels) {
    const n = kernelSamples(r.pcSampling, k);
    if (n < MIN_PC_SAMPLES) few.push(`${k}: ${n}`);
    else stalls.set(k, kernelStalls(r.pcSampling, k));
  }
  return { stalls, problem: few.length ? `too few PC samples for a stall mix (${few.join(', ')}; at least ${MIN_PC_SAMPLES})` : null };
}

/** The stall mix onto every group of its kernel (PC samples are per function: one mix for all its block sizes). */
function withStalls(groups: Map<string, KernelSamples>, stalls: Map<string, StallBreakdown>): void {
  for (const g of groups.values()) {
    const s = stalls.get(g.kernel);
    if (s && g.last) Object.assign(g.last, { stalls: s.stalls, stallShare: s.stallShare, stallSource: s.source });
  }
}

/**
 * Which clock each group's durations came from. A launch is timed by its gpu__time_duration when
 * its run read them, else by its record's span; a group whose runs differ falls back to the
 * records for every sample (one clock per median), and the first run's reason is kept.
 */
class DurationSources {
  private problem: string | null = null;
  private readonly records = new Map<string, number[]>();
  private readonly mixed = new Set<string>();
  /** A run's reason its launches have no gpu__time_duration (null: they all have one). */
  run(problem: string | null): void {
    this.problem ??= problem;
  }
  add(key: string, g: KernelSamples, l: KernelLaunch): void {
    const source = l.gpuTimeNs !== null ? 'gpu-time' : 'kernel-record';
    if (g.durationSource && g.durationSource !== source) this.mixed.add(key);
    g.durationSource = source;
    // a record under the profiler's kernel replay reads 0: no time to fall back on
    const r = this.records.get(key) ?? [];
    if (l.durationNs > 0) r.push(l.durationNs / 1e6);
    this.records.set(key, r);
  }
  /**
   * Groups timed by both clocks go back to the records that hold a time (fewer samples when a
   * profiled run's records read 0); returns why any group is not timed by gpu__time_duration.
   */
  settle(groups: Map<string, KernelSamples>): string | null {
    for (const key of this.mixed) {
      const g = groups.get(key);
      if (!g) continue;
      g.durations = this.records.get(key) ?? g.durations;
      g.durationSource = 'kernel-record';
      if (g.last) g.last.durationNs = Math.round((g.durations.at(-1) ?? 0) * 1e6);
    }
    return [...groups.values()].some(g => g.durationSource === 'kernel-record') ? (this.problem ?? 'some runs did not read it') : null;
  }
}

/** A run whose launches have neither a gpu__time_duration nor a record's span (the profiler was on and failed). */
function untimed(r: TimerRecords): boolean {
  return r.gpuTimeProblem !== null && r.launches.some(l => l.gpuTimeNs === null && l.durationNs === 0);
}

/** This run's launches of kernel k past the warm-up, up to what is still wanted, in launch order. */
function addLaunches(
  groups: Map<string, KernelSamples>,
  k: string,
  launches: KernelLaunch[],
  o: Pick<BenchOptions, 'samples' | 'warmup'>,
  sources: DurationSources,
): void {
  const mine = launches.filter(l => l.kernel === k).sort((a, b) => a.startNs - b.startNs);
  const several = new Set(mine.map(blockText)).size > 1;
  for (const l of mine.slice(o.warmup)) {
    const block = blockText(l);
    const key = several ? `${k} ${block}` : k;
    const g = groups.get(key) ?? { kernel: k, blockSize: several ? block : null, durations: [], last: null };
    if (g.durations.length >= o.samples) continue;
    const ns = l.gpuTimeNs ?? l.durationNs;
    g.durations.push(ns / 1e6);
    sources.add(key, g, l);
    g.last = {
      name: k,
      id: null,
      durationNs: ns,
      stalls: {},
      stallShare: {},
      stallSource: 'none',
      executedInstructions: null,
      achievedOccupancy: null,
      registers: l.registers,
      blockSize: l.block,
      gridSize: l.grid,
    };
    groups.set(key, g);
  }
}

type RunOutcome = Awaited<ReturnType<typeof runOnce>>;

/** A variant's first run started ahead of its turn (startAhead); `stop` ends it if it is never used. */
export type AheadRun = Started;

/**
 * Starts a variant's first run now, held at its first kernel launch until the timing that takes
 * it (timeNative with `ahead`) lets it go: its start-up hides behind the variant timed before it.
 * `o` must be the options that timing will use. Its files live in a folder of their own, removed
 * once the run has ended.
 */
export function startAhead(p: VariantProgram, o: NativeTimeOptions): AheadRun {
  const work = scratchDir(o.runDir, 'unroll-lens-ahead-');
  const started = startRun(p, o, work, 0, !!o.stallSampling, true, o.gpuTime !== false && !o.stallSampling);
  const clean = () => fs.rmSync(work, { recursive: true, force: true });
  started.outcome.then(clean, clean);
  return started;
}

/** A run under way: `go` lets a held run past its first launch; `stop` ends one never let go. */
interface Started {
  outcome: Promise<RunOutcome>;
  go(): void;
  stop(): Promise<void>;
}

/**
 * Starts run `run` of the program; `held`: it waits at its first kernel launch until go(). A held
 * run's time limit is twice the run's, since it may wait for a whole run before its own starts.
 */
function startRun(
  p: VariantProgram,
  o: NativeTimeOptions,
  work: string,
  run: number,
  sample: boolean,
  held: boolean,
  gpuTime: boolean,
): Started {
  const gate = path.join(work, `go-${run}`);
  const local = new AbortController();
  const abort = () => local.abort();
  o.signal?.addEventListener('abort', abort);
  if (o.signal?.aborted) local.abort();
  let released: number | null = null;
  const outcome = runOnce(
    p,
    { ...o, signal: local.signal, timeoutMs: held ? o.timeoutMs * 2 : o.timeoutMs },
    path.join(work, `run-${run}.jsonl`),
    { sample, gpuTime },
    held ? { gate, released: () => released } : null,
  ).finally(() => o.signal?.removeEventListener('abort', abort));
  outcome.catch(() => undefined); // awaited by the caller, or stopped
  return {
    outcome,
    go: () => {
      if (!held || released !== null) return;
      released = Date.now();
      try {
        fs.writeFileSync(gate, '');
      } catch {
        // the run has ended already (it failed before its first launch; a run started ahead has its folder removed then): its outcome says how
      }
    },
    stop: async () => {
      local.abort();
      await outcome.catch(() => undefined);
    },
  };
}

/** One run of the program with the timer: its output and records, or why it failed. */
async function runOnce(
  p: VariantProgram,
  o: NativeTimeOptions,
  out: string,
  mode: { sample: boolean; gpuTime: boolean },
  hold: { gate: string; released: () => number | null } | null,
): Promise<{ stdout: string; records: TimerRecords } | (Omit<TimeResult, 'groups' | 'stdout'> & { stdout: string | null })> {
  const startMs = Date.now();
  const run = await launch(o, programCommand(p.program, o), {
    timeoutMs: o.timeoutMs,
    signal: o.signal,
    cwd: runFolder(p),
    env: {
      ...o.env,
      CUDA_INJECTION64_PATH: o.library,
      UNROLL_LENS_TIMER_OUT: out,
      ...(mode.sample ? { UNROLL_LENS_PCSAMPLING: String(PC_SAMPLING_PERIOD) } : {}),
      ...(hold ? { UNROLL_LENS_HOLD: hold.gate } : {}),
      UNROLL_LENS_GPU_TIME: mode.gpuTime ? '1' : '0',
    },
  });
  // a held run has the GPU from when it was let go; one stopped before that never had it
  const from = hold ? hold.released() : startMs;
  if (from !== null) o.onRun?.({ kind: 'time', startMs: from, endMs: Date.now() });
  if (run.cancelled) return { status: 'cancelled', message: null, stdout: null, programFailed: null };
  if (run.timedOut)
    return {
      status: 'timeout',
      message: `the program ran longer than ${o.timeoutMs / 1000} s and was killed`,
      stdout: null,
      programFailed: null,
    };
  if (run.exitCode !== 0 || run.spawnError) {
    const message =
      run.spawnError ?? `exit ${run.exitCode ?? run.signal}: ${(run.stderr || run.stdout).trim().split('\n').slice(-3).join(' | ')}`;
    return { status: 'profile', message, stdout: run.stdout, programFailed: message };
  }
  let text: string;
  try {
    text = readBoundedText(out, { maxBytes: READ_CAPS.timerRecords, what: 'CUPTI timer output' });
  } catch (e) {
    const why = e instanceof BoundedReadError ? e.message : `no timer output (${(e as Error).message})`;
    return { status: 'profile', message: `the CUPTI timer wrote nothing usable: ${why}`, stdout: run.stdout, programFailed: null };
  }
  if (o.keepReportsDir)
    try {
      keep(o.keepReportsDir, p, text, out);
    } catch (e) {
      if (!(e instanceof SafeWriteError)) throw e;
      return { status: 'profile', message: `--keep-reports: ${e.message}`, stdout: run.stdout, programFailed: null };
    }
  const records = parseTimerRecords(text);
  const problem = recordsProblem(records);
  if (problem) return { status: 'profile', message: problem, stdout: run.stdout, programFailed: null };
  return { stdout: run.stdout, records };
}

/** The run's records kept for the record (--keep-reports): `<file>-<label>-<run>.timer.jsonl`. */
function keep(dir: string, p: VariantProgram, records: string, out: string): void {
  fs.mkdirSync(dir, { recursive: true });
  const base = path.basename(p.file).replace(/\.[^.]+$/, '');
  // the safe writer: never through a link planted in the folder (the ncu stage's reports go the same way)
  safeWriteFile(dir, `${base}-${p.label}-${path.basename(out, '.jsonl')}.timer.jsonl`, records, { fsync: false });
}

/** Why a run's records cannot be trusted: the timer never started, CUPTI failed, records were dropped or never flushed. */
export function recordsProblem(r: TimerRecords): string | null {
  if (!r.initialised)
    return 'the CUPTI timer did not start in the program (the driver ignored CUDA_INJECTION64_PATH, or another tool holds CUPTI)';
  if (r.errors.length) return `the CUPTI timer reported: ${r.errors.slice(0, 3).join('; ')}`;
  if (!r.end) return 'the program ended without the CUPTI timer flushing its records (killed, or exited through _exit)';
  if (r.end.dropped > 0) return `CUPTI dropped ${r.end.dropped} kernel records (its buffers were full): the durations would be incomplete`;
  if (r.end.records !== r.launches.length) return `the CUPTI timer wrote ${r.end.records} records, ${r.launches.length} were read`;
  return null;
}
