// Re-analysis after an edit inside one function (its body or its head), a comment, or white space
// between items or at a statement's end: the fast path for typing, which leaves everything at file
// level as it was.
import type { Node, Tree } from './parser';
import type { FileAnalysis, KernelQualifier } from './model';
import type { AnalysisSnapshot } from './analysisSnapshot';
import { analyzeOne } from './analyze';
import { functionInfo, functionName } from './deviceFunctions';
import { shiftResult } from './functionCache';
import { activeMacros, qualifierMacrosIn, withMacros } from './macroContext';
import { FileIndex } from './fileIndex';
import { ScopeLookup } from './scopes';
import { hasRealSyntaxErrors } from './syntaxErrors';
import type { FunctionResult } from './analyzeFunction';
import { CallGraph, FunctionDef, calledNames, mayBeOneReturn, templateReferences } from './callGraph';
import type { TextSource } from './segmentedText';

/**
 * Fast path for typing inside one function (its body, or its head while its name and qualifier
 * stand): when the edit and every syntax change stay within it, nothing at file level changed
 * (constants, instantiations, other functions), so only that function and what reads it through
 * calls are analysed again and the others move by the line delta. An edit that changes no item
 * (comment text, white space between items or at a statement's end) analyses nothing.
 * Returns null when the edit does not qualify; the caller then analyses the whole file.
 * `parsed`: the text the tree was parsed from (lookups by name search it; see FileIndex).
 */
export function reanalyzeBodyEdit(
  tree: Tree,
  prev: AnalysisSnapshot,
  edit: BodyEdit,
  changed: ChangedRange[],
  read: TextReader,
  parsed?: TextSource,
): AnalysisSnapshot | null {
  return withMacros(prev.macros, () => reanalyzeOneBody(tree, prev, edit, changed, read, parsed));
}

/**
 * The edit lies strictly inside one comment, on one line, and every syntax change with it: the
 * analysis cannot have changed. (A comment inside a `#define` is part of its value token, not a
 * comment node, so constants never take this path.)
 */
function insideOneComment(tree: Tree, edit: BodyEdit, changed: ChangedRange[], read: TextReader): boolean {
  // A backslash typed or removed at a line's end splices the next line into a `//` comment.
  for (const t of [edit.removed, edit.inserted]) if (/[\n\r\\]|\*\/|\/\*/.test(t)) return false;
  const n = tree.rootNode.descendantForIndex(edit.start, Math.max(edit.start, edit.newEnd - 1));
  if (!n || n.type !== 'comment' || !(n.startIndex + 1 < edit.start)) return false;
  // A `/* */` comment: before its `*/`. A `//` comment runs to its line's end, which the edit
  // may reach (a digit changed at the end of a note).
  const end = read(n.startIndex, n.startIndex + 2) === '//' ? n.endIndex : n.endIndex - 2;
  if (edit.newEnd > end) return false;
  return changed.every(r => r.startIndex >= n.startIndex && r.endIndex <= n.endIndex);
}

/** Where a `#define` stands between items of the file: not in a function or a class. */
const FILE_LEVEL = new Set([
  'translation_unit',
  'preproc_if',
  'preproc_ifdef',
  'preproc_else',
  'preproc_elif',
  'preproc_elifdef',
  'namespace_definition',
  'declaration_list',
  'linkage_specification',
]);

/**
 * The edit lies inside the value of one function-like `#define` at file level, on one line, and
 * every syntax change with it (the value is one opaque token to the grammar: no error, no item
 * changes). Only instantiations read such a macro (instantiations.ts, written through it, and
 * Kernel.usedUnread by text): when neither its old nor its new text names a template of the file
 * or a macro read for instantiations, no function's result can change. Object-like `#define`s
 * are constants and do not take this path. (A project's error-check macros, `CHECK(call)` with
 * its `\` lines, were a fifth of the bench's random keystrokes, each a whole-file analysis.)
 */
function insideOneDefine(tree: Tree, prev: AnalysisSnapshot, edit: BodyEdit, changed: ChangedRange[], read: TextReader): boolean {
  for (const t of [edit.removed, edit.inserted]) if (/[\n\r\\]/.test(t)) return false;
  const arg = tree.rootNode.descendantForIndex(edit.start, Math.max(edit.start, edit.newEnd - 1));
  const def = arg?.parent;
  if (arg?.type !== 'preproc_arg' || def?.type !== 'preproc_function_def') return false;
  if (!(arg.startIndex <= edit.start && edit.newEnd <= arg.endIndex)) return false;
  if (changed.some(r => r.startIndex < def.startIndex || r.endIndex > def.endIndex)) return false;
  for (let p = def.parent; p; p = p.parent) if (!FILE_LEVEL.has(p.type)) return false;
  if (!prev.templateMention) return true;
  const after = read(def.startIndex, def.endIndex);
  const at = edit.start - def.startIndex;
  const before = after.slice(0, at) + edit.removed + after.slice(at + edit.inserted.length);
  return !prev.templateMention.test(after) && !prev.templateMention.test(before);
}

/** Nodes whose children are items: white space between two of them is in no item's text. */
const ITEM_LISTS = new Set([
  'translation_unit',
  'field_declaration_list',
  'declaration_list',
  'compound_statement',
  'linkage_specification',
  'preproc_if',
  'preproc_ifdef',
  'preproc_else',
  'preproc_elif',
]);

/**
 * The edit replaced white space with white space between two items of a list (the file's top
 * level, a class or namespace body, statements of a host function), in no device function,
 * with nothing but a `//` comment after it on its line (whose column it moves), and the parse
 * changed nothing but that white space: no item's text, kind or column changed.
 */
function betweenItems(tree: Tree, prev: AnalysisSnapshot, edit: BodyEdit, changed: ChangedRange[], read: TextReader): boolean {
  // The grammar's white space, not JavaScript's `\s` (which takes U+FEFF, a syntax error to tree-sitter).
  if (/[^ \t\r\n\f\v]/.test(edit.removed) || /[^ \t\r\n\f\v]/.test(edit.inserted)) return false;
  if (changed.some(r => r.startIndex < edit.start || r.endIndex > edit.newEnd)) return false;
  if (prev.functions.some(f => f.start <= edit.start && edit.start < f.end)) return false;
  const around = whiteSpaceParent(tree, edit);
  if (!around || !ITEM_LISTS.has(around.type)) return false;
  return restOfLineIsTrivia(edit, read);
}

/**
 * The smallest node around the white space of an edit: the characters on both sides of what was
 * typed, or of where text was deleted (a deletion has no character of its own to look at).
 */
function whiteSpaceParent(tree: Tree, edit: BodyEdit): Node | null {
  return tree.rootNode.descendantForIndex(Math.max(0, edit.start - 1), Math.max(edit.newEnd, edit.start + 1));
}

/** Nothing but white space or a `//` comment follows the edit on its line: no column there moves. */
function restOfLineIsTrivia(edit: BodyEdit, read: TextReader): boolean {
  const rest = read(edit.newEnd, edit.newEnd + 4096);
  const lineEnd = rest.indexOf('\n');
  return /^[ \t\r\f\v]*(\/\/.*)?$/.test(lineEnd === -1 ? rest : rest.slice(0, lineEnd));
}

/**
 * White space replaced with white space at the end of a line in a device function's body,
 * between two statements of a block (a space typed after `;`, a trailing space deleted), on one
 * line, and the parse changed nothing but that white space: no statement's text, line or column
 * changed, so the function reads as before. Not when the line before the edit holds a
 * directive, a quote, a backslash or a block comment: a directive's value, a string or a spliced
 * line holds its white space.
 */
function afterStatementLine(tree: Tree, prev: AnalysisSnapshot, edit: BodyEdit, changed: ChangedRange[], read: TextReader): boolean {
  if (edit.lineDelta !== 0 || /[^ \t\f\v]/.test(edit.removed) || /[^ \t\f\v]/.test(edit.inserted)) return false;
  if (changed.some(r => r.startIndex < edit.start || r.endIndex > edit.newEnd)) return false;
  if (!prev.functions.some(f => f.bodyStart < edit.start && edit.oldEnd < f.bodyEnd - 1)) return false;
  const around = whiteSpaceParent(tree, edit);
  if (around?.type !== 'compound_statement' || !restOfLineIsTrivia(edit, read)) return false;
  // The line before the edit (what follows it is white space or a `//` comment, checked above).
  const head = read(Math.max(0, edit.start - 4096), edit.start);
  const lineStart = head.lastIndexOf('\n');
  if (lineStart === -1 && edit.start > 4096) return false;
  return !/[#"'\\]|\/\*|\*\//.test(head.slice(lineStart + 1));
}

/** Characters [start, end) of the document after the edit, as written. */
type TextReader = (start: number, end: number) => string;

function reanalyzeOneBody(
  tree: Tree,
  prev: AnalysisSnapshot,
  edit: BodyEdit,
  changed: ChangedRange[],
  read: TextReader,
  parsed?: TextSource,
): AnalysisSnapshot | null {
  // Error recovery can re-shape code far from the edit (an unbalanced brace swallows the next
  // function): the fast path is only trusted while every real error lies in one function body
  // (errorScope), the one being edited. Macro-qualified heads (`CUTLASS_DEVICE float f()`)
  // leave ERROR nodes that are not errors: they must not cost every edit a whole-file analysis.
  // Every syntax change lies in the edited body (checked below), so that body is the only place
  // a new error can be.
  if (prev.analysis.hasSyntaxErrors && !prev.errorScope) return null;
  // A function the analysis could not read is named; it is read again with the whole file.
  if (prev.analysis.unparsedFunctions?.length) return null;
  // Keystrokes that change no item: typing inside a comment (a file's header comment, a note
  // between functions) or in an error-check macro's value, on one line; white space between items
  // (a blank line between functions, an indent before a comment, a trailing space after a
  // member) or at the end of a statement's line in a device function. Every function reads as
  // before: only the ones after the edit move.
  if (
    !prev.analysis.hasSyntaxErrors &&
    (insideOneComment(tree, edit, changed, read) ||
      insideOneDefine(tree, prev, edit, changed, read) ||
      betweenItems(tree, prev, edit, changed, read) ||
      afterStatementLine(tree, prev, edit, changed, read))
  ) {
    const functions = prev.functions.map(g => movedByTrivia(g, edit));
    return { ...prev, functions, defs: defsMoved(prev.defs, edit), analysis: analysisOf(prev.analysis.path, functions, null) };
  }
  const i = prev.functions.findIndex(f => edit.start > f.bodyStart && edit.oldEnd < f.bodyEnd - 1 && edit.start >= f.start);
  if (i !== -1) return deviceBodyEdit(tree, prev, edit, changed, i, parsed);
  // In a device function's head (a parameter typed, a type changed): that function and what
  // depends on it, as for its body, while it keeps its name and qualifier.
  const h = prev.functions.findIndex(f => edit.start > f.start && edit.oldEnd <= f.bodyStart);
  return h === -1 ? hostBodyEdit(tree, prev, edit, changed, parsed) : deviceBodyEdit(tree, prev, edit, changed, h, parsed);
}

/**
 * The syntax errors after an edit inside `node` (the edited function), which held every error
 * before if any: its extent when it holds one now, null when there are none; undefined when
 * errors stood elsewhere (the whole file is analysed then).
 */
function errorsAfter(prev: AnalysisSnapshot, node: Node, delta: number): { start: number; end: number } | null | undefined {
  const scope = prev.errorScope;
  if (prev.analysis.hasSyntaxErrors && !(scope && scope.start === node.startIndex && scope.end + delta === node.endIndex)) return undefined;
  return node.hasError && hasRealSyntaxErrors(node) ? { start: node.startIndex, end: node.endIndex } : null;
}

type BodyEdit = { start: number; oldEnd: number; newEnd: number; lineDelta: number; removed: string; inserted: string };
type ChangedRange = { startIndex: number; endIndex: number };
type SnapshotFunction = AnalysisSnapshot['functions'][number];

/** At most this many functions are analysed again for one keystroke; beyond, the whole file is. */
const MAX_REANALYSED = 24;

/** A function's text before the edit at `offset` in its text after it. */
function textBefore(text: string, offset: number, edit: BodyEdit): string {
  return text.slice(0, offset) + edit.removed + text.slice(offset + edit.inserted.length);
}

/**
 * The edit leaves every `name<…>` of the file's templates as it was: the instantiations stand.
 * Not when the edited line holds a `#`, before or after, unless it is a `#pragma` line both
 * times: the grammar reads `#define` even after `case 8:`, and the rest of that line,
 * `coarsen_potential<8><<<…>>>` included, becomes the macro's value, with the same text (fuzz
 * seed 3732631596).
 */
function sameInstantiations(prev: AnalysisSnapshot, before: string, after: string, offset: number, edit: BodyEdit): boolean {
  const lineOf = (t: string, from: number, to: number) =>
    t.slice(t.lastIndexOf('\n', from - 1) + 1, (t.indexOf('\n', to) + 1 || t.length + 1) - 1);
  // A `#pragma` line stays one (a factor typed): it defines nothing and holds no launch.
  const directive = (line: string) => line.includes('#') && !/^[ \t]*#[ \t]*pragma[ \t][^#]*$/.test(line);
  if (directive(lineOf(after, offset, offset + edit.inserted.length)) || directive(lineOf(before, offset, offset + edit.removed.length)))
    return false;
  const a = templateReferences(before, prev.templateMention);
  const b = templateReferences(after, prev.templateMention);
  return a.length === b.length && a.every((x, k) => x === b[k]);
}

/**
 * A function after an edit that changed no item (comment text, white space between items or
 * statements): one before it stays, one after it moves, one holding it (on one line: the
 * callers make sure) grows. Its result stands: no line or column it names moved.
 */
function movedByTrivia(g: SnapshotFunction, edit: BodyEdit): SnapshotFunction {
  const delta = edit.newEnd - edit.oldEnd;
  if (g.end <= edit.start) return g;
  if (g.start >= edit.start) return movedByEdit(g, delta, edit.lineDelta);
  if (edit.lineDelta !== 0) throw new Error('a line break inside a function is not trivia'); // the caller analyses the file
  const at = (p: number) => (p < edit.start ? p : p + delta);
  return { ...g, bodyStart: at(g.bodyStart), bodyEnd: g.bodyEnd + delta, end: g.end + delta };
}

/**
 * The head of a function before the edit and after it (its text up to the body's brace) gives the
 * qualifier the snapshot has: a head edit that writes or removes `__global__`, `__device__` or a
 * qualifier macro is a new function, read with the whole file.
 */
function sameQualifier(qualifier: KernelQualifier | null, before: string, after: string): boolean {
  const head = (t: string) => (t.indexOf('{') === -1 ? t : t.slice(0, t.indexOf('{')));
  return activeMacros().headQualifier(head(before)) === qualifier && activeMacros().headQualifier(head(after)) === qualifier;
}

/** A function after the edit, which moves by the edit's length and line delta. */
function movedByEdit(g: SnapshotFunction, delta: number, lineDelta: number): SnapshotFunction {
  return {
    start: g.start + delta,
    end: g.end + delta,
    bodyStart: g.bodyStart + delta,
    bodyEnd: g.bodyEnd + delta,
    name: g.name,
    result: shiftResult(g.result, lineDelta),
  };
}

/** The definitions after an edit: later ones move, enclosing ones grow. */
function defsMoved(defs: FunctionDef[], edit: BodyEdit): FunctionDef[] {
  const delta = edit.newEnd - edit.oldEnd;
  if (delta === 0) return defs;
  return defs.map(d => {
    if (d.start <= edit.start && edit.start < d.end) return { ...d, end: d.end + delta };
    return d.start < edit.start ? d : { ...d, start: d.start + delta, end: d.end + delta };
  });
}

/** The definitions after an edit inside definition `k`, which now calls `calls`, and their graph when it stands. */
function defsAfter(prev: AnalysisSnapshot, k: number, edit: BodyEdit, calls: string[]): Pick<AnalysisSnapshot, 'defs' | 'graph'> {
  const was = prev.defs[k].calls;
  const same = was.length === calls.length && was.every((c, j) => c === calls[j]);
  const defs = defsMoved(prev.defs, edit);
  if (same) return { defs, graph: prev.graph };
  return { defs: defs.map((d, j) => (j === k ? { ...d, calls } : d)), graph: undefined };
}

/** The snapshot's call graph: built on first use, kept while edits only move definitions. */
function graphOf(prev: AnalysisSnapshot): CallGraph {
  return (prev.graph ??= new CallGraph(prev.defs));
}

/** Scope lookup over the new tree, which knows the file's kernels as the whole-file analysis does (their parameters are run-time values). */
function lookupAfter(tree: Tree, prev: AnalysisSnapshot, edit: BodyEdit, parsed: TextSource | undefined): ScopeLookup {
  const lookup = new ScopeLookup(new FileIndex(tree.rootNode, prev.fileScope.values, prev.outsideBodies, parsed));
  const delta = edit.newEnd - edit.oldEnd;
  prev.functions.forEach((g, j) => {
    if (prev.analysis.kernels[j].qualifier === 'global') lookup.kernelStarts.add(g.start < edit.start ? g.start : g.start + delta);
  });
  return lookup;
}

/** The function_definition of the new tree at `start` whose body starts at `bodyStart`. */
function definitionAt(tree: Tree, start: number, bodyStart: number): Node | null {
  let node: Node | null = tree.rootNode.descendantForIndex(bodyStart, bodyStart);
  while (node && !(node.type === 'function_definition' && node.startIndex === start)) node = node.parent;
  return node;
}

/** Function `j` of the snapshot analysed again in the new tree (`node`), or null when it no longer reads as itself. */
function reanalyze(node: Node, prev: AnalysisSnapshot, j: number, lookup: ScopeLookup): FunctionResult | null {
  const text = node.text;
  const templateDecl = node.parent?.type === 'template_declaration' ? node.parent : null;
  const old = prev.analysis.kernels[j];
  const brace = text.indexOf('{');
  const ownHead = qualifierMacrosIn(brace === -1 ? text : text.slice(0, brace));
  const headMacros = (old.qualifierMacros ?? []).filter(m => !ownHead.includes(m)).join(' ');
  const info = functionInfo(node, templateDecl, old.qualifier, text, headMacros || undefined);
  if (!info || info.name !== prev.functions[j].name) return null;
  // usedUnread reads the file outside this function (its name's mentions), which the fast path keeps as it was.
  const args = info.templateParams.length ? prev.instantiations.get(info.name) : undefined;
  return analyzeOne(info, prev.fileScope, args, lookup, old.usedUnread === true);
}

/**
 * The functions whose result the edited definition `k` reaches through calls (callGraph.ts),
 * analysed again in the new tree into `results`; false when there are too many, or one cannot be.
 */
function reanalyzeDependents(
  tree: Tree,
  prev: AnalysisSnapshot,
  edited: { defs: FunctionDef[]; k: number; calls: Iterable<string> },
  edit: BodyEdit,
  results: Map<number, FunctionResult>,
  lookup: ScopeLookup,
): boolean {
  const delta = edit.newEnd - edit.oldEnd;
  const graph = edited.defs === prev.defs ? graphOf(prev) : new CallGraph(edited.defs);
  // Host functions carry no result of their own: only device functions are analysed again.
  const dependents = graph.dependents(edited.k, edited.calls).filter(d => edited.defs[d].fn >= 0);
  if (dependents.length > MAX_REANALYSED) return false;
  for (const d of dependents) {
    const j = edited.defs[d].fn;
    const g = prev.functions[j];
    if (g.start <= edit.start && edit.start < g.end) return false; // it holds the edit
    const shift = g.start < edit.start ? 0 : delta;
    const node = definitionAt(tree, g.start + shift, g.bodyStart + shift);
    const r = node && reanalyze(node, prev, j, lookup);
    if (!r) return false;
    results.set(j, r);
  }
  return true;
}

/** The snapshot's functions after the edit: re-analysed ones take their new result, the others move. */
function functionsAfter(prev: AnalysisSnapshot, edit: BodyEdit, results: Map<number, FunctionResult>, edited: number): SnapshotFunction[] {
  const delta = edit.newEnd - edit.oldEnd;
  return prev.functions.map((g, j) => {
    const r = results.get(j);
    if (j === edited) {
      const bodyStart = g.bodyStart < edit.start ? g.bodyStart : g.bodyStart + delta; // a head edit moves the body
      return { ...g, bodyStart, end: g.end + delta, bodyEnd: g.bodyEnd + delta, result: r! };
    }
    if (g.start < edit.start) return r ? { ...g, result: r } : g;
    return r ? { ...movedByEdit(g, delta, 0), result: r } : movedByEdit(g, delta, edit.lineDelta);
  });
}

/** An edit inside a host function's body: device code moves, and what it reaches through calls is analysed again. */
function hostBodyEdit(
  tree: Tree,
  prev: AnalysisSnapshot,
  edit: BodyEdit,
  changed: ChangedRange[],
  parsed: TextSource | undefined,
): AnalysisSnapshot | null {
  const delta = edit.newEnd - edit.oldEnd;
  let host: Node | null = tree.rootNode.descendantForIndex(edit.start, edit.start);
  while (host && host.type !== 'function_definition') host = host.parent;
  const body = host?.childForFieldName('body');
  if (!host || !body || !(edit.start > host.startIndex && edit.newEnd < body.endIndex - 1)) return null;
  const inHead = edit.start <= body.startIndex;
  // The host body may now hold the file's only syntax errors.
  const errors = errorsAfter(prev, host, delta);
  if (errors === undefined) return null;
  if (changed.some(r => r.startIndex < (inHead ? host.startIndex : body.startIndex) || r.endIndex > body.endIndex)) return null;
  if (prev.functions.some(f => f.start <= edit.start && edit.start < f.end)) return null;
  // A device lambda in the host body (deviceLambdas), before or after the edit.
  if (
    activeMacros().mentionsDeviceCode(host.text) ||
    prev.functions.some(f => f.start >= host.startIndex && f.end <= host.endIndex - delta)
  )
    return null;
  const text = host.text;
  const before = textBefore(text, edit.start - host.startIndex, edit);
  if (!sameInstantiations(prev, before, text, edit.start - host.startIndex, edit)) return null;
  const calls = calledNames(text);
  const oneReturn = mayBeOneReturn(text);
  if (oneReturn !== mayBeOneReturn(before)) return null;
  // A member function is no definition of the graph's (class bodies are keyed whole): it joins for this question.
  const k = prev.defs.findIndex(d => d.start === host.startIndex && d.end === host.endIndex - delta);
  const name = functionName(host.childForFieldName('declarator'))?.split('::').pop() ?? null;
  // A head edit keeps a host function of the graph's, with its name, and no qualifier makes it device code.
  if (inHead && (k === -1 || prev.defs[k].name !== name || !sameQualifier(null, before, text))) return null;
  const defs =
    k === -1 ? [...prev.defs, { name, start: host.startIndex, end: host.endIndex, kernel: false, oneReturn, calls, fn: -1 }] : prev.defs;
  const results = new Map<number, FunctionResult>();
  const lookup = lookupAfter(tree, prev, edit, parsed);
  const edited = { defs, k: k === -1 ? defs.length - 1 : k, calls: [...calls, ...calledNames(before)] };
  if (!reanalyzeDependents(tree, prev, edited, edit, results, lookup)) return null;
  const functions = functionsAfter(prev, edit, results, -1);
  const next = k === -1 ? { defs: defsMoved(prev.defs, edit) } : defsAfter(prev, k, edit, calls);
  return { ...prev, functions, ...next, errorScope: errors ?? undefined, analysis: analysisOf(prev.analysis.path, functions, errors) };
}

/** An edit inside the body of the device function `i`: it and what it reaches through calls are analysed again. */
function deviceBodyEdit(
  tree: Tree,
  prev: AnalysisSnapshot,
  edit: BodyEdit,
  changed: ChangedRange[],
  i: number,
  parsed: TextSource | undefined,
): AnalysisSnapshot | null {
  const delta = edit.newEnd - edit.oldEnd;
  const f = prev.functions[i];
  const newEnd = f.end + delta;
  const inHead = edit.start <= f.bodyStart;
  if (changed.some(r => r.startIndex < (inHead ? f.start : f.bodyStart) || r.endIndex > newEnd)) return null;
  const node = definitionAt(tree, f.start, inHead ? f.bodyStart + delta : f.bodyStart);
  if (!node || node.endIndex !== newEnd) return null;
  const errors = errorsAfter(prev, node, delta);
  if (errors === undefined) return null;
  const k = prev.defs.findIndex(d => d.fn === i);
  if (k === -1) return null;
  const text = node.text;
  const before = textBefore(text, edit.start - f.start, edit);
  if (!sameInstantiations(prev, before, text, edit.start - f.start, edit)) return null;
  if (inHead && !sameQualifier(prev.analysis.kernels[i].qualifier, before, text)) return null;
  // A body that becomes, or stops being, one `return …;` changes what its callers read.
  const calls = calledNames(text);
  if (mayBeOneReturn(text) !== prev.defs[k].oneReturn) return null;
  const lookup = lookupAfter(tree, prev, edit, parsed);
  const own = reanalyze(node, prev, i, lookup);
  if (!own) return null;
  const results = new Map([[i, own]]);
  if (!reanalyzeDependents(tree, prev, { defs: prev.defs, k, calls: [...calls, ...calledNames(before)] }, edit, results, lookup))
    return null;
  const functions = functionsAfter(prev, edit, results, i);
  return {
    ...prev,
    functions,
    ...defsAfter(prev, k, edit, calls),
    errorScope: errors ?? undefined,
    analysis: analysisOf(prev.analysis.path, functions, errors),
  };
}

function analysisOf(path: string, functions: SnapshotFunction[], errors: { start: number; end: number } | null): FileAnalysis {
  return {
    path,
    kernels: functions.map(g => g.result.kernel),
    strayPragmas: functions.flatMap(g => g.result.stray),
    hasSyntaxErrors: errors !== null,
  };
}
