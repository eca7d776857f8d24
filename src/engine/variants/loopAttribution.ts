// Attribution of machine code to a source loop: an instruction belongs to the loop when a frame
// of its line-table location (its own line or an inlined call site) lies in the loop's lines;
// the loop's own lines exclude those of loops nested in it.
import * as path from 'path';
import type { Kernel, Loop } from '../parse/model';
import { classifyInstruction, findSassLoops } from '../sass';
import type { SassFunction, SassInstruction, SassLoop } from '../sass';
import { WORK_CLASSES } from './appliedUnroll';

export function sameFile(a: string, b: string): boolean {
  return a === b || path.resolve(a) === path.resolve(b);
}

/** Does any frame of the instruction's location (own line or call sites) fall in [from, to] of file? */
export function lineIn(ins: SassInstruction, file: string, from: number, to: number, exclude?: (line: number) => boolean): boolean {
  const s = ins.source;
  if (!s) return false;
  const frames = [{ file: s.file, line: s.line }, ...(s.inlinedAt ?? [])];
  for (const f of frames) {
    if (f.line >= from && f.line <= to && sameFile(f.file, file)) return !(exclude && exclude(f.line));
  }
  return false;
}

/** Lines of the loop that belong to it and not to a nested loop (header and own statements). */
export function ownLineFilter(kernel: Kernel, loop: Loop): (line: number) => boolean {
  const nested = kernel.loops.filter(
    l => l !== loop && l.span.line >= loop.span.line && l.span.endLine <= loop.span.endLine && l.line !== loop.line,
  );
  return line => nested.some(n => line >= n.span.line && line <= n.span.endLine);
}

/** Work-instruction counts per opcode inside [head, branch] attributed to the loop's own lines. */
export function workCounts(
  fn: SassFunction,
  range: SassLoop | null,
  file: string,
  loop: Loop,
  exclude: (line: number) => boolean,
  classes = WORK_CLASSES,
): Map<string, number> {
  const counts = new Map<string, number>();
  for (const ins of fn.instructions) {
    if (range && (ins.address < range.headAddress || ins.address > range.branchAddress)) continue;
    if (!lineIn(ins, file, loop.span.line, loop.span.endLine, exclude)) continue;
    if (!classes.has(classifyInstruction(ins))) continue;
    const key = `${ins.opcode}.${ins.modifiers.join('.')}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/** The machine-code loop holding most of the source loop's own work: the hot (main) loop. */
export function hottestLoop(
  fn: SassFunction,
  file: string,
  loop: Loop,
  exclude: (line: number) => boolean,
  classes: Set<string>,
): { sassLoop: SassLoop; work: number } | null {
  let best: { sassLoop: SassLoop; work: number } | null = null;
  for (const l of findSassLoops(fn)) {
    if (!l.natural) continue;
    let work = 0;
    for (const c of workCounts(fn, l, file, loop, exclude, classes).values()) work += c;
    if (work === 0) continue;
    // Prefer more work; on a tie the inner (smaller) loop, which is the one that repeats.
    if (!best || work > best.work || (work === best.work && l.instructions < best.sassLoop.instructions)) best = { sassLoop: l, work };
  }
  return best;
}
