// The instruction-cache model (issue 13): how much slower a loop gets when its hot machine code
// no longer fits a level of the instruction caches, before any GPU run.
//
// A warp that misses waits for the next level to deliver its instructions. What that costs depends
// on how fast the SM sub-partition wanted instructions in the first place (the demand D, issued
// instructions per cycle from the SASS: sass/issueRate.ts) against how fast a level can deliver
// them to warps running the same code (the supply S, fitted per code size and warps per SM on the
// calibration grid). The predicted slowdown is a smooth maximum of the two rates' ratio and 1,
//   slowdown = (1 + (D / S)^p)^(1/p),
// so that latency-bound code (small D) loses little and code that could issue every cycle loses
// most. The range around it is the spread (2.5th–97.5th percentile) of the fit's errors on the
// points it was fitted on; validation on shapes left out of the fit is in docs/measurements.md.
import type { IssueProfile } from '../sass/issueRate';
import { issueRate } from '../sass/issueRate';
import { SM90_ICACHE } from './calibration';
import type { IcacheCalibration, IcachePrediction } from './types';
import type { IcacheLoopFacts } from '../sass/issueRate';

/** Smooth maximum of 1 and demand/supply (the slowdown a level with that supply causes). */
export function slowdownFor(demand: number, supply: number | null, sharpness: number): number {
  if (supply === null || demand <= 0) return 1;
  return Math.pow(1 + Math.pow(demand / supply, sharpness), 1 / sharpness);
}

function supplyAt(cal: IcacheCalibration, sizeIndex: number, warpsPerSm: number): number | null {
  const row = cal.supply[sizeIndex];
  const ws = cal.warps;
  const w = Math.min(Math.max(warpsPerSm, ws[0]), ws[ws.length - 1]);
  let j = 0;
  while (j < ws.length - 2 && w > ws[j + 1]) j++;
  const [a, b] = [row[j], row[j + 1]];
  if (a === null || b === null) return a === null && b === null ? null : (a ?? b);
  // Log-linear in warps between the measured occupancies.
  const t = (Math.log(w) - Math.log(ws[j])) / (Math.log(ws[j + 1]) - Math.log(ws[j]));
  return Math.exp(Math.log(a) + t * (Math.log(b) - Math.log(a)));
}

/** The central prediction at one measured size. */
export function centralAt(cal: IcacheCalibration, sizeIndex: number, demand: number, warpsPerSm: number): number {
  return slowdownFor(demand, supplyAt(cal, sizeIndex, warpsPerSm), cal.sharpness);
}

/** The spread at `warpsPerSm`: between two measured counts, the wider of their spreads. */
function spreadOf(cal: IcacheCalibration, central: number, warpsPerSm: number): [number, number] {
  const table = central >= cal.steep ? cal.spread.steep : cal.spread.flat;
  const ws = cal.warps;
  const near = ws
    .map((w, j) => ({ w, j }))
    .filter(({ w }, j) => {
      if (warpsPerSm <= ws[0]) return j === 0;
      if (warpsPerSm >= ws[ws.length - 1]) return j === ws.length - 1;
      return w === warpsPerSm || (w < warpsPerSm && ws[j + 1] > warpsPerSm) || (w > warpsPerSm && ws[j - 1] < warpsPerSm);
    });
  return [Math.min(...near.map(n => table[n.j][0])), Math.max(...near.map(n => table[n.j][1]))];
}

function shapeOf(issue: IssueProfile): string {
  const op = issue.mainOpcode || 'mixed';
  return `${op}, ${issue.chains} chain${issue.chains === 1 ? '' : 's'}${issue.loads ? `, ${issue.loads} load${issue.loads === 1 ? '' : 's'}` : ''}`;
}

/**
 * The predicted slowdown of a loop variant against the same loop at a size that fits, at
 * `warpsPerSm` resident warps per SM. A size between two measured sizes gets both sizes' ranges
 * (the grid cannot say where between them a step falls).
 */
export function predictIcache(facts: IcacheLoopFacts, warpsPerSm: number, arch: string, cal: IcacheCalibration): IcachePrediction {
  const w = Math.max(1, warpsPerSm);
  // Warps spread over the 4 sub-partitions; the busiest one sets the pace.
  const demand = issueRate(facts.issue, Math.ceil(w / 4));
  const sizes = cal.sizes;
  let lo = 0;
  while (lo < sizes.length - 1 && facts.bytes > sizes[lo + 1] * 1.02) lo++;
  const atOrBelow = facts.bytes <= sizes[lo] * 1.02;
  const indices = atOrBelow || lo === sizes.length - 1 ? [lo] : [lo, lo + 1];
  let low = Infinity;
  let high = 0;
  for (const i of indices) {
    const c = centralAt(cal, i, demand, w);
    const [qLo, qHi] = spreadOf(cal, c, w);
    low = Math.min(low, c * Math.exp(qLo));
    high = Math.max(high, c * Math.exp(qHi));
  }
  const fits = facts.bytes <= cal.fitsUpTo * 1.02;
  const measured = archBase(arch) === cal.arch;
  const notes = [
    `${cal.arch} calibration grid (${cal.source})`,
    measured ? null : `applied to ${arch}, which was not measured`,
    w < cal.warps[0] || w > cal.warps[cal.warps.length - 1]
      ? `${w} warps/SM is outside the measured ${cal.warps[0]}–${cal.warps[cal.warps.length - 1]}`
      : null,
    facts.bytes > sizes[sizes.length - 1] * 1.02
      ? `${kib(facts.bytes)} is beyond the largest measured size (${kib(sizes[sizes.length - 1])})`
      : null,
    `demand ${demand.toFixed(2)} instructions/cycle per SM sub-partition from the SASS`,
  ].filter(Boolean);
  return {
    bytes: facts.bytes,
    warpsPerSm: w,
    predictedSlowdown: { low: round2(Math.max(low, 0)), high: round2(high) },
    demand: round2(demand),
    shape: shapeOf(facts.issue),
    fits,
    basis: notes.join('; '),
  };
}

function archBase(arch: string): string {
  return arch.replace(/[af]$/, '');
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

export function kib(bytes: number): string {
  return `${bytes >= 10240 ? Math.round(bytes / 1024) : (bytes / 1024).toFixed(1)} KiB`;
}

/** "predicted 2.1–2.8× slower than ×64 at 4 warps/SM (FFMA, 4 chains; measured on sm_90)" */
export function describePrediction(p: IcachePrediction, reference: string, arch: string, cal: IcacheCalibration, warps?: string): string {
  const { low, high } = p.predictedSlowdown;
  const range = low.toFixed(1) === high.toFixed(1) ? `${low.toFixed(2)}–${high.toFixed(2)}` : `${low.toFixed(1)}–${high.toFixed(1)}`;
  const origin = archBase(arch) === cal.arch ? `measured on ${cal.arch}` : `${cal.arch} data, ${arch} not measured`;
  return `loop body ${kib(p.bytes)}: predicted ${range}× slower than ${reference} at ${warps ?? p.warpsPerSm} warps/SM (${p.shape}; ${origin})`;
}

/** The calibration for an arch: sm_90 was measured; every other arch carries it as an estimate (the basis says so). */
export function calibrationFor(arch: string): IcacheCalibration {
  void arch;
  return SM90_ICACHE;
}
