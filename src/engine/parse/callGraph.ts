// What a function's analysis depends on through calls, by name, over the file's top-level
// function definitions (device, host, and device lambdas as callers). Two ways a text reaches
// another function's result (scopes.ts):
//  - a parameter of a function that is not a kernel takes what its callers pass
//    (ScopeLookup.parameterValue), read in the caller's scope: its locals, and through its own
//    parameters its callers' in turn. A kernel's parameters are run-time values.
//  - a call of a function whose body is one `return expr;` is evaluated through that body
//    (ScopeLookup.callConstexpr), and through the calls in it.
// Class bodies are not definitions here: every result is keyed on all of them (analyze.ts).
import type { Node } from './parser';
import type { TopLevel } from './topLevel';
import { functionName } from './deviceFunctions';

/** One top-level function definition, as the call graph sees it. */
export interface FunctionDef {
  /** The name calls use (the declarator's last `::` part); null for a lambda. */
  name: string | null;
  start: number;
  end: number;
  /** A __global__ function: its parameters are run-time values whoever calls it. */
  kernel: boolean;
  /** The body may be one `return expr;`: callers evaluate through it. */
  oneReturn: boolean;
  /** Names the text calls or names with template arguments (a superset: `if (`, `static_cast<`). */
  calls: string[];
  /** Index of its result in the snapshot's functions, or -1 (a host function). */
  fn: number;
}

const CALLED = /\b([A-Za-z_$][\w$]*)\s*[<(]/g;

export function calledNames(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(CALLED)) out.add(m[1]);
  return [...out];
}

/** Whether a function's body may be a single `return …;` (comments aside): conservative. */
export function mayBeOneReturn(text: string): boolean {
  const brace = text.indexOf('{');
  if (brace === -1) return false;
  const body = text.slice(brace).replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, ' ');
  return /^\{\s*return\b[^;]*;\s*\}\s*$/.test(body);
}

/**
 * What definitionsOf reads from a function's text, by that text: a whole-file analysis (a
 * keystroke outside any body) found them again for every function, 2 ms a keystroke in a
 * 5,000-line file (docs/measurements.md, issue 41). A function of the text alone: a hit is the
 * fresh answer. Cleared when full, so it holds about one large file's functions.
 */
const TEXT_FACTS = new Map<string, { calls: readonly string[]; oneReturn: boolean }>();
const TEXT_FACTS_MAX = 8192;

function textFacts(text: string): { calls: readonly string[]; oneReturn: boolean } {
  let f = TEXT_FACTS.get(text);
  if (!f) {
    if (TEXT_FACTS.size >= TEXT_FACTS_MAX) TEXT_FACTS.clear();
    f = { calls: calledNames(text), oneReturn: mayBeOneReturn(text) };
    TEXT_FACTS.set(text, f);
  }
  return f;
}

/**
 * The definitions of a scanned file, with the text each one's dependents are keyed on (a
 * template's head too: its parameter names are read in the caller's scope).
 */
export function definitionsOf(top: TopLevel): { defs: FunctionDef[]; texts: string[]; byNode: Map<number, number> } {
  const defs: FunctionDef[] = [];
  const texts: string[] = [];
  const byNode = new Map<number, number>();
  const add = (node: Node, text: string, name: string | null, kernel: boolean, head: Node | null) => {
    byNode.set(node.id, defs.length);
    texts.push(head ? head.text : text);
    const facts = textFacts(text);
    defs.push({
      name: name?.split('::').pop() ?? null,
      start: node.startIndex,
      end: node.endIndex,
      kernel,
      oneReturn: facts.oneReturn,
      calls: [...facts.calls],
      fn: -1,
    });
  };
  for (const f of top.functions) add(f.node, f.text, definedName(f.node), f.qualifier === 'global', f.templateDecl);
  for (const o of top.others) {
    if (o.node.type !== 'function_definition') continue;
    const head = o.node.parent?.type === 'template_declaration' ? o.node.parent : null;
    add(o.node, o.text, definedName(o.node), false, head);
  }
  return { defs, texts, byNode };
}

/** The name a top-level definition is declared with (null for a device lambda). */
function definedName(node: Node): string | null {
  return node.type === 'function_definition' ? functionName(node.childForFieldName('declarator')) : null;
}

/** Whether the file defines a function named `main` (a program by itself), as definitionsOf names them. */
export function definesMainIn(top: TopLevel): boolean {
  for (const f of top.functions) if (definedName(f.node)?.split('::').pop() === 'main') return true;
  for (const o of top.others) if (o.node.type === 'function_definition' && definedName(o.node)?.split('::').pop() === 'main') return true;
  return false;
}

/** Name-keyed call graph of one file's definitions. */
export class CallGraph {
  private byName = new Map<string, number[]>();
  private callers = new Map<string, number[]>();

  constructor(readonly defs: FunctionDef[]) {
    defs.forEach((d, i) => {
      if (d.name) push(this.byName, d.name, i);
      for (const c of d.calls) push(this.callers, c, i);
    });
  }

  /**
   * Definitions whose text can change the result of definition `k`: its callers through
   * functions that are not kernels (their arguments and scopes), and the one-return
   * functions any of those call, transitively.
   */
  dependencies(k: number): number[] {
    const seen = new Set<number>([k]);
    const params: number[] = [k];
    for (let q = 0; q < params.length; q++) {
      const d = this.defs[params[q]];
      if (d.kernel || !d.name) continue;
      for (const c of this.callers.get(d.name) ?? [])
        if (!seen.has(c)) {
          seen.add(c);
          params.push(c);
        }
    }
    const out = new Set(params);
    const queue = [...params];
    while (queue.length) {
      for (const name of this.defs[queue.pop()!].calls)
        for (const c of this.byName.get(name) ?? [])
          if (this.defs[c].oneReturn && !out.has(c)) {
            out.add(c);
            queue.push(c);
          }
    }
    out.delete(k);
    return [...out].sort((a, b) => a - b);
  }

  /**
   * Definitions whose result can change when the text of definition `k` changes, calling
   * `calls` before or after: those it calls through functions that are not kernels, and, when
   * it may be a one-return function, the functions that evaluate through it and theirs.
   */
  dependents(k: number, calls: Iterable<string>): number[] {
    const out = new Set<number>();
    const down = (from: Iterable<string>) => {
      const queue = [...from];
      while (queue.length) {
        for (const c of this.byName.get(queue.pop()!) ?? []) {
          const d = this.defs[c];
          if (d.kernel || out.has(c) || c === k) continue;
          out.add(c);
          queue.push(...d.calls);
        }
      }
    };
    down(calls);
    const name = this.defs[k].name;
    if (this.defs[k].oneReturn && name) {
      // Callers evaluate through it, and through them one-return callers of theirs.
      const up: number[] = [];
      const queue = [name];
      const seenNames = new Set(queue);
      while (queue.length) {
        for (const c of this.callers.get(queue.pop()!) ?? []) {
          if (c === k || up.includes(c)) continue;
          up.push(c);
          const n = this.defs[c].name;
          if (this.defs[c].oneReturn && n && !seenNames.has(n)) {
            seenNames.add(n);
            queue.push(n);
          }
        }
      }
      for (const c of up) out.add(c);
      down(up.flatMap(c => this.defs[c].calls));
    }
    out.delete(k);
    return [...out].sort((a, b) => a - b);
  }
}

function push(m: Map<string, number[]>, k: string, v: number): void {
  const l = m.get(k);
  if (l) l.push(v);
  else m.set(k, [v]);
}

/** FNV-1a over a text, twice with different multipliers: 64 bits of key, no text kept. */
export function textHash(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
  }
  return (a >>> 0).toString(16) + (b >>> 0).toString(16);
}

/**
 * Every `name<` a text writes for one of the file's templates, with the text after it up to the
 * end of its statement (`;`, `{` or `}`): instantiations.ts reads the argument list inside that
 * stretch. Two texts with the same list give the file the same instantiations.
 */
export function templateReferences(text: string, mention: RegExp | null): string[] {
  if (!mention) return [];
  const out: string[] = [];
  for (const m of text.matchAll(new RegExp(mention.source, 'g'))) {
    const rest = text.slice(m.index);
    const end = rest.search(/[;{}]/);
    out.push(end === -1 ? rest : rest.slice(0, end + 1));
  }
  return out;
}
