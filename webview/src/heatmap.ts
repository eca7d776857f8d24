// The speedup heatmap of a two-loop sweep, as data (no DOM; heatmapView.ts draws it): one cell per
// point, x the first loop's factors and y the second's in the order of the factor set, the speedup
// over the file as written as a diverging colour level, within-noise, best and missing marks.
// Sweeps with extra axes (macro or template values) get one grid per combination of their values.
import type { FactorValue } from '../../src/protocol';
import type { VariantView, ViewModel } from './model';

/** Colour steps on each side of 1× (faster: 1..HEAT_STEPS, slower: -1..-HEAT_STEPS). */
export const HEAT_STEPS = 4;
/** The colour scale reaches at least 1.1× / 0.91×: a few percent never looks like the extreme. */
const MIN_SCALE = Math.log(1.1);
/** More grids than this (extra axes with many value combinations): the panel keeps the bars. */
export const MAX_GRIDS = 8;

interface HeatAxis {
  /** Loop line as the variants key their factors ("70"). */
  line: string;
  /** Its factors in the order of the sweep's factor set (then any other value a point has). */
  values: FactorValue[];
}

export interface HeatCell {
  x: FactorValue;
  y: FactorValue;
  /** The variant measured at this point; null when the result has none. */
  view: VariantView | null;
  /** The speedup printed in the cell; null for an empty cell. */
  speedup: number | null;
  /** Colour step: 0 neutral (1×, or within noise), > 0 faster, < 0 slower. */
  level: number;
  /** Within noise of the file as written (the variant's withinNoise): marked, not coloured. */
  noise: boolean;
  best: boolean;
  /** The point with the loops' factors as written (no extra axes). */
  asWritten: boolean;
  /** Why the cell is empty (not evaluated, pending, failed with its message); null when it shows a speedup. */
  empty: string | null;
}

export interface HeatGrid {
  /** The extra axes' values this grid holds (empty without extra axes). */
  params: Record<string, string>;
  /** Rows in y order, each in x order. */
  rows: HeatCell[][];
}

export interface Heatmap {
  x: HeatAxis;
  y: HeatAxis;
  grids: HeatGrid[];
  /** |ln speedup| at which the colour reaches its last step (shared by every grid). */
  scaleMax: number;
}

/**
 * Colour step of a speedup: its |ln| as a share of the scale, rounded up to one of HEAT_STEPS
 * steps, signed (faster > 0); 0 for exactly 1×, a missing value or within noise.
 */
export function heatLevel(speedup: number | null, scaleMax: number, noise = false): number {
  if (noise || speedup === null || !Number.isFinite(speedup) || speedup <= 0 || speedup === 1) return 0;
  const l = Math.log(speedup);
  const step = Math.min(HEAT_STEPS, Math.max(1, Math.ceil((HEAT_STEPS * Math.abs(l)) / Math.max(scaleMax, Number.EPSILON) - 1e-9)));
  return Math.sign(l) * step;
}

/** The speedups a colour step covers (for the legend): step k spans ((k-1)/N, k/N] of the scale in |ln|. */
export function levelRange(level: number, scaleMax: number): { low: number; high: number } {
  if (level === 0) return { low: 1, high: 1 };
  const k = Math.abs(level);
  const a = Math.exp(((k - 1) / HEAT_STEPS) * scaleMax);
  const b = Math.exp((k / HEAT_STEPS) * scaleMax);
  return level > 0 ? { low: a, high: b } : { low: 1 / b, high: 1 / a };
}

/** The colour scale: the largest |ln speedup| of a point outside the noise, at least MIN_SCALE. */
export function heatScale(speedups: { speedup: number | null; noise: boolean }[]): number {
  let max = MIN_SCALE;
  for (const c of speedups) if (!c.noise && c.speedup !== null && c.speedup > 0) max = Math.max(max, Math.abs(Math.log(c.speedup)));
  return max;
}

const same = (a: FactorValue | string | undefined, b: FactorValue | string | undefined) => String(a) === String(b);

function axisOf(m: ViewModel, line: string): HeatAxis {
  const values = [...m.result.factors];
  for (const x of m.variants) {
    const f = x.v.factors[line];
    if (f !== undefined && !values.some(v => same(v, f))) values.push(f);
  }
  return { line, values };
}

/** Every combination of the extra axes' values, in their order ([{}] without extra axes). */
function paramCombos(params: Record<string, string[]>): Record<string, string>[] {
  let combos: Record<string, string>[] = [{}];
  for (const [name, values] of Object.entries(params)) combos = combos.flatMap(c => values.map(v => ({ ...c, [name]: v })));
  return combos;
}

/** Why a point has no speedup to show, or null when it has one. */
function emptyReason(m: ViewModel, x: VariantView | null): string | null {
  const r = m.result;
  if (!x) {
    if (!r.complete) return 'not evaluated: the run stopped, or has not reached this point yet';
    return r.strategy === 'exhaustive' ? 'not in the result' : `not evaluated: the ${r.strategy} search did not visit this point`;
  }
  if (x.pending) return 'pending: not measured yet';
  if (x.failed) return `${x.v.status}: ${x.v.message ?? 'no message'}`;
  return x.num('speedup') === null ? 'no timing' : null;
}

/**
 * The heatmap of a GPU sweep over two loop axes, or null where the panel keeps the bars: a static
 * result (no speedup), one loop or more than two, a benchmark (its loops share one tied axis), or
 * more than MAX_GRIDS combinations of extra-axis values.
 */
export function heatmapOf(m: ViewModel): Heatmap | null {
  const r = m.result;
  if (!m.gpu || r.origin === 'bench' || r.loops.length !== 2) return null;
  const combos = paramCombos(r.params);
  if (combos.length > MAX_GRIDS) return null;
  const [xLine, yLine] = r.loops.map(l => String(l.line));
  const x = axisOf(m, xLine);
  const y = axisOf(m, yLine);
  const names = Object.keys(r.params);
  const key = (fx: FactorValue, fy: FactorValue, p: Record<string, string>) =>
    JSON.stringify([String(fx), String(fy), ...names.map(n => p[n] ?? '')]);
  const at = new Map<string, VariantView>();
  for (const v of m.variants) {
    const f = v.v.factors;
    if (f[xLine] !== undefined && f[yLine] !== undefined && !at.has(key(f[xLine], f[yLine], v.v.params)))
      at.set(key(f[xLine], f[yLine], v.v.params), v);
  }
  const written = r.loops.map(l => l.written);
  const grids: HeatGrid[] = combos.map(params => ({
    params,
    rows: y.values.map(fy =>
      x.values.map(fx => {
        const view = at.get(key(fx, fy, params)) ?? null;
        const empty = emptyReason(m, view);
        const speedup = empty === null ? view!.num('speedup') : null;
        const noise = empty === null && view!.withinNoise === true;
        return {
          x: fx,
          y: fy,
          view,
          speedup,
          level: 0,
          noise,
          best: !!view && m.best?.v.id === view.v.id,
          asWritten: !names.length && same(fx, written[0]) && same(fy, written[1]),
          empty,
        };
      }),
    ),
  }));
  const cells = grids.flatMap(g => g.rows.flat());
  const scaleMax = heatScale(cells);
  for (const c of cells) c.level = heatLevel(c.speedup, scaleMax, c.noise);
  return { x, y, grids, scaleMax };
}
