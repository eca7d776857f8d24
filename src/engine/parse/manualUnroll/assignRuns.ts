// element-assignments and accumulate-chain: offset runs (runs.ts) whose copies are single
// assignments, told apart by what the left-hand side does from copy to copy. Both run before
// offset-run and claim the runs they recognise; what they leave stays an offset run.
//
//   element-assignments  v[0] = x[i]; v[1] = x[i + 1]; v[2] = x[i + 2]; v[3] = x[i + 3];   (literal element indices)
//   accumulate-chain     sum += a[i]; sum += a[i + 1]; …    acc[0] += a[k] * b[0]; acc[1] += a[k] * b[1]; …
//
// Suffixed targets (`sum0 += x[i]; sum1 += x[i + 1];`) stay offset runs (they step a name, not an
// element), and so do element assignments of a value that does not change (`v[0] = 0; v[1] = 0;`:
// the run is still reported, only not as "element assignments loading …").
import { coarseFor } from './coarsening';
import type { Candidate, DetectContext, ManualUnrollDetector } from './detector';
import { isIndexRun } from './offsetRun';
import { describeCopies, Run, runEndRow, runItems, runStartRow } from './runs';
import { mentions, norm, squash } from './text';

type AssignKind = 'element-assignments' | 'accumulate-chain';

interface Assign {
  left: string;
  right: string;
  op: string;
  leftIsElement: boolean;
}

/**
 * An element at a literal index (`v[0]`, `acc[r][3]`): a register array filled or accumulated
 * element by element. Stores at a computed index (`a[k] = b[k]; a[k + 1] = b[k + 1];`) stay
 * offset runs: they are copies in memory, not an array written out element by element.
 */
const CONST_ELEMENT_RE = /^[A-Za-z_][\w.]*(?:\[[^\]]*\])*\[(?:\d+|0[xX][0-9a-fA-F]+)[uUlL]*\]$/;

const COMPOUND_OPS = new Set(['+=', '-=', '*=', '|=', '&=', '^=']);

/**
 * `left op right;` read from the statement's text (no tree access): the first assignment operator
 * outside brackets. Null for anything else (calls, increments, declarations).
 */
function assignOf(text: string): Assign | null {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '(' || ch === '[' || ch === '{') depth++;
    else if (ch === ')' || ch === ']' || ch === '}') depth--;
    else if (ch === '=' && depth === 0) {
      const next = text[i + 1];
      const prev = text[i - 1] ?? '';
      if (next === '=') return null; // `a == b;`
      let opStart = i;
      if ('+-*/%&|^'.includes(prev)) opStart = i - 1;
      else if (prev === '=' || prev === '!' || prev === '<' || prev === '>') return null; // comparisons, shifts
      const left = norm(text.slice(0, opStart));
      const right = norm(text.slice(i + 1).replace(/;\s*$/, ''));
      if (!left || !right) return null;
      return { left, right, op: text.slice(opStart, i + 1), leftIsElement: CONST_ELEMENT_RE.test(left) };
    }
  }
  return null;
}

/** `x = x + …`, `m = fmaxf(m, …)`, `acc[0] = acc[0] + …`: the target is read on the right. */
function readsTarget(a: Assign): boolean {
  return /^[A-Za-z_]\w*$/.test(a.left) ? mentions(a.right, a.left) : a.right.includes(a.left);
}

/** The array part of `v[0]` / `acc[r][0]` (the text before the first `[`). */
function arrayPart(left: string): string {
  const i = left.indexOf('[');
  return i < 0 ? left : left.slice(0, i);
}

interface Classified {
  kind: AssignKind;
  first: Assign;
  last: Assign;
  fixedTarget: boolean;
}

const classified = new WeakMap<Run, Classified | null>();

function classifyRun(r: Run): Classified | null {
  let c = classified.get(r);
  if (c === undefined) {
    c = classifyUncached(r);
    classified.set(r, c);
  }
  return c;
}

function classifyUncached(r: Run): Classified | null {
  if (r.group !== 1) return null;
  const items = runItems(r);
  const as: Assign[] = [];
  for (const s of items) {
    const a = s.coreType === 'expression_statement' ? assignOf(s.coreText) : null;
    if (!a) return null;
    as.push(a);
  }
  const first = as[0];
  const op = first.op;
  if (!as.every(a => a.op === op)) return null;
  const fixedTarget = as.every(a => a.left === first.left);
  const steppedElement =
    !fixedTarget &&
    as.every(a => a.leftIsElement && arrayPart(a.left) === arrayPart(first.left)) &&
    new Set(as.map(a => a.left)).size === as.length;
  const accumulates = COMPOUND_OPS.has(op) || (op === '=' && as.every(readsTarget));
  const last = as[as.length - 1];
  if (accumulates && (fixedTarget || steppedElement)) return { kind: 'accumulate-chain', first, last, fixedTarget };
  // a value that steps with the element: v[j] = x[i + j], v[j] = f(a[j])
  if (op === '=' && steppedElement && as[0].right !== as[1].right) return { kind: 'element-assignments', first, last, fixedTarget };
  return null;
}

function detectKind(ctx: DetectContext, kind: AssignKind): Candidate[] {
  const out: Candidate[] = [];
  for (const r of ctx.runs()) {
    if (r.group !== 1) continue;
    const startRow = runStartRow(r);
    // a run that an earlier detector (coarsening) claimed: skip before reading its statements
    if (!ctx.isFree({ startRow, endRow: startRow })) continue;
    const c = classifyRun(r);
    if (!c || c.kind !== kind || coarseFor(ctx.scan, r) || !isIndexRun(r)) continue;
    const endRow = runEndRow(r);
    let what: string;
    if (kind === 'element-assignments') what = `assigning elements of \`${squash(arrayPart(c.first.left), 30)}\``;
    else if (c.fixedTarget) what = `accumulating into \`${squash(c.first.left, 30)}\``;
    else what = `accumulating into \`${squash(c.first.left, 30)}\` … \`${squash(c.last.left, 30)}\``;
    out.push({
      line: startRow + 1,
      endLine: endRow + 1,
      pattern: kind,
      factor: r.copies,
      detail: `${describeCopies(r)} (${what})`,
      startRow,
      endRow,
    });
  }
  return out;
}

export const elementAssignments: ManualUnrollDetector = {
  pattern: 'element-assignments',
  overlap: 'first-wins',
  detect: ctx => detectKind(ctx, 'element-assignments'),
};

export const accumulateChain: ManualUnrollDetector = {
  pattern: 'accumulate-chain',
  overlap: 'first-wins',
  detect: ctx => detectKind(ctx, 'accumulate-chain'),
};
