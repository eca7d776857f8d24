// Which instantiation of a template answers "what does unrolling this loop do": one where the
// loop runs more times than the largest factor asked for. Where it runs once (ggml's mmvq.cu with
// ncols_dst = 1), every factor gives the same code and the table says nothing. The trip count of
// each instantiation comes from its template arguments (the demangled name's values put into the
// loop's `for` header), else from the SASS (appliedUnroll.ts): a loop that no build keeps as a
// machine loop was unrolled completely, and its copies are its trip count; one that a full-unroll
// request leaves a machine loop runs a count known only at run time. Nothing is guessed: an
// instantiation whose count neither shows is "unknown".
import type { Kernel, Loop } from '../parse/model';
import type { SassListing } from '../sass';
import { instantiationLabel } from '../../schema/kernelNames';
import { evalMacroBody } from '../parse/fileConstants';
import { matchesFilter, KernelFilter } from './kernelChoice';
import { sourceNameOf } from '../../schema/kernelNames';
import { lineIn } from './loopAttribution';
import { measureLoop } from './measureLoop';
import type { UnrollFactor } from './factors';

import type { TripCount } from './reports';

export interface InstantiationTrip {
  name: string;
  demangled: string;
  /** Instructions of the loop's lines in this function, summed over the builds. */
  instructions: number;
  trips: TripCount;
}

/** One build of the loop: the factor it asked for and its listing (null when it did not build or has none). */
export interface FactorListing {
  factor: UnrollFactor;
  listing: SassListing | null;
}

/** `void k<8, (ggml_type)2, true>(float*)` → ["8", "(ggml_type)2", "true"]; null without template arguments. */
function templateArguments(demangled: string): string[] | null {
  const head = demangled.replace(/\((?:[^()]|\([^()]*\))*\)\s*$/, '');
  const open = head.indexOf('<');
  if (open < 0) return null;
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of head.slice(open + 1)) {
    if (ch === '<' || ch === '(') depth++;
    if ((ch === '>' || ch === ')') && depth === 0) break;
    if (ch === '>' || ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  out.push(cur.trim());
  return out;
}

/** A template argument as a number: `8`, `8u`, `(ggml_type)2`, `true`; null for a type or anything else. */
function argumentValue(a: string): number | null {
  const t = a.replace(/^\([\w:\s]+\)\s*/, '').replace(/[uUlL]+$/, '');
  if (t === 'true' || t === 'false') return t === 'true' ? 1 : 0;
  return /^-?\d+$/.test(t) ? Number(t) : null;
}

/** The `for (…)` header at the loop's line: the text between its parentheses, or null. */
function forHeader(text: string, loop: Loop): string | null {
  const lines = text.split('\n');
  const from = lines.slice(0, loop.line - 1).join('\n').length + (loop.line > 1 ? 1 : 0);
  const at = text.slice(from).search(/\bfor\s*\(/);
  if (at < 0) return null;
  const open = text.indexOf('(', from + at);
  let depth = 0;
  for (let i = open; i < text.length && i < open + 2000; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')' && --depth === 0) return text.slice(open + 1, i);
  }
  return null;
}

/**
 * The loop's trip count in an instantiation, from its template arguments put into a canonical
 * `for (T v = a; v < b; v += s)` header (`<`, `<=`, `>`, `>=`, `!=`; `++`, `--`, `+=`, `-=`);
 * null when the header has another shape or names what the arguments do not give.
 */
export function tripFromArguments(text: string, loop: Loop, kernel: Kernel, demangled: string): number | null {
  if (loop.kind !== 'for') return null;
  if (typeof loop.tripCount === 'number') return loop.tripCount;
  if (sourceNameOf(demangled) !== kernel.name || !kernel.templateParameters.length) return null;
  const args = templateArguments(demangled);
  const header = forHeader(text, loop);
  if (!args || header === null) return null;
  const values = new Map<string, number>();
  kernel.templateParameters.forEach((p, k) => {
    const v = args[k] === undefined ? null : argumentValue(args[k]);
    if (v !== null) values.set(p, v);
  });
  const parts = header.split(';');
  if (parts.length !== 3) return null;
  const init = /^\s*(?:[\w:<>]+\s+)*(\w+)\s*=\s*(.+?)\s*$/s.exec(parts[0]);
  if (!init) return null;
  const v = init[1];
  const cond = new RegExp(`^\\s*${v}\\s*(<=|<|!=|>=|>)\\s*(.+?)\\s*$`, 's').exec(parts[1]);
  const up = new RegExp(`^\\s*(?:(\\+\\+|--)\\s*${v}|${v}\\s*(\\+\\+|--)|${v}\\s*([+-])=\\s*(.+?))\\s*$`, 's').exec(parts[2]);
  if (!cond || !up) return null;
  const scope = { values, unboundTemplateParams: new Set<string>() };
  const start = evalMacroBody(init[2], scope);
  const bound = evalMacroBody(cond[2], scope);
  const dir = up[1] ?? up[2] ?? (up[3] === '+' ? '++' : '--');
  const step = up[4] !== undefined ? evalMacroBody(up[4], scope) : 1;
  if (start === null || bound === null || step === null || step <= 0) return null;
  const delta = dir === '++' ? step : -step;
  const op = cond[1];
  const holds = (i: number) =>
    op === '<' ? i < bound : op === '<=' ? i <= bound : op === '>' ? i > bound : op === '>=' ? i >= bound : i !== bound;
  if (!holds(start)) return 0;
  if (op === '!=') return (bound - start) % delta === 0 && (bound - start) / delta > 0 ? (bound - start) / delta : null;
  if (delta > 0 !== (op === '<' || op === '<=')) return null; // never ends, or not this shape
  const span = op === '<' ? bound - start : op === '<=' ? bound - start + 1 : op === '>' ? start - bound : start - bound + 1;
  return Math.ceil(span / Math.abs(delta));
}

/** The trip count of the loop in one function: from its template arguments, else from every build that holds it (see the module comment). */
function tripsIn(
  name: string,
  builds: FactorListing[],
  baseline: SassListing | null,
  at: { file: string; text: string; kernel: Kernel; loop: Loop; demangled: Map<string, string> },
): TripCount {
  const fromArgs = tripFromArguments(at.text, at.loop, at.kernel, at.demangled.get(name) ?? name);
  if (fromArgs !== null) return fromArgs;
  let known: number | null = null;
  let runtime = false;
  for (const b of builds) {
    if (!b.listing || !b.listing.functions.some(f => f.name === name)) continue;
    const m = measureLoop(b.listing, baseline, at.file, at.kernel, at.loop, name, at.demangled);
    if (!m || m.kernel !== name) continue;
    if (m.fullyUnrolled && m.effectiveUnroll !== null && m.effectiveUnroll >= 1) known = Math.max(known ?? 0, m.effectiveUnroll);
    else if (!m.fullyUnrolled && b.factor === 'full') runtime = true;
  }
  return known ?? (runtime ? 'runtime' : null);
}

/** Every function (the filter allows) holding the loop's code, with its trip count; most code first. */
export function instantiationTrips(
  builds: FactorListing[],
  baseline: SassListing | null,
  at: { file: string; text: string; kernel: Kernel; loop: Loop; demangled: Map<string, string>; filter?: KernelFilter },
): InstantiationTrip[] {
  const total = new Map<string, number>();
  for (const b of builds)
    for (const fn of b.listing?.functions ?? []) {
      if (!matchesFilter(at.filter, fn.name, at.demangled.get(fn.name))) continue;
      const n = fn.instructions.filter(ins => lineIn(ins, at.file, at.loop.span.line, at.loop.span.endLine)).length;
      if (n > 0) total.set(fn.name, (total.get(fn.name) ?? 0) + n);
    }
  return [...total]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([name, instructions]) => ({
      name,
      demangled: at.demangled.get(name) ?? name,
      instructions,
      trips: total.size > 1 ? tripsIn(name, builds, baseline, at) : null,
    }));
}

/** The largest unroll factor asked for as a number (1 when only default or full were). */
function largestFactor(factors: UnrollFactor[]): number {
  return Math.max(1, ...factors.filter((f): f is number => typeof f === 'number'));
}

function tripText(t: TripCount): string {
  return t === null ? 'unknown' : t === 'runtime' ? 'a run-time count' : t === 1 ? '1 time' : `${t} times`;
}

export interface TripChoice {
  chosen: InstantiationTrip;
  /** A note for the table when several instantiations hold the loop; null for one. */
  note: string | null;
}

/**
 * The instantiation every row measures: among those where the loop runs more times than the
 * largest factor (a known count first, then a run-time one), the one with most of the loop's
 * code; when none does, the one with the largest known count (else most code), and a note that
 * says so and lists the candidates with their trip counts.
 */
export function chooseByTripCount(candidates: InstantiationTrip[], factors: UnrollFactor[]): TripChoice | null {
  if (!candidates.length) return null;
  if (candidates.length === 1) return { chosen: candidates[0], note: null };
  const largest = largestFactor(factors);
  const known = candidates.filter(c => typeof c.trips === 'number' && c.trips > largest);
  const runtime = candidates.filter(c => c.trips === 'runtime');
  const list = tripSummary(candidates);
  if (known.length || runtime.length) {
    const chosen = known[0] ?? runtime[0];
    return {
      chosen,
      note:
        `rows measure ${instantiationLabel(chosen.demangled)}, where the loop runs ${tripText(chosen.trips)}` +
        `${typeof chosen.trips === 'number' ? ` (more than the largest factor, ${largest})` : ''}; ` +
        `${candidates.length} instantiations hold it (trip counts from their template arguments or the SASS): ${list} (--kernel picks another)`,
    };
  }
  // None runs it more than the largest factor: the largest known count shows the most, else the most code.
  const counted = candidates.filter(c => typeof c.trips === 'number' && c.trips > 1);
  const chosen = counted.length ? counted.reduce((a, b) => ((b.trips as number) > (a.trips as number) ? b : a)) : candidates[0];
  return {
    chosen,
    note:
      `no instantiation is known to run the loop more than ${largest} time${largest === 1 ? '' : 's'} (the largest factor): ` +
      `rows measure ${instantiationLabel(chosen.demangled)}, ${counted.length ? `where it runs ${tripText(chosen.trips)}, the most known` : 'the one with most of its code'}. ` +
      `Trip counts (from the template arguments or the SASS): ${list}. A factor at or above an instantiation's trip count gives it the same code as a full unroll; ` +
      'pick another with --kernel, or a translation unit that instantiates it with more iterations with --tu',
  };
}

/**
 * The candidates' trip counts in a few words: each one with its count when there are at most
 * eight, else grouped by count (how many, and the first of them).
 */
function tripSummary(candidates: InstantiationTrip[]): string {
  if (candidates.length <= 8) return candidates.map(c => `${instantiationLabel(c.demangled)}: ${tripText(c.trips)}`).join('; ');
  const groups = new Map<string, InstantiationTrip[]>();
  for (const c of candidates) {
    const k = tripText(c.trips);
    groups.set(k, [...(groups.get(k) ?? []), c]);
  }
  const order = (k: string) => {
    const t = groups.get(k)![0].trips;
    return typeof t === 'number' ? t : t === 'runtime' ? 1e12 : 1e13;
  };
  return [...groups.keys()]
    .sort((a, b) => order(a) - order(b))
    .map(k => {
      const g = groups.get(k)!;
      return `${k}: ${g.length} (${instantiationLabel(g[0].demangled)}${g.length > 1 ? ', …' : ''})`;
    })
    .join('; ');
}
