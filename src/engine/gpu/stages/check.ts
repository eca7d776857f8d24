// Stage 2, check: a plain run of one variant's program must exit 0 and print the checksums of
// the file as written (and pass the project's check command, when there is one), so that only
// variants that still compute the same result are timed.
import * as fs from 'fs';
import * as path from 'path';
import type { BenchOptions } from '../options';
import { fill, launch, LaunchOptions, programCommand, runFolder, VariantProgram } from './program';
import { scratchDir } from '../../toolchain/processGuard';

/** `kernel=<name> … checksum=<v>` lines (the samples' convention) → name → checksum. */
export function parseChecksums(stdout: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of stdout.split('\n')) {
    const k = /\bkernel=(\S+)/.exec(line);
    const c = /\bchecksum=(\S+)/.exec(line);
    if (c)
      out[
        k ? `${k[1]}${/\bconfig=(\S+)/.exec(line)?.[1] ? ` ${/\bconfig=(\S+)/.exec(line)![1]}` : ''}` : `line${Object.keys(out).length}`
      ] = c[1];
  }
  return out;
}

/** The program reported a failed self-check. */
export function reportsMismatch(stdout: string): boolean {
  return /\bcheck=FAIL\b|\bMISMATCH\b|FAILED kernels/.test(stdout);
}

/** What the baseline's plain run left to compare against. */
export interface BaselineOutput {
  checksums: Record<string, string>;
  /** Its stdout when it ran cleanly (what the check command compares with), else null. */
  stdout: string | null;
}

export interface CheckResult {
  status: 'ok' | 'cancelled' | 'timeout' | 'runtime' | 'correctness';
  message: string | null;
  /** What the run printed; empty when it did not finish. */
  checksums: Record<string, string>;
  /** Its stdout when it exited 0, else null. */
  stdout: string | null;
}

export type CheckOptions = LaunchOptions &
  Pick<BenchOptions, 'checkCommand' | 'timeoutMs' | 'signal'> & {
    /** Environment of the plain run (CUDA_VISIBLE_DEVICES of the GPU it runs on). */
    env?: Record<string, string>;
    /** Where the check command starts (a project's: the root of its copy); default: here. */
    checkCwd?: string;
  };

/** Runs the program once; compares it with `baseline`, or with nothing when it is the baseline. */
export async function checkVariant(
  p: VariantProgram,
  baseline: BaselineOutput | null,
  o: CheckOptions,
  progress?: (message: string) => void,
): Promise<CheckResult> {
  progress?.(`${p.label}: checking the result`);
  const plain = await launch(o, programCommand(p.program, o), {
    timeoutMs: o.timeoutMs,
    signal: o.signal,
    cwd: runFolder(p),
    env: o.env,
  });
  if (plain.cancelled) return { status: 'cancelled', message: null, checksums: {}, stdout: null };
  if (plain.timedOut)
    return {
      status: 'timeout',
      message: `the program ran longer than ${o.timeoutMs / 1000} s and was killed`,
      checksums: {},
      stdout: null,
    };
  const checksums = parseChecksums(plain.stdout);
  if (plain.exitCode !== 0 || plain.spawnError) {
    const message =
      plain.spawnError ??
      `exit ${plain.exitCode ?? plain.signal}: ${(plain.stderr || plain.stdout).trim().split('\n').slice(-3).join(' | ')}`;
    return { status: reportsMismatch(plain.stdout) ? 'correctness' : 'runtime', message, checksums, stdout: null };
  }
  return checkOutput(plain.stdout, baseline, o);
}

/**
 * The check of a program run that exited 0: its checksums against the baseline's (and the
 * project's check command), or against nothing when it is the baseline.
 */
export async function checkOutput(stdout: string, baseline: BaselineOutput | null, o: CheckOptions): Promise<CheckResult> {
  const checksums = parseChecksums(stdout);
  const ok: CheckResult = { status: 'ok', message: null, checksums, stdout };
  if (!baseline) return ok;
  const base = baseline.checksums;
  const differs = Object.keys(base).some(k => checksums[k] !== undefined && checksums[k] !== base[k]) || reportsMismatch(stdout);
  const checkFailed =
    o.checkCommand && baseline.stdout !== null ? !(await checkCommandAgrees(o.checkCommand, stdout, baseline.stdout, o)) : false;
  if (!differs && !checkFailed) return ok;
  const changed = Object.keys(base)
    .filter(k => checksums[k] !== base[k])
    .map(k => `${k}: ${checksums[k]} vs ${base[k]}`);
  const message = differs ? `checksums differ from the file as written: ${changed.join('; ')}` : 'the check command reported a difference';
  return { status: 'correctness', message, checksums, stdout };
}

/** The project's check command, given both outputs as files: exit 0 says they agree. */
async function checkCommandAgrees(template: string[], stdout: string, baselineStdout: string, o: CheckOptions): Promise<boolean> {
  const work = scratchDir(undefined, 'unroll-lens-check-');
  try {
    const a = path.join(work, 'variant.stdout');
    const b = path.join(work, 'baseline.stdout');
    fs.writeFileSync(a, stdout);
    fs.writeFileSync(b, baselineStdout);
    const cmd = fill(template, { stdout: a, baselineStdout: b });
    // also in the environment: a project's check is a shell command line that may name them so
    const env = { UNROLL_LENS_STDOUT: a, UNROLL_LENS_BASELINE_STDOUT: b };
    const c = await o.toolchain.runner(cmd[0], cmd.slice(1), { timeoutMs: 60_000, signal: o.signal, cwd: o.checkCwd, env });
    return c.exitCode === 0;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
