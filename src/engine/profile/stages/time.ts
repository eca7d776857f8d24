// Stage 3, time: kernel durations and stall reasons of one variant under Nsight Compute
// (gpu__time_duration.sum and the warp-state metrics), from one ncu run per instantiation
// repeated until each has enough launches.
import * as fs from 'fs';
import * as path from 'path';
import { safeCopyFile, safeWriteFile } from '../../safeWrite';
import { MissingToolError } from '../../toolchain/discover';
import type { BenchOptions, NcuPasses } from '../types';
import type { RawKernelRow } from '../ncuCsv';
import { parseRawPageStrict, RawPageError } from '../rawPageStream';
import { applicationExitCode, classifyNcuFailure, programOutput } from '../ncuErrors';
import { KernelProfile, kernelProfile } from '../stalls';
import type { BenchTarget } from './build';
import { escapeRegex, launch, LaunchOptions, programCommand, VariantProgram } from './program';
import { scratchDir } from '../../toolchain/processGuard';

/** ncu metrics collected per launch: duration, warp-state stall ratios, work and occupancy. */
export const PROFILE_METRICS = [
  'gpu__time_duration.sum',
  'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio',
  'smsp__inst_executed.sum',
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
  /** The profile of the last launch read. */
  last: KernelProfile | null;
}

/** Program runs per kernel at most, however few launches one run gives. */
export const MAX_PROGRAM_RUNS = 50;

/** The warp-state metrics alone: what the stall run of the split mode collects. */
export const STALL_METRICS = PROFILE_METRICS.filter(m => m !== 'gpu__time_duration.sum');

export type { NcuPasses };

export interface TimeResult {
  status: 'ok' | 'cancelled' | 'timeout' | 'profile';
  message: string | null;
  /** Keyed by mangled name, plus ` (x, y, z)` when a kernel runs with several block sizes; what was collected before a failure. */
  groups: Map<string, KernelSamples>;
  /** What the program printed in the first ncu run (ncu's own lines removed), null when it did not finish. */
  stdout: string | null;
  /** The first ncu run failed because the program itself did (non-zero exit, crash): its message. */
  programFailed: string | null;
}

/** One ncu process on the GPU, for the run's cost accounting. */
export interface GpuRun {
  /** time, stalls: ncu runs; check: a plain program run for its result. */
  kind: 'time' | 'stalls' | 'check';
  startMs: number;
  endMs: number;
}

export type TimeOptions = LaunchOptions &
  Pick<BenchOptions, 'samples' | 'warmup' | 'clockControl' | 'timeoutMs' | 'signal' | 'keepReportsDir' | 'loops'> & {
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
export function meanProfile(list: KernelProfile[]): KernelProfile | null {
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
  const t = o.toolchain;
  if (!t.ncu) throw new MissingToolError('ncu', []);
  const ncu = t.ncu.path;
  const { kernel, kernels } = target;
  const command = programCommand(p.program, o);
  const passes = o.passes ?? 'combined';
  const groups = new Map<string, KernelSamples>();
  let status: TimeResult['status'] = 'ok';
  let message: string | null = null;
  let stdout: string | null = null;
  let programFailed: string | null = null;
  const work = scratchDir(o.runDir, 'unroll-lens-time-');
  let runs = 0;

  /** One ncu run of kernel k: its launches, 'none' when it profiled none of an optional instantiation, or null after a failure (status set). */
  const profileRun = async (
    k: string,
    kind: 'time' | 'stalls',
    count: number,
    metrics: string[],
    attempt: number,
  ): Promise<RawKernelRow[] | 'none' | null> => {
    const first = runs++ === 0;
    const direct = !o.keepReportsDir;
    const report = path.join(work, `${kernels.indexOf(k)}-${kind}-${attempt}`);
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
      // Without reports to keep, ncu prints the raw page itself when the program ends: no
      // report file and no `ncu --import` afterwards (0.75 s a variant on an H100).
      ...(direct ? ['--csv', '--page', 'raw', '--print-kernel-base', 'mangled'] : ['--export', report, '--force-overwrite']),
      ...command,
    ];
    const startMs = Date.now();
    const prof = await launch(o, [ncu, ...ncuArgs], {
      timeoutMs: o.timeoutMs * 4,
      signal: o.signal,
      cwd: path.dirname(p.file),
      env: o.env,
      sharedTemp: true, // ncu's profiling lock lives in $TMPDIR (gpuSlots.ts)
    });
    o.onRun?.({ kind, startMs, endMs: Date.now() });
    if (prof.cancelled) {
      status = 'cancelled';
      return null;
    }
    if (prof.timedOut) {
      status = 'timeout';
      message = 'profiling under ncu timed out';
      return null;
    }
    const appExit = applicationExitCode((prof.stdout + '\n' + prof.stderr).split(/\r?\n/));
    if (first) {
      stdout = programOutput(prof.stdout);
      if (appExit !== undefined && appExit !== 0) {
        programFailed = classifyNcuFailure(prof.stdout, prof.stderr, prof.exitCode).message;
        status = 'profile';
        message = programFailed;
        return null;
      }
    }
    const failure =
      prof.exitCode !== 0 || /No kernels were profiled/.test(prof.stdout + prof.stderr)
        ? classifyNcuFailure(prof.stdout, prof.stderr, prof.exitCode)
        : null;
    if (failure) {
      if (k !== kernel && failure.kind === 'no-kernels') return 'none'; // this instantiation is not launched with these arguments
      status = 'profile';
      message = `${failure.message}${failure.fix ? ` Fix: ${failure.fix}` : ''}`;
      return null;
    }
    const csv = direct
      ? { ...prof, stdout: rawPageOf(prof.stdout) }
      : await t.runner(ncu, ['--import', `${report}.ncu-rep`, '--csv', '--page', 'raw', '--print-kernel-base', 'mangled'], {
          timeoutMs: 120_000,
          signal: o.signal,
        });
    if (o.keepReportsDir) {
      fs.mkdirSync(o.keepReportsDir, { recursive: true });
      const instantiation = kernels.length > 1 ? `-${kernels.indexOf(k)}` : '';
      const stage = kind === 'stalls' ? '-stalls' : '';
      const kept = path.join(
        o.keepReportsDir,
        `${path.basename(p.file, '.cu')}-L${o.loops.join('_')}-${p.label}${instantiation}${stage}-${attempt}`,
      );
      // The user's folder: written without following a link planted in it.
      safeWriteFile(o.keepReportsDir, `${path.basename(kept)}.raw.csv`, csv.stdout, { fsync: false });
      try {
        safeCopyFile(o.keepReportsDir, `${path.basename(kept)}.ncu-rep`, `${report}.ncu-rep`, { fsync: false });
      } catch {
        /* report missing: the CSV says why */
      }
    }
    if (csv.cancelled) {
      status = 'cancelled';
      return null;
    }
    // A page cut off or damaged (ncu killed, disk full, a crash part-way) is a failure, never
    // a launch with empty stalls.
    try {
      if (csv.exitCode !== 0 || csv.timedOut)
        throw new RawPageError(
          csv.timedOut
            ? `ncu --import timed out after ${120} s`
            : `ncu${direct ? '' : ' --import'} exited with ${csv.exitCode ?? csv.signal}: ${(csv.stderr || csv.stdout).trim().split('\n').slice(-2).join(' | ')}`,
        );
      const raw = parseRawPageStrict(csv.stdout).kernels;
      if (!raw.length && k !== kernel) return 'none';
      if (!raw.length) {
        status = 'profile';
        message = `ncu profiled no launch of ${k} (launch-skip ${o.warmup}); does the program launch it with these arguments?`;
        return null;
      }
      return raw;
    } catch (e) {
      if (!(e instanceof RawPageError)) throw e;
      status = 'profile';
      message = `could not read ncu's raw page for ${k} (${direct ? 'printed after the program' : `${path.basename(report)}.ncu-rep`}): ${e.message}`;
      return null;
    }
  };

  /** Group key of a launch: the kernel, plus its block size when the kernel runs with several. */
  const keyOf = (k: string, raw: RawKernelRow[], r: RawKernelRow) => {
    const several = new Set(raw.map(x => String(x.blockSize))).size > 1;
    const block = r.blockSize ? `(${r.blockSize.join(', ')})` : null;
    return { key: several ? `${k} ${block}` : k, blockSize: several ? block : null };
  };

  try {
    // One ncu run per instantiation: --launch-skip and --launch-count then count that
    // kernel's own launches (a program usually launches instantiations one after another).
    const count = (k: string) => {
      const n = Math.min(...[...groups.values()].filter(g => g.kernel === k).map(g => g.durations.length), Infinity);
      return n === Infinity ? 0 : n;
    };
    const timeMetrics = passes === 'combined' ? PROFILE_METRICS : ['gpu__time_duration.sum', 'launch__registers_per_thread'];
    profiling: for (const k of kernels) {
      // Program runs: one, then as many as the launches the first one gave call for (a program
      // that launches the kernel 5 times past its warm-up needs 4 runs for 20 samples).
      let runsWanted = 1;
      for (let attempt = 0; count(k) < o.samples && attempt < runsWanted; attempt++) {
        const have = count(k);
        progress?.(
          `${p.label}: profiling ${kernels.length > 1 ? `${k} ` : ''}(${have}/${o.samples} samples${runsWanted > 1 ? `, run ${attempt + 1} of ${runsWanted}` : ''})`,
        );
        o.onSamples?.(have, o.samples, 'time');
        const raw = await profileRun(k, 'time', o.samples - have, timeMetrics, attempt);
        if (raw === null) break profiling;
        if (raw === 'none') break;
        for (const r of raw) {
          const launched = kernelProfile(r);
          const { key, blockSize } = keyOf(k, raw, r);
          const g = groups.get(key) ?? { kernel: k, blockSize, durations: [], last: null };
          if (launched.durationNs !== null) g.durations.push(launched.durationNs / 1e6);
          g.last = launched;
          groups.set(key, g);
        }
        // A run that added nothing will not add anything the next time either.
        if (count(k) === have) break;
        if (attempt === 0 && count(k) < o.samples)
          runsWanted = Math.min(MAX_PROGRAM_RUNS, 1 + Math.ceil((o.samples - count(k)) / count(k)));
      }
      o.onSamples?.(count(k), o.samples, 'time');
      if (passes === 'split' && [...groups.values()].some(g => g.kernel === k)) {
        progress?.(`${p.label}: stall reasons${kernels.length > 1 ? ` of ${k}` : ''}`);
        o.onSamples?.(count(k), o.samples, 'stalls');
        const raw = await profileRun(k, 'stalls', Math.max(1, o.stallLaunches ?? 3), STALL_METRICS, 0);
        if (raw === null) break profiling;
        if (raw === 'none') continue;
        const byKey = new Map<string, KernelProfile[]>();
        for (const r of raw) {
          const { key } = keyOf(k, raw, r);
          byKey.set(key, [...(byKey.get(key) ?? []), kernelProfile(r)]);
        }
        for (const [key, list] of byKey) {
          const g = groups.get(key);
          const mean = meanProfile(list);
          if (g && mean)
            g.last = { ...mean, durationNs: g.last?.durationNs ?? null, registers: mean.registers ?? g.last?.registers ?? null };
        }
      }
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  return { status, message, groups, stdout, programFailed };
}
