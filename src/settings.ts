// Every Unroll Lens setting, declared once. The typed `Settings`, `DEFAULT_SETTINGS` and
// `readSettings` are derived here; package.json's contributes.configuration and
// capabilities.untrustedWorkspaces and docs/settings.md are generated from it
// (`npm run gen:settings`, checked by test/unit/settingsManifest.test.ts).
// Pure on purpose: no `vscode`, no Node APIs. The extension, the server and the CLI import it,
// the webview imports its types.
import { DEFAULT_UNROLL_FACTORS, RANGES, UNROLL_FACTOR_EXPECTED, UNROLL_FACTOR_PATTERN } from './schema/ranges';

/** Where a value may be set (VS Code's configuration scopes that this extension uses). */
type SettingScope = 'window' | 'machine-overridable';

interface DeclBase {
  /** Key under `unrollLens.` when it is not the field path joined by dots (`codeLens.enabled` for `codeLensEnabled`). */
  key?: string;
  description: string;
  /** Default `window`: the server asks for the whole section, without a resource, so per-folder values would be ignored. */
  scope?: SettingScope;
  /** Names a program, a command or compiler input: VS Code ignores its workspace value in an untrusted workspace. */
  restricted?: boolean;
}

export interface BooleanDecl extends DeclBase {
  type: 'boolean';
  default: boolean;
}
export interface NumberDecl extends DeclBase {
  type: 'integer' | 'number';
  default: number;
  minimum?: number;
  maximum?: number;
}
export interface StringDecl extends DeclBase {
  type: 'string';
  default: string;
  /** Anchored regular expression (JSON-schema syntax) a value must match. */
  pattern?: string;
  /** What a matching value looks like, for VS Code's settings editor and our warnings. */
  patternErrorMessage?: string;
}
export interface EnumDecl<E extends string = string> extends DeclBase {
  type: 'enum';
  values: readonly E[];
  valueDescriptions?: readonly string[];
  default: E;
}
export interface StringListDecl extends DeclBase {
  type: 'strings';
  default: readonly string[];
  /** Each element must match this anchored regular expression. */
  itemPattern?: string;
  itemPatternErrorMessage?: string;
  minItems?: number;
  /**
   * An element that does not match is dropped (with a warning) and the valid ones kept, instead of
   * the whole list falling back to its default: one typo in a list of factors loses nothing else.
   */
  dropInvalidItems?: boolean;
}
export type SettingDecl = BooleanDecl | NumberDecl | StringDecl | EnumDecl | StringListDecl;

const boolean = (d: Omit<BooleanDecl, 'type'>): BooleanDecl => ({ type: 'boolean', ...d });
const integer = (d: Omit<NumberDecl, 'type'>): NumberDecl => ({ type: 'integer', ...d });
const number = (d: Omit<NumberDecl, 'type'>): NumberDecl => ({ type: 'number', ...d });
const string = (d: Omit<StringDecl, 'type'>): StringDecl => ({ type: 'string', ...d });
const strings = (d: Omit<StringListDecl, 'type'>): StringListDecl => ({ type: 'strings', ...d });
function oneOf<const E extends string>(values: readonly E[], d: Omit<EnumDecl<E>, 'type' | 'values'>): EnumDecl<E> {
  return { type: 'enum', values, ...d };
}
/** A path to a tool: may differ per machine (local vs Remote-SSH), and runs what it names. */
const toolPath = (description: string): StringDecl => string({ default: '', scope: 'machine-overridable', restricted: true, description });

/** Settings the language server reads, in the shape of `Settings` (field path → declaration). */
export const SETTINGS = {
  bloatThresholdStatements: integer({
    default: 2048,
    minimum: 1,
    description:
      'Warn when nested full unrolls would expand a loop body to more than this many source-level statement copies ' +
      '(an estimate of straight-line code size, checked before any compile).',
  }),
  codeLensEnabled: boolean({
    key: 'codeLens.enabled',
    default: true,
    description: 'Show Unroll Lens CodeLens above device loops and kernels.',
  }),
  arch: string({
    default: '',
    pattern: '^(sm_[0-9]+[af]?)?$',
    patternErrorMessage: 'an sm_XX architecture such as sm_90, or empty',
    description: 'Target architecture for variant builds, e.g. sm_90. Empty: from compile_commands.json, else the GPU, else sm_90.',
  }),
  extraArchs: strings({
    default: [],
    itemPattern: '^sm_[0-9]+[af]?$',
    itemPatternErrorMessage: 'an sm_XX architecture such as sm_80',
    restricted: true,
    description:
      "More architectures to build unroll variants for: the loop hover's variant table shows one column set per architecture, " +
      'and Compare Variants offers them.',
  }),
  nvccArgs: strings({
    default: [],
    restricted: true,
    description:
      'Extra nvcc arguments (one array element per argument; never passed through a shell). ' +
      'Added after compile_commands.json flags when the workspace has them.',
  }),
  compileCommands: string({
    default: '',
    restricted: true,
    description:
      "The build's compile_commands.json, or the folder holding it (relative to the workspace folder), searched before any other. " +
      "Empty: the file's folders up to the workspace folder are searched, each for a compile_commands.json (or a link to one), build*/ and out/.",
  }),
  includePaths: strings({
    default: [],
    restricted: true,
    description: 'Include directories (relative to the workspace folder) when there is no compile_commands.json entry for the file.',
  }),
  defines: strings({
    default: [],
    restricted: true,
    description: 'Preprocessor definitions (NAME or NAME=VALUE) when there is no compile_commands.json entry.',
  }),
  unrollFactors: strings({
    default: DEFAULT_UNROLL_FACTORS.map(String),
    minItems: 1,
    itemPattern: UNROLL_FACTOR_PATTERN,
    itemPatternErrorMessage: UNROLL_FACTOR_EXPECTED,
    dropInvalidItems: true,
    description:
      `Unroll factors to build for a loop: default (no pragma), full, or an integer from ${RANGES.unrollFactor.min} to ${RANGES.unrollFactor.max} ` +
      '(larger ones only slow nvcc down: use full). An invalid entry is dropped with a warning; the others are built.',
  }),
  icacheBudgetBytes: integer({
    default: 0,
    minimum: 0,
    description:
      'Loops whose SASS is larger than this many bytes get an instruction-cache warning (a fixed budget instead of the model). ' +
      "0 (default): the instruction-cache model predicts the slowdown from the loop's machine code and the warps per SM; " +
      'the static sweep uses the per-architecture budget calibrated on a GPU (sm_90: 48.8 KiB, measured on an H100).',
  }),
  warpsPerSm: integer({
    default: 0,
    minimum: 0,
    maximum: RANGES.warpsPerSm.max,
    description:
      'Resident warps per SM the instruction-cache prediction assumes for every kernel. 0 (default): inferred per kernel from ' +
      'a launch in the file (`<<<grid, block>>>` with constant sizes), else `__launch_bounds__`, else theoretical occupancy at 256 threads.',
  }),
  buildOnSave: boolean({
    default: true,
    description: 'Compile the file as written (and with every loop rolled, to measure effective unroll) on open and save.',
  }),
  jobs: integer({
    default: 0,
    minimum: RANGES.jobs.min,
    maximum: RANGES.jobs.max,
    description: `Parallel nvcc processes for variant builds (0 to ${RANGES.jobs.max}); 0 = number of CPU cores.`,
  }),
  cache: {
    maxSizeGB: number({
      default: 4,
      minimum: 0,
      description:
        'Size cap of the build cache in GB (GiB): past it, the least recently used builds are deleted. 0 = unlimited. ' +
        "Clear it with the command 'Unroll Lens: Clear Build Cache' or `unroll-lens cache clear`.",
    }),
  },
  toolchain: {
    cudaHome: toolPath(
      'CUDA installation root (its bin/ holds nvcc, cuobjdump, nvdisasm). Empty: CUDA_HOME, CUDA_PATH, PATH, /usr/local/cuda.',
    ),
    nvccPath: toolPath('Path to nvcc (overrides discovery).'),
    cuobjdumpPath: toolPath('Path to cuobjdump (overrides discovery).'),
    nvdisasmPath: toolPath('Path to nvdisasm (overrides discovery).'),
    ncuPath: toolPath("Path to Nsight Compute's ncu (overrides discovery)."),
    // Limits, not programs: not restricted; per machine like the paths (a slow remote host needs more).
    nvccTimeoutSeconds: number({
      default: 300,
      minimum: 1,
      maximum: 86_400,
      scope: 'machine-overridable',
      description:
        'Seconds per nvcc compile (1 to 86400); past it nvcc is killed with its children and the build reported as timed out, naming the file.',
    }),
    disassemblerTimeoutSeconds: number({
      default: 120,
      minimum: 1,
      maximum: 86_400,
      scope: 'machine-overridable',
      description:
        'Seconds per nvdisasm/cuobjdump run (1 to 86400); past it the disassembler is killed and the counts come from the cubin alone.',
    }),
  },
  project: {
    buildCommand: string({
      default: '',
      restricted: true,
      description:
        "A project's build, as a shell command run from the project root (e.g. `cmake -S . -B build -G Ninja && cmake --build build --target app`): " +
        'with runCommand, Benchmark this loop builds each variant with it in a copy of the project Unroll Lens keeps (your tree and build folder are never written), ' +
        'and headers get the lens too. Empty: the file itself is built as a program by nvcc. The CLI: bench/sweep/compare --build.',
    }),
    runCommand: string({
      default: '',
      restricted: true,
      description:
        "A project's run, as a shell command run from the copy's root (e.g. `./build/bin/app --size 4096`): every launch of a kernel holding the loop is timed. Used with buildCommand.",
    }),
    checkCommand: string({
      default: '',
      restricted: true,
      description:
        "Optional: after each variant's run, a shell command whose exit status says its result agrees with the file as written's ($UNROLL_LENS_STDOUT and $UNROLL_LENS_BASELINE_STDOUT name the two outputs).",
    }),
    root: string({
      default: '',
      restricted: true,
      description:
        'The folder copied for buildCommand and runCommand (relative to the first workspace folder). Empty: the workspace folder holding the file.',
    }),
    buildCopies: integer({
      default: 1,
      minimum: 1,
      maximum: 8,
      description:
        "Copies of the project variants are built in, that many at once. Each copy's first build builds everything: more than 1 pays when the project's whole build costs about what rebuilding the loop's file costs.",
    }),
    buildTimeoutSeconds: integer({
      default: 3600,
      minimum: 1,
      maximum: 86_400,
      description: "Seconds one build of a variant may take (the copy's first build builds everything).",
    }),
  },
  profile: {
    args: strings({
      default: [],
      restricted: true,
      description:
        "Program arguments for benchmark runs (one element per argument). In a sweep, {NAME} is replaced by the point's value of parameter NAME (--body {BODY}).",
    }),
    samples: integer({
      default: 20,
      minimum: RANGES.samples.min,
      maximum: RANGES.samples.max,
      description: `Kernel durations to collect per variant (1 to ${RANGES.samples.max}; statistics assume at least 20).`,
    }),
    maxSamples: integer({
      default: 0,
      minimum: RANGES.maxSamples.min,
      maximum: RANGES.maxSamples.max,
      description:
        'Adaptive sampling: once every variant has its samples, time the leading variants again (samples more at a time) while ' +
        'the fastest is uncertain (first in under 95% of bootstrap resamples and its interval against the runner-up reaching 1), ' +
        `up to this many durations each (${RANGES.maxSamples.max} at most). 0 (or not above samples): off.`,
    }),
    warmup: integer({
      default: 2,
      minimum: RANGES.warmup.min,
      maximum: RANGES.warmup.max,
      description: `Launches of the kernel skipped per program run before timing (0 to ${RANGES.warmup.max}).`,
    }),
    clockControl: oneOf(['base', 'none'], {
      default: 'base',
      valueDescriptions: [
        "Lock the GPU to base clocks while profiling (stable comparisons; ncu's default).",
        'Measure at whatever clocks the GPU runs.',
      ],
      description:
        'ncu --clock-control: base locks the GPU to base clocks during profiling for stable comparisons; ' +
        'none measures at whatever clocks the GPU runs. The CUPTI timer (timer: cupti) never locks them.',
    }),
    cacheControl: oneOf(['all', 'none'], {
      default: 'all',
      valueDescriptions: [
        "Flush every GPU cache before each profiled launch: each launch starts cold (ncu's default).",
        'Leave the caches as the previous launch left them (warm), as a program that launches the kernel repeatedly runs.',
      ],
      description:
        'ncu --cache-control: all flushes every GPU cache before each profiled launch; none leaves them warm. ' +
        'The CUPTI timer (timer: cupti) never flushes: caches are as the program leaves them.',
    }),
    timer: oneOf(['ncu', 'cupti'], {
      default: 'cupti',
      valueDescriptions: [
        'Time each launch under Nsight Compute with the warp-stall reasons; caches as cacheControl says (flushed before each launch by default), clocks as clockControl says.',
        "Run each variant's program as itself with Unroll Lens' CUPTI kernel timer (built once with your nvcc): caches warm and clocks as the GPU sets them, as the program really runs; each launch's gpu__time_duration (the counter ncu reports) read by CUPTI's range profiler; stall reasons from CUPTI PC sampling in a run of their own. ncu is not needed; without permission to read the GPU performance counters the times come from CUPTI's kernel records, about 0.6 µs a launch long, and the result says so.",
      ],
      description:
        'What times the kernels: ncu (under its cache and clock control) or cupti (the program as it really runs). Both give the stall reasons unless stalls is off. ' +
        'clockControl and cacheControl are ncu options: with cupti they do not apply, and every result states the clocks and caches it was measured under.',
    }),
    stalls: oneOf(['on', 'off'], {
      default: 'on',
      valueDescriptions: [
        "Warp-stall reasons for every variant: CUPTI PC sampling in the CUPTI timer's first run, or ncu's warp-state metrics in its timed run with the ncu timer.",
        'Times only (faster: ncu collects durations and registers alone, the CUPTI timer does not sample).',
      ],
      description: 'Warp-stall reasons for every variant (on) or times only (off).',
    }),
    counters: oneOf(['on', 'off'], {
      default: 'off',
      valueDescriptions: [
        'With the CUPTI timer, also count executed instructions and achieved occupancy of every timed kernel: one extra ncu run per variant (one launch per kernel, caches and clocks left alone).',
        'No counters with the CUPTI timer (the ncu timer has them anyway).',
      ],
      description:
        'Executed instructions and achieved occupancy for every point with the CUPTI timer (on: one extra ncu run per variant; needs ncu and counter permission).',
    }),
    timeoutSeconds: number({
      default: 120,
      minimum: 1,
      // at most a day: Node's timers take at most 2^31 ms (24.8 days) and fire at once past that
      maximum: 86_400,
      description: 'Per program run; a run past it is killed with its whole process tree and reported as timeout.',
    }),
    launcher: strings({
      default: [],
      restricted: true,
      description: 'Prefix for every program run, e.g. ["srun", "-p", "gpu", "--gres=gpu:1"].',
    }),
    runCommand: strings({
      default: [],
      restricted: true,
      description:
        'Run command template for projects: {program} is the built variant, {args} the program arguments. Empty: run the program itself.',
    }),
    compileCommand: strings({
      default: [],
      restricted: true,
      description:
        "Compile command template for projects (CMake/Make): {source} is the variant's shadow copy of the file, {output} the program " +
        'to produce, {arch} the target arch, {dir} the original file\'s folder. Example: ["make", "-C", "{dir}", "KERNEL_SRC={source}", ' +
        '"BIN={output}", "ARCH={arch}"]. Empty: nvcc on the .cu file (it must have main).',
    }),
    checkCommand: strings({
      default: [],
      restricted: true,
      description: 'Optional check run after each variant: {stdout} and {baselineStdout} are files; exit 0 means the same result.',
    }),
    sourceStalls: boolean({
      default: true,
      description:
        "Also sample warp stalls per source line (the timed run's CUPTI PC samples; one extra ncu run with the ncu timer or when they give none), shown on hover and inline.",
    }),
    gpus: string({
      default: '',
      pattern: '^\\s*(all|[0-9]+(\\s*,\\s*[0-9]+)*)?\\s*$',
      patternErrorMessage: 'empty (the default device), all, or a comma list of CUDA device indices such as 0,1',
      description:
        'GPUs benchmarks and GPU sweeps spread variants over, with CUDA_VISIBLE_DEVICES set for each timed process: each program run ' +
        '(the CUPTI timer, one per GPU at a time) or, with the ncu timer, each ncu process (profilesPerGpu on each): empty = the default device, ' +
        '"all" = every GPU nvidia-smi lists, or a comma list of CUDA device indices such as "0,1". ' +
        'The same kernel on different GPUs of one model may still differ slightly: compare within one run.',
    }),
    sharedDirectory: string({
      default: '',
      // a workspace could otherwise point it at planted programs
      restricted: true,
      description:
        'Folder on storage every GPU node sees, for runs through a launcher (srun …): programs are built in its builds/ subfolder, ' +
        "run files (the CUPTI timer's records, or ncu reports with the ncu timer) go to runs/ and measurements are cached in measurements/. " +
        "Empty: the extension's build cache, with runs/ and measurements/ beside it (runs go to the system temp folder when there is no launcher).",
    }),
    profilesPerGpu: integer({
      default: 2,
      minimum: 1,
      maximum: 8,
      description:
        'With the ncu timer (timer: ncu): ncu processes in flight per GPU during a benchmark or a GPU sweep (a sweep of template parameters runs one). ' +
        'The CUPTI timer, the default, ignores it and runs one program per GPU at a time (two would share the GPU and slow each other). ' +
        'ncu processes take turns at profiling (ncu serialises it), while one ' +
        "process's start-up and program set-up overlap another's profiling: 2 measured faster than 1 with the same medians. " +
        'A variant that fails while others share its GPU is measured again alone; set 1 for programs that need most of the GPU memory.',
    }),
    slurm: {
      enabled: boolean({
        default: false,
        // it makes the editor's sweeps run sbatch (and the job script run on the cluster)
        restricted: true,
        description:
          "Run the editor's GPU sweeps on a Slurm cluster: every point is built here (into sharedDirectory's builds/), then measured " +
          'by a job array (sbatch) whose tasks run the built programs; partial results show as they land, Cancel runs scancel. ' +
          'Needs sharedDirectory on storage every node sees (docs/slurm.md).',
      }),
      taskCommand: strings({
        default: [],
        restricted: true,
        description:
          'What each Slurm task runs on its node before `slurm-task MANIFEST INDEX`: node and the Unroll Lens CLI, e.g. ' +
          '["/shared/node/bin/node", "/shared/unroll-lens/bin/unroll-lens.js"]. Empty: `node` on the node\'s PATH with the CLI of ' +
          "this checkout when the extension runs from one, else `unroll-lens` on the node's PATH.",
      }),
      partition: string({ default: '', restricted: true, description: 'sbatch --partition for Slurm sweeps; empty: the cluster default.' }),
      account: string({ default: '', restricted: true, description: 'sbatch --account for Slurm sweeps; empty: your default account.' }),
      time: string({
        default: '',
        pattern: '^([0-9]+(-[0-9]+)?(:[0-9]+){0,2})?$',
        patternErrorMessage: 'a Slurm time limit: MINUTES, MM:SS, H:MM:SS, D-HH or D-HH:MM:SS, or empty',
        description: "sbatch --time per task of a Slurm sweep; empty: the partition's default.",
      }),
      gpusPerTask: integer({
        default: 1,
        minimum: 0,
        maximum: 16,
        description: 'sbatch --gres=gpu:N per task of a Slurm sweep; 0 asks for none (a cluster without GPU gres).',
      }),
      pointsPerTask: integer({
        default: 1,
        minimum: 1,
        maximum: 10_000,
        description: 'Variants each array task measures: more per task waits less in the queue, fewer loses less to a task that dies.',
      }),
      arrayMax: integer({
        default: 0,
        minimum: 0,
        maximum: 100_000,
        description: 'Tasks of a Slurm sweep running at once (--array=…%N); 0: no limit.',
      }),
      extraArgs: strings({
        default: [],
        restricted: true,
        description: 'More sbatch options, one array element each (["--qos=high", "--constraint=h100"]); never passed through a shell.',
      }),
      pollSeconds: integer({
        default: 10,
        minimum: 1,
        maximum: 3600,
        description: 'How often a Slurm sweep asks squeue for its tasks and reads the results that landed.',
      }),
    },
    measurementCache: boolean({
      default: true,
      description:
        'Reuse the measurement of a variant whose program binary, arguments and run settings are unchanged since an earlier ' +
        'benchmark (no GPU run); off: measure every variant again.',
    }),
  },
};

/** Settings only the extension client reads (vscode-languageclient traces by `<id>.trace.server`); not part of `Settings`. */
const CLIENT_SETTINGS = {
  'trace.server': oneOf(['off', 'messages', 'verbose'], {
    default: 'off',
    description: 'Trace LSP traffic in the Unroll Lens output channel.',
  }),
};

/** Keys users may still have in settings.json that never took effect, and what to set instead. */
const REPLACED_KEYS: Record<string, string> = {
  bloatThresholdInstructions: 'bloatThresholdStatements',
};

export const SECTION = 'unrollLens';

// ---------------------------------------------------------------------------------------------
// Types derived from the declaration

type ValueOf<D> = D extends BooleanDecl
  ? boolean
  : D extends NumberDecl
    ? number
    : D extends EnumDecl<infer E>
      ? E
      : D extends StringDecl
        ? string
        : D extends StringListDecl
          ? string[]
          : never;
type SettingsOf<T> = { [K in keyof T]: T[K] extends SettingDecl ? ValueOf<T[K]> : SettingsOf<T[K]> };

export type Settings = SettingsOf<typeof SETTINGS>;
export type ProfileSettings = Settings['profile'];

/** One declared setting with its full key (`unrollLens.` + key) and where it lives in `Settings` (null: client-only). */
export interface SettingEntry {
  key: string;
  field: string[] | null;
  decl: SettingDecl;
}

function isDecl(x: unknown): x is SettingDecl {
  return typeof x === 'object' && x !== null && typeof (x as { type?: unknown }).type === 'string' && 'default' in x;
}

function collect(tree: object, field: string[], out: SettingEntry[]): SettingEntry[] {
  for (const [name, node] of Object.entries(tree)) {
    const f = [...field, name];
    if (isDecl(node)) out.push({ key: `${SECTION}.${node.key ?? f.join('.')}`, field: f, decl: node });
    else collect(node as object, f, out);
  }
  return out;
}

/** Every setting, server-read ones first, in declaration order. */
export const SETTING_ENTRIES: readonly SettingEntry[] = [
  ...collect(SETTINGS, [], []),
  ...Object.entries(CLIENT_SETTINGS).map(([key, decl]): SettingEntry => ({ key: `${SECTION}.${key}`, field: null, decl })),
];

// ---------------------------------------------------------------------------------------------
// Validation

function copy<T>(v: T): T {
  return (Array.isArray(v) ? [...v] : v) as T;
}

function range(d: NumberDecl): string {
  const kind = d.type === 'integer' ? 'an integer' : 'a number';
  if (d.minimum !== undefined && d.maximum !== undefined) return `${kind} from ${d.minimum} to ${d.maximum}`;
  if (d.minimum !== undefined) return `${kind} ≥ ${d.minimum}`;
  if (d.maximum !== undefined) return `${kind} ≤ ${d.maximum}`;
  return kind;
}

/** What a valid value looks like, in words ("an integer ≥ 1", "base or none"). */
export function describeValue(d: SettingDecl): string {
  switch (d.type) {
    case 'boolean':
      return 'true or false';
    case 'integer':
    case 'number':
      return range(d);
    case 'string':
      return d.patternErrorMessage ?? 'a string';
    case 'enum':
      return d.values.join(' or ');
    case 'strings':
      return (
        `an array of strings${d.itemPatternErrorMessage ? ` (each ${d.itemPatternErrorMessage})` : ''}` +
        `${d.minItems ? `, at least ${d.minItems}` : ''}`
      );
  }
}

/** Why `value` is not valid for `d`, or null when it is. */
export function settingProblem(d: SettingDecl, value: unknown): string | null {
  const shown = JSON.stringify(value) ?? String(value);
  const expected = `expected ${describeValue(d)}, got ${shown}`;
  switch (d.type) {
    case 'boolean':
      return typeof value === 'boolean' ? null : expected;
    case 'integer':
    case 'number': {
      if (typeof value !== 'number' || !Number.isFinite(value) || (d.type === 'integer' && !Number.isInteger(value))) return expected;
      if (d.minimum !== undefined && value < d.minimum) return expected;
      if (d.maximum !== undefined && value > d.maximum) return expected;
      return null;
    }
    case 'string':
      if (typeof value !== 'string') return expected;
      return d.pattern && !new RegExp(d.pattern).test(value) ? expected : null;
    case 'enum':
      return typeof value === 'string' && (d.values as readonly string[]).includes(value) ? null : expected;
    case 'strings': {
      if (!Array.isArray(value)) return expected;
      const bad = value.find(x => typeof x !== 'string' || (d.itemPattern !== undefined && !new RegExp(d.itemPattern).test(x)));
      if (bad !== undefined) return `${expected} (${JSON.stringify(bad)} is not ${d.itemPatternErrorMessage ?? 'a string'})`;
      return d.minItems !== undefined && value.length < d.minItems ? expected : null;
    }
  }
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** `codeLens.enabled` in VS Code's nested answer (`{codeLens: {enabled}}`), or written flat (`{"codeLens.enabled": …}`). */
function lookup(raw: Record<string, unknown>, key: string): unknown {
  let node: unknown = raw;
  for (const part of key.split('.')) {
    if (!isObject(node) || !(part in node)) {
      node = undefined;
      break;
    }
    node = node[part];
  }
  return node !== undefined ? node : raw[key];
}

function setField(target: Record<string, unknown>, field: string[], value: unknown): void {
  let node = target;
  for (const part of field.slice(0, -1)) node = (node[part] ??= {}) as Record<string, unknown>;
  node[field[field.length - 1]] = value;
}

/** A fresh copy of the defaults (arrays are not shared with `DEFAULT_SETTINGS`). */
function defaultSettings(): Settings {
  const out: Record<string, unknown> = {};
  for (const e of SETTING_ENTRIES) if (e.field) setField(out, e.field, copy(e.decl.default));
  return out as unknown as Settings;
}

export const DEFAULT_SETTINGS: Settings = defaultSettings();

/**
 * `Settings` from what VS Code's `workspace/configuration` returns for the `unrollLens` section.
 * A value of the wrong type, out of range or not among the allowed ones falls back to its default
 * and is reported through `warn`, naming the setting; so are keys Unroll Lens does not read.
 * Missing (or null) values take their default silently.
 */
export function readSettings(raw: unknown, warn: (message: string) => void = () => undefined): Settings {
  const out = defaultSettings() as unknown as Record<string, unknown>;
  if (raw === undefined || raw === null) return out as unknown as Settings;
  if (!isObject(raw)) {
    warn(`${SECTION}: expected an object of settings, got ${JSON.stringify(raw)}; using the defaults`);
    return out as unknown as Settings;
  }
  for (const e of SETTING_ENTRIES) {
    if (!e.field) continue;
    const key = e.key.slice(SECTION.length + 1);
    const value = lookup(raw, key);
    if (value === undefined || value === null) continue;
    const kept = e.decl.type === 'strings' && e.decl.dropInvalidItems ? validItems(e.key, e.decl, value, warn) : value;
    const problem = settingProblem(e.decl, kept);
    if (problem) warn(`${e.key}: ${problem}; using the default ${JSON.stringify(e.decl.default)}`);
    else setField(out, e.field, copy(kept));
  }
  for (const message of unknownKeys(raw, '')) warn(message);
  return out as unknown as Settings;
}

/** The elements of a list setting that match its item pattern; each other one is reported and dropped. */
function validItems(key: string, d: StringListDecl, value: unknown, warn: (message: string) => void): unknown {
  if (!Array.isArray(value)) return value;
  const pattern = d.itemPattern !== undefined ? new RegExp(d.itemPattern) : null;
  return value.filter(x => {
    const ok = typeof x === 'string' && (!pattern || pattern.test(x));
    if (!ok) warn(`${key}: ${JSON.stringify(x) ?? String(x)} is not ${d.itemPatternErrorMessage ?? 'a string'}; dropped`);
    return ok;
  });
}

const KNOWN_KEYS = new Set(SETTING_ENTRIES.map(e => e.key.slice(SECTION.length + 1)));

/** A warning for each key in `raw` that no declaration names (groups such as `profile` are walked into). */
function unknownKeys(raw: Record<string, unknown>, prefix: string): string[] {
  const out: string[] = [];
  for (const [name, value] of Object.entries(raw)) {
    const key = prefix + name;
    // A WorkspaceConfiguration object carries its accessors (get, has, …) as own functions.
    if (typeof value === 'function' || KNOWN_KEYS.has(key)) continue;
    const isGroup = [...KNOWN_KEYS].some(k => k.startsWith(key + '.'));
    if (isGroup && isObject(value)) out.push(...unknownKeys(value, key + '.'));
    else if (isGroup) out.push(`${SECTION}.${key}: expected an object of settings, got ${JSON.stringify(value)}; ignored`);
    else if (REPLACED_KEYS[key])
      out.push(`${SECTION}.${key} is not read (it never took effect); set ${SECTION}.${REPLACED_KEYS[key]} instead`);
    else out.push(`${SECTION}.${key} is not an Unroll Lens setting; ignored`);
  }
  return out;
}
