// Fitting and validating the instruction-cache model (model.ts) on the calibration grid
// (grid.ts). `npm run fit:icache` writes the fitted calibration the product ships
// (calibration.ts) and test/unit/icacheModel.test.ts checks it equals a fresh fit.
import * as fs from 'fs';
import * as path from 'path';
import * as zlib from 'zlib';
import { findSassLoops, parseNvdisasm } from '../sass';
import { issueProfile, issueRate, type IssueProfile } from '../sass/issueRate';
import { gridPoints } from './grid';
import type { GridPoint } from './grid';
import { centralAt, predictIcache, slowdownFor } from './model';
import type { IcacheCalibration } from './types';

/** A grid point the model can use: its shape's SASS profile and a measured slowdown. */
export interface FitPoint {
  gpu: string;
  mix: string;
  chains: number;
  warps: number;
  targetKib: number;
  bytes: number;
  slowdown: number;
  noInstruction: number | null;
  issue: IssueProfile;
}

function fitPoints(gpu: string, points: GridPoint[], profiles: Map<string, IssueProfile>): FitPoint[] {
  const out: FitPoint[] = [];
  for (const p of points) {
    const issue = profiles.get(`${p.mix}/${p.chains}`);
    if (!issue || p.slowdown === null || p.bytes === null) continue;
    out.push({
      gpu,
      mix: p.mix,
      chains: p.chains,
      warps: p.warps,
      targetKib: p.targetKib,
      bytes: p.bytes,
      slowdown: p.slowdown,
      noInstruction: p.noInstruction,
      issue,
    });
  }
  return out;
}

const SHARPNESS = [1.5, 2, 3, 4, 6, 8];
// Supply candidates: instructions per cycle per SMSP, log-spaced.
const SUPPLY = Array.from({ length: 321 }, (_, i) => Math.exp(Math.log(0.02) + (i / 320) * Math.log(50 / 0.02)));
const STEEP = 1.1;
/** A size this much slower than the size before (at full demand) starts a new cache level. */
const STEP_RISE = 1.25;
/** Below this predicted slowdown (demand 1, fewest warps) a size counts as fitting. */
const FITS_TOLERANCE = 1.05;

function demandOf(p: FitPoint): number {
  return issueRate(p.issue, Math.ceil(p.warps / 4));
}

function percentile(sorted: number[], q: number): number {
  if (!sorted.length) return 0;
  const i = (sorted.length - 1) * q;
  const a = Math.floor(i);
  const b = Math.ceil(i);
  return sorted[a] + (sorted[b] - sorted[a]) * (i - a);
}

function round(x: number, digits = 4): number {
  if (x === 0 || !Number.isFinite(x)) return x;
  const p = Math.pow(10, digits - Math.ceil(Math.log10(Math.abs(x))));
  return Math.round(x * p) / p;
}

/** Fits supply per (size, warps) and one sharpness on `points` (least squares in log slowdown). */
export function fitIcacheModel(points: FitPoint[], opts: { arch: string; source: string }): IcacheCalibration {
  const targets = [...new Set(points.map(p => p.targetKib))].sort((a, b) => a - b);
  const warps = [...new Set(points.map(p => p.warps))].sort((a, b) => a - b);
  const sizes = targets.map(t => {
    const b = points
      .filter(p => p.targetKib === t)
      .map(p => p.bytes)
      .sort((x, y) => x - y);
    return b[b.length >> 1];
  });
  const cells = targets.map(t =>
    warps.map(w => points.filter(p => p.targetKib === t && p.warps === w).map(p => ({ d: demandOf(p), y: Math.log(p.slowdown) }))),
  );
  let best: { err: number; sharpness: number; supply: (number | null)[][] } | null = null;
  for (const sharpness of SHARPNESS) {
    let err = 0;
    const supply = cells.map((row, i) =>
      row.map(cell => {
        if (i === 0 || !cell.length) return null; // the smallest size is the reference: 1 by definition
        let bestS: number | null = null;
        let bestE = cell.reduce((a, c) => a + c.y * c.y, 0); // no limit: slowdown 1
        for (const s of SUPPLY) {
          let e = 0;
          for (const c of cell) {
            const r = Math.log(slowdownFor(c.d, s, sharpness)) - c.y;
            e += r * r;
          }
          if (e < bestE - 1e-12) [bestE, bestS] = [e, s];
        }
        err += bestE;
        return bestS === null ? null : round(bestS);
      }),
    );
    if (!best || err < best.err) best = { err, sharpness, supply };
  }
  const fitted: IcacheCalibration = {
    arch: opts.arch,
    source: opts.source,
    sizes,
    warps,
    supply: best!.supply,
    sharpness: best!.sharpness,
    spread: { flat: [], steep: [] },
    steep: STEEP,
    steps: [],
    fitsUpTo: sizes[0],
    points: points.length,
  };
  const flat: number[][] = warps.map(() => []);
  const steep: number[][] = warps.map(() => []);
  for (const p of points) {
    const i = targets.indexOf(p.targetKib);
    const c = centralAt(fitted, i, demandOf(p), p.warps);
    (c >= STEEP ? steep : flat)[warps.indexOf(p.warps)].push(Math.log(p.slowdown / c));
  }
  const range = (errors: number[]): [number, number] => {
    const e = [...errors].sort((a, b) => a - b);
    return [round(Math.min(0, percentile(e, 0.025))), round(Math.max(0, percentile(e, 0.975)))];
  };
  // Per occupancy, but never narrower than over all of them: a kernel's mix is not one the grid
  // measured, and leaving a mix out of the fit shows errors that no single occupancy's spread covers.
  const envelope = (per: number[][]): [number, number][] => {
    const all = range(per.flat());
    return per.map(e => {
      const r = range(e);
      return [Math.min(r[0], all[0]), Math.max(r[1], all[1])];
    });
  };
  fitted.spread = { flat: envelope(flat), steep: envelope(steep) };
  fitted.steps = findSteps(fitted);
  fitted.fitsUpTo = fitsUpTo(fitted);
  return fitted;
}

/**
 * Cache levels from the fitted supply: where code that could issue every cycle (demand 1) at the
 * fewest warps, the shape misses cost most, gets STEP_RISE slower than at the size before.
 */
function findSteps(cal: IcacheCalibration): { before: number; after: number }[] {
  const steps: { before: number; after: number }[] = [];
  let prev = 1;
  for (let i = 1; i < cal.sizes.length; i++) {
    const s = centralAt(cal, i, 1, cal.warps[0]);
    if (s > prev * STEP_RISE) steps.push({ before: cal.sizes[i - 1], after: cal.sizes[i] });
    prev = Math.max(prev, s);
  }
  return steps;
}

/** The largest size that, with every size below it, costs demand-1 code under FITS_TOLERANCE at the fewest warps. */
function fitsUpTo(cal: IcacheCalibration): number {
  let last = cal.sizes[0];
  for (let i = 1; i < cal.sizes.length; i++) {
    if (centralAt(cal, i, 1, cal.warps[0]) >= FITS_TOLERANCE) break;
    last = cal.sizes[i];
  }
  return last;
}

export interface Validation {
  points: number;
  inside: number;
  /** Median and 90th percentile of |log(measured / range centre)|, as a factor (1.05 = 5 %). */
  medianError: number;
  p90Error: number;
  worst: { point: FitPoint; low: number; high: number }[];
}

/** How many of `points` the calibration's range holds (the model predicting from each point's SASS profile and size). */
export function validate(cal: IcacheCalibration, points: FitPoint[]): Validation {
  let inside = 0;
  const errors: number[] = [];
  const misses: { point: FitPoint; low: number; high: number; miss: number }[] = [];
  for (const p of points) {
    const pr = predictIcache({ bytes: p.bytes, issue: p.issue }, p.warps, cal.arch, cal);
    const { low, high } = pr.predictedSlowdown;
    const ok = p.slowdown >= low - 0.005 && p.slowdown <= high + 0.005;
    if (ok) inside++;
    else misses.push({ point: p, low, high, miss: Math.max(low / p.slowdown, p.slowdown / high) });
    errors.push(Math.abs(Math.log(p.slowdown / Math.sqrt(low * high))));
  }
  errors.sort((a, b) => a - b);
  return {
    points: points.length,
    inside,
    medianError: round(Math.exp(percentile(errors, 0.5))),
    p90Error: round(Math.exp(percentile(errors, 0.9))),
    worst: misses
      .sort((a, b) => b.miss - a.miss)
      .slice(0, 8)
      .map(({ point, low, high }) => ({ point, low, high })),
  };
}

/**
 * The grid's shapes from nvdisasm's listing of the 4 KiB kernels (`sass-4k.txt.gz`: one
 * straight-line pattern per mix and chains, the same at every size): mix/chains → profile of
 * the hot loop.
 */
export function gridShapes(sassText: string): Map<string, IssueProfile> {
  const out = new Map<string, IssueProfile>();
  for (const fn of parseNvdisasm(sassText).functions) {
    const m = /k_(\w+?)_c(\d+)_4k/.exec(fn.name);
    if (!m) continue;
    const loop = findSassLoops(fn)
      .filter(l => l.natural)
      .sort((a, b) => b.instructions - a.instructions)[0];
    if (!loop) continue;
    out.set(`${m[1]}/${m[2]}`, issueProfile(fn.instructions.filter(i => i.address >= loop.headAddress && i.address <= loop.branchAddress)));
  }
  return out;
}

/** Every usable point of one GPU's recorded grid (a fixture folder written by run.sh). */
export function readGridFolder(gpu: string, dir: string, shapes: Map<string, IssueProfile>): FitPoint[] {
  const profiles = fs
    .readdirSync(dir)
    .filter(f => /^ncu-grid_.*\.csv$/.test(f))
    .sort()
    .map(f => fs.readFileSync(path.join(dir, f), 'utf8'));
  const points = gridPoints(
    fs.readFileSync(path.join(dir, 'points.txt'), 'utf8'),
    fs.readFileSync(path.join(dir, 'sizes.txt'), 'utf8'),
    profiles,
  );
  return fitPoints(gpu, points, shapes);
}

export function readGridSass(file: string): string {
  return zlib.gunzipSync(fs.readFileSync(file)).toString('utf8');
}

/** Shapes the validation leaves out of the fit: every 2-chain shape and every 8-warp point. */
export function heldOut(p: FitPoint): boolean {
  return p.chains === 2 || p.warps === 8;
}

/** The calibration's `source` line: which GPUs and how many points. */
export function calibrationSource(points: FitPoint[]): string {
  const gpus = [...new Set(points.map(p => p.gpu))];
  return `${gpus.join(' + ')}, ${points.length} points`;
}

/** Ways to leave shapes out of the fit, for the validation table in docs/measurements.md. */
const HOLD_OUTS: { name: string; held: (p: FitPoint) => boolean }[] = [
  { name: 'every 2-chain shape and every 8-warp point (the split the test holds to ≥ 90 %)', held: heldOut },
  { name: 'the H200 grid (fitted on the H100 only)', held: p => p.gpu === 'H200' },
  { name: 'every int64 shape', held: p => p.mix === 'int64' },
  { name: 'every ldg shape (loads)', held: p => p.mix === 'ldg' },
  { name: 'every 8-chain shape', held: p => p.chains === 8 },
  { name: 'every 16-warp point', held: p => p.warps === 16 },
];

/** Markdown: per hold-out, how many left-out points the model fitted without them holds. */
export function validationTable(points: FitPoint[]): string {
  const rows = [
    '| left out of the fit | points | inside the range | median error | 90th percentile error | worst miss |',
    '|---|---|---|---|---|---|',
  ];
  for (const h of HOLD_OUTS) {
    const train = points.filter(p => !h.held(p));
    const test = points.filter(h.held);
    const v = validate(fitIcacheModel(train, { arch: 'sm_90', source: calibrationSource(train) }), test);
    const w = v.worst[0];
    const worst = w
      ? `${w.point.gpu} ${w.point.mix}, ${w.point.chains} chains, ${w.point.warps} warps, ${w.point.targetKib} KiB: ${w.point.slowdown.toFixed(2)}× vs ${w.low.toFixed(2)}–${w.high.toFixed(2)}×`
      : '–';
    const pct = (x: number) => `${((x - 1) * 100).toFixed(1)} %`;
    rows.push(
      `| ${h.name} | ${v.points} | ${v.inside} (${((100 * v.inside) / v.points).toFixed(1)} %) | ${pct(v.medianError)} | ${pct(v.p90Error)} | ${worst} |`,
    );
  }
  return rows.join('\n');
}

/** Markdown: the shipped supply per measured size and warps per SM, and the slowdown it predicts for demand 1 (code that could issue every cycle). */
export function supplyTable(cal: IcacheCalibration): string {
  const rows = [
    `| hot-loop size | ${cal.warps.map(w => `${w} warps/SM: supply → slowdown at demand 1`).join(' | ')} |`,
    `|---|${cal.warps.map(() => '---').join('|')}|`,
  ];
  cal.sizes.forEach((bytes, i) => {
    const cells = cal.warps.map((w, j) => {
      const s = cal.supply[i][j];
      return s === null ? 'no limit → 1.00×' : `${s.toFixed(2)} → ${centralAt(cal, i, 1, w).toFixed(2)}×`;
    });
    rows.push(`| ${(bytes / 1024).toFixed(1)} KiB | ${cells.join(' | ')} |`);
  });
  return rows.join('\n');
}
