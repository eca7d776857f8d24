// "Build unroll variants (SASS)" of one loop: the LoopReport the hover, CodeLens and listings are
// built from, shown in the results panel as a one-loop static result. (A GPU benchmark needs no
// such step: it is a sweep, sweep/bench.ts.)
import type { FactorValue, SweepLoop, SweepResult, SweepVariant } from '../../schema/types';
import { icacheBudget } from '../icache/budget';
import { icacheEntries } from '../icache/entries';
import type { FileAnalysis, Loop } from '../parse/model';
import type { LoopReport, LoopVariant } from '../variants/reports';
import { writtenFactor } from '../variants/factors';
import { instantiationLabel } from '../../schema/kernelNames';
import { bestBy, staticBasis, staticRuleOf, staticScore } from './objective';
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
