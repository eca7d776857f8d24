// The annotated SASS listing of one variant's kernel: instructions grouped by the source line the
// line table gives them, the focus loop's lines marked, and the loop's machine code cut into the
// pieces nvcc made of it (the ×16 main loop, a ×8 block that runs once, ×4 and ×1 remainder
// loops), each with the source iterations one pass runs.
import type { Kernel, Loop } from '../parse/model';
import { classifyInstruction } from '../sass';
import type { SassFunction, SassInstruction } from '../sass';
import type { SassListingData, SassListingInstruction, SassListingLine, SassMachineLoop } from '../../schema/sassListing';
import { attachSassStalls, SassStalls } from '../profile/sassStalls';
import { lineIn, sameFile } from './loopAttribution';
import { appliedUnroll, copiesOf, inSpan, isHeaderOnly, perIterationProfile, profile, WORK_CLASSES } from './appliedUnroll';

export interface ListingContext {
  /** The source file the listing is grouped by (the .cu file, or the header built through a unit). */
  file: string;
  kernel: Kernel;
  /** The focus loop. */
  loop: Loop;
  arch: string;
  nvcc: string | null;
  /** as-written, default, full or the number. */
  factor: string;
  demangled: string;
  registers: number | null;
}

/** The instruction as nvdisasm printed it (without the ';'). */
function instructionText(ins: SassInstruction): string {
  const op = ins.modifiers.length ? `${ins.opcode}.${ins.modifiers.join('.')}` : ins.opcode;
  return `${ins.predicate ? ins.predicate + ' ' : ''}${op}${ins.operands ? ' ' + ins.operands : ''}`;
}

/**
 * The line an instruction is shown under: the innermost frame of its inline chain that lies in
 * `file` (so a helper inlined from the same file shows its own line), else its outermost frame
 * (code of an inlined library function belongs where the user's kernel called it).
 */
function displayFrame(ins: SassInstruction, file: string): { file: string; line: number } | null {
  const s = ins.source;
  if (!s) return null;
  const frames = [{ file: s.file, line: s.line }, ...(s.inlinedAt ?? [])];
  for (const f of frames) if (sameFile(f.file, file)) return f;
  return frames[frames.length - 1];
}

/** Ends a basic block: the next instruction starts a new one. */
function isBranch(ins: SassInstruction): boolean {
  return ['BRA', 'BRX', 'BRXU', 'JMP', 'JMX', 'JMXU', 'RET', 'EXIT', 'CALL', 'BREAK'].includes(ins.opcode);
}

export function annotateListing(fn: SassFunction, baseline: SassFunction | null, c: ListingContext): SassListingData {
  const { file, kernel, loop } = c;
  const from = loop.span.line;
  const to = loop.span.endLine;
  const lines: SassListingLine[] = [];
  let current: SassListingLine | null = null;
  for (const ins of fn.instructions) {
    const frame = displayFrame(ins, file);
    const inLoop = lineIn(ins, file, from, to);
    const sourceLine = frame?.line ?? null;
    const srcFile = frame?.file ?? null;
    if (!current || current.sourceLine !== sourceLine || current.file !== srcFile || current.inLoop !== inLoop) {
      current = { sourceLine, file: srcFile, inLoop, opcodes: {}, instructions: [] };
      lines.push(current);
    }
    const entry: SassListingInstruction = { offset: ins.address, opcode: ins.opcode, text: instructionText(ins) };
    current.instructions.push(entry);
    current.opcodes[ins.opcode] = (current.opcodes[ins.opcode] ?? 0) + 1;
  }
  return {
    kernel: fn.name,
    demangled: c.demangled,
    arch: c.arch,
    nvcc: c.nvcc,
    factor: c.factor,
    file,
    loopLine: loop.line,
    loopLines: { from, to },
    instructions: fn.instructions.length,
    bytes: fn.bytes,
    registers: c.registers ?? fn.registers ?? null,
    lines,
    loops: machineLoops(fn, baseline, file, kernel, loop, c.demangled),
    labels: Object.fromEntries(Object.entries(fn.labels ?? {}).filter(([name]) => name.startsWith('.L'))),
    stalls: null,
    stallsNote: null,
  };
}

/**
 * The pieces of machine code holding the loop's work (appliedUnroll.ts): the loop's own machine
 * loops (by their back edges) and the straight-line blocks of its work outside them (a remainder
 * that runs once, or the whole loop when it was unrolled completely; inside an enclosing machine
 * loop such a block runs once per pass of it, `perPass`).
 */
function machineLoops(
  fn: SassFunction,
  baseline: SassFunction | null,
  file: string,
  kernel: Kernel,
  loop: Loop,
  demangled?: string,
): SassMachineLoop[] {
  const a = appliedUnroll(fn, baseline, file, kernel, loop, demangled);
  const per = baseline ? perIterationProfile(baseline, file, kernel, loop) : null;
  const classes = per?.classes ?? WORK_CLASSES;
  const isWork = (i: SassInstruction) =>
    classes.has(classifyInstruction(i)) && inSpan(i, file, loop) && !isHeaderOnly(i, file, kernel, loop);
  const ins = fn.instructions;
  const pieces: { kind: 'loop' | 'once'; start: number; end: number; unroll: number | null }[] = a.loops.map((l, k) => ({
    kind: 'loop',
    start: l.headAddress,
    end: l.branchAddress,
    unroll: a.loopCopies[k] || null,
  }));
  const inLoopPiece = (addr: number) => a.loops.some(l => addr >= l.headAddress && addr <= l.branchAddress);

  // Straight-line pieces: the loop's instructions outside its machine loops, one piece per basic
  // block (cut where a branch leaves or lands: a remainder block is one basic block). The
  // scheduler interleaves other lines' code, which stays inside a piece without counting.
  const targets = new Set<number>();
  for (const i of ins) if (i.target !== undefined) targets.add(i.target);
  const runs: { start: number; end: number; work: number }[] = [];
  let run: { start: number; end: number; work: number } | null = null;
  const close = () => {
    if (run && run.work > 0) runs.push(run);
    run = null;
  };
  for (const i of ins) {
    if (targets.has(i.address) || inLoopPiece(i.address)) close();
    if (!inLoopPiece(i.address) && inSpan(i, file, loop)) {
      if (!run) run = { start: i.address, end: i.address, work: 0 };
      run.end = i.address;
      if (isWork(i)) run.work++;
    }
    if (isBranch(i)) close();
  }
  close();
  for (const r of runs) {
    let unroll: number | null = null;
    if (a.fullyUnrolled && runs.length === 1 && a.copies !== null) unroll = a.copies;
    else if (per) {
      const c = copiesOf(
        per.counts,
        profile(fn, file, loop, classes, i => i.address >= r.start && i.address <= r.end && isWork(i)),
      );
      unroll = c > 0 ? c : null;
    }
    pieces.push({ kind: 'once', start: r.start, end: r.end, unroll });
  }
  pieces.sort((x, y) => x.start - y.start);

  const enclosing = a.enclosing;
  const measured = pieces.map(p => {
    let total = 0;
    let count = 0;
    const lineSet = new Set<number>();
    for (const i of ins) {
      if (i.address < p.start || i.address > p.end) continue;
      count++;
      if (isWork(i)) total++;
      if (!inSpan(i, file, loop)) continue;
      const f = displayFrame(i, file);
      if (f && sameFile(f.file, file)) lineSet.add(f.line);
    }
    const perPass = p.kind === 'once' && enclosing !== null && p.start >= enclosing.headAddress && p.end <= enclosing.branchAddress;
    return { ...p, total, count, sourceLines: [...lineSet].sort((x, y) => x - y), perPass };
  });
  // The main piece: the main machine loop, else (unrolled completely) the block with most work.
  const main = a.loops.length
    ? measured.findIndex(p => p.kind === 'loop' && p.start === a.loops[0].headAddress)
    : measured.reduce<number>((best, p, k) => (best < 0 || p.total > measured[best].total ? k : best), -1);
  return measured.map((p, k) => ({
    name: pieceName(k),
    startOffset: p.start,
    endOffset: p.end,
    sourceLines: p.sourceLines,
    unroll: p.unroll,
    kind: p.kind,
    role: k === main ? 'main' : 'remainder',
    instructions: p.count,
    ...(p.perPass ? { perPass: true } : {}),
  }));
}

/** A, B, … Z, AA, AB … */
function pieceName(k: number): string {
  const letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
  return k < 26 ? letters[k] : pieceName(Math.floor(k / 26) - 1) + letters[k % 26];
}

/**
 * Puts a GPU run's per-instruction stall samples beside the listing's instructions when the run
 * sampled the same machine code; otherwise the listing says why it has none. `source` says where
 * the samples came from ("the GPU benchmark of line 51 (as written)", a file name …).
 */
export function withStalls(listing: SassListingData, stalls: SassStalls, source: string): SassListingData {
  const instructions = listing.lines.flatMap(l => l.instructions);
  const r = attachSassStalls(instructions, stalls);
  if (!r.matched) return { ...listing, stalls: null, stallsNote: `stall samples from ${source} not shown: ${r.note}` };
  return {
    ...listing,
    lines: listing.lines.map(l => ({
      ...l,
      instructions: l.instructions.map(i => {
        const s = r.byOffset.get(i.offset);
        return s ? { ...i, stall: s } : { ...i };
      }),
    })),
    stalls: { samples: stalls.totalSamples, source },
    stallsNote: r.note,
  };
}
