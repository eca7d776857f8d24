// Issue 13: the hover's "Recommended before running" line, from the loop's built SASS variants
// (the variants request or CodeLens "SASS variants"); nothing until they exist.
import { recommendFactor, recommendationRecordText, type Kernel, type LoopReport } from '../engine';

function factorLabel(f: LoopReport['variants'][number]['factor']): string {
  return typeof f === 'number' ? `×${f}` : f;
}

/** "Recommended before running: ×16 — most unrolled without … (sm_90 model, 64 warps/SM …). Its record: within 5% … on 18 of 22 …", or '' without variants. */
export function recommendedFactorMarkdown(report: LoopReport | undefined, kernel: Kernel, warpsPerSm: number | null = null): string {
  if (!report || report.variants.filter(v => v.status === 'ok').length < 2) return '';
  const bound = Number(kernel.launchBounds?.[0]?.trim());
  const r = recommendFactor(report.variants, warpsPerSm, report.arch, {
    written: report.written,
    blockSize: Number.isFinite(bound) && bound > 0 ? bound : undefined,
  });
  // How often this rule was right goes with it: a pick before any GPU run is a guess to check.
  return r
    ? `**Recommended before running**: ${factorLabel(r.factor)} — ${r.reason}. Its record: ${recommendationRecordText()} (docs/measurements.md).`
    : '';
}
