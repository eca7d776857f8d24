// Re-analysis after an edit inside one function body (or a comment, or a host function's body):
// the fast path for typing, which leaves everything at file level as it was.
import type { Node, Tree } from './parser';
import type { FileAnalysis } from './model';
import type { AnalysisSnapshot } from './analysisSnapshot';
import { analyzeFunction } from './analyzeFunction';
import { functionInfo } from './deviceFunctions';
import { shiftResult } from './functionCache';
import { activeMacros, qualifierMacrosIn, withMacros } from './macroContext';
import { FileIndex } from './fileIndex';
import { ScopeLookup } from './scopes';
import { hasRealSyntaxErrors } from './syntaxErrors';

/**
 * Fast path for typing inside one function body: when the edit and every syntax change stay
 * within that body, nothing at file level changed (constants, instantiations, other
 * functions), so only that function is analysed again and the others move by the line delta.
 * Returns null when the edit does not qualify; the caller then analyses the whole file.
 */
export function reanalyzeBodyEdit(tree: Tree, prev: AnalysisSnapshot, edit: BodyEdit, changed: ChangedRange[]): AnalysisSnapshot | null {
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

/**
 * The edit replaced white space with white space between two items at the file's top level, with
 * nothing but a `//` comment after it on its line (whose column it moves), and the parse did not
 * change: no item's text, kind or column changed.
 */
function betweenTopLevelItems(tree: Tree, edit: BodyEdit, changed: ChangedRange[]): boolean {
  if (changed.length || /\S/.test(edit.removed) || /\S/.test(edit.inserted)) return false;
  const root = tree.rootNode;
  const around = root.descendantForIndex(Math.max(0, edit.start - 1), edit.newEnd);
  if (around?.type !== 'translation_unit' || around.startIndex !== root.startIndex) return false;
  const text = root.text;
  const from = edit.newEnd - root.startIndex;
  const lineEnd = text.indexOf('\n', from);
  const restOfLine = text.slice(from, lineEnd === -1 ? text.length : lineEnd);
  return /^[^\S\n]*(\/\/.*)?$/.test(restOfLine);
}

function reanalyzeOneBody(tree: Tree, prev: AnalysisSnapshot, edit: BodyEdit, changed: ChangedRange[]): AnalysisSnapshot | null {
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
  // White space typed between top-level items (a blank line between functions, an indent before a
  // comment): every item parses and reads as before, only later lines move.
  if (!prev.analysis.hasSyntaxErrors && betweenTopLevelItems(tree, edit, changed)) {
    const functions = prev.functions.map(g => (g.start < edit.start ? g : movedByEdit(g, delta, edit.lineDelta)));
    return { ...prev, functions, analysis: analysisOf(prev.analysis.path, functions) };
  }
  // Text that names a template with `<` may add or remove an instantiation, before or after.
  const mentions = (newText: string, offset: number) =>
    !!prev.templateMention &&
    (prev.templateMention.test(newText) ||
      prev.templateMention.test(newText.slice(0, offset) + edit.removed + newText.slice(offset + edit.inserted.length)));
  const i = prev.functions.findIndex(f => edit.start > f.bodyStart && edit.oldEnd < f.bodyEnd - 1 && edit.start >= f.start);
  return i === -1 ? hostBodyEdit(tree, prev, edit, changed, mentions) : deviceBodyEdit(tree, prev, edit, changed, i, mentions);
}

type BodyEdit = { start: number; oldEnd: number; newEnd: number; lineDelta: number; removed: string; inserted: string };
type ChangedRange = { startIndex: number; endIndex: number };
/** Whether a function's new text (the edit at `offset`), or that text before the edit, may name an instantiation. */
type Mentions = (newText: string, offset: number) => boolean;
type SnapshotFunction = AnalysisSnapshot['functions'][number];

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

/** An edit inside a host function's body: device code only moves. */
function hostBodyEdit(
  tree: Tree,
  prev: AnalysisSnapshot,
  edit: BodyEdit,
  changed: ChangedRange[],
  mentions: Mentions,
): AnalysisSnapshot | null {
  const delta = edit.newEnd - edit.oldEnd;
  let host: Node | null = tree.rootNode.descendantForIndex(edit.start, edit.start);
  while (host && host.type !== 'function_definition') host = host.parent;
  const body = host?.childForFieldName('body');
  if (!host || !body || !(edit.start > body.startIndex && edit.newEnd < body.endIndex - 1)) return null;
  // The host body may now hold the file's only syntax error.
  if (host.hasError && hasRealSyntaxErrors(host)) return null;
  if (changed.some(r => r.startIndex < body.startIndex || r.endIndex > body.endIndex)) return null;
  if (prev.functions.some(f => f.start <= edit.start && edit.start < f.end)) return null;
  // A device lambda in the host body (deviceLambdas), before or after the edit.
  if (
    activeMacros().mentionsDeviceCode(host.text) ||
    prev.functions.some(f => f.start >= host.startIndex && f.end <= host.endIndex - delta)
  )
    return null;
  if (mentions(host.text, edit.start - host.startIndex)) return null;
  const functions = prev.functions.map(g => (g.start < edit.start ? g : movedByEdit(g, delta, edit.lineDelta)));
  return { ...prev, functions, analysis: analysisOf(prev.analysis.path, functions) };
}

/** An edit inside the body of the device function `i`: that function alone is analysed again. */
function deviceBodyEdit(
  tree: Tree,
  prev: AnalysisSnapshot,
  edit: BodyEdit,
  changed: ChangedRange[],
  i: number,
  mentions: Mentions,
): AnalysisSnapshot | null {
  const delta = edit.newEnd - edit.oldEnd;
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
    return movedByEdit(g, delta, edit.lineDelta);
  });
  return { ...prev, analysis: analysisOf(prev.analysis.path, functions), functions };
}

function analysisOf(path: string, functions: SnapshotFunction[]): FileAnalysis {
  return {
    path,
    kernels: functions.map(g => g.result.kernel),
    strayPragmas: functions.flatMap(g => g.result.stray),
    hasSyntaxErrors: false,
  };
}
