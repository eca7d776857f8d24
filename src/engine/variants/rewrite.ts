// A variant is the user's file with the unroll pragma of one or more loops set to a chosen
// factor. The rewrite keeps every line where it was (pragmas are replaced in place, new ones are
// inserted as `_Pragma("…")` on the loop's own line) and the shadow copy starts with a `#line`
// directive naming the original file, so compiler messages and SASS line info point at the
// user's file and lines without any mapping.
import * as fs from 'fs';
import type { FileAnalysis, Loop } from '../parse/model';
import { RANGES, unrollFactorProblem } from '../../schema/ranges';
import type { UnrollFactor } from './factors';

/** Loop line (1-based, the loop keyword's line) → factor. */
export type VariantFactors = Map<number, UnrollFactor>;

/** The pragma's text for a factor: `unroll 4`, or `unroll` for a full unroll. */
export function pragmaText(f: UnrollFactor): string {
  checkUnrollFactor(f);
  return f === 'full' ? 'unroll' : `unroll ${f}`;
}

export class UnrollFactorError extends Error {}

/**
 * Throws UnrollFactorError unless `f` is default, full or an integer nvcc honours (1 to 2^31-1;
 * what we build is held to 1..4096 where factors come in): the last guard before a number becomes
 * pragma text, so a planted result never writes `#pragma unroll -4`, `2.5` or `1e+23`.
 */
export function checkUnrollFactor(f: unknown): asserts f is UnrollFactor {
  const problem = unrollFactorProblem(f, RANGES.writtenUnrollFactor);
  if (problem) throw new UnrollFactorError(`not an unroll factor: ${problem}`);
}

interface Splice {
  start: number;
  end: number;
  text: string;
}

/** Offsets of the start of each line (0-based rows). */
export function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

export class VariantError extends Error {}

/** The edits that make a variant, as UTF-16 offsets into the text the analysis read. */
function variantSplices(text: string, analysis: FileAnalysis, factors: VariantFactors, originalPath: string): Splice[] {
  const loops = new Map<number, Loop>();
  for (const k of analysis.kernels) for (const l of k.loops) loops.set(l.line, l);
  const starts = lineStarts(text);
  const offset = (line1: number, column: number) => starts[line1 - 1] + column;
  const splices: Splice[] = [];
  for (const [line, factor] of factors) {
    const loop = loops.get(line);
    if (!loop) throw new VariantError(`no loop at line ${line} of ${originalPath}`);
    const p = loop.pragma;
    if (p) {
      const start = offset(p.span.line, p.span.column);
      const end = offset(p.span.endLine, p.span.endColumn);
      const old = text.slice(start, end);
      // Keep the pragma's line count (continuations) so every later line stays in place.
      const newlines = old.split('\n').length - 1;
      let replacement: string;
      if (factor === 'default') replacement = '';
      else if (p.form === 'directive') replacement = `#pragma ${pragmaText(factor)}`;
      else replacement = `_Pragma("${pragmaText(factor)}")`;
      splices.push({ start, end, text: replacement + '\n'.repeat(newlines) });
    } else if (factor !== 'default') {
      const at = offset(loop.span.line, loop.span.column);
      splices.push({ start: at, end: at, text: `_Pragma("${pragmaText(factor)}") ` });
    }
  }
  return splices.sort((a, b) => b.start - a.start);
}

function lineDirective(originalPath: string): string {
  return `#line 1 "${originalPath.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"\n`;
}

/**
 * Builds the variant source. Throws VariantError when a line is not a loop of this file.
 * `originalPath` goes into the `#line` directive (absolute, so messages are unambiguous).
 */
export function makeVariantSource(text: string, analysis: FileAnalysis, factors: VariantFactors, originalPath: string): string {
  let out = text;
  for (const s of variantSplices(text, analysis, factors, originalPath)) out = out.slice(0, s.start) + s.text + out.slice(s.end);
  return lineDirective(originalPath) + out;
}

/** Offsets of the start of each line of UTF-8 bytes (a 0x0A byte is always a line feed, never part of a character). */
function byteLineStarts(bytes: Buffer): number[] {
  const starts = [0];
  for (let i = bytes.indexOf(0x0a); i !== -1; i = bytes.indexOf(0x0a, i + 1)) starts.push(i + 1);
  return starts;
}

/**
 * The byte offset in `bytes` of UTF-16 offset `offset` in `text`, where `text` is `bytes` decoded
 * as UTF-8 (invalid bytes read as U+FFFD). Lines match one to one; inside its line the offset is
 * the split whose two halves decode to the text's two halves.
 */
function byteOffsetOf(bytes: Buffer, byteStarts: number[], text: string, textStarts: number[], offset: number): number {
  let row = 0;
  while (row + 1 < textStarts.length && textStarts[row + 1] <= offset) row++;
  const textEnd = row + 1 < textStarts.length ? textStarts[row + 1] : text.length;
  const line = bytes.subarray(byteStarts[row], row + 1 < byteStarts.length ? byteStarts[row + 1] : bytes.length);
  const before = text.slice(textStarts[row], offset);
  const after = text.slice(offset, textEnd);
  const splitsAt = (b: number) => line.subarray(0, b).toString('utf8') === before && line.subarray(b).toString('utf8') === after;
  const guess = Buffer.byteLength(before);
  if (guess <= line.length && splitsAt(guess)) return byteStarts[row] + guess;
  for (let b = 0; b <= line.length; b++) if (splitsAt(b)) return byteStarts[row] + b;
  throw new VariantError(`line ${row + 1}: the edit does not fall between characters of the file's bytes`);
}

/**
 * The variant as bytes: `original` (the file, which decodes as UTF-8 to `text`) with only the
 * pragma edits spliced in. Bytes that are not UTF-8 stay as they are: the compiler sees the
 * user's file, not a re-encoded copy.
 */
export function makeVariantBytes(
  original: Buffer,
  text: string,
  analysis: FileAnalysis,
  factors: VariantFactors,
  originalPath: string,
): Buffer {
  const byteStarts = byteLineStarts(original);
  const textStarts = lineStarts(text);
  if (byteStarts.length !== textStarts.length) throw new VariantError(`${originalPath}: the text is not the file's bytes`);
  const at = (offset: number) => byteOffsetOf(original, byteStarts, text, textStarts, offset);
  const pieces: Buffer[] = [];
  let end = original.length;
  for (const s of variantSplices(text, analysis, factors, originalPath)) {
    const start = at(s.start);
    const stop = at(s.end);
    pieces.push(original.subarray(stop, end), Buffer.from(s.text));
    end = start;
  }
  pieces.push(original.subarray(0, end), Buffer.from(lineDirective(originalPath)));
  return Buffer.concat(pieces.reverse());
}

let lastRead: { file: string; mtimeMs: number; size: number; bytes: Buffer; text: string } | null = null;

/** The file's bytes when they decode (as UTF-8) to `text` but are not `text`'s UTF-8 encoding; else null. */
function nonUtf8Bytes(file: string, text: string): Buffer | null {
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) return null;
    if (!(lastRead && lastRead.file === file && lastRead.mtimeMs === st.mtimeMs && lastRead.size === st.size)) {
      const bytes = fs.readFileSync(file);
      lastRead = { file, mtimeMs: st.mtimeMs, size: st.size, bytes, text: bytes.toString('utf8') };
    }
    if (lastRead.text !== text) return null; // edited since (an unsaved buffer): the text is what the user sees
    return Buffer.byteLength(text) === lastRead.bytes.length && Buffer.from(text).equals(lastRead.bytes) ? null : lastRead.bytes;
  } catch {
    return null;
  }
}

/**
 * What a build compiles: the variant source as text, or, for a file holding bytes that are not
 * UTF-8 (Latin-1 comments, a stray byte in a string), as bytes equal to the file's outside the
 * edited pragmas. Writing such a file back from its decoded text would change what nvcc reads.
 */
export function variantSource(text: string, analysis: FileAnalysis, factors: VariantFactors, file: string): string | Buffer {
  const bytes = nonUtf8Bytes(file, text);
  return bytes ? makeVariantBytes(bytes, text, analysis, factors, file) : makeVariantSource(text, analysis, factors, file);
}

/** A stable, readable name for a variant: "L40=4,L52=full" ("as-written" when empty). */
export function variantKey(factors: VariantFactors): string {
  if (!factors.size) return 'as-written';
  return [...factors]
    .sort((a, b) => a[0] - b[0])
    .map(([l, f]) => `L${l}=${f}`)
    .join(',');
}
