// What a manual-unroll detector is: one module per pattern (stridedBody, warpTail, coarsening,
// offsetRun), each turning one function's statement lists into candidate findings. The driver
// (findManualUnrolls in ../manualUnroll.ts) runs them in a fixed order and settles overlaps.
import type { ManualUnroll, ManualUnrollPattern } from '../model';
import type { Analyzer } from './diff';
import type { Run } from './runs';
import type { FunctionScan } from './statements';

/** A finding with its 0-based row span, which is what overlap checks compare. */
export interface Candidate extends ManualUnroll {
  startRow: number;
  endRow: number;
}

export interface Span {
  startRow: number;
  endRow: number;
}

export function overlaps(a: Span, b: Span): boolean {
  return a.startRow <= b.endRow && b.startRow <= a.endRow;
}

/** What a detector sees of one function. */
export interface DetectContext {
  /** Compares statements; its caches are shared by every detector of the function. */
  readonly an: Analyzer;
  readonly scan: FunctionScan;
  /** No finding kept so far (by the detectors that ran before) covers a row of `span`. */
  isFree(span: Span): boolean;
  /** Uniform runs of copies in every statement list (runs.ts `uniformRuns`), found on first use and shared. */
  runs(): Run[];
}

export interface ManualUnrollDetector {
  readonly pattern: ManualUnrollPattern;
  /**
   * How the driver treats candidates that overlap earlier findings. 'first-wins': a candidate is
   * kept only when no finding kept so far overlaps it, checked one at a time in the order
   * returned. 'keep-all': every candidate is kept; the detector asks ctx.isFree itself where it
   * matters (nested strided loops are both reported).
   */
  readonly overlap: 'first-wins' | 'keep-all';
  /** Candidates in the order found. May throw: the driver then keeps what was found before. */
  detect(ctx: DetectContext): Candidate[];
}
