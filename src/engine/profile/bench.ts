// "Benchmark this loop": build each unroll variant as a whole program, run it to check it
// still computes the same result, then time and profile the target kernel under Nsight
// Compute (durations from gpu__time_duration.sum, stall reasons from the warp-state metrics).
// Variants run one after another: they share one GPU.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { FileAnalysis } from '../parse/model';
import type { Toolchain } from '../toolchain/toolchain';
import { MissingToolError } from '../toolchain/discover';
import type { CompileFlags } from '../toolchain/flags';
import { BuildRequest, BuildResult, VariantBuilder } from '../variants/build';
import { VariantInspector } from '../variants/inspect';
import { makeVariantSource, UnrollFactor, VariantFactors, variantKey } from '../variants/rewrite';
import { parseRawPage } from './ncuCsv';
import { kernelProfile, LineStalls, perLineStalls } from './stalls';
import { parseSourcePage } from './ncuCsv';
import { classifyNcuFailure } from './ncuErrors';

export type RunStatus = 'ok' | 'compile' | 'runtime' | 'timeout' | 'correctness' | 'profile' | 'cancelled';

export interface VariantRun {
  /** Loop line → factor; empty for the file as written. */
  factors: Record<string, UnrollFactor>;
  label: string;
  status: RunStatus;
  message: string | null;
  kernel: string | null;
  kernelInstructions: number | null;
  registers: number | null;
  samples: number;
  durationsMs: number[];
  medianMs: number | null;
  iqrMs: number | null;
  q1Ms: number | null;
  q3Ms: number | null;
  cv: number | null;
  speedup: number | null;
  withinNoise: boolean | null;
  stalls: Record<string, number> | null;
  stallShare: Record<string, number> | null;
  executedInstructions: number | null;
  achievedOccupancy: number | null;
  /** Checksums the program printed (kernel → value), compared with the baseline's. */
  checksums: Record<string, string>;
}

export interface BenchReport {
  kernel: string;
  gpu: string | null;
  clockControl: 'base' | 'none';
  baseline: string;
  variants: VariantRun[];
  /**
   * Every kernel holding the loop (template instantiations), and block size when one kernel is
   * launched with several, each with its own variants table; `variants` above is the first.
   */
  instantiations: { kernel: string; blockSize: string | null; variants: VariantRun[] }[];
  /** Warp-stall samples per source line of the file as written (ncu SourceCounters), when collected. */
  lineStalls: LineStalls[] | null;
  /** Why lineStalls is missing, when it was asked for. */
  lineStallsProblem: string | null;
}

export interface BenchOptions {
  toolchain: Toolchain;
  arch: string;
  flags: CompileFlags;
  cacheDir: string;
  /** Loop lines; each variant sets all of them to the same factor. */
  loops: number[];
  factors: UnrollFactor[];
  /** Mangled or demangled-substring kernel name; default: the kernel holding the loop. */
  kernel?: string;
  /** Program arguments. */
  args: string[];
  /** Kernel durations to collect per variant (at least 20 is what the statistics assume). */
  samples: number;
  /** Launches of the kernel skipped per program run before profiling (warm-up). */
  warmup: number;
  clockControl: 'base' | 'none';
  /** Per program run, milliseconds. */
  timeoutMs: number;
  /** Prefix for every run (e.g. ["srun", "-p", "gpu", "--gres=gpu:1"]). */
  launcher: string[];
  /** Project run command (setting unrollLens.profile.runCommand): {program} {args…}. Default: the program itself. */
  runCommand?: string[];
  /** Project compile command (unrollLens.profile.compileCommand): {source} {output} {arch} {dir}. Default: nvcc. */
  compileCommand?: string[];
  /** Check command run after each variant (unrollLens.profile.checkCommand): {stdout} {baselineStdout}; exit 0 = same. */
  checkCommand?: string[];
  signal?: AbortSignal;
  onProgress?: (message: string, done: number, total: number) => void;
  /** Keep every ncu report and its raw-page CSV here (for the record; default: deleted). */
  keepReportsDir?: string;
  /** Also sample warp stalls per source line of the file as written (one extra ncu run; unrollLens.profile.sourceStalls). */
  sourceStalls?: boolean;
}

/** ncu metrics collected per launch: duration, warp-state stall ratios, work and occupancy. */
export const PROFILE_METRICS = [
  'gpu__time_duration.sum',
  'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio',
  'smsp__inst_executed.sum',
  'sm__warps_active.avg.pct_of_peak_sustained_active',
  'launch__registers_per_thread',
];

// ---------------------------------------------------------------------------------------------
// Statistics

export function quantile(sorted: number[], q: number): number {
  if (!sorted.length) return NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

export function summarize(durationsMs: number[]): Pick<VariantRun, 'medianMs' | 'iqrMs' | 'q1Ms' | 'q3Ms' | 'cv' | 'samples'> {
  const s = [...durationsMs].sort((a, b) => a - b);
  if (!s.length) return { medianMs: null, iqrMs: null, q1Ms: null, q3Ms: null, cv: null, samples: 0 };
  const mean = s.reduce((a, b) => a + b, 0) / s.length;
  const sd = Math.sqrt(s.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, s.length - 1));
  const q1 = quantile(s, 0.25);
  const q3 = quantile(s, 0.75);
  return { medianMs: quantile(s, 0.5), q1Ms: q1, q3Ms: q3, iqrMs: q3 - q1, cv: mean > 0 ? sd / mean : null, samples: s.length };
}

/** A speedup is "within noise" when the two interquartile ranges overlap. */
export function iqrOverlap(a: Pick<VariantRun, 'q1Ms' | 'q3Ms'>, b: Pick<VariantRun, 'q1Ms' | 'q3Ms'>): boolean | null {
  if (a.q1Ms === null || a.q3Ms === null || b.q1Ms === null || b.q3Ms === null) return null;
  return a.q1Ms <= b.q3Ms && b.q1Ms <= a.q3Ms;
}

// ---------------------------------------------------------------------------------------------
// Program output

/** `kernel=<name> … checksum=<v>` lines (the samples' convention) → name → checksum. */
export function parseChecksums(stdout: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of stdout.split('\n')) {
    const k = /\bkernel=(\S+)/.exec(line);
    const c = /\bchecksum=(\S+)/.exec(line);
    if (c) out[k ? `${k[1]}${/\bconfig=(\S+)/.exec(line)?.[1] ? ` ${/\bconfig=(\S+)/.exec(line)![1]}` : ''}` : `line${Object.keys(out).length}`] = c[1];
  }
  return out;
}

/** The program reported a failed self-check. */
export function reportsMismatch(stdout: string): boolean {
  return /\bcheck=FAIL\b|\bMISMATCH\b|FAILED kernels/.test(stdout);
}

function fill(template: string[], vars: Record<string, string | string[]>): string[] {
  const out: string[] = [];
  for (const t of template) {
    const whole = /^\{(\w+)\}$/.exec(t);
    if (whole && Array.isArray(vars[whole[1]])) out.push(...(vars[whole[1]] as string[]));
    else out.push(t.replace(/\{(\w+)\}/g, (m, k) => (vars[k] === undefined ? m : String(vars[k]))));
  }
  return out;
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// ---------------------------------------------------------------------------------------------

export async function benchLoop(file: string, text: string, analysis: FileAnalysis, o: BenchOptions): Promise<BenchReport> {
  const t = o.toolchain;
  if (!t.ncu) throw new MissingToolError('ncu', []);
  const focus = o.loops[0];
  const kernelSrc = analysis.kernels.find(k => k.loops.some(l => l.line === focus));
  if (!kernelSrc) throw new Error(`no loop in device code at line ${focus} of ${file}`);

  // Variants: the file as written (the baseline) and one per factor, all listed loops together.
  const specs: { label: string; factors: VariantFactors }[] = [{ label: 'as-written', factors: new Map() }];
  for (const f of o.factors) specs.push({ label: String(f), factors: new Map(o.loops.map(l => [l, f])) });
  const reqs: BuildRequest[] = specs.map(s => ({ key: variantKey(s.factors), source: makeVariantSource(text, analysis, s.factors, file), originalPath: file }));

  // SASS side (cubins): which kernel holds the loop, its instructions and registers per variant.
  const cubinBuilder = new VariantBuilder({ nvcc: t.nvcc, arch: o.arch, flags: o.flags, cacheDir: o.cacheDir, runner: t.runner });
  const programBuilder = new VariantBuilder({ mode: 'program', nvcc: t.nvcc, arch: o.arch, flags: o.flags, cacheDir: o.cacheDir, runner: t.runner, compileTemplate: o.compileCommand });
  const inspector = new VariantInspector({ toolchain: t, builder: cubinBuilder, arch: o.arch });
  o.onProgress?.('building variants', 0, specs.length);
  const sass = await inspector.inspectVariants(file, text, analysis, focus, specs.map(s => s.factors), { signal: o.signal, kernel: o.kernel });
  const programs = await programBuilder.buildAll(reqs, { signal: o.signal, onProgress: p => o.onProgress?.(`built ${p.key}`, p.done, p.total) });
  // Every kernel whose code holds the loop (template instantiations), most of the loop first.
  const holding = await inspector.kernelsHoldingLoop(file, text, analysis, focus, { signal: o.signal });
  const kernels = o.kernel
    ? holding.filter(k => k.name === o.kernel || k.demangled.includes(o.kernel!)).map(k => k.name)
    : holding.map(k => k.name);
  if (o.kernel && /^_Z/.test(o.kernel) && !kernels.includes(o.kernel)) kernels.unshift(o.kernel);
  const kernel = kernels[0] ?? sass.find(v => v.kernel)?.kernel ?? null;
  if (!kernel) throw new Error(`could not find the kernel holding line ${focus} in the cubin (is it launched/instantiated?)`);
  if (!kernels.length) kernels.push(kernel);
  /** Per variant, per instantiation (mangled name, plus block size when several): durations and last profile. */
  const perGroup: Map<string, { kernel: string; blockSize: string | null; durations: number[]; last: ReturnType<typeof kernelProfile> | null }>[] = [];

  const gpu = t.gpus[0]?.name ?? null;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'unroll-lens-bench-'));
  const runs: VariantRun[] = [];
  let baselineStdout: string | null = null;
  try {
    for (let i = 0; i < specs.length; i++) {
      const spec = specs[i];
      const b: BuildResult = programs[i];
      const run: VariantRun = {
        factors: Object.fromEntries([...spec.factors].map(([l, f]) => [String(l), f])),
        label: spec.label, status: 'ok', message: null, kernel,
        kernelInstructions: sass[i]?.kernelInstructions ?? null, registers: sass[i]?.registers ?? null,
        samples: 0, durationsMs: [], medianMs: null, iqrMs: null, q1Ms: null, q3Ms: null, cv: null,
        speedup: null, withinNoise: null, stalls: null, stallShare: null, executedInstructions: null, achievedOccupancy: null,
        checksums: {},
      };
      runs.push(run);
      if (o.signal?.aborted) { run.status = 'cancelled'; continue; }
      if (b.status !== 'ok' || !b.outputPath) {
        run.status = b.status === 'cancelled' ? 'cancelled' : b.status === 'timeout' ? 'timeout' : 'compile';
        run.message = b.messages.filter(m => m.severity === 'error').map(m => `${m.file ?? ''}${m.line ? `:${m.line}` : ''} ${m.message}`).join('\n') || b.failureKind;
        continue;
      }
      const program = b.outputPath;
      const command = fill(o.runCommand ?? ['{program}', '{args}'], { program, args: o.args });
      // 1. Correctness: a plain run must exit 0 and print the baseline's checksums.
      o.onProgress?.(`${spec.label}: checking the result`, i, specs.length);
      const plain = await t.runner(o.launcher[0] ?? command[0], [...o.launcher.slice(1), ...(o.launcher.length ? command : command.slice(1))], { timeoutMs: o.timeoutMs, signal: o.signal, cwd: path.dirname(file) });
      if (plain.cancelled) { run.status = 'cancelled'; continue; }
      if (plain.timedOut) { run.status = 'timeout'; run.message = `the program ran longer than ${o.timeoutMs / 1000} s and was killed`; continue; }
      run.checksums = parseChecksums(plain.stdout);
      if (plain.exitCode !== 0 || plain.spawnError) {
        run.status = reportsMismatch(plain.stdout) ? 'correctness' : 'runtime';
        run.message = plain.spawnError ?? `exit ${plain.exitCode ?? plain.signal}: ${(plain.stderr || plain.stdout).trim().split('\n').slice(-3).join(' | ')}`;
        continue;
      }
      if (i === 0) baselineStdout = plain.stdout;
      else {
        const base = runs[0].checksums;
        const differs = Object.keys(base).some(k => run.checksums[k] !== undefined && run.checksums[k] !== base[k]) || reportsMismatch(plain.stdout);
        let checkFailed = false;
        if (o.checkCommand && baselineStdout !== null) {
          const a = path.join(work, `${i}.stdout`);
          const bf = path.join(work, 'baseline.stdout');
          fs.writeFileSync(a, plain.stdout);
          fs.writeFileSync(bf, baselineStdout);
          const cmd = fill(o.checkCommand, { stdout: a, baselineStdout: bf });
          const c = await t.runner(cmd[0], cmd.slice(1), { timeoutMs: 60_000, signal: o.signal });
          checkFailed = c.exitCode !== 0;
        }
        if (differs || checkFailed) {
          run.status = 'correctness';
          run.message = differs ? `checksums differ from the file as written: ${Object.keys(base).filter(k => run.checksums[k] !== base[k]).map(k => `${k}: ${run.checksums[k]} vs ${base[k]}`).join('; ')}` : 'the check command reported a difference';
          continue;
        }
      }
      // 2. Timing and stall reasons under ncu, repeating the program until every instantiation
      // has enough launches (ncu counts launches over all of them).
      const groups = new Map<string, { kernel: string; blockSize: string | null; durations: number[]; last: ReturnType<typeof kernelProfile> | null }>();
      perGroup[i] = groups;
      // One ncu run per instantiation: --launch-skip and --launch-count then count that
      // kernel's own launches (a program usually launches instantiations one after another).
      const count = (k: string) => Math.min(...[...groups.values()].filter(g => g.kernel === k).map(g => g.durations.length), Infinity);
      profiling: for (const k of kernels) {
        for (let attempt = 0; (count(k) === Infinity ? 0 : count(k)) < o.samples && attempt < 10; attempt++) {
          const have = count(k) === Infinity ? 0 : count(k);
          o.onProgress?.(`${spec.label}: profiling ${kernels.length > 1 ? `${k} ` : ''}(${have}/${o.samples} samples)`, i, specs.length);
          const report = path.join(work, `${i}-${kernels.indexOf(k)}-${attempt}`);
          const ncuArgs = [
            '--kernel-name-base', 'mangled', '--kernel-name', `regex:^${escapeRegex(k)}$`,
            '--launch-skip', String(o.warmup), '--launch-count', String(o.samples - have),
            '--metrics', PROFILE_METRICS.join(','), '--clock-control', o.clockControl,
            '--export', report, '--force-overwrite', ...command,
          ];
          const prof = await t.runner(o.launcher[0] ?? t.ncu.path, [...o.launcher.slice(1), ...(o.launcher.length ? [t.ncu.path] : []), ...ncuArgs], { timeoutMs: o.timeoutMs * 4, signal: o.signal, cwd: path.dirname(file) });
          if (prof.cancelled) { run.status = 'cancelled'; break profiling; }
          if (prof.timedOut) { run.status = 'timeout'; run.message = 'profiling under ncu timed out'; break profiling; }
          const failure = prof.exitCode !== 0 || /No kernels were profiled/.test(prof.stdout + prof.stderr)
            ? classifyNcuFailure(prof.stdout, prof.stderr, prof.exitCode) : null;
          if (failure) {
            if (k !== kernel && failure.kind === 'no-kernels') break; // this instantiation is not launched with these arguments
            run.status = 'profile';
            run.message = `${failure.message}${failure.fix ? ` Fix: ${failure.fix}` : ''}`;
            break profiling;
          }
          const csv = await t.runner(t.ncu.path, ['--import', `${report}.ncu-rep`, '--csv', '--page', 'raw', '--print-kernel-base', 'mangled'], { timeoutMs: 120_000, signal: o.signal });
          if (o.keepReportsDir) {
            fs.mkdirSync(o.keepReportsDir, { recursive: true });
            const base = path.join(o.keepReportsDir, `${path.basename(file, '.cu')}-L${o.loops.join('_')}-${spec.label}${kernels.length > 1 ? `-${kernels.indexOf(k)}` : ''}-${attempt}`);
            fs.writeFileSync(`${base}.raw.csv`, csv.stdout);
            try { fs.copyFileSync(`${report}.ncu-rep`, `${base}.ncu-rep`); } catch { /* report missing: the CSV says why */ }
          }
          const raw = parseRawPage(csv.stdout).kernels;
          if (!raw.length) {
            if (k !== kernel) break;
            run.status = 'profile';
            run.message = `ncu profiled no launch of ${k} (launch-skip ${o.warmup}); does the program launch it with these arguments?`;
            break profiling;
          }
          const blocks = new Set(raw.map(r => String(r.blockSize)));
          for (const r of raw) {
            const p = kernelProfile(r);
            const several = blocks.size > 1;
            const block = r.blockSize ? `(${r.blockSize.join(', ')})` : null;
            const key = several ? `${k} ${block}` : k;
            const g = groups.get(key) ?? { kernel: k, blockSize: several ? block : null, durations: [], last: null };
            if (p.durationNs !== null) g.durations.push(p.durationNs / 1e6);
            g.last = p;
            groups.set(key, g);
          }
        }
      }
      const primary = groups.get(kernel) ?? [...groups.values()][0];
      if (primary) {
        run.durationsMs = primary.durations;
        const last = primary.last;
        if (last) {
          run.stalls = last.stalls;
          run.stallShare = last.stallShare;
          run.executedInstructions = last.executedInstructions;
          run.achievedOccupancy = last.achievedOccupancy;
          run.registers = last.registers ?? run.registers;
        }
      }
      Object.assign(run, summarize(run.durationsMs));
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  let lineStalls: LineStalls[] | null = null;
  let lineStallsProblem: string | null = null;
  if (o.sourceStalls && runs[0].status === 'ok' && programs[0].outputPath && !o.signal?.aborted) {
    o.onProgress?.('sampling stalls per source line', specs.length, specs.length);
    try {
      lineStalls = await sourceLineStalls(file, programs[0].outputPath, kernel, o);
    } catch (e) {
      lineStallsProblem = e instanceof Error ? e.message : String(e);
    }
  }
  const withSpeedups = (list: VariantRun[]) => {
    const base = list[0];
    for (const r of list) {
      if (r.medianMs !== null && base.medianMs !== null && r.status === 'ok') {
        r.speedup = base.medianMs / r.medianMs;
        r.withinNoise = r === base ? true : iqrOverlap(r, base);
      }
    }
    return list;
  };
  withSpeedups(runs);
  // One table per instantiation (and per block size when a kernel runs with several).
  const keys = [...new Set(perGroup.flatMap(g => (g ? [...g.keys()] : [])))];
  const instantiations = keys.map(key => {
    const any = perGroup.find(g => g?.has(key))!.get(key)!;
    const variants = runs.map((r, i) => {
      const g = perGroup[i]?.get(key);
      const v: VariantRun = { ...r, kernel: any.kernel, durationsMs: g?.durations ?? [], stalls: g?.last?.stalls ?? null, stallShare: g?.last?.stallShare ?? null,
        executedInstructions: g?.last?.executedInstructions ?? null, achievedOccupancy: g?.last?.achievedOccupancy ?? null,
        registers: g?.last?.registers ?? r.registers, kernelInstructions: sass[i]?.kernelSizes?.[any.kernel] ?? (any.kernel === kernel ? r.kernelInstructions : null),
        speedup: null, withinNoise: null };
      return Object.assign(v, summarize(v.durationsMs));
    });
    return { kernel: any.kernel, blockSize: any.blockSize, variants: withSpeedups(variants) };
  });
  return { kernel, gpu, clockControl: o.clockControl, baseline: 'as-written', variants: runs, instantiations, lineStalls, lineStallsProblem };
}

/** One launch under ncu's SourceCounters section, exported as the cuda,sass source page. */
async function sourceLineStalls(file: string, program: string, kernel: string, o: BenchOptions): Promise<LineStalls[]> {
  const t = o.toolchain;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'unroll-lens-src-'));
  try {
    const report = path.join(work, 'source');
    const command = fill(o.runCommand ?? ['{program}', '{args}'], { program, args: o.args });
    const prof = await t.runner(o.launcher[0] ?? t.ncu!.path, [...o.launcher.slice(1), ...(o.launcher.length ? [t.ncu!.path] : []),
      '--kernel-name-base', 'mangled', '--kernel-name', `regex:^${escapeRegex(kernel)}$`, '--launch-skip', String(o.warmup), '--launch-count', '1',
      '--section', 'SourceCounters', '--section', 'WarpStateStats', '--import-source', 'yes', '--clock-control', o.clockControl,
      '--export', report, '--force-overwrite', ...command], { timeoutMs: o.timeoutMs * 4, signal: o.signal, cwd: path.dirname(file) });
    if (prof.exitCode !== 0) {
      const f = classifyNcuFailure(prof.stdout, prof.stderr, prof.exitCode);
      throw new Error(`${f.message}${f.fix ? ` Fix: ${f.fix}` : ''}`);
    }
    const page = await t.runner(t.ncu!.path, ['--import', `${report}.ncu-rep`, '--csv', '--page', 'source', '--print-source', 'cuda,sass'], { timeoutMs: 300_000, signal: o.signal });
    if (o.keepReportsDir) fs.writeFileSync(path.join(o.keepReportsDir, `${path.basename(file, '.cu')}-source.csv`), page.stdout);
    return perLineStalls(parseSourcePage(page.stdout), file);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** The documented `bench --json` contract (docs/cli.md). */
export function benchJson(r: BenchReport) {
  return {
    kernel: r.kernel,
    gpu: r.gpu,
    clockControl: r.clockControl,
    variants: r.variants.map(v => ({
      factors: v.factors, label: v.label, status: v.status, kernelInstructions: v.kernelInstructions, registers: v.registers,
      samples: v.samples, medianMs: v.medianMs, iqrMs: v.iqrMs, cv: v.cv, speedup: v.speedup, withinNoise: v.withinNoise,
      stallShare: v.stallShare, achievedOccupancy: v.achievedOccupancy, executedInstructions: v.executedInstructions,
      ...(v.message ? { message: v.message } : {}),
    })),
    ...(r.instantiations.length > 1 ? {
      instantiations: r.instantiations.map(x => ({ kernel: x.kernel, blockSize: x.blockSize, variants: x.variants.map(v => ({ label: v.label, status: v.status, kernelInstructions: v.kernelInstructions, samples: v.samples, medianMs: v.medianMs, iqrMs: v.iqrMs, cv: v.cv, speedup: v.speedup, withinNoise: v.withinNoise, stallShare: v.stallShare })) })),
    } : {}),
    ...(r.lineStalls ? { lineStalls: r.lineStalls.map(l => ({ line: l.line, samples: l.samples, stallShare: l.stallShare })) } : {}),
  };
}
