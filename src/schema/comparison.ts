// A kernel comparison (origin 'compare', issue 26) is stored as the sweep it ran: one variant, the
// file as written, whose `instantiations` are the compared kernels. Everything that shows or
// exports results is built around variants (a row, a bar, a CSV line each), so a comparison is
// read through this view of it: one variant per compared kernel. Pure (no Node API): the results
// panel, the exports and the server read it alike.
import { instantiationLabel } from './kernelNames';
import type { InstantiationTiming, SweepResult, SweepVariant } from './types';

/** SASS instructions are 16 bytes on every architecture the tool supports (sm_70 and later). */
const SASS_INSTRUCTION_BYTES = 16;

export function isComparison(r: Pick<SweepResult, 'origin'>): boolean {
  return r.origin === 'compare';
}

/** A compared kernel's row id: its mangled name, with its block size when it ran with several. */
function rowId(x: InstantiationTiming): string {
  return x.blockSize ? `${x.kernel} ${x.blockSize}` : x.kernel;
}

/**
 * The comparison as a result with one variant per compared kernel, in the order they were named:
 * label `reduce_complete<256>`, the speedup against the baseline kernel (its median / this one's),
 * `baseline` the baseline kernel's row (none when it has no time), `best` the fastest kernel. No
 * loops, factors or parameters: nothing about it can be applied to the file. A result of another
 * origin is returned as it is.
 */
export function comparisonAsVariants(r: SweepResult): SweepResult {
  if (!isComparison(r)) return r;
  const run = r.variants[0];
  const timed = run?.instantiations ?? [];
  const demangled = r.demangled ?? {};
  const labels = timed.map(x => instantiationLabel(demangled[x.kernel] ?? x.kernel));
  // without a recorded baseline (a result written by hand), the first kernel, as `compare` defaults
  const base = r.compareBaseline !== undefined ? timed.find(x => x.kernel === r.compareBaseline) : timed[0];
  const baseMs = base?.medianMs ?? null;
  const variants = timed.map((x, i): SweepVariant => {
    const timedOk = x.medianMs !== null;
    const label = labels.filter(l => l === labels[i]).length > 1 && x.blockSize ? `${labels[i]} ${x.blockSize}` : labels[i];
    return {
      id: rowId(x),
      label,
      factors: {},
      params: {},
      // the program ran (or failed) once for every kernel: a kernel without time shares its status
      status: timedOk ? 'ok' : run.status === 'ok' ? 'profile' : run.status,
      message: timedOk ? null : (run.message ?? 'no launch of this kernel was timed'),
      kernel: x.kernel,
      instantiation: demangled[x.kernel] ?? null,
      kernelInstructions: x.kernelInstructions,
      kernelBytes: x.kernelInstructions !== null ? x.kernelInstructions * SASS_INSTRUCTION_BYTES : null,
      loopInstructions: {},
      effectiveUnroll: {},
      fullyUnrolled: {},
      registers: x.registers,
      spillStores: x.spillStores ?? null,
      spillLoads: x.spillLoads ?? null,
      occupancy: null,
      identicalTo: null,
      compileMs: null,
      samples: x.samples,
      medianMs: x.medianMs,
      q1Ms: x.q1Ms,
      q3Ms: x.q3Ms,
      iqrMs: x.iqrMs,
      cv: x.cv,
      speedup: baseMs !== null && x.medianMs !== null && x.medianMs > 0 ? baseMs / x.medianMs : null,
      withinNoise: x === base ? true : base ? x.withinNoise : null,
      stallShare: x.stallShare,
      achievedOccupancy: x.achievedOccupancy,
      executedInstructions: x.executedInstructions,
    };
  });
  const fastest = variants
    .filter(v => v.medianMs !== null)
    .reduce<SweepVariant | null>((a, v) => (a === null || v.medianMs! < a.medianMs! ? v : a), null);
  return {
    ...r,
    loops: [],
    factors: [],
    params: {},
    spaceSize: variants.length,
    evaluations: variants.filter(v => v.status !== 'pending').length,
    baseline: base ? rowId(base) : '',
    best: fastest?.id ?? null,
    bestBasis: fastest ? 'fastest median' : null,
    variants,
    // nothing to apply: the bootstrap's verdict is about Apply best of a sweep
    confidence: undefined,
  };
}

/** The label of the comparison's baseline kernel (`reduce_interleaved`), or null when it has none. */
export function comparisonBaselineLabel(r: SweepResult): string | null {
  const c = comparisonAsVariants(r);
  return c.variants.find(v => v.id === c.baseline)?.label ?? null;
}
