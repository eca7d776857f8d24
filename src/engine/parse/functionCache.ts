// Re-using a function's analysis when only its position changed.
import type { SourceSpan, UnrollPragma } from './model';
import type { FunctionResult } from './analyzeFunction';

function shiftSpan(s: SourceSpan, d: number): SourceSpan {
  return { ...s, line: s.line + d, endLine: s.endLine + d };
}

export function shiftResult(r: FunctionResult, d: number): FunctionResult {
  if (d === 0) return r;
  const shiftPragma = (p: UnrollPragma): UnrollPragma => ({ ...p, line: p.line + d, span: shiftSpan(p.span, d) });
  return {
    kernel: {
      ...r.kernel,
      // A lambda is named by its line (deviceLambdas).
      name: /^lambda@\d+$/.test(r.kernel.name) ? `lambda@${r.kernel.line + d}` : r.kernel.name,
      line: r.kernel.line + d,
      span: shiftSpan(r.kernel.span, d),
      loops: r.kernel.loops.map(l => ({
        ...l,
        line: l.line + d,
        span: shiftSpan(l.span, d),
        parentLine: l.parentLine === null ? null : l.parentLine + d,
        pragma: l.pragma ? shiftPragma(l.pragma) : null,
        ...(l.alternativePragmas ? { alternativePragmas: l.alternativePragmas.map(shiftPragma) } : {}),
      })),
      manualUnrolls: r.kernel.manualUnrolls.map(m => ({
        ...m,
        line: m.line + d,
        endLine: m.endLine + d,
        // A coarsening note names the index's line (manualUnroll/coarsening.ts): it moves too.
        detail: m.pattern === 'coarsening' ? m.detail.replace(/\(line (\d+)\)/, (_, n: string) => `(line ${Number(n) + d})`) : m.detail,
      })),
    },
    stray: r.stray.map(s => ({ ...s, pragma: shiftPragma(s.pragma) })),
  };
}

/**
 * Results of the previous analysis of one document, keyed by everything a function's result
 * depends on: its text, its start column, the file's constants and its instantiations.
 */
export class FunctionCache {
  private entries = new Map<string, FunctionResult>();
  /**
   * What the analysis before the latest used: a character typed that error recovery spreads over
   * the rest of the file changes every function's text, and its undo brings them back.
   */
  private previous = new Map<string, FunctionResult>();
  private next = new Map<string, FunctionResult>();
  hits = 0;
  misses = 0;

  get(key: string, line: number): FunctionResult | undefined {
    const r = this.entries.get(key) ?? this.previous.get(key);
    if (!r) return undefined;
    this.next.set(key, r);
    return shiftResult(r, line - r.kernel.line);
  }

  set(key: string, r: FunctionResult): void {
    this.next.set(key, r);
  }

  /** Keep only what the latest two analyses used, so the cache never outgrows twice the document. */
  commit(): void {
    this.previous = this.entries;
    this.entries = this.next;
    this.next = new Map();
  }
}
