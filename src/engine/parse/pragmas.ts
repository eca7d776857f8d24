// Unroll pragmas in their three spellings: `#pragma unroll N`, the `_Pragma("unroll N")` operator
// and library macros (`CUTLASS_PRAGMA_UNROLL`, `_CCCL_PRAGMA_UNROLL(4)`) that expand to them.
import type { Node } from './parser';
import type { UnrollPragma } from './model';
import { ConstScope, parseNumberLiteral } from './constEval';
import { activeMacros } from './macroContext';
import { named, spanOf } from './syntaxTree';
import { evalTextConst } from './fileConstants';
import type { Instantiation } from './instantiations';

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
  const m = activeMacros().pragmaOfCall(fn.text, argText);
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

export interface PendingPragma {
  node: Node;
  pragma: Pick<UnrollPragma, 'kind' | 'factor' | 'text'>;
  form: UnrollPragma['form'];
  macro?: UnrollPragma['macro'];
  /** The preprocessor branch the attachment depends on (preprocBranches.ts). */
  condition?: string;
}

export function pragmaFromNode(node: Node): PendingPragma | null {
  // `#  pragma` too: clang-format's IndentPPDirectives writes spaces after the `#` (CCCL does)
  if (node.type === 'preproc_call' && /^#[ \t]*pragma$/.test(node.childForFieldName('directive')?.text ?? '')) {
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
export function isPragmaStatement(stmt: Node): boolean {
  return operatorPragmaText(stmt) !== null || macroPragma(stmt) !== null;
}

export function buildPragma(p: PendingPragma, scope: ConstScope, instantiations: Instantiation[]): UnrollPragma {
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
