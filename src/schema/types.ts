// The one result contract: every result Unroll Lens shows (a kernel sweep, one loop's SASS
// variants, one loop's GPU benchmark) is a SweepResult. The engine builds it, the CLI writes it,
// the server saves and sends it (protocol.ts re-exports these types unchanged), the panel draws it;
// result.ts validates a file of it on load. Types only: every layer may import it.
// one loop's SASS variants and one loop's GPU benchmark are all a SweepResult (the last two
// are one-loop sweeps). Saved as JSON under .unroll-lens/results/ and read back by the panel.

// issue 13: i-cache measured vs predicted (panel)

/**
 * Which of a variant's i-cache entries the panel, CLI and JSON lead with: the measured slowdown
 * (an i-cache slowdown, or no slowdown), the prediction (no GPU run), or `not-icache`: measured
 * slower, but not for the instruction cache (`measured.attribution` says why, issue 22).
 */
type IcacheShown = 'measured' | 'predicted' | 'not-icache';

/**
 * Whether a measured slowdown is the instruction cache's (icache/attribution.ts): `icache`
 * when the hot loop is past the cache and no_instruction is at least 10 % of the stalls and 5
 * points above the reference's; `other` when slower for another reason; `none` when not slower.
 */
export interface IcacheAttribution {
  cause: 'icache' | 'other' | 'none';
  /** One line: "hot loop past the cache (64 KiB); no_instruction 57 % …" or "slower, not i-cache: hot loop fits (0.9 KiB); top stall …". */
  why: string;
  /** The variant's largest stall reason ("selected" aside), from ncu. */
  topStall: { reason: string; share: number } | null;
}

/**
 * One variant's instruction-cache entry: the slowdown predicted from its SASS
 * (icache/model.ts) and, once the GPU has run it, the slowdown and no_instruction share
 * measured, which replace the prediction (`shown`).
 */
export interface VariantIcache {
  /** Bytes of the loop's hot machine code (the innermost machine-code loop holding its work); null when unknown. */
  bytes: number | null;
  /** Predicted slowdown range against the same loop at a size that fits; null without the SASS facts. */
  predicted: { low: number; high: number } | null;
  /** The hot code fits the first cache level (no penalty predicted); null without the SASS facts. */
  fits: boolean | null;
  /** Warps per SM the prediction is for. */
  warpsPerSm: number | null;
  /** Where warpsPerSm comes from: ncu's achieved occupancy of this run, or the theoretical occupancy of the build. */
  warpsSource: 'achieved' | 'theoretical' | null;
  /** How the loop's SASS reads: "FFMA, 4 chains". */
  shape: string | null;
  /** Where the numbers come from, in one line. */
  basis: string;
  /**
   * Label of the variant measured slowdowns are against: the most unrolled measured variant whose
   * hot code fits, else the rolled one (×1), else the fastest; null when fewer than two variants
   * were measured (nothing to compare with).
   */
  reference: string | null;
  /** From the GPU run: this median ÷ the reference's, and no_instruction's share of the stall cycles (ncu); null without a reference. */
  measured: {
    slowdown: number;
    noInstruction: number | null;
    /** What the slowdown is put down to; absent in results saved before issue 22. */
    attribution?: IcacheAttribution;
  } | null;
  shown: IcacheShown;
}

/** An unroll factor as results write it: no pragma ("default"), a full unroll, or ×N. */
export type FactorValue = 'default' | 'full' | number;

/** Where a variant was measured (a Slurm sweep's node): results of different GPU models are not one ranking. */
export interface MeasuredOn {
  host: string;
  /** GPU model as nvidia-smi names it; null when the node has none it could read (a launcher, a stand-in). */
  gpu: string | null;
  /** SM and memory clocks at the run, and their maxima, MHz (nvidia-smi); null when unread. */
  clocks: { smMHz: number | null; memMHz: number | null; maxSmMHz: number | null; maxMemMHz: number | null } | null;
  /** The Slurm job and array task: `1234_5`. */
  job: string | null;
}

/** Where a variant's measurement stopped, if it did not finish (`ok`): the one status every layer uses. */
export type RunStatus = 'ok' | 'compile' | 'runtime' | 'timeout' | 'correctness' | 'profile' | 'cancelled';
/** A sweep row's status: a run status, or `pending` while the sweep has not reached it. */
export type SweepVariantStatus = RunStatus | 'pending';

export interface SweepLoop {
  /** 1-based line of the loop keyword in `SweepResult.file`. */
  line: number;
  /** The factor the loop has as written. */
  written: FactorValue;
  /** Constant trip count, or why it is not one. */
  tripCount: number | 'runtime' | 'dependent' | null;
  /** The pragma as written (`unroll 4`), or null. */
  pragma: string | null;
}

// issue 13: recommended factor (recommend)
/** One loop's hot machine code for the instruction-cache model (the engine's IcacheLoopFacts, structurally). */
export interface SweepIcacheFacts {
  bytes: number;
  issue: {
    instructions: number;
    latencyCycles: number;
    pipes: Partial<Record<string, number>>;
    mainOpcode: string;
    chains: number;
    loads: number;
  };
}

export interface SweepVariant {
  /** Stable id from factors and params: `40=4,52=full`, `40=4|BLOCK=8`, or `BLOCK=8` without loop axes; `as-written` for the file as written. */
  id: string;
  /** Short human label: `×4`, `full`, `default`, `L40 ×4 · L52 full · BLOCK=8`, `as written`. */
  label: string;
  /** Loop line → factor; empty for the file as written. */
  factors: Record<string, FactorValue>;
  /**
   * Extra axes: macro values (`BLOCK` → `8`) or template arguments (`BODY` → `2048`: the point
   * measured `kernel<2048>`); empty for the file as written (first value of each template axis).
   */
  params: Record<string, string>;
  status: SweepVariantStatus;
  message: string | null;
  /** Mangled name of the kernel holding the loops. */
  kernel: string | null;
  /**
   * The instantiation measured, demangled with its template arguments (`void k<64>(float*)`); one
   * function for every row of a sweep unless a template parameter is swept (absent in results
   * saved before it, and in rows that measured nothing).
   */
  instantiation?: string | null;
  kernelInstructions: number | null;
  kernelBytes: number | null;
  /** Per loop line: SASS instructions attributed to the loop's lines (16 bytes each on sm_70+). */
  loopInstructions: Record<string, number | null>;
  /** Per loop line: copies of one iteration nvcc emitted in the hot machine-code loop. */
  effectiveUnroll: Record<string, number | null>;
  /** Per loop line: no machine-code loop remains. */
  fullyUnrolled: Record<string, boolean>;
  registers: number | null;
  spillStores: number | null;
  spillLoads: number | null;
  /** Theoretical occupancy (0..1) at the block size used for the estimate. */
  occupancy: number | null;
  // issue 13: recommended factor (recommend)
  /** Per loop line: the hot machine code the instruction-cache model reads (absent in results saved before it). */
  hotCode?: Record<string, SweepIcacheFacts | null>;
  /** Id of an earlier variant whose machine code is identical: measured once, reported as that one. */
  identicalTo: string | null;
  compileMs: number | null;
  // GPU measurements: null (samples 0) in a static sweep.
  samples: number;
  medianMs: number | null;
  q1Ms: number | null;
  q3Ms: number | null;
  iqrMs: number | null;
  cv: number | null;
  /** Baseline median / this median (> 1: faster than the baseline). */
  speedup: number | null;
  /** The IQRs of this variant and the baseline overlap. */
  withinNoise: boolean | null;
  /** Warp-stall reasons as shares of all stalls (`no_instruction`, `long_scoreboard`, …). */
  stallShare: Record<string, number> | null;
  /** Achieved occupancy, % of peak (ncu). */
  achievedOccupancy: number | null;
  /** Instruction-cache slowdown, measured or predicted (absent in results saved before issue 13). */
  icache?: VariantIcache | null;
  /** Warp instructions executed by one launch (ncu smsp__inst_executed.sum); absent in results saved before it. */
  executedInstructions?: number | null;
  /** Instructions one thread executed on average (ncu smsp__thread_inst_executed.sum ÷ grid × block); absent before it was measured. */
  instructionsPerThread?: number | null;
  /** All threads' instructions ÷ the elements a launch processes (`--elements`); absent when not named. */
  instructionsPerElement?: number | null;
  /** The GPU measurement came from the measurement cache (an earlier run of the same program), not a new run. */
  cached?: boolean;
  /**
   * Where its GPU numbers were measured, when not on this machine (a Slurm sweep's compute node,
   * issue 28): the node's host name, GPU model and clocks at the run, and the job task.
   */
  measuredOn?: MeasuredOn;
  /**
   * The timed kernel's durations, ms, in the order measured (`samples` of them; adaptive sampling
   * adds the later rounds' after the first): what the bootstrap of SweepResult.confidence resamples.
   * Absent in static results and in results saved before issue 25.
   */
  durationsMs?: number[];
  /**
   * When every kernel holding the loop is timed (a benchmark: template instantiations, and block
   * sizes when one kernel runs with several): each one's timing in this variant. The variant's own
   * fields above are the first (the kernel with most of the loop's code in the file as written).
   */
  instantiations?: InstantiationTiming[];
}

/** What a GPU measurement was taken with, and under which conditions. */
export interface MeasurementConditions {
  /** ncu (Nsight Compute replaying each launch) or cupti (the program run as itself with our CUPTI kernel timer). */
  tool: 'ncu' | 'cupti';
  /** base: ncu locked the clocks to base; as-is: the GPU's own clocks (boost, throttling). */
  clocks: 'base' | 'as-is';
  /** flushed: every cache emptied before each timed launch (ncu's default); warm: as the program leaves them between launches. */
  caches: 'flushed' | 'warm';
  /**
   * The CUPTI timer's clock: gpu-time, each launch's gpu__time_duration (the counter ncu reports)
   * read in the program's own run; kernel-record, CUPTI's kernel record's span (about 0.6 µs a
   * launch longer than ncu on an H200, docs/measurements.md: short kernels read long); mixed, some
   * variants each. Absent: ncu, or a result saved before it was recorded.
   */
  duration?: 'gpu-time' | 'kernel-record' | 'mixed';
}

/** One kernel's (and block size's) timing within a variant, when a benchmark times every kernel holding the loop. */
export interface InstantiationTiming {
  /** Mangled name. */
  kernel: string;
  /** `(x, y, z)` when the kernel runs with several block sizes, else null. */
  blockSize: string | null;
  /** SASS instructions of this kernel in the variant's build. */
  kernelInstructions: number | null;
  registers: number | null;
  samples: number;
  medianMs: number | null;
  q1Ms: number | null;
  q3Ms: number | null;
  iqrMs: number | null;
  cv: number | null;
  /** The same kernel's median in the baseline / this median; in a comparison, the baseline kernel's median / this median. */
  speedup: number | null;
  withinNoise: boolean | null;
  stallShare: Record<string, number> | null;
  achievedOccupancy: number | null;
  executedInstructions: number | null;
  /** Instructions one thread executed on average (ncu); absent in results saved before it. */
  instructionsPerThread?: number | null;
  /** All threads' instructions ÷ the elements a launch processes (`--elements`); absent when not named. */
  instructionsPerElement?: number | null;
  /** A compared kernel's register spill bytes (ptxas -v); absent for a benchmark's instantiations. */
  spillStores?: number | null;
  spillLoads?: number | null;
}

/** Warp-stall samples of one SASS instruction (ncu source page). */
export interface SassInstructionStalls {
  /** Bytes from the start of the function (a multiple of 16 on sm_70 and newer). */
  offset: number;
  /** The instruction as ncu printed it, trimmed; branch targets inside the function as offsets. */
  text: string;
  /** "Warp Stall Sampling (All Samples)" of this instruction. */
  samples: number;
  /** Samples per stall reason (canonical names, see canonicalStallReason), zeros omitted. */
  stalls: Record<string, number>;
}

/** The warp-stall samples per SASS instruction of one kernel, from one GPU run. */
export interface SassStalls {
  /** The kernel as the page names it (demangled, with ncu's "(int)" casts). */
  kernel: string;
  /**
   * The program that was sampled: "as-written" (the bench samples the file as written), a
   * variant's label, or null when unknown (a page read from a file).
   */
  factor: string | null;
  /** Sum of the instructions' samples. */
  totalSamples: number;
  /** Every instruction of the function, in address order. */
  instructions: SassInstructionStalls[];
}

/** What a bench or GPU sweep run cost, in seconds (docs/cli.md, `timing`). */
export interface RunTiming {
  /** Start to end of the whole run. */
  wallS: number;
  /** nvcc time summed over every compile (cubins and programs; parallel compiles overlap, so it can exceed wallS). */
  compileS: number;
  /** Time spent checking results against the file as written's output (and the project's check command); the output comes from the ncu run. */
  checkS: number;
  /** GPU-side time spent in ncu timing and stall runs (summed over GPUs). */
  profileS: number;
  /** Time each GPU ran nothing between its first ncu run's start and its last one's end (waiting for builds, mostly), summed over GPUs. */
  gpuIdleS: number;
  /** Program and ncu processes started on the GPU; 0 when every measurement came from the cache. */
  gpuRuns: number;
  /** GPUs used (CUDA device indices; null: the default device). */
  gpus: (number | null)[];
  /**
   * A Slurm sweep (issue 28): compileS is the builds on the submitting machine; checkS, profileS,
   * gpuIdleS and gpuRuns are summed over the `reported` tasks that wrote their cost when they
   * ended (of `tasks` this run waited for); queueS and taskS are the time they waited in the queue
   * (submission to start) and ran, summed; null where no task said.
   */
  slurm?: { tasks: number; reported: number; queueS: number | null; taskS: number | null };
}

/** Warp-stall samples of one source line of the file as written (ncu SourceCounters, one launch). */
export interface SourceLineStalls {
  /** 1-based line of the swept file. */
  line: number;
  samples: number;
  /** Each reason's fraction of this line's stall samples. */
  stallShare: Record<string, number>;
}

export interface SweepResult {
  /** Format version of this JSON. */
  schema: 1;
  /** Absolute path of the source file. */
  file: string;
  /** Source name of the kernel. */
  kernel: string;
  /** 1-based line of the kernel definition. */
  kernelLine: number;
  loops: SweepLoop[];
  arch: string;
  nvcc: string | null;
  /** GPU name when measured on one. */
  gpu: string | null;
  /** No GPU measurements (SASS, registers and occupancy only). */
  static: boolean;
  /** `exhaustive`, or the search strategy's name. */
  strategy: string;
  /** What produced it: a kernel sweep, one loop's SASS variants, or one loop's GPU benchmark. */
  origin: 'sweep' | 'variants' | 'bench' | 'compare';
  /** ISO time the run started. */
  createdAt: string;
  /** The factor set swept. */
  factors: FactorValue[];
  /** Extra axes and their values. */
  params: Record<string, string[]>;
  /** Points in the whole space (factor combinations × parameter values). */
  spaceSize: number;
  /** Variants built (and, on a GPU, measured) so far. */
  evaluations: number;
  /** Id of the variant speedups are relative to. */
  baseline: string;
  /** Id of the best variant, or null when none finished. */
  best: string | null;
  /** How `best` was chosen (fastest median on the GPU, or the static rule). */
  bestBasis: string | null;
  /** Instruction-cache budget for `arch`, bytes, and where it comes from. */
  icacheBudgetBytes: number;
  icacheBudgetNote: string;
  // issue 13: recommended factor (recommend)
  /**
   * How the static rule judges the instruction cache: 'model' (predicted slowdown, icache/model.ts)
   * or 'budget' (icacheBudgetBytes, an explicit override); absent in results saved before the model: 'budget'.
   */
  icacheRule?: 'model' | 'budget';
  /** Warps per SM the model assumed; null: each variant's theoretical occupancy. */
  warpsPerSm?: number | null;
  variants: SweepVariant[];
  notes: string[];
  /** False while running, and after a cancel. */
  complete: boolean;
  /** What the run cost (absent in results saved before it was recorded). */
  timing?: RunTiming;
  /**
   * sha256 (hex) of the source text that was swept: Apply edits a document only while its text
   * is this one (or this one with other factors on the swept loops). Absent in older results.
   */
  sourceSha256?: string;
  /**
   * Warp stalls per source line of the file as written (--source-stalls, unrollLens.profile.sourceStalls):
   * from the CUPTI timer's PC samples of its timed run, else one more ncu run of its program
   * (lineStallsSource); absent when not asked for or in results saved before.
   */
  lineStalls?: SourceLineStalls[] | null;
  /** Why lineStalls is null although they were asked for. */
  lineStallsProblem?: string | null;
  /**
   * Where lineStalls and sassStalls came from: the CUPTI timer's PC samples of the file as
   * written's timed run (no extra run), or one more ncu run (its source page); absent with them.
   */
  lineStallsSource?: 'pc-sampling' | 'ncu';
  /**
   * The same run's samples per SASS instruction of the timed kernel (every instruction, so a
   * listing can check it shows the machine code that was sampled); absent when not collected.
   */
  sassStalls?: SassStalls | null;
  /** How ncu set the clocks for the GPU measurements: locked to base, or left to the GPU (absent: static, or saved before). */
  clockControl?: 'base' | 'none';
  /** What timed the kernels and under which conditions (absent: static, or saved before it was recorded). */
  measurement?: MeasurementConditions;
  /** Mangled → demangled name of every kernel timed (a benchmark's instantiations); absent when not recorded. */
  demangled?: Record<string, string>;
  /**
   * A kernel comparison (origin 'compare'): the mangled name of the kernel the instantiations'
   * speedups are against (null: it has no time); absent in every other result.
   */
  compareBaseline?: string | null;
  /** A kernel comparison: each compared kernel's definition line (mangled name → 1-based line), where a row click goes. */
  compareLines?: Record<string, number>;
  /**
   * How sure the GPU measurements are of `best` (issue 25): whether it is distinguishable from the
   * file as written, which decides whether Apply best is offered. Absent in static results, when no
   * variant has durations, and in results saved before it (Apply best is then offered as before).
   */
  confidence?: SweepConfidence;
}

/** Why adaptive sampling (--max-samples, unrollLens.profile.maxSamples) stopped timing the leading variants again. */
export type SamplingStop = 'leader certain' | 'max samples reached' | 'no new samples' | 'cancelled';

/**
 * A bootstrap over the variants' kernel durations (engine/sweep/confidence.ts): each variant's
 * durations resampled with replacement `resamples` times by a generator seeded with `seed` (the
 * same durations give the same numbers), the medians compared resample by resample. Intervals are
 * the central `level` share of the resampled ratios (percentile bootstrap).
 */
export interface SweepConfidence {
  method: 'bootstrap';
  resamples: number;
  seed: number;
  /** Two-sided level of every interval (0.95). */
  level: number;
  /** The variant judged: SweepResult.best. */
  best: string;
  /** The file as written's median ÷ best's (> 1: best is faster) and its interval; null when the file as written has no durations. */
  ratio: number | null;
  ratioLow: number | null;
  ratioHigh: number | null;
  /** The smallest gain that counts: separate runs of one program drift by up to this share (RUN_DRIFT). */
  minGain: number;
  /** best is faster than the file as written beyond noise: ratioLow > 1 and ratio ≥ 1 + minGain. Apply best is offered only then. */
  distinguishable: boolean;
  /** One line: "×4 is faster than the file as written by 1.23× (95% CI 1.18–1.29)", or why the code as written is as fast. */
  reason: string;
  /** The leading variants best is ranked among (distinct programs, fastest median first, best first). */
  contenders: string[];
  /** Share of resamples in which best has the smallest median of the contenders (ties shared); 1 with one contender. */
  pFirst: number;
  /** The second contender, and its median ÷ best's with its interval (> 1: slower than best); null with one contender. */
  runnerUp: string | null;
  leadRatio: number | null;
  leadLow: number | null;
  leadHigh: number | null;
  /** Adaptive sampling: the first round's durations per variant, the most any variant may get, rounds after the first, why it stopped; absent when off. */
  sampling?: { minSamples: number; maxSamples: number; rounds: number; stopped: SamplingStop };
}
