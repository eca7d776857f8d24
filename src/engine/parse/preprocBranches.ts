// Preprocessor conditionals inside function bodies, as tree-sitter nests them: `preproc_if` /
// `preproc_ifdef` hold their first branch's items, then an `alternative` (`preproc_else`,
// `preproc_elif`, `preproc_elifdef`), which may hold the next alternative. Library code writes
// `#if defined(__CUDA_ARCH__) #pragma unroll #endif` before a loop, or a pragma before
// `#ifdef X for (…) #else for (…) #endif`: bodyLoops.ts attaches across them, naming the branch.
import type { Node } from './parser';

/** Node types that are one branch of a conditional. */
export const PREPROC_BRANCHES = new Set(['preproc_if', 'preproc_ifdef', 'preproc_else', 'preproc_elif', 'preproc_elifdef']);

const ALTERNATIVES = new Set(['preproc_else', 'preproc_elif', 'preproc_elifdef']);

/** The condition (or `#ifdef` name) node of a branch, which precedes its items; null otherwise. */
export function branchConditionNode(branch: Node | null): Node | null {
  if (!branch || !PREPROC_BRANCHES.has(branch.type)) return null;
  return branch.childForFieldName('condition') ?? branch.childForFieldName('name');
}

/** `#if defined(__CUDA_ARCH__)`, `#ifdef USE_ONES`, `#else`. */
function label(branch: Node): string {
  const directive = branch.child(0)?.text.trim() ?? '#if';
  const cond = branchConditionNode(branch);
  return cond ? `${directive} ${cond.text.replace(/\s+/g, ' ').trim()}` : directive;
}

/** The conditional (`#if`/`#ifdef` node) a branch belongs to. */
export function conditionalOf(branch: Node): Node {
  let top = branch;
  while (ALTERNATIVES.has(top.type) && top.parent) top = top.parent;
  return top;
}

/** The branch as a reader names it: `#if A`, `#else of #ifdef USE_ONES`, `#elif C of #if A`. */
export function branchCondition(branch: Node): string {
  if (!ALTERNATIVES.has(branch.type)) return label(branch);
  return `${label(branch)} of ${label(conditionalOf(branch))}`;
}

/** A conditional's branches in order: itself, then each alternative. */
function branches(conditional: Node): Node[] {
  const out = [conditional];
  for (let alt = conditional.childForFieldName('alternative'); alt && out.length < 64; alt = alt.childForFieldName('alternative'))
    out.push(alt);
  return out;
}

/** A branch's own items (its condition, comments and the next alternative left out). */
function items(branch: Node): Node[] {
  const cond = branchConditionNode(branch);
  const out: Node[] = [];
  for (const c of branch.namedChildren) {
    if (!c || c.id === cond?.id || c.type === 'comment' || ALTERNATIVES.has(c.type)) continue;
    out.push(c);
  }
  return out;
}

/**
 * For a conditional that stands right before a loop: the pragma that ends each branch, with the
 * branch's condition. A branch that ends otherwise (or is empty) gives none.
 */
export function lastPragmasOfBranches<P extends { condition?: string }>(conditional: Node, pragmaOf: (n: Node) => P | null): P[] {
  const out: P[] = [];
  for (const b of branches(conditional)) {
    const last = items(b).at(-1);
    const p = last ? pragmaOf(last) : null;
    if (p) out.push({ ...p, condition: branchCondition(b) });
  }
  return out;
}
