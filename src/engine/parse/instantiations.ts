// Template instantiations visible in the file: k<float, 256><<<…>>>, template void k<…>(…), &k<8>,
// and the values they bind a function's template parameters to.
import type { Node } from './parser';
import { ConstScope, evalConst } from './constEval';
import { FunctionInfo, functionName } from './deviceFunctions';
import { evalTextConst } from './fileConstants';
import { named } from './syntaxTree';
import type { TopLevel } from './topLevel';

export type Instantiation = Map<string, number>;

export function collectInstantiations(top: TopLevel, templates: Map<string, FunctionInfo[]>): Map<string, string[][]> {
  const args = new Map<string, string[][]>();
  const seen = new Set<string>();
  // A query over the whole tree costs tens of ms on a large file; only top-level pieces whose
  // text mentions `name<` can hold an instantiation, and a regex over text is nearly free.
  const names = [...templates.keys()].map(n => n.replace(/[$]/g, '\\$&'));
  const mention = new RegExp(`\\b(${names.join('|')})\\s*<`);
  // A member function's text is part of its class's, which is among the others already.
  const candidates = [...top.others, ...top.functions.filter(f => !f.member)];
  for (const { node, text } of candidates) {
    if (!mention.test(text)) continue;
    for (const n of node.descendantsOfType('template_function')) {
      if (!n) continue;
      const name = n.childForFieldName('name')?.text;
      const list = n.childForFieldName('arguments');
      if (!name || !list || !templates.has(name) || insideTemplateOf(n, name)) continue;
      const texts = named(list).map(a => a.text);
      const key = `${name}<${texts.join(',')}>`;
      if (seen.has(key)) continue;
      seen.add(key);
      if (!args.has(name)) args.set(name, []);
      args.get(name)!.push(texts);
    }
  }
  return args;
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
