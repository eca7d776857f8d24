// Walking a function body: its loops (nested, with the pragma in front of each), its unroll
// pragmas and its const locals. Node access in the wasm build is costly, so loops, pragmas and
// declarations are found with one descendantsOfType query each and related through parents.
import type { Node } from './parser';
import type { LoopKind } from './model';
import { ConstScope } from './constEval';
import { collectConstDeclaration, isConstDeclaration } from './fileConstants';
import { activeMacros } from './macroContext';
import { PendingPragma, pragmaFromNode } from './pragmas';
import { PREPROC_BRANCHES, branchCondition, branchConditionNode, conditionalOf, lastPragmasOfBranches } from './preprocBranches';
import { isComment, named } from './syntaxTree';

const LOOP_TYPES: Record<string, LoopKind> = {
  for_statement: 'for',
  for_range_loop: 'for',
  while_statement: 'while',
  do_statement: 'do',
};

const LOOP_TYPE_LIST = Object.keys(LOOP_TYPES);

export interface RawLoop {
  node: Node;
  kind: LoopKind;
  parent: RawLoop | null;
  pragma: PendingPragma | null;
  /** Pragmas of other branches of the conditional before the loop (see pragmaBefore). */
  alternatives: PendingPragma[];
  /** An unknown macro statement right before the loop (see unknownMacroBefore). */
  unknownMacro: string | null;
  startIndex: number;
}

export function countStatements(node: Node | null): number {
  if (!node) return 0;
  if (node.type !== 'compound_statement') return 1;
  let n = 0;
  for (const c of named(node)) {
    if (isComment(c) || c.type === 'preproc_call') continue;
    if (c.type === 'compound_statement') n += countStatements(c);
    else if (c.type === 'if_statement') {
      n += 1 + countStatements(c.childForFieldName('consequence'));
      const alt = c.childForFieldName('alternative');
      if (alt) n += countStatements(named(alt)[0] ?? null);
    } else n += 1;
  }
  return n;
}

/** Statements that may stand between a pragma and its loop without detaching it. */
function isTransparent(n: Node, pendingOperator: boolean): boolean {
  if (isComment(n)) return true;
  if (n.type === 'preproc_call' && !pragmaFromNode(n)) return true;
  // tree-sitter invents an empty statement (`MISSING ;`) after `_Pragma("…")`.
  return pendingOperator && n.type === 'expression_statement' && n.text.trim() === '';
}

/**
 * The unroll pragma in front of a loop, looking back over comments and other pragmas, and across
 * preprocessor conditionals: a pragma as the last item of a branch of an `#if … #endif` right
 * before the loop (each such branch gives one; the first is the loop's pragma, the others its
 * alternatives), and, for a loop that is the first item of a branch, a pragma before the
 * conditional. Each attachment that depends on a branch names it (condition).
 */
function pragmaBefore(loop: Node): { pragma: PendingPragma; alternatives: PendingPragma[] } | null {
  let node = loop;
  let condition: string | undefined;
  for (let hops = 0; hops < 8; hops++) {
    const stop = branchConditionNode(node.parent);
    let prev = node.previousNamedSibling;
    let sawEmpty = false;
    while (prev && prev.id !== stop?.id) {
      const p = pragmaFromNode(prev);
      if (p) return !sawEmpty || p.form === 'operator' ? { pragma: condition ? { ...p, condition } : p, alternatives: [] } : null;
      if (prev.type === 'expression_statement' && prev.text.trim() === '') sawEmpty = true;
      else if (prev.type === 'preproc_if' || prev.type === 'preproc_ifdef') {
        const found = lastPragmasOfBranches(prev, pragmaFromNode);
        return found.length ? { pragma: found[0], alternatives: found.slice(1) } : null;
      } else if (!isTransparent(prev, true)) return null;
      prev = prev.previousNamedSibling;
    }
    const branch = node.parent;
    if (!branch || !PREPROC_BRANCHES.has(branch.type)) return null;
    condition ??= branchCondition(branch);
    node = conditionalOf(branch);
  }
  return null;
}

/** A call statement right before the loop that masking made of an unknown macro (mask.ts): its name. */
function unknownMacroBefore(loop: Node): string | null {
  let prev = loop.previousNamedSibling;
  while (prev && isComment(prev)) prev = prev.previousNamedSibling;
  if (!prev || prev.type !== 'expression_statement') return null;
  const call = named(prev)[0];
  if (!call || call.type !== 'call_expression' || named(call.childForFieldName('arguments')).length) return null;
  const fn = call.childForFieldName('function');
  return fn?.type === 'identifier' ? activeMacros().unknownOfCall(fn.text) : null;
}

/**
 * `for (…)\n#pragma unroll\nfor (…)` without braces: tree-sitter ends the outer loop with an
 * empty statement and puts pragma and inner loop after it. Returns that outer loop.
 */
function detachedParent(loop: Node): Node | null {
  let prev = loop.previousNamedSibling;
  while (prev && isComment(prev)) prev = prev.previousNamedSibling;
  if (!prev || !pragmaFromNode(prev)) return null;
  prev = prev.previousNamedSibling;
  while (prev && isComment(prev)) prev = prev.previousNamedSibling;
  if (!prev || !LOOP_TYPES[prev.type]) return null;
  const body = prev.childForFieldName('body');
  return body && body.type === 'expression_statement' && body.text.trim() === '' ? prev : null;
}

/** bodyNodesByType's key for the loops of every kind (together, in document order). */
const LOOPS = 'loops';
const PRAGMA_TEXT = /_Pragma|UNROLL|_CCCL_PRAGMA|CUTLASS_PRAGMA|CUTE_(NO_)?UNRO/;

/**
 * The body's nodes that collectLoops, collectPragmas and collectLocalConsts look at, by type, in
 * document order, plus those of `extra`'s types under the key it gives each (several types under
 * one key stay in document order): one walk of the body instead of one per kind (walks dominate
 * on large bodies).
 */
export function bodyNodesByType(body: Node, extra: Readonly<Record<string, string>> = {}): Map<string, Node[]> {
  const types = [...LOOP_TYPE_LIST, 'preproc_call', 'declaration', ...Object.keys(extra)];
  if (PRAGMA_TEXT.test(body.text)) types.push('expression_statement');
  const out = new Map<string, Node[]>([...types, LOOPS, ...Object.values(extra)].map(t => [t, []]));
  for (const n of body.descendantsOfType(types)) {
    if (!n) continue;
    out.get(LOOP_TYPES[n.type] ? LOOPS : (extra[n.type] ?? n.type))?.push(n);
  }
  return out;
}

export function collectLoops(body: Node, byType: Map<string, Node[]>): RawLoop[] {
  const nodes = byType.get(LOOPS) ?? [];
  const byId = new Map<number, RawLoop>();
  const loops = nodes.map(node => {
    const found = pragmaBefore(node);
    const raw: RawLoop = {
      node,
      kind: LOOP_TYPES[node.type],
      parent: null,
      pragma: found?.pragma ?? null,
      alternatives: found?.alternatives ?? [],
      unknownMacro: found ? null : unknownMacroBefore(node),
      startIndex: node.startIndex,
    };
    byId.set(node.id, raw);
    return raw;
  });
  for (const raw of loops) {
    for (let p = raw.node.parent; p && p.id !== body.id; p = p.parent) {
      const outer = byId.get(p.id);
      if (outer) {
        raw.parent = outer;
        break;
      }
    }
    if (!raw.parent) {
      const adopter = detachedParent(raw.node);
      if (adopter) raw.parent = byId.get(adopter.id) ?? null;
    }
  }
  return loops;
}

export function depthOf(l: RawLoop): number {
  let d = 0;
  for (let p = l.parent; p; p = p.parent) d++;
  return d;
}

/** Unroll pragmas anywhere in the body, by node id (directives and `_Pragma` operators). */
export function collectPragmas(byType: Map<string, Node[]>): PendingPragma[] {
  const out: PendingPragma[] = [];
  for (const n of byType.get('preproc_call') ?? []) {
    const p = n && pragmaFromNode(n);
    if (p) out.push(p);
  }
  // Present only where the body's text mentions a pragma spelling (bodyNodesByType).
  {
    for (const n of byType.get('expression_statement') ?? []) {
      const p = n && pragmaFromNode(n);
      if (p) out.push(p);
    }
  }
  return out;
}

/** const/constexpr integers declared in the body, in source order, with their position. */
export function collectLocalConsts(
  body: Node,
  byType: Map<string, Node[]>,
  baseScope: ConstScope,
): { at: number; name: string; value: number }[] {
  const out: { at: number; name: string; value: number }[] = [];
  if (!/\bconst(expr)?\b/.test(body.text)) return out;
  const values = new Map(baseScope.values);
  for (const decl of byType.get('declaration') ?? []) {
    if (!decl || !isConstDeclaration(decl)) continue;
    const scope: ConstScope = { ...baseScope, values };
    const before = new Map(values);
    collectConstDeclaration(decl, scope);
    for (const [name, value] of values) if (before.get(name) !== value) out.push({ at: decl.startIndex, name, value });
  }
  return out;
}
