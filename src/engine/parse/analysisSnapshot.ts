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
  /** The macro table it was computed with; a re-analysis uses the same one. */
  macros: MacroTable;
}
