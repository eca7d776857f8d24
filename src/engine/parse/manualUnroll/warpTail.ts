// warp-tail: a chain of reduction steps with every offset halved, ending at 1 (the last warp of
// a tree reduction, by shared memory or by shuffles), merged with an in-block halving tree that
// leads into it (`if (tid < 128) v[tid] += v[tid + 128]; __syncthreads(); …`).
//
//   v[tid] += v[tid + 32]; v[tid] += v[tid + 16]; … v[tid] += v[tid + 1];
import type { Candidate, ManualUnrollDetector } from './detector';
import type { Analyzer, PairResult } from './diff';
import { comparePair } from './runs';
import type { Stmt, StmtList } from './statements';
import { shapeOfStmt } from './statements';
import { endRowOf } from './syntax';
import { isPow2, parseIntLiteral, squash, stripSemi } from './text';

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
  const synced = c.list.items.slice(c.first, c.last + 1).some(s => s.isSync) ? ', with syncs between' : '';
  return `${c.values.length} ${what}, offsets ${c.values.join(', ')}${synced}: \`${squash(stripSemi(first.coreText), 70)}\``;
}

/** A warp tail found, with the chain it came from (a tree before it may extend it). */
interface Tail {
  chain: TailChain;
  cand: Candidate;
}

export const warpTail: ManualUnrollDetector = {
  pattern: 'warp-tail',
  // the chains are checked against earlier findings before the tails and trees are merged
  overlap: 'keep-all',
  detect(ctx) {
    const blockChains: TailChain[] = [];
    const tails: Tail[] = [];
    for (const list of ctx.scan.lists) {
      if (list.items.length < 3) continue;
      for (const ch of findHalvingChains(ctx.an, list)) {
        if (!ch.values.every(isPow2)) continue;
        const startRow = list.items[ch.first].row;
        const endRow = endRowOf(list.items[ch.last].node);
        if (!ctx.isFree({ startRow, endRow })) continue;
        const last = ch.values[ch.values.length - 1];
        if (last === 1 && ch.values.length >= 3) {
          const factor = ch.values.length;
          const cand: Candidate = {
            line: startRow + 1,
            endLine: endRow + 1,
            pattern: 'warp-tail',
            factor,
            detail: tailDetail(ch),
            startRow,
            endRow,
          };
          tails.push({ chain: ch, cand });
        } else if (last > 1 && ch.values.length >= 2) {
          blockChains.push(ch);
        }
      }
    }
    for (const bc of blockChains) mergeBlockTree(bc, tails);
    return tails.map(t => t.cand);
  },
};

/** Extends the warp tail that the in-block tree `bc` leads into (the next statement, halving on) with the tree's steps. */
function mergeBlockTree(bc: TailChain, tails: Tail[]): void {
  const items = bc.list.items;
  let i = bc.last + 1;
  while (i < items.length && items[i].isSync) i++;
  const next = items[i];
  if (!next) return;
  const span = { startRow: next.row, endRow: endRowOf(next.node) };
  const want = bc.values[bc.values.length - 1] / 2;
  const t = tails.find(x => x.cand.startRow >= span.startRow && x.cand.endRow <= span.endRow && x.chain.values[0] === want);
  if (!t) return;
  const startRow = items[bc.first].row;
  t.cand.line = startRow + 1;
  t.cand.startRow = startRow;
  t.cand.factor += bc.values.length;
  t.cand.detail = `${t.cand.factor} halving steps: in-block tree ${bc.values.join(', ')}, then warp tail: ` + tailDetail(t.chain);
}
