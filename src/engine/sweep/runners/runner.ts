// A runner turns sweep points into measured variants: statically (SASS only) or on a GPU.
import type { MeasurementConditions, RunTiming, SassStalls, SourceLineStalls, SweepVariant } from '../../../schema/types';
import type { SweepPoint } from '../space';
import type { CodeRegistry } from '../variant';
import type { SweepPhase } from '../../../schema/progress';

/** Where a GPU step runs and how far its timing is: for progress bars and time-left estimates. */
export interface PhaseAt {
  /** CUDA device index, null for the default device. */
  gpu: number | null;
  /** Kernel durations collected so far for this point, and wanted. */
  samples?: number;
  samplesWanted?: number;
}

export interface RunnerContext {
  signal?: AbortSignal;
  /** Identical-code detection across everything this sweep measured. */
  registry: CodeRegistry;
  onPhase?(point: SweepPoint, phase: SweepPhase, detail?: string, at?: PhaseAt): void;
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
  /**
   * Times variants it measured before again (adaptive sampling): `samples` more kernel durations
   * each, added to those they have; returns them updated, in order. A run that fails leaves its
   * variant as it was. Only runners that time programs have it.
   */
  measureAgain?(requests: { variant: SweepVariant; samples: number }[], ctx: RunnerContext): Promise<SweepVariant[]>;
  /**
   * Whether the variant's GPU time ranks with the file as written's (a Slurm sweep whose points
   * ran on different GPU models: only those on the file as written's model); absent: all do.
   */
  comparable?(v: SweepVariant): boolean;
  /** The CUPTI timer's clock over every variant timed so far (measurement.duration); absent or null: not the CUPTI timer. */
  durationSource?(): MeasurementConditions['duration'] | null;
  /** What the result should say about how it measured (a missing disassembler, …). */
  notes(): string[];
  /** Mangled → demangled name of every kernel a benchmark timed; absent otherwise. */
  readonly demangled?: Record<string, string>;
  /** Points measured at once (GPU slots); absent: one. */
  readonly parallel?: number;
  /** What its measurements cost so far (the sweep adds the wall time). */
  cost(): Omit<RunTiming, 'wallS'>;
  /**
   * Warp stalls per source line of the file as written (`text`), from one more run of its
   * program; only runners that run programs have it. A failure is `problem`, never thrown.
   */
  sourceStalls?(
    text: string,
    signal?: AbortSignal,
  ): Promise<{
    lineStalls: SourceLineStalls[] | null;
    sassStalls: SassStalls | null;
    problem: string | null;
    cached: boolean;
    /** Where lineStalls came from: the CUPTI timer's PC samples of the timed run, or one more ncu run. */
    source?: 'pc-sampling' | 'ncu';
  }>;
}
