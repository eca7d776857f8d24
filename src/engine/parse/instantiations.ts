// Template instantiations visible in the file: k<float, 256><<<…>>>, template void k<…>(…), &k<8>,
// and the values they bind a function's template parameters to.
import type { Node } from './parser';
import { ConstScope, evalConst } from './constEval';
import { FunctionInfo, functionName } from './deviceFunctions';
import { evalTextConst } from './fileConstants';
import { named } from './syntaxTree';
import { templateParamNames } from './declaratorNames';
import type { TopLevel } from './topLevel';

export type Instantiation = Map<string, number>;

/** How deep a chain of templates (`launch<8>` -> `mmq<J>` -> `tile<J>`) is followed; how many instantiations a function takes from it. */
const MAX_CHAIN = 4;
const MAX_INSTANTIATIONS = 64;

/** An instantiation as written, and the template around it whose parameters its arguments name. */
interface Written {
  args: string[];
  from: { name: string; params: string[] } | null;
}

/**
 * The instantiations of each template function the file shows, as argument texts. One written
 * inside another template with that template's parameters (`mmq<J>` in `launch<J>`) takes
 * each of the file's instantiations of that template in turn (`launch<8>`: `mmq<(8)>`), up to
 * MAX_CHAIN templates out; where the outer template has none, its parameter stays (not evaluated).
 */
export function collectInstantiations(
  top: TopLevel,
  templates: Map<string, FunctionInfo[]>,
  /** Filled with the other templates (host ones: `launch<J>`) whose instantiations were followed. */
  followed: Set<string> = new Set(),
): Map<string, string[][]> {
  const written = new Map<string, Written[]>();
  const seen = new Set<string>();
  // A member function's text is part of its class's, which is among the others already.
  const candidates = [...top.others, ...top.functions.filter(f => !f.member)];
  // The file's template functions first, then the templates (host ones too: `launch<J>`) that
  // their instantiations are written in, a round per step out.
  let wanted = new Set(templates.keys());
  for (let round = 0; round <= MAX_CHAIN && wanted.size; round++) {
    // A query over the whole tree costs tens of ms on a large file; only top-level pieces whose
    // text mentions `name<` can hold an instantiation, and a regex over text is nearly free.
    const mention = new RegExp(`\\b(${[...wanted].map(n => n.replace(/[$]/g, '\\$&')).join('|')})\\s*<`);
    const next = new Set<string>();
    for (const { node, text } of candidates) {
      if (!mention.test(text)) continue;
      // (`cpy_q<cpy_blck<deq, 32>, 32>`: a function template handed to another as a template argument reads as a type)
      for (const n of node.descendantsOfType(['template_function', 'template_type'])) {
        if (!n) continue;
        const name = n.childForFieldName('name')?.text;
        const list = n.childForFieldName('arguments');
        if (!name || !list || !wanted.has(name) || insideTemplateOf(n, name)) continue;
        const texts = named(list).map(a => a.text);
        const key = `${name}<${texts.join(',')}>`;
        if (seen.has(key)) continue;
        seen.add(key);
        const from = enclosingTemplate(n, texts);
        if (!written.has(name)) written.set(name, []);
        written.get(name)!.push({ args: texts, from });
        if (from && !written.has(from.name) && !templates.has(from.name) && !wanted.has(from.name)) next.add(from.name);
      }
    }
    for (const n of next) followed.add(n);
    wanted = next;
  }
  const args = new Map<string, string[][]>();
  for (const name of templates.keys()) if (written.has(name)) args.set(name, expand(name, written, new Set()));
  return args;
}

/** The template function around `n` whose parameters the arguments name, if any. */
function enclosingTemplate(n: Node, texts: string[]): Written['from'] {
  let p = n.parent;
  while (p && p.type !== 'function_definition') p = p.parent;
  const name = p ? functionName(p.childForFieldName('declarator')) : null;
  const params = p?.parent?.type === 'template_declaration' ? templateParamNames(p.parent) : [];
  return name && params.some(t => texts.some(a => new RegExp(`\\b${t}\\b`).test(a))) ? { name, params } : null;
}

function expand(name: string, written: Map<string, Written[]>, chain: Set<string>): string[][] {
  const out = new Map<string, string[]>();
  const add = (a: string[]) => {
    if (out.size < MAX_INSTANTIATIONS) out.set(a.join('\u0000'), a);
  };
  for (const w of written.get(name) ?? []) {
    const outer =
      w.from && chain.size < MAX_CHAIN && !chain.has(w.from.name) && written.has(w.from.name)
        ? expand(w.from.name, written, new Set([...chain, name]))
        : [];
    if (!outer.length) add(w.args);
    for (const o of outer) {
      const params = w.from!.params;
      const bound = new RegExp(`\\b(${params.join('|')})\\b`, 'g');
      add(w.args.map(t => t.replace(bound, m => (o[params.indexOf(m)] !== undefined ? `(${o[params.indexOf(m)]})` : m))));
    }
  }
  return [...out.values()];
}

/** A recursive self-reference inside the template (k<B/2>) is not a visible instantiation. */
function insideTemplateOf(node: Node, name: string): boolean {
  for (let p = node.parent; p; p = p.parent) {
    if (p.type === 'function_definition' && functionName(p.childForFieldName('declarator')) === name) return true;
  }
  return false;
}

export function bindInstantiation(fn: FunctionInfo, argTexts: string[], fileScope: ConstScope): Instantiation {
  const binding: Instantiation = new Map();
  for (let i = 0; i < fn.templateParams.length; i++) {
    const p = fn.templateParams[i];
    const text = argTexts[i];
    let v: number | null = null;
    if (text !== undefined) {
      v = evalTextConst(text, fileScope);
    } else if (p.defaultValue) {
      const r = evalConst(p.defaultValue, { values: new Map([...fileScope.values, ...binding]), unboundTemplateParams: new Set() });
      v = typeof r === 'number' ? r : null;
    }
    if (v !== null) binding.set(p.name, v);
  }
  return binding;
}
