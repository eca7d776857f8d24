// Device functions (__global__, __device__, macro-qualified, device lambdas): name, template
// parameters and launch bounds.
import type { Node } from './parser';
import type { KernelQualifier } from './model';
import { lastIdentifier } from './declaratorNames';
import { named } from './syntaxTree';
import type { TopLevel } from './topLevel';

export interface FunctionInfo {
  node: Node;
  name: string;
  qualifier: KernelQualifier;
  templateParams: { name: string; defaultValue: Node | null }[];
  launchBounds: string[] | null;
  /** Source text of the whole definition (cache key, instantiation search). */
  text: string;
  /** Qualifier macros parsed as a separate member declaration before the function (class bodies). */
  headMacros?: string;
}

export function functionName(decl: Node | null): string | null {
  let d: Node | null = decl;
  for (let i = 0; d && i < 8; i++) {
    switch (d.type) {
      case 'function_declarator':
        d = d.childForFieldName('declarator');
        break;
      case 'pointer_declarator':
      case 'reference_declarator':
      case 'parenthesized_declarator':
        d = d.childForFieldName('declarator') ?? named(d)[0] ?? null;
        break;
      case 'identifier':
      case 'field_identifier':
      case 'operator_name':
      case 'destructor_name':
        return d.text;
      case 'qualified_identifier': {
        const n = d.childForFieldName('name');
        d = n ?? null;
        break;
      }
      case 'template_function':
        return d.childForFieldName('name')?.text ?? null;
      // `operator float() const`: a conversion function.
      case 'operator_cast':
        return d.text.slice(0, d.text.indexOf('(')).replace(/\s+/g, ' ').trim() || null;
      default:
        return null;
    }
  }
  return null;
}

function templateParamsOf(templateDecl: Node): FunctionInfo['templateParams'] {
  const out: FunctionInfo['templateParams'] = [];
  for (const p of named(templateDecl.childForFieldName('parameters'))) {
    let name: string | null = null;
    let defaultValue: Node | null = null;
    switch (p.type) {
      case 'parameter_declaration':
      case 'variadic_parameter_declaration':
        name = lastIdentifier(p.childForFieldName('declarator'));
        break;
      case 'optional_parameter_declaration':
        name = lastIdentifier(p.childForFieldName('declarator'));
        defaultValue = p.childForFieldName('default_value');
        break;
      case 'type_parameter_declaration':
      case 'variadic_type_parameter_declaration':
        name = named(p).find(c => c.type === 'type_identifier')?.text ?? null;
        break;
      case 'optional_type_parameter_declaration':
        name = p.childForFieldName('name')?.text ?? null;
        break;
      case 'template_template_parameter_declaration':
        name = null;
        break;
    }
    if (name) out.push({ name, defaultValue });
  }
  return out;
}

export function functionInfo(
  node: Node,
  templateDecl: Node | null,
  qualifier: KernelQualifier,
  text: string,
  headMacros?: string,
  lambdaName?: string,
): FunctionInfo | null {
  const name = lambdaName ?? functionName(node.childForFieldName('declarator'));
  if (!name) return null;
  const lb = named(node).find(c => c.type === 'launch_bounds');
  return {
    node,
    name,
    qualifier,
    templateParams: templateDecl ? templateParamsOf(templateDecl) : [],
    launchBounds: lb ? named(lb).map(a => a.text) : null,
    text,
    ...(headMacros ? { headMacros } : {}),
  };
}

export function collectFunctions(candidates: TopLevel['functions']): FunctionInfo[] {
  const out: FunctionInfo[] = [];
  for (const { node, templateDecl, qualifier, text, headMacros, name } of candidates) {
    const info = functionInfo(node, templateDecl, qualifier, text, headMacros, name);
    if (info) out.push(info);
  }
  return out;
}
