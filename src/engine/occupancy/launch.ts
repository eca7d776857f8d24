// Resident warps per SM of one launch (issue 22):
//   blocks per SM = min(blocks launched per SM = ceil(grid / SMs),
//                       blocks that fit by threads, registers, shared memory and the HW block limit)
//   warps per SM  = blocks per SM × warps per block,
// over every value the launch's sizes can take (launchValues.ts). A value that is not known
// (a grid read at run time, an SM count we cannot name) widens the range instead of being
// assumed: the result is the likeliest count and the lowest and highest the code allows.
import type { KernelLaunchWithConfig } from '../parse/launches';
import type { LaunchCandidate, LaunchEnv, LaunchInput, LaunchValue } from '../parse/launchValues';
import { archLimits, OccupancyLimiter, theoreticalOccupancy } from './limits';

export interface KernelResources {
  arch: string;
  /** Registers per thread (ptxas / cuobjdump resource usage); null: unknown (no register limit applied). */
  registers: number | null;
  /** Static shared memory per block, bytes; null: unknown (0 applied). */
  staticShared: number | null;
  /** `__launch_bounds__` maxThreadsPerBlock, when given. */
  maxThreads: number | null;
}

/** SM counts of the GPUs of an architecture this project measures: sm_90 H100 PCIe 114, H100 SXM / H200 132; sm_80 A30 56, A100 108. */
const SM_COUNTS: Record<string, number[]> = { 90: [114, 132], 80: [56, 108] };

function smCountsOfArch(arch: string): number[] | null {
  const m = /(\d+)/.exec(arch);
  return m ? (SM_COUNTS[m[1]] ?? null) : null;
}

/** Blocks of a kernel that fit one SM; 0 when the block cannot launch. */
export function blocksThatFit(res: KernelResources, threads: number, dynamicShared: number): number {
  if (threads <= 0 || (res.maxThreads && threads > res.maxThreads)) return 0;
  const occ = theoreticalOccupancy({
    registersPerThread: res.registers ?? 0,
    sharedBytesPerBlock: (res.staticShared ?? 0) + dynamicShared,
    threadsPerBlock: threads,
    arch: res.arch,
  });
  return occ ? occ.activeBlocksPerSM : 1;
}

function limiterOf(res: KernelResources, threads: number, dynamicShared: number): OccupancyLimiter | null {
  return (
    theoreticalOccupancy({
      registersPerThread: res.registers ?? 0,
      sharedBytesPerBlock: (res.staticShared ?? 0) + dynamicShared,
      threadsPerBlock: threads,
      arch: res.arch,
    })?.limiter ?? null
  );
}

/**
 * cudaOccupancyMaxPotentialBlockSize as cuda_runtime.h implements it: from the largest block the
 * kernel allows down in steps of a warp, the first block size with the most resident threads.
 */
export function maxPotentialBlockSize(res: KernelResources, dynamicShared: number, limit: number): { block: number; blocksPerSm: number } {
  const device = archLimits(res.arch)?.maxThreadsPerBlock ?? 1024;
  let funcMax = Math.min(device, res.maxThreads ?? device);
  while (funcMax > 32 && blocksThatFit(res, funcMax, dynamicShared) === 0) funcMax -= 32;
  let lim = limit > 0 && limit < device ? limit : device;
  lim = Math.min(lim, funcMax);
  const occupancyLimit = (archLimits(res.arch)?.maxWarpsPerSM ?? 64) * 32;
  let best = { block: 0, blocksPerSm: 0 };
  let bestThreads = 0;
  for (let aligned = Math.ceil(lim / 32) * 32; aligned > 0; aligned -= 32) {
    const t = Math.min(aligned, lim);
    const blocks = blocksThatFit(res, t, dynamicShared);
    if (t * blocks > bestThreads) {
      best = { block: t, blocksPerSm: blocks };
      bestThreads = t * blocks;
    }
    if (bestThreads === occupancyLimit) break;
  }
  return best;
}

export interface LaunchWarps {
  /** The likeliest count: the program's defaults, every SM of the GPU busy where the grid is not known. */
  warpsPerSm: number;
  low: number;
  high: number;
  /** At the likeliest values. */
  blocks: number;
  blocksLow: number;
  blocksHigh: number;
  warpsPerBlock: number;
  threads: number;
  dynamicShared: number;
  /** Blocks that fit at the likeliest values, and what limits them. */
  fit: number;
  limiter: OccupancyLimiter | null;
  /** Blocks launched per SM at the likeliest values; null: not known (the grid or the SM count). */
  launchedPerSm: number | null;
  /** How the grid spreads over the SMs, in words. */
  gridNote: string;
  /** Every input with its line, and the values that are not known, and command-line options set aside. */
  inputs: LaunchInput[];
  unknown: { what: 'grid' | 'block' | 'shared' | 'sms'; why: string }[];
  options: LaunchInput[];
}

interface Pick {
  at: (env: LaunchEnv) => number | null;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function dedupe(inputs: LaunchInput[]): LaunchInput[] {
  const seen = new Set<string>();
  return inputs.filter(i => (seen.has(i.says) ? false : (seen.add(i.says), true)));
}

function whyUnknown(v: LaunchValue): string {
  return dedupe(v.unknown)
    .map(u => u.says)
    .join('; ');
}

/** How the grid meets the SMs, in words; `gridUnknown` is why the grid is not known (null: it is). */
function gridNoteOf(
  launch: KernelLaunchWithConfig,
  arch: string,
  sms: { count: number; gpu: string } | null,
  smsList: number[] | null,
  gridUnknown: string | null,
): string {
  const k = launch.grid.blocksPerSm;
  const blocks = launch.grid.value;
  if (gridUnknown !== null) return `grid \`${launch.grid.text}\` not known: ${gridUnknown}`;
  if (k !== undefined) return `grid \`${launch.grid.text}\` is the SM count${k > 1 ? ` × ${k}` : ''}`;
  if (blocks !== null && sms) return `grid ${plural(blocks, 'block')} on ${sms.count} SMs of the ${sms.gpu}`;
  if (blocks !== null && blocks <= 1) return `grid of ${plural(blocks, 'block')}`;
  if (blocks !== null && smsList)
    return `grid ${plural(blocks, 'block')} on ${smsList.join(' or ')} SMs (${arch} GPUs; the GPU is not named)`;
  if (blocks !== null) return `grid ${plural(blocks, 'block')}; SM count unknown`;
  return `grid \`${launch.grid.text}\` takes several values`;
}

/** Every input the launch's sizes were read from, and the command-line options set aside, each once. */
function launchInputs(c: KernelLaunchWithConfig['config']): { inputs: LaunchInput[]; options: LaunchInput[] } {
  const inputs = dedupe([
    ...c.grid.candidates.flatMap(x => x.inputs),
    ...c.block.candidates.flatMap(x => x.inputs),
    ...(c.shared?.candidates.flatMap(x => x.inputs) ?? []),
  ]);
  const options = dedupe([...c.grid.options, ...c.block.options, ...(c.shared?.options ?? [])]);
  return { inputs, options };
}

/** Warps per SM of a launch for a kernel with these resources; `sms` when the GPU is known. */
export function launchWarps(launch: KernelLaunchWithConfig, res: KernelResources, sms: { count: number; gpu: string } | null): LaunchWarps {
  const c = launch.config;
  const unknown: LaunchWarps['unknown'] = [];
  const smsList = sms ? [sms.count] : smCountsOfArch(res.arch);
  const smCounts = smsList ?? [132];
  const envFor = (count: number): LaunchEnv => ({
    sms: count,
    fit: (t, s) => blocksThatFit(res, t, s),
    optimal: (s, l) => maxPotentialBlockSize(res, s, l),
  });

  const blockKnown = !c.block.unknown.length && c.block.candidates.length > 0;
  const maxBlock = res.maxThreads ?? archLimits(res.arch)?.maxThreadsPerBlock ?? 1024;
  const blockPicks: Pick[] = blockKnown
    ? c.block.candidates
    : [res.maxThreads ?? 256, ...Array.from({ length: Math.floor(maxBlock / 32) }, (_, i) => 32 * (i + 1))].map(n => ({ at: () => n }));
  if (!blockKnown) unknown.push({ what: 'block', why: whyUnknown(c.block) || `\`${launch.block.text}\` has no value` });
  const sharedKnown = !c.shared || (!c.shared.unknown.length && c.shared.candidates.length > 0);
  const sharedPicks: Pick[] = !c.shared ? [{ at: () => 0 }] : sharedKnown ? c.shared.candidates : [{ at: () => 0 }];
  if (!sharedKnown) unknown.push({ what: 'shared', why: whyUnknown(c.shared!) || `\`${launch.sharedBytes?.text}\` has no value` });
  const gridKnown = !c.grid.unknown.length && c.grid.candidates.length > 0;
  if (!gridKnown) unknown.push({ what: 'grid', why: whyUnknown(c.grid) || `\`${launch.grid.text}\` has no value` });
  const gridPicks: (LaunchCandidate | null)[] = gridKnown ? c.grid.candidates : [null];

  type Outcome = { warps: number; blocks: number; fit: number; wpb: number; threads: number; shared: number; launched: number | null };
  const outcomes: Outcome[] = [];
  let central: Outcome | null = null;
  const byCount = new Map<number, Set<number>>();
  const probe = envFor(1009);
  smCounts.forEach((count, si) => {
    const env = envFor(count);
    blockPicks.forEach((bp, bi) => {
      const threads = bp.at(env);
      if (threads === null || threads <= 0) return;
      const wpb = Math.ceil(threads / 32);
      sharedPicks.forEach((sp, shi) => {
        const shared = Math.max(0, sp.at(env) ?? 0);
        const fit = blocksThatFit(res, threads, shared);
        gridPicks.forEach((gp, gi) => {
          const grid = gp ? gp.at(env) : null;
          if (gp && (grid === null || grid <= 0)) return;
          // Blocks launched per SM: known when the grid is, and the SM count is or the grid is a multiple of it.
          const perSm = (gp?.at(probe) ?? 1) % 1009 === 0 && grid! % count === 0;
          const launched = grid === null ? null : smsList || perSm ? Math.ceil(grid / count) : null;
          const most = launched === null ? (grid === null ? fit : Math.min(fit, grid)) : Math.min(fit, launched);
          const blocks = [most];
          if (launched === null) blocks.push(Math.min(1, fit));
          if (!sharedKnown) blocks.push(Math.min(1, fit));
          for (const n of blocks) {
            outcomes.push({ warps: n * wpb, blocks: n, fit, wpb, threads, shared, launched });
            if (!byCount.has(count)) byCount.set(count, new Set());
            byCount.get(count)!.add(n * wpb);
          }
          if (si === smCounts.length - 1 && bi === 0 && shi === 0 && gi === 0)
            central = { warps: most * wpb, blocks: most, fit, wpb, threads, shared, launched };
        });
      });
    });
  });
  const perCount = [...byCount.values()].map(v => [...v].sort().join());
  if (!sms && smsList && smsList.length > 1 && new Set(perCount).size > 1)
    unknown.push({ what: 'sms', why: `the GPU is not named: ${res.arch} GPUs have ${smsList.join(' or ')} SMs` });
  else if (!smsList && outcomes.some(o => o.launched === null) && gridKnown)
    unknown.push({ what: 'sms', why: `the SM count of the ${res.arch} GPU is not known` });
  const c0: Outcome = central ?? { warps: 0, blocks: 0, fit: 0, wpb: 0, threads: 0, shared: 0, launched: null };
  const live = outcomes.length ? outcomes : [c0];
  const low = Math.min(...live.map(o => o.warps));
  const high = Math.max(...live.map(o => o.warps));
  // Blocks per SM at the likeliest block size (other block sizes are in the warps range).
  const same = live.filter(o => o.threads === c0.threads && o.shared === c0.shared);
  const blocksLow = Math.min(...same.map(o => o.blocks));
  const blocksHigh = Math.max(...same.map(o => o.blocks));

  const gridNote = gridNoteOf(launch, res.arch, sms, smsList, gridKnown ? null : unknown.find(u => u.what === 'grid')!.why);
  const { inputs, options } = launchInputs(c);
  return {
    warpsPerSm: Math.max(1, c0.warps),
    low: Math.max(1, low),
    high: Math.max(1, high),
    blocks: c0.blocks,
    blocksLow,
    blocksHigh,
    warpsPerBlock: c0.wpb,
    threads: c0.threads,
    dynamicShared: c0.shared,
    fit: c0.fit,
    limiter: c0.threads > 0 ? limiterOf(res, c0.threads, c0.shared) : null,
    launchedPerSm: c0.launched,
    gridNote,
    inputs,
    unknown,
    options,
  };
}
