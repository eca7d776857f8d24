// Text-level helpers shared by the manual-unroll detectors. Pure JS on statement texts: each
// tree-sitter node access is a wasm call, so everything that can be decided on text is decided here.

/** A name with a numeric suffix (`a1`, `acc12`): such names step like constants between copies. */
export const SUFFIX_RE = /^([A-Za-z_]\w*?)(\d+)$/;
const TOKEN_RE = /[A-Za-z_]\w*|\.?\d[\w.']*|->|::|<<|>>|\+\+|--|&&|\|\||[<>=!+\-*/%&|^]=|\S/g;

export function norm(text: string): string {
  return text.replace(/\s+/g, '');
}

export function parseIntLiteral(text: string): number | null {
  const t = text.replace(/'/g, '').replace(/[uUlLzZ]+$/, '');
  let v: number;
  if (/^0[xX][0-9a-fA-F]+$/.test(t)) v = parseInt(t.slice(2), 16);
  else if (/^0[bB][01]+$/.test(t)) v = parseInt(t.slice(2), 2);
  else if (/^0[0-7]+$/.test(t)) v = parseInt(t.slice(1), 8);
  else if (/^(0|[1-9][0-9]*)$/.test(t)) v = parseInt(t, 10);
  else return null;
  return Number.isSafeInteger(v) ? v : null;
}

/** Whole-word occurrence of `name` in `text`. */
export function mentions(text: string, name: string): boolean {
  if (!name) return false;
  for (let i = text.indexOf(name); i >= 0; i = text.indexOf(name, i + 1)) {
    const before = i === 0 ? ' ' : text[i - 1];
    const after = text[i + name.length] ?? ' ';
    if (!/\w/.test(before) && !/\w/.test(after)) return true;
  }
  return false;
}

export function mentionsAny(text: string, names: Iterable<string>): boolean {
  for (const n of names) if (mentions(text, n)) return true;
  return false;
}

export function squash(text: string, max = 120): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length > max ? t.slice(0, max - 1) + '…' : t;
}

export function stripSemi(t: string): string {
  return t.replace(/;\s*$/, '');
}

export function isPow2(v: number): boolean {
  return Number.isSafeInteger(v) && v > 0 && (v & (v - 1)) === 0;
}

// ---------------------------------------------------------------------------------------------
// Tokens (prefilter, fast path and hover templates)
// ---------------------------------------------------------------------------------------------

interface Tok {
  s: string;
  at: number;
}

function tokenize(text: string): Tok[] {
  const out: Tok[] = [];
  TOKEN_RE.lastIndex = 0;
  for (let m = TOKEN_RE.exec(text); m; m = TOKEN_RE.exec(text)) out.push({ s: m[0], at: m.index });
  return out;
}

const isNum = (s: string) => /^\.?\d/.test(s);
/**
 * Statement text without digits, whitespace and the characters of offset arithmetic
 * (`+ - * ( )`): two offset copies have equal skeletons, or one is the other plus the
 * characters of a stride term (`idx` vs `idx + 2 * blockDim.x`). A cheap, pure-JS prefilter.
 */
export function skeleton(text: string): string {
  return text.replace(/[\d\s+\-*()]+/g, '');
}

/** Characters a stride term may add to a skeleton: names, `.`, `->`, `::`, `<<`, `/`. */
const EXTRA_CHAR = /[\w.>:</]/;

export function skeletonsCompatible(a: string, b: string): boolean {
  if (a.length === b.length) return a === b;
  const [s, l] = a.length < b.length ? [a, b] : [b, a];
  if (l.length - s.length > 48) return false;
  let i = 0;
  for (let k = 0; k < l.length; k++) {
    const ch = l[k];
    if (i < s.length && s[i] === ch) i++;
    else if (!EXTRA_CHAR.test(ch)) return false;
  }
  return i === s.length;
}

/**
 * A statement's text with whitespace runs collapsed and every number and name suffix replaced
 * by `#`; `vals` holds what was replaced, in order ('n…' numbers, 's…' suffixes).
 */
export interface Shape {
  masked: string;
  vals: string[];
}

const SHAPE_RE = /[A-Za-z_]\w*|\.?\d[\w.']*|\s+/g;

export function shapeOf(text: string): Shape {
  const vals: string[] = [];
  const masked = text.replace(SHAPE_RE, (m: string) => {
    const c0 = m.charCodeAt(0);
    if (c0 <= 32) return ' ';
    const last = m.charCodeAt(m.length - 1);
    if (c0 === 46 || (c0 >= 48 && c0 <= 57)) {
      vals.push('n' + m);
      return '#';
    }
    if (last < 48 || last > 57) return m;
    let i = m.length - 1;
    while (i > 0 && m.charCodeAt(i - 1) >= 48 && m.charCodeAt(i - 1) <= 57) i--;
    vals.push('s' + m.slice(i));
    return m.slice(0, i) + '#';
  });
  return { masked, vals };
}

/**
 * Token-level difference of two statements whose texts differ only in integers and name
 * suffixes: a key that identifies the pair's shape (the common text, the values that stay, and
 * the steps of those that change), or null. Pairs with equal keys have equal diffs up to the
 * absolute values of the stepping constants, so the tree walk is done once per key: the pairs
 * (copy 1, copy 2), (copy 2, copy 3), … of a run share one key.
 */
export function shapeDiffKey(a: Shape, b: Shape): string | null {
  if (a.masked !== b.masked || a.vals.length !== b.vals.length) return null;
  const diffs: string[] = [];
  for (let i = 0; i < a.vals.length; i++) {
    const x = a.vals[i];
    const y = b.vals[i];
    if (x === y) {
      diffs.push(x);
      continue;
    }
    let d: number;
    if (x[0] === 's') d = parseInt(y.slice(1), 10) - parseInt(x.slice(1), 10);
    else {
      const vx = parseIntLiteral(x.slice(1));
      const vy = parseIntLiteral(y.slice(1));
      if (vx === null || vy === null) return null;
      d = vy - vx;
    }
    diffs.push(`${x[0]}Δ${d}`);
  }
  return a.masked + '|' + diffs.join(',');
}

/** Text of copy 0 with the parts that step between copies written in terms of j = 0..copies-1. */
export function templateOf(aText: string, bText: string, copies: number): string | null {
  const a = tokenize(aText);
  const b = tokenize(bText);
  if (a.length !== b.length) return null;
  let out = '';
  let pos = 0;
  let changed = false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i].s;
    const y = b[i].s;
    if (x === y) continue;
    let rep: string;
    if (isNum(x) && isNum(y)) {
      const vx = parseIntLiteral(x);
      const vy = parseIntLiteral(y);
      if (vx === null || vy === null) return null;
      const step = vy - vx;
      const jt = step === 1 ? 'j' : `${step}*j`;
      rep = vx === 0 ? jt : `${vx} + ${jt}`;
    } else {
      const mx = SUFFIX_RE.exec(x);
      const my = SUFFIX_RE.exec(y);
      if (!mx || !my || mx[1] !== my[1]) return null;
      const v0 = parseInt(mx[2], 10);
      const step = parseInt(my[2], 10) - v0;
      rep = `${mx[1]}{${v0}..${v0 + step * (copies - 1)}}`;
    }
    out += aText.slice(pos, a[i].at) + rep;
    pos = a[i].at + x.length;
    changed = true;
  }
  return changed ? stripSemi(squash(out + aText.slice(pos))) : null;
}
