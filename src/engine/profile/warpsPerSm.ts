// Resident warps per SM for a kernel: the instruction-cache model's other input (issue 13). How
// many warps share an SM decides how well misses are hidden, and it is set at launch, not in the
// kernel, so it is taken from the best evidence at hand, in this order: an explicit override, a
// launch in the file with constant sizes, `__launch_bounds__`, theoretical occupancy.
import * as path from 'path';
import type { KernelLaunch } from '../parse/launches';
import { evaluateInFile, findLaunches } from '../parse/launches';
import type { FileAnalysis } from '../parse/model';
import { theoreticalOccupancy } from '../sass/occupancy';

export interface WarpsPerSmInput {
  /** The kernel's source name (`hot_loop`). */
  kernel: string;
  arch: string;
  /** An explicit value and where it was set ("--warps-per-sm", "unrollLens.warpsPerSm"); ignored unless > 0. */
  override?: { warpsPerSm: number; origin: string } | null;
  /** Launches found in the file (parse/launches.ts); those of other kernels are skipped. */
  launches?: KernelLaunch[];
  /** `__launch_bounds__(…)` arguments as written, evaluated by the caller when they are names. */
  launchBounds?: (number | null)[] | null;
  /** Registers per thread and static shared memory of the kernel's code (ptxas), when known. */
  registers?: number | null;
  sharedBytes?: number | null;
  /** SMs of the GPU the code will run on, when known (see smCountOf). */
  sms?: { count: number; gpu: string } | null;
}

export type WarpsPerSmKind = 'override' | 'launch' | 'launch-bounds' | 'occupancy';

export interface WarpsPerSm {
  warpsPerSm: number;
  /** Where the number comes from, in words: shown beside every prediction. */
  source: string;
  /** The same in a few words, for a diagnostic. */
  short: string;
  kind: WarpsPerSmKind;
}

const DEFAULT_BLOCK = 256;

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function blocksFitting(input: WarpsPerSmInput, threads: number, dynamicShared = 0): number | null {
  const occ = theoreticalOccupancy({
    registersPerThread: input.registers ?? 0,
    sharedBytesPerBlock: (input.sharedBytes ?? 0) + dynamicShared,
    threadsPerBlock: threads,
    arch: input.arch,
  });
  return occ ? occ.activeBlocksPerSM : null;
}

/** The launch to go by: the first of this kernel whose block size is a constant. */
function usableLaunch(input: WarpsPerSmInput): KernelLaunch | null {
  return (input.launches ?? []).find(l => l.kernel === input.kernel && l.block.value !== null && l.block.value > 0) ?? null;
}

export function resolveWarpsPerSm(input: WarpsPerSmInput): WarpsPerSm {
  if (input.override && input.override.warpsPerSm > 0) {
    return {
      warpsPerSm: Math.round(input.override.warpsPerSm),
      source: `set by ${input.override.origin}`,
      short: `set by ${input.override.origin}`,
      kind: 'override',
    };
  }
  const launch = usableLaunch(input);
  if (launch) {
    const threads = launch.block.value!;
    const warpsPerBlock = Math.ceil(threads / 32);
    const fitting = blocksFitting(input, threads, launch.sharedBytes?.value ?? 0);
    const grid = launch.grid.value;
    let blocks = fitting ?? 1;
    let gridNote: string;
    if (grid === null && launch.grid.blocksPerSm !== undefined) {
      blocks = Math.min(blocks, launch.grid.blocksPerSm);
      gridNote = `grid \`${launch.grid.text}\` is the SM count${launch.grid.blocksPerSm > 1 ? ` × ${launch.grid.blocksPerSm}` : ''} (multiProcessorCount)`;
    } else if (grid === null) gridNote = `grid \`${launch.grid.text}\` not constant: assumed it fills every SM`;
    else if (input.sms) {
      blocks = Math.min(blocks, Math.ceil(grid / input.sms.count));
      gridNote = `grid ${plural(grid, 'block')} on ${input.sms.count} SMs of the ${input.sms.gpu}`;
    } else if (grid <= 1) {
      blocks = Math.min(blocks, grid);
      gridNote = 'grid of 1 block';
    } else gridNote = `grid ${plural(grid, 'block')}; SM count unknown: assumed every SM busy`;
    blocks = Math.max(1, blocks);
    const where = launch.file ? `${path.basename(launch.file)}:${launch.line}` : `line ${launch.line}`;
    const limit = fitting !== null && blocks === fitting && fitting > 0 ? ', as many as fit' : '';
    return {
      warpsPerSm: blocks * warpsPerBlock,
      source: `from the launch \`<<<${launch.grid.text}, ${launch.block.text}>>>\` at ${where}: ${plural(blocks, 'block')} of ${plural(warpsPerBlock, 'warp')} per SM${limit} (${gridNote})`,
      short: `from the launch at ${where}`,
      kind: 'launch',
    };
  }
  const [maxThreads, minBlocks] = input.launchBounds ?? [];
  const indirect = (input.launches ?? []).some(l => l.kernel === null);
  const own = (input.launches ?? []).find(l => l.kernel === input.kernel);
  const noLaunch = own
    ? `its launches in ${own.file ? path.basename(own.file) : 'the file'} have no constant block size`
    : indirect
      ? 'no launch of it by name in the file'
      : 'no launch found in the file';
  if (maxThreads && minBlocks && minBlocks > 0) {
    const warpsPerBlock = Math.ceil(maxThreads / 32);
    return {
      warpsPerSm: minBlocks * warpsPerBlock,
      source: `at least ${plural(minBlocks, 'block')} of ${plural(warpsPerBlock, 'warp')} per SM from \`__launch_bounds__(${maxThreads}, ${minBlocks})\` (a lower bound; ${noLaunch})`,
      short: 'a lower bound from `__launch_bounds__`',
      kind: 'launch-bounds',
    };
  }
  const threads = maxThreads && maxThreads > 0 ? maxThreads : DEFAULT_BLOCK;
  const fitting = blocksFitting(input, threads);
  const warps = Math.max(1, (fitting ?? 1) * Math.ceil(threads / 32));
  const at = maxThreads && maxThreads > 0 ? `the \`__launch_bounds__\` block of ${threads} threads` : `${threads} threads/block`;
  return {
    warpsPerSm: warps,
    source: `theoretical occupancy at ${at}${fitting === null ? ` (${input.arch} limits unknown: one block)` : ''} (${noLaunch})`,
    short: `theoretical occupancy at ${threads} threads/block`,
    kind: 'occupancy',
  };
}

/**
 * SMs of a GPU from its product name (nvidia-smi does not report the count). Only parts whose
 * count is fixed by the name; null otherwise (the caller then says it assumed every SM busy).
 */
export function smCountOf(gpuName: string): number | null {
  const n = gpuName.toUpperCase();
  if (/\bH200\b/.test(n) || /\bGH200\b/.test(n)) return 132;
  if (/\bH100\b/.test(n)) return /PCIE/.test(n) ? 114 : 132;
  if (/\bA100\b/.test(n)) return 108;
  return null;
}

/**
 * resolveWarpsPerSm for a kernel of a file: its launches and `__launch_bounds__` read from the
 * source text. `kernel` is the source name (sourceNameOf of the demangled name).
 */
export function warpsPerSmInFile(
  source: string,
  analysis: FileAnalysis,
  o: Omit<WarpsPerSmInput, 'launches' | 'launchBounds'> & { launches?: KernelLaunch[] },
): WarpsPerSm {
  const k = analysis.kernels.find(x => x.name === o.kernel && x.qualifier === 'global') ?? analysis.kernels.find(x => x.name === o.kernel);
  const launchBounds = k?.launchBounds?.map(t => evaluateInFile(source, t)) ?? null;
  return resolveWarpsPerSm({ ...o, launches: o.launches ?? findLaunches(source), launchBounds });
}
