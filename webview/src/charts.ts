// The result charts (chart.js). One Chart instance per card lives for the panel's lifetime: live
// updates and theme changes replace data and options and call update('none'), so nothing is
// re-created and nothing flickers. Legends are built here (not from the datasets) because bars
// carry per-variant styles (noise hatching, identical code, selection) that a dataset-derived
// legend would misreport.
import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  LogarithmicScale,
  PointElement,
  Tooltip,
} from 'chart.js';
import type {
  ActiveElement,
  ChartConfiguration,
  ChartDataset,
  ChartEvent,
  ChartType,
  LegendItem,
  Plugin,
  Scale,
  TooltipItem,
} from 'chart.js';
import { h, setText } from './dom';
import { fmtBytes, fmtFactor, fmtInt, fmtPercent, fmtRange, fmtShare, fmtSpeedup, fmtUs } from './format';
import { NO_INSTRUCTION, OTHER_STALLS, stallLabel } from './model';
import type { VariantView, ViewModel } from './model';
import { faded, hatched } from './theme';
import type { Theme } from './theme';

Chart.register(
  BarController,
  BarElement,
  LineController,
  LineElement,
  PointElement,
  CategoryScale,
  LinearScale,
  LogarithmicScale,
  Legend,
  Tooltip,
);

export type ChartId = 'speedup' | 'stalls' | 'icache' | 'size' | 'resources' | 'unroll';

interface RefLine {
  value: number;
  color: string;
  label: string;
  hidden?: boolean;
}

interface LegendEntry {
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

interface DecorOptions {
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
const decorPlugin: Plugin = {
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
Chart.register(decorPlugin);

export const CHART_TITLES: Record<ChartId, string> = {
  speedup: 'Speedup vs the file as written',
  stalls: 'Warp-stall reasons',
  icache: 'I-cache slowdown: measured vs predicted',
  size: 'Instruction bloat: SASS size',
  resources: 'Registers, spills and occupancy',
  unroll: 'Unroll factor nvcc applied',
};

export function chartIds(model: ViewModel): ChartId[] {
  // The i-cache chart only where some variant has an entry (results saved before issue 13 have none).
  const icache: ChartId[] = model.icache ? ['icache'] : [];
  return model.gpu ? ['speedup', 'stalls', ...icache, 'size', 'resources'] : [...icache, 'size', 'resources', 'unroll'];
}

interface Card {
  chart: Chart;
  figure: HTMLElement;
  caption: HTMLElement;
}

/** Picks a variant from a click anywhere in its column (small or missing bars stay clickable). */
function variantAt(chart: Chart, e: ChartEvent, model: ViewModel): VariantView | null {
  const x = chart.scales.x;
  const area = chart.chartArea;
  if (!x || e.x === null || e.y === null || e.x < area.left || e.x > area.right || e.y < area.top || e.y > area.bottom + 40) return null;
  const i = Math.round(x.getValueForPixel(e.x) ?? -1);
  return model.variants[i] ?? null;
}

export class ChartPanel {
  private cards = new Map<ChartId, Card>();
  private model: ViewModel | null = null;
  private theme: Theme | null = null;
  private selected: string | null = null;
  private hiddenRefLines = new Set<string>();

  constructor(
    private readonly root: HTMLElement,
    private readonly onPick: (variantId: string) => void,
  ) {}

  get instances(): Record<string, Chart> {
    return Object.fromEntries([...this.cards].map(([id, c]) => [id, c.chart]));
  }

  render(model: ViewModel, theme: Theme, selected: string | null): void {
    this.model = model;
    this.theme = theme;
    this.selected = selected;
    const ids = chartIds(model);
    if (ids.join() !== [...this.cards.keys()].join()) this.rebuild(ids);
    // Many variants with long (kernel-sweep) labels: rotated ticks need room, so the plots grow.
    const longest = Math.max(0, ...model.variants.map(x => Math.min(24, x.v.label.length)));
    this.root.classList.toggle('ul-tall', model.variants.length * longest > 160);
    for (const [id, card] of this.cards) {
      const cfg = this.config(id, model, theme);
      card.chart.data.labels = cfg.data.labels;
      // Keep dataset objects (chart.js tracks them by index); replace their contents.
      const ds = card.chart.data.datasets;
      cfg.data.datasets.forEach((d, i) => {
        if (ds[i]) {
          for (const k of Object.keys(ds[i])) if (!(k in d)) delete (ds[i] as unknown as Record<string, unknown>)[k];
          Object.assign(ds[i], d);
        } else ds.push(d);
      });
      ds.length = cfg.data.datasets.length;
      card.chart.options = cfg.options ?? {};
      card.chart.update('none');
      setText(card.caption, this.caption(id, model));
    }
  }

  setSelected(id: string | null): void {
    if (this.model && this.theme) this.render(this.model, this.theme, id);
  }

  private rebuild(ids: ChartId[]): void {
    for (const c of this.cards.values()) c.chart.destroy();
    this.cards.clear();
    this.root.replaceChildren();
    for (const id of ids) {
      const canvas = h('canvas', { attrs: { role: 'img', 'aria-label': `${CHART_TITLES[id]} per variant; the table lists every value.` } });
      const caption = h('figcaption', { class: 'ul-caption' });
      const figure = h('figure', { class: 'ul-card', attrs: { 'data-chart': id } }, [
        h('h2', { text: CHART_TITLES[id] }),
        h('div', { class: 'ul-canvas-box' }, [canvas]),
        caption,
      ]);
      this.root.append(figure);
      const cfg = this.config(id, this.model!, this.theme!);
      const chart = new Chart(canvas, cfg);
      this.cards.set(id, { chart, figure, caption });
    }
    if (!this.model!.gpu) this.root.append(staticNotice());
  }

  private caption(id: ChartId, m: ViewModel): string {
    const r = m.result;
    switch (id) {
      case 'speedup':
        return `Baseline median / variant median; whiskers span the variant's interquartile range. Baseline: ${m.baseline?.v.label ?? r.baseline}.`;
      case 'stalls':
        return (
          'Share of warp-stall samples per reason (ncu warp-state metrics). no_instruction: warps waiting for instructions, ' +
          'i.e. instruction-cache misses from code bloat.'
        );
      case 'icache':
        return (
          `Solid bars: measured, this variant's median ÷ ${m.icacheReference ?? 'the reference'}'s (the most unrolled variant measured whose hot loop fits). ` +
          'Hatched bars: predicted, no GPU run yet. Whiskers: the range the i-cache model predicts from the SASS.'
        );
      case 'size':
        return `Loop bytes = loop SASS instructions × 16. I-cache budget ${fmtBytes(r.icacheBudgetBytes)}: ${r.icacheBudgetNote}`;
      case 'resources':
        return m.gpu
          ? 'Theoretical occupancy from registers and shared memory; achieved occupancy measured by ncu (% of peak warps).'
          : 'Theoretical occupancy from registers and shared memory at the block size of the estimate.';
      case 'unroll':
        return "Copies of one loop iteration in the hot machine-code loop (nvcc's effective unroll); crosses mark the factor requested.";
    }
  }

  // ---------------------------------------------------------------------------------------------

  private config(id: ChartId, m: ViewModel, t: Theme): ChartConfiguration {
    const labels = m.variants.map(x => x.axisLabel);
    const base = this.baseOptions(m, t);
    switch (id) {
      case 'speedup':
        return this.speedup(m, t, labels, base);
      case 'stalls':
        return this.stalls(m, t, labels, base);
      case 'icache':
        return this.icache(m, t, labels, base);
      case 'size':
        return this.size(m, t, labels, base);
      case 'resources':
        return this.resources(m, t, labels, base);
      case 'unroll':
        return this.unroll(m, t, labels, base);
    }
  }

  /**
   * Per-bar outline: the foreground colour for the selected variant (it contrasts with every bar
   * colour, the focus colour does not with blue bars), the contrast border in HC themes.
   */
  private outline(m: ViewModel, t: Theme) {
    return {
      borderColor: m.variants.map(x => (x.v.id === this.selected ? t.foreground : (t.contrastBorder ?? 'transparent'))),
      borderWidth: m.variants.map(x => (x.v.id === this.selected ? 3 : t.contrastBorder ? 1 : 0)),
    };
  }

  private baseOptions(m: ViewModel, t: Theme) {
    const tick = { color: t.foreground, font: { family: t.fontFamily, size: t.fontSize - 1 } };
    const title = (text: string) => ({
      display: true,
      text,
      color: t.foreground,
      font: { family: t.fontFamily, size: t.fontSize, weight: 600 as const },
    });
    return {
      tick,
      title,
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false as const,
        color: t.foreground,
        font: { family: t.fontFamily, size: t.fontSize },
        interaction: { mode: 'index' as const, intersect: false },
        onClick: (e: ChartEvent, _a: ActiveElement[], chart: Chart) => {
          const x = this.model ? variantAt(chart, e, this.model) : null;
          if (x) this.onPick(x.v.id);
        },
        onHover: (e: ChartEvent, _a: ActiveElement[], chart: Chart) => {
          const x = this.model ? variantAt(chart, e, this.model) : null;
          chart.canvas.style.cursor = x ? 'pointer' : 'default';
        },
        plugins: {
          legend: {
            position: 'top' as const,
            labels: { color: t.foreground, font: { family: t.fontFamily, size: t.fontSize - 1 }, boxWidth: 22, boxHeight: 12, padding: 10 },
          },
          tooltip: {
            backgroundColor: t.tooltipBackground,
            titleColor: t.tooltipForeground,
            bodyColor: t.tooltipForeground,
            footerColor: t.tooltipForeground,
            borderColor: t.tooltipBorder,
            borderWidth: 1,
            titleFont: { family: t.fontFamily, weight: 600 as const },
            bodyFont: { family: t.fontFamily },
            footerFont: { family: t.fontFamily, weight: 400 as const },
            callbacks: {
              title: (items: TooltipItem<'bar'>[]) => {
                const x = m.variants[items[0]?.dataIndex ?? -1];
                return x ? [x.v.label, ...x.axisLabel.slice(1)].join('  ') : '';
              },
            },
          },
        },
        scales: {
          x: {
            ticks: {
              ...tick,
              maxRotation: 50,
              minRotation: 0,
              // Every variant gets its label unless there are too many to read; long sweep labels
              // (`L40 ×4 · L52 full · BLOCK=8`) are shortened here, in full in the tooltip and table.
              autoSkip: m.variants.length > 40,
              callback: (_v: string | number, i: number) =>
                (m.variants[i]?.axisLabel ?? []).map(s => (s.length > 24 ? `${s.slice(0, 23)}…` : s)),
            },
            grid: { color: t.grid, display: false },
            border: { color: t.border },
            title: title('Variant'),
          },
        },
      },
    };
  }

  /** The chart.js legend options for our own entries (click toggles datasets and reference lines). */
  private legend(entries: LegendEntry[], t: Theme, refLines: RefLine[]) {
    return {
      generateLabels: (chart: Chart): LegendItem[] =>
        entries
          .map(
            e =>
              ({
                text: e.text,
                fillStyle: e.fill,
                strokeStyle: e.stroke ?? (typeof e.fill === 'string' ? e.fill : t.foreground),
                lineWidth: e.lineWidth ?? 0,
                lineDash: e.lineDash,
                fontColor: t.foreground,
                hidden:
                  e.datasetIndex !== undefined
                    ? !chart.isDatasetVisible(e.datasetIndex)
                    : e.refLine !== undefined
                      ? !!refLines[e.refLine]?.hidden
                      : false,
                datasetIndex: e.datasetIndex,
              }) as LegendItem & { refLine?: number },
          )
          .map((item, i) => Object.assign(item, { refLine: entries[i].refLine })),
    };
  }

  private legendClick(refLines: RefLine[]) {
    return (_e: ChartEvent, item: LegendItem & { refLine?: number }, legend: { chart: Chart }) => {
      const chart = legend.chart;
      if (item.datasetIndex !== undefined) {
        chart.setDatasetVisibility(item.datasetIndex, !chart.isDatasetVisible(item.datasetIndex));
        chart.update('none');
      } else if (item.refLine !== undefined) {
        const line = refLines[item.refLine];
        if (!line) return;
        if (this.hiddenRefLines.has(line.label)) this.hiddenRefLines.delete(line.label);
        else this.hiddenRefLines.add(line.label);
        line.hidden = this.hiddenRefLines.has(line.label);
        chart.update('none');
      }
    };
  }

  private withDecor(
    base: ReturnType<ChartPanel['baseOptions']>,
    t: Theme,
    decor: DecorOptions,
    scales: Record<string, unknown>,
    tooltipLabel: (item: TooltipItem<'bar'>) => string | string[] | void,
  ) {
    for (const r of decor.refLines) r.hidden = this.hiddenRefLines.has(r.label);
    const o = base.options;
    return {
      ...o,
      plugins: {
        ...o.plugins,
        ulDecor: decor,
        legend: {
          ...o.plugins.legend,
          labels: { ...o.plugins.legend.labels, ...this.legend(decor.legend, t, decor.refLines) },
          onClick: this.legendClick(decor.refLines),
        },
        tooltip: { ...o.plugins.tooltip, callbacks: { ...o.plugins.tooltip.callbacks, label: tooltipLabel } },
      },
      scales: { ...o.scales, ...scales },
    };
  }

  private speedup(m: ViewModel, t: Theme, labels: string[][], base: ReturnType<ChartPanel['baseOptions']>): ChartConfiguration {
    const noise = hatched(t.grey);
    const fill = m.variants.map(x => {
      const s = x.num('speedup');
      if (x.withinNoise) return noise;
      const c = s !== null && s >= 1 ? t.green : t.orange;
      return x.ref ? faded(c, 0.45) : c;
    });
    const refLines: RefLine[] = [{ value: 1, color: t.foreground, label: `Baseline (${m.baseline?.v.label ?? m.result.baseline}) = 1×` }];
    const legend: LegendEntry[] = [
      { text: 'Faster than the baseline', fill: t.green },
      { text: 'Slower than the baseline', fill: t.orange },
      { text: 'Within noise (same code, or IQRs within 3 % drift)', fill: noise, stroke: t.grey, lineWidth: 1 },
      // Faded bars can be green or orange: the swatch shows fading on a neutral colour.
      ...(m.variants.some(x => x.ref) ? [{ text: 'Identical code (= ×N), measured once', fill: faded(t.foreground, 0.35) }] : []),
      { text: 'IQR whiskers', fill: 'transparent', stroke: t.foreground, lineWidth: 2, datasetIndex: undefined },
      { text: refLines[0].label, fill: 'transparent', stroke: t.foreground, lineWidth: 2, lineDash: [6, 4], refLine: 0 },
    ];
    const data = m.variants.map(x => (x.ok ? x.num('speedup') : null));
    const top = Math.max(1, ...m.variants.map(x => x.speedupHigh ?? x.num('speedup') ?? 0));
    const decor: DecorOptions = {
      refLines,
      legend,
      whiskers: { datasetIndex: 0, low: m.variants.map(x => x.speedupLow), high: m.variants.map(x => x.speedupHigh), color: t.foreground },
    };
    return {
      type: 'bar',
      data: { labels, datasets: [{ label: 'Speedup (median)', data, backgroundColor: fill, ...this.outline(m, t), barPercentage: 0.8 }] },
      options: this.withDecor(
        base,
        t,
        decor,
        {
          y: {
            beginAtZero: true,
            suggestedMax: top * 1.08,
            ticks: { ...base.tick, callback: (v: string | number) => `${Number(v).toFixed(2)}×` },
            grid: { color: t.grid },
            border: { color: t.border },
            title: base.title('Speedup (×, higher is faster)'),
          },
        },
        item => {
          const x = m.variants[item.dataIndex];
          if (!x) return '';
          const lines = [`speedup ${fmtSpeedup(x.num('speedup'))}`];
          if (x.speedupLow !== null && x.speedupHigh !== null) lines.push(`IQR ${x.speedupLow.toFixed(3)}–${x.speedupHigh.toFixed(3)}×`);
          lines.push(`median ${fmtUs(x.num('medianMs'))} µs`);
          if (x.withinNoise !== null) lines.push(x.withinNoise ? 'within noise of the baseline' : "outside the baseline's noise");
          return lines;
        },
      ) as ChartConfiguration['options'],
    };
  }

  /** Measured slowdown bars (solid) or the predicted middle (hatched), the predicted range as whiskers. */
  private icache(m: ViewModel, t: Theme, labels: string[][], base: ReturnType<ChartPanel['baseOptions']>): ChartConfiguration {
    const predictedFill = hatched(t.grey);
    const isMeasured = (x: VariantView) => x.icache?.shown === 'measured' && !!x.icache.measured;
    const data = m.variants.map(x => {
      const c = x.icache;
      if (!c) return null;
      if (isMeasured(x)) return c.measured!.slowdown;
      return c.predicted ? (c.predicted.low + c.predicted.high) / 2 : null;
    });
    const fill = m.variants.map(x => (isMeasured(x) ? t.blue : predictedFill));
    const low = m.variants.map(x => x.icache?.predicted?.low ?? null);
    const high = m.variants.map(x => x.icache?.predicted?.high ?? null);
    const refLines: RefLine[] = [{ value: 1, color: t.foreground, label: 'No slowdown = 1×' }];
    const legend: LegendEntry[] = [
      { text: `Measured (median ÷ ${m.icacheReference ?? 'reference'})`, fill: t.blue },
      { text: 'Predicted (no GPU run yet)', fill: predictedFill, stroke: t.grey, lineWidth: 1 },
      { text: 'Predicted range (i-cache model)', fill: 'transparent', stroke: t.foreground, lineWidth: 2 },
      { text: refLines[0].label, fill: 'transparent', stroke: t.foreground, lineWidth: 2, lineDash: [6, 4], refLine: 0 },
    ];
    const top = Math.max(1, ...data.map(v => v ?? 0), ...high.map(v => v ?? 0));
    const decor: DecorOptions = { refLines, legend, whiskers: { datasetIndex: 0, low, high, color: t.foreground } };
    return {
      type: 'bar',
      data: { labels, datasets: [{ label: 'I-cache slowdown', data, backgroundColor: fill, ...this.outline(m, t), barPercentage: 0.8 }] },
      options: this.withDecor(
        base,
        t,
        decor,
        {
          y: {
            beginAtZero: true,
            suggestedMax: top * 1.08,
            ticks: { ...base.tick, callback: (v: string | number) => `${Number(v).toFixed(2)}×` },
            grid: { color: t.grid },
            border: { color: t.border },
            title: base.title('Slowdown (×, higher is slower)'),
          },
        },
        item => {
          const x = m.variants[item.dataIndex];
          const c = x?.icache;
          if (!c) return '';
          const lines: string[] = [];
          if (isMeasured(x)) {
            lines.push(`measured ${c.measured!.slowdown.toFixed(2)}× (median ÷ ${c.reference ?? 'reference'})`);
            if (c.measured!.noInstruction !== null) lines.push(`no_instruction ${fmtShare(c.measured!.noInstruction)} of stalls`);
          }
          if (c.shown === 'not-icache' && c.measured) {
            // The bar is the model's prediction: the measured slowdown is not the i-cache's (issue 22).
            lines.push(`measured ${c.measured.slowdown.toFixed(2)}× (median ÷ ${c.reference ?? 'reference'}), not i-cache`);
            if (c.measured.attribution) lines.push(c.measured.attribution.why);
          }
          if (c.predicted) lines.push(`predicted ${fmtRange(c.predicted)}${c.warpsPerSm !== null ? ` at ${c.warpsPerSm} warps/SM` : ''}`);
          if (c.bytes !== null) lines.push(`hot loop ${fmtBytes(c.bytes)}`);
          return lines;
        },
      ) as ChartConfiguration['options'],
    };
  }

  private stalls(m: ViewModel, t: Theme, labels: string[][], base: ReturnType<ChartPanel['baseOptions']>): ChartConfiguration {
    const palette = [t.blue, t.green, t.yellow, t.purple];
    const colour = (g: string, i: number) =>
      g === NO_INSTRUCTION ? t.red : g === OTHER_STALLS ? t.grey : palette[(i - 1) % palette.length];
    const outline = this.outline(m, t);
    const datasets: ChartDataset<'bar'>[] = m.stallGroups.map((g, i) => ({
      label: stallLabel(g),
      data: m.variants.map(x => (x.stallGroups[i] === null ? null : (x.stallGroups[i] as number) * 100)),
      backgroundColor: m.variants.map(x => (x.ref ? faded(colour(g, i), 0.55) : colour(g, i))),
      ...outline,
      stack: 'stalls',
      barPercentage: 0.8,
    }));
    const legend: LegendEntry[] = m.stallGroups.map((g, i) => ({ text: stallLabel(g), fill: colour(g, i), datasetIndex: i }));
    return {
      type: 'bar',
      data: { labels, datasets },
      options: this.withDecor(
        base,
        t,
        { refLines: [], legend, whiskers: null },
        {
          x: { ...base.options.scales.x, stacked: true },
          y: {
            stacked: true,
            min: 0,
            max: 100,
            ticks: { ...base.tick, callback: (v: string | number) => `${v}%` },
            grid: { color: t.grid },
            border: { color: t.border },
            title: base.title('Share of warp stalls (%)'),
          },
        },
        item => {
          const v = item.raw as number | null;
          return `${item.dataset.label}: ${fmtShare(v === null ? null : v / 100)}`;
        },
      ) as ChartConfiguration['options'],
    };
  }

  private size(m: ViewModel, t: Theme, labels: string[][], base: ReturnType<ChartPanel['baseOptions']>): ChartConfiguration {
    const loopColours = [t.purple, t.green, t.yellow, t.orange, t.blue];
    const outline = this.outline(m, t);
    const series: { label: string; colour: string; value: (x: VariantView) => number | null }[] = [
      { label: 'Kernel SASS bytes', colour: t.blue, value: x => x.num('kernelBytes') },
      ...m.loopLines.map((line, i) => ({
        label: m.loopLines.length > 1 ? `Loop L${line} SASS bytes` : 'Loop SASS bytes',
        colour: loopColours[i % loopColours.length],
        value: (x: VariantView) => x.loopBytes(line),
      })),
    ];
    const datasets: ChartDataset<'bar'>[] = series.map(s => ({
      label: s.label,
      data: m.variants.map(x => (x.ok ? s.value(x) : null)),
      backgroundColor: m.variants.map(x => (x.ref ? faded(s.colour, 0.45) : s.colour)),
      ...outline,
      barPercentage: 0.9,
      categoryPercentage: 0.8,
    }));
    const budget = m.result.icacheBudgetBytes;
    const refLines: RefLine[] =
      budget > 0 ? [{ value: budget, color: t.red, label: `I-cache budget ${fmtBytes(budget)} (${m.result.arch})` }] : [];
    const legend: LegendEntry[] = [
      ...series.map((s, i) => ({ text: s.label, fill: s.colour, datasetIndex: i })),
      ...refLines.map((r, i) => ({ text: r.label, fill: 'transparent', stroke: r.color, lineWidth: 2, lineDash: [6, 4], refLine: i })),
      ...(m.variants.some(x => x.ref) ? [{ text: 'Identical code (= ×N)', fill: faded(t.blue, 0.45) }] : []),
    ];
    const values = datasets.flatMap(d => d.data as (number | null)[]).filter((v): v is number => v !== null && v > 0);
    const lo = Math.min(...values, budget || Infinity);
    const hi = Math.max(...values, budget || 0);
    // Ticks at powers of 4 bytes (256 B, 1 KiB, 4 KiB, …): round numbers for code sizes.
    const min = values.length ? 4 ** Math.floor(Math.log(lo) / Math.log(4)) : 256;
    const max = values.length ? 4 ** Math.ceil(Math.log(hi * 1.15) / Math.log(4)) : 65536;
    return {
      type: 'bar',
      data: { labels, datasets },
      options: this.withDecor(
        base,
        t,
        { refLines, legend, whiskers: null },
        {
          y: {
            type: 'logarithmic',
            min,
            max,
            afterBuildTicks: (scale: Scale) => {
              const ticks = [];
              for (let v = min; v <= max; v *= 4) ticks.push({ value: v });
              scale.ticks = ticks;
            },
            ticks: { ...base.tick, callback: (v: string | number) => fmtBytes(Number(v)) },
            grid: { color: t.grid },
            border: { color: t.border },
            title: base.title('SASS bytes (log scale)'),
          },
        },
        item => `${item.dataset.label}: ${fmtInt(item.raw as number | null)} B`,
      ) as ChartConfiguration['options'],
    };
  }

  private resources(m: ViewModel, t: Theme, labels: string[][], base: ReturnType<ChartPanel['baseOptions']>): ChartConfiguration {
    const outline = this.outline(m, t);
    const spill = (x: VariantView) => {
      const s = x.num('spillStores');
      const l = x.num('spillLoads');
      return s === null && l === null ? null : (s ?? 0) + (l ?? 0);
    };
    // Spill bytes get their own axis when there are any: thousands of bytes would flatten the
    // register bars (a few dozen) on a shared one.
    const spills = m.variants.map(x => (x.ok ? spill(x) : null));
    const spillAxis = spills.some(v => v !== null && v > 0);
    const bar = (label: string, colour: string, data: (number | null)[], axis: string): ChartDataset<'bar'> => ({
      label,
      data,
      backgroundColor: m.variants.map(x => (x.ref ? faded(colour, 0.45) : colour)),
      ...outline,
      yAxisID: axis,
      barPercentage: 0.9,
      categoryPercentage: 0.75,
      order: 2,
    });
    const line = (label: string, colour: string, value: (x: VariantView) => number | null, dash: number[]) => ({
      type: 'line' as const,
      label,
      data: m.variants.map(x => (x.ok ? value(x) : null)),
      borderColor: colour,
      backgroundColor: colour,
      borderWidth: 2,
      borderDash: dash,
      pointRadius: 4,
      pointHoverRadius: 6,
      spanGaps: false,
      yAxisID: 'y1',
      order: 1,
      clip: false as const, // 100% sits on the top edge: draw the points whole
    });
    const registers = m.variants.map(x => (x.ok ? x.num('registers') : null));
    const datasets = [
      bar('Registers / thread', t.blue, registers, 'y'),
      bar('Spill bytes (stores + loads)', t.red, spills, spillAxis ? 'ys' : 'y'),
      line(
        'Theoretical occupancy (%)',
        t.green,
        x => {
          const o = x.num('occupancy');
          return o === null ? null : o * 100;
        },
        [],
      ),
      ...(m.gpu ? [line('Achieved occupancy (%, ncu)', t.yellow, x => x.num('achievedOccupancy'), [5, 3])] : []),
    ] as ChartDataset<'bar'>[];
    const legend: LegendEntry[] = [
      { text: 'Registers / thread', fill: t.blue, datasetIndex: 0 },
      { text: 'Spill bytes (stores + loads)', fill: t.red, datasetIndex: 1 },
      { text: 'Theoretical occupancy (%)', fill: 'transparent', stroke: t.green, lineWidth: 2, datasetIndex: 2 },
      ...(m.gpu
        ? [{ text: 'Achieved occupancy (%, ncu)', fill: 'transparent', stroke: t.yellow, lineWidth: 2, lineDash: [5, 3], datasetIndex: 3 }]
        : []),
    ];
    const maxOf = (vs: (number | null)[]) => Math.max(0, ...vs.filter((v): v is number => v !== null));
    const maxLeft = Math.max(8, maxOf(registers), spillAxis ? 0 : maxOf(spills));
    return {
      type: 'bar',
      data: { labels, datasets },
      options: this.withDecor(
        base,
        t,
        { refLines: [], legend, whiskers: null },
        {
          y: {
            position: 'left',
            beginAtZero: true,
            suggestedMax: Math.ceil(maxLeft * 1.1),
            ticks: { ...base.tick, precision: 0 },
            grid: { color: t.grid },
            border: { color: t.border },
            title: base.title(spillAxis ? 'Registers per thread' : 'Registers per thread · spill bytes'),
          },
          ...(spillAxis
            ? {
                ys: {
                  position: 'left',
                  beginAtZero: true,
                  suggestedMax: Math.ceil(maxOf(spills) * 1.1),
                  ticks: { ...base.tick, color: t.red, precision: 0 },
                  grid: { display: false },
                  border: { color: t.red },
                  title: { ...base.title('Spill bytes'), color: t.red },
                },
              }
            : {}),
          y1: {
            position: 'right',
            min: 0,
            max: 100,
            ticks: { ...base.tick, callback: (v: string | number) => `${v}%` },
            grid: { display: false },
            border: { color: t.border },
            title: base.title('Occupancy (%)'),
          },
        },
        item => {
          const v = item.raw as number | null;
          if (item.dataset.yAxisID === 'y1') return `${item.dataset.label}: ${fmtPercent(v)}`;
          return `${item.dataset.label}: ${fmtInt(v)}`;
        },
      ) as ChartConfiguration['options'],
    };
  }

  private unroll(m: ViewModel, t: Theme, labels: string[][], base: ReturnType<ChartPanel['baseOptions']>): ChartConfiguration {
    const colours = [t.purple, t.green, t.yellow, t.orange, t.blue];
    const outline = this.outline(m, t);
    const loops = m.result.loops;
    const requested = (x: VariantView, line: string): number | null => {
      const f = x.v.factors[line] ?? (Object.keys(x.v.factors).length ? null : (loops.find(l => String(l.line) === line)?.written ?? null));
      if (typeof f === 'number') return f;
      const trip = loops.find(l => String(l.line) === line)?.tripCount;
      return f === 'full' && typeof trip === 'number' ? trip : null;
    };
    const datasets = [
      ...m.loopLines.map((line, i) => ({
        label: m.loopLines.length > 1 ? `L${line} effective unroll` : 'Effective unroll (nvcc)',
        data: m.variants.map(x => (x.ok ? x.effectiveUnroll(line) : null)),
        backgroundColor: m.variants.map(x => (x.ref ? faded(colours[i % colours.length], 0.45) : colours[i % colours.length])),
        ...outline,
        barPercentage: 0.85,
        order: 2,
      })),
      ...m.loopLines.map((line, i) => ({
        type: 'line' as const,
        label: m.loopLines.length > 1 ? `L${line} requested` : 'Requested factor',
        data: m.variants.map(x => (x.ok ? requested(x, line) : null)),
        showLine: false,
        pointStyle: 'crossRot' as const,
        pointRadius: 8,
        pointHoverRadius: 9,
        borderWidth: 2,
        borderColor: m.loopLines.length > 1 ? colours[i % colours.length] : t.foreground,
        backgroundColor: 'transparent',
        order: 1,
      })),
    ] as ChartDataset<'bar'>[];
    const n = m.loopLines.length;
    const legend: LegendEntry[] = datasets.map((d, i) => ({
      text: d.label ?? '',
      fill: i < n ? colours[i % colours.length] : 'transparent',
      stroke: i < n ? undefined : String((d as { borderColor?: string }).borderColor),
      lineWidth: i < n ? 0 : 2,
      datasetIndex: i,
    }));
    if (m.variants.some(x => x.ref)) legend.push({ text: 'Identical code (= ×N)', fill: faded(colours[0], 0.45) });
    const values = datasets.flatMap(d => d.data as (number | null)[]).filter((v): v is number => v !== null && v > 0);
    const max = 2 ** Math.ceil(Math.log2(Math.max(2, ...values) * 1.2));
    return {
      type: 'bar',
      data: { labels, datasets },
      options: this.withDecor(
        base,
        t,
        { refLines: [], legend, whiskers: null },
        {
          y: {
            type: 'logarithmic',
            min: 0.5,
            max,
            afterBuildTicks: (scale: Scale) => {
              const ticks = [];
              const step = max > 256 ? 4 : 2;
              for (let v = 1; v <= max; v *= step) ticks.push({ value: v });
              scale.ticks = ticks;
            },
            ticks: { ...base.tick, callback: (v: string | number) => fmtFactor(Number(v)) },
            grid: { color: t.grid },
            border: { color: t.border },
            title: base.title('Copies per machine-code iteration (log)'),
          },
        },
        item => {
          const x = m.variants[item.dataIndex];
          const line = m.loopLines[item.datasetIndex % n];
          const v = item.raw as number | null;
          if (item.datasetIndex >= n) return `${item.dataset.label}: ${v === null ? 'n/a' : fmtFactor(v)}`;
          return `${item.dataset.label}: ${fmtFactor(v)}${x?.fullyUnrolled(line) ? ' (fully unrolled, no loop left)' : ''}`;
        },
      ) as ChartConfiguration['options'],
    };
  }
}

/** The fourth card of a static result: what a GPU run would add, and how to get one. */
function staticNotice(): HTMLElement {
  return h('section', { class: 'ul-card ul-static-note', attrs: { 'data-static-note': '' } }, [
    h('h2', { text: 'Static result: no GPU run' }),
    h('p', {
      text:
        'These numbers come from the compiler alone: SASS size, registers, spills, theoretical occupancy and the unroll ' +
        'factor nvcc really applied. A GPU run adds kernel timings (median and interquartile range of repeated launches), ' +
        'the speedup of every variant over the file as written with a noise check, achieved occupancy, and warp-stall ' +
        'reasons (no_instruction shows instruction-cache misses from code bloat).',
    }),
    h('p', {
      text:
        'To get one, run "Unroll Lens: Benchmark this loop" or "Unroll Lens: Sweep unroll factors" in a workspace on a ' +
        'machine with an NVIDIA GPU and Nsight Compute, or run unroll-lens sweep (unroll-lens bench for one loop) on a GPU host ' +
        'and open the saved result.',
    }),
  ]);
}
