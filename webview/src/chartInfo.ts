// Whether a chart carries information (issue 43). A chart whose every plotted value is the same for
// every variant that has one (14 identical predicted i-cache bars of a static sweep), or that has
// no value at all, compares nothing: it is not drawn, and one sentence says why and gives the
// value. The rule looks only at what the chart would plot (its datasets and whiskers), so it holds
// for every chart, present and future, without a list of special cases.
import type { ChartConfiguration } from 'chart.js';
import type { DecorOptions } from './chartDecor';

/** One plotted quantity, one value per variant (null: none for that variant). */
interface Series {
  label: string;
  values: (number | null)[];
}

const known = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** What a chart plots: each dataset, and its whiskers' two ends. */
function seriesOf(cfg: ChartConfiguration): Series[] {
  const out: Series[] = cfg.data.datasets.map(d => ({
    label: d.label ?? '',
    values: (d.data as unknown[]).map(v => (known(v) ? v : null)),
  }));
  const decor = (cfg.options?.plugins as { ulDecor?: DecorOptions } | undefined)?.ulDecor;
  if (decor?.whiskers) {
    out.push({ label: 'range low', values: decor.whiskers.low.map(v => (known(v) ? v : null)) });
    out.push({ label: 'range high', values: decor.whiskers.high.map(v => (known(v) ? v : null)) });
  }
  return out;
}

/** Equal up to float noise (a value recomputed from the same inputs). */
const same = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));

function fmtValue(v: number): string {
  return Number.isInteger(v) ? v.toLocaleString('en-US') : Number(v.toPrecision(3)).toLocaleString('en-US');
}

/**
 * Null when the chart is worth drawing: some plotted quantity takes two different values over the
 * variants. Otherwise the sentence that stands in for it. A single row is drawn (its bar against
 * the axis and the reference lines is the point; there is nothing else to compare it with).
 * `row`: "variant" or "kernel".
 */
export function flatChartText(cfg: ChartConfiguration, rows: number, row: string): string | null {
  if (rows < 2) return null;
  const series = seriesOf(cfg);
  if (series.some(s => s.values.filter(known).some((v, _i, vs) => !same(v, vs[0])))) return null;
  const withValue = new Set<number>();
  for (const s of series) s.values.forEach((v, i) => v !== null && withValue.add(i));
  if (!withValue.size) return `Not drawn: no ${row} has a value for this chart; the table says why for each.`;
  const parts: string[] = [];
  for (const s of series) {
    const v = s.values.find(known);
    if (v === undefined || s.label.startsWith('range ')) continue;
    parts.push(`${s.label} ${fmtValue(v)}`);
  }
  const low = series.find(s => s.label === 'range low')?.values.find(known);
  const high = series.find(s => s.label === 'range high')?.values.find(known);
  if (low !== undefined && high !== undefined) parts.push(`range ${fmtValue(low)}–${fmtValue(high)}`);
  const who =
    withValue.size === rows
      ? `all ${rows} ${row}s have the same values`
      : withValue.size === 1
        ? `only 1 of ${rows} ${row}s has a value`
        : `${withValue.size} of ${rows} ${row}s have a value, all the same`;
  return `Not drawn: ${who} (${parts.join(', ')}), so bars would compare nothing; the table lists every ${row}.`;
}
