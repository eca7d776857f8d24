// block-level: each thread block reduces N data blocks (issue 26), the rungs of the classic
// reduction ladder. The index scales the block's offset by N, and the thread then reads its
// element of each of the N data blocks, one block size apart; the host launches grid / N blocks.
//
//   unsigned idx = blockIdx.x * blockDim.x * 2 + threadIdx.x;          (also blockDim.x * 8 * blockIdx.x, iBlockSize)
//   if (idx + blockDim.x < n) g[idx] += g[idx + blockDim.x];            ×2 in one statement
//   int a1 = g[idx]; int a2 = g[idx + blockDim.x]; … int a4 = g[idx + 3 * blockDim.x];   ×4
//   int *p = g + blockIdx.x * blockDim.x * 4;  … p[tid + 3 * blockDim.x] …                pointer to the block's chunk
//   idx = blockIdx.x * blockDim.x + threadIdx.x; g[idx] += g[idx + gridDim.x * blockDim.x];   a grid apart
//
// It runs before offset-run: the a1…aN loads are also an offset run, and this names what they do.
// Nothing else counts: an index of one block (`blockIdx.x * blockDim.x + threadIdx.x`) read at
// `idx + blockDim.x` is a neighbour (a stencil, a halo), and the N offsets must all be there.
import type { Candidate, ManualUnrollDetector } from './detector';
import type { Stmt } from './statements';
import { endRowOf } from './syntax';
import { squash } from './text';

const INT = /^\d+[uUlL]*$/;

/** `(x)` → x while the parentheses enclose the whole text. */
function unwrap(t: string): string {
  while (t.startsWith('(') && t.endsWith(')')) {
    let depth = 0;
    let whole = true;
    for (let i = 0; i < t.length - 1; i++) {
      if (t[i] === '(') depth++;
      else if (t[i] === ')' && --depth === 0) whole = false;
    }
    if (!whole) break;
    t = t.slice(1, -1);
  }
  return t;
}

/** Splits at `sep` outside parentheses and brackets. */
function splitTop(t: string, sep: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let last = 0;
  for (let i = 0; i < t.length; i++) {
    const c = t[i];
    if (c === '(' || c === '[') depth++;
    else if (c === ')' || c === ']') depth--;
    else if (c === sep && depth === 0) {
      out.push(t.slice(last, i));
      last = i + 1;
    }
  }
  out.push(t.slice(last));
  return out;
}

/** The terms of a sum (whitespace removed); null where a top-level `-` or another operator makes it no plain sum. */
function terms(text: string): string[] | null {
  const t = unwrap(text.replace(/\s+/g, ''));
  const parts = splitTop(t, '+');
  return parts.some(p => !p || splitTop(p, '-').length > 1) ? null : parts.map(unwrap);
}

/** A product's factors, products in parentheses flattened: `blockIdx.x*(blockDim.x*2)` → blockIdx.x, blockDim.x, 2. */
function factors(term: string): string[] {
  const out: string[] = [];
  for (const f of splitTop(unwrap(term), '*')) {
    const u = unwrap(f);
    if (u !== f && splitTop(u, '+').length === 1 && splitTop(u, '*').length > 1) out.push(...factors(u));
    else out.push(u.replace(/^\((?:unsigned|int|unsignedint|size_t)\)/, ''));
  }
  return out;
}

/** Integer factor and the one other factor (the block size) of `k * B`, `B * k`, `B`; `grid` when gridDim.x is a factor too. */
function scaled(term: string): { k: number; size: string; grid: boolean } | null {
  let k = 1;
  let size: string | null = null;
  let grid = false;
  for (const f of factors(term)) {
    if (INT.test(f)) k *= parseInt(f, 10);
    else if (f === 'gridDim.x' && !grid) grid = true;
    else if (size === null && /^[A-Za-z_][\w.]*$/.test(f)) size = f;
    else return null;
  }
  return size ? { k, size, grid } : null;
}

/** An index that starts the block's chunk: `idx = blockIdx.x * B * N + tid`, or a pointer `p = g + blockIdx.x * B * N`. */
interface ChunkIndex {
  name: string;
  /** The block size B (`blockDim.x`, `iBlockSize`). */
  size: string;
  /** Data blocks one thread block covers, as the index says (1: a plain index, read a grid apart). */
  n: number;
  /** For a pointer: the base it offsets; the thread's element is then `p[tid + …]`. */
  pointer: boolean;
  text: string;
}

function chunkIndexOf(name: string, rhs: string, tids: Set<string>): ChunkIndex | null {
  const ts = terms(rhs);
  if (!ts || ts.length !== 2) return null;
  const bi = ts.findIndex(t => factors(t).includes('blockIdx.x'));
  if (bi < 0) return null;
  const f = factors(ts[bi]).filter(x => x !== 'blockIdx.x');
  if (f.length !== factors(ts[bi]).length - 1) return null;
  const s = scaled(f.join('*'));
  if (!s || s.grid) return null;
  const other = ts[1 - bi];
  const pointer = !tids.has(other) && other !== 'threadIdx.x';
  if (pointer && !/^[A-Za-z_]\w*$/.test(other)) return null;
  return { name, size: s.size, n: s.k, pointer, text: squash(`${name} = ${rhs.trim()}`, 80) };
}

/** The offsets (in block sizes) at which `stmt` reads or writes through the chunk index. */
function offsetsIn(text: string, c: ChunkIndex, tids: Set<string>, byGrid: boolean): number[] {
  const out: number[] = [];
  for (const m of text.matchAll(/([A-Za-z_]\w*)\s*\[([^[\]]+)\]/g)) {
    const ts = terms(m[2]);
    if (!ts) continue;
    const base = c.pointer ? (m[1] === c.name ? ts.findIndex(t => t === 'threadIdx.x' || tids.has(t)) : -1) : ts.indexOf(c.name);
    if (base < 0 || ts.length > 2) continue;
    if (ts.length === 1) {
      out.push(0);
      continue;
    }
    const s = scaled(ts[1 - base]);
    if (s && s.size === c.size && s.grid === byGrid) out.push(s.k);
  }
  return out;
}

interface Access {
  stmt: Stmt;
  offsets: number[];
}

/** The copies the accesses make: offsets 0 … copies-1 all present, nothing beyond; 0 when not. */
function copiesOf(accesses: Access[]): number {
  const seen = new Set(accesses.flatMap(a => a.offsets));
  const max = Math.max(...seen);
  if (max < 1) return 0;
  for (let k = 0; k <= max; k++) if (!seen.has(k)) return 0;
  return max + 1;
}

/** The `if` around the reads that bounds the last data block (`if (idx + 3 * blockDim.x < n)`), when there is one. */
function guardOf(c: ChunkIndex, all: Stmt[], startRow: number, endRow: number): string | null {
  for (const s of all) {
    if (s.type !== 'if_statement' || s.row > startRow || endRowOf(s.node) < endRow) continue;
    const cond = s.node.childForFieldName('condition')?.text ?? '';
    if (new RegExp(String.raw`\b${c.name}\b[^<>]*<`).test(cond)) return unwrap(cond.trim());
  }
  return null;
}

function candidateFor(c: ChunkIndex, stmts: Stmt[], all: Stmt[], tids: Set<string>): Candidate | null {
  const byGrid = c.n === 1;
  const accesses: Access[] = [];
  for (const s of stmts) {
    const offsets = offsetsIn(s.coreText, c, tids, byGrid);
    if (offsets.length) accesses.push({ stmt: s, offsets });
  }
  const copies = copiesOf(accesses);
  // the index's own N must match the copies read; a plain index read a grid apart covers `copies` grids' worth
  if (copies < 2 || (!byGrid && copies !== c.n)) return null;
  const stepping = accesses.filter(a => a.offsets.some(k => k > 0));
  const first = accesses.indexOf(stepping[0]);
  // the copy at offset 0 right before the first stepping one (`int a1 = g[idx];`) belongs to the run
  const start = first > 0 && accesses[first - 1].offsets.every(k => k === 0) ? accesses[first - 1] : stepping[0];
  const last = stepping[stepping.length - 1];
  const startRow = start.stmt.row;
  const endRow = endRowOf(last.stmt.node);
  const guard = guardOf(c, all, startRow, endRow);
  const step = byGrid ? `gridDim.x * ${c.size}` : c.size;
  const at = `${c.pointer ? `${c.name}[tid` : c.name} + k * ${step}${c.pointer ? ']' : ''}`;
  const how = byGrid ? `${copies} data blocks a grid apart` : `${copies} data blocks`;
  const detail =
    `each thread block reduces ${how} (\`${c.text}\`): reads at ${at}, k = 0…${copies - 1}` +
    (guard ? `, guarded by \`${squash(guard, 50)}\`` : '') +
    `; the host launches grid / ${copies} blocks`;
  return { line: startRow + 1, endLine: endRow + 1, pattern: 'block-level', factor: copies, gridDivisor: copies, detail, startRow, endRow };
}

export const blockLevel: ManualUnrollDetector = {
  pattern: 'block-level',
  overlap: 'first-wins',
  detect(ctx) {
    const all = ctx.scan.lists.flatMap(l => l.items);
    const stmts = all.filter(s => s.coreType === 'declaration' || s.coreType === 'expression_statement');
    stmts.sort((a, b) => a.row - b.row);
    const tids = new Set<string>();
    const chunks: ChunkIndex[] = [];
    for (const s of stmts) {
      // `unsigned int tid = threadIdx.x;`, `idx = blockIdx.x * blockDim.x * 4 + threadIdx.x;`, `int *p = g + …;`
      const m = /^(?:[\w:<>\s]*?[\s*&])?([A-Za-z_]\w*)\s*=(?!=)([^;,]*);?\s*$/.exec(s.coreText.trim());
      if (!m || !/\bblockIdx\.x\b|\bthreadIdx\.x\b/.test(m[2])) continue;
      if (m[2].replace(/\s+/g, '') === 'threadIdx.x') tids.add(m[1]);
      else {
        const c = chunkIndexOf(m[1], m[2], tids);
        if (c && (c.n >= 2 || !c.pointer)) chunks.push(c);
      }
    }
    const out: Candidate[] = [];
    for (const c of chunks) {
      const cand = candidateFor(c, stmts, all, tids);
      if (cand && !out.some(o => o.startRow === cand.startRow)) out.push(cand);
    }
    return out;
  },
};
