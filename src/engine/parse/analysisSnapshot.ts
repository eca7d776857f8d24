// What an analysis of a file was computed from (for re-analysing one edited function alone).
import type { FileAnalysis } from './model';
import type { ConstScope } from './constEval';
import type { MacroTable } from './macros/table';
import type { FunctionResult } from './analyzeFunction';

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
  /** Matches text that names one of the file's templates with `<` (a possible instantiation). */
  instantiationMention: RegExp | null;
  /** Finds calls of the file's __device__ functions (group 1: the name): a call passes values their parameters' bounds may take. */
  calleeCall: RegExp | null;
  /**
   * With syntax errors: the function that holds all of them, when an edit inside its body put them
   * there (the rest of the file parses as before); null when they may be anywhere.
   */
  errorsIn: { start: number; end: number } | null;
  /** The macro table it was computed with; a re-analysis uses the same one. */
  macros: MacroTable;
}
