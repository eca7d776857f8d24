// What the charts draw beyond chart.js's bars and lines: reference lines across the plot area (the
// baseline's 1×, the i-cache budget), IQR and predicted-range whiskers, and the legend entries
// built for them (a dataset-derived legend would misreport per-bar styles).
import type { ChartType, Plugin } from 'chart.js';

export interface RefLine {
  value: number;
  color: string;
  label: string;
  hidden?: boolean;
}

export interface LegendEntry {
  text: string;
  fill: string | CanvasPattern;
  stroke?: string;
  lineWidth?: number;
  lineDash?: number[];
  /** Toggles this dataset's visibility on click. */
  datasetIndex?: number;
  /** Toggles this reference line on click. */
  refLine?: number;
}

export interface DecorOptions {
  refLines: RefLine[];
  legend: LegendEntry[];
  /** Vertical IQR whiskers over the bars of one dataset. */
  whiskers: { datasetIndex: number; low: (number | null)[]; high: (number | null)[]; color: string } | null;
}

declare module 'chart.js' {
  // chart.js declares the type parameter; the augmentation must repeat it.
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  interface PluginOptionsByType<TType extends ChartType> {
    ulDecor?: DecorOptions;
  }
}

/** Reference lines across the whole plot area, and whiskers, drawn after the bars. */
export const decorPlugin: Plugin = {
  id: 'ulDecor',
  afterDatasetsDraw(chart, _args, opts: DecorOptions) {
    const { ctx, chartArea: area } = chart;
    const y = chart.scales.y;
    if (!y || !opts) return;
    ctx.save();
    const w = opts.whiskers;
    if (w && chart.isDatasetVisible(w.datasetIndex)) {
      const meta = chart.getDatasetMeta(w.datasetIndex);
      ctx.strokeStyle = w.color;
      ctx.lineWidth = 1.5;
      meta.data.forEach((el, i) => {
        const lo = w.low[i];
        const hi = w.high[i];
        if (lo === null || hi === null || lo === undefined || hi === undefined) return;
        const x = el.x;
        const width = (el as unknown as { width: number }).width ?? 10;
        const cap = Math.max(3, Math.min(8, width * 0.25));
        const y0 = y.getPixelForValue(lo);
        const y1 = y.getPixelForValue(hi);
        ctx.beginPath();
        ctx.moveTo(x, y0);
        ctx.lineTo(x, y1);
        ctx.moveTo(x - cap, y0);
        ctx.lineTo(x + cap, y0);
        ctx.moveTo(x - cap, y1);
        ctx.lineTo(x + cap, y1);
        ctx.stroke();
      });
    }
    for (const line of opts.refLines) {
      if (line.hidden) continue;
      const py = y.getPixelForValue(line.value);
      if (!Number.isFinite(py) || py < area.top - 1 || py > area.bottom + 1) continue;
      ctx.strokeStyle = line.color;
      ctx.lineWidth = 2;
      ctx.setLineDash([6, 4]);
      ctx.beginPath();
      ctx.moveTo(area.left, py);
      ctx.lineTo(area.right, py);
      ctx.stroke();
      ctx.setLineDash([]);
    }
    ctx.restore();
  },
};
