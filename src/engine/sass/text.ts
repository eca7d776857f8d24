// Line-level helpers shared by the cuobjdump and nvdisasm readers. Everything works on one line
// at a time with indexOf / charCodeAt (no backtracking regular expressions), so a listing of
// several megabytes is read in one linear pass.
import type { SassInstruction, SourceLocation } from './model';

/**
 * Calls `fn(line)` for every line of `text` (without the line break; a trailing '\r' is
 * dropped). Returning `false` from `fn` stops the walk.
 */
export function forEachLine(text: string, fn: (line: string) => boolean | void): void {
  forEachLineRange(text, (start, end) => fn(text.substring(start, end)));
}

/**
 * Calls `fn(start, end)` with the bounds of every line of `text` (end excludes the line break
 * and a trailing '\r'), without cutting the text into strings. Returning `false` stops the walk.
 */
export function forEachLineRange(text: string, fn: (start: number, end: number) => boolean | void): void {
  const n = text.length;
  let start = 0;
  while (start < n) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = n;
    let stop = end;
    if (stop > start && text.charCodeAt(stop - 1) === 13 /* \r */) stop--;
    if (fn(start, stop) === false) return;
    start = end + 1;
  }
}

/** Index of the first character at or after `from` (before `end`) that is not a space or tab. */
export function skipBlanks(s: string, from = 0, end = s.length): number {
  let i = from;
  while (i < end) {
    const c = s.charCodeAt(i);
    if (c !== 32 && c !== 9) break;
    i++;
  }
  return i;
}

function isBlank(c: number): boolean {
  return c === 32 || c === 9;
}

function isHexDigit(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/**
 * If `s` at `i` (a non-blank, before `end`) starts an address comment `/*0a40*\/`, returns the
 * address and the index after the comment; otherwise null. Encoding comments
 * (`/* 0x000fe2… *\/`, a blank after the `/*`) are not addresses.
 */
export function readAddress(s: string, i: number, end = s.length): { address: number; next: number } | null {
  if (s.charCodeAt(i) !== 47 /* / */ || s.charCodeAt(i + 1) !== 42 /* * */) return null;
  let j = i + 2;
  const digitsStart = j;
  let value = 0;
  while (j < end) {
    const c = s.charCodeAt(j);
    if (c >= 48 && c <= 57) value = value * 16 + (c - 48);
    else if (c >= 97 && c <= 102) value = value * 16 + (c - 87);
    else if (c >= 65 && c <= 70) value = value * 16 + (c - 55);
    else break;
    j++;
  }
  if (j === digitsStart || j - digitsStart > 12) return null;
  if (j + 1 >= end || s.charCodeAt(j) !== 42 || s.charCodeAt(j + 1) !== 47) return null;
  return { address: value, next: j + 2 };
}

/**
 * End of the instruction text that starts at `from`: the first ';' of the line, or, when there
 * is none, a trailing `/*` comment or the line end.
 */
export function instructionEnd(s: string, from: number, end: number): number {
  const semi = s.indexOf(';', from);
  if (semi >= 0 && semi < end) return semi;
  const comment = s.indexOf('/*', from);
  if (comment >= 0 && comment < end) return comment;
  return end;
}

/** Opcodes whose last operand, when it is an immediate address, is a code target. */
const TARGET_OPCODES = new Set([
  'BRA',
  'JMP',
  'CALL',
  'BSSY',
  'RET',
  'WARPSYNC',
  'BREAK',
  'SSY',
  'PBK',
  'PCNT',
  'CAL',
  'JCAL',
  'PRET',
  'BRK',
  'CONT',
]);

/** parseInstructionText over `s` from `start` to `end`, without cutting `s` first. */
export function parseInstructionRange(
  s: string,
  start: number,
  end: number,
  address: number,
  source?: SourceLocation,
): SassInstruction | null {
  let i = start;
  let e = end;
  while (i < e && isBlank(s.charCodeAt(i))) i++;
  while (e > i && isBlank(s.charCodeAt(e - 1))) e--;
  if (i >= e) return null;
  let predicate: string | null = null;
  if (s.charCodeAt(i) === 64 /* @ */) {
    let j = i + 1;
    while (j < e && !isBlank(s.charCodeAt(j))) j++;
    predicate = s.substring(i, j);
    i = skipBlanks(s, j, e);
    if (i >= e) return null;
  }
  const first = s.charCodeAt(i);
  // Data directives (.byte/.word/.short/.zero…) and braces of old dual-issue syntax.
  if (first === 46 /* . */ || first === 123 /* { */ || first === 125 /* } */) return null;
  let j = i;
  while (j < e && !isBlank(s.charCodeAt(j))) j++;
  const { opcode, modifiers } = splitMnemonic(s.substring(i, j));
  const k = skipBlanks(s, j, e);
  const operands = k < e ? s.substring(k, e) : '';
  // One object literal per shape (with or without `source`), so that V8 keeps few hidden classes.
  const ins: SassInstruction =
    source === undefined
      ? { address, predicate, opcode, modifiers, operands }
      : { address, predicate, opcode, modifiers, operands, source };
  if (operands.length === 0) return ins;

  // Label operand (nvdisasm): `(.L_x_3) or `($kernel$helper)
  const tick = operands.indexOf('`(');
  if (tick >= 0) {
    const close = operands.indexOf(')', tick + 2);
    if (close > tick + 2) ins.targetLabel = operands.substring(tick + 2, close).trim();
  } else if (TARGET_OPCODES.has(opcode)) {
    const t = trailingImmediateAddress(operands);
    if (t !== null && !(opcode === 'CALL' && modifiers.includes('ABS'))) {
      // WARPSYNC with a single operand is a lane mask, not a target.
      if (opcode !== 'WARPSYNC' || operands.indexOf(',') >= 0) ins.target = t;
    }
  }
  return ins;
}

/**
 * Mnemonics seen so far ("ISETP.GE.AND" -> opcode "ISETP", modifiers ["GE", "AND"]). A listing
 * repeats a few hundred mnemonics many thousand times, so instructions share these (frozen)
 * arrays and strings instead of allocating their own: less memory and far less garbage
 * collection on multi-megabyte listings. Bounded, so garbage input cannot grow it without limit.
 */
const MNEMONICS = new Map<string, { opcode: string; modifiers: string[] }>();
const MAX_MNEMONICS = 8192;

function splitMnemonic(mnemonic: string): { opcode: string; modifiers: string[] } {
  const hit = MNEMONICS.get(mnemonic);
  if (hit) return hit;
  const parts = mnemonic.split('.');
  const entry = { opcode: parts[0], modifiers: Object.freeze(parts.slice(1).filter(m => m.length > 0)) as string[] };
  if (MNEMONICS.size >= MAX_MNEMONICS) MNEMONICS.clear();
  MNEMONICS.set(mnemonic, entry);
  return entry;
}

/** The value of a trailing non-negative hex immediate (`…, 0x7c0` or `… 0x0`), or null. */
function trailingImmediateAddress(operands: string): number | null {
  let end = operands.length;
  while (end > 0 && isBlank(operands.charCodeAt(end - 1))) end--;
  let start = end;
  while (start > 0 && isHexDigit(operands.charCodeAt(start - 1))) start--;
  if (start === end || start < 2) return null;
  if (operands.charCodeAt(start - 1) !== 120 /* x */ || operands.charCodeAt(start - 2) !== 48 /* 0 */) return null;
  const before = start - 3;
  if (before >= 0) {
    const c = operands.charCodeAt(before);
    if (!isBlank(c) && c !== 44 /* , */) return null; // e.g. "-0x1d0" or "R2+0x10"
  }
  return parseInt(operands.substring(start, end), 16);
}

/** Parses a decimal integer at `i`; returns the value and the index after it, or null. */
export function readInt(s: string, i: number, end = s.length): { value: number; next: number } | null {
  let j = i;
  while (j < end && isDigit(s.charCodeAt(j))) j++;
  if (j === i) return null;
  return { value: Number(s.substring(i, j)), next: j };
}

/** "sm_90" from text such as "sm_90", "sm_90a", "'sm_100f'"; null when none. */
export function findSmArch(s: string): string | null {
  const k = s.indexOf('sm_');
  if (k < 0) return null;
  let j = k + 3;
  while (j < s.length && isDigit(s.charCodeAt(j))) j++;
  if (j === k + 3) return null;
  while (j < s.length) {
    const c = s.charCodeAt(j);
    if (c >= 97 && c <= 122) j++;
    else break;
  }
  return s.substring(k, j);
}

/** Bytes of one instruction for an architecture string ("sm_90" -> 16; before sm_70 -> 8). */
export function instructionBytesFor(arch: string | null | undefined): number {
  if (!arch) return 16;
  const m = /^sm_(\d+)/.exec(arch);
  if (!m) return 16;
  return Number(m[1]) < 70 ? 8 : 16;
}

/** Resolves `targetLabel` against a function's labels. */
export function resolveLabels(instructions: SassInstruction[], labels: Record<string, number>): void {
  for (const ins of instructions) {
    if (ins.targetLabel !== undefined && ins.target === undefined) {
      const a = labels[ins.targetLabel];
      if (a !== undefined) ins.target = a;
    }
  }
}
