// Finds device functions, their loops, unroll pragmas, trip counts and manual unrolls in
// one parsed CUDA file. Works on broken code: every step tolerates missing children.
import type { Node, Tree } from './parser';
import type {
  FileAnalysis,
  Kernel,
  KernelQualifier,
  Loop,
  LoopKind,
  ManualUnroll,
  SourceSpan,
  StrayPragma,
  TripCount,
  UnrollPragma,
} from './model';
import { ConstScope, EvalResult, combine, evalConst, parseNumberLiteral } from './constEval';
import { findManualUnrolls } from './manualUnroll';
import { MacroTable } from './macros/table';
import { FileIndex, ScopeLookup, lastIdentifier } from './scopes';
import { repairLessThan } from './misparse';
import { PREPROC_BRANCHES, branchCondition, branchConditionNode, conditionalOf, lastPragmasOfBranches } from './preprocBranches';

/**
 * The macro table of the analysis in progress. Analysis is synchronous, so the entry points set it
 * for their duration (withMacros) instead of threading it through every helper.
 */
let macros: MacroTable = MacroTable.builtin;

function withMacros<T>(table: MacroTable, f: () => T): T {
  const saved = macros;
  macros = table;
  try {
    return f();
  } finally {
    macros = saved;
  }
}

function qualifierMacrosIn(head: string): string[] {
  return macros.qualifierMacrosIn(head);
}

const LOOP_TYPES: Record<string, LoopKind> = {
  for_statement: 'for',
  for_range_loop: 'for',
  while_statement: 'while',
  do_statement: 'do',
};

/** Iteration cap when simulating multiplicative/shift loops; beyond it we call the count runtime. */
const MAX_SIMULATED_TRIPS = 1 << 20;

export function spanOf(node: Node): SourceSpan {
  return {
    line: node.startPosition.row + 1,
    column: node.startPosition.column,
    endLine: node.endPosition.row + 1,
    endColumn: node.endPosition.column,
  };
}

function named(node: Node | null | undefined): Node[] {
  return node ? (node.namedChildren.filter(Boolean) as Node[]) : [];
}

function isComment(n: Node): boolean {
  return n.type === 'comment';
}

// ---------------------------------------------------------------------------------------------
// Unroll pragmas

/** Parses the text after `#pragma` (or inside `_Pragma("…")`); null when it is not an unroll pragma. */
export function parsePragmaText(text: string): Pick<UnrollPragma, 'kind' | 'factor' | 'text'> | null {
  const t = text.replace(/\/\/.*$|\/\*.*?\*\//g, '').trim();
  const m = /^unroll\b\s*(.*)$/s.exec(t);
  if (!m) return null;
  const arg = m[1].trim();
  if (arg === '') return { kind: 'full', factor: null, text: t };
  if (/^(0[xX][0-9a-fA-F]+|\d+)[uUlL]*$/.test(arg)) {
    const n = parseNumberLiteral(arg) ?? 0;
    return { kind: n === 1 ? 'disable' : 'count', factor: n, text: t };
  }
  return { kind: 'expr', factor: null, text: t };
}

/** `_Pragma("unroll 4")` parses as a call expression (often missing its semicolon). */
function operatorPragmaText(stmt: Node): string | null {
  if (stmt.type !== 'expression_statement') return null;
  const call = named(stmt)[0];
  if (!call || call.type !== 'call_expression') return null;
  if (call.childForFieldName('function')?.text !== '_Pragma') return null;
  const str = named(call.childForFieldName('arguments'))[0];
  if (!str || str.type !== 'string_literal') return null;
  return str.text.slice(1, -1).replace(/\\"/g, '"');
}

/** `_CCCL_PRAGMA_UNROLL(4)` / `CUTLASS_PRAGMA_UNROLL` (masked as a call): the macro and its expansion. */
function macroPragma(stmt: Node): UnrollPragma['macro'] | null {
  if (stmt.type !== 'expression_statement') return null;
  const call = named(stmt)[0];
  if (!call || call.type !== 'call_expression') return null;
  const fn = call.childForFieldName('function');
  if (!fn || fn.type !== 'identifier') return null;
  // The argument as written: `PRAGMA(unroll 4)` is no C++ expression (tree-sitter: an ERROR).
  const argList = call.childForFieldName('arguments');
  const raw = argList?.text.slice(1, -1).trim() ?? '';
  if (hasTopLevelComma(raw)) return null;
  const argText = raw || null;
  const m = macros.pragmaOfCall(fn.text, argText);
  if (!m) return null;
  const written = m.functionLike ? call.text : m.name;
  return {
    name: m.name,
    written,
    ...(m.library ? { library: m.library } : {}),
    expandsTo: m.expandsTo.replace('$1', argText ?? ''),
    origin: m.origin,
    ...(m.chain.length ? { chain: m.chain.map(c => c.replace(/\bN\b/, argText ?? 'N')) } : {}),
  };
}

function hasTopLevelComma(text: string): boolean {
  let depth = 0;
  for (const c of text) {
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
    else if (c === ',' && depth === 0) return true;
  }
  return false;
}

interface PendingPragma {
  node: Node;
  pragma: Pick<UnrollPragma, 'kind' | 'factor' | 'text'>;
  form: UnrollPragma['form'];
  macro?: UnrollPragma['macro'];
  /** The preprocessor branch the attachment depends on (preprocBranches.ts). */
  condition?: string;
}

function pragmaFromNode(node: Node): PendingPragma | null {
  if (node.type === 'preproc_call' && node.childForFieldName('directive')?.text === '#pragma') {
    const arg = node.childForFieldName('argument')?.text ?? '';
    const p = parsePragmaText(arg);
    return p ? { node, pragma: p, form: 'directive' } : null;
  }
  const op = operatorPragmaText(node);
  if (op !== null) {
    const p = parsePragmaText(op);
    return p ? { node, pragma: p, form: 'operator' } : null;
  }
  const macro = macroPragma(node);
  if (macro) {
    const p = parsePragmaText(macro.expandsTo);
    return p ? { node, pragma: p, form: 'macro', macro } : null;
  }
  return null;
}

/** A statement after which tree-sitter invents a MISSING `;` that is valid CUDA. */
function isPragmaStatement(stmt: Node): boolean {
  return operatorPragmaText(stmt) !== null || macroPragma(stmt) !== null;
}

// ---------------------------------------------------------------------------------------------
// One pass over the top level (through namespaces, extern "C" and #if blocks) with a tree
// cursor: materialising every top-level node as an object is what costs time in the wasm
// build, so only the kinds of node each later step needs are materialised.

const CONTAINERS = new Set([
  'preproc_if',
  'preproc_ifdef',
  'preproc_else',
  'preproc_elif',
  'preproc_elifdef',
  'namespace_definition',
  'declaration_list',
  'linkage_specification',
  'ERROR',
  'field_declaration_list',
]);

/** Class bodies hold member functions (CUB's and CUTLASS's device code is mostly members). */
const CLASS_TYPES = new Set(['struct_specifier', 'class_specifier', 'union_specifier']);

interface TopLevel {
  /** function_definition nodes whose head names __global__/__device__, with their template and text. */
  functions: {
    node: Node;
    templateDecl: Node | null;
    qualifier: KernelQualifier;
    text: string;
    headMacros?: string;
    member?: boolean;
    /** For a device lambda (which has no name): `lambda@LINE`. */
    name?: string;
  }[];
  /** Nodes that may define constants: #define, const/constexpr declarations, enums, structs. */
  constants: Node[];
  /** Everything else, with its text: where template instantiations may appear. */
  others: { node: Node; text: string }[];
}

function scanTopLevel(root: Node): TopLevel {
  const out: TopLevel = { functions: [], constants: [], others: [] };
  const cursor = root.walk();
  try {
    const visitChildren = (templateDecl: Node | null, depth: number) => {
      if (!cursor.gotoFirstChild()) return;
      do {
        if (!cursor.nodeIsNamed) continue;
        const type = cursor.nodeType;
        if (CONTAINERS.has(type) && depth < 16) {
          visitChildren(null, depth + 1);
        } else if (type === 'template_declaration' && depth < 16) {
          const node = cursor.currentNode;
          visitChildren(node, depth + 1);
        } else if (type === 'function_definition') {
          const node = cursor.currentNode;
          const text = node.text;
          const brace = text.indexOf('{');
          const head = brace === -1 ? text : text.slice(0, brace);
          // The qualifiers precede the body; reading them from text avoids walking children.
          const qualifier: KernelQualifier | null = macros.headQualifier(head);
          if (qualifier) out.functions.push({ node, templateDecl, qualifier, text });
          else {
            out.others.push({ node, text });
            deviceLambdas(node, templateDecl, text, out);
          }
          // `struct S {…} MACRO f() {…}` (a macro the grammar does not know after a class): the class is the "return type".
          if (/^\s*(struct|class|union)\b/.test(head) && depth < 16 && macros.mentionsDeviceCode(text)) visitTypeClass(depth + 1);
        } else if (type === 'preproc_def' || type === 'enum_specifier') {
          out.constants.push(cursor.currentNode);
        } else if (type === 'comment' || type === 'preproc_include' || type === 'preproc_call' || type === 'preproc_function_def') {
          // no constants, no instantiations
        } else {
          const node = cursor.currentNode;
          const text = node.text;
          if (/\b(const|constexpr|enum)\b/.test(text)) out.constants.push(node);
          out.others.push({ node, text });
          if (CLASS_TYPES.has(type) && depth < 16 && macros.mentionsDeviceCode(text)) visitClassBody(depth + 1);
        }
      } while (cursor.gotoNextSibling());
      cursor.gotoParent();
    };
    /** Member function definitions of the class under the cursor (its other members are in its node). */
    const visitClassBody = (depth: number) => {
      if (!cursor.gotoFirstChild()) return;
      do {
        if (cursor.nodeType === 'field_declaration_list') {
          visitMembers(depth);
          break;
        }
      } while (cursor.gotoNextSibling());
      cursor.gotoParent();
    };
    // In a class body, `_CCCL_DEVICE _CCCL_FORCEINLINE uint32_t get() const {…}` parses as a
    // member declaration `_CCCL_DEVICE _CCCL_FORCEINLINE` (missing its `;`) followed by the
    // function: the macros of such a declaration qualify the function after it.
    const macroOnly = (text: string): string | null => {
      // `[[CUTLASS_HOST_DE]] friend T` before `operator+(…) {…}`: masked qualifiers (macros/mask.ts) read back.
      if (text.includes('[[')) text = macros.unmask(text).replace(/\[\[|\]\]/g, ' ');
      if (/[;(){}=<>,[\]]/.test(text)) return null;
      const words = text.trim().split(/\s+/);
      // Also `void THRUST_DEVICE_FUNCTION` and `_CCCL_DEVICE bit_packed_counter` (the grammar splits before the name).
      return words.length && words.every(w => /^[A-Za-z_]\w*$/.test(w)) && qualifierMacrosIn(text).length ? text : null;
    };
    const memberFunction = (node: Node, templateDecl: Node | null, pending: string | null) => {
      const text = node.text;
      const brace = text.indexOf('{');
      const head = (pending ? pending + ' ' : '') + (brace === -1 ? text : text.slice(0, brace));
      const qualifier: KernelQualifier | null = macros.headQualifier(head);
      if (qualifier) out.functions.push({ node, templateDecl, qualifier, text, member: true, ...(pending ? { headMacros: pending } : {}) });
      else deviceLambdas(node, templateDecl, text, out);
      if (/^\s*(struct|class|union)\b/.test(head) && macros.mentionsDeviceCode(text)) visitTypeClass(1);
    };
    /** The class that a function_definition under the cursor has as its type. */
    const visitTypeClass = (depth: number) => {
      if (depth > 16 || !cursor.gotoFirstChild()) return;
      do if (CLASS_TYPES.has(cursor.nodeType)) visitClassBody(depth + 1);
      while (cursor.gotoNextSibling());
      cursor.gotoParent();
    };
    const visitMembers = (depth: number) => {
      if (!cursor.gotoFirstChild()) return;
      let pending: string | null = null;
      do {
        const type = cursor.nodeType;
        const wasPending: string | null = pending;
        pending = null;
        if (type === 'function_definition') {
          memberFunction(cursor.currentNode, null, wasPending);
        } else if (type === 'template_declaration') {
          const node = cursor.currentNode;
          if (cursor.gotoFirstChild()) {
            let inner: string | null = null;
            do {
              const t = cursor.nodeType;
              const was: string | null = inner;
              inner = null;
              if (t === 'function_definition') memberFunction(cursor.currentNode, node, was);
              else if (CLASS_TYPES.has(t) && depth < 16) visitClassBody(depth + 1);
              else if (t === 'field_declaration' || t === 'declaration') inner = macroOnly(cursor.currentNode.text);
            } while (cursor.gotoNextSibling());
            cursor.gotoParent();
          }
        } else if (CLASS_TYPES.has(type) && depth < 16) {
          visitClassBody(depth + 1);
        } else if (CONTAINERS.has(type) && depth < 16) {
          visitMembers(depth + 1);
        } else if (type === 'field_declaration') {
          const node = cursor.currentNode;
          pending = macroOnly(node.text);
          // A nested `struct Inner { … };` member.
          if (!pending && depth < 16 && cursor.gotoFirstChild()) {
            do if (CLASS_TYPES.has(cursor.nodeType)) visitClassBody(depth + 1);
            while (cursor.gotoNextSibling());
            cursor.gotoParent();
          }
        } else if (type === 'comment') {
          pending = wasPending;
        }
      } while (cursor.gotoNextSibling());
      cursor.gotoParent();
    };
    visitChildren(null, 0);
  } finally {
    cursor.delete();
  }
  return out;
}

/**
 * `[=] __device__ (int t) {…}` lambdas written in a host function (tiny-cuda-nn's
 * `parallel_for_gpu`, Thrust functors): device code with no name, reported as `lambda@LINE`.
 * A lambda inside a device lambda is part of it. Marked `member`: its text is part of its host
 * function's, which collectInstantiations reads already.
 */
function deviceLambdas(fn: Node, templateDecl: Node | null, text: string, out: TopLevel): void {
  if (!text.includes('[') || !macros.mentionsDeviceCode(text)) return;
  const found: Node[] = [];
  for (const l of fn.descendantsOfType('lambda_expression')) {
    if (!l || found.some(f => f.startIndex <= l.startIndex && l.endIndex <= f.endIndex)) continue;
    const body = l.childForFieldName('body');
    if (!body) continue;
    const lambdaText = l.text;
    const qualifier = macros.headQualifier(lambdaText.slice(0, body.startIndex - l.startIndex));
    if (!qualifier) continue;
    found.push(l);
    out.functions.push({ node: l, templateDecl, qualifier, text: lambdaText, name: `lambda@${l.startPosition.row + 1}`, member: true });
  }
}

// ---------------------------------------------------------------------------------------------
// Constants visible at namespace scope: #define N 16, constexpr/const ints, enumerators

function collectFileConstants(nodes: Node[], values: Map<string, number>): void {
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

/** Macro bodies are raw text; evaluate simple arithmetic over numbers and known names. */
export function evalMacroBody(text: string, scope: ConstScope): number | null {
  const t = text
    .replace(/\/\*.*?\*\//gs, ' ')
    .replace(/\/\/.*$/s, '')
    .trim();
  if (!/^[\w\s()+\-*/%<>&|^~.']+$/.test(t)) return null;
  const expr = t.replace(/\b([A-Za-z_]\w*)\b/g, name => {
    const v = scope.values.get(name);
    return v === undefined ? '\u0000' : String(v);
  });
  if (expr.includes('\u0000')) return null;
  const tokens = expr.match(/0[xX][0-9a-fA-F]+[uUlL]*|\d+(\.\d+)?[uUlLfF]*|<<|>>|[()+\-*/%&|^~]/g);
  if (!tokens || tokens.join('') !== expr.replace(/\s+/g, '')) return null;
  // Recursive descent over + - * / % << >> & | ^ with C precedence.
  let i = 0;
  const prec: Record<string, number> = { '|': 1, '^': 2, '&': 3, '<<': 4, '>>': 4, '+': 5, '-': 5, '*': 6, '/': 6, '%': 6 };
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
    return parseNumberLiteral(tok);
  };
  const binary = (min: number): number | null => {
    let left = primary();
    while (left !== null && i < tokens.length && prec[tokens[i]] !== undefined && prec[tokens[i]] > min) {
      const op = tokens[i++];
      const right = binary(prec[op]);
      if (right === null) return null;
      switch (op) {
        case '+':
          left += right;
          break;
        case '-':
          left -= right;
          break;
        case '*':
          left *= right;
          break;
        case '/':
          if (right === 0) return null;
          left = Math.trunc(left / right);
          break;
        case '%':
          if (right === 0) return null;
          left %= right;
          break;
        case '<<':
          left = left * 2 ** right;
          break;
        case '>>':
          left = Math.floor(left / 2 ** right);
          break;
        case '&':
          left &= right;
          break;
        case '|':
          left |= right;
          break;
        case '^':
          left ^= right;
          break;
      }
    }
    return left;
  };
  const v = binary(0);
  return v !== null && i === tokens.length ? v : null;
}

function isConstDeclaration(decl: Node): boolean {
  return named(decl).some(c => c.type === 'type_qualifier' && /^(const|constexpr)$/.test(c.text));
}

function collectConstDeclaration(decl: Node, scope: ConstScope): void {
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

// ---------------------------------------------------------------------------------------------
// Device functions

interface FunctionInfo {
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

function functionName(decl: Node | null): string | null {
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

function functionInfo(
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

function collectFunctions(candidates: TopLevel['functions']): FunctionInfo[] {
  const out: FunctionInfo[] = [];
  for (const { node, templateDecl, qualifier, text, headMacros, name } of candidates) {
    const info = functionInfo(node, templateDecl, qualifier, text, headMacros, name);
    if (info) out.push(info);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Template instantiations visible in the file: k<float, 256><<<…>>>, template void k<…>(…), &k<8>

type Instantiation = Map<string, number>;

function collectInstantiations(top: TopLevel, templates: Map<string, FunctionInfo[]>): Map<string, string[][]> {
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

function bindInstantiation(fn: FunctionInfo, argTexts: string[], fileScope: ConstScope): Instantiation {
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

function evalTextConst(text: string, scope: ConstScope): number | null {
  const t = text.trim();
  const lit = /^[-+]?(0[xX][0-9a-fA-F]+|\d+)[uUlL]*$/.test(t) ? parseNumberLiteral(t.replace(/^\+/, '')) : null;
  if (lit !== null) return lit;
  const known = scope.values.get(t);
  if (known !== undefined) return known;
  return evalMacroBody(t, scope);
}

// ---------------------------------------------------------------------------------------------
// Loops and trip counts

interface LoopShape {
  variable: string;
  start: Node | null;
  bound: Node | null;
  /** Comparison with the induction variable on the left: <, <=, >, >=, != */
  op: string;
  /** The update as a function of the variable, with its step expression node. */
  updateOp: '+' | '-' | '*' | '/' | '<<' | '>>';
  step: Node | null;
  stepValue: number | null;
}

const FLIP: Record<string, string> = { '<': '>', '<=': '>=', '>': '<', '>=': '<=', '!=': '!=' };

function forLoopShape(loop: Node): LoopShape | null {
  const init = loop.childForFieldName('initializer');
  const cond = loop.childForFieldName('condition');
  let update = loop.childForFieldName('update');
  if (!cond || !update) return null;

  // The variable the loop counts with: declared or assigned in the initializer, else the one the update writes.
  // `int task = first, cum = 0, e = 0; e < N; e++`: of several declarators, the one the update writes.
  const declarators =
    init?.type === 'declaration'
      ? named(init)
          .filter(c => c.type === 'init_declarator')
          .map(c => c.childForFieldName('declarator')?.text)
      : [];
  const declared =
    init?.type === 'declaration'
      ? (declarators.find(name => name && updateWrites(update!, name)) ?? declarators[0])
      : init?.type === 'assignment_expression'
        ? init.childForFieldName('left')?.text
        : update.type === 'update_expression'
          ? update.childForFieldName('argument')?.text
          : update.type === 'assignment_expression'
            ? update.childForFieldName('left')?.text
            : undefined;
  const isCounter = (n: Node | null) => n?.type === 'identifier' && (!declared || n.text === declared);
  // Condition: i < b  or  b > i
  let variable: string | null = null;
  let bound: Node | null = null;
  let op = '';
  if (cond.type === 'binary_expression') {
    const l = cond.childForFieldName('left');
    const r = cond.childForFieldName('right');
    const o = cond.childForFieldName('operator')?.text ?? '';
    // `k < size<2>(t) - 1` is read as `(k<size < 2>(t)) - 1`: not a comparison at the top; the
    // repair below undoes it.
    if (!(o in FLIP)) {
      /* not `i < bound` */
    } else if (isCounter(l)) {
      variable = l!.text;
      bound = r;
      op = o;
    } else if (isCounter(r)) {
      variable = r!.text;
      bound = l;
      op = FLIP[o];
    }
  }
  if (!variable) {
    // `i < Traits<8>::kCount` read as a template-id named `i` (misparse.ts).
    const repaired = declared ? repairLessThan(cond, declared) : null;
    if (repaired) {
      variable = declared!;
      bound = repaired;
      op = '<';
    } else {
      // Any other condition (`BASE + STEP <= N`): the variable is the one the update writes;
      // tripCountUnder simulates the condition.
      if (declared && /^[A-Za-z_]\w*$/.test(declared) && new RegExp(`\\b${declared}\\b`).test(cond.text)) variable = declared;
    }
  }
  if (!variable) return null;

  // `ii += 2, reg >>= 8`: the one part of a comma expression that writes the variable is the update.
  if (update.type === 'comma_expression') {
    const parts: Node[] = [];
    const flatten = (n: Node | null) => {
      if (n?.type === 'comma_expression') {
        flatten(n.childForFieldName('left'));
        flatten(n.childForFieldName('right'));
      } else if (n) parts.push(n);
    };
    flatten(update);
    const writes = parts.filter(p => bodyWritesVariable(p, variable!) || writesItself(p, variable!));
    if (writes.length !== 1) return null;
    update = writes[0];
  }
  // Update: i++ / ++i / i-- / i += s / i -= s / i *= s / i <<= s / i = i + s
  let updateOp: LoopShape['updateOp'] | null = null;
  let step: Node | null = null;
  let stepValue: number | null = null;
  if (update.type === 'update_expression') {
    if (update.childForFieldName('argument')?.text !== variable) return null;
    updateOp = update.text.includes('++') ? '+' : '-';
    stepValue = 1;
  } else if (update.type === 'assignment_expression') {
    if (update.childForFieldName('left')?.text !== variable) return null;
    const aop = update.childForFieldName('operator')?.text ?? '';
    const right = update.childForFieldName('right');
    const map: Record<string, LoopShape['updateOp']> = { '+=': '+', '-=': '-', '*=': '*', '/=': '/', '<<=': '<<', '>>=': '>>' };
    if (map[aop]) {
      updateOp = map[aop];
      step = right;
    } else if (aop === '=' && right?.type === 'binary_expression') {
      const rl = right.childForFieldName('left');
      const ro = right.childForFieldName('operator')?.text ?? '';
      if (rl?.text === variable && ['+', '-', '*', '/', '<<', '>>'].includes(ro)) {
        updateOp = ro as LoopShape['updateOp'];
        step = right.childForFieldName('right');
      }
    }
  }
  if (!updateOp) return null;

  // Start: declaration `int i = a` or assignment `i = a`; an empty initializer starts at an unknown value.
  let start: Node | null = null;
  if (init?.type === 'declaration') {
    const d = named(init).find(c => c.type === 'init_declarator' && c.childForFieldName('declarator')?.text === variable);
    start = d?.childForFieldName('value') ?? null;
  } else if (init?.type === 'assignment_expression' && init.childForFieldName('left')?.text === variable) {
    start = init.childForFieldName('right');
  }
  return { variable, start, bound, op, updateOp, step, stepValue };
}

/** Does the update expression (or one part of a comma expression) write the variable? */
function updateWrites(update: Node, variable: string): boolean {
  if (update.type === 'comma_expression')
    return [update.childForFieldName('left'), update.childForFieldName('right')].some(n => n && updateWrites(n, variable));
  return writesItself(update, variable);
}

/** Is the node itself an assignment or increment of the variable? */
function writesItself(n: Node, variable: string): boolean {
  if (n.type === 'assignment_expression') return n.childForFieldName('left')?.text === variable;
  if (n.type === 'update_expression') return n.childForFieldName('argument')?.text === variable;
  return false;
}

/** Does the loop body assign to the induction variable? Then its trip count is not static. */
function bodyWritesVariable(body: Node | null, variable: string): boolean {
  if (!body || !body.text.includes(variable)) return false;
  for (const n of body.descendantsOfType(['assignment_expression', 'update_expression'])) {
    if (!n) continue;
    const target = n.type === 'assignment_expression' ? n.childForFieldName('left') : n.childForFieldName('argument');
    if (target?.text === variable) return true;
  }
  return false;
}

function countTrips(start: number, bound: number, op: string, updateOp: LoopShape['updateOp'], step: number): number | null {
  const holds = (i: number) => {
    switch (op) {
      case '<':
        return i < bound;
      case '<=':
        return i <= bound;
      case '>':
        return i > bound;
      case '>=':
        return i >= bound;
      case '!=':
        return i !== bound;
    }
    return false;
  };
  if (!holds(start)) return 0;
  if ((updateOp === '+' || updateOp === '-') && op !== '!=') {
    const delta = updateOp === '+' ? step : -step;
    if (delta === 0) return null;
    if ((op === '<' || op === '<=') && delta < 0) return null;
    if ((op === '>' || op === '>=') && delta > 0) return null;
    const span = op === '<' ? bound - start : op === '<=' ? bound - start + 1 : op === '>' ? start - bound : start - bound + 1;
    return Math.ceil(span / Math.abs(delta));
  }
  let i = start;
  for (let n = 0; n < MAX_SIMULATED_TRIPS; n++) {
    if (!holds(i)) return n;
    switch (updateOp) {
      case '+':
        i += step;
        break;
      case '-':
        i -= step;
        break;
      case '*':
        if (Math.abs(step) <= 1) return null;
        i *= step;
        break;
      case '/':
        if (Math.abs(step) <= 1) return null;
        i = Math.trunc(i / step);
        break;
      case '<<':
        if (step <= 0) return null;
        i = i * 2 ** step;
        break;
      case '>>':
        if (step <= 0) return null;
        i = Math.floor(i / 2 ** step);
        break;
    }
  }
  return null;
}

/**
 * For an additive loop with constant bounds, the number of unit-step positions it covers
 * (`for (k = 0; k < 100; k += 4)` covers 100): lets us tell whether a manual unroll divides it.
 */
function constantExtent(loop: Node, scope: ConstScope): number | null {
  if (loop.type !== 'for_statement') return null;
  const shape = forLoopShape(loop);
  if (!shape || shape.updateOp !== '+' || !shape.start || !shape.bound) return null;
  const a = evalConst(shape.start, scope);
  const b = evalConst(shape.bound, scope);
  if (typeof a !== 'number' || typeof b !== 'number') return null;
  if (shape.op === '<') return b - a;
  if (shape.op === '<=') return b - a + 1;
  return null;
}

/**
 * `int k = 0; for (; k + B <= N; k += B)`: the value the variable starts with when the loop has
 * no initializer, from the statement just before it (a declaration or an assignment).
 */
function startBefore(loop: Node, variable: string): Node | null {
  let prev = loop.previousNamedSibling;
  while (
    prev &&
    (isComment(prev) ||
      prev.type === 'preproc_call' ||
      pragmaFromNode(prev) ||
      (prev.type === 'expression_statement' && prev.text.trim() === ''))
  ) {
    prev = prev.previousNamedSibling;
  }
  if (prev?.type === 'declaration') {
    const d = named(prev).find(c => c.type === 'init_declarator' && c.childForFieldName('declarator')?.text === variable);
    return d?.childForFieldName('value') ?? null;
  }
  const e = prev?.type === 'expression_statement' ? named(prev)[0] : null;
  if (
    e?.type === 'assignment_expression' &&
    e.childForFieldName('operator')?.text === '=' &&
    e.childForFieldName('left')?.text === variable
  ) {
    return e.childForFieldName('right');
  }
  return null;
}

/** A condition that is not `i < bound`: evaluated for each value of the variable in turn. */
function simulateTrips(loop: Node, shape: LoopShape, start: Node, scope: ConstScope): TripCount {
  const cond = loop.childForFieldName('condition');
  const a = evalConst(start, scope);
  const s = shape.stepValue ?? evalConst(shape.step, scope);
  const values = new Map(scope.values);
  const probe: ConstScope = { ...scope, values };
  const category = (v: EvalResult): TripCount => (v === 'runtime' ? 'runtime' : 'dependent');
  if (typeof a !== 'number') return category(combine(a, s) ?? a);
  values.set(shape.variable, a);
  const first = evalConst(cond, probe);
  if (typeof s !== 'number' || typeof first !== 'number') return category(combine(first, s) ?? first);
  let i = a;
  for (let n = 0; n < 1 << 16; n++) {
    values.set(shape.variable, i);
    const c = evalConst(cond, probe);
    if (typeof c !== 'number') return category(c);
    if (!c) return n;
    const next = stepOnce(i, shape.updateOp, s);
    if (next === null || next === i) return 'runtime';
    i = next;
  }
  return 'runtime';
}

function stepOnce(i: number, op: LoopShape['updateOp'], s: number): number | null {
  switch (op) {
    case '+':
      return i + s;
    case '-':
      return i - s;
    case '*':
      return i * s;
    case '/':
      return s ? Math.trunc(i / s) : null;
    case '<<':
      return i * 2 ** s;
    case '>>':
      return Math.floor(i / 2 ** s);
  }
  return null;
}

/**
 * The trip count under a scope. A bound that may be a compile-time constant we cannot evaluate
 * (a header's constant, a CuTe shape, wmma `num_elements`) counts as "dependent", never
 * "runtime": only provably run-time values make a trip count "runtime".
 */
function tripCountUnder(loop: Node, kind: LoopKind, scope: ConstScope): TripCount {
  const notRuntime = (v: EvalResult) => v === 'dependent' || v === 'unknown';
  if (kind === 'do' || kind === 'while') {
    const cond = kind === 'do' ? loop.childForFieldName('condition') : loop.childForFieldName('condition');
    const c = evalConst(cond, scope);
    if (c === 0) return kind === 'do' ? 1 : 0;
    return notRuntime(c) ? 'dependent' : 'runtime';
  }
  if (loop.type === 'for_range_loop') return 'runtime';
  const shape = forLoopShape(loop);
  const start = shape ? (shape.start ?? startBefore(loop, shape.variable)) : null;
  if (!shape || !start) {
    return shape?.bound && notRuntime(evalConst(shape.bound, scope)) ? 'dependent' : 'runtime';
  }
  if (bodyWritesVariable(loop.childForFieldName('body'), shape.variable)) return 'runtime';
  if (!shape.bound) return simulateTrips(loop, shape, start, scope);
  const a = evalConst(start, scope);
  const b = evalConst(shape.bound, scope);
  const s = shape.stepValue ?? evalConst(shape.step, scope);
  if (a === 'runtime' && b !== 'runtime' && s !== 'runtime' && upperBoundUnrollable(loop, shape, b, s)) return 'dependent';
  if (s !== 'runtime' && boundedByConstant(shape, start, a, b, s, scope)) return 'dependent';
  for (const v of [a, b, s]) if (v === 'runtime') return 'runtime';
  for (const v of [a, b, s]) if (notRuntime(v)) return 'dependent';
  const n = countTrips(a as number, b as number, shape.op, shape.updateOp, s as number);
  return n === null ? 'runtime' : n;
}

/**
 * `for (unsigned i = tid; i < 256; i += 32)`: an unsigned counter that counts up to a
 * compile-time bound cannot take more than bound/step trips whatever it starts at, and nvcc
 * fully unrolls such a loop to that many guarded copies (checked with nvcc 13.0, sm_90: 8, 16
 * and 33 copies; a 64-trip bound stayed a loop). A signed counter (`int i = threadIdx.x`) may
 * start below zero and is not unrolled. Whether nvcc unrolls it is not decidable here where the
 * bound or step is unknown or the bound is below 64 trips: not a run-time trip count to warn of.
 */
function upperBoundUnrollable(loop: Node, shape: LoopShape, bound: EvalResult, step: EvalResult): boolean {
  const init = loop.childForFieldName('initializer');
  const type = init?.type === 'declaration' ? init.childForFieldName('type')?.text.replace(/\s+/g, ' ') : undefined;
  if (!type || !/^(unsigned( (int|long|long long|short|char))?|uint(8|16|32|64)?_t|size_t|uint|unsigned long long int)$/.test(type))
    return false;
  if ((shape.op !== '<' && shape.op !== '<=') || shape.updateOp !== '+') return false;
  if (typeof bound !== 'number' || typeof step !== 'number') return true;
  return step > 0 && Math.ceil((bound + (shape.op === '<=' ? 1 : 0)) / step) < 64;
}

/**
 * `for (k = 0; k < c; ++k)` or `for (k = c; k > 0; --k)` with `int c = min(K_PIPE, k_tile_count)`:
 * the trip count is a run-time value but no more than a compile-time constant, and nvcc fully
 * unrolls such a loop to that many guarded copies (checked with nvcc 13.0, sm_90, counting up
 * to `min(4, n)` and down from `min(4, n) - 1`). Not a run-time trip count to warn of, unless
 * the constant is known and too large (64 trips stayed a loop in upperBoundUnrollable's check).
 */
function boundedByConstant(shape: LoopShape, start: Node, a: EvalResult, b: EvalResult, s: EvalResult, scope: ConstScope): boolean {
  const small = (limit: number | 'bounded', from: EvalResult, step: EvalResult) =>
    limit === 'bounded' || typeof from !== 'number' || typeof step !== 'number' || step <= 0 || Math.abs(limit - from) / step < 64;
  if ((shape.op === '<' || shape.op === '<=' || shape.op === '!=') && shape.updateOp === '+' && a !== 'runtime' && b === 'runtime') {
    const limit = upperBound(shape.bound!, scope, 0);
    return limit !== null && small(limit, a, s);
  }
  if ((shape.op === '>' || shape.op === '>=') && shape.updateOp === '-' && a === 'runtime' && b !== 'runtime') {
    const limit = upperBound(start, scope, 0);
    return limit !== null && small(limit, b, s);
  }
  return false;
}

/** A compile-time upper bound of a run-time value (`min(8, n)`, `min(K, n) - 1`): the number, 'bounded' when not evaluated, else null. */
function upperBound(n: Node, scope: ConstScope, depth: number): number | 'bounded' | null {
  if (depth > 8) return null;
  switch (n.type) {
    case 'parenthesized_expression': {
      const inner = named(n).filter(c => !isComment(c));
      return inner.length === 1 ? upperBound(inner[0], scope, depth + 1) : null;
    }
    case 'cast_expression': {
      const v = n.childForFieldName('value');
      return v ? upperBound(v, scope, depth + 1) : null;
    }
    case 'identifier': {
      const init = scope.initializer?.(n);
      return init ? upperBound(init, scope, depth + 1) : null;
    }
    case 'binary_expression': {
      const op = n.childForFieldName('operator')?.text ?? '';
      const left = n.childForFieldName('left');
      const right = evalConst(n.childForFieldName('right'), scope);
      if (!left || right === 'runtime' || !['+', '-', '/', '>>'].includes(op)) return null;
      const l = upperBound(left, scope, depth + 1);
      if (l === null) return null;
      if (l === 'bounded' || typeof right !== 'number') return 'bounded';
      return op === '+'
        ? l + right
        : op === '-'
          ? l - right
          : op === '/'
            ? right > 0
              ? Math.trunc(l / right)
              : null
            : Math.floor(l / 2 ** right);
    }
    case 'call_expression': {
      const f = n.childForFieldName('function');
      const name = (f?.type === 'template_function' ? f.childForFieldName('name')?.text : f?.text)?.split('::').pop();
      const args = named(n.childForFieldName('arguments')).filter(c => !isComment(c));
      if (f?.type === 'primitive_type' && args.length === 1) return upperBound(args[0], scope, depth + 1);
      if (name !== 'min' || args.length < 2) return null;
      let best: number | 'bounded' | null = null;
      for (const arg of args) {
        const v = evalConst(arg, scope);
        const u = typeof v === 'number' ? v : v !== 'runtime' ? 'bounded' : upperBound(arg, scope, depth + 1);
        if (u === null) continue;
        best = best === null || best === 'bounded' ? u : u === 'bounded' ? best : Math.min(best, u);
      }
      return best;
    }
  }
  return null;
}

/** The distinct identifiers of a loop's header (initializer, condition, update), in order. */
function namesInLoopHeader(loop: Node): string[] {
  const text = ['initializer', 'condition', 'update'].map(f => loop.childForFieldName(f)?.text ?? '').join(' ');
  return [...new Set(text.match(/\b[A-Za-z_]\w*\b/g) ?? [])];
}

// ---------------------------------------------------------------------------------------------
// Walking a function body. Node access in the wasm build is costly, so loops, pragmas and
// declarations are found with one descendantsOfType query each and related through parents.

const LOOP_TYPE_LIST = Object.keys(LOOP_TYPES);

interface RawLoop {
  node: Node;
  kind: LoopKind;
  parent: RawLoop | null;
  pragma: PendingPragma | null;
  /** Pragmas of other branches of the conditional before the loop (see pragmaBefore). */
  alternatives: PendingPragma[];
  /** An unknown macro statement right before the loop (see unknownMacroBefore). */
  unknownMacro: string | null;
  startIndex: number;
}

function countStatements(node: Node | null): number {
  if (!node) return 0;
  if (node.type !== 'compound_statement') return 1;
  let n = 0;
  for (const c of named(node)) {
    if (isComment(c) || c.type === 'preproc_call') continue;
    if (c.type === 'compound_statement') n += countStatements(c);
    else if (c.type === 'if_statement') {
      n += 1 + countStatements(c.childForFieldName('consequence'));
      const alt = c.childForFieldName('alternative');
      if (alt) n += countStatements(named(alt)[0] ?? null);
    } else n += 1;
  }
  return n;
}

/** Statements that may stand between a pragma and its loop without detaching it. */
function isTransparent(n: Node, pendingOperator: boolean): boolean {
  if (isComment(n)) return true;
  if (n.type === 'preproc_call' && !pragmaFromNode(n)) return true;
  // tree-sitter invents an empty statement (`MISSING ;`) after `_Pragma("…")`.
  return pendingOperator && n.type === 'expression_statement' && n.text.trim() === '';
}

/**
 * The unroll pragma in front of a loop, looking back over comments and other pragmas, and across
 * preprocessor conditionals: a pragma as the last item of a branch of an `#if … #endif` right
 * before the loop (each such branch gives one; the first is the loop's pragma, the others its
 * alternatives), and, for a loop that is the first item of a branch, a pragma before the
 * conditional. Each attachment that depends on a branch names it (condition).
 */
function pragmaBefore(loop: Node): { pragma: PendingPragma; alternatives: PendingPragma[] } | null {
  let node = loop;
  let condition: string | undefined;
  for (let hops = 0; hops < 8; hops++) {
    const stop = branchConditionNode(node.parent);
    let prev = node.previousNamedSibling;
    let sawEmpty = false;
    while (prev && prev.id !== stop?.id) {
      const p = pragmaFromNode(prev);
      if (p) return !sawEmpty || p.form === 'operator' ? { pragma: condition ? { ...p, condition } : p, alternatives: [] } : null;
      if (prev.type === 'expression_statement' && prev.text.trim() === '') sawEmpty = true;
      else if (prev.type === 'preproc_if' || prev.type === 'preproc_ifdef') {
        const found = lastPragmasOfBranches(prev, pragmaFromNode);
        return found.length ? { pragma: found[0], alternatives: found.slice(1) } : null;
      } else if (!isTransparent(prev, true)) return null;
      prev = prev.previousNamedSibling;
    }
    const branch = node.parent;
    if (!branch || !PREPROC_BRANCHES.has(branch.type)) return null;
    condition ??= branchCondition(branch);
    node = conditionalOf(branch);
  }
  return null;
}

/** A call statement right before the loop that masking made of an unknown macro (mask.ts): its name. */
function unknownMacroBefore(loop: Node): string | null {
  let prev = loop.previousNamedSibling;
  while (prev && isComment(prev)) prev = prev.previousNamedSibling;
  if (!prev || prev.type !== 'expression_statement') return null;
  const call = named(prev)[0];
  if (!call || call.type !== 'call_expression' || named(call.childForFieldName('arguments')).length) return null;
  const fn = call.childForFieldName('function');
  return fn?.type === 'identifier' ? macros.unknownOfCall(fn.text) : null;
}

/**
 * `for (…)\n#pragma unroll\nfor (…)` without braces: tree-sitter ends the outer loop with an
 * empty statement and puts pragma and inner loop after it. Returns that outer loop.
 */
function detachedParent(loop: Node): Node | null {
  let prev = loop.previousNamedSibling;
  while (prev && isComment(prev)) prev = prev.previousNamedSibling;
  if (!prev || !pragmaFromNode(prev)) return null;
  prev = prev.previousNamedSibling;
  while (prev && isComment(prev)) prev = prev.previousNamedSibling;
  if (!prev || !LOOP_TYPES[prev.type]) return null;
  const body = prev.childForFieldName('body');
  return body && body.type === 'expression_statement' && body.text.trim() === '' ? prev : null;
}

/** bodyNodesByType's key for the loops of every kind (together, in document order). */
const LOOPS = 'loops';
const PRAGMA_TEXT = /_Pragma|UNROLL|_CCCL_PRAGMA|CUTLASS_PRAGMA|CUTE_(NO_)?UNRO/;

/**
 * The body's nodes that collectLoops, collectPragmas and collectLocalConsts look at, by type, in
 * document order: one walk of the body instead of one per kind (walks dominate on large bodies).
 */
function bodyNodesByType(body: Node): Map<string, Node[]> {
  const types = [...LOOP_TYPE_LIST, 'preproc_call', 'declaration'];
  if (PRAGMA_TEXT.test(body.text)) types.push('expression_statement');
  const out = new Map<string, Node[]>([...types, LOOPS].map(t => [t, []]));
  for (const n of body.descendantsOfType(types)) {
    if (!n) continue;
    out.get(LOOP_TYPES[n.type] ? LOOPS : n.type)?.push(n);
  }
  return out;
}

function collectLoops(body: Node, byType: Map<string, Node[]>): RawLoop[] {
  const nodes = byType.get(LOOPS) ?? [];
  const byId = new Map<number, RawLoop>();
  const loops = nodes.map(node => {
    const found = pragmaBefore(node);
    const raw: RawLoop = {
      node,
      kind: LOOP_TYPES[node.type],
      parent: null,
      pragma: found?.pragma ?? null,
      alternatives: found?.alternatives ?? [],
      unknownMacro: found ? null : unknownMacroBefore(node),
      startIndex: node.startIndex,
    };
    byId.set(node.id, raw);
    return raw;
  });
  for (const raw of loops) {
    for (let p = raw.node.parent; p && p.id !== body.id; p = p.parent) {
      const outer = byId.get(p.id);
      if (outer) {
        raw.parent = outer;
        break;
      }
    }
    if (!raw.parent) {
      const adopter = detachedParent(raw.node);
      if (adopter) raw.parent = byId.get(adopter.id) ?? null;
    }
  }
  return loops;
}

function depthOf(l: RawLoop): number {
  let d = 0;
  for (let p = l.parent; p; p = p.parent) d++;
  return d;
}

/** Unroll pragmas anywhere in the body, by node id (directives and `_Pragma` operators). */
function collectPragmas(byType: Map<string, Node[]>): PendingPragma[] {
  const out: PendingPragma[] = [];
  for (const n of byType.get('preproc_call') ?? []) {
    const p = n && pragmaFromNode(n);
    if (p) out.push(p);
  }
  // Present only where the body's text mentions a pragma spelling (bodyNodesByType).
  {
    for (const n of byType.get('expression_statement') ?? []) {
      const p = n && pragmaFromNode(n);
      if (p) out.push(p);
    }
  }
  return out;
}

/** const/constexpr integers declared in the body, in source order, with their position. */
function collectLocalConsts(body: Node, byType: Map<string, Node[]>, baseScope: ConstScope): { at: number; name: string; value: number }[] {
  const out: { at: number; name: string; value: number }[] = [];
  if (!/\bconst(expr)?\b/.test(body.text)) return out;
  const values = new Map(baseScope.values);
  for (const decl of byType.get('declaration') ?? []) {
    if (!decl || !isConstDeclaration(decl)) continue;
    const scope: ConstScope = { ...baseScope, values };
    const before = new Map(values);
    collectConstDeclaration(decl, scope);
    for (const [name, value] of values) if (before.get(name) !== value) out.push({ at: decl.startIndex, name, value });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

function buildPragma(p: PendingPragma, scope: ConstScope, instantiations: Instantiation[]): UnrollPragma {
  let factor = p.pragma.factor;
  if (p.pragma.kind === 'expr') {
    const exprText = p.pragma.text.replace(/^unroll\s*/, '');
    const results = (instantiations.length ? instantiations : [new Map<string, number>()]).map(inst => {
      const s: ConstScope = { values: new Map([...scope.values, ...inst]), unboundTemplateParams: new Set() };
      return evalTextConst(exprText.replace(/^\((.*)\)$/s, '$1'), s);
    });
    const distinct = new Set(results);
    if (distinct.size === 1 && results[0] !== null) factor = results[0];
  }
  return {
    kind: p.pragma.kind,
    factor,
    text: p.pragma.text,
    line: p.node.startPosition.row + 1,
    span: spanOf(p.node),
    form: p.form,
    ...(p.macro ? { macro: p.macro } : {}),
    ...(p.condition ? { condition: p.condition } : {}),
  };
}

function qualifierMacrosOf(text: string, headMacros: string | undefined): Pick<Kernel, 'qualifierMacros' | 'qualifierMacroUses'> {
  const brace = text.indexOf('{');
  const names = qualifierMacrosIn((headMacros ? headMacros + ' ' : '') + (brace === -1 ? text : text.slice(0, brace)));
  if (!names.length) return {};
  const uses = names.map(n => macros.qualifier(n)!).map(q => ({ name: q.name, expandsTo: q.expandsTo, origin: q.origin }));
  return { qualifierMacros: names, qualifierMacroUses: uses };
}

interface FunctionResult {
  kernel: Kernel;
  stray: StrayPragma[];
}

function analyzeFunction(
  fn: FunctionInfo,
  fileScope: ConstScope,
  instantiationArgs: string[][] | undefined,
  lookup: ScopeLookup,
): FunctionResult {
  const body = fn.node.childForFieldName('body');
  const templateNames = new Set(fn.templateParams.map(p => p.name));
  // Names resolve by C++ scope rules: locals, then the enclosing classes (members, template
  // parameters, bases), then namespace constants (scopes.ts).
  const classes = lookup.classesOf(fn.node);
  const ctx = lookup.functionContext(fn.node, fileScope.values, templateNames, classes);
  for (const n of templateNames) ctx.values.delete(n);
  const baseScope: ConstScope = lookup.scope(ctx);

  const instantiations: Instantiation[] = (instantiationArgs ?? []).map(a => bindInstantiation(fn, a, fileScope));
  if (!instantiations.length && fn.templateParams.length && fn.templateParams.every(p => p.defaultValue)) {
    instantiations.push(bindInstantiation(fn, [], fileScope));
  }
  // A member of a class template: each instantiation of the class seen in the file binds its parameters.
  const classParams = classes.flatMap(c => c.info.templateParams).filter(p => !templateNames.has(p));
  if (classParams.length) {
    const classInsts = lookup.classInstantiations(classes);
    if (classInsts.length) {
      const own = instantiations.length ? instantiations.splice(0) : [new Map<string, number>()];
      for (const c of classInsts) for (const o of own) if (instantiations.length < 64) instantiations.push(new Map([...c, ...o]));
    }
  }
  const instScope = (scope: ConstScope, inst: Instantiation): ConstScope => {
    const unbound = new Set([...scope.unboundTemplateParams].filter(n => !inst.has(n)));
    const instCtx = { ...ctx, values: new Map([...scope.values, ...inst]), unbound };
    return lookup.scope(instCtx);
  };

  const byType = body ? bodyNodesByType(body) : new Map<string, Node[]>();
  const rawLoops = body ? collectLoops(body, byType) : [];
  const locals = body ? collectLocalConsts(body, byType, baseScope) : [];
  const scopeAt = (index: number): ConstScope => {
    const values = new Map(baseScope.values);
    for (const c of locals) if (c.at < index) values.set(c.name, c.value);
    return lookup.scope({ ...ctx, values });
  };

  // In each copy of a fully unrolled loop with a compile-time trip count, its induction variable
  // is a compile-time constant: inner bounds that use it (`j < i`, `j = 1 & i`) are not run-time.
  const trips = new Map<number, TripCount>();
  const unrolledVariables = (raw: RawLoop): string[] => {
    const out: string[] = [];
    for (let p = raw.parent; p; p = p.parent) {
      const t = trips.get(p.node.id);
      if (p.pragma?.pragma.kind !== 'full' || t === undefined || t === 'runtime' || p.node.type !== 'for_statement') continue;
      const v = forLoopShape(p.node)?.variable;
      if (v) out.push(v);
    }
    return out;
  };
  const loops: Loop[] = rawLoops.map(raw => {
    let scope = locals.length ? scopeAt(raw.startIndex) : baseScope;
    const outer = unrolledVariables(raw);
    if (outer.length) scope = { ...scope, unboundTemplateParams: new Set([...scope.unboundTemplateParams, ...outer]) };
    let trip = tripCountUnder(raw.node, raw.kind, scope);
    let byInstantiation: Loop['tripCountByInstantiation'];
    if (trip === 'dependent' && instantiations.length) {
      const perInst = instantiations.map(inst => tripCountUnder(raw.node, raw.kind, instScope(scope, inst)));
      trip = new Set(perInst).size === 1 ? perInst[0] : 'dependent';
      // Shown one by one where at least one instantiation gives an answer.
      if (trip === 'dependent' && perInst.some(t => t !== 'dependent'))
        byInstantiation = instantiations.map((inst, i) => ({ instantiation: Object.fromEntries(inst), tripCount: perInst[i] }));
    }
    trips.set(raw.node.id, trip);
    const dependsOn = trip === 'dependent' ? namesInLoopHeader(raw.node).filter(n => scope.unboundTemplateParams.has(n)) : [];
    const shape = raw.node.type === 'for_statement' ? forLoopShape(raw.node) : null;
    return {
      line: raw.node.startPosition.row + 1,
      kind: raw.kind,
      depth: depthOf(raw),
      pragma: raw.pragma ? buildPragma(raw.pragma, scope, instantiations) : null,
      ...(raw.alternatives.length ? { alternativePragmas: raw.alternatives.map(p => buildPragma(p, scope, instantiations)) } : {}),
      ...(raw.unknownMacro ? { unknownMacro: raw.unknownMacro } : {}),
      tripCount: trip,
      ...(trip === 'dependent' ? { tripDependsOn: dependsOn } : {}),
      ...(byInstantiation ? { tripCountByInstantiation: byInstantiation } : {}),
      span: spanOf(raw.node),
      inductionVariable: shape?.variable ?? null,
      conditionText: (raw.node.childForFieldName('condition')?.text ?? '').replace(/^\((.*)\)$/s, '$1').replace(/\s+/g, ' '),
      parentLine: raw.parent ? raw.parent.node.startPosition.row + 1 : null,
      bodyStatements: countStatements(raw.node.childForFieldName('body')),
      constantExtent: constantExtent(raw.node, scope),
    };
  });
  loops.sort((a, b) => a.line - b.line || a.span.column - b.span.column);

  let manualUnrolls: ManualUnroll[] = [];
  if (body) {
    try {
      manualUnrolls = findManualUnrolls(body, (n: Node) => {
        const v = evalConst(n, locals.length ? scopeAt(n.startIndex) : baseScope);
        return typeof v === 'number' ? v : null;
      });
    } catch {
      manualUnrolls = []; // detectors are best effort; never break the whole analysis
    }
  }

  const attached = new Set(rawLoops.flatMap(l => (l.pragma ? [l.pragma, ...l.alternatives] : [])).map(p => p.node.id));
  const stray: StrayPragma[] = (body ? collectPragmas(byType) : [])
    .filter(p => !attached.has(p.node.id))
    .map(p => ({ pragma: buildPragma(p, baseScope, instantiations), reason: 'not followed by a loop: nvcc ignores it' }));

  return {
    kernel: {
      name: fn.name,
      qualifier: fn.qualifier,
      line: fn.node.startPosition.row + 1,
      span: spanOf(fn.node),
      templateParameters: fn.templateParams.map(p => p.name),
      ...qualifierMacrosOf(fn.text, fn.headMacros),
      launchBounds: fn.launchBounds,
      instantiations: instantiations.map(inst => Object.fromEntries(inst)),
      loops,
      manualUnrolls,
    },
    stray,
  };
}

// ---------------------------------------------------------------------------------------------
// Re-using a function's analysis when only its position changed

function shiftSpan(s: SourceSpan, d: number): SourceSpan {
  return { ...s, line: s.line + d, endLine: s.endLine + d };
}

function shiftResult(r: FunctionResult, d: number): FunctionResult {
  if (d === 0) return r;
  const shiftPragma = (p: UnrollPragma): UnrollPragma => ({ ...p, line: p.line + d, span: shiftSpan(p.span, d) });
  return {
    kernel: {
      ...r.kernel,
      // A lambda is named by its line (deviceLambdas).
      name: /^lambda@\d+$/.test(r.kernel.name) ? `lambda@${r.kernel.line + d}` : r.kernel.name,
      line: r.kernel.line + d,
      span: shiftSpan(r.kernel.span, d),
      loops: r.kernel.loops.map(l => ({
        ...l,
        line: l.line + d,
        span: shiftSpan(l.span, d),
        parentLine: l.parentLine === null ? null : l.parentLine + d,
        pragma: l.pragma ? shiftPragma(l.pragma) : null,
        ...(l.alternativePragmas ? { alternativePragmas: l.alternativePragmas.map(shiftPragma) } : {}),
      })),
      manualUnrolls: r.kernel.manualUnrolls.map(m => ({
        ...m,
        line: m.line + d,
        endLine: m.endLine + d,
        // A coarsening note names the index's line (manualUnroll/coarsening.ts): it moves too.
        detail: m.pattern === 'coarsening' ? m.detail.replace(/\(line (\d+)\)/, (_, n: string) => `(line ${Number(n) + d})`) : m.detail,
      })),
    },
    stray: r.stray.map(s => ({ ...s, pragma: shiftPragma(s.pragma) })),
  };
}

/**
 * Results of the previous analysis of one document, keyed by everything a function's result
 * depends on: its text, its start column, the file's constants and its instantiations.
 */
export class FunctionCache {
  private entries = new Map<string, FunctionResult>();
  private next = new Map<string, FunctionResult>();
  hits = 0;
  misses = 0;

  get(key: string, line: number): FunctionResult | undefined {
    const r = this.entries.get(key);
    if (!r) return undefined;
    this.next.set(key, r);
    return shiftResult(r, line - r.kernel.line);
  }

  set(key: string, r: FunctionResult): void {
    this.next.set(key, r);
  }

  /** Keep only what the latest analysis used, so the cache never outgrows the document. */
  commit(): void {
    this.entries = this.next;
    this.next = new Map();
  }
}

/** A digest of the file's class definitions (cache key: a member's value may change any trip count). */
function classesDigest(top: TopLevel): string {
  let h = 0x811c9dc5;
  for (const { text } of top.others) {
    if (!/\b(struct|class|union)\b/.test(text)) continue;
    for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  }
  return (h >>> 0).toString(16);
}

function hasRealSyntaxErrors(root: Node): boolean {
  if (!root.hasError) return false;
  // `_Pragma("…") for (…)` makes tree-sitter insert a MISSING ";" — that is valid CUDA.
  const stack: Node[] = [root];
  while (stack.length) {
    const n = stack.pop()!;
    if (!n.hasError && !n.isMissing) continue;
    if (n.type === 'ERROR') {
      // `[=] __device__ (int t) {…}`: the grammar has no place for an extended lambda's qualifiers.
      if (n.parent?.type === 'lambda_expression' && /^(__host__|__device__|\s)+$/.test(n.text)) continue;
      // `_CCCL_DEVICE _CCCL_FORCEINLINE void f()`: the head's unknown macros are not errors.
      if (n.parent?.type === 'function_definition' && n.endIndex <= (n.parent.childForFieldName('body')?.startIndex ?? 0)) {
        const body = n.parent.childForFieldName('body');
        const head = n.parent.text.slice(0, (body?.startIndex ?? n.parent.endIndex) - n.parent.startIndex);
        if (qualifierMacrosIn(head).length) continue;
      }
      return true;
    }
    if (n.isMissing) {
      const stmt = n.parent;
      if (!(stmt && isPragmaStatement(stmt))) {
        // `_CCCL_DEVICE _CCCL_FORCEINLINE` split off a member function's head (see scanTopLevel).
        const words = stmt?.text.trim().split(/\s+/) ?? [];
        if (
          stmt &&
          /^(field_)?declaration$/.test(stmt.type) &&
          words.every(w => /^[A-Za-z_]\w*$/.test(w)) &&
          qualifierMacrosIn(stmt.text).length
        )
          continue;
        return true;
      }
      continue;
    }
    for (const c of n.children) if (c) stack.push(c);
  }
  return false;
}

/**
 * What an analysis was computed from, so that an edit inside one function body can re-analyse
 * that function alone (see reanalyzeBodyEdit).
 */
export interface AnalysisSnapshot {
  analysis: FileAnalysis;
  functions: { start: number; end: number; bodyStart: number; bodyEnd: number; name: string; result: FunctionResult }[];
  fileScope: ConstScope;
  instantiations: Map<string, string[][]>;
  /** Matches text that names one of the file's templates with `<` (a possible instantiation) or calls a __device__ function. */
  templateMention: RegExp | null;
  /** The macro table it was computed with; a re-analysis uses the same one. */
  macros: MacroTable;
}

export function analyzeTree(tree: Tree, path: string, cache?: FunctionCache, table: MacroTable = MacroTable.builtin): FileAnalysis {
  return analyzeTreeWithSnapshot(tree, path, cache, table).analysis;
}

/**
 * Analyses a whole file. `table`: the macros the file sees (macros/table.ts); the parse must have
 * read `table.maskForParse(text)`.
 */
export function analyzeTreeWithSnapshot(
  tree: Tree,
  path: string,
  cache?: FunctionCache,
  table: MacroTable = MacroTable.builtin,
): AnalysisSnapshot {
  return withMacros(table, () => analyzeWholeTree(tree, path, cache));
}

function analyzeWholeTree(tree: Tree, path: string, cache?: FunctionCache): AnalysisSnapshot {
  const root = tree.rootNode;
  const top = scanTopLevel(root);
  const fileScope: ConstScope = { values: new Map(), unboundTemplateParams: new Set() };
  try {
    collectFileConstants(top.constants, fileScope.values);
  } catch {
    /* constants are an aid, not a requirement */
  }
  const functions = collectFunctions(top.functions);
  const templates = new Map<string, FunctionInfo[]>();
  for (const f of functions)
    if (f.templateParams.length) {
      if (!templates.has(f.name)) templates.set(f.name, []);
      templates.get(f.name)!.push(f);
    }
  const inst = templates.size ? collectInstantiations(top, templates) : new Map<string, string[][]>();
  const lookup = new ScopeLookup(new FileIndex(root, fileScope.values));
  for (const f of functions) if (f.qualifier === 'global') lookup.kernelStarts.add(f.node.startIndex);
  // A function's trip counts depend on the classes of the file too (members, specialisations).
  const constantsKey = cache ? JSON.stringify([...fileScope.values]) + classesDigest(top) : '';
  const kernels: Kernel[] = [];
  const strayPragmas: StrayPragma[] = [];
  const snapshotFunctions: AnalysisSnapshot['functions'] = [];
  for (const fn of functions) {
    try {
      const args = fn.templateParams.length ? inst.get(fn.name) : undefined;
      let r: FunctionResult | undefined;
      let key = '';
      if (cache) {
        // …and on the arguments its callers pass (a parameter bound: ScopeLookup.parameterValue).
        const calls =
          fn.qualifier === 'global'
            ? ''
            : lookup.index
                .callsNamed(fn.name)
                .map(c => c.text)
                .join('\u0001');
        key = `${fn.node.startPosition.column}\u0000${calls}\u0000${constantsKey}\u0000${JSON.stringify(args ?? null)}\u0000${fn.headMacros ?? ''}\u0000${fn.templateParams.map(p => `${p.name}=${p.defaultValue?.text ?? ''}`).join(',')}\u0000${fn.text}`;
        r = cache.get(key, fn.node.startPosition.row + 1);
        if (r) cache.hits++;
      }
      if (!r) {
        r = analyzeFunction(fn, fileScope, args, lookup);
        if (cache) {
          cache.misses++;
          cache.set(key, r);
        }
      }
      kernels.push(r.kernel);
      strayPragmas.push(...r.stray);
      const body = fn.node.childForFieldName('body');
      snapshotFunctions.push({
        start: fn.node.startIndex,
        end: fn.node.endIndex,
        bodyStart: body?.startIndex ?? fn.node.endIndex,
        bodyEnd: body?.endIndex ?? fn.node.endIndex,
        name: fn.name,
        result: r,
      });
    } catch {
      // A function the walker cannot handle is skipped, never fatal.
    }
  }
  cache?.commit();
  const escape = (n: string) => n.replace(/[$^*+?.()|[\]{}\\]/g, '\\$&');
  const names = [...templates.keys()].map(escape);
  // A call of a __device__ function passes values its parameter bounds may take (ScopeLookup.parameterValue).
  const callees = [...new Set(functions.filter(f => f.qualifier !== 'global' && /^[A-Za-z_$]\w*$/.test(f.name)).map(f => escape(f.name)))];
  return {
    analysis: { path, kernels, strayPragmas, hasSyntaxErrors: hasRealSyntaxErrors(root) },
    functions: snapshotFunctions,
    fileScope,
    instantiations: inst,
    templateMention:
      names.length || callees.length
        ? new RegExp(
            [names.length ? `\\b(${names.join('|')})\\s*<` : '', callees.length ? `\\b(${callees.join('|')})\\s*[<(]` : '']
              .filter(Boolean)
              .join('|'),
          )
        : null,
    macros,
  };
}

/**
 * Fast path for typing inside one function body: when the edit and every syntax change stay
 * within that body, nothing at file level changed (constants, instantiations, other
 * functions), so only that function is analysed again and the others move by the line delta.
 * Returns null when the edit does not qualify; the caller then analyses the whole file.
 */
export function reanalyzeBodyEdit(
  tree: Tree,
  prev: AnalysisSnapshot,
  edit: { start: number; oldEnd: number; newEnd: number; lineDelta: number; removed: string; inserted: string },
  changed: { startIndex: number; endIndex: number }[],
): AnalysisSnapshot | null {
  return withMacros(prev.macros, () => reanalyzeOneBody(tree, prev, edit, changed));
}

/**
 * The edit lies strictly inside one comment, on one line, and every syntax change with it: the
 * analysis cannot have changed. (A comment inside a `#define` is part of its value token, not a
 * comment node, so constants never take this path.)
 */
function insideOneComment(
  tree: Tree,
  edit: { start: number; newEnd: number; removed: string; inserted: string },
  changed: { startIndex: number; endIndex: number }[],
): boolean {
  for (const t of [edit.removed, edit.inserted]) if (t.includes('\n') || t.includes('*/') || t.includes('/*')) return false;
  const n = tree.rootNode.descendantForIndex(edit.start, Math.max(edit.start, edit.newEnd - 1));
  if (!n || n.type !== 'comment' || !(n.startIndex + 1 < edit.start && edit.newEnd < n.endIndex - 1)) return false;
  return changed.every(r => r.startIndex >= n.startIndex && r.endIndex <= n.endIndex);
}

function reanalyzeOneBody(
  tree: Tree,
  prev: AnalysisSnapshot,
  edit: { start: number; oldEnd: number; newEnd: number; lineDelta: number; removed: string; inserted: string },
  changed: { startIndex: number; endIndex: number }[],
): AnalysisSnapshot | null {
  // Error recovery can re-shape code far from the edit (an unbalanced brace swallows the next
  // function): only trust the fast path on a tree without real errors. Macro-qualified heads
  // (`CUTLASS_DEVICE float f()`) leave ERROR nodes that are not errors: they must not cost
  // every edit a whole-file analysis. Every syntax change lies in the edited body (checked
  // below), so that body is the only place a new error can be.
  if (prev.analysis.hasSyntaxErrors) return null;
  const delta = edit.newEnd - edit.oldEnd;
  // Typing inside a comment (a file's header comment, a note between functions) changes nothing
  // but the offsets after it.
  if (insideOneComment(tree, edit, changed)) {
    const functions = prev.functions.map(g =>
      g.start < edit.start
        ? g
        : { ...g, start: g.start + delta, end: g.end + delta, bodyStart: g.bodyStart + delta, bodyEnd: g.bodyEnd + delta },
    );
    return { ...prev, functions };
  }
  // Text that names a template with `<` may add or remove an instantiation, before or after.
  const mentions = (newText: string, offset: number) =>
    !!prev.templateMention &&
    (prev.templateMention.test(newText) ||
      prev.templateMention.test(newText.slice(0, offset) + edit.removed + newText.slice(offset + edit.inserted.length)));
  const i = prev.functions.findIndex(f => edit.start > f.bodyStart && edit.oldEnd < f.bodyEnd - 1 && edit.start >= f.start);
  if (i === -1) {
    // An edit inside a host function's body: device code only moves.
    let host: Node | null = tree.rootNode.descendantForIndex(edit.start, edit.start);
    while (host && host.type !== 'function_definition') host = host.parent;
    const body = host?.childForFieldName('body');
    if (!host || !body || !(edit.start > body.startIndex && edit.newEnd < body.endIndex - 1)) return null;
    // The host body may now hold the file's only syntax error.
    if (host.hasError && hasRealSyntaxErrors(host)) return null;
    if (changed.some(r => r.startIndex < body.startIndex || r.endIndex > body.endIndex)) return null;
    if (prev.functions.some(f => f.start <= edit.start && edit.start < f.end)) return null;
    // A device lambda in the host body (deviceLambdas), before or after the edit.
    if (macros.mentionsDeviceCode(host.text) || prev.functions.some(f => f.start >= host.startIndex && f.end <= host.endIndex - delta))
      return null;
    if (mentions(host.text, edit.start - host.startIndex)) return null;
    const functions = prev.functions.map(g =>
      g.start < edit.start
        ? g
        : {
            start: g.start + delta,
            end: g.end + delta,
            bodyStart: g.bodyStart + delta,
            bodyEnd: g.bodyEnd + delta,
            name: g.name,
            result: shiftResult(g.result, edit.lineDelta),
          },
    );
    return {
      ...prev,
      functions,
      analysis: {
        path: prev.analysis.path,
        kernels: functions.map(g => g.result.kernel),
        strayPragmas: functions.flatMap(g => g.result.stray),
        hasSyntaxErrors: false,
      },
    };
  }
  const f = prev.functions[i];
  const newEnd = f.end + delta;
  if (changed.some(r => r.startIndex < f.bodyStart || r.endIndex > newEnd)) return null;
  let node: Node | null = tree.rootNode.descendantForIndex(f.bodyStart, f.bodyStart);
  while (node && !(node.type === 'function_definition' && node.startIndex === f.start)) node = node.parent;
  if (!node || node.endIndex !== newEnd) return null;
  if (node.hasError && hasRealSyntaxErrors(node)) return null;
  const text = node.text;
  if (mentions(text, edit.start - f.start)) return null;
  const templateDecl = node.parent?.type === 'template_declaration' ? node.parent : null;
  const old = prev.analysis.kernels[i];
  const brace = text.indexOf('{');
  const ownHead = qualifierMacrosIn(brace === -1 ? text : text.slice(0, brace));
  const headMacros = (old.qualifierMacros ?? []).filter(m => !ownHead.includes(m)).join(' ');
  const info = functionInfo(node, templateDecl, old.qualifier, text, headMacros || undefined);
  if (!info || info.name !== f.name) return null;
  const lookup = new ScopeLookup(new FileIndex(tree.rootNode, prev.fileScope.values));
  const result = analyzeFunction(info, prev.fileScope, info.templateParams.length ? prev.instantiations.get(info.name) : undefined, lookup);
  const functions = prev.functions.map((g, j) => {
    if (j === i) return { ...g, end: newEnd, bodyEnd: g.bodyEnd + delta, result };
    if (j < i) return g;
    return {
      start: g.start + delta,
      end: g.end + delta,
      bodyStart: g.bodyStart + delta,
      bodyEnd: g.bodyEnd + delta,
      name: g.name,
      result: shiftResult(g.result, edit.lineDelta),
    };
  });
  const analysis: FileAnalysis = {
    path: prev.analysis.path,
    kernels: functions.map(g => g.result.kernel),
    strayPragmas: functions.flatMap(g => g.result.stray),
    hasSyntaxErrors: false,
  };
  return { ...prev, analysis, functions };
}
