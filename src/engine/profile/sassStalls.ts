// Warp-stall samples per SASS instruction, from ncu's source page (SourceCounters), and their
// attachment to a SASS listing of the same machine code.
//
// The page prints each instruction at its absolute address in the GPU run ("0x7f07e17a4300");
// here each is placed at its offset from the function's lowest address, which is the `/*0240*/`
// column of cuobjdump and nvdisasm. Branch targets inside the function are rewritten the same
// way ("BRA 0x7f07e17a4b50" → "BRA 0x850"), which is how cuobjdump prints them. The cuda,sass
// view lists a kernel once per source file it has code from (inlined headers), in source-line
// order, and an instruction attributed to two files appears in both blocks: the blocks are merged
// by address, each instruction once, so the samples are counted once (the per-line sums of
// perLineStalls count such an instruction on each of its lines).
import { parseSourcePage, SourceFunction, SourcePage } from './ncuCsv';
import { BoundedReadError, READ_CAPS, readBoundedText } from '../base/boundedRead';
import type { SassStalls } from '../../schema/types';
import { sourceNameOf } from '../../schema/kernelNames';

export type { SassStalls };

/**
 * The SASS-level stall samples of one kernel of a source page (sass or cuda,sass view; a cuda-only
 * page has no instructions and gives null, as does a page without functions). `kernel` picks the
 * kernel: the page's name itself, a mangled name (matched by source name and integer template
 * arguments, `_Z6linearILi1ELi0EEvPKfS1_S1_Pf` ~ `void linear<(int)1, (int)0>(…)`) or a substring
 * of the demangled name; when none matches (or no kernel is given), the kernel with most samples.
 */
export function sassStallsOf(page: SourcePage, kernel?: string, factor: string | null = 'as-written'): SassStalls | null {
  const kernels = kernelsOf(page);
  if (!kernels.length) return null;
  const named = kernel ? kernels.filter(k => kernelMatches(k.name, kernel)) : [];
  return toSassStalls(mostSampled(named.length ? named : kernels), factor);
}

/**
 * Reads a saved `ncu --csv --page source --print-source sass` (or `cuda,sass`) page. Throws when
 * the file cannot be read, is not a source page with SASS, or holds several kernels and none
 * matches `kernel` (see sassStallsOf); a page of one kernel is taken whatever `kernel` says (the
 * listing's instruction check tells whether it is the same code). `factor` is null: unknown.
 */
export function readSassStallsFile(file: string, kernel?: string): SassStalls {
  let text: string;
  try {
    // A device (/dev/zero) or a FIFO would be read until memory runs out, or forever.
    text = readBoundedText(file, { maxBytes: READ_CAPS.stallSamples, what: 'stall samples file' });
  } catch (e) {
    const kind = e instanceof BoundedReadError && e.reason !== 'missing' && e.reason !== 'unreadable';
    throw new Error(kind ? e.message : `cannot read the stall samples file ${file}: ${e instanceof Error ? e.message : String(e)}`);
  }
  const kernels = kernelsOf(parseSourcePage(text));
  if (!kernels.length)
    throw new Error(
      `${file} is not an ncu source page with SASS instructions; save one with ` +
        '`ncu --import REPORT.ncu-rep --csv --page source --print-source sass > FILE` (or --print-source cuda,sass)',
    );
  const named = kernel ? kernels.filter(k => kernelMatches(k.name, kernel)) : [];
  if (kernel && !named.length && kernels.length > 1)
    throw new Error(`${file} has no kernel matching ${kernel}; it has: ${kernels.map(k => k.name).join('; ')}`);
  return toSassStalls(mostSampled(named.length ? named : kernels), null);
}

/** Stall samples of one listed instruction, as the listing shows them (protocol SassInstructionStall). */
interface AttachedStall {
  samples: number;
  /** This instruction's fraction of the kernel's samples (0..1). */
  share: number;
  /** Up to 3 reasons with most samples, each with its share of this instruction's samples. */
  top: { reason: string; share: number }[];
}

export interface AttachResult {
  /** The run's machine code is the listing's: same instruction count, same instruction at each offset. */
  matched: boolean;
  /** Offset → samples, for the instructions with at least one sample (empty when not matched). */
  byOffset: Map<number, AttachedStall>;
  /**
   * Why nothing was attached ("the GPU run sampled different machine code (N vs M instructions) —
   * re-run the benchmark", the run's count first, the listing's second; or the first differing
   * instruction, the run's text first), or that the run has no samples; null when attached.
   */
  note: string | null;
}

/** A listed instruction; `target` is the resolved branch target of a label operand (nvdisasm). */
export interface ListedInstruction {
  offset: number;
  text: string;
  target?: number;
}

/**
 * Attaches the stall samples to a listing when the GPU run sampled the same machine code: the
 * same number of instructions and, at each offset, the same instruction text after normalising
 * (whitespace, the closing ';', branch targets: a label with a known `target` compares as its
 * offset, one without matches any target).
 */
export function attachSassStalls(instructions: ReadonlyArray<ListedInstruction>, stalls: SassStalls): AttachResult {
  const differ = (why: string): AttachResult => ({
    matched: false,
    byOffset: new Map(),
    note: `the GPU run sampled different machine code (${why}) — re-run the benchmark`,
  });
  if (instructions.length !== stalls.instructions.length)
    return differ(`${stalls.instructions.length} vs ${instructions.length} instructions`);
  const sampled = new Map(stalls.instructions.map(i => [i.offset, i]));
  for (const l of instructions) {
    const s = sampled.get(l.offset);
    if (!s) return differ(`no instruction at offset ${hex(l.offset)}`);
    if (!sameInstruction(l, s.text)) return differ(`at ${hex(l.offset)}: ${s.text} vs ${l.text.trim().replace(/\s*;\s*$/, '')}`);
  }
  const byOffset = new Map<number, AttachedStall>();
  const total = stalls.totalSamples;
  for (const s of stalls.instructions) {
    if (s.samples <= 0) continue;
    const top = Object.entries(s.stalls)
      .filter(([, v]) => v > 0)
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .slice(0, 3)
      .map(([reason, v]) => ({ reason, share: v / s.samples }));
    byOffset.set(s.offset, { samples: s.samples, share: total > 0 ? s.samples / total : 0, top });
  }
  return { matched: true, byOffset, note: total > 0 ? null : 'the GPU run collected no stall samples in this kernel' };
}

/**
 * Instruction text for comparing: no ';', single spaces, a space after each comma, no operand
 * reuse flags (cuobjdump and nvdisasm print `R8.reuse`, ncu's source page does not).
 */
export function normaliseSassText(text: string): string {
  return text
    .replace(/\.reuse\b/g, '')
    .trim()
    .replace(/\s*;\s*$/, '')
    .replace(/\s*,\s*/g, ', ')
    .replace(/\s+/g, ' ');
}

// ---- internals --------------------------------------------------------------------------------

interface PageKernel {
  name: string;
  blocks: SourceFunction[];
  samples: number;
}

/** The page's kernels with SASS rows, each with all its blocks (one per source file). */
function kernelsOf(page: SourcePage): PageKernel[] {
  const byName = new Map<string, PageKernel>();
  for (const f of page?.functions ?? []) {
    if (!f.sass.length) continue;
    const name = f.kernelName || f.function || '';
    let k = byName.get(name);
    if (!k) byName.set(name, (k = { name, blocks: [], samples: 0 }));
    k.blocks.push(f);
  }
  for (const k of byName.values()) k.samples = mergedRows(k.blocks).reduce((a, r) => a + r.samples, 0);
  return [...byName.values()];
}

function mostSampled(ks: PageKernel[]): PageKernel {
  return ks.reduce((best, k) => (k.samples > best.samples ? k : best), ks[0]);
}

/** The blocks' SASS rows, each address once (the first block's row), in address order. */
function mergedRows(blocks: SourceFunction[]) {
  const byAddress = new Map<bigint, SourceFunction['sass'][number]>();
  for (const b of blocks) {
    for (const r of b.sass) {
      const a = parseAddress(r.address);
      if (a !== null && !byAddress.has(a)) byAddress.set(a, r);
    }
  }
  return [...byAddress.entries()].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0)).map(([address, r]) => ({ ...r, at: address }));
}

function toSassStalls(k: PageKernel, factor: string | null): SassStalls {
  const rows = mergedRows(k.blocks);
  const lo = rows[0].at;
  const hi = rows[rows.length - 1].at + 16n;
  const instructions = rows.map(r => ({
    offset: Number(r.at - lo),
    text: relativeTargets(normaliseSassText(r.source), lo, hi),
    samples: r.samples,
    stalls: { ...r.stalls },
  }));
  return { kernel: k.name, factor, totalSamples: instructions.reduce((a, i) => a + i.samples, 0), instructions };
}

function parseAddress(s: string | undefined): bigint | null {
  if (!s || !/^0x[0-9a-f]+$/i.test(s.trim())) return null;
  return BigInt(s.trim());
}

/** Absolute addresses inside [lo, hi] → offsets from lo, as cuobjdump prints branch targets. */
function relativeTargets(text: string, lo: bigint, hi: bigint): string {
  return text.replace(/\b0x[0-9a-f]+\b/gi, m => {
    const v = BigInt(m);
    return v >= lo && v <= hi ? `0x${(v - lo).toString(16)}` : m;
  });
}

function hex(n: number): string {
  return `0x${n.toString(16).padStart(4, '0')}`;
}

/** nvdisasm's label operand: `(.L_x_3) */
const LABEL = /`\([^)]*\)/g;

function sameInstruction(l: ListedInstruction, sampled: string): boolean {
  let listed = normaliseSassText(l.text);
  if (l.target !== undefined) listed = listed.replace(LABEL, `0x${l.target.toString(16)}`);
  if (listed === sampled) return true;
  if (!listed.includes('`(')) return false;
  // An unresolved label matches any operand in its place.
  const parts = listed.split(LABEL).map(p => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('\\S+')}$`).test(sampled);
}

/** Whether the page's kernel name `page` is the kernel `wanted` (see sassStallsOf). */
export function kernelMatches(page: string, wanted: string): boolean {
  if (page === wanted) return true;
  const m = mangledParts(wanted);
  if (!m) return page.includes(wanted);
  if (sourceNameOf(page) !== m.name) return false;
  if (!m.args.length) return true;
  const args = templateLiterals(page);
  return args !== null && args.length === m.args.length && args.every((a, i) => a === m.args[i]);
}

/** Integer and bool template arguments of a demangled name ("(int)1" → "1"), in order; null for none. */
function templateLiterals(demangled: string): string[] | null {
  const open = demangled.indexOf('<');
  if (open < 0) return null;
  let depth = 0;
  let cur = '';
  const args: string[] = [];
  for (let i = open; i < demangled.length; i++) {
    const c = demangled[i];
    if (c === '<') {
      if (depth++ === 0) continue;
    } else if (c === '>') {
      if (--depth === 0) {
        args.push(cur);
        break;
      }
    } else if (c === ',' && depth === 1) {
      args.push(cur);
      cur = '';
      continue;
    }
    cur += c;
  }
  return args.flatMap(a => {
    const v = a.trim().replace(/^\([^)]*\)\s*/, '');
    if (/^-?\d+[uUlL]*$/.test(v)) return [v.replace(/[uUlL]+$/, '')];
    if (v === 'true' || v === 'false') return [v];
    return [];
  });
}

/** Source name and integer/bool template literals of an Itanium-mangled name; null when not mangled. */
function mangledParts(mangled: string): { name: string; args: string[] } | null {
  if (!/^_Z/.test(mangled)) return null;
  let i = 2;
  const nested = mangled[i] === 'N';
  if (nested) {
    i++;
    while (/[rVK]/.test(mangled[i] ?? '')) i++;
  }
  let name = '';
  for (;;) {
    const d = /^\d+/.exec(mangled.slice(i));
    if (!d) break;
    i += d[0].length;
    name = mangled.slice(i, i + Number(d[0]));
    i += Number(d[0]);
    if (!nested) break;
  }
  if (!name) return null;
  const args: string[] = [];
  if (mangled[i] === 'I') {
    let depth = 0;
    while (i < mangled.length) {
      const c = mangled[i];
      if (c === 'I' || c === 'N') {
        depth++;
        i++;
      } else if (c === 'E') {
        i++;
        if (--depth === 0) break;
      } else if (c === 'L') {
        const lit = /^L([a-z])(n?\d+)E/.exec(mangled.slice(i));
        if (!lit) break;
        if (depth === 1) {
          const v = lit[2].replace(/^n/, '-');
          args.push(lit[1] === 'b' ? (v === '0' ? 'false' : 'true') : v);
        }
        i += lit[0].length;
      } else i++;
    }
  }
  return { name, args };
}
