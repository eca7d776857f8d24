// Number formatting shared by the table, the tooltips and the header, so a value reads the same
// everywhere. Durations are shown in µs: kernel medians are µs to ms, and IQRs need sub-µs digits.
import type { FactorValue } from '../../src/protocol';

export const NONE = '—';

const intFmt = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const usFmt = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });

const compactFmt = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });

/** Axis ticks of large counts: 440401920 → "440.4M", 0 → "0". */
export function fmtCompact(n: number | null | undefined): string {
  return n === null || n === undefined || !Number.isFinite(n) ? NONE : compactFmt.format(n);
}

export function fmtInt(n: number | null | undefined): string {
  return n === null || n === undefined || !Number.isFinite(n) ? NONE : intFmt.format(n);
}

/** Milliseconds shown as µs with two decimals: 0.058208 ms → "58.21". */
export function fmtUs(ms: number | null | undefined): string {
  return ms === null || ms === undefined || !Number.isFinite(ms) ? NONE : usFmt.format(ms * 1000);
}

/** A 0..1 share as a percentage: 0.5791 → "57.9%". */
export function fmtShare(x: number | null | undefined, digits = 1): string {
  return x === null || x === undefined || !Number.isFinite(x) ? NONE : `${(x * 100).toFixed(digits)}%`;
}

/** A value already in percent (ncu's achieved occupancy): 74.15 → "74.2%". */
export function fmtPercent(x: number | null | undefined): string {
  return x === null || x === undefined || !Number.isFinite(x) ? NONE : `${x.toFixed(1)}%`;
}

export function fmtSpeedup(x: number | null | undefined): string {
  return x === null || x === undefined || !Number.isFinite(x) ? NONE : `${x.toFixed(3)}×`;
}

export function fmtFactor(f: FactorValue | null | undefined): string {
  if (f === null || f === undefined) return NONE;
  return typeof f === 'number' ? `×${f}` : f;
}

/** Axis/legend bytes: 49920 → "48.8 KiB", 65536 → "64 KiB", 896 → "896 B". */
export function fmtBytes(b: number): string {
  const unit = (v: number, u: string) => `${Number.isInteger(v) ? v : v.toFixed(1)} ${u}`;
  if (b >= 1024 * 1024) return unit(b / 1024 / 1024, 'MiB');
  if (b >= 1024) return unit(b / 1024, 'KiB');
  return `${Math.round(b)} B`;
}

/** A predicted slowdown range: {1.48, 2.39} → "1.48–2.39×" (one number when both ends round alike). */
export function fmtRange(r: { low: number; high: number } | null | undefined): string {
  if (!r) return NONE;
  return r.low.toFixed(2) === r.high.toFixed(2) ? `${r.low.toFixed(2)}×` : `${r.low.toFixed(2)}–${r.high.toFixed(2)}×`;
}

/** A value against the baseline's: "÷11.98" (fewer, faster), "×1.40" (more, slower), "=" (the same to 2 decimals). */
export function fmtRatio(v: number, baseline: number): string {
  if (v <= 0 || baseline <= 0) return '—';
  const r = v / baseline;
  if (r.toFixed(2) === '1.00' || (1 / r).toFixed(2) === '1.00') return '=';
  return r < 1 ? `÷${(1 / r).toFixed(2)}` : `×${r.toFixed(2)}`;
}
