// "Benchmark this loop": the sweep of one loop's unroll factors on the GPU (the listed loops all
// set to each factor: one tied axis), through the sweep pipeline (sweep/sweep.ts, the GPU runner)
// with every kernel holding the loop timed, so a bench and a sweep build, check, time, cache,
// cancel, report progress and export the same way and give the same SweepResult. What is left
// here is the bench's own face: its options and its documented `--json` contract (docs/cli.md).
import type { SweepResult, SweepVariant } from '../../schema/types';
import type { FileAnalysis } from '../parse/model';
import { runSweep } from './sweep';
import type { SweepObserver } from './observers/observer';
import { AS_WRITTEN, AS_WRITTEN_ID, pointId } from './space';
import { emptyVariant } from './variant';
import { BenchOptions, runConfigOf } from '../gpu/options';

export { parseChecksums } from '../gpu/stages/check';
export { iqrOverlap, RUN_DRIFT, summarize, withinNoise } from '../gpu/stages/summary';
export type { BenchOptions } from '../gpu/options';
export type { RunTiming } from '../../schema/types';

/**
 * Benchmarks the file as written (the baseline) and one variant per factor, each setting every
 * loop of o.loops to that factor: a GPU sweep of one tied loop axis (runSweep), timing every
 * kernel holding the first loop. Programs build in parallel while the GPUs measure the ones
 * built; variants with the same machine code are measured once; a measurement already in the
 * cache costs no GPU run. Each program's first run under ncu is also its result check.
 */
export function benchLoop(
  file: string,
  text: string,
  analysis: FileAnalysis,
  o: BenchOptions,
  observer: SweepObserver = {},
): Promise<SweepResult> {
  return runSweep(
    {
      file,
      text,
      analysis,
      toolchain: o.toolchain,
      arch: o.arch,
      flags: o.flags,
      cacheDir: o.cacheDir,
      loops: o.loops,
      factors: o.factors,
      tied: true,
      origin: 'bench',
      everyKernel: { focus: o.loops[0], kernel: o.kernel },
      compileTimeoutMs: o.nvccTimeoutMs,
      signal: o.signal,
      gpu: runConfigOf(o),
      translationUnit: o.translationUnit,
      project: o.project,
    },
    { ...observer, onProgress: p => (observer.onProgress?.(p), o.progress?.(p)) },
  );
}

/** A bench row's label: `as-written`, or the factor its loops were set to (`4`, `default`, `full`). */
export function benchLabel(v: Pick<SweepVariant, 'id' | 'factors'>): string {
  if (v.id === AS_WRITTEN_ID) return 'as-written';
  const f = Object.values(v.factors)[0];
  return f === undefined ? v.id : String(f);
}

/** A variant id's bench label (`40=4` → `4`, `as-written`): what progress lines name. */
export function benchLabelOfId(id: string): string {
  if (id === AS_WRITTEN_ID) return id;
  const first = id.split(/[,|]/)[0];
  return first.slice(first.indexOf('=') + 1);
}

/** A row's i-cache entry with its reference named by bench label (`64`), as the contract has it. */
function benchIcache(r: SweepResult, v: SweepVariant): SweepVariant['icache'] {
  const c = v.icache ?? null;
  if (!c?.reference) return c;
  const ref = r.variants.find(x => x.label === c.reference);
  return ref ? { ...c, reference: benchLabel(ref) } : c;
}

/** The bench label of the row a variant copies (`identicalTo` holds its id). */
function labelOfId(r: SweepResult, id: string | null): string | null {
  if (id === null) return null;
  const v = r.variants.find(x => x.id === id);
  return v ? benchLabel(v) : id;
}

/** The documented `bench --json` contract (docs/cli.md), from the bench's SweepResult. */
export function benchJson(r: SweepResult) {
  const rows = benchRows(r);
  const first = rows[0]?.instantiations ?? [];
  return {
    kernel: rows.find(v => v.kernel)?.kernel ?? r.kernel,
    gpu: r.gpu,
    clockControl: r.clockControl ?? 'base',
    // what measured, the clocks and the caches (absent in results saved before they were kept)
    ...(r.measurement ? { measurement: r.measurement } : {}),
    variants: rows.map(v => ({
      factors: v.factors,
      label: benchLabel(v),
      status: v.status,
      kernelInstructions: v.kernelInstructions,
      registers: v.registers,
      samples: v.samples,
      medianMs: v.medianMs,
      iqrMs: v.iqrMs,
      cv: v.cv,
      speedup: v.speedup,
      withinNoise: v.withinNoise,
      stallShare: v.stallShare,
      achievedOccupancy: v.achievedOccupancy,
      executedInstructions: v.executedInstructions ?? null,
      instructionsPerThread: v.instructionsPerThread ?? null,
      instructionsPerElement: v.instructionsPerElement ?? null,
      identicalTo: labelOfId(r, v.identicalTo),
      cached: !!v.cached,
      icache: benchIcache(r, v),
      ...(v.message ? { message: v.message } : {}),
    })),
    ...(first.length > 1 ? { instantiations: instantiationTables(r, rows) } : {}),
    // the lines the text prints under the table: what timed, where a project was built, …
    ...(r.notes?.length ? { notes: [...r.notes] } : {}),
    // how sure the timings are of the fastest, and whether Apply best is offered (issue 25)
    ...(r.confidence ? { confidence: r.confidence } : {}),
    ...(r.lineStalls ? { lineStalls: r.lineStalls.map(l => ({ line: l.line, samples: l.samples, stallShare: l.stallShare })) } : {}),
    // where they came from: the CUPTI timer's PC samples of the timed run, or one more ncu run
    ...(r.lineStalls && r.lineStallsSource ? { lineStallsSource: r.lineStallsSource } : {}),
    ...(r.sassStalls
      ? {
          sassStalls: {
            kernel: r.sassStalls.kernel,
            factor: r.sassStalls.factor,
            instructionCount: r.sassStalls.instructions.length,
            totalSamples: r.sassStalls.totalSamples,
            // Only the sampled instructions: a big kernel has thousands of unsampled ones.
            instructions: r.sassStalls.instructions
              .filter(i => i.samples > 0)
              .map(i => ({ offset: i.offset, text: i.text, samples: i.samples, stalls: i.stalls })),
          },
        }
      : {}),
    timing: {
      wallS: r.timing?.wallS ?? 0,
      compileS: r.timing?.compileS ?? 0,
      checkS: r.timing?.checkS ?? 0,
      profileS: r.timing?.profileS ?? 0,
      gpuIdleS: r.timing?.gpuIdleS ?? 0,
      gpuRuns: r.timing?.gpuRuns ?? 0,
      gpus: [...(r.timing?.gpus ?? [])],
    },
  };
}

/**
 * Every row of the bench in order, the file as written first: a point the run did not reach (it
 * was cancelled) is listed as cancelled, so none is lost.
 */
export function benchRows(r: SweepResult): SweepVariant[] {
  const lines = r.loops.map(l => String(l.line));
  const points = [AS_WRITTEN, ...r.factors.map(f => ({ factors: Object.fromEntries(lines.map(l => [l, f])), params: {} }))];
  return points.map(p => r.variants.find(v => v.id === pointId(p)) ?? emptyVariant(p, r.complete ? 'pending' : 'cancelled'));
}

/** One table per instantiation (and block size): every row's timing of that kernel, in the contract's shape. */
function instantiationTables(r: SweepResult, rows: SweepVariant[]) {
  const keys = rows[0].instantiations!.map(x => ({ kernel: x.kernel, blockSize: x.blockSize }));
  return keys.map(k => ({
    kernel: k.kernel,
    blockSize: k.blockSize,
    variants: rows.map(v => {
      const x = v.instantiations?.find(y => y.kernel === k.kernel && y.blockSize === k.blockSize);
      return {
        label: benchLabel(v),
        status: v.status,
        kernelInstructions: x?.kernelInstructions ?? null,
        samples: x?.samples ?? 0,
        medianMs: x?.medianMs ?? null,
        iqrMs: x?.iqrMs ?? null,
        cv: x?.cv ?? null,
        speedup: x?.speedup ?? null,
        withinNoise: x?.withinNoise ?? null,
        stallShare: x?.stallShare ?? null,
        identicalTo: labelOfId(r, v.identicalTo),
        cached: !!v.cached,
        // the i-cache facts describe the build's loop kernel: only its table carries them
        icache: k.kernel === v.kernel && k.blockSize === (v.instantiations?.[0]?.blockSize ?? null) ? benchIcache(r, v) : null,
      };
    }),
  }));
}
