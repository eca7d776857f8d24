// Finds device functions, their loops, unroll pragmas, trip counts and manual unrolls in
// one parsed CUDA file. Works on broken code: every step tolerates missing children.
import type { Tree } from './parser';
import type { FileAnalysis, Kernel, StrayPragma } from './model';
import type { ConstScope } from './constEval';
import { MacroTable } from './macros/table';
import type { TextSource } from './segmentedText';
import { FileIndex, type NameReads } from './fileIndex';
import { ScopeLookup } from './scopes';
import { activeMacros, withMacros } from './macroContext';
import { FunctionResult, analyzeFunction } from './analyzeFunction';
import type { AnalysisSnapshot } from './analysisSnapshot';
import { FunctionInfo, collectFunctions } from './deviceFunctions';
import { collectFileConstants } from './fileConstants';
import type { FunctionCache, ItemTexts } from './functionCache';
import { collectInstantiations } from './instantiations';
import { hasRealSyntaxErrors } from './syntaxErrors';
import { TopLevel, scanTopLevel } from './topLevel';
import type { UnparsedFunction } from './model';
import { functionDefinitions, Ranges, unparsedFunctions } from './unparsedFunctions';
import { CallGraph, definitionsOf, textHash } from './callGraph';

/**
 * The file's items other than function definitions, against which a cached result is checked: a
 * class member's value may change any trip count, and a name declared at namespace scope (a
 * variable, or what error recovery reads as one) changes what a bound's name means
 * (ScopeLookup.isGlobalVariable). Only the items that spell a name the function's lookups asked
 * for count (functionCache.ts).
 */
function itemTexts(top: TopLevel, cache: FunctionCache): ItemTexts {
  const texts: string[] = [];
  // An item's place counts too: the same declaration inside an ERROR node declares no namespace variable.
  for (const { node, text, hidden } of top.others) if (node.type !== 'function_definition') texts.push(hidden ? `\u0001${text}` : text);
  return cache.items(texts, texts.map(textHash));
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
  source?: TextSource,
): AnalysisSnapshot {
  const steps = analysisSteps(tree, path, cache, source);
  return withMacros(table, () => {
    for (;;) {
      const r = steps.next();
      if (r.done) return r.value;
    }
  });
}

/**
 * The same analysis one device function at a time: a caller may answer other requests between
 * steps (the language server's open of a large file). The tree must not change meanwhile.
 */
export function* analyzeTreeInSteps(
  tree: Tree,
  path: string,
  cache: FunctionCache,
  table: MacroTable,
  source?: TextSource,
): Generator<void, AnalysisSnapshot> {
  const steps = analysisSteps(tree, path, cache, source);
  for (;;) {
    const r = withMacros(table, () => steps.next());
    if (r.done) return r.value;
    yield;
  }
}

/** A function's result; `unread`: a template whose instantiations the file may hold unread (Kernel.usedUnread). */
export function analyzeOne(
  fn: FunctionInfo,
  fileScope: ConstScope,
  args: string[][] | undefined,
  lookup: ScopeLookup,
  unread: boolean,
): FunctionResult {
  const r = analyzeFunction(fn, fileScope, args, lookup);
  return unread ? { ...r, kernel: { ...r.kernel, usedUnread: true } } : r;
}

/** A function's result from the cache, or `analyze`d with the names its lookups asked the file (`reads`) kept beside it. */
function cachedAnalysis(
  cache: FunctionCache,
  key: string,
  at: { items: ItemTexts | null; line: number; reads: NameReads },
  analyze: () => FunctionResult,
): FunctionResult {
  const hit = cache.get(key, at.line, at.items);
  if (hit) {
    cache.hits++;
    return hit;
  }
  at.reads.begin();
  let r: FunctionResult;
  let names: Set<string>;
  try {
    r = analyze();
  } finally {
    // Closed on a throw too: the span of the next function must not nest in this one.
    names = at.reads.end();
  }
  cache.misses++;
  cache.set(key, r, names, at.items);
  return r;
}

/** Device functions the file defines that the analysis does not list (unparsedFunctions.ts). */
function lostFunctions(root: Tree['rootNode'], top: TopLevel, failed: UnparsedFunction[]): UnparsedFunction[] {
  const listed = top.functions.map(f => ({ start: f.node.startIndex, end: f.node.endIndex }));
  return unparsedFunctions(root.text, root, [...functionDefinitions(root), ...listed], listed, failed);
}

/** Yields after each function: each step runs under the file's macro table (withMacros). */
function* analysisSteps(tree: Tree, path: string, cache?: FunctionCache, source?: TextSource): Generator<void, AnalysisSnapshot> {
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
  const followed = new Set<string>();
  const instantiatingMacros = new Set<string>();
  const inst = templates.size ? collectInstantiations(top, templates, followed, instantiatingMacros) : new Map<string, string[][]>();
  const index = new FileIndex(root, fileScope.values, undefined, source);
  const lookup = new ScopeLookup(index);
  for (const f of functions) if (f.qualifier === 'global') lookup.kernelStarts.add(f.node.startIndex);
  // A function's trip counts depend on the classes of the file too (members, specialisations).
  const constantsKey = cache ? JSON.stringify([...fileScope.values]) : '';
  const items = cache ? itemTexts(top, cache) : null;
  // Only a kept document (a cache) re-analyses: a one-off scan needs no call graph.
  const { defs, texts, byNode } = cache ? definitionsOf(top) : { defs: [], texts: [], byNode: new Map<number, number>() };
  const graph = new CallGraph(defs);
  const hashes: string[] = [];
  const dependencyKey = (k: number | undefined) =>
    k === undefined
      ? '?'
      : graph
          .dependencies(k)
          .map(d => (hashes[d] ??= textHash(texts[d])))
          .join(',');
  let codeText: CodeText | null = null;
  const code = () => (codeText ??= { text: source ?? root.text, ignored: null });
  const kernels: Kernel[] = [];
  const strayPragmas: StrayPragma[] = [];
  const snapshotFunctions: AnalysisSnapshot['functions'] = [];
  const failed: UnparsedFunction[] = [];
  for (const fn of functions) {
    try {
      const args = fn.templateParams.length ? inst.get(fn.name) : undefined;
      const unread = fn.templateParams.length && !args ? usedOutside(fn, code(), functions) : false;
      let r: FunctionResult;
      if (cache) {
        // …and on the functions that reach its result through calls (callGraph.ts): callers'
        // arguments read in their scopes, bodies of one-return functions it evaluates.
        const calls = dependencyKey(byNode.get(fn.node.id));
        const key = `${fn.node.startPosition.column}\u0000${calls}\u0000${constantsKey}\u0000${JSON.stringify(args ?? null)}${unread ? '+' : ''}\u0000${fn.headMacros ?? ''}\u0000${fn.templateParams.map(p => `${p.name}=${p.defaultValue?.text ?? ''}`).join(',')}\u0000${fn.text}`;
        const at = { items, line: fn.node.startPosition.row + 1, reads: lookup.index.reads };
        r = cachedAnalysis(cache, key, at, () => analyzeOne(fn, fileScope, args, lookup, unread));
      } else r = analyzeOne(fn, fileScope, args, lookup, unread);
      kernels.push(r.kernel);
      strayPragmas.push(...r.stray);
      const body = fn.node.childForFieldName('body');
      const k = byNode.get(fn.node.id);
      if (k !== undefined) defs[k].fn = snapshotFunctions.length;
      snapshotFunctions.push({
        start: fn.node.startIndex,
        end: fn.node.endIndex,
        bodyStart: body?.startIndex ?? fn.node.endIndex,
        bodyEnd: body?.endIndex ?? fn.node.endIndex,
        name: fn.name,
        result: r,
      });
    } catch (e) {
      // A function the walker cannot handle is skipped, never fatal, and named.
      failed.push({ name: fn.name, line: fn.node.startPosition.row + 1, reason: `the analysis failed (${(e as Error).message})` });
    }
    yield;
  }
  cache?.commit();
  const mention = fileMentions(
    [...templates.keys(), ...followed],
    [...templates.keys()].filter(n => !inst.has(n)),
    functions,
    [...instantiatingMacros],
  );
  const hasSyntaxErrors = hasRealSyntaxErrors(root);
  const unparsed = hasSyntaxErrors || failed.length ? lostFunctions(root, top, failed) : [];
  return {
    analysis: { path, kernels, strayPragmas, hasSyntaxErrors, ...(unparsed.length ? { unparsedFunctions: unparsed } : {}) },
    functions: snapshotFunctions,
    fileScope,
    outsideBodies: index.outside,
    instantiations: inst,
    defs,
    ...mention,
    macros: activeMacros(),
  };
}

/**
 * Regexes for text that names one of the file's templates with `<` (or at all, for one with no
 * instantiation read: a use of it decides Kernel.usedUnread; or invokes a macro that writes
 * instantiations), or calls one of its non-kernel functions.
 */
function fileMentions(
  templates: string[],
  uninstantiated: string[],
  functions: FunctionInfo[],
  /** Macros whose invocations were read for instantiations (`EXTERN_DECL_CASES(64)`): an edit to one is an edit to them. */
  macros: string[] = [],
): Pick<AnalysisSnapshot, 'templateMention' | 'calleeMention'> {
  const escape = (n: string) => n.replace(/[$^*+?.()|[\]{}\\]/g, '\\$&');
  const names = templates.map(escape);
  const bare = uninstantiated.length ? `|\\b(${uninstantiated.map(escape).join('|')})\\b` : '';
  const callees = [...new Set(functions.filter(f => f.qualifier !== 'global' && /^[A-Za-z_$]\w*$/.test(f.name)).map(f => escape(f.name)))];
  return {
    templateMention: names.length
      ? new RegExp(`\\b(${names.join('|')})\\s*<${bare}${macros.length ? `|\\b(${macros.map(escape).join('|')})\\s*\\(` : ''}`)
      : null,
    calleeMention: callees.length ? new RegExp(`\\b(${callees.join('|')})\\s*[<(]`) : null,
  };
}

/** The file's text, and where its comments and string literals lie (found when first asked). */
interface CodeText {
  text: TextSource;
  ignored: Ranges | null;
}

/**
 * Comments and string literals are found only when a name is seen outside its own definition,
 * once per analysis. (Blanking them in a copy of the text cost a whole-file analysis a fifth of
 * its time on a 200 KB file, and most names are found nowhere but in their own definition.)
 */
function ignoredRanges(code: CodeText): Ranges {
  if (code.ignored) return code.ignored;
  const ignored: { start: number; end: number }[] = [];
  const text = code.text.toString();
  const re = /\/\/[^\n]*|\/\*[\s\S]*?\*\/|"(?:\\.|[^"\\\n])*"/g;
  for (let m = re.exec(text); m; m = re.exec(text)) ignored.push({ start: m.index, end: m.index + m[0].length });
  return (code.ignored = new Ranges(ignored));
}

/** [A-Za-z0-9_], as the regex `\b` reads a word (NaN, before the start or past the end, is not). */
function isWordChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
}

/**
 * Does the code name the function outside its own definition and those of its overloads (a
 * macro body, a function pointer), not counting comments and strings? A name is word characters
 * only, so a match never straddles the edge of a comment or a string.
 */
function usedOutside(fn: FunctionInfo, code: CodeText, functions: FunctionInfo[]): boolean {
  const own = functions.filter(f => f.name === fn.name).map(f => f.node);
  const { text } = code;
  const name = fn.name;
  // indexOf, not a /\bname\b/ regex: this runs per template with no instantiation, over the whole file.
  const find = (from: number) => (text.find ? text.find(name, from) : text.indexOf(name, from));
  for (let at = find(0); at !== -1; at = find(at + 1)) {
    if (isWordChar(text.charCodeAt(at - 1)) || isWordChar(text.charCodeAt(at + name.length))) continue;
    if (!own.some(n => n.startIndex <= at && at < n.endIndex) && !ignoredRanges(code).has(at)) return true;
  }
  return false;
}
