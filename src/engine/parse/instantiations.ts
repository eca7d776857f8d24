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
const MAX_CHAIN = 8;
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
        const texts = withLocalConstants(
          n,
          named(list).map(a => a.text),
        );
        const from = enclosingTemplate(n, texts);
        // The same text in two templates (`get_util_funcs<type, J>` in get_vdr and in
        // get_write_back) stands for each one's instantiations.
        const key = `${name}<${texts.join(',')}>@${from?.name ?? ''}`;
        if (seen.has(key)) continue;
        seen.add(key);
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

/**
 * The argument texts with the local constants they name replaced by their initialisers: the same
 * spelling `impl<D, cols_per_block>` written in two blocks whose `constexpr int cols_per_block`
 * are 1 and 2 is two instantiations (ggml's fattn-vec.cuh), not one read at file scope. A template
 * argument is a constant expression, so a local it names is a constant; a name declared again
 * without `const` in a nearer block is left as written.
 */
function withLocalConstants(n: Node, texts: string[]): string[] {
  const locals = localConstants(n);
  if (!locals.size) return texts;
  const names = [...locals.keys()].filter(k => locals.get(k) !== null);
  if (!names.length) return texts;
  // Not a member or qualified name (`t.cols`, `Cfg::cols`), which a local does not bind.
  const ref = new RegExp(`(?<!(?:::|\\.|->)\\s*)\\b(${names.join('|')})\\b`, 'g');
  return texts.map(t => {
    // Initialisers may name earlier locals (`constexpr int nw = cols * 2;`): a few rounds.
    for (let round = 0; round < 4; round++) {
      const next = t.replace(ref, m => `(${locals.get(m)!})`);
      if (next === t) break;
      t = next;
    }
    return t;
  });
}

/** Statement lists a declaration can stand in: a block, and a preprocessor group inside one (`#ifdef FLASH_ATTN_AVAILABLE`). */
const BLOCKS = new Set(['compound_statement', 'preproc_if', 'preproc_ifdef', 'preproc_else', 'preproc_elif', 'preproc_elifdef']);

/** Names declared before `n` in the blocks around it, innermost first: a constant's initialiser text, or null (not a constant). */
function localConstants(n: Node): Map<string, string | null> {
  const out = new Map<string, string | null>();
  const declare = (s: Node) => {
    const constant = named(s).some(q => q.type === 'type_qualifier' && (q.text === 'constexpr' || q.text === 'const'));
    for (const d of s.childrenForFieldName('declarator')) {
      const id = d?.type === 'init_declarator' ? d.childForFieldName('declarator') : d;
      if (id?.type !== 'identifier' || out.has(id.text)) continue;
      const value = d!.type === 'init_declarator' ? d!.childForFieldName('value') : null;
      const list = value?.type === 'initializer_list' ? named(value) : null;
      out.set(id.text, constant && value && (!list || list.length === 1) ? (list ? list[0].text : value.text) : null);
    }
  };
  for (let child: Node = n, p = n.parent; p && p.type !== 'function_definition'; child = p, p = p.parent) {
    if (!BLOCKS.has(p.type)) continue;
    // In the #else of a group, its first branch's declarations are not there.
    if (p.type !== 'compound_statement' && p.childForFieldName('alternative')?.id === child.id) continue;
    // Nearest first, so a later declaration of a name in the same list is the one that counts.
    const before = named(p)
      .filter(s => s.startIndex < child.startIndex)
      .reverse();
    for (const s of before) {
      if (s.type === 'declaration') declare(s);
      // A group before the call: the declarations of its first branch (the one the scan follows).
      else if (s.type === 'preproc_if' || s.type === 'preproc_ifdef') for (const d of named(s)) if (d.type === 'declaration') declare(d);
    }
  }
  return out;
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
