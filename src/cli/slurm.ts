// `sweep --slurm` (issue 28): the sweep's options for the Slurm job array (flags over the
// unrollLens.profile.slurm.* settings), the runner that submits them, and the internal
// `slurm-task MANIFEST INDEX` command each array task runs on its node.
import * as fs from 'fs';
import {
  CudaDocuments,
  readManifest,
  runSlurmTask,
  slurmSweepRunner,
  taskToolchain,
  type SlurmOptions,
  type SweepOptions,
} from '../engine';
import { SETTINGS } from '../settings';
import { numberOption, OptionTable, stringOption } from './args';
import { cancelOnSignals, CliIO, EXIT, UsageError } from './io';
import { macroTableFor } from './macros';

const S = SETTINGS.profile.slurm;

export const SLURM_OPTIONS = {
  slurm: {
    type: 'boolean',
    help: 'run the GPU measurements as a Slurm job array (sbatch) on the cluster; needs --shared-dir; a re-run submits only what is missing (docs/slurm.md)',
  },
  partition: {
    type: 'string',
    value: 'NAME',
    help: 'sbatch --partition (with --slurm)',
    setting: S.partition,
    default: 'the cluster default',
  },
  account: { type: 'string', value: 'NAME', help: 'sbatch --account (with --slurm)', setting: S.account, default: 'your default account' },
  time: {
    type: 'string',
    value: 'LIMIT',
    help: 'sbatch --time per task (with --slurm)',
    setting: S.time,
    default: "the partition's default",
  },
  'gres-gpus': { type: 'string', value: 'N', help: 'sbatch --gres=gpu:N per task; 0: none (with --slurm)', setting: S.gpusPerTask },
  'points-per-task': { type: 'string', value: 'N', help: 'variants each array task measures (with --slurm)', setting: S.pointsPerTask },
  'array-max': { type: 'string', value: 'N', help: 'tasks running at once, --array=…%N; 0: no limit (with --slurm)', setting: S.arrayMax },
  'sbatch-arg': { type: 'list', value: 'ARG', help: 'one more sbatch option, as one word (with --slurm)', default: 'none' },
  'poll-seconds': { type: 'string', value: 'N', help: 'how often squeue is asked and results read (with --slurm)', setting: S.pollSeconds },
} as const satisfies OptionTable;

type SlurmFlags = {
  [K in keyof typeof SLURM_OPTIONS]?: (typeof SLURM_OPTIONS)[K]['type'] extends 'boolean'
    ? true
    : (typeof SLURM_OPTIONS)[K]['type'] extends 'list'
      ? string[]
      : string;
};

/** The Slurm options of a sweep, or null without --slurm; a Slurm flag without --slurm is a mistake said at once. */
export function slurmOptionsOf(o: SlurmFlags): SlurmOptions | null {
  if (!o.slurm) {
    const stray = (Object.keys(SLURM_OPTIONS) as (keyof SlurmFlags)[]).find(k => k !== 'slurm' && o[k] !== undefined);
    if (stray) throw new UsageError(`--${stray} needs --slurm`);
    return null;
  }
  const time = stringOption('time', o.time, S.time);
  if (time && !new RegExp(S.time.pattern!).test(time)) throw new UsageError(`--time takes ${S.time.patternErrorMessage}, not '${time}'`);
  return {
    partition: stringOption('partition', o.partition, S.partition),
    account: stringOption('account', o.account, S.account),
    time,
    gpusPerTask: numberOption('gres-gpus', o['gres-gpus'], S.gpusPerTask),
    pointsPerTask: numberOption('points-per-task', o['points-per-task'], S.pointsPerTask),
    arrayMax: numberOption('array-max', o['array-max'], S.arrayMax),
    extra: o['sbatch-arg'] ?? [],
    pollSeconds: numberOption('poll-seconds', o['poll-seconds'], S.pollSeconds),
  };
}

/** The sweep's runner: the points built here, then measured by Slurm array tasks running this very CLI. */
export function slurmRunner(slurm: SlurmOptions, sharedRoot: string): NonNullable<SweepOptions['runner']> {
  return slurmSweepRunner({ slurm, sharedRoot, command: [process.execPath, process.argv[1]], cwd: process.cwd() });
}

/** `unroll-lens slurm-task MANIFEST INDEX`: one array task (internal: the job script runs it). */
export async function slurmTaskMain(argv: string[], io: CliIO): Promise<number> {
  const [file, index] = argv;
  if (!file || !/^\d+$/.test(index ?? '')) throw new UsageError('slurm-task takes a manifest and an array index (the job script runs it)');
  const m = readManifest(file);
  const spec = m.spec;
  if (spec.cwd && fs.existsSync(spec.cwd)) process.chdir(spec.cwd);
  // ncu and nvidia-smi only: the programs were built before submission, no nvcc is looked for or run
  const toolchain = await taskToolchain(spec);
  const docs = await CudaDocuments.create();
  const analysis = docs.analyzeOnce(spec.text, spec.file, macroTableFor(spec.file, spec.text, spec.arch));
  const ac = new AbortController();
  const stop = cancelOnSignals(ac);
  const job = process.env.SLURM_ARRAY_JOB_ID ? `${process.env.SLURM_ARRAY_JOB_ID}_${index}` : (process.env.SLURM_JOB_ID ?? null);
  try {
    const r = await runSlurmTask(m, Number(index), { analysis, toolchain, signal: ac.signal, job, log: l => io.out(`${l}\n`) });
    if (ac.signal.aborted) return EXIT.cancelled;
    return r.written === r.points ? EXIT.ok : EXIT.failed;
  } finally {
    stop();
  }
}
