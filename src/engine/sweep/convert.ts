// One loop's SASS variants (LoopReport) and one loop's GPU benchmark (BenchReport) as
// SweepResults, so the results panel shows every kind of result with one view.
import type { FactorValue, SweepLoop, SweepResult, SweepVariant } from '../../schema/types';
import type { BenchReport, VariantRun } from '../profile/bench';
import { icacheBudget } from '../icache/budget';
import { icacheEntries } from '../icache/entries';
import { runTimingText } from '../report/benchTiming';
import type { FileAnalysis, Loop } from '../parse/model';
import type { LoopReport, LoopVariant } from '../variants/reports';
import { writtenFactor } from '../variants/rewrite';
import { instantiationLabel } from '../../schema/kernelNames';
import { bestBy, gpuScore, staticBasis, staticRuleOf, staticScore } from './objective';
import { AS_WRITTEN_ID, pointId } from './space';
import { compilerMessage, emptyVariant } from './variant';

export interface ConvertContext {
  /** Absolute path of the source file. */
  file: string;
  analysis: FileAnalysis;
  arch: string;
  nvcc: string | null;
  /** When the run started; default now. */
  createdAt?: string;
  /** A fixed loop code budget for the static rule, bytes, replacing the i-cache model; default: the model. */
  icacheBudgetBytes?: number;
  /** Resident warps per SM for the i-cache model; default: each variant's theoretical occupancy. */
  warpsPerSm?: number;
}

function findLoop(analysis: FileAnalysis, line: number): { kernel: FileAnalysis['kernels'][number]; loop: Loop } | null {
  for (const kernel of analysis.kernels) {
    const loop = kernel.loops.find(l => l.line === line);
    if (loop) return { kernel, loop };
  }
  return null;
}

function sweepLoop(loop: Loop): SweepLoop {
  return { line: loop.line, written: writtenFactor(loop), tripCount: loop.tripCount ?? null, pragma: loop.pragma?.text ?? null };
}

function budgetOf(c: ConvertContext): { bytes: number; note: string } {
  if (c.icacheBudgetBytes && c.icacheBudgetBytes > 0)
    return { bytes: c.icacheBudgetBytes, note: 'from the unrollLens.icacheBudgetBytes setting' };
  const b = icacheBudget(c.arch);
  return { bytes: b.bytes, note: `${b.status}: ${b.source}` };
}

function shell(
  c: ConvertContext,
  kernel: string,
  kernelLine: number,
  loops: SweepLoop[],
  origin: SweepResult['origin'],
  factors: FactorValue[],
): SweepResult {
  const budget = budgetOf(c);
  return {
    schema: 1,
    file: c.file,
    kernel,
    kernelLine,
    loops,
    arch: c.arch,
    nvcc: c.nvcc,
    gpu: null,
    static: true,
    strategy: 'exhaustive',
    origin,
    createdAt: c.createdAt ?? new Date().toISOString(),
    factors,
    params: {},
    spaceSize: factors.length,
    evaluations: 0,
    baseline: AS_WRITTEN_ID,
    best: null,
    bestBasis: null,
    icacheBudgetBytes: budget.bytes,
    icacheBudgetNote: budget.note,
    icacheRule: c.icacheBudgetBytes && c.icacheBudgetBytes > 0 ? 'budget' : 'model',
    warpsPerSm: c.warpsPerSm && c.warpsPerSm > 0 ? c.warpsPerSm : null,
    variants: [],
    notes: [],
    complete: true,
  };
}

function loopVariantStatus(v: LoopVariant): SweepVariant['status'] {
  return v.status === 'ok' ? 'ok' : v.status === 'cancelled' ? 'cancelled' : v.status === 'timeout' ? 'timeout' : 'compile';
}

/**
 * "Build unroll variants (SASS)" of one loop as a one-loop static sweep. There is no as-written
 * build in a LoopReport: the baseline is the variant with the loop's written factor (the same
 * source), else the first variant.
 */
export function fromLoopReport(report: LoopReport, c: ConvertContext): SweepResult {
  const found = findLoop(c.analysis, report.line);
  const line = String(report.line);
  const r = shell(
    c,
    report.kernel,
    found?.kernel.line ?? report.line,
    found ? [sweepLoop(found.loop)] : [{ line: report.line, written: report.written, tripCount: null, pragma: null }],
    'variants',
    report.variants.map(v => v.factor),
  );
  const idOf = (f: FactorValue) => pointId({ factors: { [line]: f }, params: {} });
  for (const lv of report.variants) {
    const v = sweepVariantOfLoop(lv, line, loopVariantStatus(lv));
    v.message = lv.failure ? compilerMessage(lv.failure.messages, lv.failure.kind) : null;
    v.identicalTo = lv.identicalTo !== null ? idOf(lv.identicalTo) : null;
    v.compileMs = lv.compileMs;
    const inst = report.instantiation;
    v.instantiation = inst && lv.kernel === inst.name ? inst.demangled : null;
    r.variants.push(v);
  }
  // Predictions only: nothing of a SASS build has run on a GPU.
  const icache = icacheEntries(
    report.variants.map(lv => ({
      label: String(lv.factor),
      status: lv.status === 'ok' ? ('ok' as const) : ('compile' as const),
      medianMs: null,
      stallShare: null,
      achievedOccupancy: null,
    })),
    report.variants,
    report.arch,
  );
  r.variants.forEach((v, i) => (v.icache = icache[i]));
  const written = r.variants.find(v => String(v.factors[line]) === String(report.written));
  r.baseline = written?.id ?? r.variants[0]?.id ?? AS_WRITTEN_ID;
  r.evaluations = r.variants.filter(v => v.status !== 'cancelled').length;
  r.complete = r.variants.every(v => v.status !== 'cancelled');
  const base = r.variants.find(v => v.id === r.baseline) ?? null;
  const rule = staticRuleOf(r);
  const best = bestBy(r.variants, v => staticScore(v, base, rule, r.variants));
  r.best = best?.id ?? null;
  r.bestBasis = best ? staticBasis(rule) : null;
  const inst = report.instantiation;
  const why =
    inst && inst.of > 1
      ? [
          `${inst.of} instantiations hold the loop: every row measures ${instantiationLabel(inst.demangled)}, the one with most of its code over the variants`,
        ]
      : [];
  r.notes = [...why, ...report.notes, ...(report.limitation ? [report.limitation] : [])];
  return r;
}

/** "Benchmark this loop" as a sweep: the listed loops all take each factor; the baseline is the file as written. */
export function fromBenchReport(report: BenchReport, c: ConvertContext & { loops: number[]; samples?: number }): SweepResult {
  const found = c.loops.map(l => findLoop(c.analysis, l)).filter((x): x is NonNullable<typeof x> => !!x);
  const factors = [
    ...new Map(
      report.variants
        .filter(v => Object.keys(v.factors).length)
        .map(v => Object.values(v.factors)[0])
        .map(f => [String(f), f]),
    ).values(),
  ];
  const r = shell(
    c,
    found[0]?.kernel.name ?? report.kernel,
    found[0]?.kernel.line ?? c.loops[0],
    found.map(x => sweepLoop(x.loop)),
    'bench',
    factors,
  );
  r.static = false;
  r.gpu = report.gpu;
  r.spaceSize = factors.length;
  for (const run of report.variants) r.variants.push(fromRun(run, report.demangled));
  // identicalTo names a bench label ("4"); the panel's rows go by id
  const idOfLabel = new Map(r.variants.map((v, i) => [report.variants[i].label, v.id]));
  const labelOf = new Map(r.variants.map((v, i) => [report.variants[i].label, v.label]));
  r.variants.forEach((v, i) => {
    const same = report.variants[i].identicalTo;
    v.identicalTo = same !== null ? (idOfLabel.get(same) ?? null) : null;
    // the i-cache reference too: the panel names rows by their own labels (×64, not 64)
    if (v.icache?.reference) v.icache = { ...v.icache, reference: labelOf.get(v.icache.reference) ?? v.icache.reference };
  });
  r.baseline = AS_WRITTEN_ID;
  r.evaluations = r.variants.filter(v => v.status !== 'cancelled').length;
  r.complete = r.variants.every(v => v.status !== 'cancelled');
  const best = bestBy(r.variants, gpuScore);
  r.best = best?.id ?? null;
  r.bestBasis = best
    ? `fastest median kernel time${report.gpu ? ` on ${report.gpu}` : ''} (ncu, ${best.samples} samples; clocks ${report.clockControl === 'base' ? 'locked to base' : 'not locked'})`
    : null;
  if (report.instantiations.length > 1) {
    const name = (k: string) => instantiationLabel(report.demangled?.[k] ?? k);
    r.notes.push(
      `${report.instantiations.length} instantiations hold the loop (${report.instantiations.map(x => name(x.kernel)).join(', ')}); ` +
        `this view shows ${name(report.kernel)}, the one with most of the loop's code in the file as written`,
    );
  }
  if (report.lineStallsProblem) r.notes.push(`per-line stalls: ${report.lineStallsProblem}`);
  if (report.lineStalls || report.lineStallsProblem) {
    r.lineStalls = report.lineStalls?.map(l => ({ line: l.line, samples: l.samples, stallShare: l.stallShare })) ?? null;
    r.lineStallsProblem = report.lineStallsProblem;
  }
  const cached = report.variants.filter(v => v.cached).length;
  if (cached) {
    r.notes.push(
      `${cached} of ${report.variants.length} measurements reused from earlier runs of the same programs (no GPU run; ` +
        'unrollLens.profile.measurementCache)',
    );
  }
  const timing = report.timing ? runTimingText(report.timing) : null;
  if (timing) r.notes.push(timing);
  return r;
}

function fromRun(run: VariantRun, demangled: Record<string, string> | undefined): SweepVariant {
  const point = { factors: run.factors as Record<string, FactorValue>, params: {} };
  const v = emptyVariant(point, run.status);
  v.message = run.message;
  v.kernel = run.kernel;
  v.instantiation = run.kernel ? (demangled?.[run.kernel] ?? null) : null;
  v.kernelInstructions = run.kernelInstructions;
  v.registers = run.registers;
  v.samples = run.samples;
  v.medianMs = run.medianMs;
  v.q1Ms = run.q1Ms;
  v.q3Ms = run.q3Ms;
  v.iqrMs = run.iqrMs;
  v.cv = run.cv;
  v.speedup = run.speedup;
  v.withinNoise = run.withinNoise;
  v.stallShare = run.stallShare;
  v.achievedOccupancy = run.achievedOccupancy;
  v.icache = run.icache;
  return v;
}

/** One loop's SASS variant as a one-loop sweep variant: its SASS facts, no GPU measurement. */
export function sweepVariantOfLoop(lv: LoopVariant, line: string, status: SweepVariant['status']): SweepVariant {
  const v = emptyVariant({ factors: { [line]: lv.factor }, params: {} }, status);
  v.kernel = lv.kernel;
  v.kernelInstructions = lv.kernelInstructions;
  v.kernelBytes = lv.kernelBytes;
  v.loopInstructions = { [line]: lv.loopInstructions };
  v.effectiveUnroll = { [line]: lv.effectiveUnroll };
  v.fullyUnrolled = { [line]: lv.fullyUnrolled };
  v.hotCode = { [line]: lv.icache ?? null };
  v.registers = lv.registers;
  v.spillStores = lv.spillStores;
  v.spillLoads = lv.spillLoads;
  return v;
}
