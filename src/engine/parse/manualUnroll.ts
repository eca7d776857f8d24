// Detects code that a programmer unrolled by hand: statements that are copies of one another
// except for a constant index offset. Four shapes are reported (see ManualUnrollPattern):
//
//   strided-body  for (k = 0; k < n; k += 4) { s += a[k]; s += a[k + 1]; s += a[k + 2]; s += a[k + 3]; }
//   offset-run    int a1 = g[idx]; int a2 = g[idx + blockDim.x]; int a3 = g[idx + 2 * blockDim.x];
//   warp-tail     v[tid] += v[tid + 32]; v[tid] += v[tid + 16]; … v[tid] += v[tid + 1];
//   coarsening    r0 = 4 * threadIdx.x; … out[r0 + 0] = …; out[r0 + 1] = …; … out[r0 + 3] = …;
//
// The core is a structural diff of two statements (`Analyzer.diffNodes`): it walks both syntax
// trees in parallel and records every place where they differ ("sites"). Arithmetic is compared
// in a normalised linear form (constant + Σ coefficient·term), so `idx`, `idx + blockDim.x` and
// `idx + 2 * blockDim.x` differ by one `blockDim.x` each, `k` equals `k + 0`, and `2*y + 1` is
// `2*y` plus the constant 1. Identifiers with numeric suffixes (a1, a2, …) step like constants.
// Two statements are offset copies when every site is such a step; a run of copies is uniform
// when consecutive pairs have identical site signatures (same places, same steps).
//
// Cost. Every node access in web-tree-sitter crosses into WebAssembly (about a microsecond), so
// the scan touches each statement only a few times: statements are compared only with their
// near neighbours (i+1 … i+4), a token-level prefilter rejects pairs that cannot be copies
// without walking their trees, and once a pair shape has been diffed its result is reused for
// every later pair with the same token-level difference (the 3rd, 4th, … copy of a run costs
// no tree walk). The work is linear in the number of statements. Nothing here throws.
import type { Node } from './parser';
import type { ManualUnroll } from './model';

export interface ConstEval {
  /** value of an integral constant expression, or null if not a compile-time constant */
  (node: Node): number | null;
}

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

const MAX_DEPTH = 120;
const MAX_SITES = 64;
/** Largest group of statements that is repeated as one copy in an offset run. */
const MAX_GROUP = 4;
/** Largest group of statements repeated as one copy inside a strided loop body. */
const MAX_BODY_GROUP = 8;
const SYNC_RE = /^\s*(__syncwarp|__syncthreads|__syncthreads_count|__syncthreads_and|__syncthreads_or|__threadfence_block|__threadfence)\s*\(/;
const SUFFIX_RE = /^([A-Za-z_]\w*?)(\d+)$/;
const TOKEN_RE = /[A-Za-z_]\w*|\.?\d[\w.']*|->|::|<<|>>|\+\+|--|&&|\|\||[<>=!+\-*/%&|^]=|\S/g;

function norm(text: string): string {
  return text.replace(/\s+/g, '');
}

function parseIntLiteral(text: string): number | null {
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
function mentions(text: string, name: string): boolean {
  if (!name) return false;
  for (let i = text.indexOf(name); i >= 0; i = text.indexOf(name, i + 1)) {
    const before = i === 0 ? ' ' : text[i - 1];
    const after = text[i + name.length] ?? ' ';
    if (!/\w/.test(before) && !/\w/.test(after)) return true;
  }
  return false;
}

function mentionsAny(text: string, names: Iterable<string>): boolean {
  for (const n of names) if (mentions(text, n)) return true;
  return false;
}

function opOf(n: Node): string {
  const o = n.childForFieldName('operator');
  return o ? o.type : '';
}

function namedKids(n: Node): Node[] {
  return typedKids(n).map((k) => k[0]);
}

/** Named children other than comments, with their types (each `.type` is a wasm call). */
function typedKids(n: Node): Array<[Node, string]> {
  const out: Array<[Node, string]> = [];
  for (const c of n.namedChildren) {
    if (!c) continue;
    const t = c.type;
    if (t !== 'comment') out.push([c, t]);
  }
  return out;
}

function squash(text: string, max = 120): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length > max ? t.slice(0, max - 1) + '…' : t;
}

function stripSemi(t: string): string {
  return t.replace(/;\s*$/, '');
}

function endRowOf(n: Node): number {
  const e = n.endPosition;
  return e.column === 0 && e.row > n.startPosition.row ? e.row - 1 : e.row;
}

function isPow2(v: number): boolean {
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
function skeleton(text: string): string {
  return text.replace(/[\d\s+\-*()]+/g, '');
}

/** Characters a stride term may add to a skeleton: names, `.`, `->`, `::`, `<<`, `/`. */
const EXTRA_CHAR = /[\w.>:</]/;

function skeletonsCompatible(a: string, b: string): boolean {
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
interface Shape {
  masked: string;
  vals: string[];
}

const SHAPE_RE = /[A-Za-z_]\w*|\.?\d[\w.']*|\s+/g;

function shapeOf(text: string): Shape {
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
function shapeDiffKey(a: Shape, b: Shape): string | null {
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
function templateOf(aText: string, bText: string, copies: number): string | null {
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

// ---------------------------------------------------------------------------------------------
// Linear forms and the structural diff
// ---------------------------------------------------------------------------------------------

/** constant + Σ coef·term; term keys are whitespace-free source texts of opaque sub-expressions. */
interface Lin {
  c: number;
  t: Map<string, number>;
}

function add(a: Lin, b: Lin, sign: number): Lin {
  const t = new Map(a.t);
  for (const [k, v] of b.t) t.set(k, (t.get(k) ?? 0) + sign * v);
  for (const [k, v] of t) if (v === 0) t.delete(k);
  return { c: a.c + sign * b.c, t };
}

function scale(a: Lin, f: number): Lin {
  if (f === 0) return { c: 0, t: new Map() };
  const t = new Map<string, number>();
  for (const [k, v] of a.t) t.set(k, v * f);
  return { c: a.c * f, t };
}

/** A place where two compared statements differ. */
interface Site {
  kind: 'lin' | 'suffix';
  /** Texts of the differing sub-expressions. */
  aText: string;
  bText: string;
  /** Linear form of side a (lin sites). */
  aLin: Lin | null;
  /** Step from a to b per unit: '' = the constant 1, '#' = a name suffix, else a term's text. */
  delta: Map<string, number>;
  /**
   * Constant parts of a and b (lin sites), for the halving test of warp tails. Only valid for
   * a freshly diffed pair: a result reused through the shape memo may come from another pair
   * with the same steps (see halvingOf).
   */
  constA: number;
  constB: number;
  /** Inside a subscript (`A[…]`). */
  inIndex: boolean;
  /** The differing expression is `base + offset` (it has a non-constant term). */
  hasBase: boolean;
}

interface PairResult {
  sites: Site[];
  sig: string;
}

function siteSig(s: Site): string {
  const parts: string[] = [];
  for (const [k, v] of s.delta) parts.push(`${k}=${v}`);
  parts.sort();
  return (s.kind === 'suffix' ? 's:' : 'l:') + parts.join(',');
}

class Analyzer {
  private readonly linCache = new Map<string, Lin>();
  /** Pair results by token-level shape (see shapeDiffKey), shared by the functions of a tree. */
  readonly shapeMemo: Map<string, PairResult | null>;

  constructor(private readonly evalConst: ConstEval, owner: object) {
    this.shapeMemo = memoFor(owner);
  }

  private safeEval(n: Node): number | null {
    try {
      const v = this.evalConst(n);
      return typeof v === 'number' && Number.isSafeInteger(v) ? v : null;
    } catch {
      return null;
    }
  }

  private isArith(n: Node, type: string): boolean {
    switch (type) {
      case 'number_literal':
      case 'parenthesized_expression':
        return true;
      case 'binary_expression': {
        const op = opOf(n);
        return op === '+' || op === '-' || op === '*' || op === '<<';
      }
      case 'unary_expression': {
        const op = opOf(n);
        return op === '-' || op === '+';
      }
      default:
        return false;
    }
  }

  lin(n: Node, depth = 0): Lin {
    const text = n.text;
    const type = n.type;
    const key = `${n.startIndex}|${type}|${text.length}`;
    const hit = this.linCache.get(key);
    if (hit) return hit;
    let r: Lin;
    try {
      r = depth > MAX_DEPTH ? opaque(text) : this.linUncached(n, type, text, depth);
    } catch {
      r = opaque(text);
    }
    this.linCache.set(key, r);
    return r;
  }

  private linUncached(n: Node, type: string, text: string, depth: number): Lin {
    switch (type) {
      case 'number_literal': {
        const v = parseIntLiteral(text);
        return v === null ? opaque(text) : { c: v, t: new Map() };
      }
      case 'parenthesized_expression': {
        const k = namedKids(n);
        return k.length === 1 ? this.lin(k[0], depth + 1) : opaque(text);
      }
      case 'unary_expression': {
        const op = opOf(n);
        const arg = n.childForFieldName('argument');
        if (!arg) return opaque(text);
        if (op === '-') return scale(this.lin(arg, depth + 1), -1);
        if (op === '+') return this.lin(arg, depth + 1);
        return opaque(text);
      }
      case 'binary_expression': {
        const l = n.childForFieldName('left');
        const r = n.childForFieldName('right');
        if (!l || !r || l.isMissing || r.isMissing) return opaque(text);
        const op = opOf(n);
        if (op === '+' || op === '-' || op === '*' || op === '<<' || op === '>>' || op === '/') {
          const L = this.lin(l, depth + 1);
          const R = this.lin(r, depth + 1);
          const lc = L.t.size === 0;
          const rc = R.t.size === 0;
          let out: Lin | null = null;
          if (op === '+') out = add(L, R, 1);
          else if (op === '-') out = add(L, R, -1);
          else if (op === '*') {
            if (lc) out = scale(R, L.c);
            else if (rc) out = scale(L, R.c);
          } else if (op === '<<') {
            if (rc && R.c >= 0 && R.c < 31) out = scale(L, 2 ** R.c);
          } else if (op === '>>') {
            if (lc && rc && R.c >= 0 && R.c < 31) out = { c: Math.floor(L.c / 2 ** R.c), t: new Map() };
          } else if (op === '/') {
            if (lc && rc && R.c !== 0) out = { c: Math.trunc(L.c / R.c), t: new Map() };
          }
          if (out && Number.isSafeInteger(out.c) && [...out.t.values()].every(Number.isSafeInteger)) return out;
        }
        return opaque(text);
      }
      case 'identifier':
      case 'qualified_identifier':
      case 'sizeof_expression': {
        const v = this.safeEval(n);
        return v === null ? opaque(text) : { c: v, t: new Map() };
      }
      default:
        return opaque(text);
    }
  }

  /**
   * Walks a and b in parallel. Returns false when they differ in a way that is not a constant
   * step; otherwise pushes every differing place onto `sites`.
   */
  diffNodes(a: Node, b: Node, sites: Site[], inIndex: boolean, depth: number): boolean {
    const ta = a.text;
    const tb = b.text;
    if (ta === tb) return true;
    if (depth > MAX_DEPTH || sites.length > MAX_SITES) return false;
    if (a.isMissing || b.isMissing) return false;
    const typeA = a.type;
    const typeB = b.type;
    if (typeA === 'ERROR' || typeB === 'ERROR') return false;
    if (this.isArith(a, typeA) || this.isArith(b, typeB)) {
      const la = this.lin(a);
      const lb = this.lin(b);
      const delta = new Map<string, number>();
      for (const [k, v] of la.t) delta.set(k, -v);
      for (const [k, v] of lb.t) delta.set(k, (delta.get(k) ?? 0) + v);
      let nonConst = 0;
      for (const [k, v] of delta) {
        if (v === 0) delta.delete(k);
        else nonConst++;
      }
      if (lb.c !== la.c) delta.set('', lb.c - la.c);
      if (delta.size === 0) return true; // equal after normalisation (`k` vs `k + 0`)
      if (nonConst <= 1 && linComparable(la, lb)) {
        sites.push({
          kind: 'lin',
          aText: ta,
          bText: tb,
          aLin: la,
          delta,
          constA: la.c,
          constB: lb.c,
          inIndex,
          hasBase: la.t.size > 0 || lb.t.size > 0,
        });
        return true;
      }
      // several terms changed: compare structurally below
    }
    if (typeA !== typeB) return false;
    const na = a.childCount;
    const nb = b.childCount;
    if (na === 0 || nb === 0) {
      if (na !== nb) return false;
      if (typeA === 'identifier' || typeA === 'field_identifier') {
        const ma = SUFFIX_RE.exec(ta);
        const mb = SUFFIX_RE.exec(tb);
        if (ma && mb && ma[1] === mb[1]) {
          const d = parseInt(mb[2], 10) - parseInt(ma[2], 10);
          if (d !== 0 && Number.isSafeInteger(d)) {
            sites.push({
              kind: 'suffix',
              aText: ta,
              bText: tb,
              aLin: null,
              delta: new Map([['#', d]]),
              constA: 0,
              constB: 0,
              inIndex,
              hasBase: false,
            });
            return true;
          }
        }
      }
      return false;
    }
    if (na !== nb) return false;
    const ka = a.children;
    const kb = b.children;
    const isSub = typeA === 'subscript_expression';
    const isSubList = typeA === 'subscript_argument_list';
    for (let i = 0; i < na; i++) {
      const ca = ka[i];
      const cb = kb[i];
      if (!ca || !cb) return false;
      const idx = inIndex || isSubList || (isSub && i > 0);
      if (!this.diffNodes(ca, cb, sites, idx, depth + 1)) return false;
    }
    return true;
  }
}

/**
 * A pair's diff depends only on the two statements' text and on which names the evaluator
 * resolves to constants, so results are shared between the functions of one syntax tree (one
 * file version): the same unrolled statement shapes recur across a file's kernels. Keyed weakly
 * by the tree, so a new parse starts afresh.
 */
const memoByOwner = new WeakMap<object, Map<string, PairResult | null>>();
const MEMO_LIMIT = 20000;

function memoFor(owner: object): Map<string, PairResult | null> {
  let m = memoByOwner.get(owner);
  if (!m) {
    m = new Map();
    memoByOwner.set(owner, m);
  } else if (m.size > MEMO_LIMIT) m.clear();
  return m;
}

/**
 * Two linear forms are offsets of one another when they share a base term (`idx` and
 * `idx + blockDim.x`), are both constants, or one is zero (`a[0]`, `a[blockDim.x]`); `y` vs `1`
 * is a different value, not an offset.
 */
function linComparable(a: Lin, b: Lin): boolean {
  if (a.t.size === 0 && b.t.size === 0) return true;
  if ((a.t.size === 0 && a.c === 0) || (b.t.size === 0 && b.c === 0)) return true;
  for (const k of a.t.keys()) if (b.t.has(k)) return true;
  return false;
}

function opaque(text: string): Lin {
  return { c: 0, t: new Map([[norm(text), 1]]) };
}

// ---------------------------------------------------------------------------------------------
// Statement lists
// ---------------------------------------------------------------------------------------------

interface Stmt {
  node: Node;
  type: string;
  text: string;
  row: number;
  /** The statement without its `if (…)` guard (itself when unguarded). */
  core: Node;
  coreType: string;
  coreText: string;
  /** Text of the guard's condition clause, when the statement is `if (cond) stmt;` (no else). */
  guardText: string | null;
  guard: Node | null;
  eligible: boolean;
  isSync: boolean;
  shape?: Shape;
  skel?: string;
  guardShape?: Shape;
  ifConsequence?: Node | null;
  ifAlternative?: Node | null;
}

interface StmtList {
  items: Stmt[];
  cache: Map<number, PairResult | null>;
  /** The for_statement whose body holds this list (without a loop in between), by startIndex. */
  ownerFor: number;
}

interface ForInfo {
  node: Node;
  list: StmtList;
  index: number;
  lists: StmtList[];
}

interface CoarseIndex {
  name: string;
  factor: number;
  row: number;
  text: string;
  /** Variables computed from this index (they step with it). */
  derived: Set<string>;
}

/** Text of the operand that ends just before `end` (a name, a number or a parenthesised group). */
function operandBefore(text: string, end: number): string {
  let i = end - 1;
  while (i >= 0 && /\s/.test(text[i])) i--;
  if (text[i] === ')') {
    let depth = 0;
    for (let j = i; j >= 0; j--) {
      if (text[j] === ')') depth++;
      else if (text[j] === '(' && --depth === 0) return text.slice(j, i + 1);
    }
    return text.slice(0, i + 1);
  }
  const m = /[\w.]+$/.exec(text.slice(Math.max(0, i - 80), i + 1));
  return m ? m[0] : '';
}

/** Text of the operand that starts at or after `start`. */
function operandAfter(text: string, start: number): string {
  let i = start;
  while (i < text.length && /\s/.test(text[i])) i++;
  if (text[i] === '(') {
    let depth = 0;
    for (let j = i; j < text.length; j++) {
      if (text[j] === '(') depth++;
      else if (text[j] === ')' && --depth === 0) return text.slice(i, j + 1);
    }
    return text.slice(i);
  }
  const m = /^[\w.]+/.exec(text.slice(i, i + 80));
  return m ? m[0] : '';
}

/** Declarations of integer (index-like) variables. */
const INTEGRAL_DECL_RE =
  /^\s*(?:(?:const|constexpr|static|register|volatile)\s+)*(?:unsigned|signed|int|long|short|char|size_t|ptrdiff_t|auto|u?int(?:8|16|32|64)?_t|uint|unsigned\s+int)\b[^(]*?=/;

/** `const unsigned int idx = …;` (one declarator): name and value text. */
const SIMPLE_DECL_RE = /^[^=;{}()]*?\b([A-Za-z_]\w*)\s*=(?!=)\s*([^;]*?)\s*;?\s*$/;
/** `idx = …;`: name and value text. */
const SIMPLE_ASSIGN_RE = /^\s*([A-Za-z_]\w*)\s*=(?!=)\s*([^;]*?)\s*;?\s*$/;

/** Statements that contain statements. */
const NESTING = new Set([
  'if_statement',
  'for_statement',
  'for_range_loop',
  'while_statement',
  'do_statement',
  'switch_statement',
  'labeled_statement',
  'case_statement',
]);

function isStatementType(t: string): boolean {
  return (
    t.endsWith('_statement') ||
    t === 'declaration' ||
    t === 'ERROR' ||
    t === 'for_range_loop' ||
    t === 'type_definition' ||
    t.startsWith('preproc_')
  );
}

function shapeOfStmt(s: Stmt): Shape {
  return (s.shape ??= shapeOf(s.coreText));
}

function skelOf(s: Stmt): string {
  return (s.skel ??= skeleton(s.coreText));
}

/** Walks the statement lists of one function in document order. */
class FunctionScan {
  readonly lists: StmtList[] = [];
  readonly fors: ForInfo[] = [];
  readonly coarse: CoarseIndex[] = [];
  readonly threadVars = new Set<string>();
  private readonly forByStart = new Map<number, ForInfo>();

  constructor(private readonly an: Analyzer, private readonly checkErrors: boolean) {}

  scanContainer(n: Node, owner: number, depth: number): void {
    if (depth > 200) return;
    const type = n.type;
    if (type === 'compound_statement' || type === 'ERROR' || type === 'case_statement' || type.startsWith('preproc_') || type === 'translation_unit') {
      const kids = typedKids(n);
      let skipId = -1;
      if (type === 'case_statement') {
        const v = n.childForFieldName('value');
        if (v) skipId = v.startIndex;
      }
      const stmts: Array<[Node, string]> = [];
      for (const [k, t] of kids) {
        if (isStatementType(t) && !(skipId >= 0 && k.startIndex === skipId && t !== 'expression_statement')) stmts.push([k, t]);
      }
      this.scanList(stmts, owner, depth);
    } else if (NESTING.has(type)) {
      // a lone sub-statement (`if (c) for (…) …`): only statements holding others matter
      this.scanList([[n, type]], owner, depth);
    }
  }

  private scanList(stmts: Array<[Node, string]>, owner: number, depth: number): void {
    const list: StmtList = { items: [], cache: new Map(), ownerFor: owner };
    this.lists.push(list);
    const ownerInfo = this.forByStart.get(owner);
    if (ownerInfo) ownerInfo.lists.push(list);
    for (const [s, type] of stmts) {
      const item = this.makeStmt(s, type);
      list.items.push(item);
      if (type === 'declaration' || type === 'expression_statement') this.collectDecl(s, type, item.text);
      if (type === 'for_statement') {
        const info: ForInfo = { node: s, list, index: list.items.length - 1, lists: [] };
        this.fors.push(info);
        this.forByStart.set(s.startIndex, info);
        const init = s.childForFieldName('initializer');
        if (init && init.type === 'declaration') this.collectDecl(init, 'declaration', init.text);
      }
      this.descend(item, owner, depth + 1);
    }
  }

  private descend(item: Stmt, owner: number, depth: number): void {
    const s = item.node;
    const type = item.type;
    const sub = (n: Node | null | undefined, o = owner) => {
      if (n) this.scanContainer(n, o, depth);
    };
    switch (type) {
      case 'compound_statement':
      case 'ERROR':
      case 'case_statement':
        sub(s);
        break;
      case 'if_statement': {
        sub(item.ifConsequence);
        const alt = item.ifAlternative;
        if (alt) for (const c of namedKids(alt)) if (isStatementType(c.type)) sub(c);
        break;
      }
      case 'for_statement':
        sub(s.childForFieldName('body'), s.startIndex);
        break;
      case 'for_range_loop':
      case 'while_statement':
      case 'do_statement':
        sub(s.childForFieldName('body'), -1);
        break;
      case 'switch_statement': {
        const body = s.childForFieldName('body');
        if (body) for (const c of namedKids(body)) if (c.type === 'case_statement') sub(c);
        break;
      }
      case 'labeled_statement':
        for (const c of namedKids(s)) if (isStatementType(c.type)) sub(c);
        break;
      default:
        if (type.startsWith('preproc_') && type !== 'preproc_call') sub(s);
    }
  }

  private makeStmt(s: Node, type: string): Stmt {
    const text = s.text;
    let core = s;
    let coreType = type;
    let coreText = text;
    let guard: Node | null = null;
    let ifConsequence: Node | null = null;
    let ifAlternative: Node | null = null;
    if (type === 'if_statement') {
      ifAlternative = s.childForFieldName('alternative');
      ifConsequence = s.childForFieldName('consequence');
    }
    if (type === 'if_statement' && !ifAlternative) {
      const cons = ifConsequence;
      const cond = s.childForFieldName('condition');
      if (cons && cond) {
        let inner: Node | null = cons;
        if (cons.type === 'compound_statement') {
          const k = namedKids(cons);
          inner = k.length === 1 ? k[0] : null;
        }
        if (inner) {
          core = inner;
          coreType = inner.type;
          coreText = inner.text;
          guard = cond;
        }
      }
    }
    const isSync = type === 'expression_statement' && SYNC_RE.test(text);
    const eligible = type !== 'ERROR' && !type.startsWith('preproc_') && !(this.checkErrors && s.hasError);
    return {
      node: s,
      type,
      text,
      row: s.startPosition.row,
      core,
      coreType,
      coreText,
      guard,
      guardText: guard ? guard.text : null,
      eligible,
      isSync,
      ifConsequence,
      ifAlternative,
    };
  }

  /** Tracks thread-index variables and `N * threadIdx`-style coarsened indices. */
  private collectDecl(s: Node, type: string, text: string): void {
    if (type === 'expression_statement' && !/^\s*[A-Za-z_]\w*\s*=(?!=)/.test(text)) return;
    const relevant =
      /\bthreadIdx\b/.test(text) ||
      mentionsAny(text, this.threadVars) ||
      this.coarse.some((c) => mentions(text, c.name) || mentionsAny(text, c.derived));
    if (!relevant) return;
    // thread indices are integers: `float dy = coory - atom.y` is not one
    const integral = type === 'expression_statement' || INTEGRAL_DECL_RE.test(text);
    // fast path (no tree access): one declarator or assignment whose value cannot be an N-fold
    // thread index; only the names are tracked
    const m = (type === 'declaration' ? SIMPLE_DECL_RE : SIMPLE_ASSIGN_RE).exec(text);
    if (m && !/[,{}]/.test(m[2]) && !(integral && this.maybeScaledThreadTerm(m[2]))) {
      this.noteValue(m[1], m[2], null, s.startPosition.row, integral);
      return;
    }
    const pairs: Array<[string, Node]> = [];
    if (type === 'declaration') {
      for (const d of namedKids(s)) {
        if (d.type !== 'init_declarator') continue;
        const value = d.childForFieldName('value');
        let id = d.childForFieldName('declarator');
        for (let i = 0; id && id.type !== 'identifier' && i < 8; i++) id = id.childForFieldName('declarator');
        if (id && value) pairs.push([id.text, value]);
      }
    } else {
      const e = s.namedChild(0);
      if (e && e.type === 'assignment_expression' && opOf(e) === '=') {
        const l = e.childForFieldName('left');
        const r = e.childForFieldName('right');
        if (l && r && l.type === 'identifier') pairs.push([l.text, r]);
      }
    }
    for (const [name, value] of pairs) this.noteValue(name, value.text, value, s.startPosition.row, integral);
  }

  private noteValue(name: string, t: string, value: Node | null, row: number, integral: boolean): void {
    if (integral && this.isThreadTerm(t)) {
      const f = value ? this.threadTermFactor(value) : 0;
      if (f >= 2) {
        this.coarse.push({ name, factor: f, row, text: squash(`${name} = ${t}`, 80), derived: new Set() });
        return;
      }
      this.threadVars.add(name);
    }
    for (const c of this.coarse) {
      if (c.name !== name && (mentions(t, c.name) || mentionsAny(t, c.derived))) c.derived.add(name);
    }
  }

  /**
   * Could `text` hold a thread index times a factor (`4 * threadIdx.x`, `tid << 2`,
   * `2 * (blockIdx.x * blockDim.x + threadIdx.x)`)? A textual test that spares the linear form
   * for the usual `blockIdx.x * blockDim.x + threadIdx.x`.
   */
  private maybeScaledThreadTerm(text: string): boolean {
    const re = /\*|<</g;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      if (this.isThreadTerm(operandBefore(text, m.index)) || this.isThreadTerm(operandAfter(text, m.index + m[0].length))) return true;
    }
    return false;
  }

  isThreadTerm(text: string): boolean {
    return /\bthreadIdx\b/.test(text) || mentionsAny(text, this.threadVars);
  }

  private threadTermFactor(value: Node): number {
    let best = 0;
    for (const [k, c] of this.an.lin(value).t) {
      const ac = Math.abs(c);
      if (ac >= 2 && ac <= 64 && this.isThreadTerm(k)) best = Math.max(best, ac);
    }
    return best;
  }
}

// ---------------------------------------------------------------------------------------------
// Pairs and runs
// ---------------------------------------------------------------------------------------------

function comparePair(an: Analyzer, list: StmtList, i: number, j: number): PairResult | null {
  const key = i * 65536 + j;
  const hit = list.cache.get(key);
  if (hit !== undefined) return hit;
  let res: PairResult | null = null;
  try {
    res = comparePairUncached(an, list.items[i], list.items[j]);
  } catch {
    res = null;
  }
  list.cache.set(key, res);
  return res;
}

/** Statement kinds that can be copies of each other (loops and switches are not compared). */
const COMPARABLE = new Set(['expression_statement', 'declaration', 'if_statement', 'compound_statement', 'return_statement']);
/** Longer statements are not compared (copies of a manual unroll are short). */
const MAX_STMT_CHARS = 2000;

function comparePairUncached(an: Analyzer, x: Stmt | undefined, y: Stmt | undefined): PairResult | null {
  if (!x || !y || !x.eligible || !y.eligible || x.coreType !== y.coreType || !COMPARABLE.has(x.coreType)) return null;
  if (x.coreText.length > MAX_STMT_CHARS || y.coreText.length > MAX_STMT_CHARS) return null;
  if (x.coreText === y.coreText) return { sites: [], sig: '' };
  if (!skeletonsCompatible(skelOf(x), skelOf(y))) return null;
  // guards, when both copies have one, must be offset copies too (any step)
  if (x.guard && y.guard && x.guardText !== y.guardText) {
    const gx = (x.guardShape ??= shapeOf(x.guardText ?? ''));
    const gy = (y.guardShape ??= shapeOf(y.guardText ?? ''));
    if (shapeDiffKey(gx, gy) === null && !an.diffNodes(x.guard, y.guard, [], false, 0)) return null;
  }
  const shape = shapeDiffKey(shapeOfStmt(x), shapeOfStmt(y));
  if (shape !== null) {
    const memo = an.shapeMemo.get(shape);
    if (memo !== undefined) return memo;
  }
  const sites: Site[] = [];
  const res = an.diffNodes(x.core, y.core, sites, false, 0) ? { sites, sig: sites.map(siteSig).join('|') } : null;
  if (shape !== null) an.shapeMemo.set(shape, res);
  return res;
}

interface Run {
  list: StmtList;
  start: number;
  group: number;
  copies: number;
  /** Results for the pairs linking copy 0 to copy 1 (one per statement of the group). */
  pairs: PairResult[];
}

/** Maximal uniform runs of copies of a group of `group` statements. */
function findRuns(an: Analyzer, list: StmtList, group: number, skip?: Uint8Array): Run[] {
  const n = list.items.length;
  const runs: Run[] = [];
  const pair = (i: number): PairResult | null => {
    if (i < 0 || i + group >= n) return null;
    if (skip && (skip[i] || skip[i + group])) return null;
    return comparePair(an, list, i, i + group);
  };
  let p = 0;
  while (p + group < n) {
    const first: PairResult[] = [];
    let anySites = false;
    for (let i = 0; i < group; i++) {
      const r = pair(p + i);
      if (!r) break;
      if (r.sites.length) anySites = true;
      first.push(r);
    }
    if (first.length < group || !anySites || (group > 1 && !isNaturalGroup(an, list, p, group))) {
      p++;
      continue;
    }
    let copies = 2;
    for (;;) {
      const base = p + (copies - 1) * group;
      let same = true;
      for (let i = 0; i < group && same; i++) {
        const r = pair(base + i);
        if (!r || r.sig !== first[i].sig) same = false;
      }
      if (!same) break;
      copies++;
    }
    runs.push({ list, start: p, group, copies, pairs: first });
    p += copies * group;
  }
  return runs;
}

/**
 * A repeated group must not consist of statements that are already offset copies of each other
 * (`v[t+1]; v[t+2]; v[t+4]; v[t+8]` is not two copies of a 2-statement group).
 */
function isNaturalGroup(an: Analyzer, list: StmtList, start: number, group: number): boolean {
  for (let i = start; i + 1 < start + group; i++) {
    const r = comparePair(an, list, i, i + 1);
    if (r && r.sites.length) return false;
  }
  return true;
}

function runItems(r: Run): Stmt[] {
  return r.list.items.slice(r.start, r.start + r.copies * r.group);
}

function runStartRow(r: Run): number {
  return r.list.items[r.start].row;
}

function runEndRow(r: Run): number {
  return endRowOf(r.list.items[r.start + r.copies * r.group - 1].node);
}

function allSites(r: Run): Site[] {
  const out: Site[] = [];
  for (const p of r.pairs) out.push(...p.sites);
  return out;
}

function describeCopies(r: Run): string {
  const items = r.list.items;
  const g = r.group;
  const U = r.copies;
  const first = items[r.start];
  const second = items[r.start + g];
  const last = items[r.start + (U - 1) * g];
  if (g === 1) {
    const core = templateOf(first.coreText, second.coreText, U);
    const guard = first.guardText && second.guardText ? templateOf(first.guardText, second.guardText, U) : null;
    const sameGuard = first.guardText !== null && first.guardText === second.guardText;
    const guarded = runItems(r).some((s) => s.guard);
    if (core) {
      let d = `${U} copies of \`${core}\``;
      if (/\bj\b/.test(core)) d += `, j = 0..${U - 1}`;
      if (guard) d += `, each guarded by \`if ${guard}\``;
      else if (sameGuard) d += `, each guarded by \`if ${squash(first.guardText ?? '', 60)}\``;
      else if (guarded) d += ', guarded';
      return d;
    }
    return `${U} copies, from \`${squash(stripSemi(first.text), 70)}\` to \`${squash(stripSemi(last.text), 70)}\``;
  }
  return `${U} copies of a ${g}-statement group, from \`${squash(stripSemi(first.text), 60)}\` to \`${squash(stripSemi(last.text), 60)}\``;
}

function stepWords(sites: Site[]): string {
  const units = new Set<string>();
  for (const s of sites) {
    if (s.kind === 'suffix') {
      const d = s.delta.get('#') ?? 1;
      units.add(`name suffix ${d < 0 ? '' : '+'}${d}`);
    } else
      for (const [k, v] of s.delta) {
        const sign = v < 0 ? '-' : '+';
        const m = Math.abs(v);
        units.add(k === '' ? `${sign}${m}` : `${sign}${m === 1 ? '' : m + '*'}${k}`);
      }
  }
  return 'per copy: ' + [...units].slice(0, 4).join(', ');
}

// ---------------------------------------------------------------------------------------------
// (a) strided-body
// ---------------------------------------------------------------------------------------------

interface StepInfo {
  variable: string;
  unit: string;
  amount: number;
  text: string;
}

function parseStep(an: Analyzer, upd: Node | null): StepInfo | null {
  if (!upd || upd.type !== 'assignment_expression') return null;
  const left = upd.childForFieldName('left');
  const right = upd.childForFieldName('right');
  if (!left || !right || left.type !== 'identifier') return null;
  const v = left.text;
  const op = opOf(upd);
  let step: Lin | null = null;
  if (op === '+=') step = an.lin(right);
  else if (op === '=') {
    const L = an.lin(right);
    if (L.t.get(v) === 1) {
      const t = new Map(L.t);
      t.delete(v);
      step = { c: L.c, t };
    }
  }
  if (!step) return null;
  const text = squash(upd.text, 60);
  if (step.t.size === 0) return step.c >= 2 ? { variable: v, unit: '', amount: step.c, text } : null;
  if (step.t.size === 1 && step.c === 0) {
    const [k, c] = [...step.t][0];
    return c >= 2 ? { variable: v, unit: k, amount: c, text } : null;
  }
  return null;
}

/** The update clause of a `for (…; …; update)` header, from the statement's text. */
function updateText(forText: string): string | null {
  const open = forText.indexOf('(');
  if (open < 0) return null;
  let depth = 0;
  let semis = 0;
  let from = -1;
  for (let i = open; i < forText.length; i++) {
    const ch = forText[i];
    if (ch === '(' || ch === '[' || ch === '{') depth++;
    else if (ch === ')' || ch === ']' || ch === '}') {
      if (--depth === 0) return from >= 0 ? forText.slice(from, i) : null;
    } else if (ch === ';' && depth === 1 && ++semis === 2) from = i + 1;
  }
  return null;
}

function detectStrided(an: Analyzer, f: ForInfo): Candidate | null {
  // cheap textual test first: only `k += …` and `k = k + …` updates can step by U
  const upd = updateText(f.list.items[f.index].text);
  if (upd === null || !/^\s*[A-Za-z_]\w*\s*(\+=|=(?!=))/.test(upd)) return null;
  // grid- and block-stride loops (`i += blockDim.x * gridDim.x`) carry no constant factor
  if (/\b(blockDim|gridDim)\b/.test(upd) && !/\d/.test(upd)) return null;
  const step = parseStep(an, f.node.childForFieldName('update'));
  if (!step) return null;
  const k = step.variable;
  for (const list of f.lists) {
    const n = list.items.length;
    for (let g = 1; g <= Math.min(MAX_BODY_GROUP, Math.floor(n / 2)); g++) {
      for (const r of findRuns(an, list, g)) {
        // one copy advances the induction variable by step / copies, in the update's unit
        let perCopy = 0;
        for (const s of allSites(r)) {
          if (s.kind !== 'lin' || s.delta.size !== 1) continue;
          const d = s.delta.get(step.unit);
          if (d === undefined || d <= 0) continue;
          if (!mentions(s.aText, k) && !mentions(s.bText, k)) continue;
          perCopy = d;
          break;
        }
        if (!perCopy || perCopy * r.copies !== step.amount) continue;
        const items = runItems(r);
        const perCopyGuard = items.some((c) => c.guardText !== null && mentions(c.guardText, k));
        const fastPath = isInsideGuard(list, f.node, k);
        const tail = remainderAfter(f, k);
        let detail = `\`${step.text}\`: ${describeCopies(r)}`;
        if (fastPath) detail += '; the copies sit behind a bounds check';
        if (tail) detail += `; a ${tail} after the loop handles the remainder`;
        else if (!perCopyGuard && !fastPath) detail += `; no remainder handling (the trip count must be a multiple of ${r.copies})`;
        const startRow = f.node.startPosition.row;
        const endRow = endRowOf(f.node);
        return {
          line: startRow + 1,
          endLine: endRow + 1,
          pattern: 'strided-body',
          factor: r.copies,
          guarded: perCopyGuard || fastPath || tail !== null,
          detail,
          startRow,
          endRow,
        };
      }
    }
  }
  return null;
}

/** The copies sit inside `if (…k…) { … }` within the loop body (a checked fast path). */
function isInsideGuard(list: StmtList, forNode: Node, k: string): boolean {
  const first = list.items[0];
  if (!first) return false;
  let p: Node | null = first.node.parent;
  for (let d = 0; p && d < 20 && p.startIndex !== forNode.startIndex; d++, p = p.parent) {
    if (p.type === 'if_statement') {
      const c = p.childForFieldName('condition');
      if (c && mentions(c.text, k)) return true;
    }
  }
  return false;
}

/** `n - n % 4`, `n & ~3`, `n / 4 * 4`: where a remainder loop starts when k is out of scope. */
const REMAINDER_START_RE = /%|&\s*~|\/\s*\w+\s*\)?\s*\*/;

/**
 * A remainder after the unrolled loop: the next statement continues from the induction variable
 * (`for (; k < n; ++k)`, `for (int j = k; j < n; ++j)`, `while (k < n)`, `if (k < n)`), or
 * restarts at the rounded-down bound (`for (int j = n - n % 4; …)`). A loop that restarts the
 * variable from scratch (`for (int k = 0; …)`) is a new loop, not a remainder.
 */
function remainderAfter(f: ForInfo, k: string): string | null {
  let i = f.index + 1;
  while (f.list.items[i] && f.list.items[i].isSync) i++;
  const next = f.list.items[i];
  if (!next) return null;
  const init = f.node.childForFieldName('initializer');
  // `for (int k = …)`: k is gone after the loop
  const scoped = !!init && init.type === 'declaration' && mentions(init.text, k);
  const s = next.node;
  if (next.type === 'for_statement') {
    const nInit = s.childForFieldName('initializer');
    const cond = s.childForFieldName('condition');
    if (!nInit) return !scoped && cond && mentions(cond.text, k) ? 'remainder loop' : null;
    const t = nInit.text;
    if (REMAINDER_START_RE.test(t)) return 'remainder loop';
    if (scoped) return null;
    const m = /([A-Za-z_]\w*)\s*=(?!=)([^,;]*)/.exec(t);
    if (m && mentions(m[2], k)) return 'remainder loop'; // continues from k
    return null;
  }
  if (scoped) return null;
  if (next.type === 'while_statement' || next.type === 'do_statement') {
    const c = s.childForFieldName('condition');
    if (c && mentions(c.text, k)) return 'remainder loop';
  }
  if (next.type === 'if_statement') {
    const c = s.childForFieldName('condition');
    if (c && mentions(c.text, k)) return 'guarded tail';
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// (c) warp-tail
// ---------------------------------------------------------------------------------------------

interface Halving {
  from: number;
  to: number;
}

/**
 * Does y repeat x with every offset halved (`v[t + 32]` → `v[t + 16]`)? The sites must all be
 * constant steps; the values come from the statements' own numbers when their texts line up
 * (the pair result may be shared with another pair of the same shape), else from the sites.
 */
function halvingOf(r: PairResult | null, x: Stmt, y: Stmt): Halving | null {
  if (!r || r.sites.length === 0) return null;
  for (const s of r.sites) if (s.kind !== 'lin' || s.delta.size !== 1 || !s.delta.has('')) return null;
  const pairs: Array<[number, number]> = [];
  const sx = shapeOfStmt(x);
  const sy = shapeOfStmt(y);
  if (sx.masked === sy.masked && sx.vals.length === sy.vals.length) {
    for (let i = 0; i < sx.vals.length; i++) {
      if (sx.vals[i] === sy.vals[i]) continue;
      if (sx.vals[i][0] !== 'n') return null;
      const a = parseIntLiteral(sx.vals[i].slice(1));
      const b = parseIntLiteral(sy.vals[i].slice(1));
      if (a === null || b === null) return null;
      pairs.push([a, b]);
    }
  } else {
    for (const s of r.sites) pairs.push([s.constA, s.constB]);
  }
  if (!pairs.length) return null;
  const [from, to] = pairs[0];
  for (const [a, b] of pairs) if (b < 1 || a !== 2 * b || a !== from || b !== to) return null;
  return { from, to };
}

interface TailChain {
  list: StmtList;
  first: number;
  last: number;
  values: number[];
}

function findHalvingChains(an: Analyzer, list: StmtList): TailChain[] {
  const idx: number[] = [];
  list.items.forEach((s, i) => {
    if (!s.isSync) idx.push(i);
  });
  const chains: TailChain[] = [];
  let cur: TailChain | null = null;
  for (let q = 0; q + 1 < idx.length; q++) {
    const h = halvingOf(comparePair(an, list, idx[q], idx[q + 1]), list.items[idx[q]], list.items[idx[q + 1]]);
    if (h && cur && cur.values[cur.values.length - 1] === h.from) {
      cur.values.push(h.to);
      cur.last = idx[q + 1];
      continue;
    }
    if (cur) chains.push(cur);
    cur = h ? { list, first: idx[q], last: idx[q + 1], values: [h.from, h.to] } : null;
  }
  if (cur) chains.push(cur);
  return chains;
}

function tailDetail(c: TailChain): string {
  const first = c.list.items[c.first];
  const shuffle = /__shfl\w*|\.shfl\w*/.exec(first.coreText);
  const what = shuffle ? `\`${shuffle[0]}\` steps` : 'reduction steps';
  const synced = c.list.items.slice(c.first, c.last + 1).some((s) => s.isSync) ? ', with syncs between' : '';
  return `${c.values.length} ${what}, offsets ${c.values.join(', ')}${synced}: \`${squash(stripSemi(first.coreText), 70)}\``;
}

// ---------------------------------------------------------------------------------------------
// (d) coarsening
// ---------------------------------------------------------------------------------------------

function coarseFor(scan: FunctionScan, r: Run): CoarseIndex | null {
  const sites = allSites(r);
  for (const c of scan.coarse) {
    if (c.factor !== r.copies) continue;
    for (const s of sites) if (mentions(s.aText, c.name) || mentionsAny(s.aText, c.derived)) return c;
  }
  // the index written in place: out[4 * threadIdx.x + j]
  for (const s of sites) {
    if (!s.aLin) continue;
    for (const [k, v] of s.aLin.t) {
      if (Math.abs(v) === r.copies && scan.isThreadTerm(k)) {
        return { name: '', factor: r.copies, row: runStartRow(r), text: squash(s.aText, 60), derived: new Set() };
      }
    }
  }
  // suffixed accumulators (e1..eN) in a function that has an N-fold coarsened index
  if (sites.length && sites.every((s) => s.kind === 'suffix')) {
    const row = runStartRow(r);
    const c = scan.coarse.find((x) => x.factor === r.copies && x.row <= row);
    if (c) return c;
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Entry points
// ---------------------------------------------------------------------------------------------

interface Candidate extends ManualUnroll {
  startRow: number;
  endRow: number;
}

interface Span {
  startRow: number;
  endRow: number;
}

function overlaps(a: Span, b: Span): boolean {
  return a.startRow <= b.endRow && b.startRow <= a.endRow;
}

/** An offset run must step an index (or several suffixed names together), not just a value. */
function isIndexRun(r: Run): boolean {
  for (const p of r.pairs) {
    const lin = p.sites.filter((s) => s.kind === 'lin');
    const suffix = p.sites.length - lin.length;
    if (suffix >= 2) return true;
    if (r.copies === 2 && r.group === 1) {
      if (lin.some((s) => s.inIndex)) return true;
    } else if (lin.some((s) => s.inIndex || s.hasBase)) return true;
  }
  return false;
}

/** Statements that may form an offset run or a coarsened group. */
function runnable(s: Stmt): boolean {
  if (s.coreType === 'expression_statement') return !s.isSync;
  return s.coreType === 'declaration' && /=|\{/.test(s.coreText);
}

/**
 * A lone pair inside a chain of steps that are not uniform (`v[t+1]; v[t+2]; v[t+4]`) is not an
 * unroll: reject it when a neighbouring pair is also an offset pair, with a different step.
 */
function isolatedPairRejected(an: Analyzer, list: StmtList, r: Run): boolean {
  const before = r.start > 0 ? comparePair(an, list, r.start - 1, r.start) : null;
  const after = r.start + 2 < list.items.length ? comparePair(an, list, r.start + 1, r.start + 2) : null;
  return !!((before && before.sites.length) || (after && after.sites.length));
}

/**
 * Finds manually unrolled code inside one device function's body (a compound_statement).
 * Never throws.
 */
export function findManualUnrolls(body: Node, evalConst: ConstEval): ManualUnroll[] {
  const found: Candidate[] = [];
  try {
    if (body) analyse(body, evalConst, found);
  } catch {
    // best effort: keep what was found before the failure
  }
  const seen = new Set<string>();
  const out: ManualUnroll[] = [];
  found.sort((a, b) => a.line - b.line || a.endLine - b.endLine);
  for (const c of found) {
    const key = `${c.line}:${c.endLine}:${c.pattern}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const m: ManualUnroll = { line: c.line, endLine: c.endLine, pattern: c.pattern, factor: c.factor, detail: c.detail };
    if (c.guarded !== undefined) m.guarded = c.guarded;
    out.push(m);
  }
  return out;
}

function analyse(body: Node, evalConst: ConstEval, found: Candidate[]): void {
  let owner: object = evalConst;
  try {
    if (body.tree && typeof body.tree === 'object') owner = body.tree;
  } catch {
    /* keep the evaluator as the memo owner */
  }
  const an = new Analyzer(evalConst, owner);
  let hasError = true;
  try {
    hasError = body.hasError;
  } catch {
    /* keep checking every statement */
  }
  const scan = new FunctionScan(an, hasError);
  scan.scanContainer(body, -1, 0);

  const claimed: Span[] = [];
  const free = (s: Span) => !claimed.some((c) => overlaps(c, s));
  const accept = (c: Candidate) => {
    found.push(c);
    claimed.push(c);
  };

  // (a) strided bodies; nested strided loops may both be reported
  const stridedSpans: Span[] = [];
  for (const f of scan.fors) {
    try {
      const c = detectStrided(an, f);
      if (c) {
        found.push(c);
        stridedSpans.push(c);
      }
    } catch {
      /* skip this loop */
    }
  }
  claimed.push(...stridedSpans);

  // (c) warp tails, merged with an in-block halving tree that leads into them
  const blockChains: TailChain[] = [];
  const tails: Array<{ chain: TailChain; cand: Candidate }> = [];
  for (const list of scan.lists) {
    if (list.items.length < 3) continue;
    for (const ch of findHalvingChains(an, list)) {
      if (!ch.values.every(isPow2)) continue;
      const startRow = list.items[ch.first].row;
      const endRow = endRowOf(list.items[ch.last].node);
      if (!free({ startRow, endRow })) continue;
      const last = ch.values[ch.values.length - 1];
      if (last === 1 && ch.values.length >= 3) {
        tails.push({
          chain: ch,
          cand: { line: startRow + 1, endLine: endRow + 1, pattern: 'warp-tail', factor: ch.values.length, detail: tailDetail(ch), startRow, endRow },
        });
      } else if (last > 1 && ch.values.length >= 2) {
        blockChains.push(ch);
      }
    }
  }
  for (const bc of blockChains) {
    const items = bc.list.items;
    let i = bc.last + 1;
    while (i < items.length && items[i].isSync) i++;
    const next = items[i];
    if (!next) continue;
    const span = { startRow: next.row, endRow: endRowOf(next.node) };
    const want = bc.values[bc.values.length - 1] / 2;
    const t = tails.find((x) => x.cand.startRow >= span.startRow && x.cand.endRow <= span.endRow && x.chain.values[0] === want);
    if (!t) continue;
    const startRow = items[bc.first].row;
    t.cand.line = startRow + 1;
    t.cand.startRow = startRow;
    t.cand.factor += bc.values.length;
    t.cand.detail =
      `${t.cand.factor} halving steps: in-block tree ${bc.values.join(', ')}, then warp tail: ` + tailDetail(t.chain);
  }
  for (const t of tails) accept(t.cand);

  // uniform runs in every statement list (groups of 1..MAX_GROUP statements)
  const runs: Run[] = [];
  for (const list of scan.lists) {
    const n = list.items.length;
    if (n < 2) continue;
    const taken = new Uint8Array(n);
    for (let g = 1; g <= MAX_GROUP && 2 * g <= n; g++) {
      for (const r of findRuns(an, list, g, taken)) {
        const items = runItems(r);
        if (!items.every((s) => runnable(s) || s.isSync) || items.every((s) => s.isSync)) continue;
        if (g === 1 && r.copies === 2 && isolatedPairRejected(an, list, r)) continue;
        runs.push(r);
        for (let i = r.start; i < r.start + r.copies * g; i++) taken[i] = 1;
      }
    }
  }

  // (d) coarsening before (b) offset runs
  const offsetRuns: Run[] = [];
  for (const r of runs) {
    const span = { startRow: runStartRow(r), endRow: runEndRow(r) };
    if (!free(span)) continue;
    const c = coarseFor(scan, r);
    if (c) {
      const index = c.name ? `\`${c.text}\` (line ${c.row + 1})` : `\`${c.text}\``;
      accept({
        line: span.startRow + 1,
        endLine: span.endRow + 1,
        pattern: 'coarsening',
        factor: r.copies,
        detail: `thread coarsening: each thread handles ${r.copies} elements of index ${index}; ${describeCopies(r)}`,
        ...span,
      });
    } else if (isIndexRun(r)) offsetRuns.push(r);
  }
  for (const r of offsetRuns) {
    const span = { startRow: runStartRow(r), endRow: runEndRow(r) };
    if (!free(span)) continue;
    accept({
      line: span.startRow + 1,
      endLine: span.endRow + 1,
      pattern: 'offset-run',
      factor: r.copies,
      detail: `${describeCopies(r)} (${stepWords(allSites(r))})`,
      ...span,
    });
  }
}

/** One-line human description, e.g. "manual unroll ×4 (strided-body, guarded)". */
export function describeManualUnroll(m: ManualUnroll): string {
  const parts: string[] = [m.pattern];
  if (m.guarded) parts.push('guarded');
  return `manual unroll ×${m.factor} (${parts.join(', ')})`;
}
