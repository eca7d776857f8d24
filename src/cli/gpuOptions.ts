// The options every GPU-running subcommand (bench, sweep) takes, in one place: how programs are
// run and timed, with their defaults from the settings declaration.
import type { Toolchain } from '../engine/toolchain/toolchain';
import { withToolTimeouts } from '../engine/toolchain/process';
import { NumberDecl, SETTINGS } from '../settings';
import { numberOption, OptionTable } from './args';
import type { CliIO } from './io';

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

/** --nvcc-timeout: seconds per nvcc compile; the editor's unrollLens.toolchain.nvccTimeoutSeconds. */
export const NVCC_TIMEOUT: NumberDecl = SETTINGS.toolchain.nvccTimeoutSeconds;
/** --disasm-timeout: seconds per nvdisasm/cuobjdump run; the editor's unrollLens.toolchain.disassemblerTimeoutSeconds. */
export const DISASM_TIMEOUT: NumberDecl = SETTINGS.toolchain.disassemblerTimeoutSeconds;

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
