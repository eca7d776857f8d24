// Pairs of statements and uniform runs of copies: the building blocks of the detectors. A pair
// is compared once per statement list (cached by index) and, through the Analyzer's shape memo,
// once per token-level shape; a run is a maximal sequence of copies of a group of statements
// whose consecutive pairs differ in the same places by the same steps.
import type { Analyzer, PairResult, Site } from './diff';
import { siteSig } from './diff';
import type { FunctionScan, Stmt, StmtList } from './statements';
import { shapeOfStmt, skelOf } from './statements';
import { endRowOf } from './syntax';
import { shapeDiffKey, shapeOf, skeletonsCompatible, squash, stripSemi, templateOf } from './text';

/** Largest group of statements that is repeated as one copy in an offset run. */
const MAX_GROUP = 4;

export function comparePair(an: Analyzer, list: StmtList, i: number, j: number): PairResult | null {
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

export interface Run {
  list: StmtList;
  start: number;
  group: number;
  copies: number;
  /** Results for the pairs linking copy 0 to copy 1 (one per statement of the group). */
  pairs: PairResult[];
}

/** Maximal uniform runs of copies of a group of `group` statements. */
export function findRuns(an: Analyzer, list: StmtList, group: number, skip?: Uint8Array): Run[] {
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

export function runItems(r: Run): Stmt[] {
  return r.list.items.slice(r.start, r.start + r.copies * r.group);
}

export function runStartRow(r: Run): number {
  return r.list.items[r.start].row;
}

export function runEndRow(r: Run): number {
  return endRowOf(r.list.items[r.start + r.copies * r.group - 1].node);
}

export function allSites(r: Run): Site[] {
  const out: Site[] = [];
  for (const p of r.pairs) out.push(...p.sites);
  return out;
}

export function describeCopies(r: Run): string {
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
    const guarded = runItems(r).some(s => s.guard);
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
 * Uniform runs of copies of 1..MAX_GROUP statements in every statement list of the function: the
 * candidates for coarsening and offset runs. A statement belongs to one run at most (smaller
 * groups first). Pairs are compared here after the strided-body and warp-tail detectors have
 * compared theirs: a shape-memo hit returns the first pair diffed with that shape, so the order
 * of comparisons is part of the behaviour (see Site.constA).
 */
export function uniformRuns(an: Analyzer, scan: FunctionScan): Run[] {
  const runs: Run[] = [];
  for (const list of scan.lists) {
    const n = list.items.length;
    if (n < 2) continue;
    const taken = new Uint8Array(n);
    for (let g = 1; g <= MAX_GROUP && 2 * g <= n; g++) {
      for (const r of findRuns(an, list, g, taken)) {
        const items = runItems(r);
        if (!items.every(s => runnable(s) || s.isSync) || items.every(s => s.isSync)) continue;
        if (g === 1 && r.copies === 2 && isolatedPairRejected(an, list, r)) continue;
        runs.push(r);
        for (let i = r.start; i < r.start + r.copies * g; i++) taken[i] = 1;
      }
    }
  }
  return runs;
}
