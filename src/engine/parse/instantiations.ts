// Template instantiations visible in the file: k<float, 256><<<…>>>, template void k<…>(…), &k<8>,
// and the values they bind a function's template parameters to.
import type { Node } from './parser';
import { ConstScope, evalConst } from './constEval';
import { FunctionInfo, functionName } from './deviceFunctions';
import { evalTextConst } from './fileConstants';
import { named } from './syntaxTree';
import { templateParamNames } from './declaratorNames';
import { activeMacros } from './macroContext';
import type { TopLevel } from './topLevel';

export type Instantiation = Map<string, number>;

/** How deep a chain of templates (`launch<8>` -> `mmq<J>` -> `tile<J>`) is followed; how many instantiations a function takes from it. */
const MAX_CHAIN = 8;
/**
 * Argument lists read per template (texts; analyzeFunction keeps up to 64 distinct bindings of
 * them). A list cut short is in TRUNCATED: its function's notes say "the first …".
 */
const MAX_INSTANTIATIONS = 1024;
export const TRUNCATED = new WeakSet<string[][]>();

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
  /** Filled with the macros whose invocations were read for instantiations. */
  macrosRead: Set<string> = new Set(),
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
    const record = (name: string, args: string[], from: Written['from']) => {
      // The same text in two templates (`get_util_funcs<type, J>` in get_vdr and in
      // get_write_back) stands for each one's instantiations.
      const key = `${name}<${args.join(',')}>@${from?.name ?? ''}`;
      if (seen.has(key)) return;
      seen.add(key);
      if (!written.has(name)) written.set(name, []);
      written.get(name)!.push({ args, from });
      if (from && !written.has(from.name) && !templates.has(from.name) && !wanted.has(from.name)) next.add(from.name);
    };
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
        record(name, texts, enclosingTemplate(n, texts));
      }
    }
    for (const w of macroWritten(top.defines, candidates, wanted, macrosRead)) record(w.name, w.args, w.from);
    for (const n of next) followed.add(n);
    wanted = next;
  }
  const args = new Map<string, string[][]>();
  const memo = new Map<string, string[][]>();
  for (const name of templates.keys()) if (written.has(name)) args.set(name, expand(name, written, new Set(), memo));
  return args;
}

/** How many macro invocations a file's instantiations are read from, and how long one's expansion may be. */
const MAX_MACRO_CALLS = 256;
const MAX_EXPANSION = 200_000;

/**
 * Instantiations written through macros the file sees: ggml's
 * `EXTERN_DECL_FATTN_VEC_CASES(64, GGML_TYPE_F16)` expands to seven
 * `extern template void ggml_cuda_flash_attn_ext_vec_case<64, GGML_TYPE_F16, …>(…);`. Only
 * invocations of function-like macros whose expansion can name a wanted template are expanded.
 */
function macroWritten(
  defineNodes: Node[],
  candidates: { node: Node; text: string }[],
  wanted: Set<string>,
  macrosRead: Set<string>,
): { name: string; args: string[]; from: Written['from'] }[] {
  const macros = activeMacros();
  const out: { name: string; args: string[]; from: Written['from'] }[] = [];
  if (!wanted.size || !defineNodes.length) return out;
  // The file's own function-like macros whose body names a wanted template, or such a macro.
  const defines = new Map<string, string>();
  for (const node of defineNodes) {
    const name = node.childForFieldName('name')?.text;
    if (name && macros.macroParams(name)) defines.set(name, node.text);
  }
  if (!defines.size) return out;
  const mentions = new Set<string>();
  for (let grown = true; grown;) {
    grown = false;
    const mentioned = new RegExp(`\\b(${[...wanted, ...mentions].map(w => w.replace(/[$]/g, '\\$&')).join('|')})\\b`);
    for (const [name, text] of defines)
      if (!mentions.has(name) && mentioned.test(text.slice(text.indexOf(name) + name.length))) {
        mentions.add(name);
        grown = true;
      }
  }
  if (!mentions.size) return out;
  for (const m of mentions) macrosRead.add(m);
  const call = new RegExp(`\\b(${[...mentions].join('|')})\\s*\\(`, 'g');
  let calls = 0;
  for (const { node, text } of candidates) {
    for (let m = call.exec(text); m && calls < MAX_MACRO_CALLS; m = call.exec(text)) {
      const end = closingParen(text, m.index + m[0].length - 1);
      if (end === -1) continue;
      calls++;
      const expansion = macros.expand(text.slice(m.index, end + 1));
      if (expansion === null || expansion.length > MAX_EXPANSION) continue;
      const at = node.descendantForIndex(node.startIndex + m.index);
      for (const w of templateUses(expansion, wanted)) out.push({ ...w, from: at ? enclosingTemplate(at, w.args) : null });
    }
  }
  return out;
}

/** The offset of the `)` closing the `(` at `open`, or -1. */
function closingParen(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i;
  }
  return -1;
}

/** `name<args>` of a wanted template in expanded text, its arguments split at top-level commas. */
function templateUses(text: string, wanted: Set<string>): { name: string; args: string[] }[] {
  const out: { name: string; args: string[] }[] = [];
  const re = new RegExp(`\\b(${[...wanted].map(n => n.replace(/[$]/g, '\\$&')).join('|')})\\s*<`, 'g');
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const args: string[] = [];
    let depth = 0;
    let start = m.index + m[0].length;
    let i = start;
    for (; i < text.length; i++) {
      const c = text[i];
      if (c === '<' || c === '(' || c === '[' || c === '{') depth++;
      else if ((c === '>' || c === ')' || c === ']' || c === '}') && depth > 0) depth--;
      else if (c === '>' && depth === 0) break;
      else if (c === ',' && depth === 0) {
        args.push(text.slice(start, i).trim());
        start = i + 1;
      } else if (c === ';' || (c === ')' && depth === 0)) break;
    }
    if (i < text.length && text[i] === '>') {
      args.push(text.slice(start, i).trim());
      if (args.every(a => a.length)) out.push({ name: m[1], args });
    }
  }
  return out;
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

function expand(name: string, written: Map<string, Written[]>, chain: Set<string>, memo = new Map<string, string[][]>()): string[][] {
  // The same template is reached by many paths (each call site of a chain): its list is made once
  // per set of templates already on the path (which decides where a cycle stops).
  const memoKey = `${name}\u0000${[...chain].sort().join(',')}`;
  const known = memo.get(memoKey);
  if (known) return known;
  const out = new Map<string, string[]>();
  let cut = false;
  const add = (a: string[]) => {
    if (out.size < MAX_INSTANTIATIONS) out.set(a.join('\u0000'), a);
    else cut = true;
  };
  for (const w of written.get(name) ?? []) {
    if (out.size >= MAX_INSTANTIATIONS) {
      cut = true;
      break;
    }
    const outer =
      w.from && chain.size < MAX_CHAIN && !chain.has(w.from.name) && written.has(w.from.name)
        ? expand(w.from.name, written, new Set([...chain, name]), memo)
        : [];
    if (TRUNCATED.has(outer)) cut = true;
    if (!outer.length) add(w.args);
    if (!outer.length) continue;
    const params = w.from!.params;
    const bound = new RegExp(`\\b(${params.join('|')})\\b`, 'g');
    for (const o of outer) {
      if (out.size >= MAX_INSTANTIATIONS) {
        cut = true;
        break;
      }
      add(w.args.map(t => t.replace(bound, m => substituted(o[params.indexOf(m)], m))));
    }
  }
  const list = [...out.values()];
  if (cut) TRUNCATED.add(list);
  memo.set(memoKey, list);
  return list;
}

/** An outer argument put in place of its parameter: parenthesised unless it is one token (`8`, `true`, `(8)`). */
function substituted(value: string | undefined, param: string): string {
  if (value === undefined) return param;
  const token = /^\(?\s*([\w.]+)\s*\)?$/.exec(value);
  return token && value.startsWith('(') === value.endsWith(')') ? token[1] : `(${value})`;
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
      // A macro from a header (`rwkv_wkv_f32<CUDA_WKV_BLOCK_SIZE * 2>`): its expansion.
      if (v === null && /[A-Za-z_]/.test(text)) {
        const expanded = activeMacros().expand(text, 2000);
        if (expanded !== null && expanded !== text) v = evalTextConst(expanded, fileScope);
      }
    } else if (p.defaultValue) {
      const r = evalConst(p.defaultValue, { values: new Map([...fileScope.values, ...binding]), unboundTemplateParams: new Set() });
      v = typeof r === 'number' ? r : null;
    }
    if (v !== null) binding.set(p.name, v);
  }
  return binding;
}
