// A runner turns sweep points into measured variants: statically (SASS only) or on a GPU.
import type { RunTiming, SourceLineStalls, SweepVariant } from '../../../schema/types';
import type { SweepPoint } from '../space';
import type { CodeRegistry } from '../variant';

/** Where one point's evaluation is: for progress messages. */
export type SweepPhase = 'build' | 'disassemble' | 'check' | 'time' | 'stalls' | 'reuse' | 'cached';

export interface RunnerContext {
  signal?: AbortSignal;
  /** Identical-code detection across everything this sweep measured. */
  registry: CodeRegistry;
  onPhase?(point: SweepPoint, phase: SweepPhase, detail?: string): void;
  /** Each finished variant, in the order of the points. */
  onVariant?(v: SweepVariant): void;
}

export interface SweepRunner {
  /** True: SASS, registers and occupancy only. */
  readonly static: boolean;
  /** GPU name when measuring on one. */
  readonly gpu: string | null;
  /**
   * Measures the points (a batch: builds may run in parallel). Results keep the points' order;
   * a point cut short by cancellation comes back with status 'cancelled'.
   */
  measure(points: SweepPoint[], ctx: RunnerContext): Promise<SweepVariant[]>;
  /** What the result should say about how it measured (a missing disassembler, …). */
  notes(): string[];
  /** What its measurements cost so far (the sweep adds the wall time). */
  cost(): Omit<RunTiming, 'wallS'>;
  /**
   * Warp stalls per source line of the file as written (`text`), from one more run of its
   * program; only runners that run programs have it. A failure is `problem`, never thrown.
   */
  sourceStalls?(text: string, signal?: AbortSignal): Promise<{ lineStalls: SourceLineStalls[] | null; problem: string | null }>;
}
