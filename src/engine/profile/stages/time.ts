// Stage 3, time: kernel durations and stall reasons of one variant under Nsight Compute
// (gpu__time_duration.sum and the warp-state metrics), from one ncu run per instantiation
// repeated until each has enough launches.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { MissingToolError } from '../../toolchain/discover';
import type { BenchOptions } from '../bench';
import type { RawKernelRow } from '../ncuCsv';
import { parseRawPageStrict, RawPageError } from '../rawPageStream';
import { classifyNcuFailure } from '../ncuErrors';
import { KernelProfile, kernelProfile } from '../stalls';
import type { BenchTarget } from './build';
import { escapeRegex, launch, LaunchOptions, programCommand, VariantProgram } from './program';

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

export interface TimeResult {
  status: 'ok' | 'cancelled' | 'timeout' | 'profile';
  message: string | null;
  /** Keyed by mangled name, plus ` (x, y, z)` when a kernel runs with several block sizes; what was collected before a failure. */
  groups: Map<string, KernelSamples>;
}

export type TimeOptions = LaunchOptions &
  Pick<BenchOptions, 'samples' | 'warmup' | 'clockControl' | 'timeoutMs' | 'signal' | 'keepReportsDir' | 'loops'>;

/** Profiles every kernel of `target` in the program until each has o.samples launches (at most 10 ncu runs each). */
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
  const groups = new Map<string, KernelSamples>();
  let status: TimeResult['status'] = 'ok';
  let message: string | null = null;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'unroll-lens-time-'));
  try {
    // One ncu run per instantiation: --launch-skip and --launch-count then count that
    // kernel's own launches (a program usually launches instantiations one after another).
    const count = (k: string) => Math.min(...[...groups.values()].filter(g => g.kernel === k).map(g => g.durations.length), Infinity);
    profiling: for (const k of kernels) {
      for (let attempt = 0; (count(k) === Infinity ? 0 : count(k)) < o.samples && attempt < 10; attempt++) {
        const have = count(k) === Infinity ? 0 : count(k);
        progress?.(`${p.label}: profiling ${kernels.length > 1 ? `${k} ` : ''}(${have}/${o.samples} samples)`);
        const report = path.join(work, `${kernels.indexOf(k)}-${attempt}`);
        const ncuArgs = [
          '--kernel-name-base',
          'mangled',
          '--kernel-name',
          `regex:^${escapeRegex(k)}$`,
          '--launch-skip',
          String(o.warmup),
          '--launch-count',
          String(o.samples - have),
          '--metrics',
          PROFILE_METRICS.join(','),
          '--clock-control',
          o.clockControl,
          '--export',
          report,
          '--force-overwrite',
          ...command,
        ];
        const prof = await launch(o, [ncu, ...ncuArgs], { timeoutMs: o.timeoutMs * 4, signal: o.signal, cwd: path.dirname(p.file) });
        if (prof.cancelled) {
          status = 'cancelled';
          break profiling;
        }
        if (prof.timedOut) {
          status = 'timeout';
          message = 'profiling under ncu timed out';
          break profiling;
        }
        const failure =
          prof.exitCode !== 0 || /No kernels were profiled/.test(prof.stdout + prof.stderr)
            ? classifyNcuFailure(prof.stdout, prof.stderr, prof.exitCode)
            : null;
        if (failure) {
          if (k !== kernel && failure.kind === 'no-kernels') break; // this instantiation is not launched with these arguments
          status = 'profile';
          message = `${failure.message}${failure.fix ? ` Fix: ${failure.fix}` : ''}`;
          break profiling;
        }
        const csv = await t.runner(ncu, ['--import', `${report}.ncu-rep`, '--csv', '--page', 'raw', '--print-kernel-base', 'mangled'], {
          timeoutMs: 120_000,
          signal: o.signal,
        });
        if (o.keepReportsDir) {
          fs.mkdirSync(o.keepReportsDir, { recursive: true });
          const instantiation = kernels.length > 1 ? `-${kernels.indexOf(k)}` : '';
          const base = path.join(
            o.keepReportsDir,
            `${path.basename(p.file, '.cu')}-L${o.loops.join('_')}-${p.label}${instantiation}-${attempt}`,
          );
          fs.writeFileSync(`${base}.raw.csv`, csv.stdout);
          try {
            fs.copyFileSync(`${report}.ncu-rep`, `${base}.ncu-rep`);
          } catch {
            /* report missing: the CSV says why */
          }
        }
        if (csv.cancelled) {
          status = 'cancelled';
          break profiling;
        }
        // A page cut off or damaged (ncu killed, disk full, a crash part-way) is a failure, never
        // a launch with empty stalls.
        let raw: RawKernelRow[];
        try {
          raw = csv.exitCode === 0 && !csv.timedOut ? parseRawPageStrict(csv.stdout).kernels : [];
          if (csv.exitCode !== 0 || csv.timedOut)
            throw new RawPageError(
              csv.timedOut
                ? `ncu --import timed out after ${120} s`
                : `ncu --import exited with ${csv.exitCode ?? csv.signal}: ${(csv.stderr || csv.stdout).trim().split('\n').slice(-2).join(' | ')}`,
            );
        } catch (e) {
          if (!(e instanceof RawPageError)) throw e;
          status = 'profile';
          message = `could not read ncu's raw page for ${k} (${path.basename(report)}.ncu-rep): ${e.message}`;
          break profiling;
        }
        if (!raw.length) {
          if (k !== kernel) break;
          status = 'profile';
          message = `ncu profiled no launch of ${k} (launch-skip ${o.warmup}); does the program launch it with these arguments?`;
          break profiling;
        }
        const blocks = new Set(raw.map(r => String(r.blockSize)));
        for (const r of raw) {
          const launched = kernelProfile(r);
          const several = blocks.size > 1;
          const block = r.blockSize ? `(${r.blockSize.join(', ')})` : null;
          const key = several ? `${k} ${block}` : k;
          const g = groups.get(key) ?? { kernel: k, blockSize: several ? block : null, durations: [], last: null };
          if (launched.durationNs !== null) g.durations.push(launched.durationNs / 1e6);
          g.last = launched;
          groups.set(key, g);
        }
      }
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  return { status, message, groups };
}
