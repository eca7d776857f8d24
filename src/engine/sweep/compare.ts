// "Compare kernels in this file" (issue 26): the kernels of one program — a ladder of unrolling
// techniques (reduce ×2, ×4, ×8, a warp tail, complete unrolling), or one kernel per coarsening
// factor — timed side by side from the same program runs. It is a GPU sweep of the file as written
// alone (no axis) that times every named kernel in each run (the pipeline a bench uses: build,
// check, CUPTI or ncu timing, stalls, cache, cancel), read as one row per kernel instantiation
// with its speedup against a baseline kernel.
import type { InstantiationTiming, SweepResult } from '../../schema/types';
import type { FileAnalysis } from '../parse/model';
import { runSweep } from './sweep';
import type { SweepObserver } from './observers/observer';
import { SweepSpace, SweepSpaceError } from './space';
import { sourceNameOf } from '../../schema/kernelNames';
import { withinNoise } from '../gpu/stages/summary';
import { BenchJob, GpuRunConfig, runConfigOf } from '../gpu/options';
import { UnrollFactors } from '../variants/factors';

export interface CompareOptions extends Omit<BenchJob, 'loops' | 'factors' | 'kernel'>, Omit<GpuRunConfig, 'sourceStalls'> {
  /** Source names of the kernels (`reduce_unroll2`); every instantiation of each is a row. */
  kernels: string[];
  /** The kernel the speedups are against (a source name, or a mangled name); default: the first row. */
  baseline?: string;
}

/** One kernel of the comparison: its timing in the program's runs and its speedup against the baseline. */
interface ComparedKernel extends InstantiationTiming {
  /** The name it is written with (`reduce_complete`). */
  name: string;
  /** Demangled, with template arguments (`void reduce_complete<256>(int const*, int*, unsigned int)`). */
  demangled: string;
}

export interface KernelComparison {
  /** The sweep's result: the file as written, its instantiations the compared kernels. */
  result: SweepResult;
  rows: ComparedKernel[];
  /** Mangled name of the row the speedups are against; null when it has no time. */
  baseline: string | null;
}

/**
 * Times the named kernels of a program (a .cu with main) side by side: one GPU sweep of the file
 * as written whose runs record every named kernel's launches. Throws SweepSpaceError for a name
 * that is no kernel of the file; a name not built (an uninstantiated template) is refused by the
 * runner with the kernels the build has.
 */
export async function compareKernels(
  file: string,
  text: string,
  analysis: FileAnalysis,
  o: CompareOptions,
  observer: SweepObserver = {},
): Promise<KernelComparison> {
  const { kernels, baseline, ...run } = o;
  const names = [...new Set(kernels)];
  if (!names.length) throw new SweepSpaceError('no kernels to compare: give --kernels NAME,NAME…');
  const written = analysis.kernels.filter(k => k.qualifier === 'global');
  for (const n of names)
    if (!analysis.kernels.some(k => k.name === n))
      throw new SweepSpaceError(`no kernel named ${n} in ${file}; its kernels: ${written.map(k => k.name).join(', ') || 'none'}`);
  const first = analysis.kernels.find(k => k.name === names[0])!;
  const result = await runSweep(
    {
      file,
      text,
      analysis,
      toolchain: o.toolchain,
      arch: o.arch,
      flags: o.flags,
      cacheDir: o.cacheDir,
      // the file as written alone: no loop or parameter axis
      space: new SweepSpace(first, [], UnrollFactors.NONE, []),
      origin: 'compare',
      everyKernel: { named: names },
      compileTimeoutMs: o.nvccTimeoutMs,
      signal: o.signal,
      // no per-line stalls: a comparison has no loop to read them by
      gpu: { ...runConfigOf(run), sourceStalls: false },
      project: o.project,
    },
    { ...observer, onProgress: p => (observer.onProgress?.(p), o.progress?.(p)) },
  );
  const c = comparisonOf(result, names, baseline);
  // where each row's kernel is written (every instantiation of a name at its template's line)
  const lines = c.rows.flatMap(x => {
    const k = analysis.kernels.find(y => y.name === x.name);
    return k ? [[x.kernel, k.line] as const] : [];
  });
  if (lines.length) result.compareLines = Object.fromEntries(lines);
  return c;
}

/** The rows of a comparison's result, in the order the kernels were named, with speedups against the baseline. */
function comparisonOf(result: SweepResult, names: string[], baseline?: string): KernelComparison {
  const v = result.variants[0];
  const demangled = result.demangled ?? {};
  const timed = (v?.instantiations ?? []).map(x => {
    const d = demangled[x.kernel] ?? x.kernel;
    return { ...x, name: sourceNameOf(d), demangled: d };
  });
  const rows = names.flatMap(n => timed.filter(x => x.name === n));
  const base = (baseline !== undefined ? (rows.find(x => x.kernel === baseline) ?? rows.find(x => x.name === baseline)) : rows[0]) ?? null;
  if (baseline !== undefined && !base)
    throw new SweepSpaceError(`--baseline ${baseline} is none of the kernels compared (${names.join(', ')})`);
  for (const x of rows) {
    const ok = base && base.medianMs !== null && x.medianMs !== null && x.medianMs > 0;
    x.speedup = ok ? base!.medianMs! / x.medianMs! : null;
    // two different kernels: their interquartile ranges must not overlap (allowing the run-to-run drift) to differ
    x.withinNoise = ok ? (x === base ? true : withinNoise(x, base!, false)) : null;
  }
  const baselineKernel = base?.medianMs !== null && base ? base.kernel : null;
  // The result carries the ladder too (in the order named, with these speedups and the baseline),
  // so a saved comparison, the results panel and its exports show the same rows as the CLI.
  if (v?.instantiations) {
    const unnamed = v.instantiations.filter((_, i) => !rows.includes(timed[i]));
    v.instantiations = [...rows.map(({ name: _n, demangled: _d, ...t }) => t), ...unnamed];
  }
  result.compareBaseline = baselineKernel;
  return { result, rows, baseline: baselineKernel };
}
