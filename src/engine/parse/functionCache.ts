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

/** An identifier: a name looked up that is anything else (`operator()`) is matched against every item. */
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * The file's top-level items other than function definitions (TopLevel.others) of one analysis,
 * as text: outside functions, what a lookup by name can read (fileIndex.ts NameReads).
 */
export class ItemTexts {
  /** Equal keys, equal items (in order). */
  readonly key: string;
  private readonly byName = new Map<string, string>();

  constructor(
    private readonly hashes: string[],
    /** Each item's identifier tokens, by its hash; shared by a document's analyses. */
    private readonly tokens: (hash: string, i: number) => Set<string>,
  ) {
    this.key = hashes.join('');
  }

  /** The items that spell `name` (as a token), by hash: what a lookup of it may have read. */
  private spelling(name: string): string {
    let d = this.byName.get(name);
    if (d === undefined) {
      d = IDENTIFIER.test(name) ? this.hashes.filter((h, i) => this.tokens(h, i).has(name)).join(',') : this.key;
      this.byName.set(name, d);
    }
    return d;
  }

  /** What the items that spell any of `names` are: equal digests, equal answers to those lookups. */
  digest(names: readonly string[]): string {
    return names.map(n => this.spelling(n)).join('|');
  }
}

interface Entry {
  result: FunctionResult;
  /** The names its lookups asked the file about (NameReads), sorted. */
  reads: string[];
  /** The items it was computed (or last checked) against. */
  items: ItemTexts | null;
}

/**
 * Results of the previous analysis of one document, keyed by everything a function's result
 * depends on in the function and its call-graph dependencies (its text, its start column, the
 * file's constants and its instantiations), and checked against the top-level items that spell
 * the names its lookups asked for: a class or a namespace variable edited elsewhere, or a host
 * function that error recovery breaks into items, re-analyses only the functions that read them.
 */
export class FunctionCache {
  private entries = new Map<string, Entry>();
  /**
   * What the analysis before the latest used: a character typed that error recovery spreads over
   * the rest of the file changes every function's text, and its undo brings them back.
   */
  private previous = new Map<string, Entry>();
  private next = new Map<string, Entry>();
  /** Identifier tokens of the items of the latest two analyses, by hash. */
  private tokens = new Map<string, Set<string>>();
  private nextTokens = new Map<string, Set<string>>();
  hits = 0;
  misses = 0;

  /** The items of the analysis about to run (`texts`: TopLevel.others that are not function definitions). */
  items(texts: string[], hashes: string[]): ItemTexts {
    return new ItemTexts(hashes, (h, i) => {
      let t = this.nextTokens.get(h) ?? this.tokens.get(h);
      if (!t) t = new Set(texts[i].match(/[A-Za-z_$][\w$]*/g));
      this.nextTokens.set(h, t);
      return t;
    });
  }

  get(key: string, line: number, items: ItemTexts | null = null): FunctionResult | undefined {
    const e = this.entries.get(key) ?? this.previous.get(key);
    if (!e) return undefined;
    if (e.items !== items && e.items?.key !== items?.key) {
      if (!e.items || !items || e.items.digest(e.reads) !== items.digest(e.reads)) return undefined;
    }
    // Checked against these items now: the older ones (and the text they hold) can go.
    e.items = items;
    this.next.set(key, e);
    return shiftResult(e.result, line - e.result.kernel.line);
  }

  set(key: string, result: FunctionResult, reads: Iterable<string> = [], items: ItemTexts | null = null): void {
    this.next.set(key, { result, reads: [...reads].sort(), items });
  }

  /** Keep only what the latest two analyses used, so the cache never outgrows twice the document. */
  commit(): void {
    this.previous = this.entries;
    this.entries = this.next;
    this.next = new Map();
    this.tokens = this.nextTokens;
    this.nextTokens = new Map();
  }
}
