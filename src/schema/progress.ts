// A running sweep's progress, as the engine reports it and the CLI and the editor show it: in the
// schema leaf because the GPU stages (engine/gpu/) report it below the sweep that words it.

/** Where one point's evaluation is: for progress messages. */
export type SweepPhase = 'build' | 'disassemble' | 'check' | 'time' | 'stalls' | 'reuse' | 'cached';

export interface SweepProgress {
  /** One line: `[12/25] L70 ×4 · L74 full: timing`. */
  message: string;
  phase: SweepPhase | 'start' | 'done' | 'source-stalls';
  /** Variant id the step belongs to, or null for the sweep as a whole. */
  variant: string | null;
  /** Variants finished. */
  done: number;
  /**
   * Variants in all: exact, or with `atMost` an upper bound that shrinks as the strategy learns
   * and equals `done` when the sweep ends.
   */
  total: number;
  /** `total` is an upper bound, not the count: the sweep may finish below it (shown `[3/≤38]`). */
  atMost?: boolean;
  /** CUDA device index the step runs on (null: the default device, or not a GPU step). */
  gpu?: number | null;
  /** Kernel durations collected so far for this variant, and wanted (GPU timing steps). */
  samples?: number;
  samplesWanted?: number;
  /** Seconds since the sweep started. */
  elapsedS?: number;
  /** Estimated seconds left; null until one variant has been measured on the GPU. */
  etaS?: number | null;
}
