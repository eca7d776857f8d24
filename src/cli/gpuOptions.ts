// The options every GPU-running subcommand (bench, sweep, compare) takes, in one place: how
// programs are run and timed, with their defaults from the settings declaration, and the one
// builder of the engine's run configuration from them (runFlagsOf, runConfigFromFlags; the
// editor's is server/runOptions.ts).
import * as os from 'os';
import {
  GpuSelectionError,
  UnmetCondition,
  defaultCacheDir,
  parseGpuSelection,
  runLocations,
  splitCommandLine,
  unmetConditions,
  withToolTimeouts,
  type GpuRunConfig,
  type NcuPasses,
  type Toolchain,
} from '../engine';
import { DEFAULT_SETTINGS } from '../settings';
import { RANGES } from '../schema/ranges';
import { NumberDecl, SETTINGS } from '../settings';
import { enumOption, numberOption, OptionTable } from './args';
import { CliIO, UsageError } from './io';

export const GPU_RUN_OPTIONS = {
  samples: {
    type: 'string',
    value: 'N',
    help: `kernel durations per variant, ${RANGES.samples.min} to ${RANGES.samples.max}`,
    setting: SETTINGS.profile.samples,
  },
  'max-samples': {
    type: 'string',
    value: 'N',
    help:
      `adaptive sampling: after --samples per variant, time the leading variants again (--samples more at a time) while the ` +
      `fastest is uncertain (first in under 95% of bootstrap resamples, its interval against the runner-up reaching 1), ` +
      `up to N durations each; 0 = off, else --samples to ${RANGES.maxSamples.max}`,
    setting: SETTINGS.profile.maxSamples,
  },
  warmup: {
    type: 'string',
    value: 'N',
    help: `launches of the kernel skipped per program run before timing, ${RANGES.warmup.min} to ${RANGES.warmup.max}`,
    setting: SETTINGS.profile.warmup,
  },
  'clock-control': {
    type: 'string',
    value: 'base|none',
    setting: SETTINGS.profile.clockControl,
    help: 'with --timer ncu, ncu --clock-control: base locks base clocks while profiling; none measures at the clocks the GPU runs',
    // In force: ncu's default only matters with --timer ncu; the default timer cannot lock clocks.
    default: 'base with --timer ncu; the CUPTI timer, the default, measures at the clocks the GPU runs',
  },
  'cache-control': {
    type: 'string',
    value: 'all|none',
    setting: SETTINGS.profile.cacheControl,
    help: 'with --timer ncu, ncu --cache-control: all flushes every GPU cache before each profiled launch; none leaves them warm',
    default: 'all with --timer ncu; the CUPTI timer, the default, leaves them warm, as the program does',
  },
  timer: {
    type: 'string',
    value: 'ncu|cupti',
    setting: SETTINGS.profile.timer,
    help:
      'ncu: each launch under Nsight Compute (caches per --cache-control, clocks per --clock-control); ' +
      "cupti: the program runs as itself with Unroll Lens' CUPTI kernel timer (warm caches, the GPU's own clocks, stall " +
      'reasons by CUPTI PC sampling, no ncu, no counter permission needed for the times; --clock-control base and --cache-control all are refused with it)',
  },
  stalls: {
    type: 'string',
    value: 'on|off',
    setting: SETTINGS.profile.stalls,
    help: "on: warp-stall reasons for every variant (CUPTI PC sampling; with --timer ncu, ncu's warp-state metrics); off: times only, faster",
  },
  counters: {
    type: 'string',
    value: 'on|off',
    setting: SETTINGS.profile.counters,
    help:
      'with the CUPTI timer (the default): on also counts executed instructions and achieved occupancy of every timed kernel ' +
      '(one extra ncu run per variant; --timer ncu has them anyway)',
  },
  elements: {
    type: 'string',
    value: 'N',
    help:
      'elements one launch of the timed kernel processes (e.g. the array length): with the counters (--counters on or ' +
      '--timer ncu), executed instructions per element besides per thread',
    default: 'not named',
  },
  timeout: {
    type: 'string',
    value: 'S',
    setting: SETTINGS.profile.timeoutSeconds,
    help: 'seconds per program run; past it the run is killed with its process tree',
  },
  launcher: {
    type: 'string',
    value: '"CMD"',
    help: 'prefix for every program run (and ncu run, with --timer ncu), e.g. "srun -p gpu --gres=gpu:1"',
    default: 'none',
  },
  arch: { type: 'string', value: 'sm_XX', help: 'target architecture', default: "compile flags' arch, else the first GPU's, else sm_90" },
} as const satisfies OptionTable;

/** How the kernels are timed: --timer, --clock-control and --cache-control, checked against each other. */
interface TimerOptions {
  timer: 'ncu' | 'cupti';
  clockControl: 'base' | 'none';
  cacheControl: 'all' | 'none';
  stalls: boolean;
  counters: boolean;
}

const UNMET_WORDS: Record<UnmetCondition, { flag: string; instead: string; want: string }> = {
  'base-clocks': { flag: '--clock-control base', instead: 'at the clocks the GPU sets', want: 'base clocks' },
  'flushed-caches': { flag: '--cache-control all', instead: 'with its caches as it leaves them', want: 'flushed caches' },
};

/**
 * --timer, --clock-control and --cache-control (defaults from the settings declaration). Base
 * clocks or flushed caches asked for explicitly with --timer cupti are a usage error: the timer
 * runs the program as itself and cannot give them (the rule: engine/gpu/timer.ts).
 */
export function timerOptions(
  o: { timer?: string; 'clock-control'?: string; 'cache-control'?: string; stalls?: string; counters?: string },
  countersByDefault = false,
): TimerOptions {
  const t: TimerOptions = {
    timer: enumOption('timer', o.timer, SETTINGS.profile.timer),
    stalls: enumOption('stalls', o.stalls, SETTINGS.profile.stalls) === 'on',
    // compare counts by default (a ladder's story is in its executed instructions); bench and sweep as the setting says
    counters: o.counters === undefined && countersByDefault ? true : enumOption('counters', o.counters, SETTINGS.profile.counters) === 'on',
    clockControl: enumOption('clock-control', o['clock-control'], SETTINGS.profile.clockControl),
    cacheControl: enumOption('cache-control', o['cache-control'], SETTINGS.profile.cacheControl),
  };
  const unmet = unmetConditions({
    timer: t.timer,
    clockControl: o['clock-control'] !== undefined ? t.clockControl : undefined,
    cacheControl: o['cache-control'] !== undefined ? t.cacheControl : undefined,
  });
  if (unmet.length) {
    const words = unmet.map(u => UNMET_WORDS[u]);
    const all = (k: 'flag' | 'instead' | 'want') => words.map(w => w[k]).join(' and ');
    throw new UsageError(
      `--timer cupti runs the program as itself, ${all('instead')}: ${all('flag')} ${unmet.length > 1 ? 'need' : 'needs'} ncu. ` +
        `Use --timer ncu for ${all('want')}, or leave ${unmet.length > 1 ? 'them' : 'it'} out.`,
    );
  }
  return t;
}

/** --elements: a positive whole number, or undefined when not given. */
export function elementsOption(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  // one spelling: decimal digits (not 0x10 or 1e3, which Number() would take)
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n < 1) throw new UsageError(`--elements takes a positive whole number, not '${text}'`);
  return n;
}

/** --samples and --max-samples: --max-samples is 0 (off) or at least --samples (a first round is never cut short). */
function samplesOptions(o: { samples?: string; 'max-samples'?: string }): { samples: number; maxSamples: number } {
  const samples = numberOption('samples', o.samples, SETTINGS.profile.samples);
  const maxSamples = numberOption('max-samples', o['max-samples'], SETTINGS.profile.maxSamples);
  if (maxSamples > 0 && maxSamples < samples)
    throw new UsageError(`--max-samples takes 0 (off) or at least --samples (${samples}), not ${maxSamples}`);
  return { samples, maxSamples };
}

/** --nvcc-timeout: seconds per nvcc compile; the editor's unrollLens.toolchain.nvccTimeoutSeconds. */
const NVCC_TIMEOUT: NumberDecl = SETTINGS.toolchain.nvccTimeoutSeconds;
/** --disasm-timeout: seconds per nvdisasm/cuobjdump run; the editor's unrollLens.toolchain.disassemblerTimeoutSeconds. */
const DISASM_TIMEOUT: NumberDecl = SETTINGS.toolchain.disassemblerTimeoutSeconds;

/** The tools' time limits, for every subcommand that compiles (sass, bench, sweep). */
export const TOOL_TIMEOUT_OPTIONS = {
  'nvcc-timeout': {
    type: 'string',
    value: 'S',
    setting: NVCC_TIMEOUT,
    help: 'seconds per nvcc compile (1 to 86400); past it nvcc is killed with its children and the variant reported as timeout',
  },
  'disasm-timeout': {
    type: 'string',
    value: 'S',
    setting: DISASM_TIMEOUT,
    help: 'seconds per nvdisasm/cuobjdump run (1 to 86400); past it the counts come from the cubin alone',
  },
} as const satisfies OptionTable;

export interface ToolTimeouts {
  nvccMs: number;
  disasmMs: number;
}

export function toolTimeoutOptions(o: { 'nvcc-timeout'?: string; 'disasm-timeout'?: string }): ToolTimeouts {
  return {
    nvccMs: numberOption('nvcc-timeout', o['nvcc-timeout'], NVCC_TIMEOUT) * 1000,
    disasmMs: numberOption('disasm-timeout', o['disasm-timeout'], DISASM_TIMEOUT) * 1000,
  };
}

/**
 * The toolchain with nvcc and the disassemblers held to their limits; each run that times out is
 * reported on stderr at once, naming the tool, the limit, the file and the option that raises it.
 */
export function limitTools(t: Toolchain, limits: ToolTimeouts, file: string, io: CliIO): Toolchain {
  const table = new Map<string, { tool: string; timeoutMs: number }>([[t.nvcc.path, { tool: 'nvcc', timeoutMs: limits.nvccMs }]]);
  if (t.nvdisasm) table.set(t.nvdisasm.path, { tool: 'nvdisasm', timeoutMs: limits.disasmMs });
  if (t.cuobjdump) table.set(t.cuobjdump.path, { tool: 'cuobjdump', timeoutMs: limits.disasmMs });
  const runner = withToolTimeouts(t.runner, table, x =>
    io.err(
      x.tool === 'nvcc'
        ? `unroll-lens: nvcc timed out after ${x.seconds} s compiling ${file}${x.file ? ` (as ${x.file})` : ''} and was killed; raise --nvcc-timeout if it needs longer\n`
        : `unroll-lens: ${x.tool} timed out after ${x.seconds} s disassembling ${x.file ?? 'a cubin'} of ${file} and was killed; ` +
            'its counts come from the cubin alone; raise --disasm-timeout if it needs longer\n',
    ),
  );
  return { ...t, runner };
}

/**
 * Which GPUs bench uses, where its files go and whether measurements are reused: the editor's
 * unrollLens.profile.gpus, sharedDirectory and measurementCache. sweep takes --gpus, --shared-dir
 * and --quiet (it keeps no measurement cache, so no --fresh).
 */
export const GPU_PLACEMENT_OPTIONS = {
  gpus: {
    type: 'string',
    value: 'all|0,1,…',
    help: 'GPUs to spread variants over (CUDA_VISIBLE_DEVICES per program run, or per ncu process with --timer ncu): all, or a comma list of CUDA device indices',
    default: 'the default device',
  },
  'shared-dir': {
    type: 'string',
    value: 'DIR',
    help:
      "folder every GPU node sees, for --launcher runs: programs are built in DIR/builds, run files (the timer's records, " +
      'or ncu reports with --timer ncu) go to DIR/runs, measurements are cached in DIR/measurements',
    default: 'the build cache, with runs and measurements beside it; runs in the temp folder without --launcher',
  },
  'profiles-per-gpu': {
    type: 'string',
    value: 'N',
    setting: SETTINGS.profile.profilesPerGpu,
    help:
      'with --timer ncu: ncu processes in flight per GPU (they take turns at profiling; start-up overlaps); 1 for programs that ' +
      'need most of the GPU memory. The CUPTI timer, the default, runs one program per GPU at a time',
  },
  fresh: {
    type: 'boolean',
    help: 'measure every variant on the GPU: the measurement cache (unchanged binaries reuse their earlier numbers) is not used',
  },
  quiet: { type: 'boolean', help: 'no progress on stderr (it is shown by default, also with --json and in logs)' },
} as const satisfies OptionTable;

/** --keep-reports, one wording for bench, sweep and compare. */
export const KEEP_REPORTS_OPTION = {
  'keep-reports': {
    type: 'string',
    value: 'DIR',
    help: "keep what each timed run recorded in DIR: the CUPTI timer's records, or with --timer ncu every ncu report and its raw-page CSV",
    default: 'deleted',
  },
} as const satisfies OptionTable;

/** `--gpus` checked for its form only (words, duplicates): before anything is built. */
export function gpusOptionSyntax(text: string | undefined): void {
  if (text !== undefined) gpusOption(text, 0);
}

/** `--gpus` → CUDA device indices, checked against the GPUs the toolchain sees (nvidia-smi; none: not checked). */
export function gpusOption(text: string | undefined, available: number): number[] {
  if (text === undefined) return [];
  if (text.trim() === '') throw new UsageError('--gpus takes all or a comma list of CUDA device indices such as 0,1');
  try {
    return parseGpuSelection(text, available);
  } catch (e) {
    if (e instanceof GpuSelectionError) throw new UsageError(`--gpus: ${e.message}`);
    throw e;
  }
}

/** Build cache, run folder and measurement cache for a bench run, from --shared-dir, --launcher and --fresh. */
export function benchLocations(
  o: { sharedDir: string | undefined; launcher: string[]; fresh: boolean },
  cacheDir: string,
): { cacheDir: string; runDir: string; measurementCacheDir: string | null } {
  if (o.sharedDir !== undefined && o.sharedDir.trim() === '') throw new UsageError('--shared-dir needs a folder');
  const r = runLocations({ cacheDir, sharedDirectory: o.sharedDir ?? '', launcher: o.launcher, tmpDir: os.tmpdir() });
  return { ...r, measurementCacheDir: o.fresh ? null : r.measurementCacheDir };
}

function ncuPassesOption(text: string | undefined): NcuPasses {
  if (text === undefined || text === 'combined' || text === 'split') return text ?? 'combined';
  throw new UsageError(`--ncu-passes takes combined or split, not '${text}'`);
}

/** The flags the run configuration is read from (each command declares those it takes). */
interface RunFlagValues {
  args?: string;
  samples?: string;
  'max-samples'?: string;
  warmup?: string;
  timer?: string;
  'clock-control'?: string;
  'cache-control'?: string;
  stalls?: string;
  counters?: string;
  elements?: string;
  timeout?: string;
  launcher?: string;
  'keep-reports'?: string;
  'source-stalls'?: boolean;
  'ncu-passes'?: string;
  'profiles-per-gpu'?: string;
  gpus?: string;
  'shared-dir'?: string;
  fresh?: boolean;
}

/**
 * The run configuration as the flags say it, read and checked before anything runs (argsOf); the
 * GPUs and folders it names wait for the toolchain (runConfigFromFlags).
 */
export interface RunFlags {
  config: Omit<GpuRunConfig, 'gpus' | 'runDir' | 'measurementCacheDir'>;
  /** --gpus as given (undefined: the default device). */
  gpus: string | undefined;
  sharedDir: string | undefined;
  fresh: boolean;
}

/**
 * The flags of bench, sweep and compare as a run configuration, each with its default from the
 * settings declaration. `args`: the program arguments when the command reads --args itself (sweep:
 * its {NAME} parameters); `countersByDefault`: compare counts unless told not to; `ncuPasses`: the
 * command takes --ncu-passes (bench).
 */
export function runFlagsOf(
  options: RunFlagValues,
  o: { args?: string[]; countersByDefault?: boolean; ncuPasses?: boolean } = {},
): RunFlags {
  const args = o.args ?? (options.args !== undefined ? splitCommandLine(options.args) : [...DEFAULT_SETTINGS.profile.args]);
  const { samples, maxSamples } = samplesOptions(options);
  const warmup = numberOption('warmup', options.warmup, SETTINGS.profile.warmup);
  const { clockControl, cacheControl, timer, stalls, counters } = timerOptions(options, o.countersByDefault);
  // in this order: a Slurm sweep's folder is named by a hash of its configuration's JSON (slurm/manifest.ts)
  return {
    config: {
      args,
      samples,
      maxSamples,
      warmup,
      clockControl,
      cacheControl,
      timer,
      stalls,
      counters,
      elements: elementsOption(options.elements),
      timeoutMs: numberOption('timeout', options.timeout, SETTINGS.profile.timeoutSeconds) * 1000,
      launcher: options.launcher !== undefined ? splitCommandLine(options.launcher) : [...DEFAULT_SETTINGS.profile.launcher],
      keepReportsDir: options['keep-reports'],
      ...(o.ncuPasses ? { passes: ncuPassesOption(options['ncu-passes']) } : {}),
      profilesPerGpu: numberOption('profiles-per-gpu', options['profiles-per-gpu'], SETTINGS.profile.profilesPerGpu),
      sourceStalls: !!options['source-stalls'],
    },
    gpus: options.gpus,
    sharedDir: options['shared-dir'],
    fresh: !!options.fresh,
  };
}

/**
 * The run configuration once the toolchain is known: --gpus checked against the GPUs it sees
 * (with a launcher they are on another node: this machine's count says nothing about them), and
 * where programs are built (the job's cacheDir), run files go and measurements are cached.
 */
export function runConfigFromFlags(f: RunFlags, toolchain: Pick<Toolchain, 'gpus'>): { cacheDir: string; config: GpuRunConfig } {
  const { profilesPerGpu, sourceStalls, ...rest } = f.config;
  const gpus = gpusOption(f.gpus, rest.launcher.length ? 0 : toolchain.gpus.length);
  const where = benchLocations({ sharedDir: f.sharedDir, launcher: rest.launcher, fresh: f.fresh }, defaultCacheDir());
  const { runDir, measurementCacheDir } = where;
  // the placement before profilesPerGpu and sourceStalls: the order a Slurm sweep's folder hash has always had
  return { cacheDir: where.cacheDir, config: { ...rest, gpus, runDir, measurementCacheDir, profilesPerGpu, sourceStalls } };
}
