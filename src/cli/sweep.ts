// `unroll-lens sweep`: every combination of the kernel's loops' unroll factors (and extra -D
// macro values), built and measured statically or timed on the GPU, searched exhaustively or
// by coordinate descent; a table, --json, CSV, T4 and an HTML report of the result.
import {
  CudaDocuments,
  STRATEGIES,
  SweepOptions,
  SweepSpaceError,
  Toolchain,
  UnrollFactors,
  chooseArch,
  detectToolchain,
  gpuBlocker,
  lineStallsText,
  parseParamSpec,
  runSweep,
  splitCommandLine,
  sweepJson,
  sweepText,
  type GpuRunConfig,
  type SlurmOptions,
} from '../engine';
import { CLI_GPU_BLOCKER_TEXT } from './gpuReadinessText';
import * as path from 'path';
import type { SweepResult } from '../protocol';
import { DEFAULT_SETTINGS, SETTINGS } from '../settings';
import { runTimingText } from '../schema/runTimingText';
import { macroTableFor } from './macros';
import { describeRange, RANGES, rangeProblem } from '../schema/ranges';
import { defineCommand, factorsOption, lineListOption, numberOption, stringOption } from './args';
import {
  GPU_PLACEMENT_OPTIONS,
  GPU_RUN_OPTIONS,
  gpusOptionSyntax,
  limitTools,
  RunFlags,
  runConfigFromFlags,
  runFlagsOf,
  TOOL_TIMEOUT_OPTIONS,
  ToolTimeouts,
  toolTimeoutOptions,
  KEEP_REPORTS_OPTION,
} from './gpuOptions';
import { cancelOnSignals, CliIO, EXIT, UsageError } from './io';
import { checkResultOutputs, RESULT_OUTPUT_OPTIONS, ResultOutputs, resultOutputsOf, writeResultOutputs } from './resultOutputs';
import { buildPathFor, checkArchOption, compileFlagsFor, readSourceFile } from './inputs';
import { closeProjectRun, openProject, PROJECT_OPTIONS, ProjectFlags, projectFlagsOf } from './project';
import { SLURM_OPTIONS, slurmOptionsOf, slurmRunner } from './slurm';

export const sweepCommand = defineCommand({
  name: 'sweep',
  summary:
    "Every combination of a kernel's loops' unroll factors (and macro or template values; those alone for a kernel " +
    'without loops or with --factors none): SASS of each, timed on the GPU when there is one; the best, a table, JSON, ' +
    'CSV, T4 and an HTML report.',
  synopsis: '<file> [--kernel NAME] [--loops LINE,LINE…] [--param NAME=V1,V2…]… [options]',
  description:
    "Builds the file as written and each point of the space (every swept loop's factor × every --param value: -D for a\n" +
    'macro, the instantiation for a template parameter of the kernel; the --param values alone for a kernel without\n' +
    'loops, or for any kernel with --factors none), measures its SASS (instructions per kernel and\n' +
    'per loop, the unroll nvcc really applied, registers, spills, occupancy) and, with a GPU (or --launcher),\n' +
    'checks and times it as bench does. Variants with the same machine code as an earlier one are marked and not run\n' +
    'again; unchanged programs reuse earlier measurements unless --fresh. With --gpus the points after the file as\n' +
    'written are spread over several GPUs. Without a GPU or main() (or ncu, with --timer ncu), or with --static, the\n' +
    'best is chosen by a static rule (printed with the result). Progress\n' +
    'goes to stderr (--quiet silences it); Ctrl-C (or SIGTERM, SIGHUP) cancels and prints what finished.',
  options: {
    kernel: {
      type: 'string',
      value: 'NAME',
      help: 'kernel (or __device__ function) whose loops or parameters to sweep',
      default:
        'the kernel of --loops, or the only one with loops; in a file without loops or with --factors none, the only kernel ' +
        'with every --param as a template parameter, else the only __global__ one',
    },
    loops: {
      type: 'string',
      alias: 'loop',
      value: 'LINE[,LINE…]',
      help: '1-based lines of the loop keywords to sweep',
      default: 'every loop of the kernel',
    },
    factors: {
      type: 'string',
      value: 'LIST',
      help:
        'unroll factors: default (no pragma), full, or integers from 1 to 4096; none: no loop axis, only the --param ' +
        'values (what a kernel without loops always gets)',
      setting: SETTINGS.unrollFactors,
    },
    param: {
      type: 'list',
      value: 'NAME=V1,V2…',
      help:
        'an extra axis (letters, digits, _ . + - only): a template parameter of the kernel picks that instantiation, <kernel><V>, ' +
        'already in the file; any other NAME is a macro, -DNAME=V',
    },
    strategy: {
      type: 'string',
      value: STRATEGIES.map(s => s.name).join('|'),
      help: 'exhaustive: every point; coordinate: one axis at a time from the file as written',
      default: 'exhaustive',
    },
    static: { type: 'boolean', help: 'SASS only, no GPU runs (automatic without a GPU or main(), or without ncu for --timer ncu)' },
    json: { type: 'boolean', help: 'print the result as JSON (contract: docs/cli.md) instead of the table' },
    ...RESULT_OUTPUT_OPTIONS,
    args: {
      type: 'string',
      value: '"ARGS"',
      help: "program arguments, split like a shell would but never run through one; {NAME} is the point's --param value (--body {BODY})",
      default: 'none',
    },
    ...GPU_RUN_OPTIONS,
    gpus: GPU_PLACEMENT_OPTIONS.gpus,
    'shared-dir': GPU_PLACEMENT_OPTIONS['shared-dir'],
    'profiles-per-gpu': GPU_PLACEMENT_OPTIONS['profiles-per-gpu'],
    fresh: GPU_PLACEMENT_OPTIONS.fresh,
    quiet: GPU_PLACEMENT_OPTIONS.quiet,
    ...SLURM_OPTIONS,
    ...TOOL_TIMEOUT_OPTIONS,
    jobs: {
      type: 'string',
      value: 'N',
      help: `parallel nvcc processes, ${RANGES.jobs.min} to ${RANGES.jobs.max}; 0 = number of CPU cores`,
      setting: SETTINGS.jobs,
    },
    'warps-per-sm': {
      type: 'string',
      value: 'N',
      help: "resident warps per SM the static rule's instruction-cache model assumes",
      default: "each variant's theoretical occupancy",
    },
    ...KEEP_REPORTS_OPTION,
    ...PROJECT_OPTIONS,
    'source-stalls': {
      type: 'boolean',
      help:
        "also sample warp stalls per source line of the file as written (the timed run's CUPTI PC samples; one extra ncu run with " +
        '--timer ncu or --stalls off, or when the samples give none; GPU sweeps; with --slurm, by the task measuring the file as written)',
    },
  },
  exitCodes: [
    [EXIT.ok, 'swept; variants that failed (compile, runtime, correctness, …) are in the result with their status'],
    [EXIT.failed, 'no variant finished ok (the file as written included)'],
    [
      EXIT.usage,
      'bad usage, unreadable file, no loop or kernel as named, a bad --param, or nvcc not found; ' +
        'with --slurm: sbatch not found or refusing the job (its message; asked before anything is built)',
    ],
    [
      EXIT.badInput,
      'an output (--csv, --t4, --report, --save) that may not be written: an existing file Unroll Lens did not write (without --force), ' +
        'the input, a link, a folder, or an unwritable folder; checked before anything is built; ' +
        'with --slurm: the shared folder holds a link or other file where Unroll Lens writes its own',
    ],
    [EXIT.cancelled, 'cancelled (Ctrl-C, SIGTERM or SIGHUP); the variants measured so far are printed and written'],
  ],
  argsOf({ options, positionals }): SweepArgs {
    if (!positionals.length) throw new UsageError('sweep needs a .cu file');
    if (positionals.length > 1) throw new UsageError('sweep takes one file');
    let loops: number[] | undefined;
    if (options.loops !== undefined) {
      loops = lineListOption('loops', options.loops);
    }
    // `--factors none`: no loop axis, only the --param values (a kernel without loops needs no such word).
    const paramsOnly = options.factors?.trim().toLowerCase() === 'none';
    if (paramsOnly && loops) throw new UsageError('--factors none sweeps no loop: leave out --loops, or give factors for them');
    const params: Record<string, string[]> = {};
    for (const spec of options.param ?? []) {
      let p: { name: string; values: string[] };
      try {
        p = parseParamSpec(spec);
      } catch (e) {
        throw new UsageError(`--param: ${(e as Error).message}`);
      }
      if (params[p.name]) throw new UsageError(`--param ${p.name} is given twice`);
      params[p.name] = p.values;
    }
    const args = options.args !== undefined ? splitCommandLine(options.args) : [...DEFAULT_SETTINGS.profile.args];
    // `{NAME}` in --args is replaced by the point's value: one naming no --param is a typo.
    for (const a of args) {
      for (const m of a.matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g)) {
        if (!Object.hasOwn(params, m[1])) {
          throw new UsageError(
            `--args: {${m[1]}} names no --param${Object.keys(params).length ? ` (swept: ${Object.keys(params).join(', ')})` : ''}: ` +
              `{NAME} is replaced by each point's value of --param NAME`,
          );
        }
      }
    }
    gpusOptionSyntax(options.gpus);
    const strategy = options.strategy ?? 'exhaustive';
    if (!STRATEGIES.some(s => s.name === strategy))
      throw new UsageError(`--strategy takes ${STRATEGIES.map(s => s.name).join(' or ')}, not '${strategy}'`);
    return {
      file: positionals[0],
      kernel: options.kernel,
      loops,
      factors: paramsOnly ? UnrollFactors.NONE : factorsOption(options.factors),
      paramsOnly,
      params,
      strategy,
      forceStatic: !!options.static,
      json: !!options.json,
      outputs: resultOutputsOf(options),
      run: runFlagsOf(options, { args }),
      arch: stringOption('arch', options.arch, SETTINGS.arch) || null,
      jobs: numberOption('jobs', options.jobs, SETTINGS.jobs),
      timeouts: toolTimeoutOptions(options),
      quiet: !!options.quiet,
      warpsPerSm: warpsPerSmOption(options['warps-per-sm']),
      slurm: slurmOptionsOf(options),
      project: projectFlagsOf(options),
    };
  },
  run: sweep,
});

/** --warps-per-sm: whole warps, 1 to the most any architecture holds (64). */
const WARPS_OPTION = { ...RANGES.warpsPerSm, integer: true, min: 1 };

/** --warps-per-sm, or absent. */
export function warpsPerSmOption(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = /^\s*\d+\s*$/.test(text) ? Number(text) : NaN;
  if (rangeProblem(WARPS_OPTION, n)) throw new UsageError(`--warps-per-sm takes ${describeRange(WARPS_OPTION)}, not '${text}'`);
  return n;
}

interface SweepArgs {
  file: string;
  warpsPerSm: number | undefined;
  timeouts: ToolTimeouts;
  kernel: string | undefined;
  loops: number[] | undefined;
  factors: SweepOptions['factors'];
  /** --factors none: the --param axes only. */
  paramsOnly: boolean;
  params: Record<string, string[]>;
  strategy: string;
  forceStatic: boolean;
  json: boolean;
  outputs: ResultOutputs;
  /** How programs are run and timed, from the flags (--args with its {NAME} parameters checked). */
  run: RunFlags;
  arch: string | null;
  jobs: number;
  quiet: boolean;
  /** --slurm: the job array's options; null: measured here (or through --launcher). */
  slurm: SlurmOptions | null;
  /** --build/--run: the project's own build and run. */
  project: ProjectFlags | null;
}

/** Why this sweep cannot time on a GPU, or null when it can (the rule: engine/gpu/readiness.ts). */
export function staticReason(
  a: Pick<SweepArgs, 'forceStatic'> & Pick<GpuRunConfig, 'launcher' | 'timer'> & { slurm?: SlurmOptions | null; project?: boolean },
  t: Toolchain,
  text: string,
): string | null {
  const blocker = gpuBlocker({
    staticAsked: a.forceStatic,
    // with --slurm the GPUs and ncu are the nodes': this machine's say nothing about them
    hasNcu: !!t.ncu || !!a.slurm,
    timer: a.timer,
    gpus: t.gpus.length,
    launcher: a.slurm ? ['sbatch'] : a.launcher,
    text,
    project: a.project,
  });
  return blocker && CLI_GPU_BLOCKER_TEXT[blocker];
}

/** Progress on stderr: one redrawn line on a terminal, one line per step otherwise (logs). */
function progressWriter(io: CliIO): { write: (message: string) => void; done: () => void } {
  let last = '';
  let drawn = 0;
  return {
    write: message => {
      if (message === last) return;
      last = message;
      if (!io.isTTY) {
        io.err(`${message}\n`);
        return;
      }
      const now = Date.now();
      if (now - drawn < 50) return;
      drawn = now;
      io.err(`\r${message.length > 118 ? `${message.slice(0, 117)}…` : message}\x1b[K`);
    },
    done: () => {
      if (io.isTTY && last) io.err('\r\x1b[K');
    },
  };
}

async function sweep(a: SweepArgs, io: CliIO): Promise<number> {
  const abs = path.resolve(a.file);
  const text = readSourceFile(a.file);
  // Every output is checked before anything is built: a refused path costs no sweep.
  checkResultOutputs(a.outputs, abs);
  const built = buildPathFor(abs, a.file, io);
  const docs = await CudaDocuments.create();
  const analysis = docs.analyzeOnce(text, built, macroTableFor(abs, text, a.arch ?? null));
  const toolchain = limitTools(await detectToolchain({}), a.timeouts, a.file, io);
  if (a.arch) await checkArchOption(a.arch, toolchain);
  const flags = compileFlagsFor(abs, io);
  const arch = chooseArch(a.arch, flags.arch, toolchain.gpus).arch;
  const run = a.run;
  if (a.slurm && !run.sharedDir?.trim()) throw new UsageError('--slurm needs --shared-dir: a folder every node of the cluster sees');
  if (a.slurm && run.gpus !== undefined)
    throw new UsageError('--slurm places each task on the GPUs Slurm gives it: leave out --gpus (use --gres-gpus)');
  if (a.slurm && (run.config.maxSamples ?? 0) > run.config.samples)
    throw new UsageError(
      '--max-samples (adaptive sampling) does not work with --slurm: each round would wait in the queue again; ' +
        'give --samples the durations each point needs',
    );
  if (a.slurm && a.project)
    throw new UsageError(
      "--slurm and --build/--run do not go together: a Slurm task runs programs built here, a project's run needs its build tree",
    );
  const { cacheDir, config } = runConfigFromFlags(run, toolchain);
  const reason = staticReason(
    { forceStatic: a.forceStatic, launcher: config.launcher, timer: config.timer, slurm: a.slurm, project: !!a.project },
    toolchain,
    text,
  );
  const project = a.project && !reason ? openProject(a.project, abs, cacheDir, io, a.quiet) : undefined;
  if (reason && !a.forceStatic) io.err(`unroll-lens: static sweep: ${reason}\n`);
  const ac = new AbortController();
  const stopSignals = cancelOnSignals(ac);
  const progress = a.quiet ? { write: () => undefined, done: () => undefined } : progressWriter(io);
  let result: SweepResult;
  try {
    result = await runSweep(
      {
        file: built,
        text,
        analysis,
        kernel: a.kernel,
        loops: a.loops,
        factors: a.factors,
        paramsOnly: a.paramsOnly,
        params: a.params,
        strategy: a.strategy,
        toolchain,
        arch,
        flags,
        cacheDir,
        compileTimeoutMs: a.timeouts.nvccMs,
        jobs: a.jobs > 0 ? a.jobs : undefined,
        warpsPerSm: a.warpsPerSm,
        signal: ac.signal,
        ...(a.slurm && !reason ? { runner: slurmRunner(a.slurm, path.resolve(run.sharedDir!.trim())) } : {}),
        gpu: reason ? undefined : config,
        project,
      },
      {
        onProgress: p => progress.write(`sweep ${p.message}`),
      },
    );
  } catch (e) {
    if (e instanceof SweepSpaceError) throw new UsageError(e.message);
    throw e;
  } finally {
    progress.done();
    stopSignals();
    closeProjectRun(project);
  }
  if (reason) result.notes.push(`static sweep: ${reason}`);
  if (reason && config.sourceStalls) result.lineStallsProblem = `not sampled: a static sweep runs nothing on a GPU (${reason})`;
  const cost = result.timing && !result.static ? runTimingText(result.timing) : null;
  io.out(
    a.json
      ? JSON.stringify(sweepJson(result), null, 2) + '\n'
      : sweepText(result) +
          lineStallsText(result.lineStalls, result.lineStallsProblem, result.lineStallsSource) +
          (cost ? `${cost}\n` : ''),
  );
  writeResultOutputs(result, a.outputs, io);
  if (ac.signal.aborted) return EXIT.cancelled;
  return result.variants.some(v => v.status === 'ok') ? EXIT.ok : EXIT.failed;
}
