// The preprocessor directives of a file, in order: `#define`, `#if`…, `#include`, with comments
// removed and continued lines joined. Everything else in the file is skipped, which is what makes
// reading a library's whole include tree affordable.

type DirectiveName =
  | 'define'
  | 'undef'
  | 'include'
  | 'include_next'
  | 'if'
  | 'ifdef'
  | 'ifndef'
  | 'elif'
  | 'elifdef'
  | 'elifndef'
  | 'else'
  | 'endif'
  | 'pragma';

export interface Directive {
  name: DirectiveName;
  /** Text after the directive name, comments removed, continuations joined. */
  rest: string;
  /** 1-based line of the `#`. */
  line: number;
}

const KNOWN = new Set<string>([
  'define',
  'undef',
  'include',
  'include_next',
  'if',
  'ifdef',
  'ifndef',
  'elif',
  'elifdef',
  'elifndef',
  'else',
  'endif',
  'pragma',
]);

/**
 * Removes comments from `s` (one logical line), tracking a block comment that runs on past it.
 * String and character literals are kept as they are.
 */
function stripComments(s: string, inBlock: boolean): { text: string; inBlock: boolean } {
  let out = '';
  let i = 0;
  const n = s.length;
  while (i < n) {
    if (inBlock) {
      const end = s.indexOf('*/', i);
      if (end === -1) return { text: out, inBlock: true };
      i = end + 2;
      out += ' ';
      inBlock = false;
      continue;
    }
    const c = s[i];
    if (c === '/' && s[i + 1] === '/') break;
    if (c === '/' && s[i + 1] === '*') {
      inBlock = true;
      i += 2;
      continue;
    }
    if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < n && s[j] !== c) j += s[j] === '\\' ? 2 : 1;
      out += s.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    out += c;
    i++;
  }
  return { text: out, inBlock };
}

/** Whether a non-directive line leaves a block comment open (strings and `//` respected). */
function blockStateAfter(line: string, inBlock: boolean): boolean {
  if (!inBlock && !line.includes('/*')) return false;
  return stripComments(line, inBlock).inBlock;
}

export function readDirectives(text: string): Directive[] {
  const out: Directive[] = [];
  const lines = text.split('\n');
  let inBlock = false;
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i];
    if (!inBlock) {
      // Cheap test first: most lines are code.
      let k = 0;
      while (k < line.length && (line[k] === ' ' || line[k] === '\t')) k++;
      if (line[k] !== '#') {
        inBlock = blockStateAfter(line, false);
        continue;
      }
    } else {
      const end = line.indexOf('*/');
      if (end === -1) continue;
      // The comment ends on this line; what follows may still start a directive only if the
      // line began inside the comment, which the preprocessor treats as whitespace before `#`.
      const after = line.slice(end + 2);
      inBlock = false;
      if (!/^\s*#/.test(after)) {
        inBlock = blockStateAfter(after, false);
        continue;
      }
      line = after;
    }
    const startLine = i + 1;
    // Join continuations (a backslash at the end of the line).
    let logical = line.replace(/\r$/, '');
    while (logical.endsWith('\\') && i + 1 < lines.length) logical = logical.slice(0, -1) + lines[++i].replace(/\r$/, '');
    const stripped = stripComments(logical, false);
    inBlock = stripped.inBlock;
    const m = /^\s*#\s*([A-Za-z_]\w*)?(.*)$/s.exec(stripped.text);
    if (!m || !m[1] || !KNOWN.has(m[1])) continue;
    out.push({ name: m[1] as DirectiveName, rest: m[2].trim(), line: startLine });
  }
  return out;
}

/**
 * The include guard of a file, when its directives are exactly `#ifndef G` / `#define G` … `#endif`
 * (or `#if !defined(G)`): a second `#include` of it is then a no-op while G is defined.
 */
export function includeGuard(directives: Directive[]): string | null {
  if (directives.length < 3) return null;
  const first = directives[0];
  let guard: string | null = null;
  if (first.name === 'ifndef') guard = first.rest.split(/\s+/)[0] || null;
  else if (first.name === 'if') guard = /^!\s*defined\s*\(?\s*([A-Za-z_]\w*)\s*\)?$/.exec(first.rest)?.[1] ?? null;
  if (!guard) return null;
  const second = directives[1];
  if (second.name !== 'define' || second.rest.split(/\s+/)[0] !== guard) return null;
  // The first #if must close at the last directive.
  let depth = 0;
  for (let i = 0; i < directives.length; i++) {
    const d = directives[i].name;
    if (d === 'if' || d === 'ifdef' || d === 'ifndef') depth++;
    else if (d === 'endif') {
      depth--;
      if (depth === 0) return i === directives.length - 1 ? guard : null;
    } else if (depth === 1 && (d === 'else' || d === 'elif' || d === 'elifdef' || d === 'elifndef')) return null;
  }
  return null;
}
