// Options every chart shares: fonts and colours from the theme, the variant axis, click-to-pick,
// tooltips, the per-bar selection outline, and the legend built from our own entries.
import type { ActiveElement, Chart, ChartEvent, LegendItem, TooltipItem } from 'chart.js';
import type { ViewModel } from './model';
import type { Theme } from './theme';
import type { DecorOptions, LegendEntry, RefLine } from './chartDecor';

/** Per-bar border colours and widths, one per variant. */
export interface Outline {
  borderColor: string[];
  borderWidth: number[];
}

/** What a click or hover over the plot does (the panel picks the variant under the pointer). */
export interface PointerHandlers {
  onClick(e: ChartEvent, active: ActiveElement[], chart: Chart): void;
  onHover(e: ChartEvent, active: ActiveElement[], chart: Chart): void;
}

export type BaseOptions = ReturnType<typeof baseOptions>;
export type TooltipLabel = (item: TooltipItem<'bar'>) => string | string[] | void;

/**
 * Per-bar outline: the foreground colour for the selected variant (it contrasts with every bar
 * colour, the focus colour does not with blue bars), the contrast border in HC themes.
 */
export function outline(m: ViewModel, t: Theme, selected: string | null): Outline {
  return {
    borderColor: m.variants.map(x => (x.v.id === selected ? t.foreground : (t.contrastBorder ?? 'transparent'))),
    borderWidth: m.variants.map(x => (x.v.id === selected ? 3 : t.contrastBorder ? 1 : 0)),
  };
}

/** More variants than this: one chart per row (the full width for their labels) and one-line axis labels. */
export const MANY_VARIANTS = 16;

const shorten = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/**
 * A variant's axis label. Long sweep labels (`L40 ×4 · L52 full · BLOCK=8`) are shortened here,
 * in full in the tooltip and the table. With many variants the lines ("= ×4", a status) join into
 * one: a turned label of two lines needs twice the room across, more than a variant's column has.
 */
function axisTick(m: ViewModel, i: number): string | string[] {
  const lines = m.variants[i]?.axisLabel ?? [];
  if (m.variants.length > MANY_VARIANTS) return shorten(lines.join(' '), 30);
  return lines.map(s => shorten(s, 24));
}

/** The options every chart starts from, with the tick and axis-title styles its own axes use. */
export function baseOptions(m: ViewModel, t: Theme, pointer: PointerHandlers) {
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
      onClick: pointer.onClick,
      onHover: pointer.onHover,
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
            // Up to vertical: chart.js turns the labels as far as they need to clear each other.
            // Many variants: vertical, since a label turned part way reaches left of its bar by
            // most of its length, and the first long ones would run off the chart's left edge.
            maxRotation: 90,
            minRotation: m.variants.length > MANY_VARIANTS ? 90 : 0,
            // Every variant gets its label while they fit; where they cannot (a narrow panel and
            // many variants) chart.js leaves every other one out rather than draw them on each other.
            autoSkip: true,
            autoSkipPadding: 2,
            callback: (_v: string | number, i: number) => axisTick(m, i),
          },
          grid: { color: t.grid, display: false },
          border: { color: t.border },
          title: title(m.comparison ? 'Kernel' : 'Variant'),
        },
      },
    },
  };
}

/** The chart.js legend options for our own entries (click toggles datasets and reference lines). */
function legendLabels(entries: LegendEntry[], t: Theme, refLines: RefLine[]) {
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

/** Click on a legend entry: toggles its dataset, or its reference line (remembered in `hidden` across updates). */
function legendClick(refLines: RefLine[], hidden: Set<string>) {
  return (_e: ChartEvent, item: LegendItem & { refLine?: number }, legend: { chart: Chart }) => {
    const chart = legend.chart;
    if (item.datasetIndex !== undefined) {
      chart.setDatasetVisibility(item.datasetIndex, !chart.isDatasetVisible(item.datasetIndex));
      chart.update('none');
    } else if (item.refLine !== undefined) {
      const line = refLines[item.refLine];
      if (!line) return;
      if (hidden.has(line.label)) hidden.delete(line.label);
      else hidden.add(line.label);
      line.hidden = hidden.has(line.label);
      chart.update('none');
    }
  };
}

/**
 * A chart's options: the base ones with its reference lines, whiskers and legend entries, its
 * scales and its tooltip lines. `hiddenRefLines`: the reference lines hidden from the legend.
 */
export function decoratedOptions(
  base: BaseOptions,
  t: Theme,
  decor: DecorOptions,
  scales: Record<string, unknown>,
  tooltipLabel: TooltipLabel,
  hiddenRefLines: Set<string>,
) {
  for (const r of decor.refLines) r.hidden = hiddenRefLines.has(r.label);
  const o = base.options;
  return {
    ...o,
    plugins: {
      ...o.plugins,
      ulDecor: decor,
      legend: {
        ...o.plugins.legend,
        labels: { ...o.plugins.legend.labels, ...legendLabels(decor.legend, t, decor.refLines) },
        onClick: legendClick(decor.refLines, hiddenRefLines),
      },
      tooltip: { ...o.plugins.tooltip, callbacks: { ...o.plugins.tooltip.callbacks, label: tooltipLabel } },
    },
    scales: { ...o.scales, ...scales },
  };
}
