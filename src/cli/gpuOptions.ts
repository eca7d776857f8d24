// The options every GPU-running subcommand (bench, sweep) takes, in one place: how programs are
// run and timed, with their defaults from the settings declaration.
import { SETTINGS } from '../settings';
import type { OptionTable } from './args';

export const GPU_RUN_OPTIONS = {
  samples: { type: 'string', value: 'N', help: 'kernel durations per variant', setting: SETTINGS.profile.samples },
  warmup: {
    type: 'string',
    value: 'N',
    help: 'launches of the kernel skipped per program run before timing',
    setting: SETTINGS.profile.warmup,
  },
  'clock-control': {
    type: 'string',
    value: 'base|none',
    setting: SETTINGS.profile.clockControl,
    help: 'ncu --clock-control: base locks base clocks while profiling; none measures at the clocks the GPU runs',
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
    help: 'prefix for every program and ncu run, e.g. "srun -p gpu --gres=gpu:1"',
    default: 'none',
  },
  arch: { type: 'string', value: 'sm_XX', help: 'target architecture', default: "compile flags' arch, else the first GPU's, else sm_90" },
} as const satisfies OptionTable;
