// Copies of one source loop in one function's machine code. A loop in a device function that is
// inlined at two call sites (ggml's fattn-tile: once in the main loop, again in a bounds-checked
// tail call after it) has two copies, each with its own machine loops or unrolled code. Read as
// one, the second copy's machine loop looks like a remainder loop, and a full unroll counts one
// copy only. The line table tells them apart: an instruction of the loop carries the call sites
// it was inlined at (nvdisasm -gi), and each chain of call sites is one copy.
import * as path from 'path';
import type { Loop } from '../parse/model';
import type { SassFunction, SassInstruction } from '../sass';
import { sameFile } from './loopAttribution';

/** One copy of the loop: where it was inlined (call-site lines, innermost first; empty: not inlined). */
/** The place of copies made at one place in the source (a loop around it unrolled), before ", copy N". */
export const ONE_CALL_SITE = 'one call site';

export interface LoopCopyPlace {
  key: string;
  /** "inlined at line 14", "inlined at line 30 ← fattn.cu:88", or "not inlined". */
  label: string;
}

/**
 * The copy an instruction of the loop belongs to: the call-site chain after the frame that lies in
 * the loop's lines (the same frame lineIn matches); null when no frame does.
 */
function copyKeyOf(ins: SassInstruction, file: string, loop: Loop): string | null {
  const s = ins.source;
  if (!s) return null;
  const frames = [{ file: s.file, line: s.line }, ...(s.inlinedAt ?? [])];
  const at = frames.findIndex(f => f.line >= loop.span.line && f.line <= loop.span.endLine && sameFile(f.file, file));
  if (at < 0) return null;
  return frames
    .slice(at + 1)
    .map(f => `${sameFile(f.file, file) ? '' : `${path.basename(f.file)}:`}${f.line}`)
    .join(' ← ');
}

function labelOf(key: string): string {
  if (!key) return 'not inlined';
  return `inlined at ${key
    .split(' ← ')
    .map(k => (k.includes(':') ? k : `line ${k}`))
    .join(' ← ')}`;
}

/** The copies of the loop in `fn`, in address order; one (or none) for a loop that appears once. */
export function loopCopies(fn: SassFunction, file: string, loop: Loop): LoopCopyPlace[] {
  const seen = new Map<string, LoopCopyPlace>();
  for (const ins of fn.instructions) {
    const key = copyKeyOf(ins, file, loop);
    if (key !== null && !seen.has(key)) seen.set(key, { key, label: labelOf(key) });
  }
  return [...seen.values()];
}

/**
 * `fn` as seen by one copy of the loop: the other copies' instructions keep their addresses and
 * branches (the machine loops stay as they are) but lose their source lines, so nothing of
 * theirs is counted as this loop's.
 */
export function onlyCopy(fn: SassFunction, file: string, loop: Loop, key: string): SassFunction {
  return {
    ...fn,
    instructions: fn.instructions.map(ins => {
      const k = copyKeyOf(ins, file, loop);
      return k === null || k === key ? ins : { ...ins, source: undefined };
    }),
  };
}
