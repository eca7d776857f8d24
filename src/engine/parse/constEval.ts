// Evaluates integral constant expressions the way nvcc would see them at compile time:
// literals, object-like #define macros, const/constexpr integers, enumerators, sizeof of
// builtin types and template parameters bound by a visible instantiation. Names the flat
// `values` map does not know go to the scope's resolver (scopes.ts: C++ scope rules, class
// members, specialisations, CuTe/wmma compile-time shapes).
import type { Node } from './parser';

/**
 * Why an expression is not a plain number:
 * - runtime:   it provably needs a run-time value (a parameter, a non-const local, threadIdx, memory);
 * - dependent: it depends on a template parameter without a visible binding;
 * - unknown:   it names something this file does not define (a header's constant, an unknown
 *              function): possibly compile-time, so nothing may be claimed about it.
 */
export type NotConstant = 'runtime' | 'dependent' | 'unknown';

export type EvalResult = number | NotConstant;

export interface ConstScope {
  /** Names bound to compile-time values (macros, constexpr, enumerators, bound template params). */
  values: Map<string, number>;
  /** Template parameters without a binding in this scope. */
  unboundTemplateParams: Set<string>;
  /**
   * Resolves what `values` does not know: identifiers, qualified names, member accesses, calls,
   * compound literals (`Int<8>{}`). `undefined` falls back to the built-in rules below.
   */
  resolve?: (node: Node, depth: number) => EvalResult | undefined;
  /**
   * The initialiser of a local that keeps its value (const, or nothing writes it afterwards):
   * `int c = min(K, n);` gives `min(K, n)`. Used to see run-time values with a compile-time bound.
   */
  initializer?: (name: Node) => Node | null;
  /**
   * What a call by a plain name goes to: a lambda held by a local that keeps its value
   * (`auto step = [&](int& k) {…};`) or the one function of that name the file defines; else null.
   */
  callee?: (call: Node) => Node | null;
}

const BUILTIN_SIZES: Record<string, number> = {
  char: 1,
  'signed char': 1,
  'unsigned char': 1,
  bool: 1,
  short: 2,
  'unsigned short': 2,
  int: 4,
  unsigned: 4,
  'unsigned int': 4,
  float: 4,
  long: 8,
  'unsigned long': 8,
  'long long': 8,
  'unsigned long long': 8,
  double: 8,
  half: 2,
  __half: 2,
  float2: 8,
  float4: 16,
  int2: 8,
  int4: 16,
  double2: 16,
  size_t: 8,
};

/** Parses C integer and floating literals (hex, octal, binary, digit separators, suffixes). */
export function parseNumberLiteral(text: string): number | null {
  let t = text.replace(/'/g, '').toLowerCase();
  if (/^[0-9.]+(e[+-]?\d+)?f?$/.test(t) && (t.includes('.') || t.includes('e')) && !t.startsWith('0x')) {
    const v = parseFloat(t);
    return Number.isFinite(v) ? v : null;
  }
  t = t.replace(/[ul]+$/, '');
  let v: number;
  if (t.startsWith('0x')) v = parseInt(t.slice(2), 16);
  else if (t.startsWith('0b')) v = parseInt(t.slice(2), 2);
  else if (t.length > 1 && t.startsWith('0')) v = parseInt(t.slice(1), 8);
  else v = parseInt(t, 10);
  return Number.isFinite(v) ? v : null;
}

/** A run-time operand makes the whole run-time; an unknown one makes it unknown; then dependent. */
export function combine(a: EvalResult, b: EvalResult): NotConstant | null {
  if (a === 'runtime' || b === 'runtime') return 'runtime';
  if (a === 'unknown' || b === 'unknown') return 'unknown';
  if (a === 'dependent' || b === 'dependent') return 'dependent';
  return null;
}

const RUNTIME_BUILTINS = new Set(['threadIdx', 'blockIdx', 'blockDim', 'gridDim', 'warpSize', 'clock', 'clock64']);

/** Does the text mention one of the names as a whole word? */
export function mentionsAny(text: string, names: Iterable<string>): boolean {
  for (const n of names) if (new RegExp(`(^|[^\\w])${n.replace(/[$]/g, '\\$&')}([^\\w]|$)`).test(text)) return true;
  return false;
}

function truncDiv(a: number, b: number): number {
  return Math.trunc(a / b);
}

export function evalConst(node: Node | null | undefined, scope: ConstScope, depth = 0): EvalResult {
  if (!node || depth > 64) return 'unknown';
  switch (node.type) {
    case 'number_literal': {
      const v = parseNumberLiteral(node.text);
      return v === null ? 'unknown' : v;
    }
    case 'true':
      return 1;
    case 'false':
      return 0;
    case 'char_literal': {
      const m = /^'(.)'$/.exec(node.text);
      return m ? m[1].charCodeAt(0) : 'unknown';
    }
    case 'parenthesized_expression':
    case 'condition_clause': {
      const inner = node.namedChildren.filter(c => c && c.type !== 'comment');
      return inner.length === 1 ? evalConst(inner[0], scope, depth + 1) : 'unknown';
    }
    case 'identifier':
    case 'type_identifier':
      return evalName(node, scope, depth);
    case 'qualified_identifier': {
      if (scope.resolve) return scope.resolve(node, depth) ?? 'unknown';
      // Without scope rules (macro and pragma text): use the last component if known.
      const last = node.text.split('::').pop() ?? '';
      const v = scope.values.get(last);
      return v !== undefined ? v : 'unknown';
    }
    case 'field_expression': {
      const arg = node.childForFieldName('argument');
      if (arg?.type === 'identifier' && RUNTIME_BUILTINS.has(arg.text)) return 'runtime';
      return scope.resolve?.(node, depth) ?? 'unknown';
    }
    case 'compound_literal_expression':
    case 'template_function':
      return scope.resolve?.(node, depth) ?? 'unknown';
    case 'type_descriptor': {
      // `Int<N>`: tree-sitter reads a lone name in a template argument list as a type.
      const kids = node.namedChildren.filter(c => c && c.type !== 'comment');
      return kids.length === 1 && kids[0]!.type === 'type_identifier' ? evalConst(kids[0], scope, depth + 1) : 'unknown';
    }
    case 'subscript_expression':
      return evalSubscript(node, scope, depth);
    case 'pointer_expression':
    case 'assignment_expression':
    case 'update_expression':
      return 'runtime';
    case 'cast_expression': {
      const value = node.childForFieldName('value');
      return evalConst(value, scope, depth + 1);
    }
    case 'unary_expression':
      return evalUnary(node, scope, depth);
    case 'sizeof_expression':
      return evalSizeof(node, scope);
    case 'conditional_expression': {
      const c = evalConst(node.childForFieldName('condition'), scope, depth + 1);
      if (typeof c !== 'number') return c;
      return evalConst(node.childForFieldName(c ? 'consequence' : 'alternative'), scope, depth + 1);
    }
    case 'binary_expression':
      return evalBinary(node, scope, depth);
    case 'call_expression':
      return evalCall(node, scope, depth);
  }
  // Anything else (a lambda, `new`, a string) is not evaluated: nothing may be claimed about it.
  return 'unknown';
}

function evalName(node: Node, scope: ConstScope, depth: number): EvalResult {
  const name = node.text;
  const v = scope.values.get(name);
  if (v !== undefined) return v;
  if (scope.unboundTemplateParams.has(name)) return 'dependent';
  if (RUNTIME_BUILTINS.has(name)) return 'runtime';
  return scope.resolve?.(node, depth) ?? 'unknown';
}

function evalSubscript(node: Node, scope: ConstScope, depth: number): EvalResult {
  // An element of a run-time array (a parameter, a local written at run time) or a run-time
  // index is a run-time value; an element of a constant table (`kOffsets[2]`) may fold.
  const a = evalConst(node.childForFieldName('argument'), scope, depth + 1);
  const list = node.childForFieldName('indices') ?? node.childForFieldName('index');
  const index = list?.type === 'subscript_argument_list' ? list.namedChildren.filter(c => c && c.type !== 'comment') : [list];
  const i = index.length === 1 && index[0] ? evalConst(index[0], scope, depth + 1) : 'unknown';
  return a === 'runtime' || i === 'runtime' ? 'runtime' : 'unknown';
}

function evalUnary(node: Node, scope: ConstScope, depth: number): EvalResult {
  const arg = evalConst(node.childForFieldName('argument'), scope, depth + 1);
  if (typeof arg !== 'number') return arg;
  const op = node.childForFieldName('operator')?.text ?? node.child(0)?.text;
  switch (op) {
    case '-':
      return -arg;
    case '+':
      return arg;
    case '!':
      return arg ? 0 : 1;
    case '~':
      return ~arg;
  }
  return 'unknown';
}

function evalSizeof(node: Node, scope: ConstScope): EvalResult {
  const type = node.childForFieldName('type');
  const text = (type ?? node.namedChildren[0])?.text
    .replace(/\s+/g, ' ')
    .replace(/^\(|\)$/g, '')
    .trim();
  if (text && BUILTIN_SIZES[text] !== undefined) return BUILTIN_SIZES[text];
  // sizeof is always a compile-time constant, even when we cannot tell its value.
  return text && mentionsAny(text, scope.unboundTemplateParams) ? 'dependent' : 'unknown';
}

function evalBinary(node: Node, scope: ConstScope, depth: number): EvalResult {
  const a = evalConst(node.childForFieldName('left'), scope, depth + 1);
  // A run-time operand makes the whole run-time whatever the other is (combine): not evaluated,
  // which is most of a kernel's const locals (`const float dx = coorx - atom.x;`).
  if (a === 'runtime') return a;
  const b = evalConst(node.childForFieldName('right'), scope, depth + 1);
  const bad = combine(a, b);
  if (bad) return bad;
  return applyBinary(node.childForFieldName('operator')?.text, a as number, b as number);
}

/** C's binary operators on two constants; comparisons and logic give 0 or 1. */
function applyBinary(op: string | undefined, x: number, y: number): EvalResult {
  switch (op) {
    case '+':
      return x + y;
    case '-':
      return x - y;
    case '*':
      return x * y;
    case '/':
      return y === 0 ? 'unknown' : Number.isInteger(x) && Number.isInteger(y) ? truncDiv(x, y) : x / y;
    case '%':
      return y === 0 ? 'unknown' : x % y;
    case '<<':
      return x * 2 ** y;
    case '>>':
      return Math.floor(x / 2 ** y);
    case '&':
      return x & y;
    case '|':
      return x | y;
    case '^':
      return x ^ y;
    case '<':
      return x < y ? 1 : 0;
    case '<=':
      return x <= y ? 1 : 0;
    case '>':
      return x > y ? 1 : 0;
    case '>=':
      return x >= y ? 1 : 0;
    case '==':
      return x === y ? 1 : 0;
    case '!=':
      return x !== y ? 1 : 0;
    case '&&':
      return x && y ? 1 : 0;
    case '||':
      return x || y ? 1 : 0;
  }
  return 'unknown';
}

function evalCall(node: Node, scope: ConstScope, depth: number): EvalResult {
  // min/max of constants are common in bounds (e.g. min(TILE, 32)).
  const fn = node.childForFieldName('function')?.text ?? '';
  const args = node.childForFieldName('arguments')?.namedChildren ?? [];
  if (/^(std::)?(min|max)$/.test(fn) && args.length === 2) {
    const a = evalConst(args[0], scope, depth + 1);
    if (a === 'runtime') return a;
    const b = evalConst(args[1], scope, depth + 1);
    const bad = combine(a, b);
    if (bad) return bad;
    return fn.endsWith('min') ? Math.min(a as number, b as number) : Math.max(a as number, b as number);
  }
  return scope.resolve?.(node, depth) ?? 'unknown';
}
