// What an analysis of a file was computed from (for re-analysing one edited function alone).
import type { FileAnalysis } from './model';
import type { ConstScope } from './constEval';
import type { MacroTable } from './macros/table';
import type { FunctionResult } from './analyzeFunction';
import type { CallGraph, FunctionDef } from './callGraph';
import type { OutsideBodies } from './fileIndex';

/**
 * What an analysis was computed from, so that an edit inside one function body can re-analyse
 * that function alone (see reanalyzeBodyEdit).
 */
export interface AnalysisSnapshot {
  analysis: FileAnalysis;
  functions: { start: number; end: number; bodyStart: number; bodyEnd: number; name: string; result: FunctionResult }[];
  fileScope: ConstScope;
  /** What its file index read outside function bodies: kept by edits inside a body (bodyEdit.ts). */
  outsideBodies: OutsideBodies;
  instantiations: Map<string, string[][]>;
  /** The file's function definitions as the call graph sees them (callGraph.ts), in the analysed text's offsets. */
  defs: FunctionDef[];
  /** With syntax errors, the extent of the one function that holds them all, where known (bodyEdit.ts). */
  errorScope?: { start: number; end: number };
  /** Their call graph, built on first use and kept while edits only move definitions. */
  graph?: CallGraph;
  /** Matches text that names one of the file's templates with `<` (a possible instantiation), or at all for one with none read (Kernel.usedUnread). */
  templateMention: RegExp | null;
  /** Matches text that calls one of the file's non-kernel functions (`f(`, `f<`); group 1 is the name. */
  calleeMention: RegExp | null;
  /** The macro table it was computed with; a re-analysis uses the same one. */
  macros: MacroTable;
}
