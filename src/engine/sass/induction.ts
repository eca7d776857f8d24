// Induction steps of a machine-code loop: how far each counter or pointer register moves per pass.
//
// An induction register is one whose every write inside the loop adds a constant to itself,
// unpredicated and outside any nested machine loop: `IADD3 R18, R18, 0x100, RZ`,
// `VIADD R20, R20, 0x40`, `IADD3 R4, P0, R4, 0x10, RZ` (the low half of a 64-bit pointer),
// `UIADD3 UR4, UR4, 0x1, URZ`, `IADD32I R2, R2, 0x4`. Its step per pass is the sum of those
// constants. A loop unrolled ×k moves each of them k times as far as the rolled loop does
// (NVIDIA's matrixMul `k` loop at unroll 8, sm_90: the As pointer 0x4 → 0x20 and the Bs pointer
// 0x80 → 0x400 per pass), a reading of the unroll that does not count the body's instructions:
// vectorised loads (one LDS.128 for four iterations' reads of As) leave it intact.
import type { SassFunction, SassInstruction } from './model';
import type { SassLoop } from './loops';

/** A register operand, `.reuse` and the like stripped; null for anything else. */
function registerName(op: string): string | null {
  const m = /^(U?R\d+)(?:\.[A-Za-z0-9_]+)*$/.exec(op.trim());
  return m ? m[1] : null;
}

/** A 32-bit integer immediate as a signed number; null when the operand is none. */
function immediate(op: string): number | null {
  const m = /^(-)?0x([0-9a-f]+)$/i.exec(op.trim());
  if (!m) return null;
  let v = parseInt(m[2], 16);
  if (!Number.isFinite(v) || v > 0xffffffff) return null;
  if (v > 0x7fffffff) v -= 0x100000000;
  return m[1] ? -v : v;
}

const isPredicateOperand = (op: string) => /^!?U?P(T|\d)$/.test(op.trim());
const isZero = (op: string) => /^U?RZ$/.test(op.trim());

/** Registers written by an instruction: the first operand when it is a register (with its width). */
function writtenRegisters(ins: SassInstruction): string[] {
  const ops = ins.operands.split(',');
  const first = registerName(ops[0] ?? '');
  if (!first) return [];
  const m = /^(U?R)(\d+)$/.exec(first)!;
  let width = 1;
  if (ins.modifiers.includes('128')) width = 4;
  else if (ins.modifiers.includes('64') || ins.modifiers.includes('WIDE')) width = 2;
  else if (/MMA$/.test(ins.opcode)) width = 8;
  const out: string[] = [];
  for (let k = 0; k < width; k++) out.push(`${m[1]}${Number(m[2]) + k}`);
  return out;
}

/** `r = r + imm` (see the file header): the register and the constant; null for any other instruction. */
function selfAdd(ins: SassInstruction): { reg: string; step: number } | null {
  if (ins.predicate) return null;
  const op = ins.opcode;
  if (!['IADD3', 'VIADD', 'UIADD3', 'IADD32I', 'IADD'].includes(op)) return null;
  if (ins.modifiers.some(m => m === 'X')) return null;
  const ops = ins.operands.split(',').map(s => s.trim());
  const dest = registerName(ops[0] ?? '');
  if (!dest) return null;
  // Carry-out predicates (`IADD3 R4, P0, R4, 0x10, RZ`) and PT placeholders are no sources.
  const sources = ops.slice(1).filter(s => !isPredicateOperand(s) && !isZero(s));
  if (sources.length !== 2) return null;
  const self = sources.findIndex(s => registerName(s) === dest);
  if (self < 0) return null;
  const step = immediate(sources[1 - self]);
  return step === null || step === 0 ? null : { reg: dest, step };
}

/**
 * The induction steps per pass of `loop` (distinct absolute values, ascending): the registers
 * written only by adding a constant to themselves in the loop's own code (instructions inside a
 * nested machine loop of `all` disqualify a register they write).
 */
export function inductionSteps(fn: SassFunction, loop: SassLoop, all: SassLoop[]): number[] {
  const nested = all.filter(
    l => l !== loop && l.headAddress >= loop.headAddress && l.branchAddress <= loop.branchAddress && l.instructions < loop.instructions,
  );
  const inNested = (a: number) => nested.some(l => a >= l.headAddress && a <= l.branchAddress);
  const steps = new Map<string, number>();
  const spoiled = new Set<string>();
  for (const ins of fn.instructions) {
    if (ins.address < loop.headAddress || ins.address > loop.branchAddress) continue;
    const add = inNested(ins.address) ? null : selfAdd(ins);
    if (add) {
      steps.set(add.reg, (steps.get(add.reg) ?? 0) + add.step);
      continue;
    }
    for (const r of writtenRegisters(ins)) spoiled.add(r);
  }
  const out = new Set<number>();
  for (const [r, s] of steps) if (!spoiled.has(r) && s !== 0) out.add(Math.abs(s));
  return [...out].sort((a, b) => a - b);
}

/**
 * The factor k by which a loop's induction steps grew against the rolled loop's: each step of
 * `unrolled` that is k times a step of `rolled` and each step of `rolled` whose k-fold is a step
 * of `unrolled` counts for k. The k that explains most wins when it explains at least half of the
 * unrolled steps and at least one rolled step; a tie between two values (or no steps) gives null
 * with the reason.
 */
export function stepRatio(unrolled: number[], rolled: number[]): { factor: number | null; reason: string } {
  if (!unrolled.length || !rolled.length)
    return { factor: null, reason: `no constant induction step in the ${unrolled.length ? 'rolled' : 'unrolled'} machine loop` };
  const u = new Set(unrolled);
  const r = new Set(rolled);
  const candidates = new Set<number>();
  for (const a of u) for (const b of r) if (a % b === 0) candidates.add(a / b);
  let best: { k: number; score: number; byU: number; byR: number } | null = null;
  let tie = false;
  for (const k of candidates) {
    const byU = [...u].filter(a => a % k === 0 && r.has(a / k)).length;
    const byR = [...r].filter(b => u.has(b * k)).length;
    if (byU * 2 < u.size || byR < 1) continue;
    const score = byU + byR;
    if (!best || score > best.score) {
      best = { k, score, byU, byR };
      tie = false;
    } else if (score === best.score) tie = true;
  }
  const show = (s: Set<number>) => [...s].map(x => `0x${x.toString(16)}`).join(', ');
  if (!best) return { factor: null, reason: `induction steps ${show(u)} are no common multiple of the rolled loop's ${show(r)}` };
  if (tie) return { factor: null, reason: `induction steps ${show(u)} against the rolled loop's ${show(r)} fit more than one factor` };
  return { factor: best.k, reason: `induction steps ${show(u)} against the rolled loop's ${show(r)}` };
}
