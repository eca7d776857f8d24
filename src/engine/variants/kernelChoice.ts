// Which function of a cubin to measure: the source kernel's instantiations recognised by name
// (demangled, or mangled when c++filt is missing), narrowed by a --kernel filter, and the one
// holding most of a loop's code; and the block size its launch bounds give the occupancy estimate.
import type { FileAnalysis, Kernel, Loop } from '../parse/model';
import type { SassFunction, SassListing } from '../sass';
import { lineIn } from './loopAttribution';
import { sourceNameOf } from '../../schema/kernelNames';

/**
 * Which function to measure: a mangled name or demangled substring, or a test of the mangled and
 * demangled names (a sweep's template axis picks one instantiation).
 */
export type KernelFilter = string | ((mangled: string, demangled: string) => boolean);

export function matchesFilter(filter: KernelFilter | undefined, name: string, demangled: string | undefined): boolean {
  if (!filter) return true;
  if (typeof filter === 'function') return filter(name, demangled ?? name);
  return name === filter || (demangled ?? '').includes(filter);
}

/** A mangled name (c++filt missing) holds the source name as <length><name>: _Z8hot_loopILi2048EEvPKmPmi. */
function mangledHolds(mangled: string, source: string): boolean {
  return mangled.startsWith('_Z') && new RegExp(`(?<!\\d)${source.length}${source.replace(/[^\w]/g, '\\$&')}`).test(mangled.slice(2));
}

/** The source kernel's function among the cubin's `names` (the first by name), when the filter allows one. */
export function pickKernelByName(
  names: Iterable<string>,
  source: string,
  demangled: Map<string, string>,
  filter?: KernelFilter,
): string | null {
  const candidates = [...names].filter(n => {
    const d = demangled.get(n) ?? n;
    const named = d === n ? mangledHolds(n, source) || n === source : sourceNameOf(d) === source;
    return named && matchesFilter(filter, n, d);
  });
  return candidates.sort()[0] ?? null;
}

/**
 * The function holding most instructions of the loop's lines summed over the listings (ties: the
 * first name), among those the filter accepts; `of`: how many functions hold some of them.
 */
export function busiestFunction(
  listings: SassListing[],
  file: string,
  loop: Loop | Loop[],
  filter: KernelFilter | undefined,
  demangled: Map<string, string>,
): { name: string; of: number } | null {
  const loops = Array.isArray(loop) ? loop : [loop];
  const total = new Map<string, number>();
  for (const l of listings)
    for (const fn of l.functions) {
      if (!matchesFilter(filter, fn.name, demangled.get(fn.name))) continue;
      const n = fn.instructions.filter(ins => loops.some(x => lineIn(ins, file, x.span.line, x.span.endLine))).length;
      if (n > 0) total.set(fn.name, (total.get(fn.name) ?? 0) + n);
    }
  const best = [...total].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0];
  return best ? { name: best[0], of: total.size } : null;
}

/** The function of the listing holding most instructions of the loop's lines (ties: the first name). */
export function chooseFunction(
  listing: SassListing,
  file: string,
  kernel: Kernel,
  loop: Loop,
  filter?: KernelFilter,
  demangled?: Map<string, string>,
): SassFunction | null {
  let best: { fn: SassFunction; n: number } | null = null;
  void kernel;
  for (const fn of listing.functions) {
    if (!matchesFilter(filter, fn.name, demangled?.get(fn.name))) continue;
    let n = 0;
    for (const ins of fn.instructions) if (lineIn(ins, file, loop.span.line, loop.span.endLine)) n++;
    if (n > 0 && (!best || n > best.n || (n === best.n && fn.name < best.fn.name))) best = { fn, n };
  }
  return best?.fn ?? null;
}

/** Threads per block for the occupancy estimate: the kernel's launch bounds, else 256. */
export function launchBlockSize(analysis: FileAnalysis, demangled: string, defines: Record<string, string> = {}): number {
  const base = sourceNameOf(demangled);
  const k = analysis.kernels.find(x => x.name === base);
  const lb = k?.launchBounds?.[0]?.trim();
  // `__launch_bounds__(BLOCK)` with BLOCK swept as a -D macro: the block size is that value.
  const n = lb ? Number(defines[lb] ?? lb) : NaN;
  return Number.isFinite(n) && n > 0 ? n : 256;
}
