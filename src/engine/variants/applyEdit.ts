// The edit that writes a chosen unroll factor into the user's own file: replace the loop's
// pragma, insert one, or remove it for "default". Pure text in, one edit out; the extension
// applies it as an ordinary (undoable) workspace edit. Unlike the shadow copies of rewrite.ts,
// which must keep every line in place for nvcc, this edit is for a human reader: a new pragma
// gets a line of its own at the loop's indentation, and a removed one takes its line with it.
import type { Loop, PragmaMacroUse } from '../parse/model';
import { UnrollFactor, writtenFactor } from './factors';
import { checkUnrollFactor, lineStarts, pragmaText } from './rewrite';
import { libraryMacroFor } from '../parse/libraryMacros';

export interface UnrollEdit {
  /** UTF-16 offsets into the document text (what editors' positionAt takes). */
  startOffset: number;
  endOffset: number;
  newText: string;
}

/** End of a directive's own tokens: before a comment or the line end, across `\` continuations. */
function directiveEnd(text: string, start: number, limit: number): number {
  let i = start;
  while (i < limit) {
    const c = text[i];
    if (c === '\\' && (text[i + 1] === '\n' || (text[i + 1] === '\r' && text[i + 2] === '\n'))) {
      i += text[i + 1] === '\r' ? 3 : 2;
      continue;
    }
    if (c === '\n' || c === '\r') break;
    if (c === '/' && (text[i + 1] === '/' || text[i + 1] === '*')) break;
    i++;
  }
  while (i > start && /[ \t]/.test(text[i - 1])) i--;
  return i;
}

function lineEndAfter(text: string, at: number): { end: number; withBreak: number } {
  let end = at;
  while (end < text.length && text[end] !== '\n' && text[end] !== '\r') end++;
  const withBreak = text.startsWith('\r\n', end) ? end + 2 : end < text.length ? end + 1 : end;
  return { end, withBreak };
}

/**
 * The edit giving `loop` the factor: `#pragma unroll N`, `#pragma unroll` (full), or no pragma
 * (default). An existing pragma keeps its form (`#pragma` or `_Pragma("…")`) and any comment
 * after it or between it and the loop. Null when the file already says exactly that.
 */
export function unrollPragmaEdit(text: string, loop: Loop, factor: UnrollFactor): UnrollEdit | null {
  checkUnrollFactor(factor); // from a result file or a message: never written unless in range
  const starts = lineStarts(text);
  const offset = (line1: number, column: number) => (starts[line1 - 1] ?? text.length) + column;
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const p = loop.pragma;
  if (p) {
    const start = offset(p.span.line, p.span.column);
    const spanEnd = Math.min(text.length, offset(p.span.endLine, p.span.endColumn));
    const end = p.form === 'directive' ? directiveEnd(text, start, spanEnd) : spanEnd;
    if (factor === 'default') {
      const lineStart = starts[p.span.line - 1];
      const { end: lineEnd, withBreak } = lineEndAfter(text, end);
      const alone = /^[ \t]*$/.test(text.slice(lineStart, start)) && /^[ \t]*$/.test(text.slice(end, lineEnd));
      if (alone) return { startOffset: lineStart, endOffset: withBreak, newText: '' };
      // Shares its line (`_Pragma("unroll 4") for …`, or a comment after it): take the pragma
      // and the blanks after it, nothing else.
      let after = end;
      while (after < lineEnd && /[ \t]/.test(text[after])) after++;
      return { startOffset: start, endOffset: after, newText: '' };
    }
    // A macro (`CUTLASS_PRAGMA_UNROLL`, a project's `MY_UNROLL(4)`) is replaced by the library's
    // spelling of the new factor where it has one, else by the same macro with the new count when
    // it takes one, else by the `_Pragma("…")` it would expand to.
    if (p.form === 'macro' && writtenFactor(loop) === factor) return null;
    const newText =
      p.form === 'directive'
        ? `#pragma ${pragmaText(factor)}`
        : p.form === 'macro' && p.macro
          ? (macroSpelling(p.macro, factor) ?? `_Pragma("${pragmaText(factor)}")`)
          : `_Pragma("${pragmaText(factor)}")`;
    return text.slice(start, end) === newText ? null : { startOffset: start, endOffset: end, newText };
  }
  if (factor === 'default') return null;
  const loopStart = offset(loop.span.line, loop.span.column);
  const lineStart = starts[loop.span.line - 1];
  const indent = text.slice(lineStart, loopStart);
  if (/^[ \t]*$/.test(indent))
    return { startOffset: lineStart, endOffset: lineStart, newText: `${indent}#pragma ${pragmaText(factor)}${eol}` };
  // The loop does not start its line (`if (n) for (…)`): a directive line above would apply to
  // the wrong statement, so the pragma goes right before the loop keyword.
  return { startOffset: loopStart, endOffset: loopStart, newText: `_Pragma("${pragmaText(factor)}") ` };
}

/** How the macro in front of a loop writes `factor`, or null when it cannot. */
function macroSpelling(m: PragmaMacroUse, factor: 'full' | number): string | null {
  if (m.library) return libraryMacroFor(m.library, factor);
  // `MY_UNROLL(N)` expanding to `unroll N`: the same macro with the new count.
  if (
    typeof factor === 'number' &&
    m.written.startsWith(m.name + '(') &&
    m.expandsTo === `unroll ${m.written.slice(m.name.length + 1, -1).trim()}`
  )
    return `${m.name}(${factor})`;
  return null;
}

/** Applies an edit to a string (tests, the CLI). */
export function applyUnrollEdit(text: string, e: UnrollEdit | null): string {
  return e ? text.slice(0, e.startOffset) + e.newText + text.slice(e.endOffset) : text;
}
