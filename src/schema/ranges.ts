// The ranges of every number Unroll Lens accepts from outside (command-line options, settings,
// saved result files, messages to the results panel, ncu's CSV, Apply), in one place. A number
// outside its range is an error naming the field and the value, never clamped: a forged or
// damaged file must not be shown as a measurement, and a typo must not silently become a cap.
// Pure on purpose (no Node APIs, no vscode): the engine, the server, the CLI, the extension and
// the webview bundle all import it.

export interface NumberRange {
  /** What the number is, in words, for messages: "an unroll factor". */
  what: string;
  integer: boolean;
  min: number;
  /** `min` itself is impossible (a duration of 0 ns was never measured). */
  minExclusive?: boolean;
  max: number;
}

const int = (what: string, min: number, max: number): NumberRange => ({ what, integer: true, min, max });
const real = (what: string, min: number, max: number, minExclusive = false): NumberRange => ({
  what,
  integer: false,
  min,
  max,
  minExclusive,
});

/** Largest count we take for anything counted (instructions, bytes, samples taken, sweep points): exact in a double. */
const COUNT_MAX = Number.MAX_SAFE_INTEGER;
/** One day in ms: longer than any kernel launch or tool run we would wait for (Node's timers stop at 24.8 days). */
const DAY_MS = 86_400_000;

/**
 * Largest source file read, by the CLI and the language server alike (the biggest real .cu files
 * are a few MB; a larger one is generated, or not CUDA at all).
 */
export const MAX_SOURCE_BYTES = 32 * 1024 * 1024;

export const RANGES = {
  /**
   * `#pragma unroll N`: nvcc needs an integral constant > 0 and ignores one past 2^31-1 (warning
   * 20167). We build at most 4096: past it a pragma only makes nvcc slower (a loop with more
   * iterations than that is studied with `full`), and a larger number would be printed into the
   * pragma in exponent form (1e+23), which nvcc rejects.
   */
  unrollFactor: int('an unroll factor', 1, 4096),
  /**
   * A factor a source file may spell and nvcc honours (a loop as written, and Apply writing it
   * back): 1 to 2^31-1. nvcc ignores 0, negatives and larger values (warnings 20167, 20168), so a
   * loop written so reads as `default`.
   */
  writtenUnrollFactor: int('an unroll factor nvcc honours', 1, 2_147_483_647),
  /**
   * Kernel durations per variant (--samples, unrollLens.profile.samples). Each is one timed launch
   * (the CUPTI timer's record; with --timer ncu, a launch profiled under ncu, a replay per metric
   * pass); a bench stops after 50 program runs, and past
   * 1000 samples the median of a stable kernel does not move while a sweep takes hours.
   */
  samples: int('kernel durations per variant', 1, 1000),
  /**
   * The most kernel durations adaptive sampling gives one variant (--max-samples,
   * unrollLens.profile.maxSamples): 0 = off; the same 1000 as `samples` above it.
   */
  maxSamples: int('the most kernel durations per variant (0 = off)', 0, 1000),
  /** Launches skipped before timing in each run (with --timer ncu, ncu --launch-skip); more than 1000 is a typo. */
  warmup: int('warm-up launches', 0, 1000),
  /**
   * Parallel nvcc processes (--jobs, unrollLens.jobs; 0 = the number of CPU cores). Each nvcc of
   * a large translation unit holds 0.5–2 GB: past 64 at once no workstation builds faster, and
   * `--jobs 1000` would start one nvcc per variant at once.
   */
  jobs: int('parallel nvcc processes', 0, 64),
  /** 1-based line of a source file; ten million lines is far past any file we parse. */
  sourceLine: int('a 1-based source line', 1, 10_000_000),
  /** A kernel's duration in ms: measured, so > 0, and shorter than a day. */
  durationMs: real('a kernel duration in ms', 0, DAY_MS, true),
  /** The same in ns, as ncu prints it. */
  durationNs: real('a kernel duration in ns', 0, DAY_MS * 1e6, true),
  /** A spread of durations (IQR) in ms: 0 when every sample was equal. */
  spreadMs: real('a spread of durations in ms', 0, DAY_MS),
  /** Coefficient of variation of the durations. */
  cv: real('a coefficient of variation', 0, 1e6),
  /** A ratio of two measured durations (speedup, slowdown): both > 0, so > 0. */
  ratio: real('a ratio of two durations', 0, 1e9, true),
  /** Registers per thread: the hardware has 255 (R0..R254) at most. */
  registers: int('registers per thread', 0, 255),
  /** Spill stores or loads (bytes ptxas reports). */
  spills: int('spill bytes', 0, COUNT_MAX),
  /** SASS instructions (static count or executed). */
  instructions: int('an instruction count', 0, COUNT_MAX),
  bytes: int('a size in bytes', 0, COUNT_MAX),
  /** Warp instructions one launch executed (ncu's mean over the launches profiled, so not always whole). */
  executedInstructions: real('executed warp instructions', 0, 1e18),
  /** Thread instructions over the launch's threads (a mean, so not whole). */
  instructionsPerThread: real('instructions per thread', 0, 1e15),
  /** Theoretical occupancy: active warps ÷ the SM's maximum; 0 when the launch cannot run at all. */
  occupancy: real('an occupancy (0..1)', 0, 1),
  /** Achieved occupancy as ncu prints it, in % of peak. */
  percent: real('a percentage', 0, 100),
  /** A fraction of a whole (a stall reason's share of all stalls). */
  share: real('a share (0..1)', 0, 1),
  /** Resident warps per SM: every architecture we know has at most 64 (sm_70..sm_120). */
  warpsPerSm: real('warps per SM', 0, 64),
  /** Copies of one source iteration nvcc emitted in a machine-code loop (observed, not requested). */
  observedUnroll: real('an observed unroll', 0, 1e6),
  /** Anything counted: sweep points, evaluations, samples taken, GPU runs. */
  count: int('a count', 0, COUNT_MAX),
  /** Seconds a run cost (summed over processes, so it may exceed the wall time). */
  seconds: real('seconds', 0, 1e9),
  /** Milliseconds a compile took. */
  elapsedMs: real('milliseconds', 0, 1e12),
  /** Latency cycles of one machine-code loop pass, and per-pipe issue counts (model inputs). */
  cycles: real('a cycle count', 0, 1e12),
  /** A CUDA device index. */
  gpuIndex: int('a CUDA device index', 0, 1023),
} as const satisfies Record<string, NumberRange>;

/** "an integer from 1 to 4096", "a number > 0 and ≤ 86400000". */
export function describeRange(r: NumberRange): string {
  const kind = r.integer ? 'an integer' : 'a number';
  if (r.minExclusive) return `${kind} > ${r.min} and ≤ ${r.max}`;
  return `${kind} from ${r.min} to ${r.max}`;
}

/** A value as a message shows it: numbers as JavaScript prints them (NaN, -0, Infinity), the rest as JSON, cut short. */
export function shownValue(value: unknown): string {
  if (typeof value === 'number') return Object.is(value, -0) ? '-0' : String(value);
  if (value === undefined) return 'missing';
  let s: string;
  try {
    s = JSON.stringify(value) ?? String(value);
  } catch {
    s = String(value);
  }
  return s.length > 60 ? `${s.slice(0, 57)}…` : s;
}

/** Why `value` is not a number in `r`, or null when it is. -0 counts as 0. */
export function rangeProblem(r: NumberRange, value: unknown): string | null {
  const ok =
    typeof value === 'number' &&
    Number.isFinite(value) &&
    (!r.integer || Number.isInteger(value)) &&
    (r.minExclusive ? value > r.min : value >= r.min) &&
    value <= r.max;
  return ok ? null : `expected ${describeRange(r)} (${r.what}), got ${shownValue(value)}`;
}

// ---------------------------------------------------------------------------------------------
// Unroll factors: `default` (no pragma), `full` (bare `#pragma unroll`) or an integer in range.

export type UnrollFactorValue = 'default' | 'full' | number;

/** "default, full or an integer from 1 to 4096". */
export const UNROLL_FACTOR_EXPECTED = `default, full or an integer from ${RANGES.unrollFactor.min} to ${RANGES.unrollFactor.max}`;

/**
 * The JSON-schema pattern of a factor written as text (settings): the words, or a decimal integer
 * from 1 to 4096 without sign, exponent or leading zero. test/unit/forgedNumbers.test.ts checks
 * it against `unrollFactorProblem` for every integer text up to 10^5.
 */
export const UNROLL_FACTOR_PATTERN = '^(default|full|[1-9][0-9]{0,2}|[1-3][0-9]{3}|40[0-8][0-9]|409[0-6])$';

/**
 * The factors built for a loop when nobody chose others: the unrollLens.unrollFactors setting's
 * default, hence the CLI's --factors default, and the engine's UnrollFactors.DEFAULT. One list,
 * kept here because the settings declaration (which the client reads too) cannot import the engine.
 */
export const DEFAULT_UNROLL_FACTORS: readonly UnrollFactorValue[] = ['default', 1, 2, 4, 8, 16, 'full'];

/**
 * Why `value` (from a result file or a message: a number or a word) is not an unroll factor, or
 * null. `range` is RANGES.unrollFactor for what we build; RANGES.writtenUnrollFactor for a factor
 * as a source file has it.
 */
export function unrollFactorProblem(value: unknown, range: NumberRange = RANGES.unrollFactor): string | null {
  if (value === 'default' || value === 'full') return null;
  if (typeof value === 'number' && !rangeProblem(range, value)) return null;
  return `expected default, full or an integer from ${range.min} to ${range.max}, got ${shownValue(value)}`;
}

/**
 * A factor written as text (`--factors`, the unrollFactors setting, a request): `default`,
 * `full` (any case) or decimal digits naming an integer in range. Returns the factor, or the
 * problem in words: `bad` for text that is not a factor at all, `range` for an integer out of range.
 */
export function parseUnrollFactorText(text: string): { factor: UnrollFactorValue } | { problem: 'bad' | 'range'; message: string } {
  const t = text.trim().toLowerCase();
  if (t === 'default' || t === 'full') return { factor: t };
  if (/^\d+$/.test(t)) {
    const n = Number(t);
    if (n >= RANGES.unrollFactor.min && n <= RANGES.unrollFactor.max) return { factor: n };
    if (n > RANGES.unrollFactor.max)
      return { problem: 'range', message: `unroll factor '${text.trim()}' is out of range: use ${UNROLL_FACTOR_EXPECTED}` };
  }
  return { problem: 'bad', message: `bad unroll factor '${text.trim()}': use ${UNROLL_FACTOR_EXPECTED}` };
}

/**
 * The valid entries of an unrollFactors list (the setting as the editor hands it over, of any
 * type), each invalid one reported through `warn` and dropped: what readSettings keeps.
 */
export function validFactorTexts(list: unknown, warn: (message: string) => void, origin = 'unrollLens.unrollFactors'): string[] {
  if (!Array.isArray(list)) {
    if (list !== undefined && list !== null) warn(`${origin}: expected an array of unroll factors, got ${shownValue(list)}; ignored`);
    return [];
  }
  // The settings pattern itself, so the client keeps exactly the entries the server's readSettings keeps.
  const pattern = new RegExp(UNROLL_FACTOR_PATTERN);
  const out: string[] = [];
  for (const item of list) {
    if (typeof item !== 'string' || !pattern.test(item)) {
      warn(`${origin}: ${shownValue(item)} is not ${UNROLL_FACTOR_EXPECTED}; dropped`);
      continue;
    }
    out.push(item);
  }
  return out;
}
