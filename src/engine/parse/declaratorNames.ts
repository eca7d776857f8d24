// The names that declarators and template parameter lists declare.
import type { Node } from './parser';
import { named } from './syntaxTree';

/** Template parameter names of a template_declaration, in order. */
export function templateParamNames(templateDecl: Node | null): string[] {
  const out: string[] = [];
  for (const p of named(templateDecl?.childForFieldName('parameters'))) {
    let name: string | null = null;
    if (/^(optional_|variadic_)?parameter_declaration$/.test(p.type)) name = lastIdentifier(p.childForFieldName('declarator'));
    else if (p.type === 'optional_type_parameter_declaration') name = p.childForFieldName('name')?.text ?? null;
    else if (/type_parameter_declaration$/.test(p.type)) name = named(p).find(c => c.type === 'type_identifier')?.text ?? null;
    else if (p.type === 'template_template_parameter_declaration') {
      const inner = named(p).find(c => /type_parameter_declaration$/.test(c.type));
      name = inner ? (named(inner).find(c => c.type === 'type_identifier')?.text ?? null) : null;
    }
    if (name) out.push(name);
  }
  return out;
}

/** The last identifier in a declarator (a parameter's name under pointers, references, arrays). */
export function lastIdentifier(n: Node | null): string | null {
  if (!n) return null;
  if (n.type === 'identifier' || n.type === 'type_identifier') return n.text;
  const kids = named(n);
  for (let i = kids.length - 1; i >= 0; i--) {
    const r = lastIdentifier(kids[i]);
    if (r) return r;
  }
  return null;
}

/**
 * The name a declarator declares: `x`, `*x`, `&x`, `x[N]`, `(&x)[N]` all declare `x` (the array
 * size `N` is not the name, as the last identifier would be).
 */
export function declaredName(n: Node | null): string | null {
  for (let i = 0; n && i < 16; i++) {
    if (n.type === 'identifier' || n.type === 'field_identifier') return n.text;
    if (n.type === 'qualified_identifier') return n.text.split('::').pop() ?? null;
    n = n.childForFieldName('declarator') ?? named(n).find(c => !/^(type_qualifier|ms_|attribute)/.test(c.type)) ?? null;
  }
  return null;
}
