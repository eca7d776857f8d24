// The annotated SASS listing of one variant's kernel: instructions grouped by the source line the
// line table gives them, the focus loop's lines marked, and the loop's machine code cut into the
// pieces nvcc made of it (the ×16 main loop, a ×8 block that runs once, ×4 and ×1 remainder
// loops), each with the source iterations one pass runs.
import * as path from 'path';
import type { Kernel, Loop } from '../parse/model';
import { classifyInstruction, findSassLoops } from '../sass';
import type { SassFunction, SassInstruction, SassLoop } from '../sass';
import type { SassListingData, SassListingInstruction, SassListingLine, SassMachineLoop } from '../../protocol';
import { attachSassStalls, SassStalls } from '../profile/sassStalls';
import {
  containsOwnLines,
  hottestLoop,
  INTEGER_WORK_CLASSES,
  iterationsPerPass,
  lineIn,
  ownLineFilter,
  sameFile,
  WORK_CLASSES,
  workCounts,
} from './inspect';

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
export function instructionText(ins: SassInstruction): string {
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
    loops: machineLoops(fn, baseline, file, kernel, loop),
    labels: Object.fromEntries(Object.entries(fn.labels ?? {}).filter(([name]) => name.startsWith('.L'))),
    stalls: null,
    stallsNote: null,
  };
}

/**
 * The pieces of machine code holding the loop's work: every machine-code loop whose own
 * iterations run the loop's work, and the straight-line blocks of its work outside them (a
 * remainder that runs once, or the whole loop when it was unrolled completely).
 */
export function machineLoops(fn: SassFunction, baseline: SassFunction | null, file: string, kernel: Kernel, loop: Loop): SassMachineLoop[] {
  const exclude = ownLineFilter(kernel, loop);
  // Work classes as measureLoop picks them: arithmetic and memory, else integer work.
  let classes = WORK_CLASSES;
  let baseHot = baseline ? hottestLoop(baseline, file, loop, exclude, classes) : null;
  if (baseline && !baseHot) {
    classes = INTEGER_WORK_CLASSES;
    baseHot = hottestLoop(baseline, file, loop, exclude, classes);
  }
  if (!baseline) {
    const hasWork = fn.instructions.some(
      i => WORK_CLASSES.has(classifyInstruction(i)) && lineIn(i, file, loop.span.line, loop.span.endLine, exclude),
    );
    if (!hasWork) classes = INTEGER_WORK_CLASSES;
  }
  const perIteration = baseline && baseHot ? workCounts(baseline, baseHot.sassLoop, file, loop, exclude, classes) : null;
  // Per instruction, once: in the loop's lines, and work of its own lines.
  const inSpan = new Set<SassInstruction>();
  const workSet = new Set<SassInstruction>();
  for (const i of fn.instructions) {
    if (!lineIn(i, file, loop.span.line, loop.span.endLine)) continue;
    inSpan.add(i);
    if (classes.has(classifyInstruction(i)) && lineIn(i, file, loop.span.line, loop.span.endLine, exclude)) workSet.add(i);
  }
  const isWork = (i: SassInstruction) => workSet.has(i);

  // A machine-code loop that also runs the enclosing source loop's own code is the parent's
  // loop: work found there (the loop unrolled completely inside it) runs once per parent pass.
  const parent = loop.parentLine !== null ? kernel.loops.find(l => l.line === loop.parentLine) : undefined;
  const candidates = findSassLoops(fn).filter(l => l.natural && !(parent && containsOwnLines(fn, l, file, kernel, parent)));
  const innermost = (address: number): SassLoop | null => {
    let best: SassLoop | null = null;
    for (const l of candidates)
      if (address >= l.headAddress && address <= l.branchAddress && (!best || l.instructions < best.instructions)) best = l;
    return best;
  };

  const ins = fn.instructions;
  const pieces: { kind: 'loop' | 'once'; start: number; end: number }[] = [];
  const loopsWithWork = new Map<number, SassLoop>();
  for (const i of ins) {
    if (!isWork(i)) continue;
    const l = innermost(i.address);
    if (l) loopsWithWork.set(l.headAddress, l);
  }
  for (const l of loopsWithWork.values()) pieces.push({ kind: 'loop', start: l.headAddress, end: l.branchAddress });
  const inLoopPiece = (a: number) => pieces.some(p => p.kind === 'loop' && a >= p.start && a <= p.end);

  // Straight-line pieces: the loop's instructions outside those loops, one piece per basic
  // block (cut where a branch leaves or lands: a remainder block is one basic block). The
  // scheduler interleaves other lines' code, which stays inside a piece without counting.
  const targets = new Set<number>();
  for (const i of ins) if (i.target !== undefined) targets.add(i.target);
  let run: { start: number; end: number; work: number } | null = null;
  const close = () => {
    if (run && run.work > 0) pieces.push({ kind: 'once', start: run.start, end: run.end });
    run = null;
  };
  for (const i of ins) {
    if (targets.has(i.address) || inLoopPiece(i.address)) close();
    if (!inLoopPiece(i.address) && inSpan.has(i)) {
      if (!run) run = { start: i.address, end: i.address, work: 0 };
      run.end = i.address;
      if (isWork(i)) run.work++;
    }
    if (isBranch(i)) close();
  }
  close();
  pieces.sort((a, b) => a.start - b.start);

  const work = (p: { start: number; end: number }) => {
    const counts = new Map<string, number>();
    let total = 0;
    for (const i of ins) {
      if (i.address < p.start || i.address > p.end || !isWork(i)) continue;
      const key = `${i.opcode}.${i.modifiers.join('.')}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
      total++;
    }
    return { counts, total };
  };
  const measured = pieces.map(p => {
    const w = work(p);
    let unroll: number | null = null;
    if (perIteration && perIteration.size) {
      const m = Math.round(iterationsPerPass(perIteration, w.counts));
      unroll = m >= 1 ? m : null;
    }
    const lineSet = new Set<number>();
    let count = 0;
    for (const i of ins) {
      if (i.address < p.start || i.address > p.end) continue;
      count++;
      if (!inSpan.has(i)) continue;
      const f = displayFrame(i, file);
      if (f && sameFile(f.file, file)) lineSet.add(f.line);
    }
    return { ...p, unroll, total: w.total, sourceLines: [...lineSet].sort((a, b) => a - b), count };
  });
  const main = measured.reduce<number>(
    (best, p, k) =>
      best < 0 ||
      (p.kind === 'loop' && measured[best].kind !== 'loop') ||
      (p.kind === measured[best].kind && p.total > measured[best].total)
        ? k
        : best,
    -1,
  );
  return measured.map((p, k) => ({
    name: pieceName(k),
    startOffset: p.start,
    endOffset: p.end,
    sourceLines: p.sourceLines,
    unroll: p.unroll,
    kind: p.kind,
    role: k === main ? 'main' : 'remainder',
    instructions: p.count,
  }));
}

/** A, B, … Z, AA, AB … */
function pieceName(k: number): string {
  const letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
  return k < 26 ? letters[k] : pieceName(Math.floor(k / 26) - 1) + letters[k % 26];
}

/** The listing's file as its headers show it. */
export function shortFile(file: string | null): string {
  return file ? path.basename(file) : '?';
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
