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
import type { ActiveElement, ChartConfiguration, ChartEvent } from 'chart.js';
import { h, setText } from './dom';
import { fmtBytes, fmtFactor, fmtRatio } from './format';
import type { VariantView, ViewModel } from './model';
import type { Theme } from './theme';
import { decorPlugin } from './chartDecor';
import { baseOptions, decoratedOptions, MANY_VARIANTS, outline } from './chartOptions';
import type { PointerHandlers } from './chartOptions';
import { executedChart, icacheChart, resourcesChart, sizeChart, speedupChart, stallsChart, unrollChart } from './chartConfigs';
import type { ChartKit } from './chartConfigs';
import { resourcesCaption } from './occupancy';
import { heatmapOf } from './heatmap';
import type { Heatmap } from './heatmap';
import { HeatmapView } from './heatmapView';
import { flatChartText } from './chartInfo';
import { chartConditionsText } from '../../src/schema/measurementText';

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

// After chart.js's Legend and Tooltip: plugins' hooks run in the order they were registered.
Chart.register(decorPlugin);

export type ChartId = 'speedup' | 'heatmap' | 'executed' | 'stalls' | 'icache' | 'size' | 'resources' | 'unroll';

const CHART_TITLES: Record<ChartId, string> = {
  speedup: 'Speedup vs the file as written',
  heatmap: 'Speedup vs the file as written',
  executed: 'Executed instructions per launch (ncu)',
  stalls: 'Warp-stall reasons',
  icache: 'I-cache slowdown: measured vs predicted',
  size: 'Instruction bloat: SASS size',
  resources: 'Registers, spills and occupancy',
  unroll: 'Unroll factor nvcc applied',
};

/** Where a result's stall samples come from, by the tool its recorded measurement names. */
const STALL_SOURCE: Record<string, string> = { cupti: 'CUPTI PC sampling of the timed runs', ncu: 'ncu warp-state metrics' };

function stallSource(r: { measurement?: { tool: string } | null }): string {
  return STALL_SOURCE[r.measurement?.tool ?? ''] ?? 'the profiler of the run';
}

/** A kernel comparison's rows are kernels: its charts say so (issue 26). */
const COMPARISON_TITLES: Partial<Record<ChartId, string>> = {
  speedup: 'Speedup vs the baseline kernel',
  size: 'SASS size of each kernel',
  resources: 'Registers and occupancy of each kernel',
};

function chartTitle(id: ChartId, m: ViewModel): string {
  return (m.comparison && COMPARISON_TITLES[id]) || CHART_TITLES[id];
}

/** A two-loop GPU sweep shows its speedups as a heatmap (heatmap.ts) instead of bars. */
function chartIds(model: ViewModel, heatmap: boolean): ChartId[] {
  // The i-cache chart only where some variant has an entry (results saved before issue 13 have none).
  const icache: ChartId[] = model.icache ? ['icache'] : [];
  // Executed instructions only where ncu counted them; right after the speedup, so that in the
  // two-column grid the two read side by side (the chart carries the median time itself too).
  const executed: ChartId[] = model.executed ? ['executed'] : [];
  return model.gpu
    ? [heatmap ? 'heatmap' : 'speedup', ...executed, 'stalls', ...icache, 'size', 'resources']
    : [...icache, 'size', 'resources', ...(model.loopLines.length ? (['unroll'] as ChartId[]) : [])]; // a sweep of parameters only unrolls no loop
}

interface Card {
  /** null for the heatmap (an HTML table, not a chart.js chart). */
  chart: Chart | null;
  figure: HTMLElement;
  caption: HTMLElement;
  /** The measurement conditions under the title (GPU, tool, clocks, caches; or SASS only). */
  conditions: HTMLElement;
  /** The canvas's box: hidden when the chart would compare nothing (chartInfo.ts). */
  box: HTMLElement | null;
  /** The sentence shown instead of such a chart. */
  flat: HTMLElement;
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
  /** The chart ids shown, and whether for a comparison (its titles differ). */
  private layout = '';
  private model: ViewModel | null = null;
  private theme: Theme | null = null;
  private selected: string | null = null;
  private hiddenRefLines = new Set<string>();
  private readonly heatmap = new HeatmapView(id => this.onPick(id));
  /** A click picks the variant under the pointer (in the model shown then); hovering one shows a pointer. */
  private readonly pointer: PointerHandlers = {
    onClick: (e: ChartEvent, _a: ActiveElement[], chart: Chart) => {
      const x = this.model ? variantAt(chart, e, this.model) : null;
      if (x) this.onPick(x.v.id);
    },
    onHover: (e: ChartEvent, _a: ActiveElement[], chart: Chart) => {
      const x = this.model ? variantAt(chart, e, this.model) : null;
      chart.canvas.style.cursor = x ? 'pointer' : 'default';
    },
  };

  constructor(
    private readonly root: HTMLElement,
    private readonly onPick: (variantId: string) => void,
  ) {}

  get instances(): Record<string, Chart> {
    return Object.fromEntries([...this.cards].flatMap(([id, c]) => (c.chart ? [[id, c.chart]] : [])));
  }

  render(model: ViewModel, theme: Theme, selected: string | null): void {
    this.model = model;
    this.theme = theme;
    this.selected = selected;
    const heat = heatmapOf(model);
    const ids = chartIds(model, heat !== null);
    const layout = `${ids.join()}${model.comparison ? '|compare' : ''}`;
    if (layout !== this.layout) {
      this.layout = layout;
      this.rebuild(ids);
    }
    const conditions = chartConditionsText(model.result);
    // Many variants with long (kernel-sweep) labels: rotated ticks need room, so the plots grow.
    const longest = Math.max(0, ...model.variants.map(x => Math.min(24, x.v.label.length)));
    this.root.classList.toggle('ul-tall', model.variants.length * longest > 160);
    this.root.classList.toggle('ul-many', model.variants.length > MANY_VARIANTS);
    for (const [id, card] of this.cards) {
      setText(card.conditions, conditions);
      setText(card.caption, this.caption(id, model, heat));
      if (!card.chart) {
        if (heat) this.heatmap.render(heat, model, selected);
        continue;
      }
      const cfg = this.config(id, model, theme);
      this.showFlat(card, flatChartText(cfg, model.variants.length, model.comparison ? 'kernel' : 'variant'));
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
    }
  }

  /** A chart that compares nothing: its sentence instead of its canvas and caption (the chart stays, updated, for live results). */
  private showFlat(card: Card, text: string | null): void {
    card.figure.classList.toggle('ul-flat', text !== null);
    card.figure.toggleAttribute('data-flat', text !== null);
    if (card.box) card.box.hidden = text !== null;
    card.caption.hidden = text !== null;
    card.flat.hidden = text === null;
    setText(card.flat, text ?? '');
  }

  setSelected(id: string | null): void {
    if (this.model && this.theme) this.render(this.model, this.theme, id);
  }

  private rebuild(ids: ChartId[]): void {
    for (const c of this.cards.values()) c.chart?.destroy();
    this.cards.clear();
    this.root.replaceChildren();
    for (const id of ids) {
      const canvas =
        id === 'heatmap'
          ? null
          : h('canvas', {
              attrs: {
                role: 'img',
                'aria-label': `${chartTitle(id, this.model!)} per ${this.model!.comparison ? 'kernel' : 'variant'}; the table lists every value.`,
              },
            });
      const caption = h('figcaption', { class: 'ul-caption' });
      const conditions = h('p', { class: 'ul-conditions', attrs: { 'data-conditions': '' } });
      const box = canvas ? h('div', { class: 'ul-canvas-box' }, [canvas]) : null;
      const flat = h('p', { class: 'ul-flat-note', hidden: true, attrs: { role: 'note' } });
      const figure = h('figure', { class: `ul-card${canvas ? '' : ' ul-heat-card'}`, attrs: { 'data-chart': id } }, [
        h('h2', { text: chartTitle(id, this.model!) }),
        conditions,
        box ?? this.heatmap.element,
        flat,
        caption,
      ]);
      this.root.append(figure);
      const chart = canvas ? new Chart(canvas, this.config(id, this.model!, this.theme!)) : null;
      this.cards.set(id, { chart, figure, caption, conditions, box, flat });
    }
    if (!this.model!.gpu) this.root.append(staticNotice());
  }

  private caption(id: ChartId, m: ViewModel, heat: Heatmap | null): string {
    const r = m.result;
    if (m.comparison) {
      const c = comparisonCaption(id, m);
      if (c !== null) return c;
    }
    switch (id) {
      case 'speedup':
        return `Baseline median / variant median; whiskers span the variant's interquartile range. Baseline: ${m.baseline?.v.label ?? r.baseline}.`;
      case 'heatmap':
        return heat ? heatmapCaption(heat, m) : '';
      case 'executed':
        return executedCaption(m);
      case 'stalls':
        return (
          `Share of warp-stall samples per reason (${stallSource(r)}). no_instruction: warps waiting for instructions, ` +
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
        return resourcesCaption(m);
      case 'unroll':
        return "Copies of one loop iteration in the hot machine-code loop (nvcc's effective unroll); crosses mark the factor requested.";
    }
  }

  // ---------------------------------------------------------------------------------------------

  private config(id: ChartId, m: ViewModel, t: Theme): ChartConfiguration {
    const labels = m.variants.map(x => x.axisLabel);
    const base = baseOptions(m, t, this.pointer);
    const k: ChartKit = {
      m,
      t,
      labels,
      base,
      outline: () => outline(m, t, this.selected),
      decorate: (decor, scales, tooltipLabel) => decoratedOptions(base, t, decor, scales, tooltipLabel, this.hiddenRefLines),
    };
    switch (id) {
      case 'speedup':
      case 'heatmap': // drawn as tables (heatmapView.ts): never asked for a chart.js configuration
        return speedupChart(k);
      case 'executed':
        return executedChart(k);
      case 'stalls':
        return stallsChart(k);
      case 'icache':
        return icacheChart(k);
      case 'size':
        return sizeChart(k);
      case 'resources':
        return resourcesChart(k);
      case 'unroll':
        return unrollChart(k);
    }
  }
}

/** A comparison's captions where they differ from a sweep's (rows are kernels of one program run, not variants of one). */
function comparisonCaption(id: ChartId, m: ViewModel): string | null {
  switch (id) {
    case 'speedup':
      return (
        `The baseline kernel's median / each kernel's median, all timed in the same program runs; whiskers span each kernel's ` +
        `interquartile range. Baseline: ${m.baseline?.v.label ?? 'none (it got no time)'}.`
      );
    case 'size':
      return `Kernel bytes = SASS instructions of each kernel × 16. I-cache budget ${fmtBytes(m.result.icacheBudgetBytes)}: ${m.result.icacheBudgetNote}`;
    case 'resources':
      return resourcesCaption(m);
    default:
      return null;
  }
}

/**
 * What the executed-instructions chart shows, and the comparison it is for: from the baseline to
 * the row that executes fewest instructions, how far instructions and median time fell.
 */
function executedCaption(m: ViewModel): string {
  const row = m.comparison ? 'kernel' : 'variant';
  const text =
    `Bars: warp instructions one launch of each ${row} executes (ncu smsp__inst_executed.sum); line: its median time (right axis). ` +
    'Both axes start at 0 and scale to their largest value: a bar below the line executes less without getting as much faster.';
  const b = m.baseline;
  const bExec = b?.num('executedInstructions') ?? null;
  const bMs = b?.num('medianMs') ?? null;
  if (!b || bExec === null || bMs === null) return text;
  const fewest = m.variants
    .filter(x => x.ok && x !== b && x.num('executedInstructions') !== null && x.num('medianMs') !== null)
    .reduce<VariantView | null>((a, x) => (a === null || x.num('executedInstructions')! < a.num('executedInstructions')! ? x : a), null);
  if (!fewest) return text;
  return (
    `${text} ${b.v.label} → ${fewest.v.label} (fewest executed): instructions ${fmtRatio(fewest.num('executedInstructions')!, bExec)}, ` +
    `median time ${fmtRatio(fewest.num('medianMs')!, bMs)}.`
  );
}

/** What the heatmap's colours, marks and empty cells mean, and where the file as written sits. */
function heatmapCaption(hm: Heatmap, m: ViewModel): string {
  const r = m.result;
  const written = r.loops.map(l => `L${l.line} ${fmtFactor(l.written)}`).join(', ');
  const extra = Object.keys(r.params).length ? ` One grid per combination of ${Object.keys(r.params).join(', ')}.` : '';
  return (
    `Each cell: the file as written's median / the point's median (as written: ${written} = 1×), coloured on a log scale ` +
    `symmetric around 1× out to ${Math.exp(hm.scaleMax).toFixed(2)}× either way (the farthest point outside the noise). ` +
    `Hatched cells are within noise of the file as written and left uncoloured; empty cells were not measured or failed ` +
    `(hover for why).${extra} Click a cell to select its variant; the table lists every value.`
  );
}

/** The fourth card of a static result: what a GPU run would add, and how to get one. */
function staticNotice(): HTMLElement {
  return h('section', { class: 'ul-card ul-static-note', attrs: { 'data-static-note': '' } }, [
    h('h2', { text: 'Static result: no GPU run' }),
    h('p', {
      text:
        'These numbers come from the compiler alone: SASS size, registers, spills, theoretical occupancy and the unroll ' +
        'factor nvcc really applied. A GPU run adds kernel timings (median and interquartile range of repeated launches), ' +
        'the speedup of every variant over the file as written with a noise check, warp-stall reasons (no_instruction ' +
        'shows instruction-cache misses from code bloat) and, where ncu counts them (the ncu timer, or counters on), ' +
        'achieved occupancy and executed instructions.',
    }),
    h('p', {
      text:
        'To get one, run "Unroll Lens: Benchmark this loop" or "Unroll Lens: Sweep unroll factors" in a workspace on a ' +
        'machine with an NVIDIA GPU (the default CUPTI timer needs only the driver and nvcc; Nsight Compute only for the ncu timer and counters), or run unroll-lens sweep (unroll-lens bench for one loop) on a GPU host ' +
        'and open the saved result.',
    }),
  ]);
}
