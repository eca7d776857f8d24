// The locals and parameters a function declares, for lookups inside its body (scopes.ts).
import type { Node } from './parser';
import { declaredName } from './declaratorNames';
import { named } from './syntaxTree';
import { bodyNodesByType } from './bodyLoops';

export interface Declared {
  at: number;
  kind: 'const' | 'var' | 'param';
  init: Node | null;
  type: Node | null;
  /** A `var` that nothing writes after its initialiser (nvcc folds it like a constant). */
  unmodified?: boolean;
  /** For a parameter of a lambda written in the body: the lambda and the parameter's position. */
  lambda?: { node: Node; index: number };
}

/** The lambda whose parameter list holds `p`, with `p`'s position in it, or undefined. */
function lambdaOf(p: Node): Declared['lambda'] {
  const list = p.parent;
  const lambda = list?.parent?.parent;
  if (list?.type !== 'parameter_list' || list.parent?.type !== 'abstract_function_declarator' || lambda?.type !== 'lambda_expression')
    return undefined;
  const index = named(list).findIndex(q => q.id === p.id);
  return index < 0 ? undefined : { node: lambda, index };
}

/**
 * The body nodes these reads need, by the key bodyNodesByType files them under: parameters
 * declared in the body (a lambda's), and the writes (assignments, ++/--, pointer expressions
 * for an address taken), each group in document order. The analysis of a function walks its body
 * once for these and its loops, pragmas and declarations together (ScopeLookup.bodyNodes).
 */
const SCOPE_NODE_GROUPS: Readonly<Record<string, string>> = {
  parameter_declaration: 'params',
  optional_parameter_declaration: 'params',
  assignment_expression: 'writes',
  update_expression: 'writes',
  pointer_expression: 'writes',
};

/** A function body's nodes by group (bodyNodesByType with SCOPE_NODE_GROUPS). */
export type BodyNodes = Map<string, Node[]>;

/**
 * The writes in a function body, by the name written: an assignment, a compound assignment,
 * ++/--, or an address taken (a write may follow), each with its start offset. Collected in one
 * pass per body (a body with many locals would otherwise be walked once per local).
 */
function writesIn(nodes: BodyNodes): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const n of nodes.get('writes') ?? []) {
    let target: Node | null;
    if (n.type === 'assignment_expression') target = n.childForFieldName('left');
    else if (n.type === 'update_expression') target = n.childForFieldName('argument');
    else target = n.childForFieldName('operator')?.text === '&' ? n.childForFieldName('argument') : null;
    while (target?.type === 'parenthesized_expression') target = named(target)[0] ?? null;
    if (target?.type !== 'identifier') continue;
    const name = target.text;
    if (!out.has(name)) out.set(name, []);
    out.get(name)!.push(n.startIndex);
  }
  return out;
}

/**
 * Whether the function body writes `name` anywhere outside [from, to) (its declaration), given
 * the body's writes (writesIn). Another declaration of the same name (`auto n = …;` again in a
 * sibling scope) is not a write.
 */
function writtenOutside(writes: Map<string, number[]>, name: string, from: number, to: number): boolean {
  return (writes.get(name) ?? []).some(at => at < from || at >= to);
}

/**
 * The parameters and locals of a function by name (a name may be declared again in another
 * scope), given its body's nodes (empty without a body).
 */
function functionDeclarations(fn: Node, nodes: BodyNodes): Map<string, Declared[]> {
  const m = new Map<string, Declared[]>();
  const add = (name: string | null | undefined, d: Declared) => {
    if (!name) return;
    if (!m.has(name)) m.set(name, []);
    m.get(name)!.push(d);
  };
  const params = fn.childForFieldName('declarator');
  const inBody = nodes.get('params') ?? [];
  for (const p of [...(params?.descendantsOfType(['parameter_declaration', 'optional_parameter_declaration']) ?? []), ...inBody]) {
    if (!p) continue;
    const lambda = inBody.includes(p) ? lambdaOf(p) : undefined;
    add(declaredName(p.childForFieldName('declarator')), {
      at: p.startIndex,
      kind: 'param',
      init: null,
      type: p.childForFieldName('type'),
      ...(lambda ? { lambda } : {}),
    });
  }
  let writes: Map<string, number[]> | null = null;
  for (const d of nodes.get('declaration') ?? []) {
    const kids = named(d);
    const isConst = kids.some(k => k.type === 'type_qualifier' && /^(const|constexpr)$/.test(k.text));
    for (const k of kids) {
      if (k.type === 'init_declarator') {
        const declarator = k.childForFieldName('declarator');
        const name = declaredName(declarator);
        const init = k.childForFieldName('value');
        add(name, {
          at: d.startIndex,
          kind: isConst ? 'const' : 'var',
          init,
          type: d.childForFieldName('type'),
          ...(!isConst && init && name && declarator?.type === 'identifier'
            ? { unmodified: !writtenOutside((writes ??= writesIn(nodes)), name, k.startIndex, k.endIndex) }
            : {}),
        });
      } else if (
        k.type === 'identifier' ||
        k.type === 'array_declarator' ||
        k.type === 'pointer_declarator' ||
        k.type === 'reference_declarator'
      ) {
        add(declaredName(k), { at: d.startIndex, kind: isConst ? 'const' : 'var', init: null, type: d.childForFieldName('type') });
      }
    }
  }
  return m;
}

/**
 * The writes of parameter `name` in `fn`'s body, in order, when every one is a `name = expr;`
 * standing directly in the body, or in the first branch of an `#if` there (so it always runs): each with its end and right-hand side; null
 * when it has a write of another kind (a compound assignment, under a condition or in a loop: the
 * caller's value and the old rule). Read once per function and name (a lookup runs per use).
 */
function plainWrites(fn: Node, name: string, writes: Map<string, Node[]>): { end: number; value: Node }[] | null {
  const body = fn.childForFieldName('body');
  if (!body) return [];
  const out: { end: number; value: Node }[] = [];
  for (const n of writes.get(name) ?? []) {
    const value = n.childForFieldName('right');
    // (an `#if`/`#ifdef` around it, DeepGEMM's `#if defined(__CUDA_ARCH__)` body: its first branch, the one the scan follows)
    let holder = n.parent?.parent;
    while (holder && (holder.type === 'preproc_if' || holder.type === 'preproc_ifdef')) holder = holder.parent;
    const plain =
      n.type === 'assignment_expression' &&
      n.childForFieldName('operator')?.text === '=' &&
      n.parent?.type === 'expression_statement' &&
      holder?.id === body.id;
    if (!plain || !value) return null;
    out.push({ end: n.endIndex, value });
  }
  return out;
}

/**
 * The assignments and ++/-- of a function's body by the text they write (`x`, `a[i]`), in order:
 * one walk of the body for every parameter plainWrites is asked about.
 */
function writesByTarget(nodes: BodyNodes): Map<string, Node[]> {
  const out = new Map<string, Node[]>();
  for (const n of nodes.get('writes') ?? []) {
    if (n.type === 'pointer_expression') continue;
    const target = n.type === 'assignment_expression' ? n.childForFieldName('left') : n.childForFieldName('argument');
    if (!target) continue;
    const t = target.text;
    const list = out.get(t);
    if (list) list.push(n);
    else out.set(t, [n]);
  }
  return out;
}

/**
 * The locals, parameters and writes of the functions of one tree, each read once: a lookup runs
 * per use of a name. A function body's nodes come from one walk (bodyNodes), which its analysis
 * (loops, pragmas, const locals) shares.
 */
export class FunctionLocals {
  private readonly nodesOfBody = new Map<number, BodyNodes>();
  private readonly decls = new Map<number, Map<string, Declared[]>>();
  /** writesByTarget per function, and plainWrites per function and parameter name. */
  private readonly bodyWrites = new Map<number, Map<string, Node[]>>();
  private readonly paramWrites = new Map<string, { end: number; value: Node }[] | null>();

  bodyNodes(body: Node): BodyNodes {
    let m = this.nodesOfBody.get(body.id);
    if (!m) {
      m = bodyNodesByType(body, SCOPE_NODE_GROUPS);
      this.nodesOfBody.set(body.id, m);
    }
    return m;
  }

  private nodesOf(fn: Node): BodyNodes {
    const body = fn.childForFieldName('body');
    return body ? this.bodyNodes(body) : new Map();
  }

  /** The declaration of `name` that is visible at `at` in `fn` (the last one before it), else its first. */
  declared(name: string, at: number, fn: Node | null): Declared | null {
    if (!fn) return null;
    let m = this.decls.get(fn.id);
    if (!m) this.decls.set(fn.id, (m = functionDeclarations(fn, this.nodesOf(fn))));
    const list = m.get(name);
    if (!list?.length) return null;
    let best: Declared | null = null;
    for (const d of list) if (d.at <= at && (!best || d.at >= best.at)) best = d;
    return best ?? list[0];
  }

  /** The value the last plain write of parameter `name` before `at` gives it (plainWrites), or null. */
  lastPlainWrite(fn: Node | null, name: string, at: number): Node | null {
    if (!fn) return null;
    const key = `${fn.id}|${name}`;
    let writes = this.paramWrites.get(key);
    if (writes === undefined) {
      let byTarget = this.bodyWrites.get(fn.id);
      if (!byTarget) this.bodyWrites.set(fn.id, (byTarget = writesByTarget(this.nodesOf(fn))));
      this.paramWrites.set(key, (writes = plainWrites(fn, name, byTarget)));
    }
    let last: Node | null = null;
    for (const w of writes ?? []) if (w.end <= at) last = w.value;
    return last;
  }
}
