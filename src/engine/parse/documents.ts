// One syntax tree per open document, updated incrementally on edits, with its analysis
// computed lazily and cached until the next edit.
import type { Parser, Tree, Edit, Point } from './parser';
import { createCudaParser, pointAt } from './parser';
import type { AnalysisSnapshot } from './analysisSnapshot';
import { analyzeTree, analyzeTreeInSteps, analyzeTreeWithSnapshot } from './analyze';
import { reanalyzeBodyEdit } from './bodyEdit';
import { FunctionCache } from './functionCache';
import type { FileAnalysis } from './model';
import { MacroTable } from './macros/table';
import { SegmentedText } from './segmentedText';
import { FileOutline, outlineOf } from './outline';
import { withMacros } from './macroContext';

/** An edit as LSP and VS Code describe it: a range in the old text replaced by new text. */
export interface TextChange {
  /** Offset (UTF-16 code units) where the replaced range starts in the old text. */
  start: number;
  /** Length of the replaced range in the old text. */
  length: number;
  text: string;
}

interface Entry {
  /** Segmented: a keystroke rebuilds the segment it lands in, not the file (segmentedText.ts). */
  text: SegmentedText;
  /** `text` as the parser reads it (macros.maskForParse), kept up to date edit by edit. */
  masked: SegmentedText;
  /** Whether `masked` has branches of an unbalanced `#if` group blanked (macros/branches.ts). */
  selects: boolean;
  /** The macros the file sees (its headers' or the built-in table). */
  macros: MacroTable;
  tree: Tree;
  analysis: FileAnalysis | null;
  /** What the parse says about the functions and loops (outline.ts), once asked for; null after an edit. */
  outline: FileOutline | null;
  path: string;
  /** Per-function results of the last analysis: an edit re-analyses only what it touched. */
  cache: FunctionCache;
  /** The last analysis and what it was computed from. */
  snapshot: AnalysisSnapshot | null;
  /** The single edit since the snapshot, with the syntax ranges it changed (fast path). */
  pending: {
    start: number;
    oldEnd: number;
    newEnd: number;
    lineDelta: number;
    removed: string;
    inserted: string;
    changed: { startIndex: number; endIndex: number }[];
  } | null;
  /** More than one edit since the snapshot: analyse the whole file. */
  dirty: boolean;
}

/** UTF-16 code units handed to tree-sitter per read during an incremental parse. */
const PARSE_CHUNK = 256;

/** The point reached after `inserted` text starting at `from` (rows and UTF-16 columns). */
function advance(from: Point, inserted: string): Point {
  const lastNl = inserted.lastIndexOf('\n');
  if (lastNl === -1) return { row: from.row, column: from.column + inserted.length };
  let rows = 0;
  for (let i = inserted.indexOf('\n'); i !== -1; i = inserted.indexOf('\n', i + 1)) rows++;
  return { row: from.row + rows, column: inserted.length - lastNl - 1 };
}

/**
 * The parser reads masked text (macros/mask.ts), which depends on whole lines and on the line
 * after each. A change where masking applies, on its lines or the line before them, is widened
 * to those whole lines, so that the edit tree-sitter is told about covers every masked character
 * that changed.
 */
function widenForMasking(text: SegmentedText, changes: TextChange[], macros: MacroTable): TextChange[] {
  const out: TextChange[] = [];
  changes.forEach((c, k) => {
    const oldEnd = c.start + c.length;
    const b = regionAfter(macros, text, c.start, oldEnd, text.slice(c.start, oldEnd));
    const a = regionAfter(macros, text, c.start, oldEnd, c.text);
    const masks = b.masked !== b.plain || a.masked !== a.plain;
    // Both regions start at the same offset (the text before the change is the same).
    out.push(masks ? { start: b.start, length: b.end - b.start, text: a.plain } : c);
    // The next change is relative to the text after this one.
    if (k < changes.length - 1) text = text.replace(c.start, oldEnd, c.text);
  });
  return out;
}

/**
 * Tells `tree` (already edited to `before`'s offsets) that `before` and `after`, of one length,
 * differ between their first and last differing characters; false when they are the same.
 */
function markDifference(tree: Tree, before: string, after: string, text: string): boolean {
  if (before === after) return false;
  let start = 0;
  while (before.charCodeAt(start) === after.charCodeAt(start)) start++;
  let end = before.length;
  while (end > start && before.charCodeAt(end - 1) === after.charCodeAt(end - 1)) end--;
  const startPosition = pointAt(text, start);
  const endPosition = advance(startPosition, text.slice(start, end));
  tree.edit({
    startIndex: start,
    oldEndIndex: end,
    newEndIndex: end,
    startPosition,
    oldEndPosition: endPosition,
    newEndPosition: endPosition,
  } as Edit);
  return true;
}

/**
 * macros.maskedRegion of the text after [start, oldEnd) of `before` is replaced by `inserted`,
 * around the inserted text, with that region's text as written (`plain`). maskedRegion reads the
 * two lines before the change and the line after it, so a window of a few lines is enough: no
 * copy of the whole file is made (and flattened) on each keystroke.
 */
function regionAfter(
  macros: MacroTable,
  before: SegmentedText,
  start: number,
  oldEnd: number,
  inserted: string,
): { start: number; end: number; masked: string; plain: string } {
  let from = start;
  for (let k = 0; k < 3 && from > 0; k++) from = Math.max(0, before.lastIndexOf('\n', from - 1));
  const lineEnd = before.indexOf('\n', oldEnd);
  const nextEnd = lineEnd === -1 ? -1 : before.indexOf('\n', lineEnd + 1);
  const to = nextEnd === -1 ? before.length : nextEnd + 1;
  const window = before.slice(from, start) + inserted + before.slice(oldEnd, to);
  const r = macros.maskedRegion(window, start - from, start - from + inserted.length);
  return { start: r.start + from, end: r.end + from, masked: r.masked, plain: window.slice(r.start, r.end) };
}

export class CudaDocuments {
  private readonly entries = new Map<string, Entry>();

  private constructor(private readonly parser: Parser) {}

  static async create(): Promise<CudaDocuments> {
    return new CudaDocuments(await createCudaParser());
  }

  /** Parses a whole document from scratch (open, or a change we cannot apply incrementally). */
  open(key: string, text: string, path = key, macros: MacroTable = MacroTable.builtin): FileAnalysis {
    this.openParsed(key, text, path, macros);
    return this.analysis(key)!;
  }

  /**
   * Parses a whole document from scratch and does not analyse it yet: the analysis runs on the
   * first `analysis`, or step by step (analysisSteps).
   */
  openParsed(key: string, text: string, path = key, macros: MacroTable = MacroTable.builtin): void {
    this.close(key);
    const selected = macros.selectBranches(text);
    const masked = macros.maskSelected(selected);
    const tree = this.parser.parse(masked);
    if (!tree) throw new Error('tree-sitter returned no tree');
    this.entries.set(key, {
      text: SegmentedText.of(text),
      masked: SegmentedText.of(masked),
      selects: selected !== text,
      macros,
      tree,
      analysis: null,
      outline: null,
      path,
      cache: new FunctionCache(),
      snapshot: null,
      pending: null,
      dirty: true,
    });
  }

  /** Applies edits in order (each relative to the text after the previous one) and reparses incrementally. */
  update(key: string, changes: TextChange[]): void {
    const entry = this.entries.get(key);
    if (!entry) throw new Error(`document not open: ${key}`);
    let text = entry.text;
    let masked = entry.masked;
    changes = widenForMasking(text, changes, entry.macros);
    let single = changes.length === 1 && !entry.dirty && entry.pending === null && entry.snapshot !== null ? changes[0] : null;
    for (const c of changes) {
      const oldEnd = c.start + c.length;
      const startPosition = text.pointAt(c.start);
      const edit: Edit = {
        startIndex: c.start,
        oldEndIndex: oldEnd,
        newEndIndex: c.start + c.text.length,
        startPosition,
        oldEndPosition: advance(startPosition, text.slice(c.start, oldEnd)),
        newEndPosition: advance(startPosition, c.text),
      } as Edit;
      // Masking keeps every offset and reads a line and the next: re-mask only the lines this
      // change touched and the line before them, not the whole file on every keystroke (a
      // library-style file would pay a full regex pass).
      const r = regionAfter(entry.macros, text, c.start, oldEnd, c.text);
      text = text.replace(c.start, oldEnd, c.text);
      const delta = c.text.length - c.length;
      masked = masked.replace(r.start, r.end - delta, r.masked);
      entry.tree.edit(edit);
    }
    // Which branches of an unbalanced `#if` group are read depends on the whole file, not on
    // the lines changed: where any are (before or after), mask it all again and tell tree-sitter
    // what else changed.
    let reselected = false;
    if (entry.selects || !keepsBranchSelection(entry.text, changes)) {
      const flat = text.toString();
      const selected = entry.macros.selectBranches(flat);
      if (entry.selects || selected !== flat) {
        const full = entry.macros.maskSelected(selected);
        reselected = markDifference(entry.tree, masked.toString(), full, flat);
        masked = SegmentedText.of(full);
        entry.selects = selected !== flat;
      }
    }
    if (reselected) single = null;
    // Small chunks: an incremental parse asks for the text at each place it resumes lexing, and
    // the binding copies every chunk it is given into wasm memory one character at a time.
    const input = masked;
    const tree = this.parser.parse(index => input.chunk(index, PARSE_CHUNK), entry.tree);
    if (!tree) throw new Error('tree-sitter returned no tree');
    if (single) {
      const removed = entry.text.slice(single.start, single.start + single.length);
      const count = (x: string) => {
        let n = 0;
        for (let i = x.indexOf('\n'); i !== -1; i = x.indexOf('\n', i + 1)) n++;
        return n;
      };
      entry.pending = {
        start: single.start,
        oldEnd: single.start + single.length,
        newEnd: single.start + single.text.length,
        lineDelta: count(single.text) - count(removed),
        removed,
        inserted: single.text,
        changed: entry.tree.getChangedRanges(tree).map(r => ({ startIndex: r.startIndex, endIndex: r.endIndex })),
      };
    } else {
      entry.pending = null;
      entry.dirty = true;
    }
    entry.tree.delete();
    entry.tree = tree;
    entry.text = text;
    entry.masked = masked;
    entry.analysis = null;
    entry.outline = null;
  }

  /** Replaces the whole text (e.g. full-sync clients); still reuses the old tree where it can. */
  replace(key: string, text: string): void {
    const entry = this.entries.get(key);
    if (!entry) {
      this.open(key, text);
      return;
    }
    // Diff the common prefix/suffix so tree-sitter can reuse unchanged subtrees.
    const old = entry.text.toString();
    let start = 0;
    const max = Math.min(old.length, text.length);
    while (start < max && old.charCodeAt(start) === text.charCodeAt(start)) start++;
    let oldEnd = old.length;
    let newEnd = text.length;
    while (oldEnd > start && newEnd > start && old.charCodeAt(oldEnd - 1) === text.charCodeAt(newEnd - 1)) {
      oldEnd--;
      newEnd--;
    }
    this.update(key, [{ start, length: oldEnd - start, text: text.slice(start, newEnd) }]);
  }

  analysis(key: string): FileAnalysis | null {
    const entry = this.entries.get(key);
    if (!entry) return null;
    if (!entry.analysis) {
      let snap: AnalysisSnapshot | null = null;
      if (entry.pending && entry.snapshot && !entry.dirty) {
        const p = entry.pending;
        try {
          const text = entry.text;
          snap = reanalyzeBodyEdit(entry.tree, entry.snapshot, p, p.changed, (a, b) => text.slice(a, b), entry.masked);
        } catch {
          snap = null; // any doubt: analyse the whole file
        }
      }
      snap ??= analyzeTreeWithSnapshot(entry.tree, entry.path, entry.cache, entry.macros, entry.masked);
      this.keep(entry, snap);
    }
    return entry.analysis;
  }

  private keep(entry: Entry, snap: AnalysisSnapshot): void {
    entry.snapshot = snap;
    entry.pending = null;
    entry.dirty = false;
    entry.analysis = snap.analysis;
  }

  /**
   * The analysis of a document just opened (openParsed), one device function a step, so that a
   * server can answer requests between steps; the same as `analysis`. Returns null when the
   * document was edited, re-read or closed meanwhile (its next `analysis` is then made whole).
   */
  *analysisSteps(key: string): Generator<void, FileAnalysis | null> {
    const entry = this.entries.get(key);
    if (!entry) return null;
    if (entry.analysis || entry.pending || entry.snapshot) return this.analysis(key);
    const tree = entry.tree;
    const steps = analyzeTreeInSteps(tree, entry.path, entry.cache, entry.macros, entry.masked);
    for (;;) {
      const r = steps.next();
      if (r.done) {
        if (!entry.analysis) this.keep(entry, r.value);
        return entry.analysis;
      }
      yield;
      // Edited, re-read or closed: stop before the old tree (deleted by then) is read again.
      if (this.entries.get(key) !== entry || entry.tree !== tree) return null;
    }
  }

  /** The analysis when it is made, else null: never analyses. */
  analysed(key: string): FileAnalysis | null {
    return this.entries.get(key)?.analysis ?? null;
  }

  /** The document's device functions and loops as the parse alone gives them (outline.ts), without analysing. */
  outline(key: string): FileOutline | null {
    const entry = this.entries.get(key);
    if (!entry) return null;
    entry.outline ??= withMacros(entry.macros, () => outlineOf(entry.tree));
    return entry.outline;
  }

  /**
   * The file's macros changed (an edited `#define` or `#include`, a header changed on disk): the
   * text is masked and parsed again and analysed as a whole. The same table is a no-op.
   */
  setMacros(key: string, macros: MacroTable): boolean {
    const entry = this.entries.get(key);
    if (!entry || entry.macros === macros) return false;
    const text = entry.text.toString();
    const selected = macros.selectBranches(text);
    const masked = macros.maskSelected(selected);
    const tree = this.parser.parse(masked);
    if (!tree) throw new Error('tree-sitter returned no tree');
    entry.tree.delete();
    Object.assign(entry, {
      tree,
      masked: SegmentedText.of(masked),
      selects: selected !== text,
      macros,
      analysis: null,
      outline: null,
      cache: new FunctionCache(),
      snapshot: null,
      pending: null,
      dirty: true,
    });
    return true;
  }

  macros(key: string): MacroTable | undefined {
    return this.entries.get(key)?.macros;
  }

  /** The whole text (built from its segments on the first call after an edit). */
  text(key: string): string | undefined {
    return this.entries.get(key)?.text.toString();
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  /**
   * Whether the document defines a function named `main`: it builds a program by itself. Read
   * from its analysis's function definitions, not by a pattern over the whole text on every
   * CodeLens request.
   */
  definesMain(key: string): boolean {
    if (!this.analysis(key)) return false;
    return this.entries.get(key)?.snapshot?.defs.some(d => d.name === 'main') ?? false;
  }

  tree(key: string): Tree | undefined {
    return this.entries.get(key)?.tree;
  }

  close(key: string): void {
    const entry = this.entries.get(key);
    if (entry) {
      entry.tree.delete();
      this.entries.delete(key);
    }
  }

  /** Parses and analyses a file's text once, keeping nothing (CLI scans). */
  analyzeOnce(text: string, path: string, macros: MacroTable = MacroTable.builtin): FileAnalysis {
    const tree = this.parser.parse(macros.maskForParse(text));
    if (!tree) throw new Error('tree-sitter returned no tree');
    try {
      return analyzeTree(tree, path, undefined, macros);
    } finally {
      tree.delete();
    }
  }
}

const DIRECTIVE = /^[ \t\f\v\r]*#[ \t]*([A-Za-z_]*)/;
const CONDITIONAL_NAME = /^(?:if|elif|else|endif)/;

/** The start of the logical line holding the physical line at `lineStart` (`\` continuations, 256 at most). */
function logicalLineStart(text: SegmentedText, lineStart: number): number {
  for (let k = 0; k < 256 && lineStart > 0; k++) {
    const end = lineStart - 1; // its `\n`
    const last = text.slice(Math.max(0, end - 2), end);
    if (!last.endsWith('\\') && !last.endsWith('\\\r')) break;
    lineStart = text.lastIndexOf('\n', end - 1) + 1;
  }
  return lineStart;
}

/**
 * Whether edits to `text` leave the branches an unbalanced `#if` group selects as they were
 * (macros/branches.ts), so the whole-file reading can be skipped: a file that selected none
 * still selects none. That reading depends on directive lines, brackets, quotes and comments,
 * and on the last code character before each group. An edit qualifies when neither its old nor
 * its new text holds any of those characters nor stands next to one, and either its (logical)
 * line is a directive that is no conditional before or after the edit, or its line is no directive
 * nor a continuation and, unless the edit is white space, no directive or comment follows it with
 * nothing but white space between.
 */
function keepsBranchSelection(text: SegmentedText, changes: TextChange[]): boolean {
  if (changes.length !== 1) return false;
  const c = changes[0];
  const removed = text.slice(c.start, c.start + c.length);
  const risky = /[#{}()[\]"'/*\\\n;:]/;
  if (risky.test(c.text) || risky.test(removed)) return false;
  const lineStart = text.lastIndexOf('\n', c.start - 1) + 1;
  const logical = logicalLineStart(text, lineStart);
  const line = text.slice(logical, Math.min(text.length, logical + 4096));
  // Text of a line that is a `//` comment (or inside a block comment): never code, so never the
  // last code character before a group, and no quote or `#` beside it means anything (a `\` does:
  // a character typed between it and the line's end ends the comment there).
  const comment = logical === lineStart ? /^[ \t\f\v\r]*\/\//.exec(line) : null;
  const inComment = comment !== null && c.start - lineStart >= comment[0].length;
  // Nor may it join or split one: `/` and `*` of a comment mark, a `\` before a newline or a quote, a raw string's prefix.
  // A replacement (a digit typed over another) keeps a character of neither kind between its
  // neighbours, so a `/` or `*` beside it joins or splits no mark (`gj_rows1/2/4/8`).
  const replacement = c.text.length > 0 && c.length > 0;
  const neighbours = inComment ? (replacement ? null : /[/*\\]/) : replacement ? /[#\\"'R]/ : /[#/*\\"'R]/;
  if (neighbours?.test(text.slice(Math.max(0, c.start - 1), c.start) + text.slice(c.start + c.length, c.start + c.length + 1)))
    return false;
  if (inComment) return true;
  const directive = DIRECTIVE.exec(line);
  // The reading skips every directive but the conditionals, whose text it never looks into: an
  // edit of a `#define`, `#include` or `#pragma` (its body, a continuation line, its name) that
  // leaves it no conditional changes nothing it reads. The conditions are decided by the
  // document's macro table, which an edit does not change (the server re-reads it: setMacros).
  if (directive) {
    const at = c.start - logical;
    const edited = DIRECTIVE.exec(line.slice(0, at) + c.text + line.slice(at + c.length));
    return !CONDITIONAL_NAME.test(directive[1]) && edited !== null && !CONDITIONAL_NAME.test(edited[1]);
  }
  if (logical !== lineStart) return false;
  // White space changes no code character, so none before a group either.
  if (!/[^ \t\r\f\v]/.test(c.text) && !/[^ \t\r\f\v]/.test(removed)) return true;
  const after = text.slice(c.start + c.length, c.start + c.length + 512);
  const next = /\S/.exec(after);
  // A comment between: the last code character before a group may be the edited one.
  return next !== null && next[0] !== '#' && next[0] !== '/';
}
