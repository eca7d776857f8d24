// Constants visible at namespace scope (#define N 16, constexpr/const ints, enumerators) and the
// evaluation of macro bodies and template-argument text against them.
import type { Node } from './parser';
import { ConstScope, EvalResult, evalConst, parseNumberLiteral } from './constEval';
import { named } from './syntaxTree';

export function collectFileConstants(nodes: Node[], values: Map<string, number>): void {
  const scope: ConstScope = { values, unboundTemplateParams: new Set() };
  const visit = (children: Node[], depth: number) => {
    if (depth > 8) return;
    for (const child of children) {
      switch (child.type) {
        case 'preproc_def': {
          const name = child.childForFieldName('name')?.text;
          const value = child.childForFieldName('value')?.text;
          if (name && value) {
            const v = evalMacroBody(value, scope);
            if (v !== null) values.set(name, v);
          }
          break;
        }
        case 'declaration':
        case 'field_declaration':
          collectConstDeclaration(child, scope);
          break;
        case 'enum_specifier':
          collectEnum(child, scope);
          break;
        // Class members are not namespace-scope names: scopes.ts looks them up by C++ scope
        // rules (flattening them here let one class's kN answer for another's).
      }
      if (child.type === 'declaration') {
        for (const e of named(child)) if (e.type === 'enum_specifier') collectEnum(e, scope);
      }
    }
  };
  visit(nodes, 0);
}

/** Binary operators of macro bodies and template arguments, by C precedence (lowest first). */
const PRECEDENCE: Record<string, number> = {
  '||': 1,
  '&&': 2,
  '|': 3,
  '^': 4,
  '&': 5,
  '==': 6,
  '!=': 6,
  '<': 7,
  '>': 7,
  '<=': 7,
  '>=': 7,
  '<<': 8,
  '>>': 8,
  '+': 9,
  '-': 9,
  '*': 10,
  '/': 10,
  '%': 10,
};

/** `a op b` as C computes it on integers (comparisons give 1 or 0); null for a division by zero. */
function applyBinary(op: string, a: number, b: number): number | null {
  switch (op) {
    case '+':
      return a + b;
    case '-':
      return a - b;
    case '*':
      return a * b;
    case '/':
      return b === 0 ? null : Math.trunc(a / b);
    case '%':
      return b === 0 ? null : a % b;
    case '<<':
      return a * 2 ** b;
    case '>>':
      return Math.floor(a / 2 ** b);
    case '&':
      return a & b;
    case '|':
      return a | b;
    case '^':
      return a ^ b;
  }
  const r: Record<string, boolean> = {
    '==': a === b,
    '!=': a !== b,
    '<': a < b,
    '>': a > b,
    '<=': a <= b,
    '>=': a >= b,
    '&&': !!a && !!b,
    '||': !!a || !!b,
  };
  return Number(r[op]);
}

/** Macro bodies are raw text; evaluate simple arithmetic over numbers and known names. */
export function evalMacroBody(text: string, scope: ConstScope): number | null {
  const t = text
    .replace(/\/\*.*?\*\//gs, ' ')
    .replace(/\/\/.*$/s, '')
    .trim();
  if (!/^[\w\s()+\-*/%<>&|^~.'=!]+$/.test(t)) return null;
  const expr = t.replace(/\b([A-Za-z_]\w*)\b/g, name => {
    // (bool literals: a template argument `false`, or `(DKQ == 576)` with DKQ bound)
    const v = name === 'true' ? 1 : name === 'false' ? 0 : scope.values.get(name);
    return v === undefined ? '\u0000' : String(v);
  });
  if (expr.includes('\u0000')) return null;
  const tokens = expr.match(/0[xX][0-9a-fA-F]+[uUlL]*|\d+(\.\d+)?[uUlLfF]*|<<|>>|<=|>=|==|!=|&&|\|\||[()+\-*/%&|^~!<>]/g);
  if (!tokens || tokens.join('') !== expr.replace(/\s+/g, '')) return null;
  // Recursive descent with C precedence.
  let i = 0;
  const prec = PRECEDENCE;
  const primary = (): number | null => {
    const tok = tokens[i++];
    if (tok === undefined) return null;
    if (tok === '(') {
      const v = binary(0);
      if (tokens[i++] !== ')') return null;
      return v;
    }
    if (tok === '-') {
      const v = primary();
      return v === null ? null : -v;
    }
    if (tok === '+') return primary();
    if (tok === '~') {
      const v = primary();
      return v === null ? null : ~v;
    }
    if (tok === '!') {
      const v = primary();
      return v === null ? null : Number(!v);
    }
    return parseNumberLiteral(tok);
  };
  const binary = (min: number): number | null => {
    let left = primary();
    while (left !== null && i < tokens.length && prec[tokens[i]] !== undefined && prec[tokens[i]] > min) {
      const op = tokens[i++];
      const right = binary(prec[op]);
      if (right === null) return null;
      left = applyBinary(op, left, right);
    }
    return left;
  };
  const v = binary(0);
  return v !== null && i === tokens.length ? v : null;
}

export function isConstDeclaration(decl: Node): boolean {
  return named(decl).some(c => c.type === 'type_qualifier' && /^(const|constexpr)$/.test(c.text));
}

export function collectConstDeclaration(decl: Node, scope: ConstScope): void {
  if (!isConstDeclaration(decl)) return;
  for (const d of named(decl)) {
    if (d.type === 'init_declarator') {
      const name = d.childForFieldName('declarator');
      const value = d.childForFieldName('value');
      if (name?.type === 'identifier' && value) {
        const v = evalConst(value, scope);
        if (typeof v === 'number') scope.values.set(name.text, v);
      }
    } else if (decl.type === 'field_declaration' && d.type === 'field_identifier') {
      const value = decl.childForFieldName('default_value');
      if (value) {
        const v = evalConst(value, scope);
        if (typeof v === 'number') scope.values.set(d.text, v);
      }
    }
  }
}

function collectEnum(en: Node, scope: ConstScope): void {
  let next = 0;
  for (const e of named(en.childForFieldName('body'))) {
    if (e.type !== 'enumerator') continue;
    const name = e.childForFieldName('name')?.text;
    const value = e.childForFieldName('value');
    let v: EvalResult = next;
    if (value) v = evalConst(value, scope);
    if (name && typeof v === 'number') {
      scope.values.set(name, v);
      next = v + 1;
    }
  }
}

export function evalTextConst(text: string, scope: ConstScope): number | null {
  const t = text.trim();
  const lit = /^[-+]?(0[xX][0-9a-fA-F]+|\d+)[uUlL]*$/.test(t) ? parseNumberLiteral(t.replace(/^\+/, '')) : null;
  if (lit !== null) return lit;
  const known = scope.values.get(t);
  if (known !== undefined) return known;
  return evalMacroBody(t, scope);
}
