// Device functions written in a file that the analysis does not list: tree-sitter could not parse
// them (a construct its grammar lacks) or the analysis failed on them. Each is named with its
// line and why, so that a lost function never passes for "no loops here". Read from the text the
// parser read (masked), independently of the syntax tree's shape: a function whose head sits in
// an ERROR node has no function_definition to find it by.
import type { Node } from './parser';
import type { UnparsedFunction } from './model';
import { activeMacros } from './macroContext';

/** A qualifier as masking leaves it: a keyword, or a macro turned into `[[NAME_SHORT]]`. */
const QUALIFIER = /\b__global__\b|\b__device__\b|\[\[[A-Za-z_]\w*\]\]|\b_*[A-Z][A-Z0-9_]{4,}\b/g;

/** Words that take parentheses in a head without being the function's name. */
const NOT_A_NAME = new Set([
  '__launch_bounds__',
  '__cluster_dims__',
  '__maxnreg__',
  '__attribute__',
  '__declspec',
  '__align__',
  'alignas',
  'decltype',
  'sizeof',
  'noexcept',
  'requires',
  'if',
  'for',
  'while',
  'switch',
  'return',
]);

interface Range {
  start: number;
  end: number;
}

/** Ranges merged where they overlap or nest, in order: `has` is then a binary search. */
export class Ranges {
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];

  constructor(ranges: Range[]) {
    for (const r of [...ranges].sort((a, b) => a.start - b.start)) {
      const last = this.ends.length - 1;
      if (r.start >= r.end) continue;
      if (last >= 0 && r.start < this.ends[last]) this.ends[last] = Math.max(this.ends[last], r.end);
      else {
        this.starts.push(r.start);
        this.ends.push(r.end);
      }
    }
  }

  /** Whether some range holds `at` (start <= at < end). */
  has(at: number): boolean {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.starts[mid] > at) hi = mid - 1;
      else if (this.ends[mid] <= at) lo = mid + 1;
      else return true;
    }
    return false;
  }
}

/**
 * The ranges of every function_definition, outermost only: one that holds another already
 * holds every offset of it, so the walk never enters one. Most of a file's nodes are in
 * function bodies: a walk of the whole tree (descendantsOfType) took 6 ms a call on a
 * 5,000-line file with a syntax error, this walk 1.3 ms (docs/measurements.md, issue 41).
 */
export function functionDefinitions(root: Node): Range[] {
  const out: Range[] = [];
  const cursor = root.walk();
  try {
    for (;;) {
      if (cursor.nodeType === 'function_definition') out.push({ start: cursor.startIndex, end: cursor.endIndex });
      else if (cursor.gotoFirstChild()) continue;
      while (!cursor.gotoNextSibling()) if (!cursor.gotoParent()) return out;
    }
  } finally {
    cursor.delete();
  }
}

const isBlank = (c: number) => c === 32 || c === 9;

/** Only blanks between the line's start (or 200 characters back) and `at`. */
function firstOnLine(text: string, at: number): boolean {
  for (let i = at - 1, lo = Math.max(0, at - 200); i >= lo; i--) {
    const c = text.charCodeAt(i);
    if (c === 10) return true;
    if (!isBlank(c)) return false;
  }
  return true;
}

/** A blank, then a letter or `_`, at `at`: a word (the return type) after the qualifier. */
function followedByWord(text: string, at: number): boolean {
  const c = text.charCodeAt(at + 1);
  return isBlank(text.charCodeAt(at)) && ((c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95);
}

/** The index after the `)` matching the `(` at `open`, or -1. */
function matchParen(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length && i < open + 20000; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i + 1;
    else if ((c === ';' || c === '{' || c === '}') && depth <= 1 && text.slice(open, i).split('\n').length > 64) return -1;
  }
  return -1;
}

/**
 * The definition a qualifier at `at` starts: its name and where its body's `{` is, or null (a
 * declaration, a variable, a lambda, a qualifier inside a directive or a comment).
 */
function definitionAt(text: string, at: number): { name: string; brace: number } | null {
  const lineStart = text.lastIndexOf('\n', at - 1) + 1;
  const before = text.slice(lineStart, at);
  if (/^\s*#/.test(before) || before.includes('//') || /\/\*(?![\s\S]*\*\/)/.test(before)) return null;
  // The first `(` after the qualifier whose word before it is a name.
  const head = /([A-Za-z_~]\w*|operator\s*(?:\(\)|[^\s(]+))\s*\(|[;{}=]/g;
  head.lastIndex = at;
  let m: RegExpExecArray | null;
  while ((m = head.exec(text)) && m.index < at + 2000) {
    if (!m[1]) return null; // `;`, `{`, `}` or `=` before any name: not a function head
    const open = m.index + m[0].length - 1;
    const close = matchParen(text, open);
    if (close === -1) return null;
    if (NOT_A_NAME.has(m[1]) || /^\[\[/.test(text.slice(m.index - 2, m.index))) {
      head.lastIndex = close;
      continue;
    }
    // After the parameters: qualifiers, a trailing return type, attributes, then `{` or `:`.
    const tail = /[{;=:]|\)/g;
    tail.lastIndex = close;
    const t = tail.exec(text);
    if (!t || t.index > close + 400) return null;
    if (t[0] === '{' || t[0] === ':') return { name: m[1].replace(/\s+/g, ''), brace: t.index };
    return null;
  }
  return null;
}

/** An unroll pragma in any spelling: the directive, the operator, a library's macro. */
const UNROLL_IN_BODY = /#[ \t]*pragma[ \t]+unroll|_Pragma\s*\(\s*"\s*unroll|\b\w*PRAGMA_(?:NO_?)?UNROLL\w*|\bCUTE_(?:NO_)?UNROLL\b/;

/** The body whose `{` is at `brace`, up to its matching `}` (braces in comments and strings counted too: an estimate). */
function bodyOf(text: string, brace: number): string {
  let depth = 0;
  const limit = Math.min(text.length, brace + 200_000);
  for (let i = brace; i < limit; i++) {
    const c = text[i];
    if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return text.slice(brace, i + 1);
  }
  return text.slice(brace, limit);
}

/** The first syntax error at or after `at` (or around it): its 1-based line. */
function errorLine(errors: Range[], rows: number[], at: number): number | null {
  let best = -1;
  for (let i = 0; i < errors.length; i++) {
    const e = errors[i];
    if (e.end < at) continue;
    if (best === -1 || e.start < errors[best].start) best = i;
  }
  return best === -1 ? null : rows[best];
}

/** ERROR and MISSING nodes of a tree, outermost only, in order. */
function syntaxErrors(root: Node): { ranges: Range[]; rows: number[] } {
  const ranges: Range[] = [];
  const rows: number[] = [];
  const stack: Node[] = [root];
  while (stack.length && ranges.length < 10000) {
    const n = stack.pop()!;
    if (!n.hasError && !n.isMissing) continue;
    if (n.type === 'ERROR' || n.isMissing) {
      ranges.push({ start: n.startIndex, end: n.endIndex });
      rows.push(n.startPosition.row + 1);
      continue;
    }
    for (const c of n.children) if (c) stack.push(c);
  }
  return { ranges, rows };
}

/**
 * Device function definitions in `text` (what the parser read) whose qualifier no function of
 * `parsed` (every function_definition, device or host) holds and whose body no function of
 * `listed` (those the analysis lists) holds: a qualifier left in an ERROR node before a body
 * parsed as a host function is a lost device function too. Only called for a tree with syntax
 * errors or a function whose analysis failed.
 */
export function unparsedFunctions(
  text: string,
  root: Node,
  parsed: Range[],
  listed: Range[],
  failed: UnparsedFunction[],
): UnparsedFunction[] {
  const out: UnparsedFunction[] = [...failed];
  if (!root.hasError) return out;
  const parsedRanges = new Ranges(parsed);
  const listedRanges = new Ranges(listed);
  const { ranges, rows } = syntaxErrors(root);
  const macros = activeMacros();
  /** Definitions named so far, by their body's `{`: the entry (in out) and whether an unknown macro found it. */
  const seen = new Map<number, { at: number; unknown: boolean }>();
  let line = 1;
  let counted = 0;
  QUALIFIER.lastIndex = 0;
  for (let m = QUALIFIER.exec(text); m; m = QUALIFIER.exec(text)) {
    const inParsed = parsedRanges.has(m.index);
    const word = m[0].startsWith('[[') ? macros.unmask(m[0]).slice(2, -2) : m[0];
    const known = /^__(global|device)__$/.test(word) ? 'device' : macros.qualifier(word)?.qualifier;
    // A macro we do not know (defined in a header not read) before a definition: device code when
    // its body holds an unroll pragma (CCCL main's `_CCCL_KERNEL_ATTRIBUTES void K(…) {…}`).
    // Written as a qualifier is: first on its line, a word (the return type) after it, not a call.
    const unknown =
      known === undefined &&
      !m[0].startsWith('[[') &&
      followedByWord(text, m.index + m[0].length) &&
      firstOnLine(text, m.index) &&
      !macros.pragma(word);
    if (known !== 'global' && known !== 'device' && !unknown) continue;
    // a parsed definition counts as lost only for a macro we do not know with an error in its head
    if (inParsed && !unknown) continue;
    const def = definitionAt(text, m.index + m[0].length);
    if (!def || listedRanges.has(def.brace)) continue;
    // a definition found through an unknown macro is named at its known qualifier when it has one
    const before = seen.get(def.brace);
    if (before && (unknown || !before.unknown)) continue;
    if (inParsed && !ranges.some(r => r.start >= m!.index && r.start < def.brace)) continue;
    if (unknown && (/^_*[A-Z][A-Z0-9]*_[A-Z0-9_]+$/.test(def.name) || !UNROLL_IN_BODY.test(bodyOf(text, def.brace)))) continue;
    for (let i = text.indexOf('\n', counted); i !== -1 && i < m.index; i = text.indexOf('\n', i + 1)) line++;
    counted = m.index;
    const err = errorLine(ranges, rows, m.index);
    const why = err !== null ? `tree-sitter could not parse it (syntax error at line ${err})` : 'tree-sitter could not parse it';
    const entry = {
      name: def.name,
      line,
      reason: unknown ? `${why}; ${word} before it is a macro whose definition was not read (its header is not in the scan)` : why,
    };
    if (before) out[before.at] = entry;
    else out.push(entry);
    seen.set(def.brace, { at: before?.at ?? out.length - 1, unknown });
    if (out.length >= 200) break;
  }
  return out.sort((a, b) => a.line - b.line);
}
