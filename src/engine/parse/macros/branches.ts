// `#if` groups whose branches do not balance their braces or parentheses, as library code writes
// them (ggml: `#if A  if constexpr (…) {…} else {  #else  … else {  #endif`, the one `}` after the
// `#endif`). tree-sitter parses every branch as if all were compiled; two `{` closed once make it
// lose the whole function, with all its loops. For such a group the parser reads only the branch
// the preprocessor would take: the others and the group's directive lines become spaces (every
// newline, offset and line kept). A group whose every branch balances is left as written: the
// grammar handles it, and the analysis names the branch a pragma sits in (preprocBranches.ts).

/**
 * The value of a `#if`/`#elif` condition under the file's configuration; null when it is not
 * known (no macros read: the first branch is taken then).
 */
export type ConditionOracle = (condition: string) => boolean | null;

interface Balance {
  /** Net `{` minus `}` and `(` minus `)`. */
  brace: number;
  paren: number;
  /** The lowest running value of each, from 0 at the start. */
  minBrace: number;
  minParen: number;
}

interface Branch extends Balance {
  /** `if`, `ifdef`, `ifndef`, `elif`, `elifdef`, `elifndef` or `else`. */
  kind: string;
  condition: string;
  /** The directive line (with its continuations): [start, end). */
  directive: [number, number];
  /** Its items: from the end of the directive to the start of the next directive of the group. */
  content: [number, number];
}

interface Group {
  branches: Branch[];
  /** The group stands inside a declaration or statement (see the module comment). */
  midItem: boolean;
}

/** The last code character before a group that lets it stand between items, where the grammar reads a directive. */
const ITEM_BOUNDARY = new Set(['', ';', '{', '}', ':']);

const CONDITIONAL = /^(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b/;

function balanced(b: Balance): boolean {
  return b.brace === 0 && b.paren === 0 && b.minBrace >= 0 && b.minParen >= 0;
}

function fold(into: Balance, effect: Balance): void {
  into.minBrace = Math.min(into.minBrace, into.brace + effect.minBrace);
  into.minParen = Math.min(into.minParen, into.paren + effect.minParen);
  into.brace += effect.brace;
  into.paren += effect.paren;
}

/** The condition a branch tests, as a `#if` expression. */
function conditionOf(b: Branch): string | null {
  const name = b.condition.trim().split(/\s+/)[0] ?? '';
  switch (b.kind) {
    case 'if':
    case 'elif':
      return b.condition;
    case 'ifdef':
    case 'elifdef':
      return `defined(${name})`;
    case 'ifndef':
    case 'elifndef':
      return `!defined(${name})`;
    default:
      return null; // #else
  }
}

/**
 * The branch the configuration takes: the first whose condition holds (`#else` always does), or
 * none; the first branch when any condition before that one is unknown.
 */
function chosenBranch(g: Group, decide: ConditionOracle): number {
  for (let i = 0; i < g.branches.length; i++) {
    const cond = conditionOf(g.branches[i]);
    if (cond === null) return i;
    const v = decide(cond);
    if (v === null) return 0;
    if (v) return i;
  }
  return -1;
}

/** The end of the line at `i` with its `\` continuations (the index of its newline, or the text's end). */
function directiveEnd(text: string, i: number): number {
  for (;;) {
    const nl = text.indexOf('\n', i);
    if (nl === -1) return text.length;
    let k = nl - 1;
    if (text[k] === '\r') k--;
    if (text[k] !== '\\') return nl;
    i = nl + 1;
  }
}

/** The end of a string or character literal starting at `i` (its quote), on the same line. */
function literalEnd(text: string, i: number): number {
  const quote = text[i];
  for (let j = i + 1; j < text.length; j++) {
    const c = text[j];
    if (c === '\\') j++;
    else if (c === quote) return j + 1;
    else if (c === '\n') return j;
  }
  return text.length;
}

/** The last character of [from, to) that is not blank, or null. */
function lastNonBlank(text: string, from: number, to: number): string | null {
  for (let k = to - 1; k >= from; k--) {
    const ch = text[k];
    if (ch !== ' ' && ch !== '\t' && ch !== '\n' && ch !== '\r' && ch !== '\f' && ch !== '\v') return ch;
  }
  return null;
}

/** The index of the last character of the string or character literal whose quote is at `i`. */
function literalLast(text: string, i: number): number {
  // A raw string `R"d(…)d"` holds anything up to its own end.
  const raw = text[i] === '"' && text[i - 1] === 'R' && /^[^()\\\s]{0,16}\(/.exec(text.slice(i + 1, i + 18));
  if (!raw) return literalEnd(text, i) - 1;
  const close = text.indexOf(')' + raw[0].slice(0, -1) + '"', i);
  return close === -1 ? text.length - 1 : close + raw[0].length;
}

/**
 * `text` with each range of `ranges` blanked, line breaks kept: slices joined, not a character
 * array (a keystroke before a selected group re-reads a 200 KB file; splitting it cost 30 ms).
 */
function blankRanges(text: string, ranges: [number, number][]): string {
  const sorted = [...ranges].sort((x, y) => x[0] - y[0]);
  const parts: string[] = [];
  let at = 0;
  for (const [s, e] of sorted) {
    const start = Math.max(s, at);
    if (e <= start) continue;
    parts.push(text.slice(at, start), text.slice(start, e).replace(/[^\r\n]/g, ' '));
    at = e;
  }
  parts.push(text.slice(at));
  return parts.join('');
}

const ANY_CONDITIONAL = /^[ \t]*#[ \t]*if/m;

/**
 * `text` with, for each `#if` group whose branches do not all balance, the branches other than
 * the one the configuration takes (and the group's directive lines) blanked. Unchanged (the same
 * string) when there is no such group.
 */
export function selectUnbalancedBranches(text: string, decide: ConditionOracle): string {
  if (!ANY_CONDITIONAL.test(text)) return text;
  const root: Balance = { brace: 0, paren: 0, minBrace: 0, minParen: 0 };
  /** Open groups, innermost last, each with its current branch last. */
  const open: Group[] = [];
  const blanks: [number, number][] = [];
  const current = (): Balance => open.at(-1)?.branches.at(-1) ?? root;
  /** The last character of code seen (directives and comments are not code). */
  let lastCode = '';
  /** Where the text not yet looked at begins: code between events is only read for lastCode. */
  let gapStart = 0;
  const n = text.length;
  // Only these characters matter; the scan jumps from one to the next (a keystroke re-reads the
  // whole file: a character-by-character loop cost milliseconds on a 200 KB file).
  const EVENT = /[#/"'{}()]/g;
  for (let m = EVENT.exec(text); m; m = EVENT.exec(text)) {
    let i = m.index;
    const c = text[i];
    // Before a directive or a comment, the code between the last event and this one counts: its
    // last non-blank character (a code event is itself the last code, so it needs no look back).
    if (c === '#' || c === '/') lastCode = lastNonBlank(text, gapStart, i) ?? lastCode;
    if (c === '#') {
      const lineStart = text.lastIndexOf('\n', i - 1) + 1;
      if (!/^[ \t\f\v\r]*$/.test(text.slice(lineStart, i))) {
        lastCode = c; // `#` inside a line of code (a stray one): code
      } else {
        const end = directiveEnd(text, i);
        const body = text
          .slice(i + 1, end)
          .replace(/\\\r?\n/g, ' ')
          .trimStart();
        const d = CONDITIONAL.exec(body);
        if (d) directive(d[1], body.slice(d[1].length), lineStart, end);
        i = end - 1;
      }
    } else if (c === '/' && text[i + 1] === '/') {
      i = directiveEnd(text, i) - 1; // a `\` at its end continues a line comment too
    } else if (c === '/' && text[i + 1] === '*') {
      const close = text.indexOf('*/', i + 2);
      i = close === -1 ? n - 1 : close + 1;
    } else {
      lastCode = c;
      if (c === '"' || (c === "'" && !/[0-9A-Fa-f]/.test(text[i - 1] ?? ''))) i = literalLast(text, i);
      else if (c === '{' || c === '}' || c === '(' || c === ')') {
        const b = current();
        if (c === '{') b.brace++;
        else if (c === '}') b.minBrace = Math.min(b.minBrace, --b.brace);
        else if (c === '(') b.paren++;
        else b.minParen = Math.min(b.minParen, --b.paren);
      }
    }
    gapStart = i + 1;
    EVENT.lastIndex = i + 1;
  }

  function directive(kind: string, rest: string, start: number, end: number): void {
    const branch = (): Branch => ({
      kind,
      condition: rest.replace(/\/\/.*$|\/\*.*?\*\//g, ' ').trim(),
      directive: [start, end],
      content: [end, end],
      brace: 0,
      paren: 0,
      minBrace: 0,
      minParen: 0,
    });
    if (kind === 'if' || kind === 'ifdef' || kind === 'ifndef') {
      open.push({ branches: [branch()], midItem: !ITEM_BOUNDARY.has(lastCode) });
      return;
    }
    const g = open.at(-1);
    if (!g) return; // a stray #else/#endif: nothing to pair it with
    g.branches.at(-1)!.content[1] = start;
    if (kind !== 'endif') {
      g.branches.push(branch());
      return;
    }
    open.pop();
    const effect = resolve(g, [start, end]);
    if (effect) fold(current(), effect);
  }

  /** The group's effect on its enclosing branch, recording what to blank when it does not balance. */
  function resolve(g: Group, endif: [number, number]): Balance | null {
    if (g.branches.every(balanced) && !g.midItem) return null;
    const chosen = chosenBranch(g, decide);
    g.branches.forEach((b, i) => {
      blanks.push(b.directive);
      if (i !== chosen) blanks.push(b.content);
    });
    blanks.push(endif);
    return chosen === -1 ? null : g.branches[chosen];
  }

  return blanks.length ? blankRanges(text, blanks) : text;
}
