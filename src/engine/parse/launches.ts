// Kernel launches visible in a file, as users write them (issue 22): `kernel<<<grid, block[,
// shared[, stream]]>>>(…)`, `cudaLaunchKernelEx(&config, kernel, …)` with a cudaLaunchConfig_t,
// and `cudaLaunchKernel((void *)kernel, grid, block, args, shared, stream)`. Launches sit in host
// code, which the analysis does not walk, so this reads the text; the sizes are values of the
// code around the launch (launchValues.ts): constants, local variables, dim3s, the SM count and
// the occupancy API, each with the line it came from.
import type { LaunchEnv, LaunchValue } from './launchValues';
import { closingParen, LaunchText, splitTopLevel } from './launchValues';
import { globalKernelNames, kernelTableOf } from './launchTables';

interface LaunchDimension {
  /** The argument as written. */
  text: string;
  /** Its value (dim3: x·y·z) when constant, else null. */
  value: number | null;
  /**
   * A grid sized by the GPU's SM count (`prop.multiProcessorCount`, `k * numSMs` where numSMs was
   * assigned from it): blocks per SM. Persistent-style launches size their grid that way.
   */
  blocksPerSm?: number;
}

export interface KernelLaunch {
  /** Source name of the kernel launched; null for a launch through a pointer or member (`v.kernel<<<…>>>`). */
  kernel: string | null;
  /** The callee as written: `hot_loop<64>`, `v.kernel`. */
  callee: string;
  line: number;
  /** The file holding the launch when it is not the one analysed (a header's translation unit). */
  file?: string;
  grid: LaunchDimension;
  block: LaunchDimension;
  /** Dynamic shared memory, bytes; null when the launch passes none. */
  sharedBytes: LaunchDimension | null;
  /**
   * A launch through a table of kernel pointers (`kernels[i]<<<…>>>`, `v.kernel<<<…>>>` over a
   * table of structs): the table and the line of its initializer. The launch is reported once for
   * each kernel the table names, each with the launch's sizes.
   */
  via?: { table: string; line: number };
}

/** How a launch is written. */
type LaunchStyle = '<<<>>>' | 'cudaLaunchKernelEx' | 'cudaLaunchKernel';

/** The launch's sizes as values of the code around it (launchValues.ts), for the warps-per-SM resolver. */
interface LaunchConfig {
  style: LaunchStyle;
  grid: LaunchValue;
  block: LaunchValue;
  /** Dynamic shared memory; null when the launch passes none. */
  shared: LaunchValue | null;
}

export interface KernelLaunchWithConfig extends KernelLaunch {
  config: LaunchConfig;
}

// Probes that tell a constant from a multiple of the SM count (values of no real GPU).
const PROBES: LaunchEnv[] = [
  { sms: 1009, fit: () => 3, optimal: () => ({ block: 96, blocksPerSm: 5 }) },
  { sms: 2003, fit: () => 11, optimal: () => ({ block: 224, blocksPerSm: 7 }) },
];

/** Candidates that are a launch's dimension at all: a grid or block of 0 or fewer does not launch. */
function positive(v: LaunchValue): LaunchValue {
  return { ...v, candidates: v.candidates.filter(c => PROBES.some(e => (c.at(e) ?? 1) > 0)) };
}

/** The single value of a LaunchValue that depends on nothing at run time, else null. */
function constantOf(v: LaunchValue): number | null {
  if (v.unknown.length || !v.candidates.length) return null;
  const seen = new Set<number | null>();
  for (const c of v.candidates) for (const e of PROBES) seen.add(c.at(e));
  const [only] = [...seen];
  return seen.size === 1 && only !== null ? only : null;
}

/** k when every candidate is k × the SM count (and nothing else), else null. */
function smMultipleOf(v: LaunchValue): number | null {
  if (v.unknown.length || !v.candidates.length) return null;
  const ks = new Set<number>();
  for (const c of v.candidates)
    for (const e of PROBES) {
      const x = c.at(e);
      if (x === null || x % e.sms !== 0) return null;
      ks.add(x / e.sms);
    }
  const [k] = [...ks];
  return ks.size === 1 && k > 0 ? k : null;
}

function dimension(text: string, value: LaunchValue): LaunchDimension {
  const d: LaunchDimension = { text: text.replace(/\s+/g, ' '), value: constantOf(value) };
  if (d.value === null) {
    const k = smMultipleOf(value);
    if (k !== null) d.blocksPerSm = k;
  }
  return d;
}

/**
 * The kernel named by a launch API's function argument: `(void *)k`, `(const void *)&k`,
 * `reinterpret_cast<const void *>(&k<64>)`; a table entry (`(void *)kernels[i]`) keeps its text.
 */
function kernelArgument(arg: string): { kernel: string | null; callee: string } {
  const t = arg
    .replace(/\b(?:reinterpret_cast|static_cast)\s*<[^()]*>\s*/g, '')
    .replace(/\(\s*(?:const\s+)?void\s*\*+\s*\)/g, '')
    .replace(/[()&\s]/g, '');
  const m = /^((?:[A-Za-z_]\w*::)*[A-Za-z_]\w*)(<.*>)?$/.exec(t);
  if (!m) return { kernel: null, callee: t || arg.trim() };
  return { kernel: m[1].split('::').pop()!, callee: `${m[1]}${m[2] ?? ''}` };
}

type Found = KernelLaunchWithConfig & { at: number };

/**
 * A launch through a pointer, once for each kernel of the table it reaches (launchTables.ts);
 * unchanged when the callee names a kernel or no table says which kernels it may be.
 */
function throughTables(text: string, kernels: Set<string>, l: Found): Found[] {
  if (l.kernel !== null && (kernels.has(l.kernel) || !kernels.size)) return [l];
  const table = kernelTableOf(text, l.callee, l.at, kernels);
  if (!table) return [l];
  return table.kernels.map(kernel => ({ ...l, kernel, via: { table: table.name, line: table.line } }));
}

/** Every launch in the text, in order: `<<<…>>>`, cudaLaunchKernelEx with a cudaLaunchConfig_t, cudaLaunchKernel. */
export function findLaunches(source: string): KernelLaunchWithConfig[] {
  const lt = new LaunchText(source);
  const text = lt.text;
  const out: Found[] = [];
  // The callee: a name (qualified, member, pointer access or a table's subscript allowed) with optional template arguments.
  const launch =
    /([A-Za-z_]\w*(?:\s*\[[^\]\n]*\])*(?:\s*(?:::|\.|->)\s*[A-Za-z_]\w*(?:\s*\[[^\]\n]*\])*)*)\s*(<(?:[^<>;]|<[^<>;]*>)*>)?\s*<<</g;
  for (const m of text.matchAll(launch)) {
    const open = m.index! + m[0].length;
    const close = text.indexOf('>>>', open);
    if (close < 0) continue;
    const args = splitTopLevel(text.slice(open, close));
    if (args.length < 2) continue;
    const at = m.index!;
    const name = m[1].replace(/\s+/g, '');
    const indirect = /\.|->|\[/.test(name);
    const config: LaunchConfig = {
      style: '<<<>>>',
      grid: positive(lt.evaluate(args[0], at)),
      block: positive(lt.evaluate(args[1], at)),
      shared: args.length > 2 && args[2] ? lt.evaluate(args[2], at) : null,
    };
    out.push({
      at,
      kernel: indirect ? null : name.split('::').pop()!,
      callee: `${name}${m[2] ? m[2].replace(/\s+/g, ' ') : ''}`,
      line: lt.lineOf(at),
      grid: dimension(args[0], config.grid),
      block: dimension(args[1], config.block),
      sharedBytes: config.shared ? dimension(args[2], config.shared) : null,
      config,
    });
  }
  for (const m of text.matchAll(/\b(cudaLaunchKernelExC?|cudaLaunchKernel|cudaLaunchCooperativeKernel)\s*(?:<[^<>;()]*>)?\s*\(/g)) {
    const open = m.index! + m[0].length - 1;
    const close = closingParen(text, open);
    if (close < 0) continue;
    const args = splitTopLevel(text.slice(open + 1, close));
    const at = m.index!;
    let grid: string;
    let block: string;
    let shared: string | null;
    let style: LaunchStyle;
    if (m[1].startsWith('cudaLaunchKernelEx')) {
      if (args.length < 2) continue;
      const cfg = args[0].replace(/^&\s*/, '').replace(/\s+/g, '');
      if (!/^[A-Za-z_]\w*$/.test(cfg)) continue;
      [grid, block, shared, style] = [`${cfg}.gridDim`, `${cfg}.blockDim`, `${cfg}.dynamicSmemBytes`, 'cudaLaunchKernelEx'];
    } else {
      if (args.length < 3) continue;
      [grid, block, shared, style] = [args[1], args[2], args[4] ?? null, 'cudaLaunchKernel'];
    }
    const k = kernelArgument(args[style === 'cudaLaunchKernelEx' ? 1 : 0]);
    const config: LaunchConfig = {
      style,
      grid: positive(lt.evaluate(grid, at)),
      block: positive(lt.evaluate(block, at)),
      shared: shared ? lt.evaluate(shared, at) : null,
    };
    out.push({
      at,
      ...k,
      line: lt.lineOf(at),
      grid: dimension(grid, config.grid),
      block: dimension(block, config.block),
      sharedBytes: shared && config.shared ? dimension(shared, config.shared) : null,
      config,
    });
  }
  const kernels = globalKernelNames(text);
  return out
    .sort((a, b) => a.at - b.at)
    .flatMap(l => throughTables(text, kernels, l))
    .map(({ at, ...l }) => (void at, l));
}

/**
 * Blocks per SM of a grid written as the SM count, or a constant multiple of it (`prop.multiProcessorCount`,
 * `2 * sms` where sms came from cudaDeviceGetAttribute or multiProcessorCount). Null otherwise.
 */
export function gridInSms(text: string, grid: string): number | null {
  const lt = new LaunchText(text);
  return smMultipleOf(lt.evaluate(grid, lt.text.length));
}

/** A constant expression's value with every definition in the file in scope (`__launch_bounds__(BLOCK)`), else null. */
export function evaluateInFile(source: string, expression: string): number | null {
  const lt = new LaunchText(source);
  return constantOf(lt.evaluate(expression, lt.text.length));
}

/** The launches of a header's translation unit (where a header's kernels are launched), tagged with its path. */
export function launchesIn(file: string, source: string): KernelLaunchWithConfig[] {
  return findLaunches(source).map(l => ({ ...l, file }));
}
