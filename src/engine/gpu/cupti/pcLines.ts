// Per-instruction and per-source-line warp-stall samples from the CUPTI timer's PC sampling
// (native/cupti_timer.c, UNROLL_LENS_PCSAMPLING), in the shapes ncu's source page gives
// (sassStallsOf, perLineStalls), so the listing and the editor show either source the same way.
//
// CUPTI gives each sampled PC as a byte offset from the start of its function: the `/*0240*/`
// column of nvdisasm and cuobjdump, the offsets sassStallsOf computes from ncu's absolute
// addresses. The listing (nvdisasm -c -gi of the program that ran, built with -lineinfo) gives
// every instruction's text and line-table location; the samples are attached by offset, and a
// sampled offset the listing does not have means the listing is of other machine code (null).
import type { SassFunction, SassInstruction } from '../../sass';
import type { SassStalls } from '../../profile/sassStalls';
import { normaliseSassText } from '../../profile/sassStalls';
import { canonicalStallReason } from '../../profile/ncuCsv';
import { matchFile, shares, type LineStalls } from '../../profile/stalls';
import type { PcSampling } from './timerRecords';

const STALLED = 'smsp__pcsamp_warps_issue_stalled_';

/** Issued and not-issued samples of one PC, per canonical reason (the source page's split). */
interface PcCounts {
  samples: number;
  samplesNotIssued: number;
  stalls: Record<string, number>;
  stallsNotIssued: Record<string, number>;
}

/**
 * One kernel's samples by function offset, summed over every PC line of it. Reasons outside the
 * stall family (CUPTI's smsp__pcsamp_sample_count, samples_data_dropped) are not stall samples;
 * a `_not_issued` reason is a subset of its issued reason's samples, as on ncu's source page
 * ("Warp Stall Sampling (Not-issued Samples)" beside "(All Samples)").
 */
function countsByOffset(s: PcSampling, kernel: string): Map<number, PcCounts> {
  const out = new Map<number, PcCounts>();
  for (const pc of s.pcs) {
    if (pc.kernel !== kernel) continue;
    let c = out.get(pc.offset);
    if (!c) out.set(pc.offset, (c = { samples: 0, samplesNotIssued: 0, stalls: {}, stallsNotIssued: {} }));
    for (const [i, n] of pc.counts) {
      const name = s.reasons[i];
      if (!name?.startsWith(STALLED) || n <= 0) continue;
      const { reason, notIssued } = canonicalStallReason(name.slice(STALLED.length));
      if (notIssued) {
        c.samplesNotIssued += n;
        c.stallsNotIssued[reason] = (c.stallsNotIssued[reason] ?? 0) + n;
      } else {
        c.samples += n;
        c.stalls[reason] = (c.stalls[reason] ?? 0) + n;
      }
    }
  }
  return out;
}

/** nvdisasm's label operand: `(.L_x_3) */
const LABEL = /`\([^)]*\)/g;

/** The instruction as the source page prints it: branch targets inside the function as offsets. */
function pageText(ins: SassInstruction): string {
  const op = ins.modifiers.length ? `${ins.opcode}.${ins.modifiers.join('.')}` : ins.opcode;
  let text = `${ins.predicate ? ins.predicate + ' ' : ''}${op}${ins.operands ? ' ' + ins.operands : ''}`;
  if (ins.target !== undefined) text = text.replace(LABEL, `0x${ins.target.toString(16)}`);
  return normaliseSassText(text);
}

export interface PcSassStallsResult {
  /** Null when the kernel got no samples or the listing is not the sampled code (see note). */
  stalls: SassStalls | null;
  /** Why stalls is null; null when it is not. */
  note: string | null;
}

/**
 * One kernel's PC samples per SASS instruction of `listing` (the kernel's function in an nvdisasm
 * or cuobjdump listing of the program that ran). `kernel` is the mangled name CUPTI recorded;
 * `displayName` is what SassStalls.kernel shows (the demangled name where known).
 */
export function pcSassStalls(
  s: PcSampling,
  kernel: string,
  listing: SassFunction,
  factor: string | null,
  displayName = kernel,
): PcSassStallsResult {
  const counts = countsByOffset(s, kernel);
  const at = new Set(listing.instructions.map(i => i.address));
  const stray = [...counts.keys()].filter(o => !at.has(o));
  if (stray.length)
    return {
      stalls: null,
      note:
        `PC samples at ${stray.length} offset(s) the listing of ${listing.name} does not have ` +
        `(first 0x${Math.min(...stray).toString(16)}): the listing is not the machine code that ran`,
    };
  const instructions = listing.instructions.map(ins => {
    const c = counts.get(ins.address);
    return { offset: ins.address, text: pageText(ins), samples: c?.samples ?? 0, stalls: { ...(c?.stalls ?? {}) } };
  });
  const totalSamples = instructions.reduce((a, i) => a + i.samples, 0);
  if (totalSamples === 0) return { stalls: null, note: `CUPTI PC sampling gave no samples in ${kernel}` };
  return { stalls: { kernel: displayName, factor, totalSamples, instructions }, note: null };
}

/**
 * The instruction's line in `files` (the swept file as the line table spells it): the innermost
 * frame of its inline chain that lies there, as ncu's source page places an inlined helper's code
 * on the helper's own line when both are in the file; null when no frame is in the file (code
 * inlined from a header whose call site is elsewhere).
 */
function lineInFiles(ins: SassInstruction, files: ReadonlySet<string>): number | null {
  const s = ins.source;
  if (!s) return null;
  for (const f of [{ file: s.file, line: s.line }, ...(s.inlinedAt ?? [])]) if (files.has(f.file)) return f.line;
  return null;
}

/**
 * Per source line of `file`: the kernel's PC samples summed over the instructions the line table
 * places on it (perLineStalls' shape; `file` matched against the line table's paths as
 * perLineStalls matches the page's: exactly, by path suffix, else by file name). `sourceLines`
 * (the file's text split into lines) fills `source`; instructionsExecuted is not sampled (null).
 * Sorted by line; lines without samples are left out.
 */
export function pcLineStalls(
  s: PcSampling,
  kernel: string,
  listing: SassFunction,
  file: string,
  sourceLines: ReadonlyArray<string> = [],
): LineStalls[] {
  const counts = countsByOffset(s, kernel);
  const tableFiles = new Set<string>();
  for (const ins of listing.instructions) for (const f of [ins.source, ...(ins.source?.inlinedAt ?? [])]) if (f) tableFiles.add(f.file);
  const files = new Set(
    matchFile(
      [...tableFiles].map(f => ({ file: f })),
      file,
    ).map(f => f.file),
  );
  const byLine = new Map<number, LineStalls>();
  for (const ins of listing.instructions) {
    const c = counts.get(ins.address);
    if (!c || (c.samples === 0 && c.samplesNotIssued === 0)) continue;
    const line = lineInFiles(ins, files);
    if (line === null) continue;
    let e = byLine.get(line);
    if (!e)
      byLine.set(
        line,
        (e = {
          file: [...files][0],
          line,
          source: (sourceLines[line - 1] ?? '').trim(),
          samples: 0,
          samplesNotIssued: 0,
          instructionsExecuted: null,
          stalls: {},
          stallsNotIssued: {},
          stallShare: {},
          kernels: [kernel],
        }),
      );
    e.samples += c.samples;
    e.samplesNotIssued += c.samplesNotIssued;
    for (const [k, v] of Object.entries(c.stalls)) e.stalls[k] = (e.stalls[k] ?? 0) + v;
    for (const [k, v] of Object.entries(c.stallsNotIssued)) e.stallsNotIssued[k] = (e.stallsNotIssued[k] ?? 0) + v;
  }
  const out = [...byLine.values()];
  for (const e of out) e.stallShare = shares(e.stalls);
  return out.sort((a, b) => a.line - b.line);
}

export interface LineShareComparison {
  /** Stall samples on the file's lines in each source. */
  samplesA: number;
  samplesB: number;
  /** The lines with at least `minShare` of either source's samples: each one's share in both. */
  lines: { line: number; shareA: number; shareB: number }[];
  /** Largest |shareA - shareB| over those lines (0..1). */
  largestGap: number;
  /** The line with most samples in each source (null when it has none). */
  hottestA: number | null;
  hottestB: number | null;
}

/**
 * Two per-line stall samplings of one kernel side by side (PC sampling against ncu's source page,
 * or two runs of one): each line's share of its source's samples. How far apart the two sources
 * are is what decides whether the PC samples can stand in for the ncu run.
 */
export function compareLineShares(a: ReadonlyArray<LineStalls>, b: ReadonlyArray<LineStalls>, minShare: number): LineShareComparison {
  const total = (ls: ReadonlyArray<LineStalls>) => ls.reduce((n, l) => n + l.samples, 0);
  const samplesA = total(a);
  const samplesB = total(b);
  const share = (ls: ReadonlyArray<LineStalls>, n: number) => new Map(ls.map(l => [l.line, n > 0 ? l.samples / n : 0]));
  const sa = share(a, samplesA);
  const sb = share(b, samplesB);
  const lines = [...new Set([...sa.keys(), ...sb.keys()])]
    .map(line => ({ line, shareA: sa.get(line) ?? 0, shareB: sb.get(line) ?? 0 }))
    .filter(l => l.shareA >= minShare || l.shareB >= minShare)
    .sort((x, y) => x.line - y.line);
  const hottest = (ls: ReadonlyArray<LineStalls>) =>
    ls.reduce<LineStalls | null>((h, l) => (l.samples > (h?.samples ?? 0) ? l : h), null)?.line ?? null;
  return {
    samplesA,
    samplesB,
    lines,
    largestGap: lines.reduce((g, l) => Math.max(g, Math.abs(l.shareA - l.shareB)), 0),
    hottestA: hottest(a),
    hottestB: hottest(b),
  };
}
