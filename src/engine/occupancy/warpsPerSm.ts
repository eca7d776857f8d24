// Resident warps per SM for a kernel: the instruction-cache model's other input (issue 13). How
// many warps share an SM decides how well misses are hidden, and it is set at launch, not in the
// kernel, so it is taken from the best evidence at hand, in this order: an explicit override, a
// launch in the file with constant sizes, `__launch_bounds__`, theoretical occupancy.
import * as path from 'path';
import type { KernelLaunch, KernelLaunchWithConfig } from '../parse/launches';
import { evaluateInFile, findLaunches } from '../parse/launches';
import { blankCommentsAndStrings } from '../parse/launchValues';
import type { FileAnalysis } from '../parse/model';
import { archLimits } from './limits';
import { blocksThatFit, KernelResources, launchWarps } from './launch';

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
  /** The line where the file names the kernel as a value (a table of kernel pointers): its launches through pointers count. */
  namedAt?: number | null;
}

type WarpsPerSmKind = 'override' | 'launch' | 'launch-bounds' | 'occupancy';

export interface WarpsPerSm {
  /** The likeliest count (the program's defaults; every SM busy where the grid is not known). */
  warpsPerSm: number;
  /** Where the number comes from, in words, with every input and its line: shown beside every prediction. */
  source: string;
  /** The same in a few words, for a diagnostic. */
  short: string;
  kind: WarpsPerSmKind;
  /** The lowest and highest counts the code allows, when a value is not known; absent when exact. */
  range?: { low: number; high: number };
}

const DEFAULT_BLOCK = 256;

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function resourcesOf(input: WarpsPerSmInput, maxThreads: number | null): KernelResources {
  return { arch: input.arch, registers: input.registers ?? null, staticShared: input.sharedBytes ?? null, maxThreads };
}

/** "4 warps/SM" or "4–64 warps/SM". */
export function warpsLabel(w: { warpsPerSm: number; range?: { low: number; high: number } | null }): string {
  return w.range && w.range.low !== w.range.high ? `${w.range.low}–${w.range.high}` : String(w.warpsPerSm);
}

function launchText(l: KernelLaunch): string {
  const style = (l as Partial<KernelLaunchWithConfig>).config?.style;
  if (style === 'cudaLaunchKernelEx') return `cudaLaunchKernelEx(&${l.grid.text.replace(/\.gridDim$/, '')}, ${l.callee}, …)`;
  if (style === 'cudaLaunchKernel') return `cudaLaunchKernel(${l.callee}, ${l.grid.text}, ${l.block.text}, …)`;
  return `<<<${l.grid.text}, ${l.block.text}>>>`;
}

const LIMITS: Record<string, string> = {
  registers: 'registers',
  shared: 'shared memory',
  warps: 'warps per SM',
  blocks: 'the blocks-per-SM limit',
};

/** The resolution from launches of the kernel: the first with a known block size sets the likeliest count; all set the range. */
function fromLaunches(input: WarpsPerSmInput, launches: KernelLaunchWithConfig[], via: string | null): WarpsPerSm {
  const maxThreads = input.launchBounds?.[0] ?? null;
  const res = resourcesOf(input, maxThreads && maxThreads > 0 ? maxThreads : null);
  const all = launches.slice(0, 8).map(l => ({ l, w: launchWarps(l, res, input.sms ?? null) }));
  const main = all.find(x => !x.w.unknown.some(u => u.what === 'block')) ?? all[0];
  const { l, w } = main;
  const low = Math.min(...all.map(x => x.w.low));
  const high = Math.max(...all.map(x => x.w.high));
  const where = l.file ? `${path.basename(l.file)}:${l.line}` : `line ${l.line}`;
  const limited = w.blocks === w.fit && (w.launchedPerSm === null || w.fit < w.launchedPerSm);
  const limit =
    limited && w.blocksHigh === w.blocks ? `, as many as fit${w.limiter && w.limiter !== 'warps' ? ` (${LIMITS[w.limiter]})` : ''}` : '';
  const blocks = w.blocksLow === w.blocksHigh ? plural(w.blocks, 'block') : `${w.blocksLow}–${w.blocksHigh} blocks`;
  const facts: string[] = [w.gridNote];
  if (w.launchedPerSm !== null && w.fit > w.launchedPerSm) facts[0] += `; ${w.fit} would fit`;
  for (const u of w.unknown)
    if (u.what === 'block' || u.what === 'shared')
      facts.push(`${u.what === 'block' ? 'block size' : 'dynamic shared memory'} not known: ${u.why}`);
    else if (u.what === 'sms' && !facts[0].includes('not named')) facts.push(u.why);
  const resources = [
    input.registers ? `${input.registers} registers/thread` : 'registers not known',
    `${input.sharedBytes ?? 0} B static shared memory`,
    w.dynamicShared ? `${w.dynamicShared} B dynamic` : null,
  ]
    .filter(Boolean)
    .join(', ');
  const inputs = [...w.inputs.map(i => i.says), resources];
  const options = w.options.length ? `; the program's defaults (${w.options.map(o => o.says).join('; ')})` : '';
  const others = all.length > 1 ? `; ${all.length - 1} other launch${all.length > 2 ? 'es' : ''} of it counted in the range` : '';
  const table = l.via ? `the table \`${l.via.table}\` at line ${l.via.line} lists ${input.kernel}` : null;
  const through = via || table ? ` through \`${l.callee}\` (${via ?? table})` : '';
  const range = low !== high ? { low, high } : undefined;
  const rangeNote = range ? `; not known exactly: the prediction covers ${low}–${high} warps/SM` : '';
  return {
    warpsPerSm: w.warpsPerSm,
    source: `from the launch \`${launchText(l)}\`${through} at ${where}: ${blocks} of ${plural(w.warpsPerBlock, 'warp')} per SM${limit} (${facts.join('; ')}) — ${inputs.join('; ')}${options}${others}${rangeNote}`,
    short: `from the launch at ${where}${range ? ` (${low}–${high} warps/SM: not all values known)` : ''}`,
    kind: 'launch',
    ...(range ? { range } : {}),
  };
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
  const launches = (input.launches ?? []) as KernelLaunchWithConfig[];
  const own = launches.filter(l => l.kernel === input.kernel && l.config);
  if (own.length) return fromLaunches(input, own, null);
  const indirect = launches.filter(l => l.kernel === null && l.config);
  if (indirect.length && input.namedAt)
    return fromLaunches(input, indirect, `the file names ${input.kernel} as a value at line ${input.namedAt}`);
  const [maxThreads, minBlocks] = input.launchBounds ?? [];
  const noLaunch = indirect.length ? 'no launch of it by name in the file' : 'no launch found in the file';
  const res = resourcesOf(input, maxThreads && maxThreads > 0 ? maxThreads : null);
  if (maxThreads && minBlocks && minBlocks > 0) {
    const warpsPerBlock = Math.ceil(maxThreads / 32);
    const high = Math.max(minBlocks, blocksThatFit(res, maxThreads, 0)) * warpsPerBlock;
    const low = minBlocks * warpsPerBlock;
    return {
      warpsPerSm: low,
      source: `at least ${plural(minBlocks, 'block')} of ${plural(warpsPerBlock, 'warp')} per SM from \`__launch_bounds__(${maxThreads}, ${minBlocks})\` (a lower bound; ${noLaunch})${high > low ? `; the prediction covers ${low}–${high} warps/SM` : ''}`,
      short: 'a lower bound from `__launch_bounds__`',
      kind: 'launch-bounds',
      ...(high > low ? { range: { low, high } } : {}),
    };
  }
  const threads = maxThreads && maxThreads > 0 ? maxThreads : DEFAULT_BLOCK;
  const known = archLimits(input.arch) !== undefined;
  const fitting = blocksThatFit(res, threads, 0);
  const warps = Math.max(1, fitting * Math.ceil(threads / 32));
  const at = maxThreads && maxThreads > 0 ? `the \`__launch_bounds__\` block of ${threads} threads` : `${threads} threads/block`;
  // Nothing says how many blocks run: from one block of the smallest block size to as many as fit.
  const low = Math.ceil((maxThreads && maxThreads > 0 ? maxThreads : 32) / 32);
  const high = Math.max(warps, ...Array.from({ length: 32 }, (_, i) => blocksThatFit(res, 32 * (i + 1), 0) * (i + 1)));
  return {
    warpsPerSm: warps,
    source: `theoretical occupancy at ${at}${known ? '' : ` (${input.arch} limits unknown: one block)`} (${noLaunch}; block size and grid not known: the prediction covers ${low}–${high} warps/SM)`,
    short: `theoretical occupancy at ${threads} threads/block`,
    kind: 'occupancy',
    ...(high > low ? { range: { low, high } } : {}),
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
  return resolveWarpsPerSm({ ...o, launches: o.launches ?? findLaunches(source), launchBounds, namedAt: namedAsValue(source, o.kernel) });
}

/**
 * The line where a kernel is named as a value (`{32, hot_loop<32>, …}`, `fn = hot_loop;`), not
 * defined or launched: a launch through a pointer may be its launch. Null when it is not.
 */
function namedAsValue(source: string, kernel: string): number | null {
  if (!kernel) return null;
  const text = blankCommentsAndStrings(source);
  const re = new RegExp(String.raw`(?<![\w.>])${kernel.replace(/[^\w]/g, '')}\s*(?:<[^;(){}]*?>)?\s*(?=[,;})])`, 'g');
  for (const m of text.matchAll(re)) {
    const before = text.slice(Math.max(0, m.index! - 20), m.index!);
    if (/(?:void|__global__|struct|class)\s*$/.test(before)) continue;
    return text.slice(0, m.index!).split('\n').length;
  }
  return null;
}

/**
 * Warps per SM a launch of `kernel` in the file fixes: constant block size, grid sized by the SM
 * count, capped by the blocks that fit (threads, dynamic shared memory; registers are per variant).
 */
export function launchWarpsPerSm(text: string, kernel: string, arch = 'sm_90'): { warpsPerSm: number; source: string } | null {
  const l = findLaunches(text).find(
    x => x.kernel === kernel && x.block.value !== null && x.block.value > 0 && x.grid.blocksPerSm !== undefined,
  );
  if (!l) return null;
  const w = launchWarps(l, { arch, registers: null, staticShared: null, maxThreads: null }, null);
  const fit = w.blocks < l.grid.blocksPerSm! ? `; ${w.blocks} blocks fit` : '';
  return {
    warpsPerSm: w.warpsPerSm,
    source: `the launch \`<<<${l.grid.text}, ${l.block.text}>>>\` at line ${l.line} (grid = SM count${fit})`,
  };
}

/**
 * Warps per SM at a fraction (0–1) of the arch's most resident warps, at least 1: theoretical
 * occupancy (ptxas) or achieved occupancy (ncu, as a fraction). `unknownArchMax` stands in for an
 * arch without a table entry; without one the answer is null (unknown).
 */
export function warpsAtOccupancy(fraction: number, arch: string, unknownArchMax: number | null = null): number | null {
  const max = archLimits(arch)?.maxWarpsPerSM ?? unknownArchMax;
  return max ? Math.max(1, Math.round(fraction * max)) : null;
}

/**
 * Warps per SM the i-cache model assumes for a variant: an explicit count (> 0) when given, else
 * its theoretical occupancy (unknown: 1, every warp) of the arch's maximum (64 for an arch not in
 * the table: the supply the model then assumes is the grid's most shared).
 */
export function modelWarpsPerSm(occupancy: number | null, arch: string, explicit?: number | null): number {
  if (explicit && explicit > 0) return explicit;
  return warpsAtOccupancy(occupancy ?? 1, arch, 64)!;
}
