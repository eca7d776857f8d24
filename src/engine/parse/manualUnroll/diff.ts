// The structural diff of two statements (see ../manualUnroll.ts for the overview): arithmetic in
// a normalised linear form (constant + Σ coefficient·term) and `Analyzer.diffNodes`, which walks
// two syntax trees in parallel and records every place where they differ ("sites").
import type { Node } from '../parser';
import { opOf, namedKids } from './syntax';
import { norm, parseIntLiteral, SUFFIX_RE } from './text';

export interface ConstEval {
  /** value of an integral constant expression, or null if not a compile-time constant */
  (node: Node): number | null;
}

/** Deepest expression nesting walked; deeper sub-trees count as opaque or as a mismatch. */
const MAX_DEPTH = 120;
/** Most differing places in one pair of statements; more and they are not copies. */
const MAX_SITES = 64;

/** constant + Σ coef·term; term keys are whitespace-free source texts of opaque sub-expressions. */
export interface Lin {
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
export interface Site {
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

export interface PairResult {
  sites: Site[];
  sig: string;
}

export function siteSig(s: Site): string {
  const parts: string[] = [];
  for (const [k, v] of s.delta) parts.push(`${k}=${v}`);
  parts.sort();
  return (s.kind === 'suffix' ? 's:' : 'l:') + parts.join(',');
}

export class Analyzer {
  private readonly linCache = new Map<string, Lin>();
  /** Pair results by token-level shape (see shapeDiffKey), shared by the functions of a tree. */
  readonly shapeMemo: Map<string, PairResult | null>;

  constructor(
    private readonly evalConst: ConstEval,
    owner: object,
  ) {
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
