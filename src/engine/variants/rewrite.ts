// A variant is the user's file with the unroll pragma of one or more loops set to a chosen
// factor. The rewrite keeps every line where it was (pragmas are replaced in place, new ones are
// inserted as `_Pragma("…")` on the loop's own line) and the shadow copy starts with a `#line`
// directive naming the original file, so compiler messages and SASS line info point at the
// user's file and lines without any mapping.
import type { FileAnalysis, Loop } from '../parse/model';

/** "default" removes any pragma (nvcc decides); "full" is a bare `#pragma unroll`. */
export type UnrollFactor = 'default' | 'full' | number;

export const DEFAULT_FACTORS: UnrollFactor[] = ['default', 1, 2, 4, 8, 16, 'full'];

/** Loop line (1-based, the loop keyword's line) → factor. */
export type VariantFactors = Map<number, UnrollFactor>;

export function parseFactor(text: string): UnrollFactor {
  const t = text.trim().toLowerCase();
  if (t === 'default' || t === 'full') return t;
  if (/^\d+$/.test(t) && Number(t) >= 1) return Number(t);
  throw new Error(`bad unroll factor '${text}': use default, full or a positive integer`);
}

export function parseFactorList(text: string): UnrollFactor[] {
  const list = text
    .split(',')
    .map(s => s.trim())
    .filter(Boolean)
    .map(parseFactor);
  if (!list.length) throw new Error('empty factor list');
  return [...new Map(list.map(f => [String(f), f])).values()];
}

export function factorLabel(f: UnrollFactor): string {
  return typeof f === 'number' ? `unroll ${f}` : f === 'full' ? 'full unroll' : 'compiler default';
}

/** The factor a loop has in the file as written. */
export function writtenFactor(loop: Loop): UnrollFactor {
  const p = loop.pragma;
  if (!p) return 'default';
  if (p.kind === 'full') return 'full';
  if (p.kind === 'disable') return 1;
  return p.factor ?? 'default';
}

/** The pragma's text for a factor: `unroll 4`, or `unroll` for a full unroll. */
export function pragmaText(f: UnrollFactor): string {
  return f === 'full' ? 'unroll' : `unroll ${f}`;
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

/**
 * Builds the variant source. Throws VariantError when a line is not a loop of this file.
 * `originalPath` goes into the `#line` directive (absolute, so messages are unambiguous).
 */
export function makeVariantSource(text: string, analysis: FileAnalysis, factors: VariantFactors, originalPath: string): string {
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
  splices.sort((a, b) => b.start - a.start);
  let out = text;
  for (const s of splices) out = out.slice(0, s.start) + s.text + out.slice(s.end);
  return `#line 1 "${originalPath.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"\n${out}`;
}

/** A stable, readable name for a variant: "L40=4,L52=full" ("as-written" when empty). */
export function variantKey(factors: VariantFactors): string {
  if (!factors.size) return 'as-written';
  return [...factors]
    .sort((a, b) => a[0] - b[0])
    .map(([l, f]) => `L${l}=${f}`)
    .join(',');
}
