// expression-sum: copies of one term added up in a single expression, the body of a reduction
// loop written out inside one statement.
//
//   sum += a[i] + a[i + 1] + a[i + 2] + a[i + 3];
//   float s = x[0] * y[0] + x[1] * y[1] + x[2] * y[2] + x[3] * y[3];
//   float s = (a[0] + a[1]) + (a[2] + a[3]);
//
// The terms must be offset copies that step an index, by the same step between neighbours. At
// least 3 terms, or 2 when the sum is the whole right side of `+=` (`sum += a[k] + a[k + 1]`):
// a lone `a[i] + a[i + 1]` is usually a neighbour average or a 2-D length, not an unroll. A
// uniform 3-point box sum (`u[i - 1] + u[i] + u[i + 1]`) is reported: it is the loop
// `for (d = -1; d <= 1; ++d) s += u[i + d]` written out. Weighted stencils (`u[i-1] - 2*u[i] + u[i+1]`)
// are not uniform and are not reported. Sums of suffixed registers (`a1 + a2 + a3 + a4`) consume
// the loads of an offset run (reported there) and are not reported again.
import type { Node } from '../parser';
import type { Candidate, ManualUnrollDetector } from './detector';
import { siteSig, type Site } from './diff';
import type { Stmt } from './statements';
import { endRowOf, namedKids, opOf } from './syntax';
import { squash } from './text';

/** A term that ends in a subscript (or a call/parenthesis closing after one) followed by `+`. */
const TERM_PLUS_RE = /\]\s*\)*\s*\+(?![+=])/g;
const MIN_TERMS = 3;
const MAX_TERMS = 256;
const SUMMABLE = new Set(['expression_statement', 'declaration', 'return_statement']);

function plusCount(text: string): number {
  TERM_PLUS_RE.lastIndex = 0;
  let n = 0;
  while (TERM_PLUS_RE.exec(text)) n++;
  return n;
}

function isPlus(n: Node): boolean {
  return n.type === 'binary_expression' && opOf(n) === '+';
}

/** The terms of a `+` tree, left to right, through parentheses (`(a + b) + (c + d)`). */
function flatten(n: Node, out: Node[], depth: number): void {
  if (out.length > MAX_TERMS || depth > 64) return;
  let m = n;
  while (m.type === 'parenthesized_expression') {
    const k = namedKids(m);
    if (k.length !== 1 || !(isPlus(k[0]) || k[0].type === 'parenthesized_expression')) break;
    m = k[0];
  }
  if (isPlus(m)) {
    const l = m.childForFieldName('left');
    const r = m.childForFieldName('right');
    if (l && r) {
      flatten(l, out, depth + 1);
      flatten(r, out, depth + 1);
      return;
    }
  }
  out.push(n);
}

interface TermRun {
  start: number;
  copies: number;
}

/** The longest run of neighbouring terms that are uniform offset copies stepping an index. */
function longestRun(ctx: Parameters<ManualUnrollDetector['detect']>[0], terms: Node[]): TermRun | null {
  let best: TermRun | null = null;
  let start = 0;
  let sig: string | null = null;
  const close = (end: number) => {
    const copies = end - start + 1;
    if (sig !== null && copies >= 2 && (!best || copies > best.copies)) best = { start, copies };
  };
  for (let i = 0; i + 1 < terms.length; i++) {
    const ps: Site[] = [];
    const ok = ctx.an.diffNodes(terms[i], terms[i + 1], ps, false, 0) && ps.length > 0 && ps.some(p => p.kind === 'lin' && p.inIndex);
    const psig = ok ? ps.map(siteSig).join('|') : null;
    if (psig !== null && psig === sig) continue;
    close(i);
    start = i;
    sig = psig;
  }
  close(terms.length - 1);
  return best;
}

/** Roots of `+` trees in a statement (a `+` whose parent is not a `+`), outermost first. */
function sumRoots(core: Node): Node[] {
  const out: Node[] = [];
  for (const b of core.descendantsOfType('binary_expression')) {
    if (!b || !isPlus(b)) continue;
    let p = b.parent;
    while (p && p.type === 'parenthesized_expression') p = p.parent;
    if (p && isPlus(p)) continue;
    out.push(b);
  }
  return out;
}

/** `x += <root>` with the sum as the whole right side. */
function isWholeCompoundRight(root: Node): boolean {
  const p = root.parent;
  if (!p || p.type !== 'assignment_expression' || opOf(p) !== '+=') return false;
  const r = p.childForFieldName('right');
  return !!r && r.startIndex === root.startIndex && r.endIndex === root.endIndex;
}

function candidateOf(s: Stmt, root: Node, terms: Node[], run: TermRun): Candidate {
  const startRow = s.row;
  const endRow = endRowOf(s.node);
  const first = terms[run.start].text;
  const last = terms[run.start + run.copies - 1].text;
  return {
    line: startRow + 1,
    endLine: endRow + 1,
    pattern: 'expression-sum',
    factor: run.copies,
    detail: `${run.copies} copies of one term added in one expression, from \`${squash(first, 50)}\` to \`${squash(last, 50)}\`${
      run.copies < terms.length ? ` (in \`${squash(root.text, 70)}\`)` : ''
    }`,
    startRow,
    endRow,
  };
}

export const expressionSum: ManualUnrollDetector = {
  pattern: 'expression-sum',
  overlap: 'first-wins',
  detect(ctx) {
    const out: Candidate[] = [];
    for (const list of ctx.scan.lists) {
      for (const s of list.items) {
        if (!s.eligible || !SUMMABLE.has(s.coreType)) continue;
        const text = s.coreText;
        if (text.length > 2000 || text.indexOf('+') < 0 || text.indexOf(']') < 0) continue;
        const plus = plusCount(text);
        if (plus === 0 || (plus < MIN_TERMS - 1 && text.indexOf('+=') < 0)) continue;
        const span = { startRow: s.row, endRow: endRowOf(s.node) };
        if (!ctx.isFree(span)) continue;
        let best: Candidate | null = null;
        for (const root of sumRoots(s.core)) {
          const terms: Node[] = [];
          flatten(root, terms, 0);
          if (terms.length < 2 || terms.length > MAX_TERMS) continue;
          const run = longestRun(ctx, terms);
          if (!run) continue;
          const min = run.copies === terms.length && isWholeCompoundRight(root) ? 2 : MIN_TERMS;
          if (run.copies < min) continue;
          if (!best || run.copies > best.factor) best = candidateOf(s, root, terms, run);
        }
        if (best) out.push(best);
      }
    }
    return out;
  },
};
