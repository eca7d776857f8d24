// Detects code that a programmer unrolled by hand: statements that are copies of one another
// except for a constant index offset. These shapes are reported (see ManualUnrollPattern):
//
//   strided-body         for (k = 0; k < n; k += 4) { s += a[k]; s += a[k + 1]; s += a[k + 2]; s += a[k + 3]; }
//   offset-run           int a1 = g[idx]; int a2 = g[idx + blockDim.x]; int a3 = g[idx + 2 * blockDim.x];
//   warp-tail            v[tid] += v[tid + 32]; v[tid] += v[tid + 16]; … v[tid] += v[tid + 1];
//   coarsening           r0 = 4 * threadIdx.x; … out[r0 + 0] = …; out[r0 + 1] = …; … out[r0 + 3] = …;
//   element-assignments  v[0] = x[i]; v[1] = x[i + 1]; v[2] = x[i + 2]; v[3] = x[i + 3];
//   accumulate-chain     sum += a[i]; sum += a[i + 1]; …   acc[0] += a[k] * b[0]; acc[1] += a[k] * b[1]; …
//   multi-declarator     float a0 = g[i], a1 = g[i + s], a2 = g[i + 2 * s], a3 = g[i + 3 * s];
//   expression-sum       sum += a[i] + a[i + 1] + a[i + 2] + a[i + 3];
//   vector-load          float4 v = reinterpret_cast<const float4*>(p)[i]; s += v.x; s += v.y; s += v.z; s += v.w;
//   block-level          idx = blockIdx.x * blockDim.x * 2 + threadIdx.x; g[idx] += g[idx + blockDim.x];   (grid / 2)
//
// The core is a structural diff of two statements (`Analyzer.diffNodes`, manualUnroll/diff.ts): it walks both syntax
// trees in parallel and records every place where they differ ("sites"). Arithmetic is compared
// in a normalised linear form (constant + Σ coefficient·term), so `idx`, `idx + blockDim.x` and
// `idx + 2 * blockDim.x` differ by one `blockDim.x` each, `k` equals `k + 0`, and `2*y + 1` is
// `2*y` plus the constant 1. Identifiers with numeric suffixes (a1, a2, …) step like constants.
// Two statements are offset copies when every site is such a step; a run of copies is uniform
// when consecutive pairs have identical site signatures (same places, same steps).
//
// Cost. Every node access in web-tree-sitter crosses into WebAssembly (about a microsecond), so
// the scan touches each statement only a few times: statements are compared only with their
// near neighbours (i+1 … i+4), a token-level prefilter rejects pairs that cannot be copies
// without walking their trees, and once a pair shape has been diffed its result is reused for
// every later pair with the same token-level difference (the 3rd, 4th, … copy of a run costs
// no tree walk). The work is linear in the number of statements. Nothing here throws.
//
// Layout (src/engine/parse/manualUnroll/): one module per pattern (stridedBody, offsetRun,
// warpTail, blockLevel, coarsening, assignRuns (element assignments and accumulate chains), multiDeclarator,
// expressionSum, vectorLoad), each a ManualUnrollDetector (detector.ts); the shared parts are the
// statement lists of a function (statements.ts), pairs and uniform runs of copies (runs.ts), the
// structural diff (diff.ts) and text/syntax helpers (text.ts, syntax.ts). This file runs the
// detectors in order and settles overlaps. To add a detector, write a module like those and
// place it in DETECTORS.
import type { Node } from './parser';
import type { ManualUnroll } from './model';
import { blockLevel } from './manualUnroll/blockLevel';
import { coarsening } from './manualUnroll/coarsening';
import { Candidate, DetectContext, ManualUnrollDetector, overlaps, Span } from './manualUnroll/detector';
import { Analyzer, ConstEval } from './manualUnroll/diff';
import { offsetRun } from './manualUnroll/offsetRun';
import { Run, uniformRuns } from './manualUnroll/runs';
import { FunctionScan } from './manualUnroll/statements';
import { stridedBody } from './manualUnroll/stridedBody';
import { warpTail } from './manualUnroll/warpTail';
import { accumulateChain, elementAssignments } from './manualUnroll/assignRuns';
import { expressionSum } from './manualUnroll/expressionSum';
import { multiDeclarator } from './manualUnroll/multiDeclarator';
import { vectorLoad } from './manualUnroll/vectorLoad';

export type { ConstEval } from './manualUnroll/diff';

/**
 * The detectors in the order they claim code: strided loop bodies, then warp tails (outside
 * those), then block-level unrolling (its `a1 = g[idx]; a2 = g[idx + blockDim.x]; …` loads are
 * also an offset run; naming the data blocks a thread block reduces says more), then vector loads (a load and the statements using its components, which may
 * themselves be a run), then coarsening before element assignments and accumulate chains, before
 * offset runs (each of those is also an offset run; the more specific finding wins), then the
 * forms inside one statement (declarators, terms of a sum) where no run claimed the line. The
 * order also fixes which pairs are compared first, which the shape memo makes part of the result
 * (runs.ts `uniformRuns`).
 */
const DETECTORS: readonly ManualUnrollDetector[] = [
  stridedBody,
  warpTail,
  blockLevel,
  vectorLoad,
  coarsening,
  elementAssignments,
  accumulateChain,
  offsetRun,
  multiDeclarator,
  expressionSum,
];

/**
 * Finds manually unrolled code inside one device function's body (a compound_statement).
 * Never throws.
 */
export function findManualUnrolls(body: Node, evalConst: ConstEval): ManualUnroll[] {
  const found: Candidate[] = [];
  try {
    if (body) analyse(body, evalConst, found);
  } catch {
    // best effort: keep what was found before the failure
  }
  const seen = new Set<string>();
  const out: ManualUnroll[] = [];
  found.sort((a, b) => a.line - b.line || a.endLine - b.endLine);
  for (const c of found) {
    const key = `${c.line}:${c.endLine}:${c.pattern}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const m: ManualUnroll = { line: c.line, endLine: c.endLine, pattern: c.pattern, factor: c.factor, detail: c.detail };
    if (c.guarded !== undefined) m.guarded = c.guarded;
    if (c.vectorType !== undefined) m.vectorType = c.vectorType;
    if (c.gridDivisor !== undefined) m.gridDivisor = c.gridDivisor;
    out.push(m);
  }
  return out;
}

function analyse(body: Node, evalConst: ConstEval, found: Candidate[]): void {
  let hasError = true;
  try {
    hasError = body.hasError;
  } catch {
    /* keep checking every statement */
  }
  let owner: object = evalConst;
  try {
    // Shared by the tree's functions, except where error recovery shapes the same text differently
    // from one function to the next (the result would depend on which function came first).
    if (!hasError && body.tree && typeof body.tree === 'object') owner = body.tree;
  } catch {
    /* keep the evaluator as the memo owner */
  }
  const an = new Analyzer(evalConst, owner);
  const scan = new FunctionScan(an, hasError);
  scan.scanContainer(body, -1, 0);

  const kept: Span[] = [];
  let runs: Run[] | null = null;
  const ctx: DetectContext = {
    an,
    scan,
    isFree: span => !kept.some(c => overlaps(c, span)),
    runs: () => (runs ??= uniformRuns(an, scan)),
  };
  const keep = (c: Candidate) => {
    found.push(c);
    kept.push(c);
  };
  for (const d of DETECTORS) {
    const candidates = d.detect(ctx);
    if (d.overlap === 'keep-all') {
      // the detector consulted isFree itself; its own candidates may overlap one another
      candidates.forEach(keep);
    } else for (const c of candidates) if (ctx.isFree(c)) keep(c);
  }
}

/** One-line human description, e.g. "manual unroll ×4 (strided-body, guarded)". */
export function describeManualUnroll(m: ManualUnroll): string {
  const parts: string[] = [m.pattern];
  if (m.guarded) parts.push('guarded');
  if (m.vectorType) parts.push(m.vectorType);
  if (m.gridDivisor) parts.push(`grid / ${m.gridDivisor}`);
  return `manual unroll ×${m.factor} (${parts.join(', ')})`;
}
