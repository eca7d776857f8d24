// Reader for `nvdisasm` output (with or without -c, -g, -gi).
//
//   \t.target\tsm_90
//   //--------------------- .text._Z9mm_pragmaILi16EEvPKfS1_Pfi ------------------
//   \t.section\t.text._Z9mm_pragmaILi16EEvPKfS1_Pfi,"ax",@progbits
//   \t.sectioninfo\t@"SHI_REGISTERS=10"                 (some architectures)
//   _Z9mm_pragmaILi16EEvPKfS1_Pfi:
//   \t//## File "/home/dev/kernels/matmul.cu", line 42
//           /*0000*/                   LDC R1, c[0x0][0x28] ;
//   .L_x_2:
//           /*0670*/               @P1 BRA `(.L_x_2) ;
//
// One SassFunction per `.text.<name>` section (a non-inlined device function that ptxas placed
// inside its caller's section, e.g. `$_Z11shared_callPfPKfi$_Z6helperPKfi:`, stays part of that
// section, as in cuobjdump's listing; its entry shows up in `labels`). Lines of other sections
// (`.nv.info`, `.debug_frame` … without -c) are skipped, although they have `/*addr*/` columns.
//
// Source lines (-g / -gi): a `//## File` comment applies to every instruction after it until the
// next one (and never across sections). With -gi, nvdisasm prints the whole inline chain as
// consecutive comments, innermost frame first, each naming its call site, e.g.
//
//   //## File ".../sm_30_intrinsics.hpp", line 449 inlined at ".../sasstest.cu", line 59
//   //## File ".../sasstest.cu", line 59 inlined at ".../sasstest.cu", line 62
//   //## File ".../sasstest.cu", line 62 inlined at ".../sasstest.cu", line 66
//   //## File ".../sasstest.cu", line 66
//           /*00b0*/                   SHFL.BFLY PT, R9, R2, 0x1, 0x1f ;
//
// Consecutive comments (no instruction between them) whose first frame continues the chain
// (equals one of its call sites) are merged into one location: here sm_30_intrinsics.hpp:449
// inlined at [sasstest.cu:59, sasstest.cu:62, sasstest.cu:66]. A comment that does not continue
// the chain replaces it.
import type { SassFunction, SassInstruction, SassListing, SourceFrame, SourceLocation } from './model';
import {
  findSmArch,
  forEachLineRange,
  instructionBytesFor,
  instructionEnd,
  parseInstructionRange,
  readAddress,
  readInt,
  resolveLabels,
  skipBlanks,
} from './text';

export function parseNvdisasm(text: string): SassListing {
  const listing: SassListing = { arch: null, functions: [] };
  if (typeof text !== 'string' || text.length === 0) return listing;

  let fn: SassFunction | null = null;
  let labels: Record<string, number> = Object.create(null);
  let pendingLabels: string[] = [];
  let chain: SourceFrame[] | null = null; // [innermost, call site 1, call site 2, …]
  let location: SourceLocation | undefined;
  let commentsOpen = false; // the last source comment was not followed by an instruction yet

  const closeFunction = (): void => {
    if (!fn) return;
    const n = fn.instructions.length;
    fn.bytes = n === 0 ? 0 : fn.instructions[n - 1].address + instructionBytesFor(listing.arch);
    for (const l of pendingLabels) labels[l] = fn.bytes;
    pendingLabels = [];
    resolveLabels(fn.instructions, labels);
    fn.labels = labels;
    fn = null;
  };
  const resetSource = (): void => {
    chain = null;
    location = undefined;
    commentsOpen = false;
  };

  forEachLineRange(text, (start, end) => {
    const i = skipBlanks(text, start, end);
    if (i >= end) return;
    const c = text.charCodeAt(i);

    if (c === 47 /* / */) {
      if (text.charCodeAt(i + 1) === 47) {
        // `//## File …` source comment, or a `//----- .text.x -----` banner.
        if (fn && text.startsWith('//##', i)) {
          const frames = parseFileComment(text.substring(i, end), 4);
          if (frames) {
            chain = commentsOpen && chain ? continueChain(chain, frames) : frames;
            location = toLocation(chain);
            commentsOpen = true;
          }
        }
        return;
      }
      // Hot path: an instruction line, read in place.
      if (!fn) return;
      const a = readAddress(text, i, end);
      if (!a) return;
      const ins: SassInstruction | null = parseInstructionRange(text, a.next, instructionEnd(text, a.next, end), a.address, location);
      if (!ins) return;
      commentsOpen = false;
      if (pendingLabels.length > 0) {
        for (const l of pendingLabels) labels[l] = ins.address;
        pendingLabels = [];
      }
      fn.instructions.push(ins);
      return;
    }

    const line = text.substring(i, end);
    if (c === 46 /* . */) {
      const after = line.charCodeAt(8);
      if (line.startsWith('.section') && (after === 32 || after === 9)) {
        closeFunction();
        resetSource();
        labels = Object.create(null);
        const name = sectionName(line, 8);
        if (name && name.startsWith('.text.') && name.length > 6) {
          fn = { name: name.substring(6), instructions: [], bytes: 0, arch: listing.arch };
          listing.functions.push(fn);
        }
        return;
      }
      if (readInfoDirective(line, listing, fn)) return;
    }

    // A label: one token ending in ':' (".L_x_3:", "_Z…:", ".text._Z…:", "$a$b:").
    if (fn && line.charCodeAt(line.length - 1) === 58 /* : */) {
      const label = line.substring(0, line.length - 1);
      if (label.length > 0 && label.indexOf(' ') < 0 && label.indexOf('\t') < 0) pendingLabels.push(label);
    }
  });
  closeFunction();
  for (const f of listing.functions) f.arch = listing.arch;
  return listing;
}

/**
 * `.sectioninfo` (the function's registers), `.target` or `.headerflags` (the listing's
 * architecture, from the first that names it): read into `fn` or `listing`. False for any other line.
 */
function readInfoDirective(line: string, listing: SassListing, fn: SassFunction | null): boolean {
  if (line.startsWith('.sectioninfo')) {
    const k = line.indexOf('SHI_REGISTERS=');
    if (fn && k >= 0) {
      const r = readInt(line, k + 14);
      if (r) fn.registers = r.value;
    }
    return true;
  }
  if (line.startsWith('.target')) {
    if (listing.arch === null) listing.arch = findSmArch(line.substring(7));
    return true;
  }
  if (line.startsWith('.headerflags')) {
    if (listing.arch === null) {
      const k = line.indexOf('EF_CUDA_SM');
      const r = k >= 0 ? readInt(line, k + 10) : null;
      if (r) listing.arch = 'sm_' + r.value;
    }
    return true;
  }
  return false;
}

/** The section name after `.section`, up to the first ',' or blank. */
function sectionName(line: string, from: number): string | null {
  const i = skipBlanks(line, from);
  let j = i;
  while (j < line.length) {
    const ch = line.charCodeAt(j);
    if (ch === 44 /* , */ || ch === 32 || ch === 9) break;
    j++;
  }
  return j > i ? line.substring(i, j) : null;
}

/**
 * Parses ` File "path", line N[ inlined at "path", line M]…` (from after the `//##`).
 * Returns the frames in order (the file itself first, then each call site), or null.
 */
export function parseFileComment(line: string, from: number): SourceFrame[] | null {
  let i = skipBlanks(line, from);
  if (!line.startsWith('File', i)) return null;
  const first = readFrame(line, i + 4);
  if (!first) return null;
  const frames: SourceFrame[] = [first.frame];
  i = first.next;
  for (;;) {
    const k = line.indexOf('inlined at', i);
    if (k < 0) break;
    const f = readFrame(line, k + 10);
    if (!f) break;
    frames.push(f.frame);
    i = f.next;
  }
  return frames;
}

/** Reads ` "path", line N` starting at `from`. */
function readFrame(line: string, from: number): { frame: SourceFrame; next: number } | null {
  const q1 = line.indexOf('"', from);
  if (q1 < 0) return null;
  const q2 = line.indexOf('"', q1 + 1);
  if (q2 < 0) return null;
  const file = line.substring(q1 + 1, q2);
  const k = line.indexOf('line', q2 + 1);
  if (k < 0) return null;
  const r = readInt(line, skipBlanks(line, k + 4));
  if (!r) return null;
  return { frame: { file, line: r.value }, next: r.next };
}

function sameFrame(a: SourceFrame, b: SourceFrame): boolean {
  return a.line === b.line && a.file === b.file;
}

/** Merges the frames of the next comment of the same group into the chain (see file header). */
function continueChain(chain: SourceFrame[], frames: SourceFrame[]): SourceFrame[] {
  for (let k = chain.length - 1; k >= 1; k--) {
    if (sameFrame(chain[k], frames[0])) return chain.slice(0, k).concat(frames);
  }
  return frames;
}

function toLocation(chain: SourceFrame[]): SourceLocation {
  const loc: SourceLocation = { file: chain[0].file, line: chain[0].line };
  if (chain.length > 1) loc.inlinedAt = chain.slice(1).map(f => ({ ...f }));
  return loc;
}

/**
 * The location in the function that owns the code: the last call site of an inline chain, or
 * the location itself when nothing was inlined. This is the line of the user's kernel that an
 * instruction belongs to.
 */
export function outermostLocation(loc: SourceLocation): SourceFrame {
  const at = loc.inlinedAt;
  if (at && at.length > 0) return at[at.length - 1];
  return { file: loc.file, line: loc.line };
}
