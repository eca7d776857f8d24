// How fast a loop's machine code wants instructions, from the SASS alone: the instruction-cache
// model (icache/model.ts) predicts a fetch penalty from this demand, because a miss costs
// a warp that could issue every cycle far more than one that waits on its own dependency chain.
//
// One pass of the hot code is replayed in order for one warp (a warp issues in program order):
// an instruction issues one cycle after the previous one at the earliest, and not before its
// source registers are ready. Two passes are replayed so that values carried from one pass to
// the next count; the second pass's length is the latency-bound time per pass. Several warps on
// one SM sub-partition (SMSP) hide each other's latency until the issue slot (one instruction
// per cycle) or a functional unit is full.
//
// Latencies and per-SMSP throughputs are for sm_80/sm_90-class SMs (128 FP32 lanes, 64 INT32,
// 64 FP64 (sm_80/90), 16 SFU and 32 load/store lanes per SM; 4 SMSPs). Fixed-latency ALU values
// are the 4-cycle dependent-issue distance the calibration grid measures for FFMA (2.04 ns per
// dependent FFMA at 1.98 GHz on the H100: docs/measurements.md); memory values are cache-hit
// latencies, because a loop the model is asked about is compute-bound enough for its code size
// to matter.
import type { SassInstruction } from './model';
import { classifyInstruction, type SassClass } from './histogram';

/** Functional units that limit throughput, and their rate per SMSP (warp instructions per cycle). */
const PIPE_RATES = {
  /** FP32 FMA/ADD/MUL: both FMA pipes (heavy + lite). */
  fma: 1,
  /** IMAD and friends: the FMA-heavy pipe only (shares the FMA issue with FP32). */
  fmaHeavy: 0.5,
  /** Integer ALU: IADD3, LOP3, SHF, ISETP, SEL, PRMT, LEA, moves … */
  alu: 0.5,
  fp64: 0.5,
  /** MUFU and conversions (the XU). */
  xu: 0.125,
  /** Loads, stores, shuffles, atomics: 32 lanes per SM. */
  lsu: 0.25,
  tensor: 0.5,
  branch: 0.5,
  uniform: 1,
} as const;
type Pipe = keyof typeof PIPE_RATES;

/** What one pass of a loop's hot machine code asks of an SMSP. */
export interface IssueProfile {
  /** Instructions in one pass (NOPs excluded: ptxas pads with them after the loop's branch). */
  instructions: number;
  /** Cycles one warp needs for one pass when nothing but its own dependencies holds it back. */
  latencyCycles: number;
  /** Issue cycles per functional unit in one pass, in units of one instruction at the unit's rate. */
  pipes: Partial<Record<Pipe, number>>;
  /** The most common work opcode (FFMA, IMAD, LDG, DFMA …): how the basis names the loop. */
  mainOpcode: string;
  /** Independent dependency chains the pass interleaves: instructions over the longest chain's length. */
  chains: number;
  /** Loads from memory (global, local, texture) per pass. */
  loads: number;
}

const LATENCY: Partial<Record<SassClass, number>> = {
  FP32: 4,
  INT: 4,
  MOVE: 4,
  UNIFORM: 2,
  FP64: 8,
  CONVERT: 12,
  SPECIAL: 16,
  LOAD_GLOBAL: 33,
  LOCAL: 33,
  TEXTURE: 40,
  SHARED: 23,
  CONST: 8,
  SHUFFLE: 23,
  ATOMIC: 40,
  FP16_TENSOR: 16,
};

function pipeOf(ins: SassInstruction, cls: SassClass): Pipe | null {
  switch (cls) {
    case 'FP32':
      return 'fma';
    case 'INT':
      return ins.opcode === 'IMAD' || ins.opcode === 'IMUL' || ins.opcode === 'IMAD32I' || ins.opcode === 'IDP' ? 'fmaHeavy' : 'alu';
    case 'MOVE':
      return ins.opcode === 'IMAD' ? 'fmaHeavy' : ins.opcode === 'S2R' || ins.opcode === 'S2UR' ? 'xu' : 'alu';
    case 'FP64':
      return 'fp64';
    case 'SPECIAL':
    case 'CONVERT':
      return 'xu';
    case 'LOAD_GLOBAL':
    case 'STORE_GLOBAL':
    case 'SHARED':
    case 'LOCAL':
    case 'ATOMIC':
    case 'TEXTURE':
    case 'SHUFFLE':
      return 'lsu';
    case 'CONST':
      return ins.opcode === 'ULDC' ? 'uniform' : 'lsu';
    case 'FP16_TENSOR':
      return /MMA$/.test(ins.opcode) ? 'tensor' : 'fma';
    case 'BRANCH':
    case 'SYNC':
      return 'branch';
    case 'UNIFORM':
      return 'uniform';
    default:
      return null;
  }
}

// A 64-bit-result multiply (IMAD.WIDE): fitted to the grid's int64 points at 4 KiB (dependent
// multiply-shift-xor chain: 20.5 cycles per step with one warp; 0.67 instructions per cycle per
// SMSP with 2–8 warps), where the 4-cycle, one-slot values left the time 20–40 % short.
const WIDE_MULTIPLY_LATENCY = 8;
const WIDE_MULTIPLY_SLOTS = 3;

// One warp alone issues loads slower than the load/store unit's rate: the grid's load loops
// (128 independent L1-hit LDGs per pass) took 660–720 cycles per pass with one warp per SMSP
// and the unit's 4 cycles per LDG from 2 warps up. Fitted to those 4 KiB points like the
// multiply above: one warp's loads at most one per 5.4 cycles.
const LSU_RATE_PER_WARP = 1 / 5.4;

const STORES = new Set<SassClass>(['STORE_GLOBAL']);
const NO_DEST_OPS = new Set(['STS', 'STL', 'ST', 'STG', 'RED', 'REDG', 'BAR', 'BRA', 'EXIT', 'MEMBAR', 'BSYNC', 'BSSY', 'WARPSYNC', 'NOP']);
const REG = /\b(U?R\d+|U?P\d+)(?:\.(64|128))?\b|\[([^\]]*)\]/g;

/** Registers an operand text names, a register pair or quad counted as its parts. */
function registers(text: string, wide: number): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(REG)) {
    if (m[3] !== undefined) {
      out.push(...registers(m[3], 1));
      continue;
    }
    const name = m[1];
    const width = m[2] === '64' ? 2 : m[2] === '128' ? 4 : wide;
    out.push(...expand(name, width));
  }
  return out;
}

function expand(name: string, width: number): string[] {
  if (width === 1 || name.includes('P')) return [name];
  const prefix = name.startsWith('U') ? 'UR' : 'R';
  const n = Number(name.slice(prefix.length));
  return Array.from({ length: width }, (_, i) => `${prefix}${n + i}`);
}

function destWidth(ins: SassInstruction): number {
  const m = ins.modifiers;
  if (m.includes('128')) return 4;
  if (m.includes('WIDE') || m.includes('64') || ins.opcode.startsWith('D') || m.includes('F64')) return 2;
  return 1;
}

function splitOperands(operands: string): string[] {
  // Commas inside [...] or {...} do not separate operands.
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < operands.length; i++) {
    const c = operands[i];
    if (c === '[' || c === '{') depth++;
    else if (c === ']' || c === '}') depth--;
    else if (c === ',' && depth === 0) {
      out.push(operands.slice(start, i).trim());
      start = i + 1;
    }
  }
  if (operands.slice(start).trim()) out.push(operands.slice(start).trim());
  return out;
}

interface Decoded {
  dests: string[];
  sources: string[];
  latency: number;
  /** Cycles of its unit's issue the instruction takes, in units of 1 / rate. */
  slots: number;
  pipe: Pipe | null;
  cls: SassClass;
}

function decode(ins: SassInstruction): Decoded {
  const cls = classifyInstruction(ins);
  const ops = splitOperands(ins.operands);
  const sources: string[] = [];
  const dests: string[] = [];
  if (ins.predicate) sources.push(ins.predicate.replace(/^@!?/, ''));
  const hasDest = !STORES.has(cls) && !NO_DEST_OPS.has(ins.opcode) && ops.length > 0 && /^U?[RP]\d+/.test(ops[0]);
  const wide = destWidth(ins);
  let i = 0;
  if (hasDest) {
    dests.push(...registers(ops[0], wide));
    i = 1;
    // IADD3 R4, P0, … / LEA R2, P1, …: carry-out predicates written next to the result.
    while (i < ops.length - 1 && /^U?P\d+$/.test(ops[i])) dests.push(ops[i++]);
  }
  const srcWide = ins.opcode.startsWith('D') ? 2 : 1;
  for (; i < ops.length; i++) sources.push(...registers(ops[i], srcWide));
  return {
    dests: dests.filter(r => !/^U?(RZ|PT)$/.test(r)),
    sources: sources.filter(r => !/^U?(RZ|PT)$/.test(r)),
    latency: ins.opcode === 'IMAD' && ins.modifiers.includes('WIDE') ? WIDE_MULTIPLY_LATENCY : (LATENCY[cls] ?? 4),
    slots: ins.opcode === 'IMAD' && ins.modifiers.includes('WIDE') ? WIDE_MULTIPLY_SLOTS : 1,
    pipe: pipeOf(ins, cls),
    cls,
  };
}

const WORK = new Set<SassClass>(['FP32', 'FP64', 'FP16_TENSOR', 'INT', 'LOAD_GLOBAL', 'SHARED', 'SPECIAL', 'SHUFFLE', 'CONVERT']);

/** The issue profile of one pass over `code` (a loop's hot machine code, in address order). */
export function issueProfile(code: SassInstruction[]): IssueProfile {
  const body = code.filter(i => i.opcode !== 'NOP');
  const decoded = body.map(decode);
  const pipes: Partial<Record<Pipe, number>> = {};
  const opcodes = new Map<string, number>();
  let loads = 0;
  for (let k = 0; k < body.length; k++) {
    const d = decoded[k];
    if (d.pipe) pipes[d.pipe] = (pipes[d.pipe] ?? 0) + d.slots;
    if (WORK.has(d.cls) && !(body[k].opcode === 'IMAD' && body[k].modifiers.includes('MOV')))
      opcodes.set(body[k].opcode, (opcodes.get(body[k].opcode) ?? 0) + 1);
    if (d.cls === 'LOAD_GLOBAL' || d.cls === 'LOCAL' || d.cls === 'TEXTURE') loads++;
  }
  // In-order replay, two passes: ready[r] is the cycle register r's value is available.
  const ready = new Map<string, number>();
  // depth[r]: the longest dependent chain (in instructions) ending at r, for the chain count.
  const depth = new Map<string, number>();
  let t = 0;
  let passStart = 0;
  let longest = 1;
  for (let pass = 0; pass < 2; pass++) {
    passStart = t;
    for (const d of decoded) {
      let at = t + 1;
      let chain = 0;
      for (const r of d.sources) {
        at = Math.max(at, ready.get(r) ?? 0);
        chain = Math.max(chain, depth.get(r) ?? 0);
      }
      t = at;
      for (const r of d.dests) {
        ready.set(r, at + d.latency);
        if (pass === 1) depth.set(r, chain + 1);
        else depth.set(r, 0);
      }
      if (pass === 1) longest = Math.max(longest, chain + 1);
    }
  }
  // The pass ends when its last result is ready for the next pass's first use, at the latest.
  const latencyCycles = Math.max(body.length, t - passStart);
  let mainOpcode = '';
  let most = 0;
  for (const [op, n] of opcodes) if (n > most) [mainOpcode, most] = [op, n];
  const work = [...opcodes.values()].reduce((a, b) => a + b, 0);
  return {
    instructions: body.length,
    latencyCycles,
    pipes,
    mainOpcode: mainOpcode || (body[0]?.opcode ?? ''),
    chains: Math.max(1, Math.round(work / Math.max(1, longest))),
    loads,
  };
}

/**
 * Instructions per cycle one SMSP issues running this code with `warpsPerSmsp` warps, without
 * instruction-fetch stalls: the smallest of the latency bound (warps × one warp's rate), the
 * issue slot (1 per cycle) and each functional unit's rate.
 */
export function issueRate(p: IssueProfile, warpsPerSmsp: number): number {
  if (p.instructions === 0) return 0;
  const w = Math.max(warpsPerSmsp, 1e-9);
  let cycles = Math.max(p.latencyCycles, w * p.instructions);
  for (const [pipe, n] of Object.entries(p.pipes) as [Pipe, number][]) cycles = Math.max(cycles, (w * n) / PIPE_RATES[pipe]);
  // One warp's own loads: more warps overlap them.
  cycles = Math.max(cycles, (p.pipes.lsu ?? 0) / LSU_RATE_PER_WARP);
  // FP32 and IMAD share the FMA issue: together at most one per cycle.
  cycles = Math.max(cycles, w * ((p.pipes.fma ?? 0) + (p.pipes.fmaHeavy ?? 0)));
  return (w * p.instructions) / cycles;
}

/** What the model needs from one variant of a loop (LoopVariant.icache). */
export interface IcacheLoopFacts {
  /** Bytes of the machine code that repeats: the innermost machine-code loop holding the loop's work. */
  bytes: number;
  issue: IssueProfile;
}
