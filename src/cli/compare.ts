// `unroll-lens compare`: several kernels of one program timed side by side (issue 26): a ladder
// of unrolling techniques, or one kernel per coarsening factor, with speedups against a baseline.
import { checkResultOutputs, RESULT_OUTPUT_OPTIONS, ResultOutputs, resultOutputsOf, writeResultOutputs } from './resultOutputs';
import * as path from 'path';
import {
  CudaDocuments,
  KernelComparison,
  SweepSpaceError,
  benchStopsAt,
  chooseArch,
  compareKernels,
  detectToolchain,
  gpuBlocker,
} from '../engine';
import { conditionsText } from '../schema/measurementText';
import { SETTINGS } from '../settings';
import { macroTableFor } from './macros';
import { defineCommand, stringOption } from './args';
import { cancelOnSignals, EXIT, UsageError } from './io';
import { buildPathFor, checkArchOption, compileFlagsFor, readSourceFile } from './inputs';
import { closeProjectRun, openProject, PROJECT_OPTIONS, ProjectFlags, projectFlagsOf } from './project';
import {
  GPU_PLACEMENT_OPTIONS,
  GPU_RUN_OPTIONS,
  gpusOptionSyntax,
  limitTools,
  RunFlags,
  runConfigFromFlags,
  runFlagsOf,
  ToolTimeouts,
  TOOL_TIMEOUT_OPTIONS,
  toolTimeoutOptions,
  KEEP_REPORTS_OPTION,
} from './gpuOptions';
import { BenchProgressWriter } from './progress';
import { CLI_GPU_BLOCKER_TEXT, withoutGpuText } from './gpuReadinessText';
import { renderTiming } from './bench';

export const compareCommand = defineCommand({
  name: 'compare',
  summary: 'Time several kernels of one program side by side (a ladder of unrolling techniques), with speedups against a baseline (GPU).',
  synopsis: '<file> --kernels NAME,NAME[,…] [options]',
  description:
    'Builds the program (a .cu with main) as written, runs it with the kernel timer (or under ncu with --timer ncu) until\n' +
    'every named kernel has --samples durations, and prints one row per kernel (each template instantiation its own):\n' +
    'median time, speedup against --baseline, SASS instructions, registers, stall mix, and, under ncu, executed\n' +
    'instructions and achieved occupancy. The program must exit 0 and print no MISMATCH line. Ctrl-C cancels.',
  options: {
    kernels: {
      type: 'string',
      value: 'NAME,NAME[,…]',
      help: 'the kernels to compare, as written in the file (every instantiation of each)',
    },
    baseline: { type: 'string', value: 'NAME', help: 'the kernel the speedups are against', default: 'the first of --kernels' },
    args: {
      type: 'string',
      value: '"ARGS"',
      help: 'program arguments, split like a shell would but never run through one',
      default: 'none',
    },
    ...GPU_RUN_OPTIONS,
    // compare counts by default (runFlagsOf's countersByDefault): a ladder's story is in its executed instructions
    counters: { ...GPU_RUN_OPTIONS.counters, default: 'on' },
    ...GPU_PLACEMENT_OPTIONS,
    ...TOOL_TIMEOUT_OPTIONS,
    ...KEEP_REPORTS_OPTION,
    ...PROJECT_OPTIONS,
    // the panel's kernel-comparison view as an offline page, a CSV row per kernel, a saved result (no T4: nothing is tuned)
    csv: RESULT_OUTPUT_OPTIONS.csv,
    report: RESULT_OUTPUT_OPTIONS.report,
    force: RESULT_OUTPUT_OPTIONS.force,
    save: RESULT_OUTPUT_OPTIONS.save,
    json: { type: 'boolean', help: 'machine-readable output (contract: docs/cli.md)' },
  },
  exitCodes: [
    [EXIT.ok, 'every kernel timed'],
    [EXIT.failed, 'the program failed (compile, runtime, timeout, correctness or profile: see the message), or a kernel got no time'],
    [EXIT.usage, 'bad usage, unreadable file, a name that is no kernel of the file, nvcc not found, or no GPU'],
    [EXIT.badInput, 'an output (--csv, --report, --save) that may not be written, checked before anything is built'],
    [EXIT.cancelled, 'cancelled (Ctrl-C, SIGTERM or SIGHUP)'],
  ],
  argsOf({ options, positionals }): CompareArgs {
    if (positionals.length !== 1) throw new UsageError('compare takes one .cu file with main()');
    const kernels = (options.kernels ?? '')
      .split(',')
      .map(s => s.trim())
      .filter(Boolean);
    if (kernels.length < 1) throw new UsageError('compare needs --kernels NAME,NAME…');
    gpusOptionSyntax(options.gpus);
    return {
      file: positionals[0],
      kernels,
      baseline: options.baseline,
      arch: stringOption('arch', options.arch, SETTINGS.arch) || null,
      run: runFlagsOf(options, { countersByDefault: true }),
      timeouts: toolTimeoutOptions(options),
      quiet: !!options.quiet,
      json: !!options.json,
      outputs: resultOutputsOf(options),
      project: projectFlagsOf(options),
    };
  },
  async run(a, io) {
    const { file, arch } = a;
    const launcher = a.run.config.launcher;
    const abs = path.resolve(file);
    const text = readSourceFile(file);
    // Every output is checked before anything is built: a refused path costs no GPU time.
    checkResultOutputs(a.outputs, abs);
    const built = buildPathFor(abs, file, io);
    const analysis = (await CudaDocuments.create()).analyzeOnce(text, built, macroTableFor(abs, text, arch));
    const toolchain = limitTools(await detectToolchain({}), a.timeouts, file, io);
    if (arch) await checkArchOption(arch, toolchain);
    const blocker = gpuBlocker({
      hasNcu: !!toolchain.ncu,
      timer: a.run.config.timer,
      gpus: toolchain.gpus.length,
      launcher,
      text,
      project: !!a.project,
    });
    if (blocker && benchStopsAt(blocker))
      throw new UsageError(`cannot compare kernels of ${file}: ${CLI_GPU_BLOCKER_TEXT[blocker]}${withoutGpuText(blocker, file, [])}`);
    const flags = compileFlagsFor(abs, io);
    const { cacheDir, config } = runConfigFromFlags(a.run, toolchain);
    const project = a.project ? openProject(a.project, abs, cacheDir, io, a.quiet) : undefined;
    const ac = new AbortController();
    const stopSignals = cancelOnSignals(ac);
    const progress = new BenchProgressWriter(a.quiet ? () => undefined : io.err, io.isTTY);
    try {
      const c = await compareKernels(built, text, analysis, {
        ...config,
        toolchain,
        arch: chooseArch(arch, flags.arch, toolchain.gpus).arch,
        flags,
        cacheDir,
        nvccTimeoutMs: a.timeouts.nvccMs,
        kernels: a.kernels,
        baseline: a.baseline,
        signal: ac.signal,
        progress: p => progress.update(p),
        project,
      });
      progress.done();
      io.out(a.json ? JSON.stringify(compareJson(c), null, 2) + '\n' : renderComparison(c));
      if (a.outputs.files.length || a.outputs.save) writeResultOutputs(c.result, a.outputs, io);
      if (ac.signal.aborted) return EXIT.cancelled;
      const v = c.result.variants[0];
      return v?.status === 'ok' && c.rows.length && c.rows.every(x => x.medianMs !== null) ? EXIT.ok : EXIT.failed;
    } catch (e) {
      if (e instanceof SweepSpaceError) throw new UsageError(e.message);
      throw e;
    } finally {
      progress.done();
      stopSignals();
      closeProjectRun(project);
    }
  },
});

/** A compare run's settings, from its words (argsOf). */
interface CompareArgs {
  file: string;
  kernels: string[];
  baseline: string | undefined;
  arch: string | null;
  /** How programs are run and timed, from the flags. */
  run: RunFlags;
  timeouts: ToolTimeouts;
  quiet: boolean;
  json: boolean;
  outputs: ResultOutputs;
  /** --build/--run: the project's own build and run. */
  project: ProjectFlags | null;
}

/** The documented `compare --json` contract (docs/cli.md). */
export function compareJson(c: KernelComparison) {
  const v = c.result.variants[0];
  return {
    file: c.result.file,
    gpu: c.result.gpu,
    ...(c.result.measurement ? { measurement: c.result.measurement } : {}),
    status: v?.status ?? 'cancelled',
    message: v?.message ?? null,
    baseline: c.baseline,
    kernels: c.rows.map(x => ({
      name: x.name,
      kernel: x.kernel,
      demangled: x.demangled,
      blockSize: x.blockSize,
      samples: x.samples,
      medianMs: x.medianMs,
      q1Ms: x.q1Ms,
      q3Ms: x.q3Ms,
      cv: x.cv,
      speedup: x.speedup,
      withinNoise: x.withinNoise,
      kernelInstructions: x.kernelInstructions,
      registers: x.registers,
      spillStores: x.spillStores ?? null,
      spillLoads: x.spillLoads ?? null,
      executedInstructions: x.executedInstructions,
      instructionsPerThread: x.instructionsPerThread ?? null,
      instructionsPerElement: x.instructionsPerElement ?? null,
      achievedOccupancy: x.achievedOccupancy,
      stallShare: x.stallShare,
    })),
    notes: c.result.notes,
    ...(c.result.timing ? { timing: c.result.timing } : {}),
  };
}

const pct = (x: number | null | undefined) => (x === null || x === undefined ? '-' : `${x.toFixed(1)}%`);

/** The ladder as a table: one row per kernel in the order named. */
export function renderComparison(c: KernelComparison): string {
  const v = c.result.variants[0];
  const base = c.rows.find(x => x.kernel === c.baseline);
  const lines = [
    `${path.basename(c.result.file)} on ${c.result.gpu ?? 'unknown GPU'} · ${conditionsText(c.result.measurement, c.rows[0]?.samples ?? 0, c.result.clockControl)}` +
      ` · speedup vs ${base?.name ?? 'no baseline (it has no time)'}`,
    'kernel                     median ms    IQR ms  speedup   instr  regs  exec instr/launch  instr/thread  achieved occ  top stall',
  ];
  for (const x of c.rows) {
    const top = x.stallShare ? Object.entries(x.stallShare).sort((a, b) => b[1] - a[1])[0] : undefined;
    lines.push(
      [
        (x.name + (c.rows.filter(y => y.name === x.name).length > 1 ? ` ${x.demangled}` : '')).slice(0, 26).padEnd(26),
        (x.medianMs?.toFixed(4) ?? '-').padStart(10),
        (x.iqrMs?.toFixed(4) ?? '-').padStart(9),
        (x.speedup !== null ? `${x.speedup.toFixed(2)}×${x.withinNoise && x !== base ? '~' : ''}` : '-').padStart(8),
        String(x.kernelInstructions ?? '-').padStart(7),
        String(x.registers ?? '-').padStart(5),
        String(x.executedInstructions ?? '-').padStart(18),
        (x.instructionsPerThread != null ? x.instructionsPerThread.toFixed(1) : '-').padStart(13),
        pct(x.achievedOccupancy).padStart(13),
        top ? ` ${top[0]} ${(top[1] * 100).toFixed(1)}%` : ' -',
      ].join(' '),
    );
  }
  if (v?.message) lines.push(`  ${v.message}`);
  lines.push('~ = within noise of the baseline (the interquartile ranges overlap allowing 3 % run-to-run drift)');
  if (c.rows.some(x => x.executedInstructions === null))
    lines.push(
      'exec instr (warp instructions a launch), instr/thread and achieved occ are ncu counters: unknown without --counters on or --timer ncu',
    );
  for (const n of c.result.notes) lines.push(n);
  return lines.join('\n') + '\n' + (c.result.timing ? renderTiming(c.result.timing) : '');
}
