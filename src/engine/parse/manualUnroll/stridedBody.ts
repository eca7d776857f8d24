// strided-body: a loop whose update steps by U (`k += 4`) and whose body holds U offset copies
// of the work of one iteration (`s += a[k]; s += a[k + 1]; …`), with or without a bounds check
// per copy or a remainder loop after it.
//
//   for (k = 0; k < n; k += 4) { s += a[k]; s += a[k + 1]; s += a[k + 2]; s += a[k + 3]; }
import type { Node } from '../parser';
import type { Candidate, ManualUnrollDetector } from './detector';
import type { Analyzer, Lin } from './diff';
import { allSites, describeCopies, findRuns, runItems } from './runs';
import type { ForInfo, StmtList } from './statements';
import { endRowOf, opOf } from './syntax';
import { mentions, squash } from './text';

/** Largest group of statements repeated as one copy inside a strided loop body. */
const MAX_BODY_GROUP = 8;

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
        const perCopyGuard = items.some(c => c.guardText !== null && mentions(c.guardText, k));
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

export const stridedBody: ManualUnrollDetector = {
  pattern: 'strided-body',
  // nested strided loops may both be reported
  overlap: 'keep-all',
  detect(ctx) {
    const out: Candidate[] = [];
    for (const f of ctx.scan.fors) {
      try {
        const c = detectStrided(ctx.an, f);
        if (c) out.push(c);
      } catch {
        /* skip this loop */
      }
    }
    return out;
  },
};
