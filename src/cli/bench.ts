// `unroll-lens bench`: GPU timing, correctness and stall reasons of each unroll factor of a loop.
import * as path from 'path';
import {
  CudaDocuments,
  RunTiming,
  SweepSpaceError,
  benchJson,
  benchLabel,
  benchLoop,
  benchRows,
  benchStopsAt,
  chooseArch,
  detectToolchain,
  gpuBlocker,
  kib,
  lineStallsText,
  resolveSpace,
  type UnrollFactors,
} from '../engine';
import type { SweepResult, SweepVariant } from '../schema/types';
import { icacheRange, icacheShownText, icacheWhy } from '../schema/icacheText';
import { SETTINGS } from '../settings';
import { macroTableFor } from './macros';
import { defineCommand, factorsOption, lineListOption, stringOption } from './args';
import { cancelOnSignals, CliIO, EXIT, UsageError } from './io';
import { buildPathFor, checkArchOption, compileFlagsFor, readSourceFile } from './inputs';
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
import { BenchProgressWriter } from './progress';
import { closeProjectRun, openProject, PROJECT_OPTIONS, ProjectFlags, projectFlagsOf } from './project';
import { headerUnit, unitFunctions } from './sassBuild';
import { conditionsText } from '../schema/measurementText';
import { checkResultOutputs, RESULT_OUTPUT_OPTIONS, ResultOutputs, resultOutputsOf, writeResultOutputs } from './resultOutputs';
import { CLI_GPU_BLOCKER_TEXT, withoutGpuText } from './gpuReadinessText';
import { runTimingText } from '../schema/runTimingText';
import { confidenceLines } from '../schema/applyBest';

export const benchCommand = defineCommand({
  name: 'bench',
  summary:
    'Build each unroll factor of a loop as a program, check its result, time the kernel and report stall reasons (GPU; ' +
    "Unroll Lens' CUPTI timer by default, Nsight Compute with --timer ncu).",
  synopsis: '<file> --loop LINE[,LINE…] [options]',
  description:
    'For the file as written and each factor (every listed loop set to it): builds the program (a .cu with main), runs it\n' +
    'and times the kernel holding the loop until it has --samples durations, with the warp-stall reasons: by default with\n' +
    "Unroll Lens' CUPTI timer in the program's own run (warm caches, the GPU's own clocks), with --timer ncu under Nsight\n" +
    "Compute. The program's output in that run must show the file as written's checksum= values. Programs build while the\n" +
    'GPU measures those built; variants with the same machine code as an earlier one are measured once; unchanged\n' +
    'programs reuse earlier measurements unless --fresh. Progress goes to stderr (--quiet silences it). Needs nvcc and an\n' +
    'NVIDIA GPU (here, or through --launcher); ncu only for --timer ncu and --counters on. Without a GPU it stops before\n' +
    'building: sass and sweep --static work without one. Ctrl-C (or SIGTERM, SIGHUP) cancels.',
  options: {
    loop: { type: 'string', value: 'LINE[,LINE…]', help: '1-based line of the loop keyword; several loops are all set to the same factor' },
    kernel: {
      type: 'string',
      value: 'NAME',
      help: 'profile only this instantiation (mangled name, or part of the demangled one)',
      default: 'every kernel holding the loop',
    },
    factors: {
      type: 'string',
      value: 'LIST',
      help: 'unroll factors: default (no pragma), full, or integers from 1 to 4096',
      setting: SETTINGS.unrollFactors,
    },
    args: {
      type: 'string',
      value: '"ARGS"',
      help: 'program arguments, split like a shell would but never run through one',
      default: 'none',
    },
    ...GPU_RUN_OPTIONS,
    ...GPU_PLACEMENT_OPTIONS,
    ...TOOL_TIMEOUT_OPTIONS,
    // Opt-in here although the editor's unrollLens.profile.sourceStalls defaults to on: it costs one more ncu run per bench.
    'ncu-passes': {
      type: 'string',
      value: 'combined|split',
      help:
        'with --timer ncu: combined: duration and stall metrics on every timed launch, one ncu run per variant; split: durations alone, then the ' +
        'stall metrics on 3 launches in a second run (docs/measurements.md compares them)',
      default: 'combined',
    },
    'source-stalls': {
      type: 'boolean',
      help:
        "also sample warp stalls per source line of the file as written (the timed run's CUPTI PC samples; one extra ncu run with " +
        '--timer ncu or --stalls off, or when the samples give none)',
    },
    ...KEEP_REPORTS_OPTION,
    ...PROJECT_OPTIONS,
    'compile-commands': {
      type: 'string',
      value: 'PATH',
      help: 'the compile_commands.json (or its folder) to take the flags from, before any found by the search',
      default: "the file's folders up to the working directory, each with its compile_commands.json (or a link to one), build*/ and out/",
    },
    tu: {
      type: 'string',
      value: 'FILE',
      help: 'for a header (with --build/--run): the translation unit (.cu including it) its SASS is built through',
      default: "a compile_commands.json entry that includes the header and whose text instantiates the loop's function",
    },
    json: { type: 'boolean', help: 'machine-readable output (contract: docs/cli.md)' },
    ...RESULT_OUTPUT_OPTIONS,
  },
  exitCodes: [
    [EXIT.ok, 'every variant ok'],
    [
      EXIT.failed,
      'some variant did not finish ok (compile, runtime, timeout, correctness or profile: see its status and message), or the file as written does not compile',
    ],
    [EXIT.usage, 'bad usage, unreadable file, no loop at a --loop line, nvcc (or with --timer ncu, ncu) not found, no GPU, or no main()'],
    [
      EXIT.badInput,
      'nvcc, ptxas or the host compiler rejected a compile flag of the file as written (the message names it and where it came from); ' +
        'or an output (--csv, --t4, --report, --save) that may not be written, checked before anything is built',
    ],
    [EXIT.cancelled, 'cancelled (Ctrl-C, SIGTERM or SIGHUP); the variants measured so far are printed and written'],
  ],
  argsOf({ options, positionals }): BenchArgs {
    if (!positionals.length) throw new UsageError('bench needs a .cu file with main(), or a project file with --build and --run');
    if (positionals.length > 1) throw new UsageError('bench takes one file');
    if (options.loop === undefined) throw new UsageError('bench needs --loop LINE');
    const loops = lineListOption('loop', options.loop);
    gpusOptionSyntax(options.gpus);
    return {
      file: positionals[0],
      loops,
      kernel: options.kernel,
      factors: factorsOption(options.factors),
      run: runFlagsOf(options, { ncuPasses: true }),
      arch: stringOption('arch', options.arch, SETTINGS.arch) || null,
      timeouts: toolTimeoutOptions(options),
      json: !!options.json,
      quiet: !!options.quiet,
      outputs: resultOutputsOf(options),
      project: projectFlagsOf(options),
      tu: options.tu ?? null,
      compileCommands: options['compile-commands'] ?? null,
    };
  },
  run: bench,
});

function pct(x: number | undefined | null): string {
  return x === undefined || x === null ? '-' : `${(x * 100).toFixed(1)}%`;
}

/** The variants table (one per instantiation); `= 4` marks a variant with the same machine code as variant 4. */
export function renderBench(r: SweepResult): string {
  // whether Apply best is offered, and why (issue 25): under the tables
  const label = (id: string) => {
    const v = r.variants.find(x => x.id === id);
    return v ? benchLabel(v) : id;
  };
  const confidence = confidenceLines(r, label)
    .map(l => `${l}\n`)
    .join('');
  return benchTables(r) + confidence;
}

function benchTables(r: SweepResult): string {
  const j = benchJson(r);
  if (j.instantiations) {
    const rows = benchRows(r);
    return j.instantiations
      .map((x, k) =>
        benchTable(
          `${x.kernel}${x.blockSize ? ` block ${x.blockSize}` : ''}`,
          r,
          x.variants.map((row, i) => {
            const own = rows[i].instantiations?.find(y => y.kernel === x.kernel && y.blockSize === x.blockSize);
            return { ...row, registers: own?.registers ?? null, message: j.variants[i].message };
          }),
          // the i-cache facts describe the build's loop kernel: its table (the first) carries them
          k === 0 ? rows : [],
        ),
      )
      .join('\n');
  }
  return benchTable(j.kernel, r, j.variants, benchRows(r));
}

/** What one line of the table shows. */
type BenchRow = Pick<
  ReturnType<typeof benchJson>['variants'][number],
  | 'label'
  | 'identicalTo'
  | 'status'
  | 'kernelInstructions'
  | 'registers'
  | 'samples'
  | 'cached'
  | 'medianMs'
  | 'iqrMs'
  | 'cv'
  | 'speedup'
  | 'withinNoise'
  | 'stallShare'
  | 'message'
>;

function benchTable(kernel: string, r: SweepResult, rows: BenchRow[], variants: SweepVariant[]): string {
  const lines = [
    `${kernel} on ${r.gpu ?? 'unknown GPU'} · ${conditionsText(r.measurement, rows[0]?.samples ?? 0, r.clockControl)} · speedup vs the file as written`,
  ];
  lines.push(
    'variant      same as      status       instr  regs  samples   median ms    IQR ms     CV  speedup  no_instruction  top stall',
  );
  for (const v of rows) {
    const top = v.stallShare ? Object.entries(v.stallShare).sort((a, b) => b[1] - a[1])[0] : undefined;
    lines.push(
      [
        v.label.padEnd(12),
        (v.identicalTo !== null ? `= ${v.identicalTo}` : '').padEnd(12),
        v.status.padEnd(11),
        String(v.kernelInstructions ?? '-').padStart(6),
        String(v.registers ?? '-').padStart(5),
        `${v.samples}${v.cached ? '*' : ''}`.padStart(8),
        (v.medianMs?.toFixed(4) ?? '-').padStart(11),
        (v.iqrMs?.toFixed(4) ?? '-').padStart(9),
        (v.cv !== null ? `${(v.cv * 100).toFixed(1)}%` : '-').padStart(6),
        (v.speedup !== null ? `${v.speedup.toFixed(2)}×${v.withinNoise && v.label !== 'as-written' ? '~' : ''}` : '-').padStart(8),
        pct(v.stallShare?.no_instruction).padStart(15),
        top ? `${top[0]} ${pct(top[1])}` : '-',
      ].join(' '),
    );
    if (v.message) lines.push(`    ${v.message}`);
  }
  lines.push('~ = within noise (identical code, or the interquartile ranges overlap allowing 3 % run-to-run drift)');
  if (rows.some(v => v.identicalTo !== null))
    lines.push('= <label>: same machine code as that variant, measured once; its numbers are repeated');
  if (rows.some(v => v.cached))
    lines.push('* = measurement reused from an earlier run of the same program (no GPU run; --fresh measures again)');
  lines.push(...renderIcache(variants.filter(v => v.status !== 'pending')));
  return lines.join('\n') + '\n';
}

/**
 * The i-cache table (issue 13): per variant the slowdown shown, marked (measured) from this GPU
 * run or (predicted) from the SASS alone, with the prediction beside a measurement.
 */
function renderIcache(variants: SweepVariant[]): string[] {
  const rows = variants.filter(v => v.icache);
  if (!rows.length) return [];
  // named as the bench names rows (64), not by the panel's label (×64)
  const refLabel = rows.find(v => v.icache!.reference)?.icache!.reference;
  const refRow = variants.find(v => v.label === refLabel);
  const reference = refRow ? benchLabel(refRow) : refLabel;
  const out = [
    '',
    `i-cache slowdown${reference ? ` vs ${reference} (the most unrolled variant measured whose hot loop fits, else ×1, else the fastest)` : ' (predicted from the SASS; no GPU measurement)'}`,
    'variant      hot loop    shown                  predicted        warps/SM  no_instruction  why',
  ];
  for (const v of rows) {
    const c = v.icache!;
    const shown = icacheShownText(c);
    out.push(
      [
        benchLabel(v).padEnd(12),
        (c.bytes !== null ? kib(c.bytes) : '-').padStart(10),
        ' ' + shown.padEnd(22),
        (c.predicted ? icacheRange(c.predicted) : '-').padEnd(16),
        (c.warpsPerSm !== null ? `${c.warpsPerSm}${c.warpsSource === 'achieved' ? ' (ncu)' : ''}` : '-').padStart(9),
        pct(c.measured?.noInstruction).padStart(15),
        icacheWhy(c) ? ` ${icacheWhy(c)}` : '',
      ]
        .join(' ')
        .trimEnd(),
    );
  }
  out.push('(measured): this median ÷ the reference median on this GPU; (predicted): the i-cache model from the SASS alone (docs/cli.md)');
  out.push(
    'not i-cache: slower, but the hot loop fits or no_instruction stays under 10 % of stalls or under 5 points above the reference (docs/measurements.md)',
  );
  return out;
}

/** The footer: what the run cost (RunTiming; docs/cli.md says what each figure means); empty without accounting. */
export function renderTiming(t: RunTiming): string {
  const line = runTimingText(t);
  return line ? `\n${line}\n` : '';
}

interface BenchArgs {
  file: string;
  loops: number[];
  kernel: string | undefined;
  factors: UnrollFactors;
  /** How programs are run and timed, from the flags. */
  run: RunFlags;
  arch: string | null;
  timeouts: ToolTimeouts;
  json: boolean;
  quiet: boolean;
  outputs: ResultOutputs;
  /** --build/--run: the project's own build and run. */
  project: ProjectFlags | null;
  tu: string | null;
  compileCommands: string | null;
}

/** f() while `background` runs; when f throws, after `background` has ended (no probe outlives the command). */
async function afterSettling<T>(background: Promise<unknown>, f: () => Promise<T>): Promise<T> {
  background.catch(() => undefined); // its rejection is the caller's, when it awaits it
  try {
    return await f();
  } catch (e) {
    await background.catch(() => undefined);
    throw e;
  }
}

async function bench(a: BenchArgs, io: CliIO): Promise<number> {
  const { file, loops, kernel, factors, arch, json } = a;
  const launcher = a.run.config.launcher;
  const abs = path.resolve(file);
  const text = readSourceFile(file);
  // Every output is checked before anything is built: a refused path costs no GPU time.
  checkResultOutputs(a.outputs, abs);
  const built = buildPathFor(abs, file, io);
  // The tools are probed while the file is analysed (on an H200 host the probes, nvidia-smi
  // above all, took 0.2 s after 0.25 s of analysis); a refused argument waits for them to end.
  const probing = detectToolchain({});
  const analysis = await afterSettling(probing, async () => {
    const docs = await CudaDocuments.create();
    const analysis = docs.analyzeOnce(text, built, macroTableFor(abs, text, arch ?? null));
    const all = analysis.kernels.flatMap(k => k.loops.map(l => l.line));
    for (const l of loops)
      if (!all.includes(l)) throw new UsageError(`no loop in device code at line ${l} of ${file} (loops at ${all.join(', ') || 'none'})`);
    // The arguments are checked before the machine: loops of different kernels are a usage error on any machine.
    try {
      resolveSpace(analysis, built, { loops, factors, tied: true });
    } catch (e) {
      if (e instanceof SweepSpaceError) throw new UsageError(e.message);
      throw e;
    }
    return analysis;
  });
  const toolchain = limitTools(await probing, a.timeouts, file, io);
  if (arch) await checkArchOption(arch, toolchain);
  // The sweep's rule (engine/gpu/readiness.ts); a missing ncu stays the engine's MissingToolError (exit 2, with the fix).
  const blocker = gpuBlocker({
    hasNcu: !!toolchain.ncu,
    timer: a.run.config.timer,
    gpus: toolchain.gpus.length,
    launcher,
    text,
    project: !!a.project,
  });
  if (blocker && benchStopsAt(blocker))
    throw new UsageError(`cannot benchmark ${file}: ${CLI_GPU_BLOCKER_TEXT[blocker]}${withoutGpuText(blocker, file, loops)}`);
  // a header's SASS comes through a unit that includes it (a project's), as `sass` builds it
  const tu =
    a.project || a.tu ? headerUnit(abs, a.tu, { compileCommands: a.compileCommands, functions: unitFunctions(analysis, loops[0]) }) : null;
  if (tu) io.err(`unroll-lens: building ${path.relative(process.cwd(), abs) || abs} through ${path.relative(process.cwd(), tu) || tu}\n`);
  const flags = compileFlagsFor(tu ?? abs, io, a.compileCommands);
  const chosen = chooseArch(arch, flags.arch, toolchain.gpus).arch;
  const { cacheDir, config } = runConfigFromFlags(a.run, toolchain);
  const project = a.project ? openProject(a.project, abs, cacheDir, io, a.quiet) : undefined;
  const ac = new AbortController();
  const stopSignals = cancelOnSignals(ac);
  const progress = new BenchProgressWriter(a.quiet ? () => undefined : io.err, io.isTTY);
  try {
    const report = await benchLoop(built, text, analysis, {
      ...config,
      toolchain,
      arch: chosen,
      flags,
      cacheDir,
      nvccTimeoutMs: a.timeouts.nvccMs,
      loops,
      factors,
      kernel,
      signal: ac.signal,
      progress: p => progress.update(p),
      translationUnit: tu ?? undefined,
      project,
    });
    progress.done();
    io.out(
      json
        ? JSON.stringify(benchJson(report), null, 2) + '\n'
        : renderBench(report) +
            lineStallsText(report.lineStalls ?? null, report.lineStallsProblem ?? null, report.lineStallsSource) +
            (report.timing ? renderTiming(report.timing) : ''),
    );
    if (a.outputs.files.length || a.outputs.save) writeResultOutputs(report, a.outputs, io);
    if (ac.signal.aborted) return EXIT.cancelled;
    return report.variants.every(v => v.status === 'ok') ? EXIT.ok : EXIT.failed;
  } catch (e) {
    // loops of different kernels, a bad factor: the space of one loop's factors is refused up front
    if (e instanceof SweepSpaceError) throw new UsageError(e.message);
    throw e;
  } finally {
    progress.done();
    stopSignals();
    closeProjectRun(project);
  }
}
