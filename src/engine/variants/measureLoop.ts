// One source loop measured in a listing: the function holding its code, its instructions, the
// unroll nvcc applied (against the rolled build) and the hot machine code the instruction cache
// must hold while it runs.
import type { Kernel, Loop } from '../parse/model';
import { findSassLoops } from '../sass';
import type { SassFunction, SassListing, SassLoop } from '../sass';
import { issueProfile } from '../sass/issueRate';
import type { IcacheLoopFacts } from '../sass/issueRate';
import { appliedUnroll, AppliedUnroll } from './appliedUnroll';
import { chooseFunction, KernelFilter } from './kernelChoice';
import { lineIn } from './loopAttribution';
import type { LoopCopy, LoopInstantiation } from './reports';
import { loopCopies, LoopCopyPlace, ONE_CALL_SITE, onlyCopy } from './loopCopies';

/** The loop measured in one function (see measureLoop). */
export interface LoopMeasure {
  kernel: string;
  loopInstructions: number;
  effectiveUnroll: number | null;
  /** Why effectiveUnroll is null although the loop was measured (the two readings disagree …). */
  unrollUnknown: string | null;
  /** The two machine-code readings behind effectiveUnroll (appliedUnroll.ts). */
  unrollReadings: AppliedUnroll['readings'];
  fullyUnrolled: boolean;
  remainder: AppliedUnroll['remainder'];
  /** LDL/STL instructions in the loop's machine code. */
  local: AppliedUnroll['local'];
  icache: IcacheLoopFacts | null;
  /** Why `icache` is null (the loop's code runs once …). */
  icacheNone: string | null;
  /** Each copy when the loop's code appears more than once in the function (inlined at several call sites); null: once. */
  copies: LoopCopy[] | null;
}

/**
 * The machine code the instruction cache must hold while the loop runs: the hottest machine-code
 * loop of its work, or (unrolled completely) the innermost machine-code loop around most of its
 * instructions. None, with the reason, when the loop's code runs once (no loop repeats it:
 * nothing to re-fetch).
 */
function hotCodeFacts(
  fn: SassFunction,
  file: string,
  loop: Loop,
  hot: SassLoop | null,
): { facts: IcacheLoopFacts | null; none: string | null } {
  let chosen = hot;
  if (!chosen) {
    const mine = fn.instructions.filter(ins => lineIn(ins, file, loop.span.line, loop.span.endLine));
    if (!mine.length) return { facts: null, none: `none of the loop's machine code is in ${fn.name}` };
    let bestCount = 0;
    for (const l of findSassLoops(fn)) {
      if (!l.natural) continue;
      const n = mine.filter(ins => ins.address >= l.headAddress && ins.address <= l.branchAddress).length;
      // Most of the loop's instructions; on a tie the inner (smaller) loop.
      if (n * 2 > mine.length && (n > bestCount || (n === bestCount && chosen && l.instructions < chosen.instructions))) {
        chosen = l;
        bestCount = n;
      }
    }
  }
  if (!chosen) {
    return {
      facts: null,
      none: "no machine-code loop repeats most of the loop's code (unrolled completely, it runs once per thread): nothing is fetched again, so there is no instruction-cache prediction",
    };
  }
  const code = fn.instructions.filter(ins => ins.address >= chosen!.headAddress && ins.address <= chosen!.branchAddress);
  return { facts: { bytes: chosen.branchAddress - chosen.headAddress + 16, issue: issueProfile(code) }, none: null };
}

/**
 * Applied unroll from the machine code's loop structure (appliedUnroll.ts): the source loop's own
 * machine loops (by their back edges), the copies of one iteration in the main one against the
 * rolled build, the remainder beside it; no machine loop left: unrolled completely, its trip count.
 */
export function measureLoop(
  listing: SassListing,
  baseline: SassListing | null,
  file: string,
  kernel: Kernel,
  loop: Loop,
  filter?: KernelFilter,
  demangled?: Map<string, string>,
): LoopMeasure | null {
  const fn = chooseFunction(listing, file, kernel, loop, filter, demangled);
  if (!fn) return null;
  const baseFn = baseline?.functions.find(f => f.name === fn.name) ?? null;
  const places = loopCopies(fn, file, loop);
  if (places.length > 1) return measureCopies(fn, baseFn, file, kernel, loop, places, demangled?.get(fn.name));
  const a = appliedUnroll(fn, baseFn, file, kernel, loop, demangled?.get(fn.name));
  const hot = hotCodeFacts(fn, file, loop, a.loops[0] ?? null);
  return {
    kernel: fn.name,
    loopInstructions: a.instructions,
    effectiveUnroll: a.copies,
    unrollUnknown: a.unknown,
    unrollReadings: a.readings,
    fullyUnrolled: a.fullyUnrolled,
    remainder: a.remainder,
    local: a.local,
    icache: hot.facts,
    icacheNone: hot.none,
    copies: sameSiteCopies(fn, a),
  };
}

/** Each copy of a loop inlined several times at one call site (appliedUnroll's sameSiteCopies): its machine loop's instructions and unroll. */
function sameSiteCopies(fn: SassFunction, a: AppliedUnroll): LoopCopy[] | null {
  if (a.sameSiteCopies < 2) return null;
  return a.loops.map((l, i) => ({
    place: `${ONE_CALL_SITE}, copy ${i + 1}`,
    instructions: fn.instructions.filter(x => x.address >= l.headAddress && x.address <= l.branchAddress).length,
    effectiveUnroll: a.loopCopies[i] || null,
    fullyUnrolled: false,
  }));
}

/**
 * A loop whose code appears more than once in the function (inlined at several call sites): each
 * copy measured on its own (loopCopies.ts), the instructions and local traffic of all of them
 * added; the applied unroll is the copies' when they agree, else unknown with each copy's; the
 * hot code is that of the copy with the most instructions.
 */
function measureCopies(
  fn: SassFunction,
  baseFn: SassFunction | null,
  file: string,
  kernel: Kernel,
  loop: Loop,
  places: LoopCopyPlace[],
  demangled: string | undefined,
): LoopMeasure {
  const each = places.map(p => {
    const view = onlyCopy(fn, file, loop, p.key);
    const a = appliedUnroll(view, baseFn ? onlyCopy(baseFn, file, loop, p.key) : null, file, kernel, loop, demangled);
    return { p, a, view };
  });
  const main = each.reduce((x, y) => (y.a.instructions > x.a.instructions ? y : x));
  const hot = hotCodeFacts(main.view, file, loop, main.a.loops[0] ?? null);
  const unrolls = new Set(each.map(e => e.a.copies));
  const agree = unrolls.size === 1 && main.a.copies !== null;
  const remainders = new Set(each.map(e => JSON.stringify(e.a.remainder)));
  const described = each.map(e => `×${e.a.copies ?? '?'} ${e.p.label}`).join(', ');
  return {
    kernel: fn.name,
    loopInstructions: each.reduce((n, e) => n + e.a.instructions, 0),
    effectiveUnroll: agree ? main.a.copies : null,
    unrollUnknown: agree ? null : main.a.copies === null ? main.a.unknown : `the loop's ${each.length} copies differ: ${described}`,
    unrollReadings: main.a.readings,
    fullyUnrolled: each.every(e => e.a.fullyUnrolled),
    remainder: remainders.size === 1 ? main.a.remainder : null,
    local: {
      loads: each.reduce((n, e) => n + e.a.local.loads, 0),
      stores: each.reduce((n, e) => n + e.a.local.stores, 0),
    },
    icache: hot.facts,
    icacheNone: hot.none,
    copies: each.map(e => ({
      place: e.p.label,
      instructions: e.a.instructions,
      effectiveUnroll: e.a.copies,
      fullyUnrolled: e.a.fullyUnrolled,
    })),
  };
}

/**
 * The loop measured in every function whose code holds it (template instantiations), most of
 * the loop's instructions first (ties: by name, as chooseFunction breaks them).
 */
export function measureInstantiations(
  listing: SassListing,
  baseline: SassListing | null,
  file: string,
  kernel: Kernel,
  loop: Loop,
  demangled: Map<string, string>,
): LoopInstantiation[] {
  const out: { n: number; x: LoopInstantiation }[] = [];
  for (const fn of listing.functions) {
    const n = fn.instructions.filter(ins => lineIn(ins, file, loop.span.line, loop.span.endLine)).length;
    if (!n) continue;
    const m = measureLoop(listing, baseline, file, kernel, loop, fn.name, demangled);
    if (!m) continue;
    const x = {
      name: fn.name,
      demangled: demangled.get(fn.name) ?? fn.name,
      loopInstructions: m.loopInstructions,
      effectiveUnroll: m.effectiveUnroll,
      fullyUnrolled: m.fullyUnrolled,
    };
    out.push({ n, x });
  }
  return out.sort((a, b) => b.n - a.n || (a.x.name < b.x.name ? -1 : 1)).map(o => o.x);
}
